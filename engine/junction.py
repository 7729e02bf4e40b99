"""Clause-pair rules on long ``and``/``or`` chains: indexed matching, all pairs at once.

A junction rule ``A and (B and r)`` (or ``or``) picks two clauses anywhere in a chain and
binds ``r`` to the others. Matched naively, every clause is tried for ``A`` and every
other clause for ``B``, and the chain of the others is built for ``r`` on every try:
quadratic per attempt. Applied one pair per step, each step rebuilds the whole chain:
quadratic again over the steps, and cubic with the rules tried at every tail of the
chain.

Here a long chain is one node (the rewriter visits its clauses, never its tails), and
a pair rule is applied to it by :func:`apply_pair_rules`:

* the clauses are indexed by operator and by each operand; once ``A`` has matched, an
  operand of ``B`` whose names are all bound is built and looked up, so ``B`` is tried
  only on the clauses holding that very operand (terms are interned: identity is
  equality);
* every disjoint pair the rule matches is rewritten at once. This is sound because the
  rewrite is ``E and r`` with ``E``, the guard and the lets not reading ``r`` (checked
  when the rule is taken, see :func:`pair_rule`): each pair's identity holds whatever
  the other clauses are, so applying one after another, each with the rest as ``r``,
  gives the same chain as applying them together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from .errors import TermError
from .interpret import Undetermined, evaluate_expr, evaluate_to_term
from .matcher import Bindings, match
from .ops import COMMUTATIVE, Op, Semantics
from .rule import (
    Binary,
    Expr,
    Name,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    expr_names,
    pattern_op,
)
from .ruleset import CompiledRule
from .term import Term, const, junction_clauses, linear

__all__ = [
    "LONG_CHAIN",
    "ChainRules",
    "PairRule",
    "apply_pair_rules",
    "chain_rules",
    "is_long_chain",
    "pair_rule",
]

LONG_CHAIN: Final = 8  # clauses; a chain of more is rewritten as one node, pairs at once
_JUNCTION_TEXT: Final = {Op.AND: "and", Op.OR: "or"}


@dataclasses.dataclass(frozen=True, slots=True)
class PairRule:
    """A rule ``A op (B op r)`` whose rewrite is ``E op r``, ready for long chains.

    Attributes:
        rule: the rule instance.
        first: the pattern ``A`` of one clause.
        second: the pattern ``B`` of another.
        neutral: the clause ``r`` is bound to when the rewrite is evaluated for ``E``
            (``1`` for ``and``, ``0`` for ``or``: ``E and 1`` is ``E``).
        rest: the name ``r``.

    """

    rule: CompiledRule
    first: Pattern
    second: Pattern
    neutral: Term
    rest: str


def pair_rule(rule: CompiledRule) -> PairRule | None:
    """``rule`` as a :class:`PairRule`, or None if it is not of that form.

    The form: the pattern is ``A op (B op r)`` with ``r`` a term name, the rewrite is
    ``E op r`` (either order) where ``E`` does not use ``r``, and no let nor the guard
    uses ``r``.
    """
    p = rule.rule.pattern
    op = rule.root
    if op not in _JUNCTION_TEXT or not isinstance(p, POp) or len(p.children) != 2:
        return None
    first, inner = p.children
    if not (isinstance(inner, POp) and inner.op == p.op and len(inner.children) == 2):
        return None
    second, rest = inner.children
    if not isinstance(rest, PTerm):
        return None
    r = rest.name
    if not _rewrite_keeps_rest(rule.rule.rewrite, p.op, r):
        return None
    if any(r in expr_names(e) for _, e in rule.rule.lets):
        return None
    if rule.rule.guard is not None and r in expr_names(rule.rule.guard):
        return None
    neutral = const(1 if op is Op.AND else 0)
    return PairRule(rule, first, second, neutral, r)


def _rewrite_keeps_rest(e: Expr, op_text: str, r: str) -> bool:
    """Whether ``e`` is ``E op r`` or ``r op E`` with ``E`` not using ``r``."""
    if not (isinstance(e, Binary) and e.op == op_text):
        return False
    for mine, other in ((e.right, e.left), (e.left, e.right)):
        if isinstance(mine, Name) and mine.name == r and r not in expr_names(other):
            return True
    return False


def is_long_chain(t: Term) -> bool:
    """Whether ``t`` is an ``and``/``or`` chain of more than :data:`LONG_CHAIN` clauses."""
    op = t.op
    if op is not Op.AND and op is not Op.OR:
        return False
    n = 1
    while t.op is op:
        n += 1
        if n > LONG_CHAIN:
            return True
        t = t.args[1]
    return False


class _ClauseIndex:
    """The clauses of a chain by operator, and by operator and operand.

    An operand of a commutative operator (``==``, ``!=``) is indexed at either side
    (position -1): the matcher tries both orders of its operands.
    """

    def __init__(self, clauses: Sequence[Term]) -> None:
        self.by_op: dict[Op, list[int]] = {}
        self.by_operand: dict[tuple[Op, int, Term], list[int]] = {}
        for i, c in enumerate(clauses):
            self.by_op.setdefault(c.op, []).append(i)
            either = c.op in COMMUTATIVE
            for k, a in enumerate(c.args):
                found = self.by_operand.setdefault((c.op, -1 if either else k, a), [])
                if not found or found[-1] != i:  # (both sides one term: listed once)
                    found.append(i)

    def candidates(self, p: Pattern, b: Bindings, sem: Semantics | None) -> list[int]:
        """Indices of the clauses ``p`` may match under ``b`` (a superset of those it does)."""
        if not isinstance(p, POp):
            return []
        try:
            op = pattern_op(p.op, sem)
        except (AssertionError, KeyError):
            return []
        either = op in COMMUTATIVE
        for k, child in enumerate(p.children):
            built = _built(child, b, sem)
            if built is not None:
                return self.by_operand.get((op, -1 if either else k, built), [])
        return self.by_op.get(op, [])


def _built(p: Pattern, b: Bindings, sem: Semantics | None) -> Term | None:
    """The term ``p`` denotes under ``b`` if every name it uses is bound, else None.

    Canonical terms are interned, so a clause operand ``p`` matches under ``b`` is this
    very term. (None is always safe: the caller then tries every clause.)
    """
    try:
        if isinstance(p, PTerm):
            v = b.get(p.name)
            return v if isinstance(v, Term) else None
        if isinstance(p, PConst):
            w = b.get(p.name)
            return const(w) if isinstance(w, int) and not isinstance(w, bool) else None
        if isinstance(p, PLit):
            return const(p.value)
        if isinstance(p, PSum) and p.seq is None:
            pairs: list[tuple[Term, int]] = []
            for a in p.addends:
                atom = _built(a.pattern, b, sem)
                coef = evaluate_expr(a.coef, b, sem)
                if atom is None or not isinstance(coef, int) or isinstance(coef, bool):
                    return None
                pairs.append((atom, coef))
            k = 0
            if p.const is not None:
                kv = evaluate_expr(p.const, b, sem)
                if not isinstance(kv, int) or isinstance(kv, bool):
                    return None
                k = kv
            if p.rest is not None:
                rest = b.get(p.rest)
                if not isinstance(rest, Term):
                    return None
                pairs.append((rest, 1))
            return linear(pairs, k)
    except (Undetermined, TermError, KeyError):
        return None
    return None


def _fire(rule: PairRule, b: Bindings) -> Term | None:
    """``E`` for the match ``b`` if the guard holds, else None (as the reference does)."""
    r = rule.rule.rule
    sem = rule.rule.semantics
    env: Bindings = {**b, rule.rest: rule.neutral}
    try:
        for name, e in r.lets:
            value = evaluate_expr(e, env, sem)
            if not isinstance(value, int | Term) or isinstance(value, bool):
                return None
            env[name] = value
        if r.guard is not None and evaluate_expr(r.guard, env, sem) is not True:
            return None
        return evaluate_to_term(r.rewrite, env, sem)
    except Undetermined:
        return None


def _disjoint_rewrites(
    rule: PairRule, clauses: list[Term], index: _ClauseIndex
) -> tuple[list[Term], set[int]]:
    """The rewrites ``E`` of disjoint clause pairs the rule matches, and the pairs' clauses.

    Clauses are taken in chain order for ``A``, and for each the first ``B`` that fires.
    """
    sem = rule.rule.semantics
    used: set[int] = set()
    made: list[Term] = []
    for i in index.candidates(rule.first, {}, sem):
        if i in used:
            continue
        done = False
        for b1 in match(rule.first, clauses[i], {}, sem):
            for j in index.candidates(rule.second, b1, sem):
                if j == i or j in used:
                    continue
                for b2 in match(rule.second, clauses[j], b1, sem):
                    out = _fire(rule, b2)
                    if out is not None:
                        made.append(out)
                        used.update((i, j))
                        done = True
                        break
                if done:
                    break
            if done:
                break
    return made, used


ChainRules = Mapping[Op, tuple[CompiledRule | PairRule, ...]]
# The last few tables seen, by identity (a table is a dict: neither hashable nor weakly
# referable); kept few, since each holds its rule set alive.
_CHAIN_RULES: dict[int, tuple[object, ChainRules]] = {}
_CACHED_TABLES: Final = 8


def chain_rules(by_op: Mapping[Op, Sequence[CompiledRule]], owner: object) -> ChainRules:
    """The ``and`` and ``or`` rules of ``by_op`` by priority, pair rules as :class:`PairRule`.

    Made once per ``owner`` (the dispatcher table the rules come from) and kept with it.
    """
    entry = _CHAIN_RULES.get(id(owner))
    if entry is not None and entry[0] is owner:
        return entry[1]
    got: ChainRules = {
        op: tuple(pair_rule(r) or r for r in by_op.get(op, ())) for op in (Op.AND, Op.OR)
    }
    if len(_CHAIN_RULES) >= _CACHED_TABLES:
        _CHAIN_RULES.pop(next(iter(_CHAIN_RULES)), None)
    _CHAIN_RULES[id(owner)] = (owner, got)
    return got


def apply_pair_rules(
    chain: Term, rules: Sequence[CompiledRule | PairRule], build: Callable[[list[Term]], Term]
) -> tuple[Term, str, int] | None:
    """The first rule (in order) that applies to the long ``chain``, applied everywhere.

    ``rules`` are the chain operator's rules by priority: a :class:`PairRule` is applied
    to every disjoint pair of clauses it matches at once; any other rule by its own
    matcher, once. ``build`` makes the chain of a list of clauses (``conjunction`` or
    ``disjunction``). Returns the new chain, the rule's name and the number of
    applications, or None when no rule applies.
    """
    clauses = junction_clauses(chain)
    index: _ClauseIndex | None = None
    for rule in rules:
        if isinstance(rule, PairRule):
            if index is None:
                index = _ClauseIndex(clauses)
            made, used = _disjoint_rewrites(rule, clauses, index)
            if not made:
                continue
            kept = [c for i, c in enumerate(clauses) if i not in used]
            out = build(made + kept)
            if out is not chain:
                return out, rule.rule.name, len(made)
            continue
        got = rule.apply(chain)
        if got is not None and got is not chain:
            return got, rule.name, 1
    return None
