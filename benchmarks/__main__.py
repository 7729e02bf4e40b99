"""``python -m benchmarks``: quorem, tinygrad and TVM side by side on corpora.

    python -m benchmarks --corpus benchmarks/data/seed_cases.jsonl --repeats 20 \\
        --out benchmarks/results

Without a corpus it runs ``benchmarks/corpora/*.jsonl`` when there are any, else the seed
corpus. Peers that are not installed are skipped (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from benchmarks.peers import DEFAULT_SYSTEMS, PEER_NAMES
from benchmarks.runner import ROOT, SEED_CORPUS, render, run, write_results


def default_corpora() -> list[Path]:
    found = sorted((ROOT / "benchmarks" / "corpora").glob("*.jsonl"))
    return found or [SEED_CORPUS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Simplify corpora with quorem and its peers, interleaved, and report.",
    )
    parser.add_argument("--corpus", nargs="+", type=Path, help="JSONL corpus files")
    parser.add_argument("--repeats", type=int, default=10, help="timed rounds (default 10)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--name", help="file name stem of the results (default: corpora stems)")
    parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated, from {', '.join(PEER_NAMES)} (default: %(default)s)",
    )
    parser.add_argument(
        "--peer-input",
        choices=("term", "text"),
        default="term",
        help="what peers receive: quorem's canonical term (default) or the text as written",
    )
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--limit", type=int, help="first N cases of each corpus only")
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="stop a call running longer than this many seconds (status timeout; default 120)",
    )
    parser.add_argument(
        "--slow",
        type=float,
        default=2.0,
        help="a call slower than this many seconds in the warm-up is timed once (default 2)",
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--render",
        type=Path,
        metavar="JSON",
        help="only write the markdown and plot of an earlier run's JSON again",
    )
    args = parser.parse_args(argv)
    if args.render:
        for path in render(args.render):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    corpora = args.corpus or default_corpora()
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    for n in names:
        if n not in PEER_NAMES:
            parser.error(f"unknown system {n!r}")

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    result = run(
        corpora,
        repeats=args.repeats,
        system_names=names,
        peer_input=args.peer_input,
        clock=args.clock,
        limit=args.limit,
        timeout=args.timeout or None,
        slow=args.slow,
        log=log,
    )
    stem = args.name or "+".join(p.stem for p in corpora)
    for path in write_results(result, args.out, stem):
        log(f"wrote {path}")
    for name, s in result.summary["systems"].items():
        print(
            f"{name:13} median {s['median_us']:.1f} µs  p90 {s['p90_us']:.1f} µs  "
            f"ops {s['ops_before']} -> {s['ops_after']}  "
            f"non-equivalent {len(s['non_equivalent'])}  unsupported {len(s['unsupported'])}  "
            f"errors {len(s['errors'])}  timeouts {len(s['timeouts'])}"
            if s["median_us"] is not None
            else f"{name:13} no supported case"
        )
    for name, c in result.summary["comparisons"].items():
        r = c["time_ratio_peer_over_quorem"]["median"]
        print(
            f"quorem vs {name}: {name}/quorem time ratio (median over cases) "
            f"{r:.2f}; quorem fewer ops on {len(c['quorem_fewer_ops'])}, same on "
            f"{c['same_ops']}, more on {len(c['quorem_more_ops'])}"
            if r is not None
            else f"quorem vs {name}: no common case"
        )
    return 0


def main_with_a_deep_stack(argv: list[str] | None = None) -> int:
    """Run :func:`main` in a thread with a 1 GiB stack and a high recursion limit.

    The size ladders nest expressions 10 000 deep: TVM's C++ simplifier recurses once per
    level and overflows the main thread's 8 MiB stack (a segmentation fault), and
    tinygrad computes value ranges by recursion. The stack is virtual memory: only the
    pages used are allocated.
    """
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 200_000))
    threading.stack_size(1 << 30)
    status: list[int] = []
    worker = threading.Thread(target=lambda: status.append(main(argv)), name="benchmarks")
    worker.start()
    worker.join()
    return status[0] if status else 1


if __name__ == "__main__":
    sys.exit(main_with_a_deep_stack())
