"""The fixed-point rewriter: applies a rule set bottom-up until nothing changes.

Terms are interned, so a memo keyed on nodes simplifies every shared subterm once. The
traversal uses an explicit stack: depth is limited by memory, not by Python's recursion
limit. Every run terminates: it stops at a fixed point, or when its step budget is
spent, or when a rule sequence leads back to a term being rewritten (a cycle), and the
result says which.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter

from quorem.engine.ruleset import RuleSet
from quorem.engine.term import Term, rebuild

__all__ = ["DEFAULT_MAX_STEPS", "RewriteResult", "Step", "StopReason", "rewrite"]

DEFAULT_MAX_STEPS = 1_000_000


class StopReason(enum.Enum):
    """Why a rewrite run stopped."""

    FIXED_POINT = "fixed point"  # no rule applies anywhere: the result is normal
    STEP_LIMIT = "step limit"  # the step budget ran out; the result is sound but not normal
    CYCLE = "cycle"  # rules led back to a term being rewritten; it was kept as it was


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One rule application: ``before`` was rewritten to ``after`` by rule ``rule``."""

    rule: str
    before: Term
    after: Term


@dataclasses.dataclass(slots=True)
class RewriteResult:
    """The outcome of :func:`rewrite`.

    Attributes:
        term: the rewritten term, equal to the input at every point of its domain.
        reason: why rewriting stopped.
        steps: number of rule applications.
        counts: applications per rule name.
        trace: the applications in order (only when tracing was requested).
    """

    term: Term
    reason: StopReason
    steps: int
    counts: Counter[str]
    trace: list[Step]

    @property
    def rules(self) -> list[str]:
        """Names of the rules applied, in order of first application."""
        return list(self.counts)


def rewrite(
    term: Term,
    ruleset: RuleSet,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    trace: bool = False,
) -> RewriteResult:
    """Rewrite ``term`` with ``ruleset`` bottom-up to a fixed point.

    Every node is first rebuilt from its rewritten children, then the rules indexed
    under its operator are tried in priority order; the first that applies replaces the
    node, and the replacement is rewritten in turn. Never loops: at most ``max_steps``
    rule applications are made.
    """
    memo: dict[Term, Term] = {}
    active: set[Term] = set()
    counts: Counter[str] = Counter()
    steps: list[Step] = []
    n_steps = 0
    reason = StopReason.FIXED_POINT
    # Frames: (term, state, target). state 0 = visit children, 1 = rewrite the node,
    # 2 = node was rewritten to `target`; memo[term] := memo[target] once that is done.
    stack: list[tuple[Term, int, Term | None]] = [(term, 0, None)]
    while stack:
        t, state, target = stack.pop()
        if state == 2:
            assert target is not None
            memo[t] = memo[target]
            active.discard(t)
            continue
        if t in memo:
            continue
        if state == 0:
            if t in active:
                # A rewrite led back here: keep the term as it is and report the cycle.
                reason = StopReason.CYCLE
                memo[t] = t
                continue
            active.add(t)
            stack.append((t, 1, None))
            stack.extend((c, 0, None) for c in t.args if c not in memo)
            continue
        args = t.args
        new_args = [memo[c] for c in args]
        u = t
        if any(a is not b for a, b in zip(new_args, args, strict=True)):
            u = rebuild(t, new_args)
            if u in memo:
                memo[t] = memo[u]
                active.discard(t)
                continue
        out = None
        if n_steps < max_steps:
            for rule in ruleset.rules_for(u.op):
                out = rule.apply(u)
                if out is not None:
                    n_steps += 1
                    counts[rule.name] += 1
                    if trace:
                        steps.append(Step(rule.name, u, out))
                    break
        elif reason is StopReason.FIXED_POINT:
            reason = StopReason.STEP_LIMIT
        if out is None:
            memo[u] = u
            memo[t] = u
            active.discard(t)
            continue
        if u is not t:
            active.add(u)
            stack.append((t, 2, u))
            t = u
        stack.append((t, 2, out))
        stack.append((out, 0, None))
    return RewriteResult(memo[term], reason, n_steps, counts, steps)
