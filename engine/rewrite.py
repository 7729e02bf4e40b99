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

from quorem.engine.errors import TermError
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


# Work-stack frames: (term, state, target). VISIT pushes the children; REDUCE rebuilds
# the node and tries the rules; LINK records memo[term] = memo[target] once the
# replacement `target` has itself been rewritten.
_VISIT, _REDUCE, _LINK = 0, 1, 2


class _Rewriter:
    def __init__(self, ruleset: RuleSet, max_steps: int, trace: bool) -> None:
        self.ruleset = ruleset
        self.max_steps = max_steps
        self.trace = trace
        self.memo: dict[Term, Term] = {}
        self.active: set[Term] = set()
        self.counts: Counter[str] = Counter()
        self.steps: list[Step] = []
        self.n_steps = 0
        self.reason = StopReason.FIXED_POINT
        self.stack: list[tuple[Term, int, Term | None]] = []

    def run(self, term: Term) -> RewriteResult:
        memo, stack = self.memo, self.stack
        stack.append((term, _VISIT, None))
        while stack:
            t, state, target = stack.pop()
            if state == _LINK:
                assert target is not None
                memo[t] = memo[target]
                self.active.discard(t)
            elif t in memo:
                continue
            elif state == _VISIT:
                self.visit(t)
            else:
                self.reduce(t)
        return RewriteResult(memo[term], self.reason, self.n_steps, self.counts, self.steps)

    def visit(self, t: Term) -> None:
        if t in self.active:
            # A rewrite led back to a term being rewritten: keep it and report the cycle.
            self.reason = StopReason.CYCLE
            self.memo[t] = t
            return
        self.active.add(t)
        self.stack.append((t, _REDUCE, None))
        memo = self.memo
        self.stack.extend((c, _VISIT, None) for c in t.args if c not in memo)

    def reduce(self, t: Term) -> None:
        memo = self.memo
        args = t.args
        new_args = [memo[c] for c in args]
        u = t
        if any(a is not b for a, b in zip(new_args, args, strict=True)):
            try:
                u = rebuild(t, new_args)
            except TermError:
                # A divisor simplified to the constant 0: the node is undefined everywhere.
                # Keep it as it was rather than build a division by zero.
                memo[t] = t
                self.active.discard(t)
                return
            if u in memo:
                memo[t] = memo[u]
                self.active.discard(t)
                return
        out = self.apply_first(u)
        if out is None:
            memo[u] = u
            memo[t] = u
            self.active.discard(t)
            return
        if u is not t:
            self.active.add(u)
            self.stack.append((t, _LINK, u))
        self.stack.append((u, _LINK, out))
        self.stack.append((out, _VISIT, None))

    def apply_first(self, u: Term) -> Term | None:
        """The rewrite of ``u`` by the first rule (in priority order) that applies."""
        if self.n_steps >= self.max_steps:
            # Out of budget: only a rule that would still apply makes the result non-normal.
            if self.reason is StopReason.FIXED_POINT and any(
                rule.apply(u) is not None for rule in self.ruleset.rules_for(u.op)
            ):
                self.reason = StopReason.STEP_LIMIT
            return None
        for rule in self.ruleset.rules_for(u.op):
            out = rule.apply(u)
            if out is not None:
                self.n_steps += 1
                self.counts[rule.name] += 1
                if self.trace:
                    self.steps.append(Step(rule.name, u, out))
                return out
        return None


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
    rule applications are made, and a rewrite that leads back to a term being rewritten
    stops there. The result says which of these ended the run.
    """
    return _Rewriter(ruleset, max_steps, trace).run(term)
