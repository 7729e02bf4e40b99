"""rules/45-compare.rules: comparisons against constants (issue 15, class 1).

The issue's examples reach a comparison without a division under floor and under
truncation (where the thresholds differ, the truncating form is checked); a scaled term
or a sum whose coefficients share a factor is divided through (tinygrad's lt_folding),
with the constant moved to one side; the rules stop where they must (a divisor that is
not a constant, a threshold outside int64, ``==`` of a division, a rest that reaches the
factor, a threshold that depends on the rest); and simplify keeps the value of random
comparisons at every point of small boxes.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
import quorem.rules
from quorem.verify.termination import term_measure

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
        ("(x - 20)//4 < -3", "x < 8", "x < 5"),
        ("x//-4 < -3", "12 < x", "15 < x"),
        ("(x - 10)//-4 < 0", "10 < x", "13 < x"),
        ("2 < x//-4", "x < -11", "x < -11"),
        ("(x//2)//3 < 4", "x < 24", "x < 24"),
        ("x*3 == 10", "0", "0"),
        ("x*4 != 6", "1", "1"),
        # a scaled term: the threshold rounded, the constant on its side
        ("x*3 < 10", "x < 4", "x < 4"),
        ("-2*x < 7", "-4 < x", "-4 < x"),
        ("10 < x*3", "3 < x", "3 < x"),
        ("x*3 <= 10", "x <= 3", "x <= 3"),
        ("10 <= x*3", "4 <= x", "4 <= x"),
        ("x*3 > -10", "-4 < x", "-4 < x"),
        ("-3*x <= -10", "4 <= x", "4 <= x"),
        ("x*6 == 12", "x == 2", "x == 2"),
        ("-6*x == 12", "x == -2", "x == -2"),
        ("x*6 != -18", "x != -3", "x != -3"),
        ("x*3 + 2 < 10", "x < 3", "x < 3"),
        ("x + 5 <= 2", "x <= -3", "x <= -3"),
        ("7 == x - 2", "x == 9", "x == 9"),
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
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    term = quorem.parse(text, None, semantics)
    result = quorem.explain(term)
    assert result.reason is quorem.StopReason.FIXED_POINT
    assert not (set(result.counts) & OURS), result.counts


SMALL = {"a": (0, 9), "b": (0, 9), "r": (0, 3), "x": (-50, 50)}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # tinygrad's lt_folding: the rest r in [0, 4) never crosses a multiple of 4
        ("4*a + 8*b + r < 16", "a + 2*b < 4"),
        ("4*a + 8*b + r <= 15", "a + 2*b <= 3"),
        ("15 < 4*a + 8*b + r", "3 < a + 2*b"),
        ("16 <= 4*a + 8*b + r", "4 <= a + 2*b"),
        ("4*a + 8*b + r > 15", "3 < a + 2*b"),
        ("4*a - 8*b + r < 16", "a - 2*b < 4"),
        ("-4*a - 8*b + r < -16", "4 < a + 2*b"),
        ("4*a + 8*b + r + 3 < 19", "a + 2*b < 4"),
        # the rest decides nothing when the threshold is c mod g = 0 or beyond its range
        ("4*a + 8*b + r < 17", "4*a + 8*b + r < 17"),
        ("4*a + 8*b + r == 17", "4*a + 8*b + r == 17"),
        ("4*a + 8*b + r == 18", "4*a + 8*b + r == 18"),
        ("4*a + 8*b == 18", "0"),
        ("4*a + 8*b != 18", "1"),
        ("4*a + 8*b == 20", "a + 2*b == 5"),
        ("-4*a - 8*b != -20", "a + 2*b != 5"),
        ("6*a + 4*b < 13", "3*a + 2*b < 7"),
    ],
)
def test_common_factor(text: str, want: str) -> None:
    for semantics in ("floor", "trunc"):
        got = simplified(text, semantics, SMALL)
        assert same(got, want, semantics, SMALL), (semantics, text, got, want)


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("4*a + 8*b + r < 16", {"r": (0, 4)}),  # the rest reaches the factor
        ("4*a + 8*b + r < 16", {"r": (-1, 2)}),  # the rest may be negative
        ("4*a + 8*b + r < 18", {"r": (0, 3)}),  # 18 mod 4 = 2 inside the rest's range
        ("4*a + 6*b + r < 16", {"r": (0, 3)}),  # gcd 2: r may reach it
        ("4*a + 3*b < 16", {}),  # gcd 1
        ("-x < 4", {}),  # nothing to divide: the coefficient is -1
        ("x < 4", {}),
    ],
)
def test_common_factor_does_not_apply(text: str, bounds: dict[str, tuple[int, int]]) -> None:
    box = {"a": (0, 9), "b": (0, 9), "x": (-50, 50), "y": (-50, 50), **bounds}
    for semantics in ("floor", "trunc"):
        result = quorem.explain(quorem.parse(text, box, semantics))
        assert result.reason is quorem.StopReason.FIXED_POINT
        assert not any("common-factor" in r for r in result.counts), (text, result.counts)


def test_constant_moves_across_only_within_int64() -> None:
    big = 2**63 - 1
    box = {"x": (-(2**62), 2**62)}
    assert quorem.to_text(quorem.parse(f"x + 2 < {-big + 5}", box)) == f"x < {-big + 3}"
    text = f"x + 2 < {-big}"  # c - b = -2**63 - 1 is not an int64: it stays
    assert quorem.to_text(quorem.parse(text, box)) == text


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
    g = draw(st.sampled_from([-4, -3, -2, 2, 3, 4]))
    lhs = draw(
        st.sampled_from(
            [
                f"{numerator}//{d}",
                f"({numerator}//{d})//{draw(st.sampled_from([-3, 2, 3]))}",
                f"{numerator}%{d}",
                f"x*{a} + y*{b}",
                f"x*{d}",
                f"x*{g * a} + y*{g * b} + {c}",  # a common factor, the rest a constant
                f"x*{g * a} + y",  # the rest y, in whatever range the box gives it
                f"x*{d} + {c}",
            ]
        )
    )
    op = draw(st.sampled_from(OPS))
    return f"{lhs} {op} {k}" if draw(st.booleans()) else f"{k} {op} {lhs}"


@settings(max_examples=examples(150), deadline=None)
@given(comparisons(), st.sampled_from(["floor", "trunc"]), st.integers(-8, 4), st.integers(-8, 4))
def test_simplify_keeps_value(text: str, semantics: str, lo_x: int, lo_y: int) -> None:
    bounds = {"x": (lo_x, lo_x + 4), "y": (lo_y, lo_y + 3)}
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    for x, y in itertools.product(range(lo_x, lo_x + 5), range(lo_y, lo_y + 4)):
        env = {"x": x, "y": y}
        assert quorem.evaluate(out, env) == quorem.evaluate(term, env), (text, env)


def test_every_step_decreases_the_per_node_measure() -> None:
    """The comparison rules' steps on the class corpus shrink the node they rewrite.

    The per-node order ends with the comparison weight, the only component that dividing
    a comparison through by a common factor or moving its constant changes.
    """
    corpus = Path(__file__).resolve().parent.parent / "benchmarks" / "corpora" / "compare.jsonl"
    fired = 0
    for line in corpus.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        bounds = {n: (b[0], b[1]) for n, b in case["vars"].items()}
        result = quorem.explain(quorem.parse(case["expr"], bounds, case["semantics"]))
        for step in result.trace:
            fired += step.rule in OURS
            before, after = term_measure(step.before), term_measure(step.after)
            assert after < before, (case["id"], step.rule, before, after)
    assert fired > 100


# ------------------------------------------------ sums on both sides (46-compare-common-factor)
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x*2 < y*2", "x < y"),
        ("x*4 < y*8 + 3", "x < y*2 + 1"),
        ("x*2 + 1 <= y*4", "x <= y*2 - 1"),
        ("x*3 <= y*9 - 4", "x <= y*3 - 2"),
        ("x*4 + z*2 < y*6 - 1", "x*2 + z < y*3"),
        ("x*6 == y*3 + 9", "x*2 == y + 3"),
        ("x*6 == y*3 + 4", "0"),
        ("x*4 != y*2 + 1", "1"),
        ("(x//4)*8 < y*4", "(x//4)*2 < y"),
    ],
)
def test_common_factor_of_both_sides(text: str, want: str) -> None:
    box = {**WIDE, "z": (-1000, 1000)}
    for semantics in ("floor", "trunc"):
        got = simplified(text, semantics, box)
        assert same(got, want, semantics, box), (text, semantics, got)


@pytest.mark.parametrize(
    "text",
    [
        "x*6 < y*4",  # gcd 2, but neither side's gcd divides the other side
        "x*2 < y*3",
        "x < y*4 + 2",
        "x*6 != y*9 + 4",
    ],
)
def test_common_factor_of_both_sides_stops(text: str) -> None:
    result = quorem.explain(quorem.parse(text, WIDE))
    assert not any(r.startswith("sums-") for r in result.rules), (text, result.rules)


@st.composite
def two_sided(draw: st.DrawFn) -> str:
    g = draw(st.integers(1, 4))
    left = " + ".join(f"{g * draw(st.integers(-3, 3) | st.just(1))}*{v}" for v in ("x", "z"))
    right = f"{g * draw(st.integers(-3, 3))}*y + {draw(st.integers(-9, 9))}"
    op = draw(st.sampled_from(["<", "<=", "==", "!="]))
    return f"{left} {op} {right}" if draw(st.booleans()) else f"{right} {op} {left}"


@settings(max_examples=examples(200), deadline=None)
@given(two_sided(), st.sampled_from(["floor", "trunc"]))
def test_two_sided_keeps_value(text: str, semantics: str) -> None:
    box = {"x": (-5, 5), "y": (-5, 5), "z": (-3, 3)}
    term = quorem.parse(text, box, semantics)
    out = quorem.simplify(term)
    for x, y, z in itertools.product(range(-5, 6), range(-5, 6), range(-3, 4)):
        point = {"x": x, "y": y, "z": z}
        assert quorem.evaluate(out, point) == quorem.evaluate(term, point), (text, point)
