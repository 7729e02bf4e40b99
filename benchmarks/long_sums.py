"""Long sums: simplification time against the number of addends (issue 14's shapes).

    python -m benchmarks.long_sums [--sizes 1000,10000,100000] [--repeats 3]

Shapes, each a sum of ``n`` addends built directly as terms (parsing is measured by
``benchmarks.parse_ladder``):

* ``split``: ``(1*x1 + 2*x2 + ... + n*xn) // 7``, bounded variables (multiples leave the
  division);
* ``split-unbounded``: the same with unbounded variables (no rule may fire);
* ``pairs``: ``sum((xi // 4)*4 + xi % 4)`` (every pair recombines to ``xi``);
* ``halves``: ``sum(xi // 2)`` (nothing to do, one division per addend).

Prints the median seconds per size and the ratio to the previous size (linear time gives
about the size ratio).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import quorem
from quorem.term import linear, var

Builder = Callable[[int], quorem.Term]


def split(n: int, bounded: bool = True) -> quorem.Term:
    xs = [var(f"x{i}", 0, 9) if bounded else var(f"x{i}") for i in range(1, n + 1)]
    return linear((x, i) for i, x in enumerate(xs, 1)) // 7


def split_unbounded(n: int) -> quorem.Term:
    return split(n, bounded=False)


def pairs(n: int) -> quorem.Term:
    xs = [var(f"x{i}", 0, 99) for i in range(n)]
    return linear([(x // 4, 4) for x in xs] + [(x % 4, 1) for x in xs])


def halves(n: int) -> quorem.Term:
    return linear((var(f"x{i}", 0, 99) // 2, 1) for i in range(n))


SHAPES: dict[str, Builder] = {
    "split": split,
    "split-unbounded": split_unbounded,
    "pairs": pairs,
    "halves": halves,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    for name in args.shape or list(SHAPES):
        build = SHAPES[name]
        previous = None
        for n in sizes:
            times = []
            for _ in range(args.repeats):
                t = build(n)
                start = time.perf_counter()
                out = quorem.explain(t)
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            ratio = f"  x{median / previous:.1f}" if previous else ""
            print(
                f"{name:16} n={n:>7}  {median:8.3f} s{ratio}  steps={out.steps}"
                f"  divisions {quorem.count_divmod(t)} -> {quorem.count_divmod(out.term)}",
                flush=True,
            )
            previous = median


if __name__ == "__main__":
    main()
