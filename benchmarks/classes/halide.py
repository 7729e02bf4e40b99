"""Issue 17, Halide-style index math under Euclidean division.

Halide divides Euclidean: the remainder is always in ``[0, |d|)``, so ``x / d`` rounds
down for ``d > 0`` and up for ``d < 0``. Its simplifier (``Simplify_Div.cpp``,
``Simplify_Mod.cpp``, ``Simplify_LT.cpp``) is the most cited catalogue of division
rules. The cases here are the shapes those rules target, written the way Halide's
lowering produces them: split and fused loop variables (``(xo*8 + xi) / 8``), vectorised
offsets (``(x*8 + 3) / 4``), nested divisions and remainders, divisors and constants of
both signs, and comparisons of a quotient with a constant. Each shape is also drawn at
its edges, where the rule must stop applying (an inner index that can leave the tile, a
divisor that does not divide, a nested division through a negative inner divisor).

Euclidean division differs from floor division only for a negative divisor; the cases
with one are where a rule port from floor to Euclid can go wrong: ``x % -8`` is ``x % 8``
(the remainder depends on ``|d|`` only), and ``(xo*8 + xi) / -8`` is ``-xo``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from benchmarks.classes import ClassCase, cycle_templates

FAMILY = "halide"
SEMANTICS = ("euclid",)
DRAWS = 160
HALIDE = "Halide Simplify_Div/Mod (Euclidean)"

Draw = tuple[str, dict[str, tuple[int, int]], str, str]


def _tile(rng: random.Random) -> int:
    return rng.choice([2, 3, 4, 8, 8, 16, 32, 5, 6])


def _signed(rng: random.Random, d: int) -> int:
    return d if rng.random() < 0.6 else -d


def split_div(rng: random.Random, semantics: str) -> Draw:
    """``(xo*T + xi) / ±T`` with ``xi`` in ``[0, T)``: ``±xo``; edge: ``xi`` leaves the tile."""
    t = _tile(rng)
    d = _signed(rng, t)
    xo = rng.choice([(0, 63), (-16, 15), (0, 1023)])
    if rng.random() < 0.2:
        bounds = {"xo": xo, "xi": (0, t)}  # edge: xi == T reaches the next tile
        expr = f"(xo*{t} + xi) // {d}"
        return expr, bounds, expr, f"generated: edge, {expr} with xi in [0, {t}]"
    bounds = {"xo": xo, "xi": (0, t - 1)}
    expected = "xo" if d > 0 else "-xo"
    return f"(xo*{t} + xi) // {d}", bounds, expected, f"{HALIDE}: split loop, divisor {d}"


def split_mod(rng: random.Random, semantics: str) -> Draw:
    """``(xo*T + xi) % ±T`` is ``xi``: the Euclidean remainder ignores the divisor's sign."""
    t = _tile(rng)
    d = _signed(rng, t)
    xo = rng.choice([(0, 63), (-16, 15), (-1000, 1000)])
    if rng.random() < 0.2:
        lo = -rng.randint(1, t)  # edge: xi may be negative, so it is not the remainder
        bounds = {"xo": xo, "xi": (lo, t - 1)}
        expr = f"(xo*{t} + xi) % {d}"
        return expr, bounds, expr, f"generated: edge, {expr} with xi in [{lo}, {t - 1}]"
    bounds = {"xo": xo, "xi": (0, t - 1)}
    return f"(xo*{t} + xi) % {d}", bounds, "xi", f"{HALIDE}: split loop remainder, {d}"


def fuse(rng: random.Random, semantics: str) -> Draw:
    """``x / d * d + x % d`` is ``x`` for any non-zero ``d`` (also a symbolic one)."""
    if rng.random() < 0.3:
        bounds = {"x": (-500, 500), "y": rng.choice([(1, 16), (-16, -1)])}
        d = "y"
    else:
        bounds = {"x": (-500, 500)}
        d = str(_signed(rng, _tile(rng)))
    scale = rng.choice([1, 1, 2, 3])
    num = "x" if scale == 1 else f"x*{scale}"
    want = "x" if scale == 1 else f"x*{scale}"
    expr = f"{num} // {d} * {d} + {num} % {d}"
    if rng.random() < 0.5:
        expr = f"{num} % {d} + {d} * ({num} // {d})"
    return expr, bounds, want, f"{HALIDE}: fused loop, divisor {d}"


def nested_div(rng: random.Random, semantics: str) -> Draw:
    """``x / a / b`` is ``x / (a*b)`` for ``a > 0`` and ``b`` of either sign (Euclid).

    Under floor division ``b`` must be positive too; under Euclid the inner quotient
    rounds down and the outer divides by ``|b|`` and negates. Edge: ``a < 0`` (the inner
    quotient rounds up), which stays.
    """
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    bounds = {"x": rng.choice([(-300, 300), (0, 4000)])}
    if rng.random() < 0.2:
        expr = f"x // {-a} // {b}"
        return expr, bounds, expr, f"generated: edge, {expr} (negative inner divisor)"
    sb = _signed(rng, b)
    return f"x // {a} // {sb}", bounds, f"x // {a * sb}", f"{HALIDE}: nested division"


def nested_mod(rng: random.Random, semantics: str) -> Draw:
    """``x % a % b`` is ``x % b`` when ``|b|`` divides ``|a|``, whatever the signs."""
    b = rng.randint(2, 9)
    bounds = {"x": (-400, 400)}
    if rng.random() < 0.2:
        a = b * rng.randint(1, 5) + rng.randint(1, b - 1)  # edge: b does not divide a
        expr = f"x % {_signed(rng, a)} % {b}"
        return expr, bounds, expr, f"generated: edge, {expr}"
    a = _signed(rng, b * rng.randint(2, 6))
    sb = _signed(rng, b)
    return f"x % {a} % {sb}", bounds, f"x % {b}", f"{HALIDE}: nested remainder"


def mod_of_div(rng: random.Random, semantics: str) -> Draw:
    """``x % (a*b) / a`` is ``x / a % b`` for positive ``a``, ``b``: the digit of ``x``."""
    a, b = rng.randint(2, 8), rng.randint(2, 8)
    bounds = {"x": (-300, 300)}
    expr = f"x // {a} % {b}"
    if rng.random() < 0.5:
        expr = f"x % {a * b} // {a}"
    return expr, bounds, f"x // {a} % {b}", f"{HALIDE}: digit of a mixed-radix index"


def vector_offset(rng: random.Random, semantics: str) -> Draw:
    """``(x*c0 + c) / c1`` with ``c1 | c0``: ``x*(c0/c1) + c / c1``, constants of both signs."""
    c1 = rng.choice([2, 4, 8])
    c0 = c1 * rng.randint(1, 4)
    c = rng.randint(-2 * c1, 2 * c1)
    d = _signed(rng, c1)
    bounds = {"x": (-200, 200)}
    k = c0 // d
    rem = c % c1
    base = (c - rem) // d  # (x*c0 + c) == d*(x*k + base) + rem, rem in [0, |d|)
    rest = f" + {base}" if base > 0 else (f" - {-base}" if base < 0 else "")
    want = f"x*{k}{rest}"
    if rng.random() < 0.5:
        return f"(x*{c0} + {c}) // {d}", bounds, want, f"{HALIDE}: vectorised offset"
    return f"(x*{c0} + {c}) % {d}", bounds, str(rem), f"{HALIDE}: vectorised offset remainder"


def multiple_plus(rng: random.Random, semantics: str) -> Draw:
    """``(x*c0 + y) / c1`` with ``c1 | c0``: ``x*(c0/c1) + y / c1``; and the remainder."""
    c1 = rng.choice([2, 3, 4, 8, 16])
    c0 = _signed(rng, c1 * rng.randint(1, 3))
    d = _signed(rng, c1)
    bounds = {"x": (-100, 100), "y": (-100, 100)}
    if rng.random() < 0.5:
        return f"(x*{c0} + y) % {d}", bounds, f"y % {c1}", f"{HALIDE}: remainder of a multiple"
    return (
        f"(x*{c0} + y) // {d}",
        bounds,
        f"x*{c0 // d} + y // {d}",
        f"{HALIDE}: quotient of a multiple plus a term",
    )


def scaled_quotient(rng: random.Random, semantics: str) -> Draw:
    """``(x*c0) / c1`` with ``c1 | c0`` is ``x*(c0/c1)``; edge: ``c1`` does not divide."""
    c1 = rng.choice([2, 3, 4, 6, 8])
    bounds = {"x": (-300, 300)}
    if rng.random() < 0.2:
        c0 = c1 * rng.randint(1, 4) + 1
        expr = f"x*{c0} // {_signed(rng, c1)}"
        return expr, bounds, expr, f"generated: edge, {expr}"
    c0 = _signed(rng, c1 * rng.randint(1, 5))
    d = _signed(rng, c1)
    if rng.random() < 0.5:
        return f"x*{c0} % {d}", bounds, "0", f"{HALIDE}: remainder of an exact multiple"
    return f"x*{c0} // {d}", bounds, f"x*{c0 // d}", f"{HALIDE}: exact quotient"


def compare_quotient(rng: random.Random, semantics: str) -> Draw:
    """``x / c0 < c1`` is ``x < c0*c1`` for ``c0 > 0``; ``<=``, ``==`` bands too."""
    c0 = rng.randint(2, 16)
    c1 = rng.randint(-6, 12)
    bounds = {"x": (-500, 500)}
    form = rng.randrange(3)
    if form == 0:
        return f"x // {c0} < {c1}", bounds, f"x < {c0 * c1}", f"{HALIDE} Simplify_LT"
    if form == 1:
        return f"{c1} <= x // {c0}", bounds, f"{c0 * c1} <= x", f"{HALIDE} Simplify_LT"
    return f"x // {c0} <= {c1}", bounds, f"x < {c0 * (c1 + 1)}", f"{HALIDE} Simplify_LT"


def range_fold(rng: random.Random, semantics: str) -> Draw:
    """A quotient or remainder that the bounds decide: a constant or the numerator."""
    d = _signed(rng, rng.randint(2, 20))
    m = abs(d)
    k = rng.randint(-5, 5)
    lo = k * m
    bounds = {"x": (lo, lo + m - 1)}
    # Over one period [k*m, k*m + m): the Euclidean quotient is k (m > 0) or -k (m < 0).
    if rng.random() < 0.5:
        q = k if d > 0 else -k
        return f"x // {d}", bounds, str(q), f"{HALIDE}: quotient fixed by bounds"
    want = "x" if lo == 0 else (f"x - {lo}" if lo > 0 else f"x + {-lo}")
    return f"x % {d}", bounds, want, f"{HALIDE}: remainder by bounds"


TEMPLATES = (
    split_div,
    split_mod,
    fuse,
    nested_div,
    nested_mod,
    mod_of_div,
    vector_offset,
    multiple_plus,
    scaled_quotient,
    compare_quotient,
    range_fold,
)


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """``DRAWS`` draws cycling through the templates, each under Euclidean division."""
    return cycle_templates(FAMILY, TEMPLATES, DRAWS, rng, semantics=SEMANTICS)
