"""The per-rule order: proving that a rule instance decreases the measure.

:func:`check_termination` decides one obligation of :func:`termination_obligations`: some
component of :func:`~quorem.verify.termination.symbolic.rule_measures` never grows before
it and always shrinks, or the lexicographic comparison holds as one formula (see the
package docstring).
"""

from __future__ import annotations

import time
from typing import Final

import z3

from quorem.rule import Rule

from ..encode import has_sequence
from ..prove import DEFAULT_ARITY, DEFAULT_TIMEOUT, Obligation, ProofResult
from .measure import COMPONENTS
from .report import failure_report, times
from .solver import Solver
from .symbolic import RuleMeasures, Unsupported, rule_measures
from .values import Unbounded, Vector, ZExpr, int_literal

__all__ = ["OBLIGATION", "check_termination", "termination_obligations"]

OBLIGATION: Final = "termination"
_STRICT_TIMEOUT: Final = 2.0  # seconds for "can this component stay the same?"


def termination_obligations(rule: Rule, max_arity: int = DEFAULT_ARITY) -> list[Obligation]:
    """The termination obligations of ``rule``: one per semantics and ``sum(K*t)`` arity."""
    arities = range(1, max_arity + 1) if has_sequence(rule) else range(1)
    return [
        Obligation(rule, sem, k, OBLIGATION) for sem in rule.semantics or (None,) for k in arities
    ]


def _stays_when_plain(growth: ZExpr, ms: RuleMeasures, solver: Solver, timeout: float) -> bool:
    """Whether ``growth`` is surely not negative when every term variable is plain.

    Then, if the rule can fire at all, the component can stay the same (with every term
    variable bound to a variable), so it does not always shrink. If the rule cannot fire,
    nothing is lost: the lexicographic fallback shows that.
    """
    plain = z3.simplify(z3.substitute(growth, *ms.plain)) if ms.plain else growth
    value = int_literal(plain)
    if value is not None:
        return value >= 0
    # Under weaker assumptions, which every instance of the premises satisfies.
    return bool(solver.check(plain < 0, timeout, "constants")[0] == z3.unsat)


def _lex_less(rhs: Vector, lhs: Vector) -> ZExpr:
    """``rhs < lhs`` lexicographically, over the components before the first unbounded one."""
    cond: ZExpr = z3.BoolVal(False)
    for new, old in reversed(list(zip(rhs, lhs, strict=True))):
        if isinstance(new, Unbounded):
            cond = z3.BoolVal(False)
            continue
        cond = z3.Or(new < old, z3.And(new == old, cond))
    return cond


def _values(model: z3.ModelRef, ms: RuleMeasures, i: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, sym in ms.symbols.items():
        v = model.eval(sym, model_completion=True)
        if z3.is_int_value(v):
            out[name] = int(v.as_long())
    for side, vec in (("pattern", ms.pattern), ("rewrite", ms.rewrite)):
        v = model.eval(vec[i], model_completion=True)
        if z3.is_int_value(v):
            out[f"{side} {COMPONENTS[i]}"] = int(v.as_long())
    return out


def check_termination(ob: Obligation, timeout: float = DEFAULT_TIMEOUT) -> ProofResult:
    """Show that ``ob``'s rule instance decreases the measure (package docstring).

    Status ``proven`` with the decreasing component as the method, or ``unknown`` with a
    report saying which component failed and why. Never ``proven`` on a Z3 ``unknown``.
    """
    start = time.perf_counter()
    try:
        ms = rule_measures(ob.rule, ob.semantics, ob.arity)
    except Unsupported as exc:
        seconds = time.perf_counter() - start
        return ProofResult(
            ob, "unknown", "measure", seconds, None, failure_report(ob, str(exc), None)
        )
    method, failure, counterexample = _decide(ms, Solver(ms), timeout)
    seconds = time.perf_counter() - start
    if method is not None:
        return ProofResult(ob, "proven", method, seconds)
    duplicated = [
        f"the rewrite mentions {v} {times(n)}, the pattern {times(ms.pattern_uses[v])}"
        for v, n in sorted(ms.rewrite_uses.items())
        if n > ms.pattern_uses[v]
    ]
    if duplicated:
        failure += " — " + "; ".join(duplicated) + " (a term's measure is unbounded)"
    report = failure_report(ob, failure, counterexample)
    return ProofResult(ob, "unknown", "measure", seconds, counterexample, report)


def _decide(
    ms: RuleMeasures, solver: Solver, timeout: float
) -> tuple[str | None, str, dict[str, int] | None]:
    """``(method, "", None)`` if the instance decreases, else ``(None, why, example)``."""
    # Simplified, parts both sides share (a rest's measure, an unchanged coefficient's
    # misplaced count) cancel before Z3 sees them.
    growth = [
        None if isinstance(new, Unbounded) else z3.simplify(new - old)
        for new, old in zip(ms.rewrite, ms.pattern, strict=True)
    ]

    def shrinks_cheaply(i: int) -> int | None:
        """A component after ``i`` that the measure axioms alone show shrinking.

        The components between must not grow either, by the axioms alone.
        """
        for j in range(i + 1, len(COMPONENTS)):
            g = growth[j]
            if g is None or solver.check(g > 0, timeout, "axioms")[0] != z3.unsat:
                return None
            if solver.check(g >= 0, timeout, "axioms")[0] == z3.unsat:
                return j
        return None

    failure = "no component shrinks in every instance (the measure can stay the same)"
    counterexample = None
    for i, name in enumerate(COMPONENTS):
        g = growth[i]
        r = ms.rewrite[i]
        if isinstance(r, Unbounded) or g is None:
            failure = f"{name} of the rewrite cannot be bounded: {getattr(r, 'reason', '')}"
            break
        answer, model, why = solver.check(g > 0, timeout)
        if answer != z3.unsat:
            if model is not None and ms.plain:
                # A more readable example: every term variable a plain variable, if it can.
                pins = [a == b for a, b in ms.plain]
                plain = solver.check(z3.And(g > 0, *pins), min(timeout, _STRICT_TIMEOUT))[1]
                model = plain or model
            if model is not None:
                counterexample = _values(model, ms, i)
                failure = f"{name} may grow (the rewrite can exceed the pattern)"
            else:
                failure = f"{name}: Z3 answered unknown ({why}) on whether it can grow"
            break
        # It never grows; does it always shrink? Cheap answers first: the measure axioms
        # alone; no query where it surely can stay the same, or where a later component
        # shrinks by the axioms alone. Else Z3 with the premises under a short limit: when
        # the component can stay the same, Z3 must build a model of the (non-linear)
        # premises, which is slow, and an unknown here only moves on to the next one.
        if solver.check(g >= 0, timeout, "axioms")[0] == z3.unsat:
            return f"measure: {name}", "", None
        if _stays_when_plain(g, ms, solver, timeout):
            continue
        later = shrinks_cheaply(i)
        if later is not None:
            return f"measure: {COMPONENTS[later]}", "", None
        if solver.check(g >= 0, min(timeout, _STRICT_TIMEOUT))[0] == z3.unsat:
            return f"measure: {name}", "", None
    # The component that shrinks may differ between instances: the whole comparison.
    if solver.check(z3.Not(_lex_less(ms.rewrite, ms.pattern)), timeout)[0] == z3.unsat:
        if solver.check(z3.BoolVal(True), timeout)[0] == z3.unsat:
            return "vacuous: the rule never fires", "", None
        return "measure: lexicographic by cases", "", None
    return None, failure, counterexample
