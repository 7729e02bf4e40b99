"""The nested order (obligation ``termination-context``): closed under contexts.

:func:`check_nested` decides one obligation of :func:`nested_obligations`: the rule
instance lowers the junction count, or the multiset of operator nodes of the rewrite lies
below the pattern's (see the package docstring).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Final

import z3

from quorem.rule import Rule

from ..prove import DEFAULT_ARITY, DEFAULT_TIMEOUT, Obligation, ProofResult
from .decide import termination_obligations
from .report import failure_report, times
from .solver import Solver
from .symbolic import RuleMeasures, Unsupported, rule_measures
from .values import NestedNode, Unbounded, ZExpr

__all__ = ["NESTED_OBLIGATION", "NESTED_ORDER", "check_nested", "nested_obligations"]

NESTED_OBLIGATION: Final = "termination-context"
NESTED_ORDER: Final = (
    "the multiset of operator nodes (depth, divisor weight, misplaced constants,"
    " numerator entries, comparison weight), deeper first, compared as multisets"
)


def check_nested(ob: Obligation, timeout: float = DEFAULT_TIMEOUT) -> ProofResult:
    """Show that ``ob``'s rule instance decreases the nested order (package docstring).

    A rule instance that does, applied anywhere in any term, makes the whole canonical
    term smaller in that order (the order is closed under contexts). Status ``proven``,
    or ``unknown`` with a report naming the node or variable that could not be placed
    below the pattern's. Never ``proven`` on a Z3 ``unknown``.
    """
    start = time.perf_counter()
    try:
        ms = rule_measures(ob.rule, ob.semantics, ob.arity)
    except Unsupported as exc:
        seconds = time.perf_counter() - start
        report = failure_report(ob, str(exc), None, order=NESTED_ORDER)
        return ProofResult(ob, "unknown", "nested order", seconds, None, report)
    solver = Solver(ms)
    if _junctions_shrink(ms, solver, timeout):
        seconds = time.perf_counter() - start
        return ProofResult(ob, "proven", "junction count decreases", seconds)
    method, failure, counterexample = _decide_nested(ms, solver, timeout)
    seconds = time.perf_counter() - start
    if method is not None:
        return ProofResult(ob, "proven", method, seconds)
    report = failure_report(ob, failure, counterexample, order=NESTED_ORDER)
    return ProofResult(ob, "unknown", "nested order", seconds, counterexample, report)


def _junctions_shrink(ms: RuleMeasures, solver: Solver, timeout: float) -> bool:
    """Whether the rewrite always has fewer ``and``/``or`` nodes than the pattern.

    The junction count of a whole term is sub-additive under replacement and
    canonical rebuilding (see the package docstring), so such a rule lowers it in every
    context; no rule raises it (it is the first component of every rule's measure).
    """
    new, old = ms.rewrite[0], ms.pattern[0]
    if isinstance(new, Unbounded):
        return False
    return bool(solver.check(new >= old, timeout)[0] == z3.unsat)


def _local_cmp(new: NestedNode, old: NestedNode, *, strict: bool) -> ZExpr:
    """``new`` below (``strict``) or at most ``old`` in the nested order, at equal depth.

    An unbounded component of ``new`` is never below nor equal to anything, so the
    comparison is decided by the components before it or fails.
    """
    cond: ZExpr = z3.BoolVal(not strict)
    for a, b in reversed(list(zip(new.local(), old.local(), strict=True))):
        if isinstance(a, Unbounded):
            cond = z3.BoolVal(False)
            continue
        cond = z3.Or(a < b, z3.And(a == b, cond))
    return cond


def _occurrences_placed(ms: RuleMeasures, solver: Solver, timeout: float) -> str:
    """Why some term variable's occurrences cannot be paired as the nested order needs.

    Each occurrence in the rewrite needs a distinct one in the pattern at least as deep;
    "" if that holds in every instance. By Hall's theorem such a pairing exists iff, for
    every depth ``d``, the rewrite has no more occurrences at depth ``d`` or deeper than
    the pattern has; an occurrence in an addend whose coefficient is 0 does not count (it
    vanishes), decided by Z3.
    """
    for name in sorted({n for n, _, _ in ms.rewrite_occurrences}):
        new = [(d, c) for n, d, c in ms.rewrite_occurrences if n == name]
        old = [d for n, d, _ in ms.pattern_occurrences if n == name]
        claims: list[ZExpr] = []
        for depth in sorted({d for d, _ in new}):
            deeper = [c for d, c in new if d >= depth]
            available = sum(d >= depth for d in old)
            if len(deeper) > available:
                claims.append(z3.Sum(*(z3.If(c, 1, 0) for c in deeper)) <= available)
        if not claims:
            continue
        if solver.check(z3.Not(z3.And(*claims)), timeout)[0] == z3.unsat:
            continue
        if len(new) > len(old):
            return (
                f"the rewrite mentions {name} {times(len(new))}, the pattern"
                f" {times(len(old))} (a term's nodes are not bounded)"
            )
        return f"the rewrite puts {name} under more operators than the pattern does"
    return ""


def _decide_nested(
    ms: RuleMeasures, solver: Solver, timeout: float
) -> tuple[str | None, str, dict[str, int] | None]:
    """``(method, "", None)`` if the instance decreases the nested order, else why not.

    Sufficient condition for the rewrite's multiset of nodes to lie below the pattern's
    (Dershowitz-Manna): each variable occurrence of the rewrite pairs with a distinct
    one of the pattern at least as deep (its nodes then move up or stay); each node the
    rewrite builds pairs with a distinct pattern node it is at most (shallower, or as
    deep and lexicographically at most); and some pattern node is left unpaired or some
    pair is strict. Pairs are decided by Z3 under the premises; ``unknown`` never counts.
    """
    moved = _occurrences_placed(ms, solver, timeout)
    if moved:
        return None, moved, None
    old_nodes, new_nodes = ms.pattern_nodes, ms.rewrite_nodes
    if not old_nodes:
        return None, "the pattern has no operator node to remove", None
    if not new_nodes:
        return "nested order: every node removed", "", None
    # Pairwise facts: (at most, below) for each rewrite node and pattern node.
    le: dict[tuple[int, int], bool] = {}
    lt: dict[tuple[int, int], bool] = {}
    witness: tuple[int, int, z3.ModelRef | None] | None = None
    for j, new in enumerate(new_nodes):
        for i, old in enumerate(old_nodes):
            if new.depth < old.depth:
                le[j, i] = lt[j, i] = True
            elif new.depth > old.depth:
                le[j, i] = lt[j, i] = False
            else:
                answer, model, _ = solver.check(z3.Not(_local_cmp(new, old, strict=False)), timeout)
                le[j, i] = answer == z3.unsat
                lt[j, i] = le[j, i] and (
                    solver.check(z3.Not(_local_cmp(new, old, strict=True)), timeout)[0] == z3.unsat
                )
                if not le[j, i] and witness is None:
                    witness = (j, i, model)
    pairings = list(_partial_injections(len(new_nodes), len(old_nodes), le))
    by_cases: list[tuple[int | None, ...]] = []
    for pairing in pairings:
        removed = set(range(len(old_nodes))) - {i for i in pairing if i is not None}
        # A node left unpaired must lie below a pattern node that is removed outright.
        if not all(any(lt[j, i] for i in removed) for j, i in enumerate(pairing) if i is None):
            continue
        strict = [j for j, i in enumerate(pairing) if i is not None and lt[j, i]]
        if removed:
            return (
                f"nested order: {len(removed)} pattern node(s) removed, the rest paired",
                "",
                None,
            )
        if strict:
            d = new_nodes[strict[0]].depth
            return f"nested order: a node at depth {d} decreases", "", None
        by_cases.append(pairing)
    for pairing in by_cases:
        # The strict pair may depend on the instance: one query over all of them.
        some: ZExpr = z3.Or(
            *(
                _local_cmp(new_nodes[j], old_nodes[i], strict=True)
                for j, i in enumerate(pairing)
                if i is not None
            )
        )
        if solver.check(z3.Not(some), timeout)[0] == z3.unsat:
            return "nested order: by cases", "", None
    if by_cases:
        return (
            None,
            "every node the rewrite builds can equal the pattern's (nothing decreases)",
            None,
        )
    if witness is None:
        return None, "the rewrite builds more nodes at some depth than the pattern has", None
    j, i, model = witness
    new, old = new_nodes[j], old_nodes[i]
    failure = (
        f"the rewrite's {new.op} node at depth {new.depth} may exceed every pattern node"
        f" (e.g. the pattern's {old.op} at depth {old.depth})"
    )
    values = _node_values(model, ms, new, old) if model is not None else None
    return None, failure, values


def _partial_injections(
    n_new: int, n_old: int, allowed: dict[tuple[int, int], bool]
) -> list[tuple[int | None, ...]]:
    """Every pairing of rewrite nodes with distinct pattern nodes they may use.

    Entry ``j`` is the pattern node paired with rewrite node ``j``, or None (that node
    is then to be dominated by a removed pattern node).
    """
    out: list[tuple[int | None, ...]] = []

    def extend(prefix: tuple[int | None, ...]) -> None:
        j = len(prefix)
        if j == n_new:
            out.append(prefix)
            return
        for i in range(n_old):
            if i not in prefix and allowed[j, i]:
                extend((*prefix, i))
        extend((*prefix, None))

    extend(())
    return out


def _node_values(
    model: z3.ModelRef, ms: RuleMeasures, new: NestedNode, old: NestedNode
) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, sym in ms.symbols.items():
        v = model.eval(sym, model_completion=True)
        if z3.is_int_value(v):
            out[name] = int(v.as_long())
    labels = ("divisor weight", "misplaced constants", "numerator entries", "comparison weight")
    for side, node in (("pattern", old), ("rewrite", new)):
        for label, c in zip(labels, node.local(), strict=True):
            if isinstance(c, Unbounded):
                continue
            v = model.eval(z3.IntVal(c) if isinstance(c, int) else c, model_completion=True)
            if z3.is_int_value(v):
                out[f"{side} {node.op}@{node.depth} {label}"] = int(v.as_long())
    return out


def nested_obligations(rule: Rule, max_arity: int = DEFAULT_ARITY) -> list[Obligation]:
    """The nested-order obligations of ``rule``: one per semantics and ``sum(K*t)`` arity."""
    return [
        dataclasses.replace(ob, kind=NESTED_OBLIGATION)
        for ob in termination_obligations(rule, max_arity)
    ]
