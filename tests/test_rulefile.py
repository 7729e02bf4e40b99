"""The rule language: parsing rules files, and rejecting bad ones with file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest

import quorem
from quorem.rule import PConst, POp, PSum, PTerm
from quorem.rulefile import load_rule_files, parse_rules
from quorem.ruleset import RuleSet

GOOD = """\
# a comment
rule mod-of-small-range
  doc:       x % n is x when 0 <= x < n
  semantics: floor, trunc
  pattern:   x % N
  guard:     vmin(x) >= 0
             and vmax(x) < N
  rewrite:   x
"""


def test_parses_fields_and_continuation_lines() -> None:
    """A rule's fields are read, and an indented line continues the previous field."""
    (rule,) = parse_rules(GOOD, "good.rules")
    assert rule.name == "mod-of-small-range"
    assert rule.doc == "x % n is x when 0 <= x < n"
    assert [s.value for s in rule.semantics] == ["floor", "trunc"]
    assert rule.pattern == POp("mod", (PTerm("x"), PConst("N")))
    assert rule.location == "good.rules:2"
    assert rule.guard is not None


def test_sum_pattern_with_rest_and_coefficients() -> None:
    """Addends with coefficients, a constant and a bare rest variable form one sum pattern."""
    (rule,) = parse_rules(
        "rule r\n  doc: d\n  semantics: floor\n  pattern: (x % C1)*C2 + (x // C1)*C3 + y\n"
        "  guard: C1*C2 == C3\n  rewrite: x*C2 + y\n"
    )
    assert isinstance(rule.pattern, PSum)
    assert rule.pattern.rest == "y"
    assert len(rule.pattern.addends) == 2


def _error(text: str) -> quorem.RuleError:
    with pytest.raises(quorem.RuleError) as info:
        RuleSet.from_text(text, "bad.rules", allow_unproven=True)
    return info.value


HEADER = "rule r\n  doc: d\n  semantics: floor\n"


@pytest.mark.parametrize(
    ("text", "line", "col", "fragment"),
    [
        ("rule Bad_Name\n", 1, 6, "kebab-case"),
        ("rul r\n", 1, 1, "expected 'rule NAME'"),
        (HEADER + "  pattern: x % N\n", 1, 1, "no 'rewrite' field"),
        (HEADER + "  pattern: x % N\n  rewrite: z\n", 5, 12, "'z' is not bound"),
        (HEADER + "  pattern: x % N\n  rewrite: x\n  colour: red\n", 6, 3, "unknown field"),
        (HEADER + "  pattern: x %% N\n  rewrite: x\n", 4, 15, "expected an operand"),
        (HEADER + "  pattern: x % N\n  guard: x\n  rewrite: x\n", 5, 10, "condition"),
        (HEADER + "  pattern: x % N\n  guard: foo(x)\n  rewrite: x\n", 5, 10, "unknown function"),
        (HEADER + "  pattern: x % N\n  rewrite: vmin(x) < 3\n", 5, 12, "not a condition"),
        (HEADER + "  pattern: x\n  rewrite: x\n", 4, 12, "operator at its root"),
        (HEADER + "  pattern: x + y + z % 2\n  rewrite: x\n", 4, 16, "at most one rest"),
        (HEADER + "  pattern: x / 2\n  rewrite: x\n", 4, 14, "use // for division"),
        (HEADER + "  phase: later\n  pattern: x % 2\n  rewrite: x\n", 4, 10, "unknown phase"),
        (HEADER + "  pattern: (sum(K*t) + C) // D\n  guard: K > 0\n  rewrite: t\n", 5, 10, ""),
        (
            "rule r\n  doc: d\n  semantics: any\n  pattern: x // 2\n  rewrite: x\n",
            3,
            14,
            "semantics",
        ),
        ("rule r\n  doc: d\n  semantics: ceil\n  pattern: x // 2\n  rewrite: x\n", 3, 14, "ceil"),
        (GOOD + GOOD, 10, 1, "duplicate rule name"),
    ],
)
def test_bad_rules_are_rejected_with_position(
    text: str, line: int, col: int, fragment: str
) -> None:
    """Malformed or inconsistent rules give a RuleError naming file, line, column and reason."""
    err = _error(text)
    assert (err.source, err.line, err.col) == ("bad.rules", line, col), str(err)
    assert fragment in str(err)
    assert str(err).startswith(f"bad.rules:{line}:{col}: ")


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    """A rule name used in two files is rejected, naming where it was first defined."""
    a = tmp_path / "a.rules"
    b = tmp_path / "b.rules"
    a.write_text(GOOD)
    b.write_text(GOOD)
    with pytest.raises(quorem.RuleError, match=r"first defined at .*a\.rules:2"):
        load_rule_files([a, b])


def test_unreadable_file_is_a_rule_error(tmp_path: Path) -> None:
    """A missing rules file is reported as a RuleError with its path."""
    with pytest.raises(quorem.RuleError, match="cannot read"):
        load_rule_files([tmp_path / "missing.rules"])


def test_let_names_are_usable_in_guard_and_rewrite() -> None:
    """``let`` computes named constants from the match for the guard and the rewrite."""
    rules = RuleSet.from_text(
        "rule half\n  doc: d\n  semantics: floor\n  pattern: (x*K) // D\n"
        "  let: G = gcd(K, D); H = K // G\n  guard: G > 1\n  rewrite: (x*H) // (D // G)\n",
        allow_unproven=True,
    )
    x = quorem.var("x", 0, 100)
    assert str(quorem.simplify(quorem.parse("(x*6)//4", {"x": (0, 100)}), rules)) == "(x*3)//2"
    assert quorem.simplify(x, rules) is x


PER_ADDEND = (
    "rule halve-all\n  doc: d\n  semantics: floor\n  pattern: (sum(K*t) + C) // D\n"
    "  let: H = K // 2\n  guard: all(K == 2*H) and D == 2 and C == 0\n  rewrite: sum(H*t)\n"
)


def test_per_addend_let_ranges_over_the_sequence() -> None:
    """A let over ``sum(K*t)`` names one value per addend, usable inside aggregates."""
    rules = RuleSet.from_text(PER_ADDEND, allow_unproven=True)
    bounds = {"x": (0, 9), "y": (0, 9)}
    got = quorem.simplify(quorem.parse("(4*x + 6*y)//2", bounds), rules)
    assert got is quorem.parse("2*x + 3*y", bounds)
    odd = quorem.parse("(3*x + 6*y)//2", bounds)
    assert quorem.simplify(odd, rules) is odd


def test_per_addend_let_outside_an_aggregate_is_an_error() -> None:
    """A per-addend let is a sequence: using it outside sum/all/any is reported."""
    bad = PER_ADDEND.replace("all(K == 2*H)", "H > 0")
    with pytest.raises(quorem.RuleError, match=r"<rules>:6:10: .*one value per addend"):
        parse_rules(bad)


def test_shipped_rules_load_and_are_documented() -> None:
    """Every shipped rule has a unique kebab-case name, a doc line and a location."""
    rules = quorem.default_ruleset().rules
    assert len(rules) >= 30
    names = [r.name for r in rules]
    assert len(set(names)) == len(names)
    for r in rules:
        assert r.doc and r.file.endswith(".rules") and r.line > 0


def test_semantics_instances() -> None:
    """A rule stated for floor and trunc is instantiated for each; 'any' once."""
    rs = quorem.default_ruleset()
    sems = {(c.name, c.semantics) for c in rs.compiled}
    assert ("mod-of-small-range", quorem.Semantics.FLOOR) in sems
    assert ("mod-of-small-range", quorem.Semantics.TRUNC) in sems
    assert ("mod-drop-multiple", quorem.Semantics.TRUNC) not in sems
    assert ("max-of-same", None) in sems


def test_rules_only_fire_for_their_semantics() -> None:
    """A floor-only rule does not rewrite truncating division."""
    b = {"x": (-100, 100)}
    floor = quorem.simplify(quorem.parse("(x + 70)//8", b, "floor"))
    trunc = quorem.simplify(quorem.parse("(x + 70)//8", b, "trunc"))
    assert str(floor) == "(x + 6)//8 + 8"
    assert quorem.to_text(trunc, quorem.Semantics.TRUNC) == "(x + 70)//8"


def test_absurdly_deep_rule_is_a_rule_error() -> None:
    """A rule nested thousands deep gets a RuleError, not a RecursionError traceback."""
    deep = "max(" * 5000 + "x" + ", 1)" * 5000
    text = f"rule deep\n  doc: d\n  semantics: floor\n  pattern: {deep} % N\n  rewrite: x\n"
    with pytest.raises(quorem.RuleError, match="nested too deeply"):
        RuleSet.from_text(text, "deep.rules", allow_unproven=True)


def test_deep_rule_is_refused_whatever_the_recursion_limit() -> None:
    """The depth check does not rely on RecursionError: a raised limit changes nothing."""
    import sys

    deep = "max(" * 150 + "x" + ", 1)" * 150
    text = f"rule deep\n  doc: d\n  semantics: floor\n  pattern: {deep} % N\n  rewrite: x\n"
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        with pytest.raises(quorem.RuleError, match=r"deep\.rules:4:\d+: nested too deeply"):
            RuleSet.from_text(text, "deep.rules", allow_unproven=True)
    finally:
        sys.setrecursionlimit(old)


def test_zero_coefficient_addend_is_rejected() -> None:
    """A pattern addend scaled by 0 can never match a canonical sum, so it is an error."""
    text = "rule z\n  doc: d\n  semantics: floor\n  pattern: (0*x + y) // N\n  rewrite: y // N\n"
    with pytest.raises(quorem.RuleError, match="coefficient 0"):
        RuleSet.from_text(text, "z.rules", allow_unproven=True)


def test_gcd_of_a_sequence_inside_a_call_is_one_value() -> None:
    """``divides(gcd(K), C)``: gcd takes every coefficient, once (it crashed the
    interpreter, which expanded gcd(K) per addend inside the call)."""
    rules = quorem.RuleSet.from_text(
        "rule fold-scaled-lt\n"
        "  doc:       sum(k*t) < c == sum((k/g)*t) < c/g when g = gcd(k) divides c\n"
        "  semantics: floor\n"
        "  pattern:   sum(K*t) + 0 < C\n"
        "  guard:     gcd(K) > 1 and divides(gcd(K), C)\n"
        "  let:       G = gcd(K)\n"
        "  rewrite:   sum((K // G)*t) < C // G\n",
        allow_unproven=True,
    )
    t = quorem.parse("x*4 + y*8 < 16", {"x": (0, 9), "y": (0, 9)})
    assert quorem.to_text(quorem.simplify(t, rules)) == "x + y*2 < 4"
