"""Batch application of local sum rules on long sums (issue 14).

A rule such as ``divmod-recombine-in-sum``, pattern ``x % N + (x // N)*N + y`` and rewrite
``x + y``, rewrites two addends of a sum and leaves the rest ``y`` as it is. On a sum of
``n`` such pairs the rewriter applies it ``n`` times, rebuilding the O(n) sum each time:
quadratic. Here every disjoint match in the sum is found in one scan and the sum is
rebuilt once.

**When that is sound.** A rule is *local* (:func:`local_rule`) when its pattern is a sum
``p1 + ... + pk + y`` with a rest ``y`` (no constant, no sequence), no guard conjunct and
no let reads ``y``, and its rewrite is ``r + y`` with ``y`` added once and not read by
``r``. Its proof (``quorem verify``) holds for every ``y``, ``y = 0`` included, so each
match's addends ``m`` equal its ``r`` wherever the guard holds, which it does without
``y``: a sum with disjoint matches ``m1 ... mj`` and the rest ``z`` equals
``r1 + ... + rj + z``, and that is what applying the matches one after another builds,
as long as no ``ri`` adds to an atom a later match consumes (then the later match would
have seen another coefficient): such a match is left for the next step. Each ``ri`` is
computed by the rule itself (compiled or reference, as the dispatcher would), applied
to the sum of the match's atoms alone.

The rewriter calls :func:`batched` only after its dispatcher chose a local rule for a
sum of more than :data:`BATCH_ATOMS` atoms; the result replaces that one application and
counts as one step. A result that does not provably fit in int64 where the input did is
not taken (the single application is).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from .matcher import Bindings, instantiate, match
from .ops import DIVISION_OPS, Op, Semantics
from .rule import (
    Binary,
    Expr,
    Name,
    PAddend,
    Pattern,
    PConst,
    POp,
    PSum,
    PTerm,
    Rule,
    expr_names,
    pattern_op,
)
from .ruleset import RuleSet
from .term import Term, linear, linear_update, lookup, op_block

__all__ = [
    "BATCH_ATOMS",
    "BatchRule",
    "batch_hook",
    "batch_rules",
    "batched",
    "local_rule",
    "one_at_a_time",
]

BATCH_ATOMS: Final = 32  # a sum with more atoms is long enough to batch

Applier = Callable[[Term], "Term | None"]


@dataclasses.dataclass(frozen=True, slots=True)
class _Instance:
    """One semantics' instance of a local rule."""

    first: PAddend  # searched for among the sum's atoms
    others: tuple[PAddend, ...]  # determined by the first's bindings: looked up
    first_op: Op | None  # the first addend's operator, if it is an operator pattern
    semantics: Semantics | None
    fn: Applier  # the rule instance's own application (compiled or reference)
    quick: _Quick | None = None  # leaf patterns: bind and look up without the matcher


# Operator patterns whose operands are distinct names, with operators built as they are
# (no operand order to try): ``x % N + (x // N)*N + y``. The first addend's operands give
# the names (``(name, is_constant)`` per operand), the others are looked up from them.
_Quick = tuple[tuple[tuple[str, bool], ...], tuple[tuple[Op, tuple[str, ...]], ...]]
_AS_BUILT: Final = frozenset({*DIVISION_OPS, Op.CEILDIV, Op.LT, Op.LE})


def _leaves(p: Pattern, sem: Semantics | None) -> tuple[Op, tuple[tuple[str, bool], ...]] | None:
    if not isinstance(p, POp) or not all(isinstance(c, PTerm | PConst) for c in p.children):
        return None
    op = pattern_op(p.op, sem)
    names = tuple((c.name, isinstance(c, PConst)) for c in p.children)  # type: ignore[union-attr]
    if op not in _AS_BUILT or len({n for n, _ in names}) != len(names):
        return None
    return op, names


def _quick(first: PAddend, others: tuple[PAddend, ...], sem: Semantics | None) -> _Quick | None:
    head = _leaves(first.pattern, sem)
    if head is None:
        return None
    kinds = dict(head[1])
    looked: list[tuple[Op, tuple[str, ...]]] = []
    for a in others:
        other = _leaves(a.pattern, sem)
        if other is None or any(kinds.get(n) is not k for n, k in other[1]):
            return None
        looked.append((other[0], tuple(n for n, _ in other[1])))
    return head[1], tuple(looked)


@dataclasses.dataclass(frozen=True, slots=True)
class BatchRule:
    """A local rule (see :func:`local_rule`): its instances, in the dispatcher's order."""

    name: str
    instances: tuple[_Instance, ...]


def _plus_terms(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "+":
        return _plus_terms(e.left) + _plus_terms(e.right)
    return [e]


def local_rule(rule: Rule) -> str | None:
    """Why ``rule`` is not local (may not be batched), or None if it is.

    Local: the pattern is ``p1 + ... + pk + y`` (a rest ``y``, no constant, no sequence);
    lets and guard do not read ``y``; the rewrite is ``r + y``, ``y`` added once, not
    read by ``r``; and every addend after the first is determined by the names the
    first's pattern binds (so a match is found from its first atom by look-ups).
    """
    p = rule.pattern
    if rule.by_own_pass:
        return "a pass of its own applies the rule"
    if not isinstance(p, PSum) or p.rest is None or p.seq is not None or p.const is not None:
        return "the pattern is not p1 + ... + pk + y"
    if not p.addends:
        return "the pattern has no addend besides the rest"
    y = p.rest
    if any(y in expr_names(e) for _, e in rule.lets):
        return "a let reads the rest"
    if rule.guard is not None and y in expr_names(rule.guard):
        return "the guard reads the rest"
    parts = _plus_terms(rule.rewrite)
    plain = [e for e in parts if e == Name(y, rule.names[y])]
    if len(plain) != 1 or any(y in expr_names(e) for e in parts if e not in plain):
        return "the rewrite is not r + y with r not reading y"
    first_names = _names(p.addends[0])
    for a in p.addends[1:]:
        if not _names(a) <= first_names or "<sum>" in _names(a):
            return "an addend is not determined by the first"
    return None


def _names(a: PAddend) -> set[str]:
    """The names an addend's pattern binds (its coefficient aside)."""
    out: set[str] = set()
    stack: list[Pattern] = [a.pattern]
    while stack:
        q = stack.pop()
        if isinstance(q, PTerm | PConst):
            out.add(q.name)
        elif isinstance(q, POp):
            stack.extend(q.children)
        elif isinstance(q, PSum):
            out |= {"<sum>"}  # a nested sum is matched, never looked up
    return out


_CACHE: weakref.WeakKeyDictionary[RuleSet, dict[bool, dict[str, BatchRule]]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()
_OFF = threading.local()  # one_at_a_time() depth, per thread


@contextlib.contextmanager
def one_at_a_time() -> Iterator[None]:
    """Within this block (in this thread), rewriting applies every rule one match at a time.

    For tests comparing the rewriter step by step with a reference: batching changes the
    steps taken (not the result).
    """
    _OFF.depth = getattr(_OFF, "depth", 0) + 1
    try:
        yield
    finally:
        _OFF.depth -= 1


def batch_rules(ruleset: RuleSet, *, early: bool) -> dict[str, BatchRule]:
    """The local rule instances on sums of ``ruleset`` by name (the early ones if ``early``).

    A rule stated for two semantics has two instances; the dispatcher names only the
    rule, so a batch tries each instance in the dispatcher's order (each is proven on its
    own). Computed once per rule set. Empty inside :func:`one_at_a_time`.
    """
    if getattr(_OFF, "depth", 0):
        return {}
    with _LOCK:
        per = _CACHE.setdefault(ruleset, {})
        found = per.get(early)
        if found is not None:
            return found
        instances: dict[str, list[_Instance]] = {}
        for c in ruleset.rules_for(Op.ADD):
            if (early and not c.rule.early) or local_rule(c.rule) is not None:
                continue
            p = c.rule.pattern
            assert isinstance(p, PSum)
            first = p.addends[0]
            first_op = (
                pattern_op(first.pattern.op, c.semantics)
                if isinstance(first.pattern, POp)
                else None
            )
            others = p.addends[1:]
            quick = _quick(first, others, c.semantics)
            instances.setdefault(c.name, []).append(
                _Instance(first, others, first_op, c.semantics, c.fn, quick)
            )
        out = {name: BatchRule(name, tuple(each)) for name, each in instances.items()}
        per[early] = out
        return out


def batch_hook(rules: dict[str, BatchRule], u: Term, found: tuple[Term, str]) -> tuple[Term, str]:
    """What the rewriter applies at the long sum ``u`` where its dispatcher found ``found``.

    ``found`` itself, or, if its rule is local, every disjoint match of that rule at once.
    """
    rule = rules.get(found[1])
    if rule is None:
        return found
    out = batched(rule, u)
    return found if out is None else (out, found[1])


def batched(rule: BatchRule, u: Term) -> Term | None:
    """``u`` (a sum) with every disjoint match of ``rule`` rewritten, built once.

    None when fewer than two matches apply (the rewriter's single application is as
    good) or the result may leave int64 where ``u`` does not.
    """
    atoms: tuple[Term, ...] = u.args
    coefs, constant = u.arg
    coef_of = dict(zip(atoms, coefs, strict=True))
    used: set[Term] = set()  # atoms consumed by a match
    produced: set[Term] = set()  # atoms the rewrites add to
    extra: list[tuple[Term, int]] = []
    count = 0
    for inst in rule.instances:
        sem = inst.semantics
        if inst.first_op is not None:
            i, j = op_block(atoms, inst.first_op)
            candidates = zip(atoms[i:j], coefs[i:j], strict=True)
        else:
            candidates = zip(atoms, coefs, strict=True)
        for a0, c0 in candidates:
            if a0 in used or a0 in produced:
                continue
            if inst.quick is not None:
                found = _quick_group(
                    inst.quick, a0, c0, coef_of=coef_of, used=used, produced=produced
                )
                groups: Iterable[list[tuple[Term, int]] | None] = () if found is None else (found,)
            else:
                groups = (
                    _group(inst, a0, c0, b, coef_of=coef_of, used=used, produced=produced)
                    for b in match(inst.first.pattern, a0, {}, sem)
                )
            for group in groups:
                if group is None:
                    continue
                out = inst.fn(linear(group))
                if out is None:
                    continue
                pairs, k = out.addends()
                used.update(a for a, _ in group)
                produced.update(a for a, _ in pairs)
                extra += pairs
                constant += k
                count += 1
                break
    if count < 2:
        return None
    result = linear_update(atoms, coefs, tuple(used), extra, constant)
    if not result.fits64 and u.fits64:
        return None
    return result


def _quick_group(
    quick: _Quick,
    a0: Term,
    c0: int,
    *,
    coef_of: dict[Term, int],
    used: set[Term],
    produced: set[Term],
) -> list[tuple[Term, int]] | None:
    """:func:`_group` for leaf patterns: operands bound and partners looked up directly.

    The same candidates as the matcher's: ``a0`` has the first pattern's operator (its
    operator block), a constant name binds a constant operand, and a partner
    ``op(names...)`` exists exactly when :func:`~quorem.term.lookup` finds it.
    """
    names, looked = quick
    args = a0.args
    b: dict[str, Term] = {}
    for (name, is_const), arg in zip(names, args, strict=True):
        if is_const and arg.op is not Op.CONST:
            return None
        b[name] = arg
    group = [(a0, c0)]
    for op, operands in looked:
        g = lookup(op, tuple(b[n] for n in operands))
        c = None if g is None else coef_of.get(g)
        if g is None or c is None or g in used or g in produced:
            return None
        if any(g is h for h, _ in group):
            return None
        group.append((g, c))
    return group


def _group(
    inst: _Instance,
    a0: Term,
    c0: int,
    b: Bindings,
    *,
    coef_of: dict[Term, int],
    used: set[Term],
    produced: set[Term],
) -> list[tuple[Term, int]] | None:
    """The atoms of one candidate match: ``a0`` and those its bindings determine, or None.

    None when an atom is missing, taken by an earlier match, added to by an earlier
    rewrite, or met twice.
    """
    group = [(a0, c0)]
    for add in inst.others:
        g = instantiate(add.pattern, b, inst.semantics)
        c = None if g is None else coef_of.get(g)
        if g is None or c is None or g in used or g in produced:
            return None
        if any(g is h for h, _ in group):
            return None
        group.append((g, c))
    return group
