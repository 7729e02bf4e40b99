"""rules/42-nested-negative.rules: nested divisions with a negative inner divisor (issue
15, class 4).

``((a // b) + y) // c`` with ``b < 0 < c`` is one floor division with a positive divisor;
under truncation only where ``a <= 0`` and ``a // b + y >= 0`` (a counterexample shows
why); a negative outer divisor stays; and simplify keeps the value of random nestings.
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
        [Path(quorem.rules.__file__).parent / "42-nested-negative.rules"]
    )
}
BOTH = {"a": (-1000, 1000), "y": (0, 20)}
NONPOS = {"a": (-1000, 0), "y": (0, 20)}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("((a // -2) + 1) // 3", "(2 - a)//6"),
        ("((a // -3) + y) // 4", "(3*y - a)//12"),
        ("((a // -2) + 2*y + 5) // 3", "(4*y - a + 10)//6"),
        ("((a - y) // -5) // 2", "(a - y)//-10"),
    ],
)
def test_merges(text: str, want: str) -> None:
    assert simplified(text, "floor", BOTH) is normal(want, "floor", BOTH)
    # truncation: where a <= 0 and the inner quotient plus offset is >= 0
    assert simplified(text, "trunc", NONPOS) is normal(want, "trunc", NONPOS)


@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    "text",
    [
        "((a // -2) + 1) // -3",  # a negative outer divisor: false under floor
        "((a // -2) + y) // y",  # the outer divisor is not a constant
        "((a // y) + 1) // 3",  # nor the inner one
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    result = quorem.explain(quorem.parse(text, {"a": (-1000, 1000), "y": (1, 20)}, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    assert not (set(result.counts) & OURS), result.counts


def test_negative_outer_divisor_is_false_under_floor() -> None:
    # ((a // -2) + 1) // -3 at a = -17: (8 + 1) // -3 == -3, but (2 - a) // -6 == -4
    env = {"a": -17}
    nested = quorem.parse("((a // -2) + 1) // -3", BOTH, "floor")
    merged = quorem.parse("(2 - a) // -6", BOTH, "floor")
    assert quorem.evaluate(nested, env) != quorem.evaluate(merged, env)


def test_trunc_merges_nonpositive_quotients() -> None:
    # a >= 0 and a // -2 - 3 <= 0: truncation is the ceiling throughout
    bounds = {"a": (0, 1000)}
    got = simplified("((a // -2) - 3) // 4", "trunc", bounds)
    assert got is normal("(-a - 6)//8", "trunc", bounds)


def test_trunc_needs_a_nonpositive_numerator() -> None:
    # truncdiv(truncdiv(1, -2) + 3, 3) == 1 but truncdiv(-1 + 6, 6) == 0
    bounds = {"a": (-10, 10), "y": (0, 5)}
    nested = quorem.parse("((a // -2) + y) // 3", bounds, "trunc")
    merged = quorem.parse("(2*y - a) // 6", bounds, "trunc")
    env = {"a": 1, "y": 3}
    assert quorem.evaluate(nested, env) == 1
    assert quorem.evaluate(merged, env) == 0
    assert not (set(quorem.explain(nested).counts) & OURS)
    # the floor merge holds at the same point
    floor_nested = quorem.parse("((a // -2) + y) // 3", bounds, "floor")
    floor_merged = quorem.parse("(2*y - a) // 6", bounds, "floor")
    assert quorem.evaluate(floor_nested, env) == quorem.evaluate(floor_merged, env)


@st.composite
def nestings(draw: st.DrawFn) -> str:
    b = draw(st.sampled_from([-5, -3, -2, 2, 3]))
    c = draw(st.sampled_from([-3, 2, 3, 4]))
    k = draw(st.integers(-6, 6))
    y = draw(st.sampled_from(["", " + y", " - y", " + 2*y"]))
    return f"((a // {b}){y} + {k}) // {c}"


@settings(max_examples=examples(150), deadline=None)
@given(nestings(), st.sampled_from(["floor", "trunc"]), st.integers(-30, 10))
def test_simplify_keeps_value(text: str, semantics: str, lo: int) -> None:
    bounds = {"a": (lo, lo + 20), "y": (0, 4)}
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    for a, yv in itertools.product(range(lo, lo + 21), range(5)):
        env = {"a": a, "y": yv}
        assert quorem.evaluate(out, env) == quorem.evaluate(term, env), (text, env)
