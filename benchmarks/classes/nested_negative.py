"""Class 4 of issue 15: nested divisions with a negative inner divisor.

``((a // b) + y) // c`` with ``b < 0 < c`` is one floor division, ``(-a - b*y) // (-b*c)``
(under floor for every ``a``; under truncation where ``a <= 0`` and ``a // b + y >= 0``).
The cases draw inner divisors of either sign, offsets that are constants, variables or
sums, numerators that are sums, and the edges where the merge must not apply: a negative
outer divisor, and under truncation a numerator of both signs (expected: the input).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from benchmarks.classes import CaseList, ClassCase

FAMILY = "nested_negative"


def _offset(c: int) -> str:
    if c == 0:
        return ""
    return f" + {c}" if c > 0 else f" - {-c}"


def _merged(linear: str, const: int, divisor: int) -> tuple[str, str]:
    """The merged quotient ``(linear + const) // divisor`` as (floor, trunc) text: floor
    takes a constant of at least the divisor out of the division (div-split-offset),
    truncation keeps it inside."""
    whole = f"({linear}{_offset(const)})//{divisor}"
    if const < divisor:
        return whole, whole
    return f"({linear}{_offset(const % divisor)})//{divisor}{_offset(const // divisor)}", whole


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """The class's cases for the random stream ``rng`` (floor and trunc)."""
    out = CaseList(FAMILY)
    case = out.pair

    nonpos = {"a": (-2000, 0)}
    both = {"a": (-1000, 1000)}
    yield from case(
        "((a // -2) + 1) // 3", both, "issue 15", floor="(2 - a)//6", trunc="((a // -2) + 1) // 3"
    )
    yield from case(
        "((a // -2) + 1) // 3", nonpos, "issue 15", floor="(2 - a)//6", trunc="(2 - a)//6"
    )
    # a constant offset
    for _ in range(8):
        b, c, k = -rng.randint(2, 7), rng.randint(2, 7), rng.randint(-9, 9)
        expr = f"((a // {b}){_offset(k)}) // {c}"
        want, merged = _merged("-a", -b * k, -b * c) if k else (f"a//{b * c}", f"a//{b * c}")
        # under trunc the merge needs a // b + k >= 0 on the whole box: a <= 0 and k >= 0
        trunc_want = merged if k >= 0 else expr
        yield from case(expr, nonpos, "constant offset", floor=want, trunc=trunc_want)
    # a variable offset (and a scaled one)
    for _ in range(6):
        b, c, m = -rng.randint(2, 6), rng.randint(2, 6), rng.randint(1, 3)
        y = "y" if m == 1 else f"{m}*y"
        expr = f"((a // {b}) + {y}) // {c}"
        want = f"({-b * m}*y - a)//{-b * c}"
        box = {"a": (-300, 0), "y": (0, 12)}
        yield from case(expr, box, "variable offset", floor=want, trunc=want)
    # a numerator that is a sum
    for _ in range(4):
        b, c, k = -rng.randint(2, 5), rng.randint(2, 5), rng.randint(0, 6)
        expr = f"((2*a - y) // {b}{_offset(k)}) // {c}"
        want, merged = _merged("y - 2*a", -b * k, -b * c)
        box = {"a": (-100, 0), "y": (0, 30)}
        yield from case(expr, box, "sum numerator", floor=want, trunc=merged)
    # a positive inner divisor (the shipped merge) with an offset of either sign
    for _ in range(3):
        b, c, k = rng.randint(2, 6), rng.randint(2, 6), rng.randint(-9, 9)
        expr = f"((a // {b}){_offset(k)}) // {c}"
        want, merged = _merged("a", b * k, b * c)
        yield from case(
            expr,
            {"a": (0, 3000)},
            "positive inner divisor",
            floor=want,
            trunc=expr if k < 0 else merged,
        )
    # bare nesting: one division already (nested-div)
    for _ in range(2):
        b, c = -rng.randint(2, 6), rng.randint(2, 6)
        expr = f"(a // {b}) // {c}"
        yield from case(expr, both, "bare nesting", floor=f"a//{b * c}", trunc=f"a//{b * c}")
    # edges: a negative outer divisor is false under floor (and not merged under trunc
    # either: the merged quotient's sign differs); trunc over a numerator of both signs
    for _ in range(3):
        b, c, k = -rng.randint(2, 5), -rng.randint(2, 5), rng.randint(1, 5)
        expr = f"((a // {b}) + {k}) // {c}"
        yield from case(expr, both, "edge: negative outer divisor", floor=expr, trunc=expr)
    for _ in range(2):
        b, c, k = -rng.randint(2, 5), rng.randint(2, 5), rng.randint(1, 5)
        expr = f"((a // {b}) + {k}) // {c}"
        want, _ = _merged("-a", -b * k, -b * c)
        yield from case(
            expr, {"a": (-40, 60)}, "edge: trunc numerator of both signs", floor=want, trunc=expr
        )
    # under trunc, quotients that are all non-positive merge too (ceilings nest)
    for _ in range(2):
        b, c, k = -rng.randint(2, 5), rng.randint(2, 5), -rng.randint(1, 5)
        expr = f"((a // {b}){_offset(k)}) // {c}"
        want, merged = _merged("-a", -b * k, -b * c)
        yield from case(expr, {"a": (0, 2000)}, "non-positive quotients", floor=want, trunc=merged)
