"""Validity masks: ``and``/``or``/``not`` over comparisons (issue 15, class 1's boolean layer).

The conjunctions and disjunctions padded, gated and tiled kernels test, each with the
form a peer reaches, derived here from the construction (not from quorem):

* a quotient and a remainder pinned: ``x // d == c and x % d == r`` is ``x == c*d + r``
  (``0 <= r < d`` on a non-negative box; ``0`` when ``r`` is out of ``[0, d)``);
* two bounds on one index, one implied: ``x < a and x < b`` is ``x < min(a, b)``; bounds
  that contradict fold to ``0``; ``x < a or x < b`` is ``x < max(a, b)``; a bound and its
  negation in a disjunction fold to ``1``;
* a clause implied by the ranges is dropped: ``0 <= x and x < n`` on ``x >= 0``;
* a quotient bound under a tighter plain bound: ``x // d < c and x < e`` (``e <= c*d``)
  is ``x < e``;
* a tile guard: ``i*t + j < n and j < t`` with ``j`` in ``[0, t - 1]`` keeps the first;
* a negated comparison: ``not (x // d < c)`` is ``c*d <= x``;
* a chained comparison whose lower bound the range implies: ``a <= x < b`` is ``x < b``;
* a band: ``0 <= x - y*d and x - y*d < d`` (in any of its spellings, among other
  clauses) is ``y == x // d``; a band one wider or narrower than ``d`` stays.

Boxes are non-negative (index variables), so floor and truncation agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from benchmarks.classes import ClassCase, distinct_per_kind, no_given

FAMILY = "masks"
_Draw = tuple[str, dict[str, tuple[int, int]], str, str]


def _pinned(rng: random.Random) -> _Draw:
    d = rng.choice([2, 3, 4, 5, 8, 16])
    c = rng.randint(0, 5)
    top = (c + 2) * d + rng.randint(0, d)
    if rng.random() < 0.25:
        r = d + rng.randint(0, 3)  # never a remainder of d
        return f"x // {d} == {c} and x % {d} == {r}", {"x": (0, top)}, "0", "remainder out of range"
    r = rng.randrange(d)
    order = rng.random() < 0.5
    a, b = f"x // {d} == {c}", f"x % {d} == {r}"
    text = f"({a}) and ({b})" if order else f"{b} and {a}"
    return text, {"x": (0, top)}, f"x == {c * d + r}", "quotient and remainder pinned"


def _two_bounds(rng: random.Random) -> _Draw:
    a, b = rng.randint(1, 60), rng.randint(1, 60)
    box = {"x": (0, 63)}
    kind = rng.randrange(3)
    if kind == 0:
        return f"x < {a} and x < {b}", box, f"x < {min(a, b)}", "two upper bounds"
    if kind == 1:
        lo = max(a, b)
        return f"x < {min(a, b)} and {lo - 1} < x", box, "0", "contradictory bounds"
    return f"x < {a} or x < {b}", box, f"x < {max(a, b)}", "either upper bound"


def _complement(rng: random.Random) -> _Draw:
    a = rng.randint(1, 60)
    op, neg = rng.choice([("<", ">="), ("<=", ">"), ("==", "!=")])
    return f"x {op} {a} or x {neg} {a}", {"x": (0, 63)}, "1", "a clause or its negation"


def _implied_by_range(rng: random.Random) -> _Draw:
    n = rng.randint(4, 60)
    hi = rng.randint(n, n + 10)
    return f"0 <= x and x < {n}", {"x": (0, hi)}, f"x < {n}", "clause implied by the range"


def _quotient_under_bound(rng: random.Random) -> _Draw:
    d = rng.choice([2, 3, 4, 8])
    c = rng.randint(2, 8)
    e = rng.randint(1, c * d)
    return (
        f"x // {d} < {c} and x < {e}",
        {"x": (0, c * d + 20)},
        f"x < {e}",
        "quotient bound implied by a plain bound",
    )


def _tile_guard(rng: random.Random) -> _Draw:
    t = rng.choice([2, 4, 8, 16])
    n = rng.randint(t + 1, 6 * t)
    box = {"i": (0, n // t + 1), "j": (0, t - 1)}
    return f"i*{t} + j < {n} and j < {t}", box, f"i*{t} + j < {n}", "tile guard"


def _negated_quotient(rng: random.Random) -> _Draw:
    d = rng.choice([2, 3, 4, 8, 16])
    c = rng.randint(1, 6)
    return f"not (x // {d} < {c})", {"x": (0, c * d + 30)}, f"{c * d} <= x", "negated bound"


def _chained(rng: random.Random) -> _Draw:
    b = rng.randint(5, 60)
    lo = rng.randint(0, 3)
    a = rng.randint(0, lo)
    return f"{a} <= x < {b}", {"x": (lo, 63)}, f"x < {b}", "chained, lower bound implied"


def _band(rng: random.Random) -> _Draw:
    d = rng.choice([2, 3, 4, 5, 8, 16])
    box = {"x": (0, 8 * d + rng.randint(0, d)), "y": (0, 9), "z": (0, 5)}
    width = d if rng.random() < 0.75 else d + rng.choice([-1, 1])
    e = f"x - y*{d}"
    lower = rng.choice([f"0 <= {e}", f"{e} >= 0", f"y*{d} <= x"])
    upper = rng.choice([f"{e} < {width}", f"{e} <= {width - 1}", f"x < y*{d} + {width}"])
    if lower.startswith("y*") != upper.startswith("x <"):
        upper = f"x < y*{d} + {width}" if lower.startswith("y*") else f"{e} < {width}"
    clauses = [lower, upper]
    extra = rng.random() < 0.5
    if extra:
        clauses.insert(rng.randrange(3), "z < 3")
    text = " and ".join(clauses)
    if width != d:
        return text, box, text, "a band that is not one quotient's"
    want = f"y == x // {d}"
    return text, box, f"z < 3 and {want}" if extra else want, "band: one quotient"


_KINDS: tuple[Callable[[random.Random], _Draw], ...] = (
    _pinned,
    _two_bounds,
    _complement,
    _implied_by_range,
    _quotient_under_bound,
    _tile_guard,
    _negated_quotient,
    _chained,
    _band,
)
_PER_KIND = 4


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """Four distinct expressions of each kind, each in floor and in trunc."""
    return distinct_per_kind(FAMILY, [no_given(k) for k in _KINDS], _PER_KIND, rng, ideal_ops=0)
