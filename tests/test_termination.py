"""Termination: every rule makes the term it rewrites smaller in one declared order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from strategies import Case, cases  # noqa: E402
from support import examples, run_verify  # noqa: E402

import quorem  # noqa: E402
from quorem.cli import verify as cli  # noqa: E402
from quorem.cli.verify import verify_rules  # noqa: E402
from quorem.ops import Op, Semantics  # noqa: E402
from quorem.rewrite import rewrite  # noqa: E402
from quorem.rule import Rule  # noqa: E402
from quorem.rulefile import parse_rules  # noqa: E402
from quorem.ruleset import default_ruleset  # noqa: E402
from quorem.term import _make_binary, const, var  # noqa: E402
from quorem.verify.cache import ProofCache  # noqa: E402
from quorem.verify.termination import (  # noqa: E402
    COMPONENTS,
    check_termination,
    rule_measures,
    term_measure,
    termination_obligations,
)

LOOPING = """
rule mod-add-divisor
  doc:       x % n == (x + n) % n: true, and never done
  semantics: floor
  pattern:   x % N
  guard:     N > 0
  rewrite:   (x + N) % N

rule div-scale-up
  doc:       x // n == (2x) // (2n): true, and never done
  semantics: floor
  pattern:   x // N
  guard:     N > 0
  rewrite:   (x*2) // (N*2)

rule grow
  doc:       x // 2 becomes (x + 2) // 2 - 1: true, and never done
  semantics: floor
  pattern:   (x + C) // 2
  rewrite:   (x + C + 2) // 2 - 1
"""

DUPLICATING = """
rule mod-expand
  doc:       x % n == x - (x // n)*n: true, but it copies x
  semantics: floor
  pattern:   x % N
  rewrite:   x - (x // N)*N
"""

SWAP = """
rule swap
  doc:       max(x, y) == max(y, x), the same canonical term
  semantics: any
  pattern:   max(x, y)
  rewrite:   max(y, x)
"""


def _rule(text: str, name: str) -> Rule:
    return next(r for r in parse_rules(text) if r.name == name)


def _only(text: str) -> Rule:
    (rule,) = parse_rules(text)
    return rule


# ---------------------------------------------------------------- the shipped rules
@pytest.mark.slow
@pytest.mark.catalogue
def test_every_shipped_rule_is_shown_decreasing() -> None:
    """Every instance of every shipped rule decreases the measure (and none vacuously)."""
    for rule in default_ruleset():
        for ob in termination_obligations(rule):
            r = check_termination(ob)
            assert r.status == "proven", r.report
            assert r.method.startswith("measure: "), (rule.name, r.method)


@pytest.mark.parametrize(
    ("name", "component"),
    [
        ("divmod-recombine", "div/mod count"),
        ("exact-quotient", "div/mod count"),
        ("div-by-common-factor", "divisor magnitude"),
        ("div-split-offset", "misplaced constants"),
        ("mod-reduce-coefficients", "misplaced constants"),
        ("div-drop-small-offset", "node count"),
        ("fold-max-by-range", "node count"),
    ],
)
def test_decreasing_component(name: str, component: str) -> None:
    """The method names the component that decreases (one rule of each kind)."""
    rule = default_ruleset().rule(name)
    for ob in termination_obligations(rule, max_arity=2):
        assert check_termination(ob).method == f"measure: {component}"


# ---------------------------------------------------------------- rules that do not
@pytest.mark.parametrize(
    ("name", "component"),
    [
        ("mod-add-divisor", "misplaced constants"),
        ("div-scale-up", "divisor magnitude"),
        ("grow", "misplaced constants"),
    ],
)
def test_looping_rule_is_not_shown_decreasing(name: str, component: str) -> None:
    """A true rule whose rewrite is no smaller is ``unknown``, naming the component."""
    (ob,) = termination_obligations(_rule(LOOPING, name))
    r = check_termination(ob)
    assert r.status == "unknown" and not r.ok
    assert f"{component} may grow" in r.report, r.report
    assert r.counterexample is not None
    pattern = r.counterexample[f"pattern {component}"]
    assert r.counterexample[f"rewrite {component}"] > pattern


def test_duplicating_rule_is_rejected() -> None:
    """A rewrite that copies a term variable is never shown decreasing, and says why."""
    (ob,) = termination_obligations(_only(DUPLICATING))
    r = check_termination(ob)
    assert r.status == "unknown"
    assert "the rewrite mentions x twice, the pattern once" in r.report, r.report


def test_canonical_no_op_is_not_decreasing() -> None:
    """Rewriting a term to itself (up to canonical order) decreases nothing."""
    (ob,) = termination_obligations(_only(SWAP))
    r = check_termination(ob)
    assert r.status == "unknown"
    assert "no component shrinks" in r.report


def test_combining_numerator_is_unbounded() -> None:
    """Addends from different sums may combine: their misplaced count is not claimed."""
    rule = _only(
        "rule r\n  doc: d\n  semantics: floor\n  pattern: max(a + C, b) // D\n"
        "  guard: D > 0\n  rewrite: (a + b) // D\n"
    )
    (ob,) = termination_obligations(rule)
    r = check_termination(ob)
    assert r.status == "unknown"
    assert "misplaced constants of the rewrite cannot be bounded" in r.report


# ---------------------------------------------------------------- the measure itself
def test_term_measure_components() -> None:
    """The concrete measure of small terms, component by component."""
    x, y = var("x"), var("y")
    # (x + 7) // 3: one division by 3, its constant 7 is misplaced; N = 2 + x + 7 + 3.
    assert term_measure(quorem.parse("(x + 7) // 3")) == (0, 1, 3, 1, 5, 0)
    assert term_measure(quorem.parse("(x + 1) // 3 + 2")) == (0, 1, 3, 0, 6, 0)
    # Coefficients count too; a divisor that is not a constant adds its weight (the sum
    # of its coefficients' and constant's magnitudes) to V, and every entry of its
    # numerator to P (taking a multiple of a symbolic divisor out decreases it).
    assert term_measure(quorem.parse("(4*x + y) % 3")) == (0, 1, 3, 1, 5, 0)
    assert term_measure(quorem.parse("x % y")) == (0, 1, 1, 1, 4, 0)
    assert term_measure(quorem.parse("x % (-2*y + 3)")) == (0, 1, 5, 1, 5, 0)
    assert term_measure(quorem.parse("(a*n + b) // n")) == (0, 1, 1, 2, 8, 0)
    assert term_measure(quorem.parse("a + b // n")) == (0, 1, 1, 1, 5, 0)
    # (4x) // (2y) => (2x) // y: the divisor weight decreases.
    assert term_measure(quorem.parse("(4*x) // (2*y)"))[2] == 2
    assert term_measure(quorem.parse("(2*x) // y"))[2] == 1
    # (6x + 4) // 8 => (3x + 2) // 4: the divisor magnitude decreases.
    assert term_measure(quorem.parse("(6*x + 4) // 8"))[2] == 8
    assert term_measure(quorem.parse("(3*x + 2) // 4"))[2] == 4
    # Sums are transparent; a zero constant weighs nothing; an operator weighs 2.
    assert term_measure(x + y) == (0, 0, 0, 0, 2, 0)
    assert term_measure(x * 5 + 0) == (0, 0, 0, 0, 1, 0)
    assert term_measure(const(0)) == (0, 0, 0, 0, 0, 0)
    assert term_measure(quorem.parse("max(x, 0)")) == (0, 0, 0, 0, 3, 0)
    # Folding 0 <= 0 to 1 decreases the node count: the reason an operator weighs 2.
    # (compare() folds constant sides itself now; the node is what a rule instance sees.)
    assert term_measure(_make_binary(Op.LE, const(0), const(0))) > term_measure(const(1))
    # A subterm occurring twice counts twice.
    assert term_measure(quorem.parse("max(x // 3, x // 3 + 1)"))[1] == 2
    # A comparison weighs its operands' |coefficients| and |constants|, plus one per
    # operand with both atoms and a constant: x*3 < 10 is 3 + 10; dividing through by 3
    # gives x < 4, 1 + 4, which the node count (the same) cannot see; x < y + 1 is 1 and
    # 1 + 1 + 1 (y's side has an atom and a constant).
    assert term_measure(quorem.parse("x*3 < 10")) == (0, 0, 0, 0, 4, 13)
    assert term_measure(quorem.parse("x < 4")) == (0, 0, 0, 0, 4, 5)
    assert term_measure(quorem.parse("x < y + 1"))[5] == 4
    assert term_measure(quorem.parse("x < -1"))[5] == 2
    assert term_measure(quorem.parse("4*a + 8*b + r < 16"))[5] == 4 + 8 + 1 + 16
    # x - 2 == y is built as x == y + 2 (constants go right).
    assert term_measure(quorem.parse("max(x*3 < 10, x - 2 == y)"))[5] == 13 + 1 + 1 + 2 + 1


def _value(v: object, model: Any) -> int:  # a z3.ModelRef (Z3's values are Any to mypy)
    return int(model.eval(v, model_completion=True).as_long())


def test_symbolic_measure_matches_concrete_instance() -> None:
    """With constants fixed and variables plain, the symbolic measures are the concrete ones."""
    rule = default_ruleset().rule("div-split-offset")
    ms = rule_measures(rule, Semantics.FLOOR)
    s = z3.Solver()
    s.add(*ms.premises, *ms.axioms, *[a == b for a, b in ms.plain])
    s.add(ms.symbols["C"] == 7, ms.symbols["D"] == 3)
    assert s.check() == z3.sat
    model = s.model()
    pattern = tuple(_value(c, model) for c in ms.pattern)
    rewritten = tuple(_value(c, model) for c in ms.rewrite)
    assert pattern == term_measure(quorem.parse("(x + 7) // 3"))
    assert rewritten == term_measure(quorem.parse("(x + 1) // 3 + 2"))


def test_symbolic_measure_of_variables() -> None:
    """A term variable contributes its unknowns once per occurrence."""
    rule = default_ruleset().rule("max-of-same")
    ms = rule_measures(rule, None)
    n_x = ms.symbols["N(x)"]
    assert z3.simplify(ms.pattern[4] - (2 + 2 * n_x)).eq(z3.IntVal(0))
    assert z3.simplify(ms.rewrite[4] - n_x).eq(z3.IntVal(0))
    assert ms.pattern_uses["x"] == 2 and ms.rewrite_uses["x"] == 1
    assert len(ms.pattern) == len(ms.rewrite) == len(COMPONENTS)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_every_rewrite_step_decreases_the_concrete_measure(case: Case) -> None:
    """What the prover shows per rule, checked on the engine's actual steps."""
    result = rewrite(case.term, default_ruleset(), trace=True, max_steps=500)
    for step in result.trace:
        before, after = term_measure(step.before), term_measure(step.after)
        assert after < before, (step.rule, str(step.before), str(step.after), before, after)


# ---------------------------------------------------------------- quorem verify
def test_cli_reports_non_decreasing_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`quorem verify FILE --obligation termination` exits 3 for a rule not shown decreasing."""
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "loop.rules"
    rules.write_text(LOOPING)
    code, out = run_verify([str(rules), "--obligation", "termination"], capsys)
    assert code == cli.EXIT_UNKNOWN
    assert "unknown" in out and "may grow" in out and "not shown decreasing" in out

    code, out = run_verify([str(rules), "--obligation", "termination", "--json"], capsys)
    assert code == cli.EXIT_UNKNOWN
    data = json.loads(out)
    entries = data["rules"]
    assert {e["obligation"] for e in entries} == {"termination"}
    assert all(e["status"] == "unknown" for e in entries)
    assert set(entries[0]) == {
        "name",
        "file",
        "line",
        "semantics",
        "obligation",
        "status",
        "method",
        "seconds",
        "counterexample",
    }
    code, _ = run_verify([str(rules), "--obligation", "termination", "--allow-unknown"], capsys)
    assert code == cli.EXIT_PROVEN


def test_cli_default_includes_termination(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --obligation, a sound but non-decreasing rule still fails verification."""
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "swap.rules"
    rules.write_text(SWAP)
    code, out = run_verify([str(rules), "--json", "--junit", str(tmp_path / "junit.xml")], capsys)
    by_kind = {e["obligation"]: e["status"] for e in json.loads(out)["rules"]}
    assert by_kind["equivalence"] == "proven"
    assert by_kind["termination"] == "unknown"
    assert code == cli.EXIT_UNKNOWN
    junit = (tmp_path / "junit.xml").read_text()
    assert "swap [any termination]" in junit and "<error" in junit


def test_cli_shipped_rules_and_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped rules pass `--obligation termination`; a second run is served by the cache."""
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["--obligation", "termination", "--rule", "div-by-common-factor"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN
    assert "[floor termination k=4] measure: divisor magnitude" in out
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN and "(cached)" in out


def test_termination_results_cache_only_proofs(tmp_path: Path) -> None:
    """Proofs are cached, failures are checked again."""
    cache = ProofCache(tmp_path / "proofs.json")
    rules = [_rule(LOOPING, "grow"), default_ruleset().rule("div-by-one")]
    first = verify_rules(rules, [], kinds=["termination"], cache=cache)
    # div-by-one: one proof per semantics (floor, trunc, euclid).
    assert [r["status"] for r in first] == ["unknown", "proven", "proven", "proven"]
    again = ProofCache(tmp_path / "proofs.json")
    second = verify_rules(rules, [], kinds=["termination"], cache=again)
    assert [bool(r.get("cached")) for r in second] == [False, True, True, True]


def test_junction_count_comes_first() -> None:
    """``J`` counts ``and``/``or`` nodes; merging two clauses lowers it before ``D`` is read."""
    assert term_measure(quorem.parse("x < 3 and y < 4 and (z < 5 or x == 1)"))[0] == 3
    band = term_measure(quorem.parse("0 <= x - y*5 and x - y*5 < 5"))
    merged = term_measure(quorem.parse("y == x // 5"))
    assert merged[0] < band[0] and merged[1] > band[1] and merged < band
    for name in ("band-quotient", "band-quotient-sides-le-rest"):
        rule = default_ruleset().rule(name)
        for ob in termination_obligations(rule):
            assert check_termination(ob).method == "measure: junction count"
