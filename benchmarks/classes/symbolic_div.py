"""Issue 15 class 2: division and remainder by symbolic (non-constant) divisors.

Dynamic shapes put a shape variable ``n`` (a positive range) in the divisor:
``(a*n + b) % n``, ``(a*n + b) // n``, products of shapes as divisors
(``(a*n1*n2*b*n1) // (n1*n2)``), coefficients mixed with shapes
(``(6*a*n + 4*b*n) // (2*n)``) and sums of monomials sharing a factor. Each shape is
drawn with random names, coefficients and addend orders, and each case comes in floor
and in trunc. The edges where the rules must stop are cases too, expecting the input
unchanged: a monomial that does not divide, a coefficient that does not divide, and
truncation where the numerator changes sign (the split is false there). Boxes are small
enough to check exhaustively.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from benchmarks.classes import ClassCase, class_case

FAMILY = "symbolic_div"
_SHAPES = ("n", "m", "s0", "s1", "H", "W", "N", "C")
_TERMS = ("a", "b", "c", "i", "j", "k")

Bounds = dict[str, tuple[int, int]]
# A shape: (expr, expected under floor, expected under trunc, bounds, source)
Shape = tuple[str, str, str, Bounds, str]


def _names(rng: random.Random) -> tuple[str, str, str, str, str]:
    n, m = rng.sample(_SHAPES, 2)
    a, b, c = rng.sample(_TERMS, 3)
    return n, m, a, b, c


def _shape_range(rng: random.Random) -> tuple[int, int]:
    return (1, rng.choice((3, 4, 5, 6)))


def _mod_multiple(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = rng.choice((f"({a}*{n} + {b}) % {n}", f"({b} + {n}*{a}) % {n}"))
    bounds = {a: (0, 7), b: (0, 9), n: _shape_range(rng)}
    return expr, f"{b} % {n}", f"{b} % {n}", bounds, "issue 15: (a*d + b) % d"


def _div_multiple(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = rng.choice((f"({a}*{n} + {b}) // {n}", f"({b} + {n}*{a}) // {n}"))
    bounds = {a: (0, 7), b: (0, 9), n: _shape_range(rng)}
    out = f"{a} + {b} // {n}"
    return expr, out, out, bounds, "issue 15: (a*d + b) // d"


def _div_sum_of_monomials(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    k1, k2 = rng.randint(1, 5), rng.randint(1, 5)
    expr = f"({k1}*{a}*{n} + {k2}*{b}*{n}) // {n}"
    bounds = {a: (0, 7), b: (0, 7), n: _shape_range(rng)}
    out = f"{k1}*{a} + {k2}*{b}"
    return expr, out, out, bounds, "issue 15: (a*d1 + b*d1) // d1"


def _div_repeated_factor(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = rng.choice((f"({a}*{b}*{n}*{n}) // {n}", f"({n}*{a}*{n}*{b}) // {n}"))
    bounds = {a: (0, 5), b: (0, 5), n: _shape_range(rng)}
    out = f"{a}*{b}*{n}"
    return expr, out, out, bounds, "issue 15: (a*b*d1*d1) // d1"


def _div_product_divisor(rng: random.Random) -> Shape:
    n, m, a, b, _ = _names(rng)
    expr = rng.choice(
        (f"({a}*{n}*{m}*{b}*{n}) // ({n}*{m})", f"({m}*{b}*{n}*{a}*{n}) // ({m}*{n})")
    )
    bounds = {a: (0, 3), b: (0, 3), n: (1, 3), m: (1, 4)}
    out = f"{a}*{b}*{n}"
    return expr, out, out, bounds, "issue 15: (a*d1*d2*b*d1) // (d1*d2)"


def _div_mixed_coefficients(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    g = rng.randint(1, 3)
    k1, k2 = rng.randint(1, 4), rng.randint(1, 4)
    expr = f"({2 * g * k1}*{a}*{n} + {2 * g * k2}*{b}*{n}) // ({2 * g}*{n})"
    bounds = {a: (-3, 4), b: (0, 7), n: _shape_range(rng)}
    out = f"{k1}*{a} + {k2}*{b}"
    return expr, out, out, bounds, "issue 15: (6*a*d + 4*b*d) // (2*d)"


def _mod_exact(rng: random.Random) -> Shape:
    n, m, a, _, _ = _names(rng)
    if rng.random() < 0.5:
        expr, bounds = f"({a}*{n}) % {n}", {a: (-4, 7), n: _shape_range(rng)}
    else:
        expr, bounds = f"({a}*{n}*{m}*{n}) % ({n}*{m})", {a: (-3, 3), n: (1, 3), m: (1, 4)}
    return expr, "0", "0", bounds, "issue 15: (a*d) % d => 0"


def _mod_product_divisor(rng: random.Random) -> Shape:
    n, m, a, b, _ = _names(rng)
    expr = f"({a}*{n}*{m} + {b}) % ({m}*{n})"
    bounds = {a: (0, 3), b: (0, 9), n: (1, 3), m: (1, 4)}
    return expr, f"{b} % ({n}*{m})", f"{b} % ({n}*{m})", bounds, "dynamic shapes: flat index"


def _div_two_multiples_and_rest(rng: random.Random) -> Shape:
    n, _, a, b, c = _names(rng)
    expr = f"({a}*{n} + {c} + {b}*{n}) // {n}"
    bounds = {a: (0, 3), b: (0, 3), c: (0, 9), n: _shape_range(rng)}
    out = f"{a} + {b} + {c} // {n}"
    return expr, out, out, bounds, "dynamic shapes: row index"


def _div_scaled_divisor(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    k = rng.randint(2, 4)
    expr = f"({k * rng.randint(1, 3)}*{a}*{n} + {b}) % ({k}*{n})"
    bounds = {a: (0, 5), b: (0, 9), n: _shape_range(rng)}
    return expr, f"{b} % ({k}*{n})", f"{b} % ({k}*{n})", bounds, "tiling by k*n"


def _mod_with_constant(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    c = rng.randint(1, 6)
    expr = f"({a}*{n} + {b} + {c}) % {n}"
    bounds = {a: (0, 5), b: (0, 7), n: _shape_range(rng)}
    out = f"({b} + {c}) % {n}"
    return expr, out, out, bounds, "dynamic shapes: padded offset"


def _div_square_divisor(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = f"({a}*{n}*{n} + {b}) // ({n}*{n})"
    bounds = {a: (0, 5), b: (0, 9), n: _shape_range(rng)}
    out = f"{a} + {b} // ({n}*{n})"
    return expr, out, out, bounds, "dynamic shapes: repeated factor"


def _div_negative_quotient(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    k = rng.randint(1, 3)
    expr = f"({b} - {k}*{a}*{n}) // {n}"
    bounds = {a: (0, 4), b: (0, 7), n: _shape_range(rng)}
    # Under truncation the numerator changes sign: the split is false, nothing changes.
    return expr, f"{b} // {n} - {k}*{a}", expr, bounds, "edge: trunc across zero"


def _div_signed_multiple(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = f"({a}*{n} + {b}) // {n}"
    bounds = {a: (-3, 3), b: (-3, 3), n: _shape_range(rng)}
    return expr, f"{a} + {b} // {n}", expr, bounds, "edge: trunc with signed addends"


def _div_divisor_with_zero(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    expr = f"({a}*{n} + {b}) // {n}"
    bounds = {a: (0, 4), b: (0, 5), n: (-2, 3)}
    # Floor holds for every non-zero divisor (the input has no value at 0); truncation
    # needs the numerator's sign, which a negative divisor flips.
    return expr, f"{a} + {b} // {n}", expr, bounds, "edge: divisor range with 0 and negatives"


def _not_dividing_monomial(rng: random.Random) -> Shape:
    n, m, a, b, _ = _names(rng)
    expr = f"({a}*{n} + {b}) // {m}"
    bounds = {a: (0, 4), b: (0, 5), n: (1, 4), m: (2, 5)}
    return expr, expr, expr, bounds, "edge: the monomial does not divide"


def _not_dividing_coefficient(rng: random.Random) -> Shape:
    n, _, a, b, _ = _names(rng)
    k = rng.choice((2, 3))
    expr = f"({a}*{n} + {b}) % ({k}*{n})"
    bounds = {a: (0, 4), b: (0, 5), n: (1, 4)}
    return expr, expr, expr, bounds, "edge: the coefficient does not divide"


_MAKERS: tuple[Callable[[random.Random], Shape], ...] = (
    _mod_multiple,
    _div_multiple,
    _div_sum_of_monomials,
    _div_repeated_factor,
    _div_product_divisor,
    _div_mixed_coefficients,
    _mod_exact,
    _mod_product_divisor,
    _div_two_multiples_and_rest,
    _div_scaled_divisor,
    _mod_with_constant,
    _div_square_divisor,
    _div_negative_quotient,
    _div_signed_multiple,
    _div_divisor_with_zero,
    _not_dividing_monomial,
    _not_dividing_coefficient,
)


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """Three draws of every shape, each in floor and in trunc (102 cases)."""
    index = 0
    for _ in range(3):
        for make in _MAKERS:
            expr, floor_out, trunc_out, bounds, source = make(rng)
            for semantics, expected in (("floor", floor_out), ("trunc", trunc_out)):
                yield class_case(
                    FAMILY,
                    index,
                    semantics,
                    expr=expr,
                    bounds=bounds,
                    expected=expected,
                    source=source,
                )
            index += 1
