"""Termination of whole runs: the nested order, proven per rule and closed under contexts.

The per-node order of ``termination`` is not closed under contexts (a witness below);
the nested order of ``termination-context`` is, so each rule step must shrink the whole
canonical term. These tests check that on the engine's own steps over the benchmark
corpora, replaying every step of ``quorem.explain`` into the whole term.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

z3 = pytest.importorskip("z3")

from support import has_junction  # noqa: E402

import quorem  # noqa: E402
from quorem.rulefile import parse_rules  # noqa: E402
from quorem.ruleset import default_ruleset  # noqa: E402
from quorem.term import Term  # noqa: E402
from quorem.verify.termination import (  # noqa: E402
    Element,
    check_nested,
    nested_less,
    nested_obligations,
    term_measure,
    term_nodes,
)
from quorem.walk import nodes, postorder, replace_subterms  # noqa: E402

CORPORA = sorted(
    (Path(__file__).resolve().parent.parent / "benchmarks" / "corpora").glob("*.jsonl")
)
# Replaying a step into the whole term costs the term's size: whole-term checks run on
# the cases up to this length (every family, the ladders up to 100 rungs), node checks
# up to the next (the ladders up to 3 000 rungs: at 10 000, the nested measures of the
# nodes along the ladder cost quadratic time).
WHOLE_TERM_CHARS = 1500
NODE_CHARS = 40_000


def _cases() -> list[dict[str, object]]:
    return [json.loads(line) for path in CORPORA for line in path.read_text().splitlines()]


def _parse(case: dict[str, object]) -> Term:
    bounds = {k: (v[0], v[1]) for k, v in case["vars"].items()}  # type: ignore[attr-defined]
    return quorem.parse(str(case["expr"]), bounds, str(case.get("semantics", "floor")))


def _replace(term: Term, before: Term, after: Term) -> tuple[Term, bool]:
    """``term`` with every occurrence of ``before`` replaced, ancestors rebuilt canonically."""
    new = replace_subterms(term, {before: after})
    return new, new is not term or term is before


def _replay(term: Term) -> tuple[list[tuple[str, Term, Term]], Term, Term]:
    """The whole-term steps of simplifying ``term``: ``(rule, whole before, whole after)``.

    Each traced application replaces its node in the whole term. The rewriter memoises:
    a node met again is replaced by its known result without a new trace entry, so a
    traced node not found in the whole term is reached by first replaying the known
    results found there (each a step of its own). Returns the steps, the whole term
    replayed to the end and the rewriter's result, which must be the same term.
    """
    result = quorem.explain(term)
    whole = term
    known: dict[Term, tuple[str, Term]] = {}
    steps: list[tuple[str, Term, Term]] = []

    def apply(rule: str, before: Term, after: Term) -> bool:
        nonlocal whole
        new, found = _replace(whole, before, after)
        if found:
            steps.append((rule, whole, new))
            whole = new
        return found

    def catch_up() -> None:
        while True:
            hit = next((u for u in postorder(whole) if u in known), None)
            if hit is None:
                return
            rule, after = known[hit]
            apply(rule, hit, after)

    for step in result.trace:
        if not apply(step.rule, step.before, step.after):
            catch_up()
            apply(step.rule, step.before, step.after)
        known[step.before] = (step.rule, step.after)
    catch_up()
    return steps, whole, result.term


# ---------------------------------------------------------------- the order itself
def test_term_nodes_components() -> None:
    """Each operator node is one element (depth, weight, misplaced, entries, compared)."""
    # (x + 7) // 3 + max(x, 1): the division's 7 is misplaced; its numerator has 2 entries.
    assert term_nodes(quorem.parse("(x + 7) // 3 + max(x, 1)")) == Counter(
        {(0, 3, 1, 2, 0): 1, (0, 0, 0, 0, 0): 1}
    )
    # Depth counts operator nodes above (sums are transparent); a divisor that is not a
    # constant has its weight and no misplaced count.
    assert term_nodes(quorem.parse("(3*(x // 2) + 1) % (2*y - 1)")) == Counter(
        {(0, 3, 0, 2, 0): 1, (1, 2, 0, 1, 0): 1}
    )
    # A subterm occurring twice counts twice, at each of its depths.
    assert term_nodes(quorem.parse("max(x // 3, x // 3 + 1)"))[(1, 3, 0, 1, 0)] == 2
    # A comparison's last component is its operands' weight (with one for each operand
    # mixing atoms and a constant); dividing through by a common factor lowers it.
    assert term_nodes(quorem.parse("max(4*a + 8*b + r < 16, x)")) == Counter(
        {(0, 0, 0, 0, 0): 1, (1, 0, 0, 0, 29): 1}
    )
    assert nested_less(
        term_nodes(quorem.parse("max(a + 2*b < 4, x)")),
        term_nodes(quorem.parse("max(4*a + 8*b + r < 16, x)")),
    )


def test_a_chain_of_clauses_is_one_level() -> None:
    """Every node of an ``and`` chain has the chain's depth, every clause one more, so
    re-sorting the clauses after one is rewritten moves nothing deeper."""
    nodes = term_nodes(quorem.parse("max(x < 3 and y < 4 and z < 5, 0)"))
    clauses = {(2, 0, 0, 0, 4): 1, (2, 0, 0, 0, 5): 1, (2, 0, 0, 0, 6): 1}  # x<3, y<4, z<5
    assert nodes == Counter({(0, 0, 0, 0, 0): 1, (1, 0, 0, 0, 0): 2, **clauses})
    # An ``or`` inside an ``and`` is a level of its own.
    nodes = term_nodes(quorem.parse("x < 3 and (y < 4 or z < 5)"))
    assert nodes == Counter(
        {(0, 0, 0, 0, 0): 1, (1, 0, 0, 0, 4): 1, (1, 0, 0, 0, 0): 1, (2, 0, 0, 0, 5): 1}
        | {(2, 0, 0, 0, 6): 1}
    )


def test_band_rules_are_ordered_by_the_junction_count() -> None:
    rule = default_ruleset().rule("band-quotient-rest")
    for ob in nested_obligations(rule):
        assert check_nested(ob).method == "junction count decreases"


def test_nested_less_is_the_multiset_order() -> None:
    """Deeper elements dominate: one removed deep node pays for any shallower ones."""
    deep: Counter[Element] = Counter({(1, 2, 0, 1, 0): 1})
    shallow: Counter[Element] = Counter({(0, 99, 9, 9, 99): 5})
    assert nested_less(shallow, deep) and not nested_less(deep, shallow)
    assert nested_less(Counter(), deep)
    assert not nested_less(deep, deep)
    assert nested_less(Counter({(0, 3, 0, 2, 0): 1}), Counter({(0, 3, 1, 2, 0): 1}))


def test_shipped_order_is_not_closed_under_contexts() -> None:
    """The finding that motivates the nested order, on an engine step of the ladder corpus.

    div-split-multiples makes its node smaller in (D, V, P, N), but the 3 it lifts out
    of ``(x*6 + 2)//6`` lands in the enclosing ``// 3`` as a misplaced coefficient: the
    whole term's (D, V, P, N) stays the same; its nested measure decreases.
    """
    term = quorem.parse("((x*6 + 2)//6*3 + 1)//3", {"x": (-1000, 1000)})
    steps, _, _ = _replay(term)
    rule, before, after = steps[0]
    assert rule == "div-split-multiples"
    assert not term_measure(after) < term_measure(before), (str(before), str(after))
    assert nested_less(term_nodes(after), term_nodes(before))


# ---------------------------------------------------------------- the prover
@pytest.mark.slow
@pytest.mark.catalogue
def test_every_shipped_rule_decreases_the_nested_order() -> None:
    """Every instance of every rule of the rewriter is proven (arity up to 2 here; CI 4)."""
    for rule in default_ruleset():
        if rule.by_own_pass:
            continue
        for ob in nested_obligations(rule, max_arity=2):
            r = check_nested(ob)
            assert r.status == "proven", r.report
            merges = r.method == "junction count decreases" and has_junction(rule.pattern)
            assert merges or r.method.startswith("nested order: "), (rule.name, r.method)


LOOPING = """
rule mod-add-divisor
  doc:       x % n == (x + n) % n: true, and never done
  semantics: floor
  pattern:   x % N
  guard:     N > 0
  rewrite:   (x + N) % N

rule swap
  doc:       max(x, y) == max(y, x), the same canonical term
  semantics: any
  pattern:   max(x, y)
  rewrite:   max(y, x)

rule mod-expand
  doc:       x % n == x - (x // n)*n: true, but it copies x
  semantics: floor
  pattern:   x % N
  rewrite:   x - (x // N)*N

rule push-down
  doc:       max(x, y) // 2 == max(x // 2, y // 2): true, but two divisions replace a max
  semantics: floor
  pattern:   max(x, y) // 2
  rewrite:   max(x // 2, y // 2)
"""


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("mod-add-divisor", "may exceed every pattern node"),
        ("swap", "can equal the pattern's"),
        ("mod-expand", "mentions x twice, the pattern once"),
        ("push-down", "div node at depth 1 may exceed every pattern node"),
    ],
)
def test_rules_not_decreasing_are_unknown(name: str, why: str) -> None:
    """A rule whose rewrite is no smaller in the nested order is ``unknown``, saying why."""
    (rule,) = [r for r in parse_rules(LOOPING) if r.name == name]
    (ob,) = nested_obligations(rule)
    r = check_nested(ob)
    assert r.status == "unknown" and not r.ok
    assert why in r.report, r.report


# ---------------------------------------------------------------- the engine's steps
def _smaller(after: Term, before: Term, memo: dict[Term, Counter[Element]]) -> bool:
    """``after`` below ``before`` in the whole-run order: (junction count, nested measure)."""
    j_after, j_before = term_measure(after)[0], term_measure(before)[0]
    if j_after != j_before:
        return j_after < j_before
    return nested_less(term_nodes(after, memo), term_nodes(before, memo))


@pytest.mark.slow
def test_every_step_shrinks_the_node_in_the_nested_order() -> None:
    """Every rule application over the corpora makes its node smaller."""
    memo: dict[Term, Counter[Element]] = {}
    for case in _cases():
        if len(str(case["expr"])) > NODE_CHARS:
            continue
        for step in quorem.explain(_parse(case)).trace:
            assert _smaller(step.after, step.before, memo), (case["id"], step.rule)


def _has_logic(term: Term) -> bool:
    return any(t.op in (quorem.Op.AND, quorem.Op.OR) for t in nodes(term))


@pytest.mark.slow
def test_every_step_shrinks_the_whole_term_in_the_nested_order() -> None:
    """Replayed into the whole term, every step of every corpus case shrinks it.

    The replay must reach the rewriter's own result (else it did not follow the run).
    Terms with ``and``/``or`` are left out: the rewriter's pass over their clauses is
    not a rule (it ends by construction: two rounds per junction, then one more run
    of the rules), so a replay of rule steps alone cannot reach its result.
    """
    whole_steps = 0
    for case in _cases():
        if len(str(case["expr"])) > WHOLE_TERM_CHARS or _has_logic(_parse(case)):
            continue
        steps, end, result = _replay(_parse(case))
        assert end is result, (case["id"], str(end), str(result))
        memo: dict[Term, Counter[Element]] = {}
        for rule, before, after in steps:
            assert _smaller(after, before, memo), (case["id"], rule, str(before), str(after))
        whole_steps += len(steps)
    assert whole_steps > 5000  # the corpora were read and simplified
