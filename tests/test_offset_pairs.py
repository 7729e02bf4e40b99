"""rules/35-offset-pairs.rules: offsets of either sign (issue 15, class 6).

Two quotients of one numerator by one divisor, offsets a multiple of the divisor apart,
fold to one quotient and a constant (cancelling to a constant where the weights do);
under truncation only where the numerators keep one sign (a counterexample shows why);
a lone offset of either sign stays where nothing cancels it (under truncation, a
positive one too); a quotient beside a constant gives its offset to the constant; and
simplify keeps the value of random pairs.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples, normal
from support import rewritten as simplified

import quorem
import quorem.rules

OURS = {
    rule.name
    for rule in quorem.RuleSet.from_files(
        [Path(quorem.rules.__file__).parent / "35-offset-pairs.rules"]
    )
}
POS = {"s": (20160, 30000), "t": (0, 50)}
WIDE = {"s": (-30000, 30000), "t": (0, 50)}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("-(s // 315) + (s - 20160)//315 + 65", "1"),
        ("s//2 - (s - 2)//2", "1"),
        ("(s + 5)//315 - (s - 310)//315", "1"),
        ("3*((s - 630)//315) - 3*(s//315)", "-6"),
        ("2*((s - 8)//4) + (s//4)", "3*(s//4) - 4"),
        ("(2*s + t - 32)//16 - (2*s + t)//16 + t//3", "t//3 - 2"),
        ("(s + 6)//-3 - s//-3", "-2"),
    ],
)
@pytest.mark.parametrize("semantics", ["floor", "trunc"])
def test_pairs_fold(text: str, want: str, semantics: str) -> None:
    bounds = WIDE if semantics == "floor" else POS
    assert simplified(text, semantics, bounds) is normal(want, semantics, bounds)


@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    "text",
    [
        "(s - 2)//2",  # a lone negative offset stays
        "(s - 20)//315 - s//315",  # offsets not a multiple of 315 apart
        "(s - 630)//315 - s//630",  # different divisors
        "(s - 630)//315 - t//315",  # different numerators
        "(s - 630)//315 - (2*s)//315",
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    result = quorem.explain(quorem.parse(text, WIDE, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    assert not (set(result.counts) & OURS), result.counts


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("(s - 2)//2 + 1", "s//2"),
        ("((s - 4)//4)*16 + 3", "(s//4)*16 - 13"),
        ("(s - 6)//-3 + 7", "s//-3 + 9"),
    ],
)
@pytest.mark.parametrize("semantics", ["floor", "trunc"])
def test_offset_beside_a_constant(text: str, want: str, semantics: str) -> None:
    bounds = {"s": (10, 1000)}
    assert simplified(text, semantics, bounds) is normal(want, semantics, bounds)


def test_offset_beside_a_constant_stays_under_trunc_across_zero() -> None:
    # truncdiv(-1, 2) + 1 == 1, but truncdiv(1, 2) == 0
    bounds = {"s": (-10, 10)}
    term = quorem.parse("(s - 2)//2 + 1", bounds, "trunc")
    assert quorem.evaluate(term, {"s": 1}) == 1
    assert quorem.evaluate(quorem.parse("s//2", bounds, "trunc"), {"s": 1}) == 0
    assert quorem.simplify(term) is term


def test_lone_negative_offset_stays() -> None:
    for semantics in ("floor", "trunc"):
        term = quorem.parse("(s - 2)//2", WIDE, semantics)
        assert quorem.simplify(term) is term


def test_pair_is_false_under_trunc_across_zero() -> None:
    # truncdiv(1, 2) - truncdiv(-1, 2) == 0, not 1
    bounds = {"s": (-300, 300)}
    term = quorem.parse("s//2 - (s - 2)//2", bounds, "trunc")
    assert quorem.evaluate(term, {"s": 1}) == 0
    assert quorem.evaluate(quorem.parse("s//2 - (s - 2)//2", bounds, "floor"), {"s": 1}) == 1
    assert not (set(quorem.explain(term).counts) & OURS)


def test_trunc_keeps_a_lone_positive_offset() -> None:
    # floor takes it out (div-split-offset); truncation keeps it: nothing cancels, and
    # across zero it would be false (truncdiv(1, 2) == 0, truncdiv(-1, 2) + 1 == 1)
    bounds = {"s": (-5, 1000)}
    term = quorem.parse("(s + 2)//2", bounds, "trunc")
    assert quorem.simplify(term) is term
    assert quorem.evaluate(term, {"s": -1}) == 0
    assert quorem.evaluate(quorem.parse("s//2 + 1", bounds, "trunc"), {"s": -1}) == 1


@st.composite
def pairs(draw: st.DrawFn) -> str:
    d = draw(st.sampled_from([-4, -3, 2, 3, 5, 8]))
    q = draw(st.integers(-3, 3))
    c2 = draw(st.integers(-9, 9))
    w1 = draw(st.sampled_from([-2, -1, 1, 3]))
    w2 = draw(st.sampled_from([-1, 1, 2]))
    c1 = c2 + q * d + (1 if q == 0 else 0)  # q == 0: a pair not a multiple apart
    e = draw(st.sampled_from(["", " + 1", " - 3"]))
    return f"((s + {c1})//{d})*{w1} + ((s + {c2})//{d})*{w2} + t{e}"


@settings(max_examples=examples(150), deadline=None)
@given(pairs(), st.sampled_from(["floor", "trunc"]), st.integers(-60, 30))
def test_simplify_keeps_value(text: str, semantics: str, lo: int) -> None:
    bounds = {"s": (lo, lo + 30), "t": (0, 2)}
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    for s, t in itertools.product(range(lo, lo + 31), range(3)):
        env = {"s": s, "t": t}
        assert quorem.evaluate(out, env) == quorem.evaluate(term, env), (text, env)
