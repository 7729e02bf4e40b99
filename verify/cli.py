"""``quorem verify``: prove rule files sound, for people writing rules and for CI.

Exit status: 0 every obligation proven; 1 some rule unsound; 2 some obligation unknown
(unless ``--allow-unknown``); 3 usage or input errors (a bad rules file, say).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Final

from quorem.engine import interval
from quorem.engine.errors import QuoremError
from quorem.engine.ops import Semantics
from quorem.engine.rule import Rule
from quorem.engine.rulefile import load_rule_files
from quorem.rules import rule_files
from quorem.verify import intervals
from quorem.verify.cache import ProofCache
from quorem.verify.intervals import IntervalProof, prove_interval_analysis
from quorem.verify.prove import (
    DEFAULT_ARITY,
    DEFAULT_TIMEOUT,
    OBLIGATIONS,
    PROVEN_STATUSES,
    Obligation,
    ProofResult,
    obligations_of,
    prove,
    result_json,
)
from quorem.verify.termination import termination_results

__all__ = ["main", "verify_rules"]

EXIT_PROVEN: Final = 0
EXIT_UNSOUND: Final = 1
EXIT_UNKNOWN: Final = 2
EXIT_USAGE: Final = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="quorem verify",
        description="Prove rules sound with Z3 (the shipped rules, or FILE.rules ...).",
        epilog="Exit status: 0 all proven; 1 some rule unsound; 2 some obligation unknown "
        "(unless --allow-unknown); 3 usage or input errors.",
    )
    p.add_argument("files", nargs="*", help="rules files (default: the shipped rules)")
    p.add_argument("--rule", action="append", default=[], help="only the rule NAME (repeatable)")
    p.add_argument(
        "--obligation",
        choices=("equivalence", "int64", "interval", "termination"),
        action="append",
        help="only this kind of obligation (repeatable; default: all)",
    )
    p.add_argument("--arity", type=int, default=DEFAULT_ARITY, help="prove sum(K*t) rules for 1..K")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per query")
    p.add_argument("--jobs", "-j", type=int, default=1, help="parallel prover processes")
    p.add_argument("--json", action="store_true", help="write one JSON object to stdout")
    p.add_argument("--junit", type=Path, help="write a JUnit XML report to PATH")
    p.add_argument("--no-cache", action="store_true", help="prove everything again")
    p.add_argument("--allow-unknown", action="store_true", help="exit 0 despite unknowns")
    return p


def _prove_job(args: tuple[list[str], str, str | None, int, str, float]) -> dict[str, Any]:
    """Worker: reload the rule (rules are not sent between processes) and prove."""
    files, name, sem, arity, kind, timeout = args
    rule = next(r for r in _load(files) if r.name == name)
    ob = Obligation(rule, Semantics(sem) if sem else None, arity, kind)
    r = prove(ob, timeout)
    return {**result_json(r), "report": r.report}


def _job_args(
    files: Sequence[str], ob: Obligation, timeout: float
) -> tuple[list[str], str, str | None, int, str, float]:
    sem = ob.semantics.value if ob.semantics is not None else None
    return (list(files), ob.rule.name, sem, ob.arity, ob.kind, timeout)


def _load(files: Sequence[str]) -> list[Rule]:
    return load_rule_files(files or [str(p) for p in rule_files()])


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
) -> list[dict[str, Any]]:
    """Prove every obligation of ``rules``; return their JSON results in order."""
    obs = [ob for r in rules for ob in obligations_of(r, arity) if ob.kind in kinds]
    results: list[dict[str, Any] | None] = [None] * len(obs)
    todo = []
    for i, ob in enumerate(obs):
        hit = cache.get(ob) if cache else None
        if hit is not None:
            results[i] = {**hit, "file": ob.rule.file, "line": ob.rule.line, "cached": True}
        else:
            todo.append(i)
    jobs_args = [_job_args(files, obs[i], timeout) for i in todo]
    if jobs > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outs = pool.map(_prove_job, jobs_args)
            for i, out in zip(todo, outs, strict=True):
                results[i] = out
                if progress:
                    progress(out)
    else:
        for i in todo:
            r: ProofResult = prove(obs[i], timeout)
            out = {**result_json(r), "report": r.report}
            results[i] = out
            if progress:
                progress(out)
    if cache is not None:
        for i in todo:
            entry = {k: v for k, v in (results[i] or {}).items() if k not in ("file", "line")}
            cache.put(obs[i], entry)
        cache.save()
    return [r for r in results if r is not None]


OBLIGATIONS_ALL: Final = (*OBLIGATIONS, "interval", "termination")


def _start_intervals(cache: ProofCache | None) -> Future[list[IntervalProof]] | None:
    """Start the interval proofs (one long serial job) in a process beside the rules' pool."""
    if cache is not None and _interval_key() in cache.entries:
        return None
    pool = ProcessPoolExecutor(max_workers=1)
    pending = pool.submit(prove_interval_analysis)
    pool.shutdown(wait=False)  # the worker runs the submitted job to its end
    return pending


def _interval_key() -> str:
    sources = inspect.getsource(interval) + inspect.getsource(intervals)
    return "interval:" + hashlib.sha256(sources.encode()).hexdigest()


def _interval_results(
    cache: ProofCache | None, progress: Any, proofs: list[IntervalProof] | None = None
) -> list[dict[str, Any]]:
    """The interval analysis's proofs, one entry per operator (cached by its source).

    ``proofs``: already computed (in another process), else they are computed here.
    """
    key = _interval_key()
    hit = cache.entries.get(key) if cache else None
    if hit is not None:
        out = [{**r, "cached": True} for r in hit["results"]]
        for r in out:
            if progress:
                progress(r)
        return out
    results = []
    for proof in prove_interval_analysis() if proofs is None else proofs:
        r = {
            "name": f"interval-{proof.op}",
            "file": interval.__file__,
            "line": 1,
            "semantics": "any",
            "obligation": "interval",
            "status": "proven" if proof.status == "proven" else "unsound",
            "method": f"symbolic execution ({proof.paths} paths)",
            "seconds": round(proof.seconds, 4),
            "counterexample": proof.counterexample,
            "report": ""
            if proof.status == "proven"
            else f"interval analysis of {proof.op} is UNSOUND at {proof.counterexample}",
        }
        results.append(r)
        if progress:
            progress(r)
    if cache is not None and all(r["status"] == "proven" for r in results):
        cache.entries[key] = {"results": results}
        cache.save()
    return results


def _summary(results: Sequence[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "proven": sum(r["status"] in PROVEN_STATUSES for r in results),
        "unsound": sum(r["status"] == "unsound" for r in results),
        # unknown, vacuous, and proven-on-grid (weaker than a proof)
        "unknown": sum(r["status"] not in {*PROVEN_STATUSES, "unsound"} for r in results),
        "seconds": round(seconds, 3),
    }


def _write_junit(path: Path, results: Sequence[dict[str, Any]], seconds: float) -> None:
    suite = ET.Element(
        "testsuite",
        name="quorem verify",
        tests=str(len(results)),
        failures=str(sum(r["status"] == "unsound" for r in results)),
        errors=str(sum(r["status"] == "unknown" for r in results)),
        time=f"{seconds:.3f}",
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{r['file']}:{r['line']}",
            name=f"{r['name']} [{r['semantics']} {r['obligation']}]",
            time=str(r["seconds"]),
        )
        if r["status"] == "unsound":
            ET.SubElement(case, "failure", message="UNSOUND").text = r.get("report", "")
        elif r["status"] == "unknown":
            ET.SubElement(case, "error", message="unknown").text = r.get("report", "")
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


def _line(r: dict[str, Any]) -> str:
    cached = " (cached)" if r.get("cached") else ""
    return (
        f"{r['status']:<13} {r['name']} [{r['semantics']} {r['obligation']}] "
        f"{r['method']} {r['seconds']:.2f}s{cached}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``quorem verify`` with ``argv``; return the exit status."""
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
    if args.arity < 1 or args.jobs < 1 or args.timeout <= 0:
        print(
            "quorem verify: error: --arity, --jobs and --timeout must be positive", file=sys.stderr
        )
        return EXIT_USAGE
    cache = None if args.no_cache else ProofCache()
    show = None if args.json else _Progress(sys.stdout.isatty())
    start = time.perf_counter()
    want_intervals = (
        not args.files and not args.rule and "interval" in (args.obligation or OBLIGATIONS_ALL)
    )
    pending = _start_intervals(cache) if want_intervals and args.jobs > 1 else None
    results = verify_rules(
        rules,
        args.files,
        kinds=[k for k in (args.obligation or OBLIGATIONS) if k in OBLIGATIONS],
        arity=args.arity,
        timeout=args.timeout,
        jobs=args.jobs,
        cache=cache,
        progress=show,
    )
    if "termination" in (args.obligation or OBLIGATIONS_ALL):
        # Each rule makes terms smaller in one declared order (quorem.verify.termination).
        results += termination_results(
            rules, arity=args.arity, timeout=args.timeout, cache=cache, progress=show
        )
    if want_intervals:
        results += _interval_results(cache, show, pending.result() if pending else None)
    seconds = time.perf_counter() - start
    if show is not None:
        show.close()
    summary = _summary(results, seconds)
    if args.json:
        out = [{k: v for k, v in r.items() if k not in ("report", "cached")} for r in results]
        json.dump({"rules": out, "summary": summary}, sys.stdout)
        print()
    else:
        if show is None or any(r.get("cached") for r in results):
            for r in results:
                if r.get("cached"):
                    print(_line(r))
        for r in results:
            if r["status"] not in PROVEN_STATUSES and r.get("report"):
                print("\n" + r["report"])
        print(
            f"\n{summary['proven']} proven, {summary['unsound']} unsound, "
            f"{summary['unknown']} unknown, in {summary['seconds']:.1f} s"
        )
    if args.junit:
        _write_junit(args.junit, results, seconds)
    if summary["unsound"]:
        return EXIT_UNSOUND
    if summary["unknown"] and not args.allow_unknown:
        return EXIT_UNKNOWN
    return EXIT_PROVEN
