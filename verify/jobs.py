"""Run the proof jobs of one ``quorem verify`` run: on one executor, longest jobs first.

Every obligation (a rule's equivalence, int64 and termination obligations, and each
interval transfer function) is one job. They all go to one executor (a local process
pool, or a Dask cluster: quorem.verify.executor) so that no core idles while another
finishes a serial tail, and the jobs expected to take longest are submitted first: the
run ends when the last job does, so a long job started last would set the wall time
alone. Results are given in the order the jobs were given, or as they finish.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from quorem import interval
from quorem.compiler.cache import load_parsed, store_parsed
from quorem.ops import Semantics
from quorem.rule import Rule
from quorem.rulefile import load_rule_files, parse_rules
from quorem.rules import constraint_rule_files, lowering_rule_files, rule_files

from .confirm import confirm, confirm_queries, expected_answer
from .executor import Executor, LocalPool
from .executor import in_new_process as _in_new_process
from .intervals import IntervalProof, prove_interval
from .prove import (
    OBLIGATIONS,
    Obligation,
    ProofResult,
    fresh_z3_context,
    prove,
    result_json,
    verdict,
)
from .record import recording
from .termination import NESTED_OBLIGATION, check_nested, check_termination

__all__ = [
    "Checks",
    "Job",
    "RuleTexts",
    "extra_checks",
    "interval_job_result",
    "load_rules",
    "rule_texts",
    "run_jobs",
]

# Interval proofs explore dozens of paths each (seconds); a rule's obligation grows
# with the arity of its sum(K*t). Only the order matters, not the scale.
_INTERVAL_COST: Final = 100.0


@dataclasses.dataclass(frozen=True)
class Checks:
    """The checks of a proof beyond Z3's first answer (``quorem verify`` options).

    ``seeds``: the obligation is proven under Z3 seeds 0..seeds-1 (1: seed 0 only);
    ``confirm``: the solver that checks each decided query again (empty: none), with
    its own time limit ``confirm_timeout``.
    """

    seeds: int = 1
    confirm: str = ""
    confirm_timeout: float = 0.0


@dataclasses.dataclass(frozen=True)
class Job:
    """Obligations of one rule instance, named only: rules are not sent between processes.

    ``kinds`` are among ``equivalence``, ``int64``, ``termination`` and
    ``termination-context``, proven in that order in one process (the equivalence and
    int64 obligations share their premises, and so the model showing them satisfiable:
    quorem.verify.prove). Kind ``interval``
    proves the transfer function ``name``; the rule fields are then unused.

    After the proofs, the ``equivalence`` and ``int64`` results get the extra ``checks``
    (:func:`extra_checks`): Z3 seeds 1..``seeds - 1`` and the ``confirm`` solver; the
    searches (termination, intervals) get the ``confirm`` solver's check of the queries
    they rested on. An entry of ``given`` (one per kind, or empty) is a result already
    known (cached), which is not proven again: only the checks it lacks are run (a
    search is run again, for its queries).
    """

    kinds: tuple[str, ...]
    name: str
    semantics: str | None = None
    arity: int = 0
    timeout: float = 0.0
    checks: Checks = Checks()
    given: tuple[dict[str, Any] | None, ...] = ()
    encoding: str = "purify"

    @staticmethod
    def of(
        obs: Sequence[Obligation],
        timeout: float,
        checks: Checks | None = None,
        given: Sequence[dict[str, Any] | None] = (),
    ) -> Job:
        """The job proving ``obs``, obligations of one rule, semantics and arity."""
        ob = obs[0]
        sem = ob.semantics.value if ob.semantics is not None else None
        kinds = tuple(o.kind for o in obs)
        known = tuple(given) if any(g is not None for g in given) else ()
        return Job(
            kinds, ob.rule.name, sem, ob.arity, timeout, checks or Checks(), known, ob.encoding
        )

    @property
    def cost(self) -> float:
        """A guess at the job's relative cost, for ordering only."""
        if self.kinds == ("interval",):
            return _INTERVAL_COST
        weight = sum(0.5 if k.startswith("termination") else 1.0 for k in self.kinds)
        return (1.0 + self.arity) * weight


def _rule_paths(files: Sequence[str]) -> list[str]:
    """``files``, or every shipped rules file (constraint, lowering) when it is empty."""
    if files:
        return list(files)
    shipped = [*rule_files(), *constraint_rule_files(), *lowering_rule_files()]
    return [str(p) for p in shipped]


def load_rules(files: Sequence[str]) -> list[Rule]:
    """The rules of ``files``, or every shipped rule (constraint, lowering) when it is empty."""
    return load_rule_files(_rule_paths(files))


@dataclasses.dataclass(frozen=True)
class RuleTexts:
    """The rules files of a run as sent to the workers: each path with the file's bytes.

    A worker may be on another host, where the path names nothing: it parses the bytes,
    and the path stays the rules' file name, so that reports say ``file:line`` as this
    process would. ``digest`` identifies the whole, for the workers' cache of parses.
    """

    files: tuple[tuple[str, bytes], ...]
    digest: str


def rule_texts(files: Sequence[str]) -> RuleTexts:
    """The texts of ``files`` (every shipped rules file when it is empty), read now."""
    texts = tuple((path, Path(path).read_bytes()) for path in _rule_paths(files))
    h = hashlib.sha256()
    for path, data in texts:
        h.update(f"\0{path}\0{len(data)}\0".encode())
        h.update(data)
    return RuleTexts(texts, h.hexdigest())


# A worker's rules by the digest of their texts, parsed once per process (parsing every
# rule file again for each of hundreds of jobs cost several seconds of CPU per run). A
# Dask worker lives on between runs: only the last few rule sets are kept.
_parsed_rules: dict[str, dict[str, Rule]] = {}
_KEEP_PARSED: Final = 4


def _rules_of(texts: RuleTexts) -> dict[str, Rule]:
    """The rules of ``texts`` by name (rule names are unique across the files of a run)."""
    rules = _parsed_rules.get(texts.digest)
    if rules is not None:
        return rules
    # The shipped files' parse may be on disk already (quorem.compiler.cache).
    cached = load_parsed(texts.files)
    if isinstance(cached, list) and all(isinstance(r, Rule) for r in cached):
        parsed: list[Rule] = cached
    else:
        # The client has loaded these very bytes without error: they are UTF-8 rules.
        parsed = [r for path, data in texts.files for r in parse_rules(data.decode(), path)]
        store_parsed(texts.files, parsed)
    while len(_parsed_rules) >= _KEEP_PARSED:
        del _parsed_rules[next(iter(_parsed_rules))]
    rules = _parsed_rules[texts.digest] = {r.name: r for r in parsed}
    return rules


def interval_job_result(proof: IntervalProof) -> dict[str, Any]:
    """The JSON result of one interval transfer function's proof."""
    proven = proof.status == "proven"
    return {
        "name": f"interval-{proof.op}",
        "file": interval.__file__,
        "line": 1,
        "semantics": "any",
        "obligation": "interval",
        "status": "proven" if proven else "unsound",
        "method": f"symbolic execution ({proof.paths} paths)",
        "seconds": round(proof.seconds, 4),
        "counterexample": proof.counterexample,
        "report": ""
        if proven
        else f"interval analysis of {proof.op} is UNSOUND at {proof.counterexample}",
    }


def _run_once(job: Job, rules: dict[str, Rule]) -> list[dict[str, Any]]:
    if job.kinds == ("interval",):
        with recording() as queries:
            proof = prove_interval(job.name)
        return [_confirmed(interval_job_result(proof), queries, job.checks)]
    sem = Semantics(job.semantics) if job.semantics else None
    out = []
    for i, kind in enumerate(job.kinds):
        known = job.given[i] if job.given else None
        # A search's confirmation needs the queries it rests on: the proof is run again.
        if known is not None and kind in OBLIGATIONS:
            out.append(dict(known))
            continue
        ob = Obligation(rules[job.name], sem, job.arity, kind, job.encoding)
        if kind in OBLIGATIONS:
            r = prove(ob, job.timeout)
            out.append({**result_json(r), "report": _located(r)})
            continue
        with recording() as queries:
            r = _SEARCHES[kind](ob, job.timeout)
        out.append(_confirmed({**result_json(r), "report": _located(r)}, queries, job.checks))
    return out


# The obligations proven by a search (whose queries a confirmation checks one by one).
_SEARCHES: Final = {"termination": check_termination, NESTED_OBLIGATION: check_nested}


def _confirmed(r: dict[str, Any], queries: list[list[Any]], checks: Checks) -> dict[str, Any]:
    """``r`` with the confirming solver's check of the queries its search rested on."""
    if checks.confirm and expected_answer(r) == "unsat":
        r["confirmation"] = confirm_queries(
            queries, str(r["method"]), checks.confirm, checks.confirm_timeout
        )
    return r


def _located(r: ProofResult) -> str:
    """``r``'s report, headed by ``file:line``, the rule and the obligation when not proven.

    Counterexamples and termination failures say where they are; a vacuous or timed-out
    obligation's report ("Z3 answered unknown (timeout)") and a grid proof (no report)
    would not, and in a run of thousands the reader must find the rule.
    """
    if r.ok:
        return r.report
    ob = r.obligation
    if r.report.startswith(ob.rule.location):
        return r.report
    head = f"{ob.rule.location}: rule {ob.rule.name} ({ob.label}): {r.status} ({r.method})"
    return "\n  ".join([head, *r.report.splitlines()])


def _undecided(results: list[dict[str, Any]]) -> bool:
    return any(
        r["status"] == "unknown" or r["status"].startswith("proven-on-grid") for r in results
    )


def _run(job: Job, rules: dict[str, Rule]) -> list[dict[str, Any]]:
    """The job's results; an undecided job is run again in a fresh Z3 context, then alone.

    Z3's search depends on the history of the context it runs in (not on names: fresh
    names did not help): ``merge-residues``, proven in 0.6 s in a fresh process, timed
    out after three fold rules had been proven in the same worker. A fresh context per
    job makes every proof independent of the jobs before it, but doubled the CPU time
    of the whole catalog. So the few small rules of the constraint and lowering passes
    get one each (about 4 s in all), and any other job left undecided gets one for a
    second try. A fresh context does not reset all of Z3's state: after a few thousand
    termination proofs in one process ``merge-residues`` stayed unknown in one, so a
    job still undecided runs a third time in a new process of its own, as if alone.
    """
    if job.kinds != ("interval",) and rules[job.name].by_own_pass:
        fresh_z3_context()
    out = _run_once(job, rules)
    if _undecided(out):
        fresh_z3_context()
        out = _run_once(job, rules)
    if _undecided(out):
        out = _in_new_process(_run_once, job, {job.name: rules[job.name]})
    if job.kinds == ("interval",) or (job.checks.seeds <= 1 and not job.checks.confirm):
        return out
    sem = Semantics(job.semantics) if job.semantics else None
    for kind, r in zip(job.kinds, out, strict=True):
        if kind in OBLIGATIONS:
            ob = Obligation(rules[job.name], sem, job.arity, kind, job.encoding)
            extra_checks(ob, r, job.timeout, job.checks)
    return out


def extra_checks(ob: Obligation, r: dict[str, Any], timeout: float, checks: Checks) -> None:
    """Add to ``r`` (``ob``'s result, Z3 seed 0) what ``checks`` asks and it lacks.

    ``r["seeds"]``: for each seed 1..seeds-1, ``{"status", "method", "seconds"}`` of the
    proof under that seed, each run alone (a fresh Z3 context, nothing remembered from
    the proofs before; a verdict other than seed 0's is run once more in a new process,
    so that only the seed differs). ``r["confirmation"]``: the confirming solver's check
    (:func:`quorem.verify.confirm.confirm`) of the query that decided ``r``.
    """
    if checks.seeds > 1:
        seeds = r.setdefault("seeds", {})
        for seed in range(1, checks.seeds):
            if str(seed) in seeds:
                continue
            fresh_z3_context()
            again = result_json(prove(ob, timeout, seed))
            if verdict(again["status"]) != verdict(r["status"]):
                again = _in_new_process(_prove_json, ob, timeout, seed)
            seeds[str(seed)] = {k: again[k] for k in ("status", "method", "seconds")}
    if checks.confirm and "confirmation" not in r:
        found = confirm(ob, r, checks.confirm, checks.confirm_timeout)
        if found is not None:
            r["confirmation"] = found


def _prove_json(ob: Obligation, timeout: float, seed: int) -> dict[str, Any]:
    return result_json(prove(ob, timeout, seed))


def _worker_job(texts: RuleTexts, job: Job) -> list[dict[str, Any]]:
    return _run(job, _rules_of(texts))


def run_jobs(
    jobs: Sequence[Job],
    rules: Sequence[Rule],
    files: Sequence[str],
    workers: int,
    on_result: Callable[[int, list[dict[str, Any]]], object],
    *,
    in_order: bool = True,
    executor: Executor | None = None,
) -> None:
    """Run ``jobs``; call ``on_result(i, results)`` for each, in the order of ``jobs``.

    ``results`` has one entry per kind of the job, in the job's order. With ``in_order``
    false, ``on_result`` is called as each job finishes instead, whatever its index (a
    report that prints as results arrive, and a cache saved as they do). Either way it
    is called exactly once per job.

    ``rules`` are the rules the jobs name (already loaded from ``files``, whose texts
    are sent to the workers: :class:`RuleTexts`). The jobs run on ``executor``, by
    default a pool of ``workers`` processes, longest expected first; with one worker
    everything runs in this process. An interrupt (Ctrl-C) cancels the jobs not started
    and propagates.
    """
    executor = executor or LocalPool(workers)
    if executor.in_process or (len(jobs) <= 1 and isinstance(executor, LocalPool)):
        by_name = {r.name: r for r in rules}
        for i, job in enumerate(jobs):
            on_result(i, _run(job, by_name))
        return
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].cost)
    waiting: dict[int, list[dict[str, Any]]] = {}
    done = 0
    results = executor.map_unordered(_worker_job, jobs, rule_texts(files), order)
    with contextlib.closing(results):
        for i, got in results:
            rs = got
            if jobs[i].kinds == ("interval",):
                # The engine's file as this process has it (a worker may be elsewhere).
                rs = [{**r, "file": interval.__file__} for r in got]
            if not in_order:
                on_result(i, rs)
                continue
            waiting[i] = rs
            while done in waiting:
                on_result(done, waiting.pop(done))
                done += 1
