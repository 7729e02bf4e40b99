"""The fixed-point rewriter: termination, stop reasons, traces, scale."""

from __future__ import annotations

import dataclasses

import pytest
from support import assert_equivalent

import quorem
from quorem.ruleset import RuleSet

LOOPING = """
rule swap-forward
  doc: max(x, y) + 1 becomes min(x, y) + 1 (deliberately cyclic with swap-back)
  semantics: any
  pattern: max(x, y) + 1
  rewrite: min(x, y) + 1

rule swap-back
  doc: the inverse of swap-forward
  semantics: any
  pattern: min(x, y) + 1
  rewrite: max(x, y) + 1
"""

GROWING = """
rule grow
  doc: x // 2 becomes (x + 2) // 2 - 1: true, and never done
  semantics: floor
  pattern: (x + C) // 2
  rewrite: (x + C + 2) // 2 - 1
"""


def test_fixed_point_reason_and_trace() -> None:
    """A normal run ends at a fixed point and its trace lists each rule with before/after."""
    b = {"R3": (0, 3), "R4": (0, 1), "R2": (0, 3)}
    t = quorem.parse("((R3*8 + R4*4 + R2)//8)*8 + (R3*8 + R4*4 + R2)%8", b)
    r = quorem.explain(t)
    assert r.reason is quorem.StopReason.FIXED_POINT
    assert str(r.term) == "R2 + R3*8 + R4*4"
    assert r.steps == len(r.trace) == sum(r.counts.values())
    assert [s.rule for s in r.trace] == ["divmod-recombine"]  # the early phase
    for step in r.trace:
        assert step.before is not step.after
    assert r.rules == list(dict.fromkeys(s.rule for s in r.trace))


def test_cycle_is_detected_not_looped() -> None:
    """Two rules that undo each other stop with reason CYCLE instead of hanging."""
    rules = RuleSet.from_text(LOOPING, allow_unproven=True)
    t = quorem.parse("max(a, b) + 1")
    r = quorem.explain(t, rules)
    assert r.reason is quorem.StopReason.CYCLE
    assert r.steps <= 3


def test_step_limit_is_reported() -> None:
    """A rule that always applies exhausts the step budget, and the result says so."""
    rules = RuleSet.from_text(GROWING, allow_unproven=True)
    t = quorem.parse("x // 2", {"x": (0, 10)})
    r = quorem.explain(t, rules, max_steps=50)
    assert r.reason is quorem.StopReason.STEP_LIMIT
    assert r.steps == 50
    assert_equivalent(t, r.term, {"x": (0, 10)})


def test_shared_subterm_simplified_once() -> None:
    """Memoisation: a subterm used many times is rewritten once."""
    x = quorem.var("x")
    inner = (x % 8) + (x // 8) * 8  # simplifies to x with one rule application
    big = quorem.sum_of(quorem.maximum(inner, quorem.const(k)) for k in range(50))
    r = quorem.explain(big)
    assert r.counts["divmod-recombine"] == 1


def test_deep_nested_sum() -> None:
    """A sum nested 100 000 deep parses and simplifies without recursion errors."""
    depth = 100_000
    text = "x" + "".join(f" + (y{i % 7} % 8 + 1" for i in range(depth)) + ")" * depth
    bounds = {f"y{i}": (0, 7) for i in range(7)} | {"x": (0, 5)}
    t = quorem.parse(text, bounds)
    r = quorem.explain(t)
    assert r.reason is quorem.StopReason.FIXED_POINT
    want = quorem.sum_of(
        [
            quorem.var("x", 0, 5),
            depth,
            *[quorem.var(f"y{i}", 0, 7) * len(range(i, depth, 7)) for i in range(7)],
        ]
    )
    assert r.term is want


@pytest.mark.slow
def test_deep_nested_divisions() -> None:
    """A chain of 100 000 nested divisions and remainders simplifies iteratively, correctly."""
    depth = 100_000
    x = quorem.var("x", 0, 10**6)
    y = quorem.var("y", 0, 3)
    t = x
    for i in range(depth):
        t = (t + y) % 8 if i % 2 else (t * 3 + 1) // 2
    r = quorem.explain(t)
    assert r.reason is quorem.StopReason.FIXED_POINT
    for env in ({"x": 0, "y": 0}, {"x": 999_999, "y": 3}, {"x": 12345, "y": 2}):
        assert quorem.evaluate(r.term, env) == quorem.evaluate(t, env)


@pytest.mark.slow
def test_sum_of_ten_thousand_terms() -> None:
    """A sum of 10 000 addends with divisions to fold simplifies correctly."""
    n = 10_000
    bounds = {f"v{i}": (0, 9) for i in range(n)}
    text = " + ".join(f"v{i}%{10 + i % 5} + (v{i}//8)*3" for i in range(n))
    t = quorem.parse(text, bounds)
    got = quorem.simplify(t)
    assert quorem.count_divmod(got) == n  # v%k folds (v < 10 <= k); v//8 stays
    env = {name: (i * 7) % 10 for i, name in enumerate(bounds)}
    assert quorem.evaluate(got, env) == quorem.evaluate(t, env)


def test_early_phase_recombines_before_numerators_change() -> None:
    """``phase: early`` rules run alone first: the div-mod identity still sees one x.

    Run with every rule in one phase, mod-reduce-coefficients first rewrites
    ``(4*i + j) % 3`` to ``(i + j) % 3`` and the identity no longer matches.
    """
    bounds = {"i": (0, 2), "j": (0, 3)}
    text = "((4*i + j)//6)*6 + (((4*i + j)//3)%2)*3 + (4*i + j)%3"
    term = quorem.parse(text, bounds)
    rules = quorem.default_ruleset()
    assert any(r.early for r in rules)
    assert quorem.simplify(term, rules) is quorem.parse("4*i + j", bounds)
    one_phase = RuleSet([dataclasses.replace(r, phase="main") for r in rules], allow_unproven=True)
    assert quorem.count_divmod(quorem.simplify(term, one_phase)) > 0


def test_step_budget_is_shared_by_the_phases() -> None:
    """An early rule that always applies uses up the whole budget; the run stops there."""
    rules = RuleSet.from_text(
        GROWING.replace("semantics: floor", "semantics: floor\n  phase: early"), allow_unproven=True
    )
    t = quorem.parse("x // 2", {"x": (0, 10)})
    r = quorem.explain(t, rules, max_steps=40)
    assert r.reason is quorem.StopReason.STEP_LIMIT
    assert r.steps == 40
