"""Class 3 of issue 15: mixed-radix recombination.

Digits of a mixed radix, ``(q % m1)*s + ((q // m1) % m2)*(s*m1)``, scaled and shifted, are
one digit ``(q % (m1*m2))*s``. The cases draw: two digits in either order with scales of
either sign and a constant beside them; chains of three and four digits, shuffled; a
lower digit that is itself a quotient (``(x // d) % m1``); shifted bases, including one
half already rewritten to another offset (``(x - 50) % 3`` as ``(x + 1) % 3``); a top
digit that is a bare quotient; negative moduli where the identity holds; and the edges
where it must not apply (wrong scale, wrong modulus, an offset that is not a multiple of
the modulus, a negative upper modulus under floor, a truncating base of both signs),
whose expected form is the input itself.

Lower digits that are shifted quotients, ``((x + c1)//d) % m1`` beside
``((x + c2)//(d*m1)) % m2`` with ``c1 != c2``, are floor cases only: floor normalises the
lower offset (div-split-offset, mod-reduce-offset) and the digits then meet; under
truncation no shipped rule moves the offset, and the two-offset form of
mixed-radix-recombine-composed-trunc did not prove within the verifier's budget.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from benchmarks.classes import ClassCase, class_case

FAMILY = "mixed_radix"
MODULI = (2, 3, 4, 5, 6, 8)
SCALES = (1, 2, 3, -1, -2, 5)


def _sum(parts: list[str]) -> str:
    """The addends joined with ``+`` (each already parenthesised where needed)."""
    return " + ".join(parts)


def _scaled(term: str, scale: int) -> str:
    return term if scale == 1 else f"({term})*{scale}"


def _shift(base: str, offset: int) -> str:
    if offset == 0:
        return base
    return f"{base} + {offset}" if offset > 0 else f"{base} - {-offset}"


class _Cases:
    """Numbers the cases and makes one per semantics."""

    def __init__(self) -> None:
        self.index = 0
        self.out: list[ClassCase] = []

    def add_one(
        self, semantics: str, expr: str, bounds: dict[str, tuple[int, int]], source: str, want: str
    ) -> None:
        self.out.append(
            class_case(
                FAMILY,
                self.index,
                semantics,
                expr=expr,
                bounds=bounds,
                expected=want,
                source=source,
            )
        )
        self.index += 1

    def add(
        self,
        expr: str,
        bounds: dict[str, tuple[int, int]],
        source: str,
        *,
        floor: str,
        trunc: str,
    ) -> None:
        for semantics, expected in (("floor", floor), ("trunc", trunc)):
            self.out.append(
                class_case(
                    FAMILY,
                    self.index,
                    semantics,
                    expr=expr,
                    bounds=bounds,
                    expected=expected,
                    source=source,
                )
            )
            self.index += 1


def _digit_chain(rng: random.Random, count: int, lowest: int) -> tuple[list[str], int, int]:
    """``count`` digits of ``x // lowest`` with random moduli: (addends, product, scale)."""
    scale = rng.choice(SCALES)
    moduli = [rng.choice(MODULI) for _ in range(count)]
    parts = []
    place = 1
    for m in moduli:
        divisor = lowest * place
        q = "x" if divisor == 1 else f"(x//{divisor})"
        parts.append(_scaled(f"{q} % {m}", scale * place))
        place *= m
    return parts, place, scale


WIDE = {"x": (-600, 600)}
NONNEG = {"x": (0, 2000)}


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """The class's cases for the random stream ``rng`` (both semantics each)."""
    c = _Cases()
    _digits(c, rng)
    _shifted(c, rng)
    _edges(c, rng)
    _symbolic(c, rng)
    yield from c.out


def _digits(c: _Cases, rng: random.Random) -> None:
    """Digits of one base: pairs, chains, quotient digits, the issue's examples."""
    wide = WIDE
    # two digits, any order, scales of both signs, a constant beside them
    for _ in range(8):
        parts, radix, scale = _digit_chain(rng, 2, 1)
        rng.shuffle(parts)
        k = rng.randint(-9, 9)
        expr = _sum([*parts, str(k)]) if k else _sum(parts)
        want = _sum([_scaled(f"x % {radix}", scale), str(k)])
        c.add(expr, wide, "two digits of x", floor=want, trunc=want)
    # chains of three and four digits, shuffled
    for count in (3, 3, 4, 4):
        parts, radix, scale = _digit_chain(rng, count, 1)
        rng.shuffle(parts)
        want = _scaled(f"x % {radix}", scale)
        c.add(_sum(parts), wide, f"{count} digits of x", floor=want, trunc=want)
    # the lowest digit a quotient: digits of x // d
    for count in (2, 2, 3):
        d = rng.choice((2, 3, 4))
        parts, radix, scale = _digit_chain(rng, count, d)
        rng.shuffle(parts)
        want = _scaled(f"(x//{d}) % {radix}", scale)
        c.add(_sum(parts), wide, f"{count} digits of x // {d}", floor=want, trunc=want)
    # an affine base of two variables
    m1, m2, s = rng.choice(MODULI), rng.choice(MODULI), rng.choice(SCALES)
    base = "(3*x + y)"
    expr = _sum([_scaled(f"{base} % {m1}", s), _scaled(f"({base}//{m1}) % {m2}", s * m1)])
    want = _scaled(f"{base} % {m1 * m2}", s)
    c.add(expr, {"x": (-30, 30), "y": (0, 40)}, "digits of an affine base", floor=want, trunc=want)
    # the examples
    c.add("(x % 4)*3 + ((x//4) % 2)*12", wide, "issue 15", floor="(x % 8)*3", trunc="(x % 8)*3")
    c.add("(x % 2) + ((x//2) % 4)*2", wide, "issue 15", floor="x % 8", trunc="x % 8")
    c.add(
        "((x//3) % 4)*2 + ((x//12) % 5)*8",
        wide,
        "issue 15",
        floor="((x//3) % 20)*2",
        trunc="((x//3) % 20)*2",
    )
    c.add(
        "((x - 50) % 3) + (((x - 50)//3) % 5)*3",
        wide,
        "issue 15",
        floor="(x - 50) % 15",
        trunc="(x - 50) % 15",
    )


def _shifted(c: _Cases, rng: random.Random) -> None:
    """Digits whose bases are apart by a multiple of the lower modulus."""
    nonneg = NONNEG
    # shifted bases: one half at another offset (a multiple of m1 apart); trunc needs
    # non-negative numerators for that, so its box starts above the offsets
    for _ in range(6):
        m1, m2, s = rng.choice(MODULI), rng.choice(MODULI), rng.choice(SCALES)
        c2 = rng.randint(-60, 60)
        c1 = c2 + m1 * rng.randint(-5, 5)
        lower = _scaled(f"({_shift('x', c1)}) % {m1}", s)
        upper = _scaled(f"(({_shift('x', c2)})//{m1}) % {m2}", s * m1)
        parts = [lower, upper]
        rng.shuffle(parts)
        want = _scaled(f"({_shift('x', c2)}) % {m1 * m2}", s)
        c.add(_sum(parts), {"x": (400, 3000)}, "shifted halves", floor=want, trunc=want)
    # an upper digit carrying an offset outside its quotient: ((x + c)//m1 + k) % m2
    for _ in range(2):
        m1, m2, s = rng.choice(MODULI), rng.choice(MODULI), rng.choice(SCALES)
        c2, k = rng.randint(0, 30), rng.randint(1, 9)
        expr = _sum(
            [
                _scaled(f"({_shift('x', c2)}) % {m1}", s),
                _scaled(f"(({_shift('x', c2)})//{m1} + {k}) % {m2}", s * m1),
            ]
        )
        want = _scaled(f"({_shift('x', c2 + k * m1)}) % {m1 * m2}", s)
        c.add(expr, nonneg, "offset outside the upper quotient", floor=want, trunc=want)
    # the lower digit a shifted quotient: ((x + c1)//d) % m1 and (x + c2)//(d*m1)
    for _ in range(2):
        d, m1, m2, s = rng.choice((2, 3)), rng.choice(MODULI), rng.choice(MODULI), 1
        c2 = rng.randint(0, d - 1)  # floor moves a larger offset out of the quotient
        c1 = c2 + d * m1 * rng.randint(1, 3)
        expr = _sum(
            [
                f"(({_shift('x', c1)})//{d}) % {m1}",
                _scaled(f"(({_shift('x', c2)})//{d * m1}) % {m2}", s * m1),
            ]
        )
        want = f"(({_shift('x', c2)})//{d}) % {m1 * m2}"
        # floor only: under truncation quorem does not normalise the lower digit's offset
        # (no rule takes it out of the quotient), so these stay; see the module docstring
        c.add_one("floor", expr, nonneg, "shifted quotient digits", want)
    # the top digit a bare quotient, the halves at different offsets
    for _ in range(2):
        m, s = rng.choice(MODULI), rng.choice(SCALES)
        c2 = rng.randint(-40, 40)
        c1 = c2 + m * rng.randint(1, 4)
        expr = _sum(
            [_scaled(f"({_shift('x', c1)}) % {m}", s), _scaled(f"({_shift('x', c2)})//{m}", s * m)]
        )
        want = _scaled(_shift("x", c2), s)
        c.add(expr, {"x": (100, 2000)}, "div-mod identity, shifted halves", floor=want, trunc=want)


def _edges(c: _Cases, rng: random.Random) -> None:
    """Negative moduli, and the edges where the rules must stop."""
    wide, nonneg = WIDE, NONNEG
    # negative lower modulus (holds under floor for m2 > 0, under trunc always)
    m1, m2 = -rng.choice((2, 3, 4)), rng.choice((2, 3))
    expr = f"x % {m1} + ((x//{m1}) % {m2})*{m1}"
    c.add(expr, wide, "negative lower modulus", floor=f"x % {m1 * m2}", trunc=f"x % {m1 * m2}")
    # edges: the rules must stop (expected: the input as it is)
    m1, m2 = rng.choice((3, 4)), rng.choice((2, 3))
    edges = [
        (f"(x % {m1})*3 + ((x//{m1}) % {m2})*{3 * m1 + 1}", wide, "wrong scale"),
        (f"x % {m1} + ((x//{m1 + 1}) % {m2})*{m1}", wide, "wrong modulus"),
        (f"(x + 1) % {m1} + (((x - 50)//{m1}) % {m2})*{m1 + 1}", nonneg, "wrong scale, shifted"),
    ]
    for expr, box, source in edges:
        c.add(expr, box, f"edge: {source}", floor=expr, trunc=expr)
    # an offset not a multiple of the modulus apart (the trunc box keeps numerators
    # non-negative, so the only reason not to apply is the offset)
    expr = f"(x + 1) % {m1} + (((x + 3)//{m1}) % {m2})*{m1}"
    c.add(expr, {"x": (0, 500)}, "edge: offsets not congruent", floor=expr, trunc=expr)
    # a negative upper modulus: false under floor, true under trunc
    expr = f"x % {m1} + ((x//{m1}) % -{m2})*{m1}"
    c.add(expr, wide, "edge: negative upper modulus", floor=expr, trunc=f"x % {-m1 * m2}")
    # shifted halves over a base of both signs: false under trunc
    expr = "(x + 1) % 3 + (((x - 50)//3) % 5)*3"
    c.add(
        expr,
        {"x": (-300, 300)},
        "edge: trunc base of both signs",
        floor="(x - 50) % 15",
        trunc=expr,
    )


def _symbolic(c: _Cases, rng: random.Random) -> None:
    """Digits scaled by a symbolic stride ``y`` (and a constant)."""
    box = {"x": (-60, 60), "y": (-3, 3)}
    for _ in range(3):
        m1, m2, k = rng.choice(MODULI), rng.choice(MODULI), rng.choice(SCALES)
        parts = [f"(x % {m1})*y*{k}", f"((x//{m1}) % {m2})*y*{k * m1}"]
        rng.shuffle(parts)
        want = f"(x % {m1 * m2})*y*{k}"
        c.add(_sum(parts), box, "digits with a symbolic stride", floor=want, trunc=want)
