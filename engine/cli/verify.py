"""``quorem verify``: prove rule files sound, for people writing rules and for CI.

Exit status, as every quorem command: 0 every obligation proven; 1 some rule unsound,
or the confirming solver disagreeing with Z3 (``--confirm``); 2 usage or input errors
(a bad rules file, say; ``quorem`` exits 2 too when Z3 is missing, and ``--confirm
cvc5`` without cvc5); 3 some obligation unknown, or seed-dependent (``--seeds``; unless
``--allow-unknown``); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import z3

import quorem
import quorem.rules
from quorem.cli.args import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, silence_stdout
from quorem.compiler.cache import shipped
from quorem.errors import QuoremError
from quorem.rule import Rule
from quorem.verify.cache import ProofCache, cache_key
from quorem.verify.confirm import (
    CONFIRMERS,
    DEFAULT_CONFIRM_TIMEOUT,
    DEFINITE_ANSWERS,
    DISAGREE,
    NO_QUERY,
    Z3_ONLY,
    ConfirmerMissingError,
    confirm_key,
    confirmer_version,
    expected_answer,
)
from quorem.verify.digest import code_digest
from quorem.verify.executor import Executor, ExecutorError, add_executor_option, open_executor
from quorem.verify.guards import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_QUERY_RLIMIT,
    suggest_for_results,
    suggestion_json,
)
from quorem.verify.interrupt import interruptible
from quorem.verify.intervals import interval_obligations
from quorem.verify.jobs import Checks, Job, load_rules, run_jobs
from quorem.verify.prove import (
    DEFAULT_ARITY,
    DEFAULT_TIMEOUT,
    ENCODINGS,
    OBLIGATIONS,
    PROVEN_STATUSES,
    Obligation,
    obligation_kind,
    obligations_of,
    verdict,
)
from quorem.verify.records import RECORDED_KINDS, check_records, write_records
from quorem.verify.smtlib import UnsupportedTermError, file_name, obligation_script
from quorem.verify.termination import (
    NESTED_OBLIGATION,
    nested_obligations,
    termination_cache_key,
    termination_digest,
    termination_obligations,
)

__all__ = ["main", "slowest_rules", "verify_rules"]

EXIT_PROVEN: Final = 0
EXIT_UNSOUND: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNKNOWN: Final = 3


# What every label of the output means (quorem verify --help); tests check that each
# status, method and verdict the prover can print is explained here.
LABELS_EPILOG: Final = """\
output: one line per obligation, STATUS RULE [SEMANTICS OBLIGATION] METHOD SECONDS

obligations:
  equivalence          the rewrite equals the input wherever the input is defined
  int64                no intermediate of the rewrite leaves int64 where the input's do not
  termination          the rule makes the term smaller in the measure (a tuple of counts)
  termination-context  ... and in the nested order, so whole terms shrink around it
  interval             the engine's interval analysis is sound (shipped rules only)
  k=N                  the instance of a sum(K*t) rule with N addends (--arity)

statuses:
  proven               holds for all integers
  proven-int64         holds where every value is a machine integer (int64); for the
                       int64 obligation its only proven status
  proven-on-grid(...)  proven only with the rule's constants pinned to the grid shown:
                       weaker than a proof, counted as unknown
  unsound              a counterexample, replayed and confirmed by the engine: UNSOUND
                       (a wrong value, or a division by zero: counted as wrong value)
                       or OVERFLOW (int64: equal values, an intermediate leaves int64)
  unknown              not decided: Z3 timed out or answered unknown, or its model was
                       not reproduced by the engine (the report says which)
  seed-dependent       --seeds: the verdict differs between Z3 seeds (counted as unknown)
  DISAGREE             --confirm: the second solver gives the opposite answer (exit 1)
  STATUS (z3+cvc5)     --confirm: the second solver gives the same answer
  STATUS (z3 only)     --confirm: the second solver gave no answer in time
  no query             --confirm: decided without a single query (nothing to confirm)
  (cached)             taken from the proof cache (--no-cache proves it again)

methods (how the status was reached):
  IntAux               Z3 over unbounded integers, each division purified into an
                       auxiliary quotient and remainder with their defining lemmas
  IntAux64             the same encoding for the int64 obligation
  , native             --encoding native: SMT-LIB div/mod instead of purified division
  , native-split (...) --encoding native-split: one query per sign case of the divisors
  , values in int64    proven with every name and intermediate bounded to int64
  grid, constants pinned  the rule's constants pinned to each point of a small grid
  vacuous              the guard and premises never hold: the rule never fires (unknown)
  vacuity-unknown      the guard and premises could not be shown satisfiable (unknown)
  measure: COMPONENT   termination: the measure component that decreases (or
                       "lexicographic by cases"); measure alone: not shown decreasing
  nested order: ...    termination-context: why the nested order decreases (or
                       "junction count decreases": fewer and/or, the first component);
                       nested order alone: not shown decreasing
  symbolic execution   interval: the paths of the interval code, each proven

summary: proven, unsound (wrong value, overflow), unknown; --json adds
  "wrong_value" and "overflow" beside "unsound" (their sum, with other kinds' failures).

exit status: 0 all proven; 1 some rule unsound, or --confirm's solver disagreeing with
  Z3; 2 usage or input errors (a bad or empty rules file); 3 some obligation unknown or
  seed-dependent (unless --allow-unknown); 130 interrupted.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="quorem verify",
        description="Prove rules sound with Z3 (the shipped rules, or FILE.rules ...).",
        epilog=LABELS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="*", help="rules files (default: the shipped rules)")
    p.add_argument("--rule", action="append", default=[], help="only the rule NAME (repeatable)")
    p.add_argument(
        "--obligation",
        choices=("equivalence", "int64", "interval", "termination", NESTED_OBLIGATION),
        action="append",
        help="only this kind of obligation (repeatable; default: all)",
    )
    p.add_argument("--arity", type=int, default=DEFAULT_ARITY, help="prove sum(K*t) rules for 1..K")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per query")
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        help="parallel prover processes (of the local pool; a Dask cluster runs as many "
        "proofs at once as it has worker processes)",
    )
    add_executor_option(p)
    p.add_argument(
        "--encoding",
        choices=ENCODINGS,
        default="purify",
        help="how rule obligations are stated: purified division (default), SMT-LIB "
        "div/mod, or div/mod split by the sign of each symbolic divisor",
    )
    p.add_argument("--json", action="store_true", help="write one JSON object to stdout")
    p.add_argument("--junit", type=Path, help="write a JUnit XML report to PATH")
    p.add_argument("--no-cache", action="store_true", help="prove everything again")
    p.add_argument("--allow-unknown", action="store_true", help="exit 0 despite unknowns")
    p.add_argument(
        "--smt2",
        type=Path,
        metavar="DIR",
        help="write each equivalence and int64 obligation's query to DIR as a standard "
        "SMT-LIB 2.6 file, one per obligation, and exit (nothing is proven)",
    )
    p.add_argument(
        "--confirm",
        choices=CONFIRMERS,
        help="check each query Z3 decides with this solver too (needs quorem[confirm])",
    )
    p.add_argument(
        "--confirm-timeout",
        type=float,
        default=DEFAULT_CONFIRM_TIMEOUT,
        metavar="S",
        help="seconds the confirming solver gets per query",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="prove each equivalence and int64 obligation under Z3 seeds 0..N-1, each "
        "alone; a status that differs between seeds is seed-dependent (as unknown)",
    )
    p.add_argument(
        "--slowest",
        type=int,
        metavar="N",
        help="only the N rules whose cached proofs took longest (with --seeds: the proofs "
        "most likely to depend on a seed); the cache must hold their times",
    )
    p.add_argument(
        "--suggest-guard",
        action="store_true",
        help="for each rule not proven, search for the weakest guard that makes it proven",
    )
    p.add_argument(
        "--guard-candidates",
        type=int,
        metavar="N",
        default=DEFAULT_MAX_CANDIDATES,
        help="with --suggest-guard: prove at most N candidate guards per rule (default "
        "%(default)s); the search's budget is this count and --guard-rlimit, not time, so its "
        "answer does not depend on the machine's load",
    )
    p.add_argument(
        "--guard-rlimit",
        type=int,
        metavar="N",
        default=DEFAULT_QUERY_RLIMIT,
        help="with --suggest-guard: Z3 resource limit per query (default %(default)s, "
        "about 2 s here); 0 for none (then only the wall-clock timeout bounds a query)",
    )
    records = p.add_mutually_exclusive_group()
    records.add_argument(
        "--no-record",
        action="store_true",
        help="do not write FILE.proof.json (by default a run of every obligation of "
        "FILE writes it: the record simplify, emit and the API read to apply only "
        "proven rules)",
    )
    records.add_argument(
        "--write-records",
        action="store_true",
        help="write the proof records of the shipped rules too (for quorem's developers)",
    )
    records.add_argument(
        "--check-records",
        action="store_true",
        help="write nothing; exit 1 when a proof record differs from what was proven now "
        "(CI: a record cannot be written by hand)",
    )
    return p


def _load(files: Sequence[str]) -> list[Rule]:
    return load_rules(files)


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
    keys = [_cache_key(ob, digest) for ob in obs]
    results, given = _from_cache(obs, keys, cache, checks, version)
    # One job per rule instance (rule, semantics, arity); its results' indices.
    groups: dict[tuple[str, str | None, int, bool], list[int]] = {}
    for i, ob in enumerate(obs):
        if results[i] is None:
            sem = ob.semantics.value if ob.semantics else None
            instance = (ob.rule.name, sem, ob.arity, ob.kind in _TERMINATION_KINDS)
            groups.setdefault(instance, []).append(i)
    slots = list(groups.values())
    work = [
        Job.of([obs[i] for i in slot], timeout, checks, [given[i] for i in slot]) for slot in slots
    ]
    interval_hit = _cached_intervals(cache, checks) if intervals else None
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
                    _remember(cache, obs[i], keys[i], r, checks=checks, version=version)
        for i, r in zip(slots[j], rs, strict=True):
            results[i] = _outcome(r, checks) if i < len(obs) else r
        if cache is not None:
            if intervals and interval_hit is None:
                _remember_intervals(cache, results[first_interval:])
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


def _cached_intervals(cache: ProofCache | None, checks: Checks) -> list[dict[str, Any]] | None:
    """The interval results cached, as shown; None when they are to be proven (again).

    They are cached as one entry with the confirmations of the run that made them:
    shown only when a confirmation is asked, and proven again (recording the queries to
    confirm) when one is asked and some proven result lacks a definite one.
    """
    hit = cache.lookup(_interval_key()) if cache is not None else None
    if hit is None:
        return None
    results: list[dict[str, Any]] = hit["results"]
    if checks.confirm and not all(
        r.get("confirmation", {}).get("answer") in DEFINITE_ANSWERS
        for r in results
        if r["status"] == "proven"
    ):
        return None
    if not checks.confirm:
        results = [{k: v for k, v in r.items() if k != "confirmation"} for r in results]
    return [{**r, "cached": True} for r in results]


_TERMINATION_KINDS: Final = ("termination", NESTED_OBLIGATION)
_SEED_DEPENDENT: Final = "seed-dependent"
# What a worker adds to a proof's result: cached under keys of their own.
_CHECK_FIELDS: Final = ("seeds", "confirmation")


def _cache_key(ob: Obligation, digest: str) -> str:
    if ob.kind in _TERMINATION_KINDS:
        return termination_cache_key(ob, digest)
    return cache_key(ob)


def _from_cache(
    obs: Sequence[Obligation],
    keys: Sequence[str],
    cache: ProofCache | None,
    checks: Checks,
    version: str,
) -> tuple[list[dict[str, Any] | None], list[dict[str, Any] | None]]:
    """Per obligation, its result if the cache has all of it, else None.

    And per obligation, the part the cache has when a check is still to run (the job
    then runs only that check), else None.
    """
    results: list[dict[str, Any] | None] = []
    given: list[dict[str, Any] | None] = []
    for ob, key in zip(obs, keys, strict=True):
        hit = cache.lookup(key) if cache is not None else None
        known = None
        if cache is not None and hit is not None:
            known = {**hit, "file": ob.rule.file, "line": ob.rule.line, "cached": True}
            _cached_checks(cache, key, known, checks, version)
            if not _lacks_checks(ob, known, checks):
                results.append(_outcome(known, checks))
                given.append(None)
                continue
        results.append(None)
        given.append(known)
    return results, given


def _seed_key(key: str, seed: int) -> str:
    """The cache key of a proof under Z3 seed ``seed`` (``key``: the proof's own)."""
    return f"seed:{seed}:{key}"


def _confirm_key(key: str, r: dict[str, Any], checks: Checks, version: str) -> str | None:
    expected = expected_answer(r)
    if expected is None:
        return None
    return confirm_key(key, str(r["method"]), expected, checks.confirm, version)


def _cached_checks(
    cache: ProofCache, key: str, r: dict[str, Any], checks: Checks, version: str
) -> None:
    """Add to the cached result ``r`` its cached seed runs and confirmation."""
    for seed in range(1, checks.seeds):
        hit = cache.lookup(_seed_key(key, seed))
        if hit is not None:
            r.setdefault("seeds", {})[str(seed)] = {**hit, "cached": True}
    ckey = _confirm_key(key, r, checks, version) if checks.confirm else None
    hit = cache.lookup(ckey) if ckey else None
    if hit is not None:
        r["confirmation"] = {**hit, "cached": True}


def _lacks_checks(ob: Obligation, r: dict[str, Any], checks: Checks) -> bool:
    """Whether the cached result ``r`` still needs a seed run or a confirmation."""
    seeds = r.get("seeds", {})
    if ob.kind in OBLIGATIONS and any(str(seed) not in seeds for seed in range(1, checks.seeds)):
        return True
    return bool(checks.confirm) and expected_answer(r) is not None and "confirmation" not in r


def _remember_checks(
    cache: ProofCache, key: str, r: dict[str, Any], checks: Checks, version: str
) -> None:
    """Cache the definite seed runs and confirmations of ``r``, as proofs are cached."""
    for seed, run in r.get("seeds", {}).items():
        if not run.get("cached") and run["status"] in {*PROVEN_STATUSES, "unsound"}:
            cache.store(_seed_key(key, int(seed)), run)
    c = r.get("confirmation")
    ckey = _confirm_key(key, r, checks, version) if c and checks.confirm else None
    # Unknown (``z3 only``) is not cached: a longer limit may confirm it.
    if c and ckey and not c.get("cached") and c["answer"] in DEFINITE_ANSWERS:
        cache.store(ckey, c)


def _outcome(r: dict[str, Any], checks: Checks) -> dict[str, Any]:
    """The result shown for ``r``, a result with its checks (seeds, a confirmation).

    Z3's answers under every seed become the list ``seeds`` (seed 0 is ``r`` itself);
    differing statuses make the status ``seed-dependent``, and a confirming solver's
    opposite answer makes it ``disagree`` (Z3's own then in ``z3_status``).
    """
    out = dict(r)
    runs = r.get("seeds")
    if runs is not None and checks.seeds > 1:
        first = {"seed": 0, **{k: r[k] for k in ("status", "method", "seconds")}}
        listed = [first] + [{"seed": int(k), **v} for k, v in sorted(runs.items(), key=_num)]
        out["seeds"] = listed
        # The verdict must not depend on the seed; the method may (proven under one seed,
        # proven-int64 under another are both proofs, as the exit status counts them).
        if len({verdict(run["status"]) for run in listed}) > 1:
            out["z3_status"] = r["status"]
            out["status"] = _SEED_DEPENDENT
            out["report"] = _seed_report(r, listed)
    c = r.get("confirmation")
    if c is not None and c["verdict"] == DISAGREE:
        out["z3_status"] = r["status"]
        out["status"] = DISAGREE
        out["report"] = c.get("report", "")
    return out


def _num(item: tuple[str, Any]) -> int:
    return int(item[0])


def _seed_report(r: dict[str, Any], runs: Sequence[dict[str, Any]]) -> str:
    head = f"{r['file']}:{r['line']}: rule {r['name']} "
    head += f"({r['semantics']} {r['obligation']}): seed-dependent"
    lines = [head, "  the status depends on Z3's random seed (each seed run alone):"]
    lines += [
        f"    seed {run['seed']}: {run['status']} ({run['method']}, {run['seconds']:.2f}s)"
        for run in runs
    ]
    return "\n".join(lines)


def _remember(
    cache: ProofCache, ob: Obligation, key: str, r: dict[str, Any], *, checks: Checks, version: str
) -> None:
    """Cache a definite result (a proof, a confirmed counterexample; never an unknown).

    And its definite checks, each under its own key (:func:`_remember_checks`).
    """
    _remember_checks(cache, key, r, checks, version)
    if r.get("cached"):
        return
    entry = {k: v for k, v in r.items() if k not in ("file", "line", *_CHECK_FIELDS)}
    if ob.kind not in _TERMINATION_KINDS:
        cache.put(ob, entry)  # keyed by cache_key(ob), as ``key`` is
    elif entry.get("status") == "proven":
        cache.store(key, entry)


def _remember_intervals(cache: ProofCache, results: Sequence[dict[str, Any] | None]) -> None:
    """Cache the interval proofs once all of them are in and proven (one entry)."""
    if results and all(r is not None and r["status"] == "proven" for r in results):
        cache.store(_interval_key(), {"results": list(results)})


OBLIGATIONS_ALL: Final = (*OBLIGATIONS, "interval", "termination", NESTED_OBLIGATION)


def _interval_key() -> str:
    # The interval proofs run the engine's own code: they hold for this code digest.
    return f"interval:{code_digest()}:{z3.get_version_string()}"


_FAILED: Final = ("unsound", DISAGREE)


def _summary(
    results: Sequence[dict[str, Any]], seconds: float, checks: Checks | None = None
) -> dict[str, Any]:
    unsound = [r for r in results if r["status"] == "unsound"]
    out: dict[str, Any] = {
        "proven": sum(r["status"] in PROVEN_STATUSES for r in results),
        "unsound": len(unsound),
        # Apart: a wrong value (equivalence) is a bug at any width, an overflow (int64)
        # only in machine code.
        "wrong_value": sum(obligation_kind(r) == "equivalence" for r in unsound),
        "overflow": sum(obligation_kind(r) == "int64" for r in unsound),
        # unknown, vacuous, seed-dependent and proven-on-grid (weaker than a proof)
        "unknown": sum(r["status"] not in {*PROVEN_STATUSES, *_FAILED} for r in results),
        "seconds": round(seconds, 3),
    }
    # The counts of the checks asked for only: a plain run's summary keeps its fields.
    if checks is not None and checks.seeds > 1:
        out["seed_dependent"] = sum(r["status"] == _SEED_DEPENDENT for r in results)
    if checks is not None and checks.confirm:
        out["disagree"] = sum(r["status"] == DISAGREE for r in results)
        found = [r["confirmation"] for r in results if r.get("confirmation")]
        verdicts = [c["verdict"] for c in found]
        out["confirmation"] = {
            "solver": checks.confirm,
            **{v: verdicts.count(v) for v in (f"z3+{checks.confirm}", Z3_ONLY, DISAGREE)},
            NO_QUERY: verdicts.count(NO_QUERY),
            # Decided by Z3 but not by one query (on the grid, termination, intervals).
            "not checked": sum(
                r["status"] in {*PROVEN_STATUSES, "unsound"} and not r.get("confirmation")
                for r in results
            ),
            "seconds": round(sum(c["seconds"] for c in found), 3),
            "z3 seconds": round(sum(r["seconds"] for r in results if r.get("confirmation")), 3),
        }
    return out


def _relative(file: str) -> str:
    """``file`` as a path relative to the working directory or to quorem, never absolute.

    Relative to the working directory when inside it, else to the folder holding the
    shipped rules or the engine (``rules/00-fold.rules``, ``engine/interval.py``
    wherever quorem is installed), else ``..``-relative to the working directory: a
    report reads the same on every machine and checkout.
    """
    path = Path(file).resolve()
    roots = [Path.cwd().resolve()]
    roots += [Path(m.__file__ or ".").resolve().parent.parent for m in (quorem.rules, quorem)]
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows)
        return path.name


def _write_junit(path: Path, results: Sequence[dict[str, Any]], seconds: float) -> None:
    # Counted as the summary counts: anything neither proven nor failed (unknown,
    # vacuous, seed-dependent, proven-on-grid) is an error, which fails CI as the exit
    # status does.
    undecided = [r for r in results if r["status"] not in {*PROVEN_STATUSES, *_FAILED}]
    suite = ET.Element(
        "testsuite",
        name="quorem verify",
        tests=str(len(results)),
        failures=str(sum(r["status"] in _FAILED for r in results)),
        errors=str(len(undecided)),
        time=f"{seconds:.3f}",
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{_relative(r['file'])}:{r['line']}",
            name=f"{r['name']} [{r['semantics']} {r['obligation']}]",
            time=str(r["seconds"]),
        )
        c = r.get("confirmation")
        if c:
            # The second solver's word on the obligation, as test case properties.
            props = ET.SubElement(case, "properties")
            for name, value in (
                ("confirmation", c["verdict"]),
                (f"{c['solver']} answer", c["answer"]),
                (f"{c['solver']} seconds", str(c["seconds"])),
            ):
                ET.SubElement(props, "property", name=name, value=value)
        if r["status"] in _FAILED:
            message = r["status"].upper()
            ET.SubElement(case, "failure", message=message).text = r.get("report", "")
        elif r["status"] not in PROVEN_STATUSES:
            why = f"{r['status']} ({r['method']})"
            ET.SubElement(case, "error", message=why).text = r.get("report", "") or why
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


class _Progress:
    """Per-obligation output: plain lines in CI and pipes, a counting line on a terminal.

    On a terminal the proofs overwrite one line as they come; anything not proven is
    printed in full.
    """

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.count = 0

    def __call__(self, r: dict[str, Any]) -> None:
        self.count += 1
        if not self.tty:
            print(_line(r), flush=True)
        elif r["status"] in PROVEN_STATUSES:
            print(f"\r\033[K[{self.count}] {_line(r)}", end="", flush=True)
        else:
            print(f"\r\033[K{_line(r)}", flush=True)

    def close(self) -> None:
        """Clear the counting line (a terminal only)."""
        if self.tty and self.count:
            print("\r\033[K", end="", flush=True)


def _status_label(r: dict[str, Any]) -> str:
    """``r``'s status as shown: ``proven (z3+cvc5)``, ``proven (z3 only)``, ``DISAGREE``."""
    if r["status"] == DISAGREE:
        return "DISAGREE"
    c = r.get("confirmation")
    if c and r["status"] in {*PROVEN_STATUSES, "unsound"}:
        return f"{r['status']} ({c['verdict']})"
    return str(r["status"])


def _line(r: dict[str, Any]) -> str:
    cached = " (cached)" if r.get("cached") else ""
    c = r.get("confirmation")
    second = ""
    if c:
        why = f", {c['reason']}" if c.get("reason") else ""
        second = f", {c['solver']} {c['answer']} {c['seconds']:.2f}s{why}"
        second += " (cached)" if c.get("cached") else ""
    return (
        f"{_status_label(r):<13} {r['name']} [{r['semantics']} {r['obligation']}] "
        f"{r['method']} {r['seconds']:.2f}s{cached}{second}"
    )


def _suggest(
    rules: Sequence[Rule], results: Sequence[dict[str, Any]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    found = suggest_for_results(
        rules,
        results,
        arity=min(args.arity, 2),
        max_candidates=args.guard_candidates,
        rlimit=args.guard_rlimit or None,
    )
    return [{**suggestion_json(s), "rendered": s.render()} for s in found]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``quorem verify`` with ``argv``; return the exit status.

    Ctrl-C stops the run at once (exit 130, no traceback) keeping every proof finished
    so far in the cache; a closed output pipe (``quorem verify | head``) ends it quietly.
    """
    try:
        with interruptible():
            return _main(argv)
    except KeyboardInterrupt:
        print(
            "\nquorem verify: interrupted (the proofs finished are in the cache)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE


def _json(r: dict[str, Any]) -> dict[str, Any]:
    """A result as ``--json`` writes it: no report text (the text output's), no cache flag."""
    out = {k: v for k, v in r.items() if k not in ("report", "cached")}
    if "confirmation" in out:
        out["confirmation"] = {k: v for k, v in out["confirmation"].items() if k != "report"}
    return out


def _print_reports(results: Sequence[dict[str, Any]], summary: dict[str, Any]) -> None:
    """The reports of the results not proven, and the summary lines."""
    # Every result was printed as it arrived (_Progress); only the reports follow.
    for r in results:
        if r["status"] not in PROVEN_STATUSES and r.get("report"):
            print("\n" + r["report"])
    disagree = f"{summary['disagree']} DISAGREE, " if summary.get("disagree") else ""
    print(
        f"\n{summary['proven']} proven, {summary['unsound']} unsound{_unsound_kinds(summary)}, "
        f"{disagree}{summary['unknown']} unknown, in {summary['seconds']:.1f} s"
    )
    if "confirmation" in summary:
        print(_confirmation_line(summary["confirmation"]))


def _unsound_kinds(summary: dict[str, Any]) -> str:
    """`` (1 wrong value, 1 int64 overflow)``: the unsound results by kind; "" for none."""
    if not summary["unsound"]:
        return ""
    value, overflow = summary.get("wrong_value", 0), summary.get("overflow", 0)
    parts = [_counted(value, "wrong value"), _counted(overflow, "int64 overflow")]
    other = summary["unsound"] - value - overflow
    if other:
        parts.append(f"{other} other (interval)")
    return f" ({', '.join(parts)})"


def _counted(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _confirmation_line(c: dict[str, Any]) -> str:
    solver = c["solver"]
    return (
        f"{solver}: {c[f'z3+{solver}']} confirmed (z3+{solver}), {c[Z3_ONLY]} z3 only, "
        f"{c[DISAGREE]} disagree, {c[NO_QUERY]} decided without a query, "
        f"{c['not checked']} not checked; "
        f"{solver} {c['seconds']:.1f} s for Z3's {c['z3 seconds']:.1f} s"
    )


# Obligations decided by more than one query, so not written by --smt2 (nor confirmed).
_NOT_ONE_QUERY: Final = {
    "termination": "one query per component of the measure, then the lexicographic order",
    NESTED_OBLIGATION: "one query per component and per pairing of the nodes",
    "interval": "one query per path of the symbolic execution",
}


def _write_smt2(folder: Path, rules: Sequence[Rule], wanted: Sequence[str], arity: int) -> int:
    """``--smt2 DIR``: each equivalence and int64 obligation's first query, one file each."""
    obs = [ob for r in rules for ob in obligations_of(r, arity) if ob.kind in wanted]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"quorem verify: error: cannot write to {folder}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    written: set[str] = set()
    failed = 0
    for ob in obs:
        name = file_name(ob)
        if name in written:  # two rules of one name (in two files)
            name = f"{name.removesuffix('.smt2')}.{len(written)}.smt2"
        try:
            script = obligation_script(ob, location=f"{_relative(ob.rule.file)}:{ob.rule.line}")
        except UnsupportedTermError as exc:
            print(f"quorem verify: error: {ob.rule.location}: {exc}", file=sys.stderr)
            failed += 1
            continue
        try:
            (folder / name).write_text(script.text, encoding="utf-8")
        except OSError as exc:
            print(f"quorem verify: error: cannot write {folder / name}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        written.add(name)
    print(f"wrote {len(written)} SMT-LIB 2.6 files to {folder} (equivalence and int64)")
    for kind, why in _NOT_ONE_QUERY.items():
        if kind in wanted:
            print(f"not written: {kind} obligations (decided by {why}, not one query)")
    return EXIT_USAGE if failed else EXIT_PROVEN


def slowest_rules(rules: Sequence[Rule], n: int, cache: ProofCache, arity: int) -> list[Rule]:
    """The ``n`` rules of ``rules`` whose slowest cached equivalence or int64 proof took longest.

    In rule order. Rules without a cached time are left out: CI runs the full proof
    first, then the seed runs on these (the longest proofs are the ones nearest to a
    timeout, so the likeliest to flip with Z3's seed).
    """
    times: dict[str, float] = {}
    for rule in rules:
        for ob in obligations_of(rule, arity):
            hit = cache.lookup(cache_key(ob))
            if hit is not None and isinstance(hit.get("seconds"), int | float):
                times[rule.name] = max(times.get(rule.name, 0.0), float(hit["seconds"]))
    keep = set(sorted(times, key=lambda name: -times[name])[:n])
    return [r for r in rules if r.name in keep]


def _usage_problem(args: argparse.Namespace) -> str:
    """What is wrong with the options, or an empty string."""
    if min(args.arity, args.jobs, args.seeds) < 1 or min(args.timeout, args.confirm_timeout) <= 0:
        return "--arity, --jobs, --seeds, --timeout and --confirm-timeout must be positive"
    if args.slowest is not None and args.slowest < 1:
        return "--slowest must be positive"
    if args.guard_candidates < 1:
        return "--guard-candidates must be positive"
    if args.guard_rlimit < 0:
        return "--guard-rlimit must be 0 (none) or positive"
    if args.confirm:
        try:
            confirmer_version(args.confirm)
        except ConfirmerMissingError as exc:
            return str(exc)
    return ""


def _verify(
    rules: Sequence[Rule],
    args: argparse.Namespace,
    *,
    wanted: Sequence[str],
    checks: Checks,
    cache: ProofCache | None,
    show: _Progress | None,
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
                kinds=[k for k in wanted if k in (*OBLIGATIONS, *_TERMINATION_KINDS)],
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


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    try:
        rules = _load(args.files)
    except QuoremError as exc:
        print(f"quorem verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.rule:
        known = {r.name for r in rules}
        missing = [n for n in args.rule if n not in known]
        if missing:
            print(f"quorem verify: error: no rule named {', '.join(missing)}", file=sys.stderr)
            return EXIT_USAGE
        rules = [r for r in rules if r.name in args.rule]
    problem = _usage_problem(args)
    if problem:
        print(f"quorem verify: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.slowest is not None:
        if args.no_cache:
            print("quorem verify: error: --slowest reads the times in the cache", file=sys.stderr)
            return EXIT_USAGE
        rules = slowest_rules(rules, args.slowest, ProofCache(), args.arity)
        if not rules:
            print(
                "quorem verify: error: --slowest: the cache holds no proof times for these "
                "rules (run quorem verify without --no-cache first)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    wanted = args.obligation or OBLIGATIONS_ALL
    if args.smt2 is not None:
        return _write_smt2(args.smt2, rules, wanted, args.arity)
    checks = Checks(args.seeds, args.confirm or "", args.confirm_timeout)
    cache = None if args.no_cache else ProofCache()
    show = None if args.json else _Progress(sys.stdout.isatty())
    start = time.perf_counter()
    results = _verify(rules, args, wanted=wanted, checks=checks, cache=cache, show=show)
    if results is None:
        return EXIT_USAGE
    seconds = time.perf_counter() - start
    if show is not None:
        show.close()
    # Before the reports: the summary stays the last line (CI prints it with tail -n 1).
    status = _records(rules, results, args)
    summary = _summary(results, seconds, checks)
    # Guard synthesis (quorem.verify.guards) for the rules not proven; imported here so
    # that a plain run does not load it.
    suggestions = _suggest(rules, results, args) if args.suggest_guard else None
    if args.json:
        out = [_json(r) for r in results]
        extra = {} if suggestions is None else {"suggestions": suggestions}
        json.dump({"rules": out, "summary": summary, **extra}, sys.stdout)
        print()
    else:
        _print_reports(results, summary)
    if args.junit:
        _write_junit(args.junit, results, seconds)
    if suggestions is not None and not args.json:
        for s in suggestions:
            print("\n" + str(s["rendered"]))
    if summary["unsound"] or summary.get("disagree") or status:
        return EXIT_UNSOUND
    if summary["unknown"] and not args.allow_unknown:
        return EXIT_UNKNOWN
    return EXIT_PROVEN


def _records(
    rules: Sequence[Rule], results: Sequence[dict[str, Any]], args: argparse.Namespace
) -> int:
    """Write or check the proof records as ``args`` ask; 1 when a check found differences."""
    every = _load(args.files)
    if args.check_records:
        problems = check_records(rules, results, every)
        for line in problems:
            print(f"quorem verify: record mismatch: {line}", file=sys.stderr)
        if problems:
            print(
                f"quorem verify: {len(problems)} proof record differences; write them again "
                "with quorem verify" + (" --write-records" if not args.files else ""),
                file=sys.stderr,
            )
        return 1 if problems else 0
    if args.no_record or not (args.files or args.write_records):
        return 0
    partial = _partial_run(args)
    if partial:
        print(f"quorem verify: no proof record written ({partial})", file=sys.stderr)
        return 0
    if not args.write_records:
        # The shipped records change only with --write-records, from a run of them all:
        # naming a shipped file (a partial check, a test) never rewrites its record.
        rules = [r for r in rules if not shipped(r.file)]
    try:
        written = write_records(rules, results, every)
    except OSError as exc:
        print(f"quorem verify: warning: cannot write the proof record: {exc}", file=sys.stderr)
        return 0
    if not args.json:
        for path in written:
            print(f"proof record: {_relative(str(path))}")
    return 0


def _partial_run(args: argparse.Namespace) -> str:
    """Why this run cannot vouch for its rules in a record, or '' when it can."""
    if args.obligation and set(RECORDED_KINDS) - set(args.obligation):
        return "--obligation left some kinds of obligation out"
    if args.arity < DEFAULT_ARITY:
        return f"--arity below {DEFAULT_ARITY}"
    if args.slowest is not None:
        return "--slowest proves only some rules again"
    return ""
