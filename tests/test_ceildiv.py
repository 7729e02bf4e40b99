"""Ceiling division (issue 17): rules/58-ceildiv.rules removes ceildiv where ranges allow.

Each rule is shown firing on an example, and stopping where it must: a divisor of the
wrong or unknown sign, an unbounded numerator, a sum that may leave int64. Simplifying a
random expression holding ceildiv keeps its value at random points.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Case, points, random_cases
from support import assert_equivalent, assert_simplified_keeps_value, examples

import quorem
import quorem.rules
from quorem.errors import EvaluationError
from quorem.ops import Op
from quorem.rulefile import parse_rules
from quorem.term import ceildiv
from quorem.walk import nodes

Bounds = Mapping[str, tuple[int | None, int | None]]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
OURS = {
    r.name
    for r in quorem.RuleSet.from_files([Path(quorem.rules.__file__).parent / "58-ceildiv.rules"])
}


def _rules_applied(text: str, bounds: Bounds, semantics: str = "floor") -> set[str]:
    result = quorem.explain(quorem.parse(text, bounds, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    return set(result.counts)


def _simplified(text: str, bounds: Bounds, semantics: str = "floor") -> quorem.Term:
    return quorem.simplify(quorem.parse(text, bounds, semantics))


def _has_ceildiv(t: quorem.Term) -> bool:
    return any(u.op is Op.CEILDIV for u in nodes(t))


@pytest.mark.parametrize(
    ("text", "bounds", "semantics", "expected", "rule"),
    [
        ("ceildiv(x, 1)", {"x": (None, None)}, "floor", "x", "ceildiv-by-one"),
        ("ceildiv(x, -1)", {"x": (-9, 9)}, "trunc", "-x", "ceildiv-by-minus-one"),
        ("ceildiv(x*6, 6)", {"x": (None, None)}, "floor", "x", "ceildiv-exact"),
        ("ceildiv(x*12, -4)", {"x": (None, None)}, "floor", "x*-3", "ceildiv-exact-scaled"),
        ("ceildiv(x, 8)", {"x": (1, 8)}, "floor", "1", "fold-ceildiv-by-range"),
        ("ceildiv(x, 4)", {"x": (-50, 50)}, "floor", "(x + 3) // 4", "ceildiv-positive-divisor"),
        # Floor's instance comes first: a term holds no semantics of its own.
        (
            "ceildiv(x, 4)",
            {"x": (-50, 50)},
            "euclid",
            "floordiv(x + 3, 4)",
            "ceildiv-positive-divisor",
        ),
        (
            "ceildiv(x, -4)",
            {"x": (-50, 50)},
            "floor",
            "(x - 3) // -4",
            "ceildiv-negative-divisor-floor",
        ),
        (
            "ceildiv(x, y)",
            {"x": (-50, 50), "y": (1, 9)},
            "floor",
            "(x - 1) // y + 1",
            "ceildiv-positive-divisor-shifted",
        ),
        (
            "ceildiv(x, y)",
            {"x": (-50, 50), "y": (-9, -1)},
            "floor",
            "(x + 1) // y + 1",
            "ceildiv-negative-divisor-shifted-floor",
        ),
        (
            "ceildiv(x, y)",
            {"x": (I64_MIN, I64_MAX), "y": (-9, -2)},  # x + 1 may leave int64
            "euclid",
            "x // y",
            "ceildiv-negative-divisor-euclid",
        ),
        (
            "ceildiv(x, y)",
            {"x": (I64_MIN, 0), "y": (1, 9)},  # x - 1 may leave int64
            "trunc",
            "x // y",
            "ceildiv-non-positive-quotient-trunc",
        ),
        (
            "ceildiv(x, -4)",
            {"x": (I64_MIN, I64_MAX)},
            "floor",
            "eucliddiv(x, -4)",
            "ceildiv-negative-divisor-euclid",
        ),
    ],
)
def test_each_rule_removes_ceildiv(
    text: str, bounds: Bounds, semantics: str, expected: str, rule: str
) -> None:
    assert rule in _rules_applied(text, bounds, semantics)
    out = _simplified(text, bounds, semantics)
    assert out is _simplified(expected, bounds, semantics)
    assert not _has_ceildiv(out)
    finite = {n: (lo, hi) for n, (lo, hi) in bounds.items() if lo is not None and hi is not None}
    if len(finite) == len(bounds):
        small = {n: (max(lo, -300), min(hi, 300)) for n, (lo, hi) in finite.items()}
        assert_equivalent(quorem.parse(text, small, semantics), out, small)


def test_truncation_rule_stops_where_the_quotient_may_be_positive() -> None:
    trunc = quorem.RuleSet(
        [r for r in quorem.RuleSet.from_files([_file()]).rules if r.name.endswith("-trunc")]
    )
    assert trunc.rules
    t = quorem.parse("ceildiv(x, 4)", {"x": (-50, 50)})
    assert quorem.simplify(t, trunc) is t  # truncation rounds x // 4 down for x > 0
    nonpos = quorem.parse("ceildiv(x, 4)", {"x": (-50, 0)})
    assert quorem.simplify(nonpos, trunc) is quorem.parse("x // 4", {"x": (-50, 0)}, "trunc")
    mixed = quorem.parse("ceildiv(x, y)", {"x": (-5, 50), "y": (1, 9)})
    assert quorem.simplify(mixed, trunc) is mixed  # x of either sign, y > 0
    flipped = quorem.parse("ceildiv(x, y)", {"x": (0, 50), "y": (-9, -1)})
    assert quorem.simplify(flipped, trunc) is quorem.parse(
        "x // y", {"x": (0, 50), "y": (-9, -1)}, "trunc"
    )


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        # The divisor's sign is unknown: no rule applies.
        ("ceildiv(x, y)", {"x": (-50, 50), "y": (-3, 3)}),
        # An unbounded numerator: x + 3 and x - 1 may leave int64.
        ("ceildiv(x, 4)", {"x": (None, None)}),
        ("ceildiv(x, y)", {"x": (None, None), "y": (1, 9)}),
        # At the limits: x + 3 overflows and x - 1 too (x reaches both ends).
        ("ceildiv(x, 4)", {"x": (I64_MIN, I64_MAX)}),
        ("ceildiv(x, y)", {"x": (I64_MIN, I64_MAX), "y": (1, 9)}),
    ],
)
def test_ceildiv_stays_where_no_rule_may_apply(text: str, bounds: Bounds) -> None:
    out = _simplified(text, bounds)
    assert _has_ceildiv(out)
    assert not (_rules_applied(text, bounds) & OURS)


def test_the_sum_that_would_overflow_takes_the_shifted_form() -> None:
    bounds = {"x": (0, I64_MAX)}  # x + 3 may overflow, x - 1 cannot
    applied = _rules_applied("ceildiv(x, 4)", bounds)
    assert "ceildiv-positive-divisor" not in applied
    assert "ceildiv-positive-divisor-shifted" in applied
    out = _simplified("ceildiv(x, 4)", bounds)
    for x in (0, 1, 3, 4, 5, I64_MAX - 1, I64_MAX):
        assert quorem.evaluate(out, {"x": x}) == -((-x) // 4)


def test_exact_scaled_stops_where_the_divisor_does_not_divide() -> None:
    out = _simplified("ceildiv(x*6, 4)", {"x": (-20, 20)})
    assert "ceildiv-exact-scaled" not in _rules_applied("ceildiv(x*6, 4)", {"x": (-20, 20)})
    assert_equivalent(quorem.parse("ceildiv(x*6, 4)", {"x": (-20, 20)}), out, {"x": (-20, 20)})


@pytest.mark.parametrize("semantics", ["floor", "trunc", "euclid"])
@pytest.mark.parametrize(
    "text",
    [
        "ceildiv(x, 4) + ceildiv(y, -3)",
        "ceildiv(x*3 + y, 5) - x % 3",
        "ceildiv(x, y) + ceildiv(y, 2)",
        "ceildiv(ceildiv(x, 3), 2)",
    ],
)
def test_simplified_ceildiv_keeps_its_value_on_a_box(text: str, semantics: str) -> None:
    assert_simplified_keeps_value(text, {"x": (-30, 30), "y": (1, 7)}, semantics)


def _file() -> Path:
    return Path(quorem.rules.__file__).parent / "58-ceildiv.rules"


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_cases(max_depth=3), st.data())
def test_simplifying_random_ceildiv_expressions_keeps_their_value(
    case: Case, data: st.DataObject
) -> None:
    divisor = data.draw(st.sampled_from([-7, -4, -2, -1, 1, 2, 3, 5, 8]))
    term = ceildiv(case.term, quorem.const(divisor))
    if data.draw(st.booleans()):
        term = term + ceildiv(case.variables()[0], quorem.const(-divisor))
    out = quorem.simplify(term)
    for _ in range(8):
        p = data.draw(points(case.box))
        try:
            expected = quorem.evaluate(term, p)
        except EvaluationError:
            continue
        assert quorem.evaluate(out, p) == expected


def test_a_rule_may_build_a_ceildiv_of_terms() -> None:
    # The rule language's type check and the interpreter take ceildiv of terms too.
    rules = parse_rules(
        "rule negated-floor-is-ceildiv\n  doc: d\n  semantics: floor\n"
        "  pattern: -((-x) // y)\n  guard: vmin(y) > 0\n  rewrite: ceildiv(x, y)\n"
    )
    t = quorem.parse("-((-x) // y)", {"x": (-9, 9), "y": (1, 4)})
    out = quorem.simplify(t, quorem.RuleSet(rules, allow_unproven=True))
    assert out.op is Op.CEILDIV
    assert_equivalent(t, out, {"x": (-9, 9), "y": (1, 4)})


def test_the_nested_order_weighs_a_ceildiv_twice_its_divisor() -> None:
    from quorem.verify.termination import nested_less, term_nodes

    bounds = {"x": (-9, 9)}
    ceil = term_nodes(quorem.parse("ceildiv(x, 4)", bounds))
    floor = term_nodes(quorem.parse("(x + 3) // 4", bounds))
    assert list(ceil) == [(0, 8, 0, 1, 0)] and list(floor) == [(0, 4, 0, 2, 0)]
    assert nested_less(floor, ceil) and not nested_less(ceil, floor)
