"""Class 7a of issue 15, monotonicity: min and max of quotients and of rounded multiples.

TVM folds ``min(x // 10, y // 10)`` to ``min(x, y) // 10`` (``max`` for a negative
divisor) and ``min(((x + 3) // 4)*4, x)`` to ``x``. The cases vary the divisor's sign
and size, a common scale, a divisor term, the offset of the rounded multiple and the
operand order, under floor and truncation; and the edges: different divisors or scales,
a divisor term that crosses zero, offsets where the rounded multiple is on both sides
of ``x`` (decided here by evaluating every point of the box, so the expected form is
the truth, not the rules' guards).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from benchmarks.classes import ClassCase, cycle_templates
from quorem.arith import floordiv, truncdiv

FAMILY = "monotone"
DRAWS = 60
TVM = "TVM test_arith_rewrite_simplify TestMinIndex/TestMaxIndex"

Draw = tuple[str, dict[str, tuple[int, int]], str, str]


def _offset(name: str, c: int) -> str:
    """``name + c`` as text."""
    if c == 0:
        return name
    return f"{name} + {c}" if c > 0 else f"{name} - {-c}"


def _op(rng: random.Random) -> str:
    return rng.choice(["min", "max"])


def _pair(rng: random.Random, op: str, a: str, b: str) -> str:
    """``op(a, b)`` in either operand order."""
    return f"{op}({a}, {b})" if rng.random() < 0.5 else f"{op}({b}, {a})"


def _divisor(rng: random.Random) -> int:
    return rng.choice([-1, 1]) * rng.randint(2, 16)


def quotients(rng: random.Random, semantics: str) -> Draw:
    """``min(k*(x // d) + c, k*(y // d) + c)``: monotone under both semantics."""
    op, d = _op(rng), _divisor(rng)
    k = rng.choice([1, 1, 1, -1, 2, 3, -4])
    same = (k > 0) == (d > 0)
    inner = op if same else {"min": "max", "max": "min"}[op]
    scale = "" if k == 1 else f"*{k}"
    c = rng.choice([0, 0, rng.randint(-9, 9)])
    shift = "" if c == 0 else f" + {c}"
    expr = _pair(rng, op, f"(x//{d}){scale}{shift}", f"(y//{d}){scale}{shift}")
    expected = f"({inner}(x, y)//{d}){scale}{shift}"
    bounds = {"x": (-20, 20), "y": (-20, 20)}
    source = f"{TVM}: min/max of quotients, divisor {d}, scale {k}, offset {c}"
    return expr, bounds, expected, source


def quotients_by_term(rng: random.Random, semantics: str) -> Draw:
    """``min(x // z, y // z)`` for a divisor term of one sign; unchanged across zero."""
    op = _op(rng)
    sign = rng.choice([1, -1, 0])
    z = {1: (1, 5), -1: (-5, -1), 0: (-3, 3)}[sign]
    expr = _pair(rng, op, "x//z", "y//z")
    if sign == 0:
        expected = expr
    else:
        expected = f"{op if sign > 0 else {'min': 'max', 'max': 'min'}[op]}(x, y)//z"
    bounds = {"x": (-9, 9), "y": (-9, 9), "z": z}
    return expr, bounds, expected, f"generated: min/max of quotients by a term z in {z}"


def quotients_unlike(rng: random.Random, semantics: str) -> Draw:
    """Edge: different divisors or scales do not combine."""
    op = _op(rng)
    d = rng.randint(2, 9)
    e = d + rng.randint(1, 5)
    if rng.random() < 0.5:
        expr = _pair(rng, op, f"x//{d}", f"y//{e}")
    else:
        expr = _pair(rng, op, f"(x//{d})*2", f"(y//{d})*3")
    return expr, {"x": (-20, 20), "y": (-20, 20)}, expr, "generated: edge, unlike quotients"


def _rounded_side(c: int, d: int, lo: int, hi: int, semantics: str) -> int:
    """+1 if ((x + c) // d)*d >= x on [lo, hi], -1 if <= x, 0 if neither (or both)."""
    div: Callable[[int, int], int] = floordiv if semantics == "floor" else truncdiv
    deltas = {div(x + c, d) * d - x for x in range(lo, hi + 1)}
    if min(deltas) >= 0 and max(deltas) > 0:
        return 1
    if max(deltas) <= 0 and min(deltas) < 0:
        return -1
    return 0


def rounded(rng: random.Random, semantics: str) -> Draw:
    """``min(((x + c) // d)*d, x)`` and ``max``: decided where the rounding has one side."""
    op, d = _op(rng), _divisor(rng)
    ad = abs(d)
    c = rng.choice([0, 0, ad - 1, 1 - ad, rng.randint(-ad, ad), rng.randint(-2 * ad, 2 * ad)])
    lo, hi = rng.choice([(-40, 40), (0, 60), (-60, 0)])
    r = f"(({_offset('x', c)})//{d})*{d}"
    expr = _pair(rng, op, r, "x")
    side = _rounded_side(c, d, lo, hi, semantics)
    if side == 0:
        expected = expr
    elif (side > 0) == (op == "min"):
        expected = "x"
    else:
        expected = r
    source = f"{TVM}: rounded multiple, divisor {d}, offset {c}, x in [{lo}, {hi}]"
    return expr, {"x": (lo, hi)}, expected, source


def multiple_by_term(rng: random.Random, semantics: str) -> Draw:
    """``max((x // z)*z, x)`` is x where the multiple rounds down (floor z > 0, trunc
    x >= 0), ``min`` where it rounds up; under truncation across zero, neither."""
    z = rng.choice([(1, 6), (-6, -1)])
    x = rng.choice([(-12, 12), (0, 20), (-20, 0)])
    if semantics == "floor":
        op = "max" if z[0] > 0 else "min"
    elif x[0] >= 0 or x[1] <= 0:
        op = "max" if x[0] >= 0 else "min"
    else:
        op = _op(rng)
    expr = _pair(rng, op, "(x//z)*z", "x")
    crossing = semantics == "trunc" and x[0] < 0 < x[1]
    expected = expr if crossing else "x"
    source = f"generated: rounded multiple of a term z in {z}, x in {x}"
    return expr, {"x": x, "z": z}, expected, source


TEMPLATES = (quotients, quotients_by_term, quotients_unlike, rounded, rounded, multiple_by_term)


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """``DRAWS`` draws, each a floor and a trunc case."""
    return cycle_templates(FAMILY, TEMPLATES, DRAWS, rng)
