"""``quorem verify --suggest-guard``: guard synthesis by counterexamples (quorem.verify.guards)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("z3")

from quorem.cli import verify as cli
from quorem.interpret import Env, evaluate_expr
from quorem.ops import Semantics
from quorem.rule import Binary, Expr
from quorem.rulefile import load_rule_files, parse_rules
from quorem.term import var
from quorem.verify.guards import (
    _sample_envs,
    candidate_atoms,
    rule_text_with_guard,
    suggest_guard,
)
from quorem.verify.mutate import conjuncts, render_expr
from quorem.verify.prove import obligations_of, prove

KNOWN_BUGS = sorted((Path(__file__).parent / "known_bugs").glob("*.rules"))


def _proven(rule_text: str) -> bool:
    [rule] = parse_rules(rule_text, "<suggested>")
    return all(prove(ob, 10.0).ok for ob in obligations_of(rule, 2))


@pytest.mark.slow
@pytest.mark.parametrize("path", KNOWN_BUGS, ids=lambda p: p.stem)
def test_known_bugs_get_a_proven_guard_that_keeps_the_old_one(path: Path) -> None:
    [rule] = load_rule_files([path])
    s = suggest_guard(rule, time_limit=60)
    assert s.status == "found", s.render()
    # Proven again here, from the printed text, independently of the search.
    assert _proven(s.text)
    assert s.guard is not None
    new = {render_expr(c) for c in conjuncts(s.guard)}
    if rule.guard is not None:
        assert {render_expr(c) for c in conjuncts(rule.guard)} <= new
    # Each added atom comes with a counterexample it blocks.
    assert s.added
    for atom in s.added:
        assert atom.text in s.lets_through
    assert "suggested guard, proven" in s.render()


def test_the_missing_lower_bound_is_found() -> None:
    [rule] = load_rule_files([Path(__file__).parent / "known_bugs/mod_small_range_no_lower.rules"])
    s = suggest_guard(rule)
    assert [a.text for a in s.added] == ["vmin(x) >= 0"]
    cex = s.lets_through["vmin(x) >= 0"]
    assert cex.values["vmin(x)"] < 0


@pytest.mark.slow
def test_each_dropped_atom_really_lets_its_counterexample_through() -> None:
    [rule] = load_rule_files([Path(__file__).parent / "known_bugs/xla_nested_floordiv.rules"])
    s = suggest_guard(rule)
    assert s.status == "found" and len(s.added) == 2
    for atom in s.added:
        rest = [a.expr for a in s.added if a is not atom]
        weaker = dataclasses.replace(rule, guard=rest[0] if rest else None)
        assert not all(prove(ob, 10.0).ok for ob in obligations_of(weaker, 2))


def test_a_proven_rule_needs_no_guard() -> None:
    [rule] = parse_rules(
        "rule fine\n  doc: d\n  semantics: floor\n  pattern: x % N\n"
        "  guard: vmin(x) >= 0 and vmax(x) < N\n  rewrite: x\n"
    )
    assert suggest_guard(rule).status == "already-proven"


def test_no_guard_of_the_grammar_makes_a_false_identity_true() -> None:
    [rule] = parse_rules(
        "rule wrong\n  doc: d\n  semantics: floor\n  pattern: x // N\n  rewrite: x + 1\n"
    )
    s = suggest_guard(rule, time_limit=20, max_atoms=2)
    assert s.status == "not-found"
    assert s.counterexamples


def test_atoms_and_text() -> None:
    [rule] = parse_rules(
        "# a comment\nrule r\n  doc: d\n  semantics: floor\n  pattern: (x // B) // C\n"
        "  guard: C > 0\n    and B > 0\n  rewrite: x // (B*C)\n"
    )
    texts = [a.text for a in candidate_atoms(rule)]
    assert "C > 0" not in texts  # already a conjunct of the guard
    assert {"B >= 0", "divides(B, C)", "vmin(x) >= 0", "fits_int64(B * C)"} <= set(texts)
    [back] = parse_rules(rule_text_with_guard(rule, parse_guard("C > 0 and B > 1")))
    assert render_expr(back.guard) == "C > 0 and B > 1"  # type: ignore[arg-type]
    [unguarded] = parse_rules(
        "rule u\n  doc: d\n  semantics: floor\n  pattern: x // N\n  rewrite: x\n"
    )
    [added] = parse_rules(rule_text_with_guard(unguarded, parse_guard("N == 1", "x // N")))
    assert render_expr(added.guard) == "N == 1"  # type: ignore[arg-type]


def parse_guard(text: str, pattern: str = "(x // B) // C") -> Expr:
    """The guard expression ``text`` for a rule matching ``pattern``."""
    [r] = parse_rules(
        f"rule g\n  doc: d\n  semantics: floor\n  pattern: {pattern}\n  guard: {text}\n"
        "  rewrite: x\n"
    )
    assert r.guard is not None
    return r.guard


@pytest.mark.slow
def test_cli_flag(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(Path(__file__).parent / "known_bugs/xla_nested_floordiv.rules")
    code = cli.main([path, "--suggest-guard", "--no-cache", "--obligation", "equivalence"])
    out = capsys.readouterr().out
    assert code == 1  # the rule as written is still unsound
    assert "suggested guard, proven" in out
    assert "guard:     C >= 0" in out
    code = cli.main([path, "--suggest-guard", "--no-cache", "--json", "--no-record"])
    data = json.loads(capsys.readouterr().out)
    [s] = data["suggestions"]
    assert s["status"] == "found" and "C >= 0" in s["added"]


@pytest.mark.slow
def test_a_missing_product_equation_is_found() -> None:
    # Two nested floor divisions are one division by the product: the guard must say
    # which constant is the product, an equation the grammar states as `A * B == C`.
    [rule] = parse_rules(
        "rule r\n  doc: d\n  semantics: floor\n  pattern: (x // A) // B - x // C\n"
        "  guard: A > 0 and B > 0\n  rewrite: 0\n"
    )
    s = suggest_guard(rule, time_limit=60)
    assert s.status == "found", s.render()
    assert [a.text for a in s.added] == ["A * B == C"]
    assert _proven(s.text)
    cex = s.lets_through["A * B == C"].values
    assert cex["A"] * cex["B"] != cex["C"]


@pytest.mark.slow
def test_a_fold_rule_gets_its_range_constancy_guard() -> None:
    # The fold rules need `vmin(p) == vmax(p)` of a compound part p of the pattern.
    [rule] = parse_rules(
        "rule f\n  doc: d\n  semantics: floor, trunc\n  pattern: x // y\n  rewrite: vmin(x // y)\n"
    )
    assert "vmin(x // y) == vmax(x // y)" in [a.text for a in candidate_atoms(rule)]
    s = suggest_guard(rule, time_limit=60)
    assert s.status == "found", s.render()
    assert [a.text for a in s.added] == ["vmin(x // y) == vmax(x // y)"]
    assert _proven(s.text)


def test_grammar_has_differences_shifts_and_term_bounds() -> None:
    [rule] = parse_rules(
        "rule g\n  doc: d\n  semantics: floor\n  pattern: (a + C1) // M - (a + C2) // M\n"
        "  rewrite: 0\n"
    )
    texts = {a.text for a in candidate_atoms(rule)}
    assert {"divides(M, C1 - C2)", "vmin(a + C1) >= 0", "vmax(a + C2) <= 0"} <= texts
    assert {"fits_int64(a)", "C1 == C2 + 1", "floormod(C1 - C2, 2) == 1"} <= texts


def test_grammar_has_constancy_of_ranges_read() -> None:
    # `vmin(x // y)` read by the rewrite of `x % y`: its constancy is a candidate.
    [rule] = parse_rules(
        "rule b\n  doc: d\n  semantics: floor\n  pattern: x % y + x % N\n"
        "  rewrite: x - y * vmin(x // y) + x\n"
    )
    texts = {a.text for a in candidate_atoms(rule)}
    assert "vmin(x // y) == vmax(x // y)" in texts


@pytest.mark.slow
def test_a_guard_no_conjunction_states_is_found_as_a_disjunction() -> None:
    # min-of-quotients without its guard `K > 0 and vmin(d) > 0 or K < 0 and vmax(d) < 0`:
    # each sign case alone is a proven conjunction; only their disjunction is as weak.
    [rule] = parse_rules(
        "rule one-sign\n  doc: d\n  semantics: floor\n"
        "  pattern: min(K*(x // d) + C, K*(y // d) + C)\n"
        "  rewrite: K*(min(x, y) // d) + C\n"
    )
    s = suggest_guard(rule, time_limit=60)
    assert s.status == "found", s.render()
    assert s.guard is not None and isinstance(s.guard, Binary) and s.guard.op == "or"
    assert _proven(s.text)
    # Both sign cases fire: K > 0 with d > 0, and K < 0 with d < 0.
    for k, lo, hi in ((2, 1, 5), (-2, -5, -1)):
        env: Env = {"K": k, "C": 0, "x": var("x", 0, 9), "y": var("y", 0, 9), "d": var("d", lo, hi)}
        assert evaluate_expr(s.guard, env, Semantics.FLOOR) is True, (k, render_expr(s.guard))


def test_a_comparison_rewrite_offers_fits_int64_of_its_operands() -> None:
    # `x // D <= C` -> `x <= C*D + D - 1`: the value to bound is the comparison's operand.
    [rule] = parse_rules(
        "rule cmp\n  doc: d\n  semantics: floor\n  pattern: x // D <= C\n"
        "  guard: D > 0\n  rewrite: x <= C*D + D - 1\n"
    )
    texts = {a.text for a in candidate_atoms(rule)}
    assert {"fits_int64(C * D)", "fits_int64(C * D + D)", "fits_int64(C * D + D - 1)"} <= texts


def test_samples_satisfy_a_guard_that_defines_a_constant() -> None:
    # `T == S * M1`: random small values almost never satisfy it; the sampler solves it.
    [rule] = parse_rules(
        "rule radix\n  doc: d\n  semantics: floor\n  pattern: (x // S) % M1 * T\n"
        "  guard: T == S * M1 and S > 0\n  rewrite: (x // S) % M1 * T\n"
    )
    envs = _sample_envs(rule, 2, 200)
    assert len(envs) >= 100
    assert all(env["T"] == env["S"] * env["M1"] for env, _ in envs)  # type: ignore[operator]


def test_the_budget_is_a_count_of_candidates_not_seconds() -> None:
    # No guard of the grammar makes this true: the search ends exactly at its budget,
    # however fast or slow the machine, and says which budget stopped it.
    [rule] = parse_rules(
        "rule wrong\n  doc: d\n  semantics: floor\n  pattern: x // N\n  rewrite: x + 1\n"
    )
    s = suggest_guard(rule, max_candidates=3, time_limit=600)
    assert s.status == "not-found"
    assert s.candidates_tried == 3
    assert "3 candidates tried" in s.note


@pytest.mark.slow
def test_the_same_rule_gets_the_same_guard_twice() -> None:
    # The budget is candidates and Z3 resources, not time: two runs find the same guard
    # (the counterexamples on the way may differ: Z3 may pick other models).
    [rule] = load_rule_files([Path(__file__).parent / "known_bugs/xla_nested_floordiv.rules"])
    runs = [suggest_guard(rule, time_limit=600) for _ in range(2)]
    assert runs[0].status == runs[1].status == "found"
    assert [a.text for a in runs[0].added] == [a.text for a in runs[1].added]


def test_a_tiny_resource_limit_proves_nothing() -> None:
    # The guard search's per-query budget: Z3's resource count. At 1 unit a query is
    # unknown -- never proven -- and at the default the same obligation is proven.
    [rule] = parse_rules(
        "rule fine\n  doc: d\n  semantics: floor\n  pattern: (x // B) // C\n"
        "  guard: B > 0 and C > 0\n  rewrite: x // (B * C)\n"
    )
    [ob] = [ob for ob in obligations_of(rule, 2) if ob.kind == "equivalence"]
    assert prove(ob, 60.0, rlimit=1).status in ("unknown", "proven-on-grid(B, C in -3..4 but 0)")
    assert not prove(ob, 60.0, rlimit=1).ok
    assert prove(ob, 60.0, rlimit=10**8).ok
