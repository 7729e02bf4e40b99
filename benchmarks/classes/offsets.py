"""Class 6 of issue 15: offsets of either sign.

Two quotients of one numerator by one divisor, offsets a multiple of the divisor apart,
differ by a constant: ``-(s // 315) + (s - 20160)//315 + 65`` is ``1``. The cases draw
pairs with offsets of both signs, weights of both signs (cancelling or not), numerators
that are sums, negative divisors, a third unrelated addend; and the edges where the pair
must stay (offsets not a multiple of the divisor apart, different divisors or numerators,
a lone negative offset, and under truncation a numerator of both signs), whose expected
form is the input itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Protocol

from benchmarks.classes import CaseList, ClassCase

FAMILY = "offsets"
DIVISORS = (2, 3, 4, 7, 8, 16, 315)


def _shift(base: str, offset: int) -> str:
    if offset == 0:
        return base
    return f"{base} + {offset}" if offset > 0 else f"{base} - {-offset}"


def _weighted(term: str, weight: int) -> str:
    if weight == 1:
        return term
    if weight == -1:
        return f"-({term})"
    return f"({term})*{weight}"


class _Add(Protocol):
    def __call__(
        self,
        expr: str,
        bounds: Mapping[str, tuple[int, int]],
        source: str,
        *,
        floor: str,
        trunc: str,
    ) -> object: ...


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """The class's cases for the random stream ``rng`` (floor and trunc)."""
    out = CaseList(FAMILY)
    case = out.pair

    # the example; under trunc over s >= 20160, where both numerators are >= 0
    expr = "-(s // 315) + (s - 20160)//315 + 65"
    case(expr, {"s": (0, 4000)}, "issue 15", floor="1", trunc=expr)
    case(expr, {"s": (20160, 24000)}, "issue 15", floor="1", trunc="1")
    # cancelling pairs: offsets of either sign, a multiple of d apart
    for _ in range(8):
        d = rng.choice(DIVISORS)
        c2 = rng.randint(-3 * d, 3 * d) if rng.random() < 0.5 else 0
        q = rng.choice((-3, -2, -1, 1, 2, 5))
        c1 = c2 + q * d
        k = rng.randint(-5, 5)
        lo = max(0, -min(c1, c2))  # trunc: both numerators non-negative
        expr = f"({_shift('s', c1)})//{d} - ({_shift('s', c2)})//{d}"
        if k:
            expr += f" + {k}" if k > 0 else f" - {-k}"
        want = str(q + k)
        case(expr, {"s": (lo, lo + 3000)}, "cancelling pair", floor=want, trunc=want)
    # weights of either sign: cancelling, and leaving one quotient
    for _ in range(6):
        d = rng.choice(DIVISORS[:5])
        c2 = rng.randint(0, d - 1)
        q = rng.choice((-2, -1, 1, 3))
        c1 = c2 + q * d
        w1, w2 = rng.choice((2, 3, -2)), rng.choice((2, -3, -2, 1))
        lo = max(0, -c1)
        expr = " + ".join(
            [_weighted(f"({_shift('s', c1)})//{d}", w1), _weighted(f"({_shift('s', c2)})//{d}", w2)]
        )
        w = w1 + w2
        kept = _weighted(f"({_shift('s', c2)})//{d}", w)
        want = _shift(kept, w1 * q) if w else str(w1 * q)
        case(expr, {"s": (lo, lo + 2000)}, "weighted pair", floor=want, trunc=want)
    # a numerator that is a sum, and a third addend that stays
    for _ in range(4):
        d = rng.choice((4, 8, 16))
        q = rng.choice((-2, -1, 1, 2))
        base = "2*s + t"
        expr = f"({_shift(base, q * d)})//{d} - ({base})//{d} + t//3"
        lo = 2 * d
        case(
            expr,
            {"s": (lo, lo + 40), "t": (0, 40)},
            "sum numerator",
            floor=f"t//3 + {q}",
            trunc=f"t//3 + {q}",
        )
    _edges(case, rng)
    _beside_constant(case, rng)
    yield from out


def _edges(case: _Add, rng: random.Random) -> None:
    """Negative divisors, lone offsets, and the edges where the pair must stay."""
    # a negative divisor (floor: any numerators; trunc: non-negative ones)
    for _ in range(3):
        d = -rng.choice((2, 3, 5))
        q = rng.choice((1, 2, 4))
        expr = f"(s + {q * -d})//{d} - s//{d}"
        case(expr, {"s": (0, 3000)}, "negative divisor", floor=str(-q), trunc=str(-q))
    # the lone offsets: the positive one leaves the division under floor (the
    # shipped div-split-offset); a lone negative one stays
    case("(s + 2)//2", {"s": (-500, 500)}, "lone offset", floor="s//2 + 1", trunc="(s + 2)//2")
    case(
        "(s - 2)//2",
        {"s": (-500, 500)},
        "edge: lone negative offset",
        floor="(s - 2)//2",
        trunc="(s - 2)//2",
    )
    # edges: the pair must stay
    for _ in range(2):
        d = rng.choice((3, 4, 7))
        c = rng.randint(1, d - 1) - 2 * d  # not a multiple of d
        expr = f"({_shift('s', c)})//{d} - s//{d}"
        case(
            expr, {"s": (3 * d, 3000)}, "edge: offsets not a multiple apart", floor=expr, trunc=expr
        )
    expr = "(s - 630)//315 - s//630"
    case(expr, {"s": (700, 4000)}, "edge: different divisors", floor=expr, trunc=expr)
    expr = "(s - 630)//315 - t//315"
    case(
        expr, {"s": (700, 760), "t": (0, 60)}, "edge: different numerators", floor=expr, trunc=expr
    )
    for _ in range(2):
        d = rng.choice((2, 3, 8))
        q = rng.choice((1, 2))
        expr = f"s//{d} - (s - {q * d})//{d}"
        case(
            expr,
            {"s": (-300, 300)},
            "edge: trunc numerator of both signs",
            floor=str(q),
            trunc=expr,
        )


def _beside_constant(case: _Add, rng: random.Random) -> None:
    """A quotient whose offset, a multiple of the divisor, meets a constant beside it."""
    for _ in range(5):
        d = rng.choice((2, 3, 4, 8, -3))
        q = rng.choice((-3, -2, -1, 2))
        k = rng.choice((1, 2, -1, 16))
        e = rng.choice((q * k * -1, rng.randint(1, 9)))  # cancelling, or not
        if e == 0:
            e = 1
        quotient = f"({_shift('s', q * d)})//{d}"
        expr = _shift(_weighted(quotient, k), e)
        rest = e + k * q
        kept = _weighted(f"s//{d}", k)
        want = _shift(kept, rest)
        lo = max(0, -q * d)  # trunc: s and s + c non-negative
        case(expr, {"s": (lo, lo + 3000)}, "offset beside a constant", floor=want, trunc=want)
    expr = "(s - 2)//2 + 1"
    case(expr, {"s": (-500, 500)}, "offset beside a constant", floor="s//2", trunc=expr)
