"""Lowering a term to one division semantics by the proven rules of ``rules/lowering/``.

C and CUDA divide by truncation, Python by flooring. Before code is written, every
division of the other semantics is rewritten by a lowering rule (each proven for the
two semantics it converts between), cheaply where value ranges show both operands
non-negative and with a sign correction otherwise. Each application removes one
division of the source semantics and adds none, and the range folds that run with them
only produce constants, so the pass ends; the rewriter's step budget is a backstop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from quorem.engine.errors import QuoremError
from quorem.engine.ops import DIVISION_OPS, SEMANTICS_OF, Semantics
from quorem.engine.overflow import term_fits_int64
from quorem.engine.printer import brief
from quorem.engine.rewrite import StopReason, rewrite_stop, rewrite_term
from quorem.engine.rulefile import load_rule_files
from quorem.engine.ruleset import RuleSet, default_ruleset
from quorem.engine.term import Term
from quorem.engine.walk import nodes, postorder

__all__ = ["LoweringError", "lower", "lowering_ruleset"]

_RULESETS: dict[Semantics, RuleSet] = {}
_STEPS: Final = 1_000_000


class LoweringError(QuoremError):
    """A division of the other semantics was left (a rule missing for its shape)."""


def lowering_ruleset(target: Semantics) -> RuleSet:
    """The lowering rules whose result has only ``target`` divisions (loaded once)."""
    if target not in _RULESETS:
        from quorem.rules import lowering_rule_files  # noqa: PLC0415  (rules are data)

        source = Semantics.FLOOR if target is Semantics.TRUNC else Semantics.TRUNC
        rules = [r for r in load_rule_files(lowering_rule_files()) if r.semantics == (source,)]
        # The range folds too: a sign test the ranges decide (x < 0 for x >= 0) is a
        # constant, not code. They only ever produce constants.
        folds = [r for r in default_ruleset() if Path(r.file).name == "10-fold.rules"]
        _RULESETS[target] = RuleSet([*rules, *folds])
    return _RULESETS[target]


def _leftover(term: Term, target: Semantics) -> Term | None:
    """A division of ``term`` in the other semantics, or None."""
    for t in nodes(term):
        if t.op in DIVISION_OPS and SEMANTICS_OF[t.op] is not target:
            return t
    return None


def lower(term: Term, target: Semantics) -> Term:
    """``term`` with every division in ``target`` semantics, equal at every point.

    Raises :class:`LoweringError` if a division of the other semantics is left.
    """
    if _leftover(term, target) is None:
        return term
    out, reason = rewrite_stop(term, lowering_ruleset(target), max_steps=_STEPS)
    left = _leftover(out, target)
    if left is not None:
        if reason is not StopReason.FIXED_POINT:
            raise LoweringError(
                f"lowering to {target.value} division stopped ({reason.value}) before "
                f"{brief(left)} was lowered"
            )
        raise LoweringError(_why_left(left, target))
    return out


def _why_left(left: Term, target: Semantics) -> str:
    """Why the division ``left`` (of the other semantics) was not lowered."""
    rules = lowering_ruleset(target)
    divisions = [
        t for t in postorder(left) if t.op in DIVISION_OPS and SEMANTICS_OF[t.op] is not target
    ]
    for t in divisions:
        # A division (here or inside) whose divisor is 0 at every point, as written or
        # once lowered (b % b is 0 wherever it is defined), has no value, and no rule
        # builds a replacement for it.
        d = rewrite_term(t.args[1], rules, max_steps=_STEPS)
        if d.vmin == d.vmax == 0:
            return f"{brief(t)} divides by zero at every point: it has no value"
    for t in divisions:
        # The rewriter never trades a term that fits in int64 for one that may not: a
        # lowered form that may leave int64 is not taken, nor one that makes the term
        # around it leave int64 (a canonical sum distributes a coefficient over it).
        for rule in rules.rules_for(t.op):
            u = rule.apply(t)
            if u is None:
                continue
            if not term_fits_int64(u):
                return (
                    f"{brief(t)} has no {target.value} division form that stays in 64 bits "
                    f"(rule {rule.name} gives {brief(u)}, whose values may leave int64)"
                )
            return (
                f"{brief(t)} lowered to {target.value} division ({brief(u)}, rule "
                f"{rule.name}) makes the term around it need more than 64 bits"
            )
    return f"no lowering rule for {brief(left)} to {target.value} division"
