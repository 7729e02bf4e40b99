"""``python -m benchmarks.fuzz``: run the fuzz targets and report what they found.

    python -m benchmarks.fuzz --target all --seconds 60 --seed 1 --out fuzz.json
    python -m benchmarks.fuzz --replay fuzz-failures/expr-soundness/wrong-....json --shrink

Prints, per target, the inputs tried, the expressions they exercised, the inputs rejected
with the surface's documented error, and the failures by kind (``traceback``, ``hang``,
``wrong``) and by distinct key (exception type and innermost engine location, or the
check that failed). Each failing input is written under ``--failures`` for ``--replay``.
Exit status: 0 no failure, 1 some failure, 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.fuzz import TARGETS
from benchmarks.fuzz.harness import KINDS, Recorder, Stats, replay, run_target, shrink, stderr


def _summary(name: str, stats: Stats, seconds: float) -> dict[str, Any]:
    return {
        "target": name,
        "seconds": round(seconds, 1),
        "inputs": stats.tried,
        "expressions": stats.expressions,
        "rejected": stats.rejected,
        "failures": dict(stats.failures),
        "distinct": dict(sorted(stats.by_key.items(), key=lambda kv: -kv[1])),
    }


def _print(row: dict[str, Any], recorder: Recorder) -> None:
    f = row["failures"]
    print(
        f"{row['target']:15} {row['inputs']:>9} inputs  {row['expressions']:>9} expressions  "
        f"{row['rejected']:>8} rejected  "
        + "  ".join(f"{k} {f.get(k, 0)}" for k in KINDS)
        + f"  ({row['seconds']} s)",
        flush=True,
    )
    for key, count in row["distinct"].items():
        where = recorder.files.get(key, "")
        print(f"    {count:>7} x {key}", flush=True)
        message = recorder.messages.get(key, "")
        if message:
            print(f"              {message[:300]}", flush=True)
        if where:
            print(f"              replay: {where}", flush=True)


def _replay(path: Path, limit: float, do_shrink: bool, budget: float) -> int:
    record = json.loads(path.read_text())
    target = TARGETS[record["target"]]()
    out = replay(target, record["case"], limit)
    if out.kind is None:
        print("passes now" + (" (rejected with the documented error)" if out.rejected else ""))
        return 0
    print(f"{out.kind}: {out.key}\n{out.message}")
    if out.trace:
        print(out.trace)
    if do_shrink:
        small = shrink(target, record["case"], out.key, limit, budget)
        print("shrunk case:")
        print(json.dumps(small))
        text = small.get("text")
        if isinstance(text, str):
            print("text:", repr(text))
        if "tree" in small:
            from benchmarks.fuzz.terms import to_source  # noqa: PLC0415

            print("tree text:", to_source(small["tree"]), "vars:", small["vars"])
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.fuzz",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--target", default="all", help=f"one of {', '.join(TARGETS)}, or all")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes per target")
    parser.add_argument("--limit", type=float, default=20.0, help="seconds per input (hang)")
    parser.add_argument("--out", type=Path, help="write a JSON summary here")
    parser.add_argument(
        "--failures",
        type=Path,
        default=Path("fuzz-failures"),
        help="directory for failing inputs (default ./fuzz-failures)",
    )
    parser.add_argument("--replay", type=Path, metavar="FILE", help="re-run one failing input")
    parser.add_argument("--shrink", action="store_true", help="with --replay: minimise it")
    parser.add_argument("--shrink-seconds", type=float, default=120.0)
    args = parser.parse_args(argv)
    if args.replay is not None:
        return _replay(args.replay, args.limit, args.shrink, args.shrink_seconds)
    names = list(TARGETS) if args.target == "all" else args.target.split(",")
    unknown = [n for n in names if n not in TARGETS]
    if unknown or args.jobs < 1:
        parser.error(f"unknown target {', '.join(unknown)}" if unknown else "--jobs must be >= 1")
    recorder = Recorder(args.failures)
    rows = []
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for name in names:
        t0 = time.monotonic()
        stats = run_target(
            name,
            TARGETS[name],
            seconds=args.seconds,
            seed=args.seed,
            jobs=args.jobs,
            limit=args.limit,
            recorder=recorder,
            log=stderr,
        )
        row = _summary(name, stats, time.monotonic() - t0)
        rows.append(row)
        _print(row, recorder)
    total = {k: sum(r["failures"].get(k, 0) for r in rows) for k in KINDS}
    print(
        f"total: {sum(r['inputs'] for r in rows)} inputs, "
        f"{sum(r['expressions'] for r in rows)} expressions, "
        + ", ".join(f"{k} {v}" for k, v in total.items())
    )
    if args.out is not None:
        summary = {
            "started": started, "seed": args.seed, "jobs": args.jobs, "limit": args.limit,
            "seconds_per_target": args.seconds, "python": platform.python_version(),
            "targets": rows, "failures": total,
            "files": recorder.files,
        }  # fmt: skip
        args.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 1 if any(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
