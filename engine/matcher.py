"""Match rule patterns against canonical terms (backtracking, bindings as dicts).

A match is a dictionary from the pattern's names to what they matched: a term, an int,
or, for the sequence names of ``sum(K*t)``, a list per addend. Matching respects the
canonical form: commutative operands are tried in both orders, and a sum pattern sees
any term as a sum (see :class:`~quorem.rule.PSum`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from .errors import TermError
from .interpret import Binding, Undetermined, evaluate_expr
from .ops import COMMUTATIVE, LOGICAL, Op, Semantics
from .rule import (
    Call,
    Expr,
    Lit,
    Name,
    PAddend,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Unary,
    pattern_op,
)
from .term import Term, binary, const, junction_chain, junction_clauses, linear

__all__ = ["Bindings", "child_cost", "instantiate", "match"]

Bindings = dict[str, Binding]
JUNCTION_CLAUSES: Final = 64  # the longest chain of clauses a junction pattern is matched in
_NO_ROOT: Final = None


def match(p: Pattern, t: Term, b: Bindings, sem: Semantics | None) -> Iterator[Bindings]:
    """Yield every extension of bindings ``b`` under which pattern ``p`` equals term ``t``."""
    if isinstance(p, PTerm):
        got = b.get(p.name)
        if got is None:
            yield {**b, p.name: t}
        elif got is t:
            yield b
        return
    if isinstance(p, PConst):
        if t.op is not Op.CONST:
            return
        got = b.get(p.name)
        if got is None:
            yield {**b, p.name: t.arg}
        elif got == t.arg:
            yield b
        return
    if isinstance(p, PLit):
        if t.op is Op.CONST and t.arg == p.value:
            yield b
        return
    if isinstance(p, POp):
        yield from _match_op(p, t, b, sem)
        return
    yield from _match_sum(p, t, b, sem)


def child_cost(p: Pattern) -> int:
    """Match cheap, binding children first: constants, then variables, then structure."""
    if isinstance(p, PConst | PLit):
        return 0
    if isinstance(p, PTerm):
        return 1
    if isinstance(p, POp):
        return 2
    if p.seq is not None and p.seq.where is not None:
        return 4  # last: its per-addend condition may read the names of its siblings
    return 3


def _match_op(p: POp, t: Term, b: Bindings, sem: Semantics | None) -> Iterator[Bindings]:
    op = pattern_op(p.op, sem)
    if t.op is not op or len(t.args) != len(p.children):
        return
    if op in LOGICAL:
        yield from _match_junction(p, t, b, sem)
        return
    orders = [(0, 1)]
    if op in COMMUTATIVE:
        orders.append((1, 0))
    for order in orders:
        pairs = [(p.children[i], t.args[j]) for i, j in enumerate(order)]
        pairs.sort(key=lambda pair: child_cost(pair[0]))
        yield from _match_all(pairs, b, sem)


def _match_junction(p: POp, t: Term, b: Bindings, sem: Semantics | None) -> Iterator[Bindings]:
    """Match ``A and B`` (or ``A or B``) against a chain of clauses, in any grouping.

    A chain is one associative, commutative operation over its clauses (the canonical
    form sorts and nests them), so ``A`` may match any clause and ``B`` the chain of the
    others: ``P and (Q and r)`` picks two clauses anywhere and binds ``r`` to the rest.
    A chain of more than :data:`JUNCTION_CLAUSES` clauses is not matched: the rule would
    be tried at each of its tails too, so the work would grow as the cube of its length.
    """
    clauses = junction_clauses(t, JUNCTION_CLAUSES)
    if clauses:
        yield from _match_clauses(p, clauses, t.op, b, sem)


def _match_clauses(
    p: POp, clauses: list[Term], op: Op, b: Bindings, sem: Semantics | None
) -> Iterator[Bindings]:
    for first, second in ((p.children[0], p.children[1]), (p.children[1], p.children[0])):
        for i, clause in enumerate(clauses):
            for b1 in match(first, clause, b, sem):
                rest = clauses[:i] + clauses[i + 1 :]
                if len(rest) == 1:
                    yield from match(second, rest[0], b1, sem)
                elif isinstance(second, POp) and pattern_op(second.op, sem) is op:
                    # the rest is a chain: match the pattern's own chain clause by clause
                    yield from _match_clauses(second, rest, op, b1, sem)
                elif not isinstance(second, POp | PConst | PLit):  # may match a chain term
                    yield from match(second, junction_chain(op, rest), b1, sem)


def _match_all(
    pairs: list[tuple[Pattern, Term]], b: Bindings, sem: Semantics | None
) -> Iterator[Bindings]:
    if not pairs:
        yield b
        return
    (p, t), rest = pairs[0], pairs[1:]
    for b1 in match(p, t, b, sem):
        yield from _match_all(rest, b1, sem)


def _bind_const(e: Expr, value: int, b: Bindings, sem: Semantics | None) -> Bindings | None:
    """Match a constant expression against ``value``: bind a fresh name or compare."""
    if isinstance(e, Lit):
        return b if e.value == value else None
    if isinstance(e, Name) and e.name not in b:
        return {**b, e.name: value}
    if isinstance(e, Unary) and isinstance(e.operand, Name) and e.operand.name not in b:
        return {**b, e.operand.name: -value}
    try:
        got = evaluate_expr(e, b, sem)
    except (Undetermined, KeyError):
        return None
    return b if got == value else None


def _root_op(p: Pattern, sem: Semantics | None) -> Op | None:
    if isinstance(p, POp):
        return pattern_op(p.op, sem)
    return _NO_ROOT


def _match_sum(p: PSum, t: Term, b: Bindings, sem: Semantics | None) -> Iterator[Bindings]:
    pairs, k = t.addends()
    if p.const is not None:
        b0 = _bind_const(p.const, k, b, sem)
        if b0 is None:
            return
        k = 0
        b = b0
    elif p.rest is None and k != 0:
        return
    yield from _SumMatch(p, pairs, k, sem).addends(0, frozenset(), b)


class _SumMatch:
    """Assigns the addends of a sum pattern to distinct addends of one term."""

    def __init__(
        self, p: PSum, pairs: list[tuple[Term, int]], k: int, sem: Semantics | None
    ) -> None:
        self.p = p
        self.pairs = pairs
        self.coeffs = dict(pairs)
        self.k = k
        self.sem = sem

    def addends(self, i: int, used: frozenset[Term], b: Bindings) -> Iterator[Bindings]:
        p, sem = self.p, self.sem
        if i == len(p.addends):
            yield from self.remainder(used, b)
            return
        add: PAddend = p.addends[i]
        ground = instantiate(add.pattern, b, sem)
        if ground is not None:
            # Fully determined by earlier bindings: look it up instead of searching.
            c = self.coeffs.get(ground)
            if c is not None and ground not in used:
                b1 = _bind_const(add.coef, c, b, sem)
                if b1 is not None:
                    yield from self.addends(i + 1, used | {ground}, b1)
            return
        root = _root_op(add.pattern, sem)
        for atom, c in self.pairs:
            if atom in used or (root is not None and atom.op is not root):
                continue
            b1 = _bind_const(add.coef, c, b, sem)
            if b1 is None:
                continue
            for b2 in match(add.pattern, atom, b1, sem):
                yield from self.addends(i + 1, used | {atom}, b2)

    def remainder(self, used: frozenset[Term], b: Bindings) -> Iterator[Bindings]:
        p = self.p
        left = [(atom, c) for atom, c in self.pairs if atom not in used]
        if p.seq is not None and p.seq.where is not None:
            yield from self.filtered(left, b)
            return
        if p.seq is not None:
            if not left or self.k != 0:
                return
            yield {**b, p.seq.coef: [c for _, c in left], p.seq.term: [a for a, _ in left]}
            return
        if p.rest is None:
            if not left:
                yield b
            return
        rest = linear(left, self.k)
        got = b.get(p.rest)
        if got is None:
            yield {**b, p.rest: rest}
        elif got is rest:
            yield b

    def filtered(self, left: list[tuple[Term, int]], b: Bindings) -> Iterator[Bindings]:
        """``sum(K*t, cond) + y``: the addends left where ``cond`` holds, and the rest.

        At least one addend must satisfy the condition; if it is undetermined for any
        addend (or names a constant not bound yet), the pattern does not match.
        """
        p = self.p
        assert p.seq is not None and p.seq.where is not None and p.rest is not None
        k_name, t_name = p.seq.coef, p.seq.term
        test = Call("all", (p.seq.where,))
        ks: list[int] = []
        ts: list[Term] = []
        others: list[tuple[Term, int]] = []
        for atom, c in left:
            try:
                holds = evaluate_expr(test, {**b, k_name: [c], t_name: [atom]}, self.sem)
            except (Undetermined, KeyError):
                return
            if holds is True:
                ks.append(c)
                ts.append(atom)
            else:
                others.append((atom, c))
        if not ks:
            return
        rest = linear(others, self.k)
        b1: Bindings = {**b, k_name: ks, t_name: ts}
        got = b.get(p.rest)
        if got is None:
            yield {**b1, p.rest: rest}
        elif got is rest:
            yield b1


def instantiate(p: Pattern, b: Bindings, sem: Semantics | None) -> Term | None:
    """The term ``p`` denotes under bindings ``b``, or None if some name is unbound."""
    if isinstance(p, PTerm):
        v = b.get(p.name)
        return v if isinstance(v, Term) else None
    if isinstance(p, PConst):
        v = b.get(p.name)
        return const(v) if isinstance(v, int) else None
    if isinstance(p, PLit):
        return const(p.value)
    if isinstance(p, POp):
        kids = [instantiate(c, b, sem) for c in p.children]
        if any(k is None for k in kids):
            return None
        try:
            return binary(pattern_op(p.op, sem), kids[0], kids[1])  # type: ignore[arg-type]
        except TermError:
            return None
    return None  # sums are matched, never looked up
