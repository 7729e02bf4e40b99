"""Size ladders of chains and sums (issue 36): time, growth, and the form reached.

    python -m benchmarks.ladders [--sizes 50,100,1000,10000] [--repeats 3] [--shape NAME]

Shapes, each built with ``n`` clauses or addends (all variables bounded, 0..10**6 unless
said otherwise) together with the form it must simplify to:

* ``bands``: ``0 <= x0 - x1*5 and x0 - x1*5 < 5 and 0 <= x1 - x2*5 and ...``, ``n``
  bands over a chain of variables, each becoming ``x[i+1] == x[i]//5``;
* ``pair-bands``: the same over separate pairs ``(xi, yi)``: ``yi == xi//5``;
* ``residues``: ``x%m == r and x//d < c`` for ``n`` pairs of variables ``(xi, yi)``
  joined by ``and`` (``xi < c*d`` and the residue test);
* ``or-clauses``: an ``or`` of ``n`` clauses ``(xi%m == r and xi//d < c)``;
* ``quotient-sum``: ``sum((xi*4 + yi)//4)`` with ``yi`` in 0..3: ``sum(xi)``;
* ``remainder-sum``: ``sum(xi % 4)``: nothing to do, one remainder per addend.

Each rung is simplified ``--repeats`` times (a fresh term each time; parsing is not
timed) and the median CPU time is printed with the ratio to the previous rung, the stop
reason, and whether the known form was reached (``ok``). Linear time gives a ratio
about the size ratio.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable

import quorem
from quorem.rewrite import StopReason, rewrite
from quorem.ruleset import default_ruleset
from quorem.term import Term, conjunction, const, disjunction, linear, var

Shape = Callable[[int], tuple[Term, Term]]  # n -> (input, the simplified form it must reach)
_BIG = 10**6


def bands(n: int) -> tuple[Term, Term]:
    """``n`` bands ``0 <= x[i] - 5*x[i+1] < 5`` over one chain of variables."""
    xs = [var(f"x{i}", 0, _BIG) for i in range(n + 1)]
    clauses, known = [], []
    for a, y in itertools.pairwise(xs):
        band, quotient = _band(a, y)
        clauses += band
        known.append(quotient)
    return conjunction(clauses), conjunction(known)


def _band(a: Term, y: Term) -> tuple[list[Term], Term]:
    """The two clauses of ``0 <= a - 5*y < 5``, and what they say: ``y == a // 5``."""
    diff = linear([(a, 1), (y, -5)])
    band = [
        quorem.compare(quorem.Op.LE, const(0), diff),
        quorem.compare(quorem.Op.LT, diff, const(5)),
    ]
    return band, quorem.compare(quorem.Op.EQ, y, quorem.div(a, const(5), quorem.Semantics.FLOOR))


def pair_bands(n: int) -> tuple[Term, Term]:
    """``n`` bands ``0 <= xi - 5*yi < 5`` over separate pairs of variables."""
    clauses, known = [], []
    for i in range(n):
        a, y = var(f"x{i}", 0, _BIG), var(f"y{i}", 0, _BIG)
        band, quotient = _band(a, y)
        clauses += band
        known.append(quotient)
    return conjunction(clauses), conjunction(known)


def _residue_clause(i: int) -> tuple[Term, Term]:
    """``xi%m == r and xi//d < c`` (m, r, d, c varying with i) and its known form."""
    x = var(f"x{i}", 0, _BIG)
    m, d, c = 2 + i % 7, 3 + i % 5, 5 + i % 11
    r = i % m
    residue = quorem.compare(
        quorem.Op.EQ, quorem.mod(x, const(m), quorem.Semantics.FLOOR), const(r)
    )
    below = quorem.compare(quorem.Op.LT, quorem.div(x, const(d), quorem.Semantics.FLOOR), const(c))
    simple = quorem.compare(quorem.Op.LT, x, const(c * d))
    return conjunction([residue, below]), conjunction([residue, simple])


def residues(n: int) -> tuple[Term, Term]:
    """A conjunction of ``n`` residue tests and ``n`` comparisons of quotients."""
    pairs = [_residue_clause(i) for i in range(n)]
    return conjunction([p for p, _ in pairs]), conjunction([k for _, k in pairs])


def or_clauses(n: int) -> tuple[Term, Term]:
    """A disjunction of ``n`` clauses ``xi%m == r and xi//d < c``."""
    pairs = [_residue_clause(i) for i in range(n)]
    return disjunction([p for p, _ in pairs]), disjunction([k for _, k in pairs])


def quotient_sum(n: int) -> tuple[Term, Term]:
    """``sum((xi*4 + yi)//4)`` with ``yi`` in 0..3, which is ``sum(xi)``."""
    xs = [var(f"x{i}", 0, _BIG) for i in range(n)]
    ys = [var(f"y{i}", 0, 3) for i in range(n)]
    parts = [
        quorem.div(linear([(x, 4), (y, 1)]), const(4), quorem.Semantics.FLOOR)
        for x, y in zip(xs, ys, strict=True)
    ]
    return linear((p, 1) for p in parts), linear((x, 1) for x in xs)


def remainder_sum(n: int) -> tuple[Term, Term]:
    """``sum(xi % 4)``: already simple."""
    t = linear(
        (quorem.mod(var(f"x{i}", 0, _BIG), const(4), quorem.Semantics.FLOOR), 1) for i in range(n)
    )
    return t, t


SHAPES: dict[str, Shape] = {
    "bands": bands,
    "pair-bands": pair_bands,
    "residues": residues,
    "or-clauses": or_clauses,
    "quotient-sum": quotient_sum,
    "remainder-sum": remainder_sum,
}


def run_rung(shape: Shape, n: int, repeats: int) -> tuple[float, StopReason, bool]:
    """The median CPU seconds of ``rewrite`` on the rung, its stop reason, form reached."""
    rules = default_ruleset()
    times = []
    reason = StopReason.FIXED_POINT
    reached = True
    for _ in range(repeats):
        term, known = shape(n)
        start = time.process_time()
        result = rewrite(term, rules)
        times.append(time.process_time() - start)
        reason = result.reason
        reached = reached and result.term is known
    return statistics.median(times), reason, reached


def main(argv: list[str] | None = None) -> None:
    """Print one line per shape and size: median seconds, ratio, stop reason, form."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sizes", default="50,100,1000,10000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rewrite(bands(3)[0], default_ruleset())  # compile the dispatchers outside the timing
    for name in args.shape or list(SHAPES):
        previous = None
        for n in sizes:
            median, reason, reached = run_rung(SHAPES[name], n, args.repeats)
            ratio = f"x{median / previous:5.1f}" if previous else "      "
            print(
                f"{name:14} n={n:>6}  {median:8.3f} s  {ratio}  {reason.value:11}"
                f"  {'ok' if reached else 'NOT REACHED'}",
                flush=True,
            )
            previous = median


if __name__ == "__main__":
    main()
