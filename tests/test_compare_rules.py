"""rules/45-compare.rules: comparisons of a division with a constant (issue 15, class 1).

The issue's examples reach a comparison without a division under floor and under
truncation (where the thresholds differ, the truncating form is checked); the rules stop
where they must (a divisor that is not a constant, a threshold outside int64, ``==``);
and simplify keeps the value of random comparisons at every point of small boxes.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import quorem
import quorem.rules
from hypothesis import given, settings
from hypothesis import strategies as st

CASES = Path(__file__).resolve().parent / "data" / "compare_cases.jsonl"
OURS = {
    rule.name
    for rule in quorem.RuleSet.from_files([Path(quorem.rules.__file__).parent / "45-compare.rules"])
}
WIDE = {"x": (-1000, 1000), "y": (-1000, 1000)}


def simplified(text: str, semantics: str, bounds: dict[str, tuple[int, int]] = WIDE) -> str:
    result = quorem.explain(quorem.parse(text, bounds, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    return quorem.to_text(result.term)


def same(a: str, b: str, semantics: str, bounds: dict[str, tuple[int, int]] = WIDE) -> bool:
    return quorem.parse(a, bounds, semantics) is quorem.parse(b, bounds, semantics)


@pytest.mark.parametrize(
    ("text", "floor", "trunc"),
    [
        ("x//4 < 3", "x < 12", "x < 12"),
        ("x//4 <= 2", "x <= 11", "x <= 11"),
        ("3 <= x//4", "12 <= x", "12 <= x"),
        ("x//4 < -3", "x < -12", "x < -15"),
        ("(x - 20)//4 < -3", "x - 20 < -12", "x - 20 < -15"),
        ("x//-4 < -3", "12 < x", "15 < x"),
        ("(x - 10)//-4 < 0", "0 < x - 10", "3 < x - 10"),
        ("2 < x//-4", "x < -11", "x < -11"),
        ("(x//2)//3 < 4", "x < 24", "x < 24"),
        ("x*3 == 10", "0", "0"),
        ("x*4 != 6", "1", "1"),
    ],
)
def test_issue_examples(text: str, floor: str, trunc: str) -> None:
    for semantics, want in (("floor", floor), ("trunc", trunc)):
        got = simplified(text, semantics)
        assert same(got, want, semantics), (semantics, text, got, want)


@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    "text",
    [
        "x//y < 3",  # the divisor is not a constant
        "x//4 < 4611686018427387904",  # the threshold 2**64 is outside int64
        "-4611686018427387904 < x//-4",
        "x//2 <= 4611686018427387904",
        "x//4 == 3",  # a band, not a half-line: needs the boolean layer
        "x//4 != 3",
        "x*3 == 9",  # k divides c: not shipped (changes only coefficients)
        "x*3 < 10",
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    term = quorem.parse(text, None, semantics)
    result = quorem.explain(term)
    assert result.reason is quorem.StopReason.FIXED_POINT
    assert not (set(result.counts) & OURS), result.counts


def test_trunc_uses_its_own_thresholds() -> None:
    # the floor form x < -12 is wrong under truncation at x = -15 (trunc(-15/4) = -3)
    got = quorem.parse(simplified("x//4 < -3", "trunc"), WIDE, "trunc")
    assert quorem.evaluate(got, {"x": -15}) == 0
    assert quorem.evaluate(quorem.parse("x//4 < -3", WIDE, "trunc"), {"x": -15}) == 0


def test_unbounded_variables_still_fold() -> None:
    # the thresholds are constants: no range of x is needed
    assert same(simplified("x//8 < 5", "floor", {}), "x < 40", "floor", {})


def test_corpus() -> None:
    lines = CASES.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 40
    for line in lines:
        case = json.loads(line)
        bounds = {n: (b[0], b[1]) for n, b in case["vars"].items()}
        sem = case["semantics"]
        term = quorem.parse(case["expr"], bounds, sem)
        result = quorem.explain(term)
        assert result.reason is quorem.StopReason.FIXED_POINT, case["id"]
        assert result.term is quorem.parse(case["expected"], bounds, sem), case["id"]
        names = sorted(bounds)
        for point in itertools.product(*(range(bounds[n][0], bounds[n][1] + 1) for n in names)):
            env = dict(zip(names, point, strict=True))
            assert quorem.evaluate(result.term, env) == quorem.evaluate(term, env), (
                case["id"],
                env,
            )


OPS = ["<", "<=", "==", "!="]


@st.composite
def comparisons(draw: st.DrawFn) -> str:
    a = draw(st.integers(-3, 3))
    b = draw(st.integers(-3, 3))
    c = draw(st.integers(-6, 6))
    d = draw(st.sampled_from([-5, -4, -3, -2, 2, 3, 4, 5]))
    k = draw(st.integers(-20, 20))
    numerator = f"(x*{a} + y*{b} + {c})"
    lhs = draw(
        st.sampled_from(
            [
                f"{numerator}//{d}",
                f"({numerator}//{d})//{draw(st.sampled_from([-3, 2, 3]))}",
                f"{numerator}%{d}",
                f"x*{a} + y*{b}",
                f"x*{d}",
            ]
        )
    )
    op = draw(st.sampled_from(OPS))
    return f"{lhs} {op} {k}" if draw(st.booleans()) else f"{k} {op} {lhs}"


@settings(max_examples=150, deadline=None)
@given(comparisons(), st.sampled_from(["floor", "trunc"]), st.integers(-8, 4), st.integers(-8, 4))
def test_simplify_keeps_value(text: str, semantics: str, lo_x: int, lo_y: int) -> None:
    bounds = {"x": (lo_x, lo_x + 4), "y": (lo_y, lo_y + 3)}
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    for x, y in itertools.product(range(lo_x, lo_x + 5), range(lo_y, lo_y + 4)):
        env = {"x": x, "y": y}
        assert quorem.evaluate(out, env) == quorem.evaluate(term, env), (text, env)
