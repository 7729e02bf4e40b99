"""Benchmark quorem.simplify on the seed corpus, and parsing of a deeply nested text.

Every repeat parses each case afresh and times ``simplify`` alone. Terms are interned in
a weak table and simplify keeps nothing between calls, so once a case's terms are dropped
the next repeat builds them all again: no repeat is a cache lookup (the script checks
that the intern table does not grow). Reports, per rule path, the median and 90th
percentile over the cases of each case's median time, in microseconds.

Rule paths: ``compiled`` (the default: rules compiled to specialised functions) and
``reference`` (``RuleSet(..., compiled=False)``: the generic matcher and interpreter the
compiled code is checked against), measured in the same run.

    python benchmarks/bench_simplify.py                 # both paths, deep parse, long sums
    python benchmarks/bench_simplify.py --repeats 100 --paths compiled
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import quorem
from quorem import term as term_module

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "benchmarks" / "data" / "seed_cases.jsonl"


def load_cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ruleset(path: str) -> quorem.RuleSet:
    rules = quorem.default_ruleset()
    if path == "compiled":
        return rules
    try:
        return quorem.RuleSet(rules.rules, compiled=False)
    except TypeError:  # a quorem without compiled rules: its only path is the reference
        return rules


def bench_cases(
    cases: list[dict[str, Any]], rules: quorem.RuleSet, repeats: int, clock: str = "wall"
) -> dict[str, list[float]]:
    """Per case id, the seconds of each repeat's simplify (parsing not timed)."""
    times: dict[str, list[float]] = {c["id"]: [] for c in cases}
    for c in cases:  # warm-up: first-call costs are not what is measured
        quorem.simplify(parse(c), rules)
    gc.collect()
    base = len(term_module._TABLE)
    now = time.perf_counter if clock == "wall" else time.process_time
    for _ in range(repeats):
        for c in cases:
            t = parse(c)
            start = now()
            result = quorem.simplify(t, rules)
            times[c["id"]].append(now() - start)
            del t, result
        gc.collect()
        grown = len(term_module._TABLE) - base
        assert grown < 50, f"the intern table keeps {grown} terms between repeats"
    return times


def parse(case: dict[str, Any]) -> quorem.Term:
    bounds = {k: (v[0], v[1]) for k, v in case["vars"].items()}
    return quorem.parse(case["expr"], bounds, case.get("semantics", "floor"))


def summary(times: dict[str, list[float]]) -> dict[str, float]:
    medians = sorted(statistics.median(v) * 1e6 for v in times.values())
    return {
        "median_us": statistics.median(medians),
        "p90_us": medians[min(len(medians) - 1, round(0.9 * (len(medians) - 1)))],
        "mean_us": statistics.fmean(medians),
        "min_case_us": medians[0],
        "max_case_us": medians[-1],
    }


def count_opcodes(cases: list[dict[str, Any]], rules: quorem.RuleSet) -> float:
    """Mean Python bytecodes executed per simplify: a deterministic measure of work,
    unaffected by a busy machine (C-level work, e.g. dictionary look-ups, is not counted)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    for c in cases:
        quorem.simplify(parse(c), rules)  # warm-up
    total = 0
    for c in cases:
        t = parse(c)
        count = 0
        sys.settrace(tracer)
        try:
            quorem.simplify(t, rules)
        finally:
            sys.settrace(None)
        total += count
        del t
    return total / len(cases)


def bench_deep_parse(depth: int, repeats: int) -> float:
    """Best seconds to parse a sum nested ``depth`` deep (tests/test_rewrite.py's)."""
    text = "x" + "".join(f" + (y{i % 7} % 8 + 1" for i in range(depth)) + ")" * depth
    bounds = {f"y{i}": (0, 7) for i in range(7)} | {"x": (0, 5)}
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        t = quorem.parse(text, bounds)
        best = min(best, time.process_time() - start)
        del t
    return best


def bench_long_sum(pairs: int) -> tuple[float, int]:
    """Seconds (CPU) to simplify one sum of ``pairs`` written-out div-mod identities."""
    xs = [quorem.var(f"x{i}", 0, 1000) for i in range(pairs)]
    t = quorem.sum_of([x % 8 + (x // 8) * 8 for x in xs] + [quorem.var("y", 0, 5)])
    start = time.process_time()
    r = quorem.explain(t)
    return time.process_time() - start, r.steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, default=CASES, help="JSONL cases (seed corpus)")
    ap.add_argument("--repeats", type=int, default=30, help="fresh parses per case")
    ap.add_argument("--paths", default="compiled,reference", help="rule paths: compiled,reference")
    ap.add_argument("--depth", type=int, default=100_000, help="nesting of the parse test")
    ap.add_argument("--long-sum", type=int, default=500, help="pairs in the long-sum test")
    ap.add_argument("--no-extras", action="store_true", help="seed cases only")
    ap.add_argument(
        "--opcodes", action="store_true", help="also count bytecodes per simplify (slow)"
    )
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall: perf_counter; cpu: process time (steadier on a busy machine)",
    )
    args = ap.parse_args(argv)

    print(f"quorem from {Path(quorem.__file__).parent}")
    print(
        f"python {platform.python_version()} on {platform.machine()},"
        f" {platform.system()}; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    cases = load_cases(args.cases)
    print(f"{len(cases)} seed cases, {args.repeats} fresh parses each, {args.clock} clock")
    for path in args.paths.split(","):
        stats = summary(bench_cases(cases, ruleset(path), args.repeats, args.clock))
        print(
            f"simplify [{path:9s}] median {stats['median_us']:7.1f} us"
            f"  p90 {stats['p90_us']:7.1f} us  mean {stats['mean_us']:7.1f} us"
            f"  (cases {stats['min_case_us']:.1f} .. {stats['max_case_us']:.1f} us)"
        )
        if args.opcodes:
            mean = count_opcodes(cases, ruleset(path))
            print(f"simplify [{path:9s}] {mean:.0f} Python bytecodes per case (mean)")
    if not args.no_extras:
        seconds = bench_deep_parse(args.depth, 2)
        print(f"parse of a sum nested {args.depth} deep: {seconds:.2f} s (CPU, best of 2)")
        seconds, steps = bench_long_sum(args.long_sum)
        print(f"long sum, {args.long_sum} div-mod pairs: {seconds:.2f} s (CPU), {steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
