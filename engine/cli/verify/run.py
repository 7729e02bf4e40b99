"""Running the proofs: the obligations of the rules chosen, on an executor, with the cache."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from quorem.verify.cache import ProofCache
from quorem.verify.confirm import confirmer_version
from quorem.verify.executor import Executor, ExecutorError, open_executor
from quorem.verify.intervals import interval_obligations
from quorem.verify.jobs import Checks, Job, run_jobs
from quorem.verify.prove import DEFAULT_ARITY, DEFAULT_TIMEOUT, OBLIGATIONS, obligations_of
from quorem.verify.termination import (
    NESTED_OBLIGATION,
    nested_obligations,
    termination_digest,
    termination_obligations,
)

from ...rule import Rule
from .cached import (
    TERMINATION_KINDS,
    cache_key_of,
    cached_intervals,
    from_cache,
    remember,
    remember_intervals,
)
from .outcome import outcome
from .text import Progress

__all__ = ["prove", "verify_rules"]


def verify_rules(
    rules: Sequence[Rule],
    files: Sequence[str],
    *,
    kinds: Sequence[str] = OBLIGATIONS,
    arity: int = DEFAULT_ARITY,
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = 1,
    cache: ProofCache | None = None,
    progress: Any = None,
    intervals: bool = False,
    checks: Checks | None = None,
    encoding: str = "purify",
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Prove the obligations of ``rules`` of ``kinds``; return their JSON results in order.

    ``kinds`` may name ``equivalence``, ``int64``, ``termination`` and
    ``termination-context``; with ``intervals`` the engine's interval analysis is proven
    too. Results come rule obligations first, then termination, then the nested order,
    then the interval proofs, each in rule order; ``progress`` is called with each as
    soon as it is known: the cached ones first, then each job's as it finishes (in rule
    order with one job at a time). Definite results are cached in ``cache`` as they
    arrive, and it is saved on the way out, interrupted or not.

    ``checks``: the equivalence and int64 results are also proven under more Z3 seeds
    (a result's ``seeds``; status ``seed-dependent`` when they differ) and checked by a
    confirming solver (its ``confirmation``; status ``disagree`` when it gives the
    opposite answer), in the job that proves them. Their definite outcomes are cached
    like proofs, each under a key of its own.

    The jobs run on ``executor`` (quorem.verify.executor), by default a pool of ``jobs``
    processes; the results, their order and the cache do not depend on it.
    """
    checks = checks or Checks()
    version = confirmer_version(checks.confirm) if checks.confirm else ""
    obs = [ob for r in rules for ob in obligations_of(r, arity, encoding) if ob.kind in kinds]
    if "termination" in kinds:
        # Constraint and lowering rules are applied by passes of their own, with a step
        # budget, to terms built for them: no termination order is asked of them.
        obs += [ob for r in rules if not r.by_own_pass for ob in termination_obligations(r, arity)]
    if NESTED_OBLIGATION in kinds:
        # The order closed under contexts: each rule decreasing it shrinks whole terms.
        obs += [ob for r in rules if not r.by_own_pass for ob in nested_obligations(r, arity)]
    digest = termination_digest() if cache is not None else ""
    keys = [cache_key_of(ob, digest) for ob in obs]
    results, given = from_cache(obs, keys, cache, checks, version)
    # One job per rule instance (rule, semantics, arity); its results' indices.
    groups: dict[tuple[str, str | None, int, bool], list[int]] = {}
    for i, ob in enumerate(obs):
        if results[i] is None:
            sem = ob.semantics.value if ob.semantics else None
            instance = (ob.rule.name, sem, ob.arity, ob.kind in TERMINATION_KINDS)
            groups.setdefault(instance, []).append(i)
    slots = list(groups.values())
    work = [
        Job.of([obs[i] for i in slot], timeout, checks, [given[i] for i in slot]) for slot in slots
    ]
    interval_hit = cached_intervals(cache, checks) if intervals else None
    first_interval = len(results)
    if interval_hit is not None:
        results += interval_hit
    elif intervals:
        for name in interval_obligations():
            slots.append([len(results)])
            work.append(Job(("interval",), name, checks=checks))
            results.append(None)
    if progress:
        for r in results:
            if r is not None:
                progress(r)

    def on_result(j: int, rs: list[dict[str, Any]]) -> None:
        if cache is not None:
            # Cached as they arrive, so an interrupted run keeps what it proved.
            for i, r in zip(slots[j], rs, strict=True):
                if i < len(obs):
                    remember(cache, obs[i], keys[i], r, checks=checks, version=version)
        for i, r in zip(slots[j], rs, strict=True):
            results[i] = outcome(r, checks) if i < len(obs) else r
        if cache is not None:
            if intervals and interval_hit is None:
                remember_intervals(cache, results[first_interval:])
            cache.save_if_due()
        if progress:
            for i in slots[j]:
                progress(results[i])

    try:
        run_jobs(work, rules, files, jobs, on_result, in_order=False, executor=executor)
    finally:
        if cache is not None:
            cache.save()
    return [r for r in results if r is not None]


def prove(
    rules: Sequence[Rule],
    args: argparse.Namespace,
    *,
    wanted: Sequence[str],
    checks: Checks,
    cache: ProofCache | None,
    show: Progress | None,
) -> list[dict[str, Any]] | None:
    """The results of the proofs ``args`` ask for, on ``--executor``.

    None, the error printed, when the executor cannot be used (a Dask scheduler not
    reached, workers running another prover).
    """
    try:
        with open_executor(args.executor, args.jobs) as executor:
            return verify_rules(
                rules,
                args.files,
                # Termination: each rule makes terms smaller in one declared order
                # (quorem.verify.termination).
                kinds=[k for k in wanted if k in (*OBLIGATIONS, *TERMINATION_KINDS)],
                arity=args.arity,
                timeout=args.timeout,
                jobs=args.jobs,
                cache=cache,
                progress=show,
                encoding=args.encoding,
                # The interval analysis belongs to the engine, not to a rules file.
                intervals=not args.files and not args.rule and "interval" in wanted,
                checks=checks,
                executor=executor,
            )
    except ExecutorError as exc:
        print(f"quorem verify: error: {exc}", file=sys.stderr)
        return None
