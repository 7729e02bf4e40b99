"""rules/22-mixed-radix.rules: mixed-radix recombination (issue 15, class 3).

The issue's examples reach one digit under floor and truncation; digits combine in any
order, with negative scales, in chains, over shifted or partially rewritten bases; the
rules stop where the identity is false or the digits do not fit (wrong scale, wrong
modulus, offsets not congruent, a negative upper modulus under floor, shifted bases of
both signs under truncation, each shown by an evaluated counterexample where it is a
matter of truth); and simplify keeps the value of random digit sums on small boxes.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
import quorem.rules

OURS = {
    rule.name
    for rule in quorem.RuleSet.from_files(
        [Path(quorem.rules.__file__).parent / "22-mixed-radix.rules"]
    )
}
WIDE = {"x": (-1000, 1000), "y": (0, 50)}
NONNEG = {"x": (50, 3000)}


def simplified(text: str, semantics: str, bounds: dict[str, tuple[int, int]] = WIDE) -> str:
    result = quorem.explain(quorem.parse(text, bounds, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    return quorem.to_text(result.term)


def same(got: str, want: str, semantics: str, bounds: dict[str, tuple[int, int]] = WIDE) -> bool:
    """Whether ``got`` is ``want`` up to the shipped rules' normal form of ``want``
    (floor moves a constant into [0, m): (x - 50) % 15 is (x + 10) % 15)."""
    want_term = quorem.simplify(quorem.parse(want, bounds, semantics))
    return quorem.parse(got, bounds, semantics) is want_term


@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("(x % 4)*3 + ((x//4) % 2)*12", "(x % 8)*3"),
        ("(x % 2) + ((x//2) % 4)*2", "x % 8"),
        ("((x//3) % 4)*2 + ((x//12) % 5)*8", "((x//3) % 20)*2"),
        ("((x - 50) % 3) + (((x - 50)//3) % 5)*3", "(x - 50) % 15"),
        # any order, negative scales, a constant and another addend beside them
        ("((x//4) % 2)*-12 + 7 + (x % 4)*-3 + y", "(x % 8)*-3 + 7 + y"),
        # chains of three and four digits
        ("((x//6) % 5)*6 + x % 2 + ((x//2) % 3)*2", "x % 30"),
        ("((x//24) % 2)*48 + ((x//4) % 6)*8 + (x % 2)*2 + ((x//2) % 2)*4", "(x % 48)*2"),
        # the lower digit a quotient, chained
        ("((x//2) % 3) + ((x//6) % 4)*3 + ((x//24) % 5)*12", "(x//2) % 60"),
        # an affine base; a negative lower modulus
        ("(3*x + y) % 4 + (((3*x + y)//4) % 3)*4", "(3*x + y) % 12"),
        ("x % -3 + ((x//-3) % 2)*-3", "x % -6"),
        # a symbolic stride y
        ("(x % 4)*y + ((x//4) % 2)*4*y", "(x % 8)*y"),
        ("((x//4) % 2)*-12*y + (x % 4)*y*-3 + 1", "(x % 8)*y*-3 + 1"),
        # the top digit a bare quotient, after the digits combine
        ("x % 2 + ((x//2) % 3)*2 + (x//6)*6", "x"),
    ],
)
def test_combines(text: str, want: str, semantics: str) -> None:
    got = simplified(text, semantics)
    assert same(got, want, semantics), (semantics, text, got, want)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # one half already rewritten to another offset, a multiple of the modulus apart
        ("((x + 1) % 3) + (((x - 50)//3) % 5)*3", "(x - 50) % 15"),
        ("((x + 7) % 4)*2 + (((x - 1)//4) % 3)*8", "((x - 1) % 12)*2"),
        # an offset outside the upper digit's quotient
        ("(x + 2) % 3 + (((x + 2)//3 + 4) % 5)*3", "(x + 14) % 15"),
        # the top digit a bare quotient at another offset
        ("((x + 1) % 3)*2 + ((x - 50)//3)*6", "(x - 50)*2"),
    ],
)
def test_shifted_bases(text: str, want: str) -> None:
    # a non-negative box: under truncation the shifted forms hold there only
    for semantics in ("floor", "trunc"):
        got = simplified(text, semantics, NONNEG)
        assert same(got, want, semantics, NONNEG), (semantics, text, got, want)


@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    "text",
    [
        "(x % 4)*3 + ((x//4) % 2)*13",  # wrong scale
        "x % 4 + ((x//5) % 2)*4",  # wrong modulus
        "x % 4 + ((y//4) % 2)*4",  # the upper digit is of another base
        "(x + 1) % 4 + (((x + 3)//4) % 2)*4",  # offsets not a multiple of 4 apart
        "((x//3) % 4)*2 + ((x//13) % 5)*8",  # the upper quotient is not x//12
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    result = quorem.explain(quorem.parse(text, NONNEG | {"y": (0, 50)}, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    assert not (set(result.counts) & OURS), result.counts


def test_shifted_lower_quotient_digit_floor_only() -> None:
    # floor normalises ((x + 49)//3) % 8 to ((x + 1)//3) % 8 first, then the digits meet;
    # under truncation the offset stays in the quotient and the digits stay apart
    text = "((x + 49)//3) % 8 + (((x + 1)//24) % 5)*8"
    got = simplified(text, "floor", NONNEG)
    assert same(got, "((x + 1)//3) % 40", "floor", NONNEG)
    term = quorem.parse(text, NONNEG, "trunc")
    assert quorem.simplify(term) is term


def test_negative_upper_modulus_false_under_floor() -> None:
    # floor: x % 3 + ((x//3) % -2)*3 is not x % -6 (x = 1: 1 + 0 vs -5)
    text = "x % 3 + ((x//3) % -2)*3"
    floor = quorem.parse(text, WIDE, "floor")
    assert quorem.evaluate(floor, {"x": 1}) != quorem.evaluate(
        quorem.parse("x % -6", WIDE, "floor"), {"x": 1}
    )
    assert not (set(quorem.explain(floor).counts) & OURS)
    # truncation: truncating quotients always nest, so it is one digit
    assert same(simplified(text, "trunc"), "x % -6", "trunc")


def test_shifted_halves_false_under_trunc_for_both_signs() -> None:
    # truncmod(x + 1, 3) is not truncmod(x - 50, 3) where x + 1 and x - 50 differ in sign
    bounds = {"x": (-300, 300)}
    text = "((x + 1) % 3) + (((x - 50)//3) % 5)*3"
    term = quorem.parse(text, bounds, "trunc")
    wrong = quorem.parse("(x - 50) % 15", bounds, "trunc")
    assert quorem.evaluate(term, {"x": 0}) != quorem.evaluate(wrong, {"x": 0})
    result = quorem.explain(term)
    assert not (set(result.counts) & OURS), result.counts
    assert same(simplified(text, "floor", bounds), "(x - 50) % 15", "floor", bounds)


@st.composite
def digit_sums(draw: st.DrawFn) -> str:
    moduli = draw(st.lists(st.sampled_from([-3, -2, 2, 3, 4]), min_size=2, max_size=4))
    scale = draw(st.sampled_from([-3, -1, 1, 2]))
    lowest = draw(st.sampled_from([1, 2, 3]))
    offset = draw(st.integers(-6, 6))
    base = f"(x + {offset})"
    parts = []
    place = 1
    for m in moduli:
        divisor = lowest * place
        q = base if divisor == 1 else f"({base}//{divisor})"
        weight = scale * place if not draw(st.booleans()) else scale * place + 1
        parts.append(f"({q} % {m})*{weight}")
        place *= m
    if draw(st.booleans()):
        parts.append(f"({base}//{lowest * place})*{scale * place}")
    order = draw(st.permutations(parts))
    return " + ".join(order)


@settings(max_examples=examples(150), deadline=None)
@given(digit_sums(), st.sampled_from(["floor", "trunc"]), st.integers(-40, 20))
def test_simplify_keeps_value(text: str, semantics: str, lo: int) -> None:
    bounds = {"x": (lo, lo + 40)}
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    for x in range(lo, lo + 41):
        env = {"x": x}
        assert quorem.evaluate(out, env) == quorem.evaluate(term, env), (text, env)


def test_random_digits_keep_value_exhaustively() -> None:
    # every ordered pair of two-digit sums over small moduli of both signs, both semantics
    for m1, m2, s in itertools.product([-3, -2, 2, 3], [-2, 2, 3], [-2, 1]):
        text = f"(x % {m1})*{s} + ((x//{m1}) % {m2})*{s * m1}"
        for semantics in ("floor", "trunc"):
            term = quorem.parse(text, {"x": (-30, 30)}, semantics)
            out = quorem.simplify(term)
            for x in range(-30, 31):
                assert quorem.evaluate(out, {"x": x}) == quorem.evaluate(term, {"x": x})
