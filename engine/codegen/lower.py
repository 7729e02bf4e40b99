"""Lowering a term to one division semantics by the proven rules of ``rules/lowering/``.

C and CUDA divide by truncation, Python (and SymPy) by flooring. Before code is written,
every division of another semantics (floor, truncating or Euclidean) and every ceiling
division is rewritten by a lowering rule (each proven for the semantics it converts
between), cheaply where value ranges allow and with a sign correction otherwise.

The rules for a target are chosen from their text, not their file names: a rule lowers
to ``T`` when its pattern's root is a division of another semantics (or a ``ceildiv``)
and every division its rewrite (and its lets) writes is a ``T`` division. So each
application removes one non-``T`` division and adds none, and the range folds that run
with them only produce constants: the pass ends. The rewriter's step budget is a
backstop.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Final

from ..errors import QuoremError
from ..ops import DIVISION_FUNCTIONS, DIVISION_OPS, SEMANTICS_OF, Op, Semantics
from ..overflow import term_fits_int64
from ..printer import brief
from ..rewrite import StopReason, rewrite_stop, rewrite_term
from ..rule import Binary, Call, Expr, POp, Rule, Unary
from ..rulefile import load_rule_files
from ..ruleset import RuleSet, default_ruleset
from ..term import Term
from ..walk import nodes, postorder

__all__ = ["LoweringError", "lower", "lowering_rules", "lowering_ruleset", "lowers_to"]

_RULESETS: dict[tuple[Semantics, bool], RuleSet] = {}
_STEPS: Final = 1_000_000
# A ceiling division, where a rule's pattern root or rewrite names a division's kind.
_CEIL: Final = "ceildiv"


class LoweringError(QuoremError):
    """A division of another semantics (or a ceildiv) was left (a rule missing for its shape)."""


def _root_division(rule: Rule, sem: Semantics | None) -> Semantics | str | None:
    """What the rule's pattern root divides by: a semantics, ``"ceildiv"``, or None."""
    p = rule.pattern
    if not isinstance(p, POp):
        return None
    if p.op in ("div", "mod"):
        return sem
    if p.op in DIVISION_FUNCTIONS:
        return DIVISION_FUNCTIONS[p.op][1]
    return _CEIL if p.op == _CEIL else None


def _written_divisions(e: Expr, sem: Semantics | None) -> set[Semantics | str]:
    """The divisions ``e`` writes: the semantics of each, ``"ceildiv"`` for a ceiling one."""
    if isinstance(e, Unary):
        return _written_divisions(e.operand, sem)
    if isinstance(e, Binary):
        out = _written_divisions(e.left, sem) | _written_divisions(e.right, sem)
        if e.op in ("//", "%") and sem is not None:
            out.add(sem)
        return out
    if isinstance(e, Call):
        out = set().union(*(_written_divisions(a, sem) for a in e.args))
        if e.func in DIVISION_FUNCTIONS:
            out.add(DIVISION_FUNCTIONS[e.func][1])
        elif e.func == _CEIL:
            out.add(_CEIL)
        return out
    return set()


def lowers_to(rule: Rule, sem: Semantics | None, target: Semantics) -> bool:
    """Whether ``rule`` (instantiated for ``sem``) lowers one division to ``target``.

    Its pattern root is a division of another semantics or a ``ceildiv``, and every
    division its rewrite and lets write is a ``target`` one.
    """
    root = _root_division(rule, sem)
    if root is None or root is target:
        return False
    exprs = [rule.rewrite, *(e for _, e in rule.lets)]
    written = set().union(*(_written_divisions(e, sem) for e in exprs))
    return written <= {target}


def lowering_rules(target: Semantics, *, ceildiv: bool = True) -> list[Rule]:
    """The lowering rules to ``target``, each instantiated for the one semantics that does.

    Without ``ceildiv``, the rules lowering a ceiling division are left out.
    """
    from quorem.rules import lowering_rule_files  # noqa: PLC0415  (rules are data)

    out: list[Rule] = []
    for r in load_rule_files(lowering_rule_files()):
        for sem in r.semantics or (None,):
            if not lowers_to(r, sem, target):
                continue
            if not ceildiv and _root_division(r, sem) == _CEIL:
                continue
            out.append(dataclasses.replace(r, semantics=(sem,) if sem else ()))
    return out


def lowering_ruleset(target: Semantics, *, ceildiv: bool = True) -> RuleSet:
    """The lowering rules to ``target`` and the range folds (loaded once).

    Without ``ceildiv``, ceiling divisions are kept (SymPy has ``ceiling``).
    """
    key = (target, ceildiv)
    if key not in _RULESETS:
        rules = lowering_rules(target, ceildiv=ceildiv)
        # The range folds too: a sign test the ranges decide (x < 0 for x >= 0) is a
        # constant, not code. They only ever produce constants.
        folds = [r for r in default_ruleset() if Path(r.file).name == "10-fold.rules"]
        _RULESETS[key] = RuleSet([*rules, *folds])
    return _RULESETS[key]


def _lowered(t: Term, target: Semantics, ceildiv: bool) -> bool:
    """Whether the node ``t`` is one the lowering to ``target`` must remove."""
    if t.op is Op.CEILDIV:
        return ceildiv
    return t.op in DIVISION_OPS and SEMANTICS_OF[t.op] is not target


def _leftover(term: Term, target: Semantics, ceildiv: bool) -> Term | None:
    """A division of ``term`` the lowering must remove, or None."""
    for t in nodes(term):
        if _lowered(t, target, ceildiv):
            return t
    return None


def lower(term: Term, target: Semantics, *, ceildiv: bool = True) -> Term:
    """``term`` with every division in ``target`` semantics, equal at every point.

    Ceiling divisions are lowered too unless ``ceildiv`` is false. Raises
    :class:`LoweringError` if a division to lower is left.
    """
    if _leftover(term, target, ceildiv) is None:
        return term
    rules = lowering_ruleset(target, ceildiv=ceildiv)
    out, reason = rewrite_stop(term, rules, max_steps=_STEPS)
    left = _leftover(out, target, ceildiv)
    if left is not None:
        if reason is not StopReason.FIXED_POINT:
            raise LoweringError(
                f"lowering to {target.value} division stopped ({reason.value}) before "
                f"{brief(left)} was lowered"
            )
        raise LoweringError(_why_left(left, target, ceildiv))
    return out


def _why_left(left: Term, target: Semantics, ceildiv: bool) -> str:
    """Why the division ``left`` (one the lowering must remove) was not lowered."""
    rules = lowering_ruleset(target, ceildiv=ceildiv)
    divisions = [t for t in postorder(left) if _lowered(t, target, ceildiv)]
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
