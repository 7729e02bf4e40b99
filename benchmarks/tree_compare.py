"""Two quorem trees side by side: per-expression rewrite time on the same corpora.

    python -m benchmarks.tree_compare --base /path/to/old/.venv/bin/quorem \\
        --head .venv/bin/quorem --rounds 5 benchmarks/corpora/*.jsonl

Each round runs ``quorem simplify --batch`` of every corpus with the base tree and with
the head tree, alternating which goes first, so that the machine's load falls on both
alike. The batch output times the rewrite of each line alone (``seconds``); per corpus,
the median over rounds of each line's time, then the median over lines, is reported
for both trees with the ratio head/base, and the lines whose outputs differ are counted
(``ops_after`` lower, equal, higher in head). Lines either tree rejects are left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def run_batch(quorem: str, corpus: Path) -> list[dict[str, Any]]:
    """The output objects of ``quorem simplify --batch corpus``, one per input line."""
    done = subprocess.run(
        [quorem, "simplify", "--batch", str(corpus)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{quorem} failed on {corpus}: {done.stderr.strip()[:500]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def compare(base: str, head: str, corpus: Path, rounds: int) -> dict[str, Any]:
    """Median per-line seconds of both trees on ``corpus`` and how their outputs differ."""
    times: dict[str, list[list[float]]] = {"base": [], "head": []}
    last: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        order = [("base", base), ("head", head)]
        if r % 2:
            order.reverse()
        for name, exe in order:
            out = run_batch(exe, corpus)
            last[name] = out
            times[name].append([o.get("seconds", float("nan")) for o in out])
    ok = [
        i
        for i, (a, b) in enumerate(zip(last["base"], last["head"], strict=True))
        if "error" not in a and "error" not in b
    ]
    medians = {
        name: statistics.median(statistics.median(run[i] for run in runs) for i in ok)
        for name, runs in times.items()
    }
    fewer = sum(1 for i in ok if last["head"][i]["ops_after"] < last["base"][i]["ops_after"])
    more = sum(1 for i in ok if last["head"][i]["ops_after"] > last["base"][i]["ops_after"])
    return {
        "corpus": corpus.name,
        "lines": len(ok),
        "base_median_us": medians["base"] * 1e6,
        "head_median_us": medians["head"] * 1e6,
        "ratio": medians["head"] / medians["base"],
        "head_fewer_ops": fewer,
        "head_more_ops": more,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print one line per corpus and the median ratio over corpora; return 0."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tree_compare")
    parser.add_argument("--base", required=True, help="the base tree's quorem executable")
    parser.add_argument("--head", required=True, help="the head tree's quorem executable")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("corpora", nargs="+", type=Path)
    args = parser.parse_args(argv)
    rows = [compare(args.base, args.head, c, args.rounds) for c in args.corpora]
    print("| corpus | lines | base µs | head µs | head/base | fewer ops | more ops |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['corpus']} | {row['lines']} | {row['base_median_us']:.1f} | "
            f"{row['head_median_us']:.1f} | {row['ratio']:.3f} | {row['head_fewer_ops']} | "
            f"{row['head_more_ops']} |"
        )
    ratios = [r["ratio"] for r in rows]
    print(f"median ratio over corpora: {statistics.median(ratios):.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
