"""fold_divmod_general's rules (seed 002 §3) one at a time, where the shipped order hides them."""

from __future__ import annotations

import pytest
from support import assert_equivalent

import quorem
from quorem.ruleset import RuleSet

ANY = (-1000, 1000)


def only(*names: str) -> RuleSet:
    """The shipped rules named, in shipped order (the rest of the catalog left out)."""
    return RuleSet([r for r in quorem.default_ruleset() if r.name in names])


@pytest.mark.parametrize(
    ("text", "bounds", "expected", "rule"),
    [
        # 12 = 5 (mod 7): 5*r in [0, 5] is one bucket.
        ("(12*r)//7", {"r": (0, 1)}, "r", "congruence-div-lone-up"),
        # 12 = -2 (mod 7): -2*r + 3 in [1, 3] is one bucket; 5*r + 3 is not.
        ("(12*r + 3)//7", {"r": (0, 1)}, "2*r", "congruence-div-lone-down"),
        ("(12*r + 3)%7", {"r": (0, 1)}, "3 - 2*r", "congruence-mod-lone-down"),
        ("(12*r)%7", {"r": (0, 1)}, "5*r", "congruence-mod-lone-up"),
    ],
)
def test_congruence_tries_both_residue_signs_for_a_lone_term(
    text: str, bounds: dict[str, tuple[int, int]], expected: str, rule: str
) -> None:
    """For one term the rule tries the residue k % d and k % d - d: each can be the one."""
    rules = only(
        "congruence-mod-lone-up",
        "congruence-mod-lone-down",
        "congruence-div-lone-up",
        "congruence-div-lone-down",
    )
    term = quorem.parse(text, bounds)
    result = quorem.explain(term, rules)
    assert result.term is quorem.parse(expected, bounds)
    assert result.rules == [rule]
    assert_equivalent(term, result.term, bounds)


@pytest.mark.parametrize(
    ("text", "bounds", "expected"),
    [
        ("(r*6 + 3)%7", {"r": (0, 3)}, "3 - r"),
        ("(r*6 + v*13 + 3)//7", {"r": (0, 2), "v": (0, 1)}, "r + 2*v"),
    ],
)
def test_congruence_under_truncation_for_non_negative_numerators(
    text: str, bounds: dict[str, tuple[int, int]], expected: str
) -> None:
    """congruence-*-nonneg fold C's division where the numerator is non-negative."""
    term = quorem.parse(text, bounds, "trunc")
    got = quorem.simplify(term)
    assert got is quorem.parse(expected, bounds, "trunc")
    assert_equivalent(term, got, bounds)


def test_congruence_keeps_a_numerator_of_both_signs_under_truncation() -> None:
    """-r + 3 over r in [0, 9] crosses zero: C's % is not floor's there, so no fold."""
    bounds = {"r": (0, 9)}
    term = quorem.parse("(r*6 - 30)%7", bounds, "trunc")
    got = quorem.simplify(term)
    assert quorem.count_divmod(got) == 1
    assert_equivalent(term, got, bounds)


@pytest.mark.parametrize(
    ("text", "bounds", "semantics", "expected"),
    [
        ("(x*8 + y*3 + 9)%8", {"x": (0, 9), "y": (0, 20)}, "trunc", "(y*3 + 1)%8"),
        ("(x*16 + y*3 + 9)//8", {"x": (0, 9), "y": (0, 2)}, "trunc", "x*2 + 1"),
        ("(x*16 + y*3 + 9)//8", {"x": ANY, "y": (0, 2)}, "floor", "x*2 + 1"),
    ],
)
def test_long_sum_rules_take_every_multiple_at_once(
    text: str, bounds: dict[str, tuple[int, int]], semantics: str, expected: str
) -> None:
    """The batch rules move all multiples of d in one application (one step, not one per addend)."""
    term = quorem.parse(text, bounds, semantics)
    result = quorem.explain(term)
    assert result.term is quorem.parse(expected, bounds, semantics)
    assert result.trace[0].rule in {
        "mod-reduce-coefficients-nonneg",
        "div-split-multiples-nonneg",
        "div-split-multiples",
    }
    assert_equivalent(term, result.term, bounds)


def test_a_long_sum_splits_in_one_step() -> None:
    """200 multiples of 8 leave the division in one rule application."""
    bounds = {f"x{i}": (0, 3) for i in range(200)} | {"y": (0, 7)}
    text = " + ".join(f"x{i}*8" for i in range(200)) + " + y"
    result = quorem.explain(quorem.parse(f"({text})//8", bounds))
    assert result.counts["div-split-multiples"] == 1
    assert quorem.count_divmod(result.term) == 0
