"""``quorem verify``: prove rule files sound, for people writing rules and for CI.

Exit status, as every quorem command: 0 every obligation proven; 1 some rule unsound;
2 usage or input errors (a bad rules file, say; ``quorem`` exits 2 too when Z3 is
missing); 3 some obligation unknown (unless ``--allow-unknown``); 130 interrupted.
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

import quorem.engine
import quorem.rules
import z3
from quorem.engine.cli_args import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, silence_stdout
from quorem.engine.errors import QuoremError
from quorem.engine.rule import Rule
from quorem.verify.cache import ProofCache, cache_key
from quorem.verify.digest import code_digest
from quorem.verify.interrupt import interruptible
from quorem.verify.intervals import interval_obligations
from quorem.verify.jobs import Job, load_rules, run_jobs
from quorem.verify.prove import (
    DEFAULT_ARITY,
    DEFAULT_TIMEOUT,
    ENCODINGS,
    OBLIGATIONS,
    PROVEN_STATUSES,
    Obligation,
    obligations_of,
)
from quorem.verify.termination import (
    NESTED_OBLIGATION,
    nested_obligations,
    termination_cache_key,
    termination_digest,
    termination_obligations,
)

__all__ = ["main", "verify_rules"]

EXIT_PROVEN: Final = 0
EXIT_UNSOUND: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNKNOWN: Final = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="quorem verify",
        description="Prove rules sound with Z3 (the shipped rules, or FILE.rules ...).",
        epilog="Exit status: 0 all proven; 1 some rule unsound; 2 usage or input errors; "
        "3 some obligation unknown (unless --allow-unknown); 130 interrupted.",
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
    p.add_argument("--jobs", "-j", type=int, default=1, help="parallel prover processes")
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
        "--suggest-guard",
        action="store_true",
        help="for each rule not proven, search for the weakest guard that makes it proven",
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
    encoding: str = "purify",
) -> list[dict[str, Any]]:
    """Prove the obligations of ``rules`` of ``kinds``; return their JSON results in order.

    ``kinds`` may name ``equivalence``, ``int64``, ``termination`` and
    ``termination-context``; with ``intervals`` the engine's interval analysis is proven
    too. Results come rule obligations first, then termination, then the nested order,
    then the interval proofs, each in rule order; ``progress`` is called with each as
    soon as it is known: the cached ones first, then each job's as it finishes (in rule
    order with one job at a time). Definite results are cached in ``cache`` as they
    arrive, and it is saved on the way out, interrupted or not.
    """
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
    results: list[dict[str, Any] | None] = []
    # One job per rule instance (rule, semantics, arity); its results' indices.
    groups: dict[tuple[str, str | None, int, bool], list[int]] = {}
    for ob, key in zip(obs, keys, strict=True):
        hit = cache.lookup(key) if cache is not None else None
        if hit is not None:
            results.append({**hit, "file": ob.rule.file, "line": ob.rule.line, "cached": True})
        else:
            sem = ob.semantics.value if ob.semantics else None
            instance = (ob.rule.name, sem, ob.arity, ob.kind in _TERMINATION_KINDS)
            groups.setdefault(instance, []).append(len(results))
            results.append(None)
    slots = list(groups.values())
    work = [Job.of([obs[i] for i in slot], timeout) for slot in slots]
    interval_hit = cache.lookup(_interval_key()) if cache and intervals else None
    first_interval = len(results)
    if interval_hit is not None:
        results += [{**r, "cached": True} for r in interval_hit["results"]]
    elif intervals:
        for name in interval_obligations():
            slots.append([len(results)])
            work.append(Job(("interval",), name))
            results.append(None)
    if progress:
        for r in results:
            if r is not None:
                progress(r)

    def on_result(j: int, rs: list[dict[str, Any]]) -> None:
        for i, r in zip(slots[j], rs, strict=True):
            results[i] = r
        if cache is not None:
            # Cached as they arrive, so an interrupted run keeps what it proved.
            _remember(cache, [(obs[i], keys[i], results[i]) for i in slots[j] if i < len(obs)])
            if intervals and interval_hit is None:
                _remember_intervals(cache, results[first_interval:])
            cache.save_if_due()
        if progress:
            for r in rs:
                progress(r)

    try:
        run_jobs(work, rules, files, jobs, on_result, in_order=False)
    finally:
        if cache is not None:
            cache.save()
    return [r for r in results if r is not None]


_TERMINATION_KINDS: Final = ("termination", NESTED_OBLIGATION)


def _cache_key(ob: Obligation, digest: str) -> str:
    if ob.kind in _TERMINATION_KINDS:
        return termination_cache_key(ob, digest)
    return cache_key(ob)


def _remember(cache: ProofCache, done: Sequence[tuple[Obligation, str, Any]]) -> None:
    """Cache definite results: proofs and confirmed counterexamples, never unknowns."""
    for ob, key, r in done:
        if r is None or r.get("cached"):
            continue
        entry = {k: v for k, v in r.items() if k not in ("file", "line")}
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


def _summary(results: Sequence[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "proven": sum(r["status"] in PROVEN_STATUSES for r in results),
        "unsound": sum(r["status"] == "unsound" for r in results),
        # unknown, vacuous, and proven-on-grid (weaker than a proof)
        "unknown": sum(r["status"] not in {*PROVEN_STATUSES, "unsound"} for r in results),
        "seconds": round(seconds, 3),
    }


def _relative(file: str) -> str:
    """``file`` as a path relative to the working directory or to quorem, never absolute.

    Relative to the working directory when inside it, else to the folder holding the
    shipped rules or the engine (``rules/00-fold.rules``, ``engine/interval.py``
    wherever quorem is installed), else ``..``-relative to the working directory: a
    report reads the same on every machine and checkout.
    """
    path = Path(file).resolve()
    roots = [Path.cwd().resolve()]
    roots += [
        Path(m.__file__ or ".").resolve().parent.parent for m in (quorem.rules, quorem.engine)
    ]
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows)
        return path.name


def _write_junit(path: Path, results: Sequence[dict[str, Any]], seconds: float) -> None:
    # Counted as the summary counts: anything neither proven nor unsound (unknown,
    # vacuous, proven-on-grid) is an error, which fails CI as the exit status does.
    undecided = [r for r in results if r["status"] not in {*PROVEN_STATUSES, "unsound"}]
    suite = ET.Element(
        "testsuite",
        name="quorem verify",
        tests=str(len(results)),
        failures=str(sum(r["status"] == "unsound" for r in results)),
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
        if r["status"] == "unsound":
            ET.SubElement(case, "failure", message="UNSOUND").text = r.get("report", "")
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


def _line(r: dict[str, Any]) -> str:
    cached = " (cached)" if r.get("cached") else ""
    return (
        f"{r['status']:<13} {r['name']} [{r['semantics']} {r['obligation']}] "
        f"{r['method']} {r['seconds']:.2f}s{cached}"
    )


def _suggest(
    rules: Sequence[Rule], results: Sequence[dict[str, Any]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    from quorem.verify.guards import suggest_for_results, suggestion_json  # noqa: PLC0415

    found = suggest_for_results(
        rules, results, arity=min(args.arity, 2), timeout=min(args.timeout, 2.0)
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
    if args.arity < 1 or args.jobs < 1 or args.timeout <= 0:
        print(
            "quorem verify: error: --arity, --jobs and --timeout must be positive", file=sys.stderr
        )
        return EXIT_USAGE
    cache = None if args.no_cache else ProofCache()
    show = None if args.json else _Progress(sys.stdout.isatty())
    start = time.perf_counter()
    wanted = args.obligation or OBLIGATIONS_ALL
    results = verify_rules(
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
    )
    seconds = time.perf_counter() - start
    if show is not None:
        show.close()
    summary = _summary(results, seconds)
    # Guard synthesis (quorem.verify.guards) for the rules not proven; imported here so
    # that a plain run does not load it.
    suggestions = _suggest(rules, results, args) if args.suggest_guard else None
    if args.json:
        out = [{k: v for k, v in r.items() if k not in ("report", "cached")} for r in results]
        extra = {} if suggestions is None else {"suggestions": suggestions}
        json.dump({"rules": out, "summary": summary, **extra}, sys.stdout)
        print()
    else:
        # Every result was printed as it arrived (_Progress); only the reports follow.
        for r in results:
            if r["status"] not in PROVEN_STATUSES and r.get("report"):
                print("\n" + r["report"])
        print(
            f"\n{summary['proven']} proven, {summary['unsound']} unsound, "
            f"{summary['unknown']} unknown, in {summary['seconds']:.1f} s"
        )
    if args.junit:
        _write_junit(args.junit, results, seconds)
    if suggestions is not None and not args.json:
        for s in suggestions:
            print("\n" + str(s["rendered"]))
    if summary["unsound"]:
        return EXIT_UNSOUND
    if summary["unknown"] and not args.allow_unknown:
        return EXIT_UNKNOWN
    return EXIT_PROVEN
