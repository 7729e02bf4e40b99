"""A runaway rule set stops early and says so; the shipped rules stay far inside the budget."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import quorem
from quorem import IncompleteRewriteWarning, RuleSet, StopReason
from quorem.rewrite import budget_for
from quorem.walk import nodes

CORPORA = Path(__file__).resolve().parent.parent / "benchmarks" / "corpora"

GROW = """
rule grow
  doc: x < y == x*2 < y*2, true and never done
  semantics: any
  pattern: x < y
  rewrite: x*2 < y*2
"""

SQUARE = """
rule square
  doc: a rule that squares a constant at every step (unsound, but it must still stop)
  semantics: any
  pattern: x + C
  guard: C > 1
  rewrite: x + C*C
"""

SPREAD = """
rule spread
  doc: max(x, y) == max(max(x, y - 1), y), a new node at every step
  semantics: any
  pattern: max(x, y)
  rewrite: max(max(x, y - 1), y)
"""


@pytest.mark.parametrize(
    ("rules", "text"),
    [(GROW, "a < b"), (SQUARE, "a + 3"), (GROW, "(a + 2) < (b*3 + 7)")],
)
def test_rules_that_grow_integers_stop_with_a_size_limit(rules: str, text: str) -> None:
    result = quorem.explain(
        quorem.parse(text), RuleSet.from_text(rules, "<user>", allow_unproven=True)
    )
    assert result.reason is StopReason.SIZE_LIMIT
    # The bits budget: a few hundred bits, reached in a few hundred steps at most.
    assert result.steps < 1000
    assert max(abs(c) for c in _integers(result.term)).bit_length() <= 256


def test_rules_that_grow_the_term_stop_within_a_budget_relative_to_the_input() -> None:
    t = quorem.parse("max(a, b)", {"a": (0, 9), "b": (0, 9)})
    result = quorem.explain(t, RuleSet.from_text(SPREAD, "<user>", allow_unproven=True))
    assert result.reason in (StopReason.STEP_LIMIT, StopReason.SIZE_LIMIT, StopReason.CYCLE)
    assert result.steps <= budget_for(t).steps


def test_simplify_warns_when_it_stops_before_a_fixed_point() -> None:
    t = quorem.parse("a < b")
    with pytest.warns(IncompleteRewriteWarning, match="size limit") as record:
        out = quorem.simplify(t, RuleSet.from_text(GROW, "<user>", allow_unproven=True))
    # (The other warning says the unproven rule rewrote the result.)
    (stopped,) = [w.message for w in record if isinstance(w.message, IncompleteRewriteWarning)]
    assert stopped.reason == "size limit"
    # The warning names the rule to blame, as explain's culprits do.
    assert stopped.culprits == ("grow",)
    assert "rules to blame: grow" in str(stopped)
    assert quorem.evaluate(out, {"a": 1, "b": 2}) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteRewriteWarning)
        with pytest.raises(IncompleteRewriteWarning):
            quorem.simplify(t, RuleSet.from_text(GROW, "<user>", allow_unproven=True))


def test_a_step_limit_warns_too_and_explain_does_not() -> None:
    t = quorem.parse("((R3*8 + R4*4 + R2)//8)*8 + (R3*8 + R4*4 + R2)%8")
    with pytest.warns(IncompleteRewriteWarning, match="step limit"):
        quorem.simplify(quorem.parse("(x*4 + 8)//4 + (y*6 + 12)//6"), max_steps=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quorem.explain(t, max_steps=0).reason is StopReason.STEP_LIMIT
        quorem.simplify(t)  # a fixed point: no warning


def test_an_empty_rule_set_applies_no_rule() -> None:
    t = quorem.parse("(x//4)*4 + x%4", {"x": (0, 99)})
    assert quorem.simplify(t, RuleSet([])) is t
    assert quorem.explain(t, RuleSet([])).steps == 0


def test_the_budget_grows_with_the_input() -> None:
    small = budget_for(quorem.parse("x + 1"))
    big = budget_for(quorem.parse(" + ".join(f"x{i}*{i + 1}" for i in range(1000))))
    assert big.steps > small.steps and big.nodes > small.nodes
    assert budget_for(quorem.parse("x + 1"), 5).steps == 5
    wide = budget_for(quorem.parse(f"x + {2**300}"))
    assert wide.bits >= 4 * 301


def test_the_shipped_rules_stay_far_inside_the_budget() -> None:
    """Steps per input node stay below one on every benchmark corpus (the budget allows 100)."""
    worst = 0.0
    for path in sorted(CORPORA.glob("*.jsonl")):
        for line in path.read_text().splitlines()[::7]:
            case = json.loads(line)
            bounds = {k: (v[0], v[1]) for k, v in case["vars"].items()}
            t = quorem.parse(case["expr"], bounds, case.get("semantics", "floor"))
            result = quorem.explain(t)
            assert result.reason is StopReason.FIXED_POINT, case["id"]
            worst = max(worst, result.steps / sum(1 for _ in nodes(t)))
    assert worst < 2


def _integers(t: quorem.Term) -> list[int]:
    out = [0]
    for n in nodes(t):
        if n.op is quorem.Op.CONST:
            out.append(n.value)
        elif n.op is quorem.Op.ADD:
            out.extend([*n.arg[0], n.arg[1]])
    return out
