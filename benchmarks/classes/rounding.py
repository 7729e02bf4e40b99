"""Class 7b of issue 15, rounding: round-down forms and chains of div and mod.

TVM folds ``(x - x % 21) // 21`` to ``x // 21``, ``(x - x % y) % y`` to ``0`` and the
chains ``x % 16 // 2 * 2 // 6`` and ``x % 20 // 2 * 2 % 4`` to two and three operations.
The cases vary the divisors (constants of both signs and divisor terms), the operand
forms (``x + (-x) % d``, a divisor ``-y`` or ``2*y``), the chain's moduli and steps,
under floor and truncation; and the edges: a remainder by another divisor, chain steps
that do not divide, a negative outer divisor under floor.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from benchmarks.classes import ClassCase, cycle_templates

FAMILY = "rounding"
DRAWS = 60
TVM = "TVM test_arith_rewrite_simplify"

Draw = tuple[str, dict[str, tuple[int, int]], str, str]


def _constant_divisor(rng: random.Random) -> int:
    return rng.choice([-1, 1, 1]) * rng.randint(2, 24)


def round_down_div(rng: random.Random, semantics: str) -> Draw:
    """``(x - x % d) // d`` is ``x // d`` for any divisor."""
    if rng.random() < 0.6:
        d = str(_constant_divisor(rng))
        bounds = {"x": (-60, 60)}
    else:
        d = "y"
        bounds = {"x": (-25, 25), "y": rng.choice([(1, 9), (-9, -1), (-4, 4)])}
    expr = f"(x - x % {d}) // {d}"
    return expr, bounds, f"x // {d}", f"{TVM} TestFloordivIndex: round-down quotient by {d}"


def round_down_mod(rng: random.Random, semantics: str) -> Draw:
    """``(x - x % d) % d`` and its variants are 0."""
    form = rng.randrange(4)
    if rng.random() < 0.5:
        d = rng.randint(2, 24)
        bounds = {"x": (-60, 60)}
        e, minus_e, two_e = str(d), str(-d), str(2 * d)
    else:
        bounds = {"x": (-25, 25), "y": rng.choice([(1, 9), (-9, -1), (-4, 4)])}
        e, minus_e, two_e = "y", "-y", "2*y"
    num = [
        f"x - x % {e}",
        f"x - x % ({minus_e})",
        f"x - x % ({two_e})",
        f"x + (-x) % {e}",
    ][form]
    expr = f"({num}) % {e}"
    return expr, bounds, "0", f"{TVM} TestFloorModPadded: ({num}) % {e}"


def round_down_unlike(rng: random.Random, semantics: str) -> Draw:
    """Edge: the remainder and the division by different divisors stay."""
    d = rng.randint(3, 12)
    e = d + rng.choice([1, 2, 5])
    op = rng.choice(["//", "%"])
    expr = f"(x - x % {d}) {op} {e}"
    return expr, {"x": (-60, 60)}, expr, "generated: edge, unlike divisors"


def chain_div(rng: random.Random, semantics: str) -> Draw:
    """``x % m // a * a // b`` with ``a`` dividing ``b``: ``x % m // b``."""
    a = rng.choice([2, 2, 3, 4])
    b = a * rng.randint(2, 4)
    m = b * rng.randint(1, 4) if rng.random() < 0.5 else a * rng.randint(b // a + 1, 3 * b // a)
    expr = f"x % {m} // {a} * {a} // {b}"
    return expr, {"x": (-80, 80)}, f"x % {m} // {b}", f"{TVM} TestSplitIndex: {expr}"


def chain_mod(rng: random.Random, semantics: str) -> Draw:
    """``x % m // a * a % b`` with ``a | b | m``: ``x % b // a * a``."""
    a = rng.choice([2, 2, 3])
    b = a * rng.randint(2, 3)
    m = b * rng.randint(2, 5)
    expr = f"x % {m} // {a} * {a} % {b}"
    return expr, {"x": (-80, 80)}, f"x % {b} // {a} * {a}", f"{TVM} TestMixedComplex: {expr}"


def digit_div(rng: random.Random, semantics: str) -> Draw:
    """``x // a % m // c`` (positive constants): ``x % (a*m) // (a*c)``."""
    a, m, c = rng.randint(2, 5), rng.randint(2, 8), rng.randint(2, 6)
    expr = f"x // {a} % {m} // {c}"
    if rng.random() < 0.2:
        expr = f"x // {a} % {m} // {-c}"  # edge: a negative outer divisor
        return expr, {"x": (-80, 80)}, expr, f"generated: edge, {expr}"
    return expr, {"x": (-80, 80)}, f"x % {a * m} // {a * c}", f"generated: digit, {expr}"


def nested_mod(rng: random.Random, semantics: str) -> Draw:
    """``x % m % n`` is ``x % n`` when n divides m (any sign of x, both semantics)."""
    n = rng.randint(2, 9)
    if rng.random() < 0.25:
        m = n * rng.randint(1, 5) + rng.randint(1, n - 1)  # edge: n does not divide m
        expr = f"x % {m} % {n}"
        return expr, {"x": (-80, 80)}, expr, "generated: edge, x % m % n, n not dividing m"
    m = n * rng.randint(2, 6)
    expr = f"x % {m} % {n}"
    return expr, {"x": (-80, 80)}, f"x % {n}", f"generated: {expr}"


TEMPLATES = (
    round_down_div,
    round_down_mod,
    round_down_unlike,
    chain_div,
    chain_mod,
    digit_div,
    nested_mod,
    round_down_mod,
)


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """``DRAWS`` draws, each a floor and a trunc case."""
    return cycle_templates(FAMILY, TEMPLATES, DRAWS, rng)
