"""Z3 queries about a rule's measures, under the encoder's premises (:class:`Solver`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import z3

from ..record import decided
from .symbolic import RuleMeasures
from .values import ZExpr

__all__ = ["Solver"]


class Solver:
    """Z3 queries under the premises, trying weaker assumptions first.

    The encoder's premises are mostly about the values of terms (the pattern equals the
    rewrite at a point: divisions of sums of products), which the measure never needs
    and which make Z3 slow. A claim that is ``unsat`` under weaker assumptions is
    ``unsat`` under the premises, so it is tried first under the measure axioms alone
    (linear: one incremental solver serves every query), then under the conjuncts of the
    premises that do not mention a term's value (the guard, lets, gcds, divisions of
    constants); a satisfiable claim is confirmed under all the premises.
    """

    def __init__(self, ms: RuleMeasures) -> None:
        self.axioms = ms.axioms
        self.premises = ms.premises
        conjuncts = _conjuncts(ms.premises)
        # Symbols in SMT-LIB text are delimited by blanks and parentheses.
        names = "|".join(re.escape(v.sexpr()) for v in ms.term_values)
        mentions = re.compile(rf"(?<![^\s()])(?:{names})(?![^\s()])") if names else None
        self.constant = [c for c in conjuncts if mentions is None or not mentions.search(c.sexpr())]
        self.complete = len(self.constant) == len(conjuncts)
        self.relaxed = z3.Solver()
        self.relaxed.set("random_seed", 0)
        self.relaxed.add(*ms.axioms)

    def check(
        self, claim: ZExpr, timeout: float, upto: str = "premises"
    ) -> tuple[Any, z3.ModelRef | None, str]:
        """Z3's answer to ``premises and claim``, its model if sat, its reason if unknown.

        ``upto`` (``axioms``, ``constants`` or ``premises``) is the strongest assumption
        tried; short of ``premises``, only ``unsat`` is definite and anything else is
        reported as unknown.
        """
        self.relaxed.push()
        try:
            self.relaxed.set("timeout", max(1, int(timeout * 1000)))
            self.relaxed.add(claim)
            if decided(self.relaxed) == z3.unsat:
                return z3.unsat, None, ""
        finally:
            self.relaxed.pop()
        if upto == "axioms":
            return z3.unknown, None, "only the measure axioms were assumed"
        if not self.complete or upto == "constants":
            answer, _, why = self._fresh(self.constant, claim, timeout)
            if answer == z3.unsat:
                return z3.unsat, None, ""
            if upto == "constants":
                return z3.unknown, None, why or "only some premises were assumed"
        return self._fresh(self.premises, claim, timeout)

    def _fresh(
        self, premises: Sequence[ZExpr], claim: ZExpr, timeout: float
    ) -> tuple[Any, z3.ModelRef | None, str]:
        # A fresh solver per query: Z3's incremental mode is much weaker on these.
        s = z3.Solver()
        s.set("random_seed", 0)
        s.set("timeout", max(1, int(timeout * 1000)))
        s.add(*self.axioms, *premises, claim)
        answer = decided(s)
        model = s.model() if answer == z3.sat else None
        why = s.reason_unknown() if answer == z3.unknown else ""
        return answer, model, why


def _conjuncts(premises: Sequence[ZExpr]) -> list[ZExpr]:
    out: list[ZExpr] = []
    todo = list(reversed(premises))
    while todo:
        p = todo.pop()
        if z3.is_and(p):
            todo.extend(reversed(p.children()))
        else:
            out.append(p)
    return out
