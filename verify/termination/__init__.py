"""Per-rule termination: every rule must make the term it rewrites smaller in one order.

The order
---------
A term's *measure* is a tuple of six natural numbers, compared lexicographically (a
well-founded order). Each component is a sum over the nodes of the term as a tree (a
subterm that occurs twice counts twice):

0. **junction count** ``J``: the number of ``and`` and ``or`` nodes. No rule builds more
   than its pattern matched, so every other rule keeps it; a rule that merges clauses
   (``0 <= x - y*5 and x - y*5 < 5 => y == x // 5``) lowers it, and may then add a
   division.
1. **div/mod count** ``D``: the number of ``//`` and ``%`` nodes (floor, truncating and
   Euclidean), with ``ceildiv`` counting 2 (it is ``-((-a) // b)``), so that stating a
   ceiling division as a floor one (``ceildiv(x, 4) => (x + 3) // 4``) decreases it.
2. **divisor magnitude** ``V``: the sum over the ``//`` and ``%`` nodes of their divisor's
   weight: ``|c_1| + ... + |c_n| + |k|`` for the divisor seen as a canonical sum
   ``c_1*t_1 + ... + c_n*t_n + k``, which is ``|d|`` for a constant ``d``
   (``div-by-common-factor`` divides it by the factor, ``divide-by-gcd`` divides a
   symbolic divisor's coefficients).
3. **misplaced constants** ``P``: for each ``//`` or ``%`` node whose divisor is a constant
   ``d``, the number of coefficients and the constant of its numerator, seen as a
   canonical sum ``c_1*t_1 + ... + c_n*t_n + k``, that lie outside ``[0, |d|)``
   (``(x + 7) // 3 => (x + 1) // 3 + 2`` and ``mod-reduce-coefficients`` decrease it);
   for a divisor that is not a constant, every non-zero coefficient and constant of the
   numerator (none is a reduced residue of a symbolic divisor: taking the multiples of
   a monomial divisor out, ``(a*n + b) // n => a + b // n``, decreases it).
4. **node count** ``N``: 2 per operator node (``max min * < <= == != // %``), 1 per
   variable and per non-zero constant. Sums are transparent: a sum's ``+`` and its
   coefficients weigh nothing and its non-zero constant 1, so ``N(c*x + y + k)`` is
   ``N(x) + N(y) + [k != 0]``. An operator weighs 2 so that folding one to a constant,
   which weighs at most 1, decreases ``N`` even when its operands are zeros
   (``0 <= 0 => 1``).
5. **comparison weight** ``Q``: the sum over the comparison nodes (``< <= == !=``) of
   their operands' weights: for each operand seen as a canonical sum
   ``c_1*t_1 + ... + c_n*t_n + k``, ``|c_1| + ... + |c_n| + |k|``, plus 1 if it has both
   an atom and a non-zero constant. Rules that only divide a comparison's coefficients
   and constant by a common factor (``x*3 < 10 => x < 4``, tinygrad's lt_folding) or move
   its constant to the constant's side (``x + 1 < 0 => x < -1``) change no other
   component, and decrease this one.

The order of the components matters only in that ``J`` comes first and ``Q`` last: every
rule shown decreasing before they were added still is, by the same component (its
pattern and rewrite have no junction, so ``J`` is the same on both sides).

Every component is *sum-transparent* (a sum measures the sum of its atoms' measures,
plus ``[k != 0]`` in ``N``), so the rest ``y`` of a sum pattern is exact: the matched
sum measures ``measure(matched addends) + measure(y)``. :func:`term_measure` computes
the measure of a concrete term.

The check
---------
For each rule instance (rule x semantics x arity of its ``sum(K*t)``) the measure of the
matched term and of the built replacement are computed *symbolically*
(:func:`rule_measures`):

* a term variable ``x`` contributes unknowns ``D(x) V(x) P(x) N(x) >= 0`` once per
  occurrence, so a rewrite mentioning a variable more often than the pattern can never
  be shown smaller (the variable's measure is unbounded). ``N(x) >= 1`` where ``x``
  matched an addend of a sum (an atom), and ``N(x) == 0`` only for the constant 0;
* a variable's sum form is described by unknowns shared by both sides: its constant
  ``k(x)`` (0 for an atom or a rest whose constant is matched apart), its misplaced
  coefficients relative to a divisor magnitude ``n``, an uninterpreted ``mu(x)(n) >= 0``,
  and ``w(x)``, the weight of ``x``'s sum form as a divisor (``|x|`` for a constant,
  1 for an atom);
* what depends on the matched constants (is ``C % D`` in ``[0, |D|)``; does an addend
  whose coefficient ``K % D`` is 0 vanish) is a Z3 integer expression over the rule's
  constants, under the premises of :func:`~quorem.verify.encode.encode_rule` (the
  pattern is defined, lets and guard hold, range and gcd axioms, matched coefficients
  are non-zero). The rewrite's constant sub-expressions are tied to the encoder's own
  values by encoding the rule with extra guard conjuncts ``_m1 == <sub-expression>``
  over fresh names, so lets, gcds and divisions are exactly the encoder's.

For the pattern the symbolic measure is exact or a lower bound (where the pattern does
not say whether a divisor is a constant, its misplaced count is taken as 0); for the
rewrite it is an upper bound of the canonical term built (canonicalization may combine
atoms or drop zero coefficients, which only lowers every component), or *unbounded*
where the shape of the built term is not determined (a numerator whose addends may
combine, changing its coefficients; a divisor that may or may not be a constant): then
that component cannot be shown.

A rule instance is **decreasing** if, for some component ``i``, Z3 shows the components
before ``i`` never grow and component ``i`` always shrinks (``unsat`` of the negation
under the premises; ``unknown`` never counts). The method reported names that component.
Failing that, the lexicographic comparison is tried as one formula, the shrinking
component then depending on the instance (method ``lexicographic by cases``).

What is proven, and what is assumed
-----------------------------------
Proven: at the node it rewrites, a rule shown decreasing turns the matched term into a
replacement with a smaller measure, for every match the encoder's premises allow.

The rewriter replaces that node inside a larger term and rebuilds the ancestors in
canonical form (sums flattened, like atoms combined, constants folded, constant factors
lifted out of products). That never duplicates a subterm and never creates an operator
node, so ``D`` and ``N`` are *sub-additive*: after the replacement the whole term has
``D <= D(context) + D(replacement)``, and likewise ``N``. Hence ``D`` never grows in a
run (a rule shown decreasing never increases it at the node), a rule shown decreasing
by ``D`` applies at most ``D(input)`` times, and a rule shown decreasing by ``N``
decreases ``(D, N)`` of the whole term.

``V`` and ``P`` are not closed under contexts: when the replacement's constants or
coefficients merge into an enclosing sum that is the numerator of a ``//`` or ``%`` by a
constant, that node's misplaced count can grow (``((x*6 + 2)//6*3 + 1)//3`` becomes
``(x*3 + (2//6)*3 + 1)//3`` by ``div-split-multiples``: the inner misplaced 6 leaves, the
outer numerator gains a misplaced 3, and the whole term's measure stays the same). The
per-node proof alone says nothing about whole runs; the nested order does.

The nested order (obligation ``termination-context``)
-----------------------------------------------------
A term's *nested measure* is the multiset of its operator nodes (every node but sums,
variables and constants; as a tree, so a shared subterm counts once per occurrence),
each the element ``(depth, weight, misplaced, entries, compared)``: ``depth`` is the
number of operator nodes above it (sums are transparent); for a division, ``weight`` is
its divisor's weight (``V``'s summand; twice that for a ``ceildiv``, which counts as
two divisions in ``D`` too, so that stating it as one division by the same divisor is a
step down), ``misplaced`` its misplaced count (``P``'s summand) and ``entries`` the
number of non-zero coefficients and constant of its numerator; for a comparison,
``compared`` is its weight (``Q``'s summand); every other component is 0. The
comparison weight is a local component like the others, so the argument below for
closure under contexts holds for it unchanged: rebuilding the ancestors may change
their weights arbitrarily, but they are shallower than the node rewritten. Elements
compare lexicographically (deeper is larger); multisets compare by the Dershowitz-Manna
extension, a well-founded order (:func:`term_nodes`, :func:`nested_less`).

A chain of one junction operator (``a and (b and c)``, which the builder keeps sorted) is
one level: its nodes all have the chain's depth and its clauses lie one deeper, so
re-sorting the clauses after one of them is rewritten moves no node deeper.

Proven (:func:`check_nested`, per rule instance, under the encoder's premises): the
junction count ``J`` of the replacement is below the pattern's, or else the
matched term's nested measure exceeds the replacement's. Sufficient conditions checked
with Z3: each occurrence of a term variable in the rewrite pairs with a distinct one in
the pattern at least as deep (an occurrence in an addend whose coefficient is 0 does not
count), so the variable's nodes stay or move up; each operator node the rewrite builds
is either paired with a distinct pattern node it is at most (lexicographically, with
depth) or lies strictly below a pattern node left unpaired; and some pattern node is
left unpaired or some pair is strict. Pattern components are exact or lower bounds,
rewrite components upper bounds (as above); ``unknown`` never counts.

Closed under contexts (argued here, checked on the engine's steps over the benchmark
corpora by ``tests/test_termination_context.py``): rewriting node ``s`` at depth ``d``
to ``r`` and rebuilding the ancestors in canonical form (:func:`quorem.term.rebuild`)
changes only (a) the nodes of ``s``, all at depth ``>= d``, into those of ``r``;
(b) the ancestors, each rebuilt into at most one node at its own depth ``< d`` (with any
local components); (c) nothing else, except that canonical form may remove nodes
(combining like atoms, a product folding to a scaled atom or a constant) and move the
nodes below a removed product up. No node is created below depth ``d`` outside ``r``
and none moves deeper, since the builder never folds a division or creates an operator
node (a constant times a sum only scales coefficients). So the removed elements of ``s``
(some at depth ``>= d``) dominate the rebuilt ancestors, and if ``r``'s multiset is
below ``s``'s, so is the whole term's. A shared node rewritten at once is this step
once per occurrence.

A whole run is measured by the pair (the whole term's ``J``, its nested measure),
compared lexicographically. ``J`` is sub-additive like ``D`` (the builder never creates
an ``and``/``or`` node: rebuilding a chain flattens, sorts and drops clauses), so a step
never raises it, and a step by a rule whose ``J`` shrinks lowers it; every other step
lowers the nested measure. Hence no infinite run exists in which each step applies a rule
shown decreasing at some node of a canonical term.

Assumed: the canonical builder's properties above (engine code, not proven here), and
that the rewriter's run is such a sequence of steps: it is, memoised repeats included,
except where its int64 guard keeps an operand un-rewritten in a parent
(:func:`quorem.rewrite`), which the step limit and cycle detection cover. The
constraint and lowering passes are not covered (no order is asked of them).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import z3

from quorem.ops import COMPARISONS, DIVISION_OPS, LOGICAL, Op, Semantics
from quorem.rule import (
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Rule,
    Unary,
    sequence_names,
)
from quorem.term import Term
from quorem.verify import encode
from quorem.verify.cache import cache_key
from quorem.verify.encode import encode_rule, has_sequence
from quorem.verify.prove import DEFAULT_ARITY, DEFAULT_TIMEOUT, Obligation, ProofResult
from quorem.verify.record import decided
from quorem.walk import postorder

__all__ = [
    "COMPONENTS",
    "NESTED_OBLIGATION",
    "NESTED_ORDER",
    "OBLIGATION",
    "Measure",
    "RuleMeasures",
    "Unbounded",
    "check_nested",
    "check_termination",
    "nested_less",
    "nested_obligations",
    "rule_measures",
    "term_measure",
    "term_nodes",
    "termination_cache_key",
    "termination_digest",
    "termination_obligations",
]

OBLIGATION: Final = "termination"
NESTED_OBLIGATION: Final = "termination-context"
NESTED_ORDER: Final = (
    "the multiset of operator nodes (depth, divisor weight, misplaced constants,"
    " numerator entries, comparison weight), deeper first, compared as multisets"
)
COMPONENTS: Final = (
    "junction count",
    "div/mod count",
    "divisor magnitude",
    "misplaced constants",
    "node count",
    "comparison weight",
)
Measure = tuple[int, int, int, int, int, int]

# z3 has no type information, so its expressions are Any to mypy.
_Z = Any
_STRICT_TIMEOUT: Final = 2.0  # seconds for "can this component stay the same?"
_OP_WEIGHT: Final = 2  # an operator node's weight in the node count (see the docstring)
_LINK_PREFIX: Final = "_m"  # names of the rewrite's constant sub-expressions (no rule name
# starts with '_', so they cannot clash)
_SEQ_KINDS: Final = (NameKind.SEQ_CONST, NameKind.SEQ_TERM)
_TERM_KINDS: Final = (NameKind.TERM, NameKind.SEQ_TERM)
_DIVISION_FUNCS: Final = frozenset(
    {"floordiv", "floormod", "truncdiv", "truncmod", "eucliddiv", "euclidmod", "ceildiv"}
)
_CEILDIV_WEIGHT: Final = 2  # ceildiv's weight in D: a floor division, negated twice
_COMPARISON_PATTERNS: Final = frozenset({"lt", "le", "eq", "ne"})
_JUNCTION_PATTERNS: Final = frozenset({"and", "or"})
_LETTERS: Final = "JDVPNQ"  # the measure unknowns' names, one per component


# ------------------------------------------------------------------ concrete measure
def term_measure(t: Term) -> Measure:
    """The measure ``(D, V, P, N)`` of a canonical term (see the module docstring).

    Shared subterms count once per occurrence in the tree; the computation itself visits
    each distinct subterm once.
    """
    memo: dict[Term, Measure] = {}
    for u in postorder(t):
        memo[u] = _node_measure(u, [memo[c] for c in u.args])
    return memo[t]


def _node_measure(u: Term, kids: list[Measure]) -> Measure:
    j = sum(k[0] for k in kids)
    d = sum(k[1] for k in kids)
    v = sum(k[2] for k in kids)
    p = sum(k[3] for k in kids)
    n = sum(k[4] for k in kids)
    q = sum(k[5] for k in kids)
    op = u.op
    if op is Op.CONST:
        return (0, 0, 0, 0, int(u.arg != 0), 0)
    if op is Op.VAR:
        return (0, 0, 0, 0, 1, 0)
    if op is Op.ADD:
        return (j, d, v, p, n + int(u.arg[1] != 0), q)
    n += _OP_WEIGHT
    if op in LOGICAL:
        j += 1
    if op in COMPARISONS:
        q += _comparison_weight(u)
    if op in DIVISION_OPS or op is Op.CEILDIV:
        d += _CEILDIV_WEIGHT if op is Op.CEILDIV else 1
        divisor = u.args[1]
        if divisor.is_const:
            mag = abs(divisor.value)
            pairs, k = u.args[0].addends()
            p += sum(not 0 <= c < mag for _, c in pairs) + int(not 0 <= k < mag)
            v += mag
        else:
            pairs, k = divisor.addends()
            v += sum(abs(c) for _, c in pairs) + abs(k)
            npairs, nk = u.args[0].addends()
            p += len(npairs) + int(nk != 0)
    return (j, d, v, p, n, q)


def _comparison_weight(u: Term) -> int:
    """A comparison node's own weight (see the module docstring).

    Over both operands as canonical sums ``c_1*t_1 + ... + c_n*t_n + k``: the sum of
    ``|c_i|`` and ``|k|``, plus 1 for each operand that has both an atom and a non-zero
    constant (moving that constant to the other side, ``x + 1 < 0 => x < -1``, must
    decrease the weight even when ``|c - b| == |c| + |b|``).
    """
    total = 0
    for side in u.args:
        pairs, k = side.addends()
        total += sum(abs(c) for _, c in pairs) + abs(k) + int(bool(pairs) and k != 0)
    return total


Element = tuple[int, int, int, int, int]


def term_nodes(t: Term, memo: dict[Term, Counter[Element]] | None = None) -> Counter[Element]:
    """The multiset of ``t``'s operator nodes as elements of the nested order.

    Each operator node (not a sum, variable or constant) of ``t`` as a tree is one element
    ``(depth, divisor weight, misplaced constants, numerator entries)``: ``depth`` counts
    the operator nodes above it (sums are transparent); the other components are those of
    the node alone, 0 unless it is a division (see the module docstring). ``memo`` (node
    to its elements with depths relative to it) may be shared between calls on terms
    that share subterms.
    """
    memo = {} if memo is None else memo
    stack: list[tuple[Term, bool]] = [(t, False)]
    while stack:
        u, ready = stack.pop()
        if u in memo:
            continue
        if not ready:
            stack.append((u, True))
            stack.extend((c, False) for c in u.args if c not in memo)
            continue
        out: Counter[Element] = Counter()
        if u.op is Op.ADD:
            for c in u.args:
                out.update(memo[c])
        elif u.args:
            for c in u.args:
                if c.op is u.op and u.op in LOGICAL:  # the rest of the chain: one level
                    out.update(memo[c])
                    continue
                for (d, v, p, n, q), count in memo[c].items():
                    out[d + 1, v, p, n, q] += count
            out[(0, *_local_components(u))] += 1
        memo[u] = out
    return memo[t]


def _local_components(u: Term) -> tuple[int, int, int, int]:
    if u.op in COMPARISONS:
        return (0, 0, 0, _comparison_weight(u))
    if u.op not in DIVISION_OPS and u.op is not Op.CEILDIV:
        return (0, 0, 0, 0)
    pairs, k = u.args[0].addends()
    entries = len(pairs) + int(k != 0)
    divisor = u.args[1]
    scale = _CEILDIV_WEIGHT if u.op is Op.CEILDIV else 1  # see the module docstring
    if divisor.is_const:
        mag = abs(divisor.value)
        misplaced = sum(not 0 <= c < mag for _, c in pairs) + int(not 0 <= k < mag)
        return (scale * mag, misplaced, entries, 0)
    dpairs, dk = divisor.addends()
    return (scale * (sum(abs(c) for _, c in dpairs) + abs(dk)), 0, entries, 0)


def nested_less(a: Counter[Element], b: Counter[Element]) -> bool:
    """Whether the multiset ``a`` is below ``b`` in the nested order.

    The elements are totally ordered (lexicographically, deeper first), so the multiset
    extension compares the counts of the largest element where they differ.
    """
    for e in sorted(set(a) | set(b), reverse=True):
        if a[e] != b[e]:
            return a[e] < b[e]
    return False


# ------------------------------------------------------------------ symbolic measure
class _Unsupported(Exception):  # noqa: N818  (control flow, not an error)
    """The rule uses a construct the termination check does not model."""


@dataclasses.dataclass(frozen=True)
class Unbounded:
    """A component of the rewrite's measure that cannot be bounded, and why."""

    reason: str


Component = _Z | Unbounded
Vector = tuple[Component, ...]


@dataclasses.dataclass
class _VarInfo:
    """What the pattern says about a term variable (or one addend ``t[i]`` of a sequence).

    ``atom``: it matched an addend of a sum, so it is neither a sum nor a constant.
    ``const_zero``: its sum form has constant 0 (an atom, or the rest of a sum pattern
    whose constant is matched separately). ``groups``: the sum patterns it is a distinct
    member of: two variables sharing a group are distinct atoms (or an atom and a rest
    without it), so a sum of them is not combined by canonicalization. ``dropped``: the
    groups it occurs in twice (such a pattern never matches; nothing is claimed).
    """

    atom: bool = False
    const_zero: bool = False
    groups: set[int] = dataclasses.field(default_factory=set)
    dropped: set[int] = dataclasses.field(default_factory=set)


@dataclasses.dataclass(eq=False)
class _VarRef:
    """A term variable of the rewrite; with ``of``, the quotient ``tquotient(of, u)``.

    A quotient has measure unknowns of its own, each at most the variable's, and counts
    as an occurrence of the variable ``of`` (see :meth:`_Measurer.quotient`).
    """

    name: str
    key: str
    of: str | None = None


@dataclasses.dataclass(eq=False)
class _NodeRef:
    """An operator node the rewrite builds: ``div mod mul max min cmp``."""

    op: str
    kids: tuple[_Sum, ...]
    key: str


_Base = _VarRef | _NodeRef


@dataclasses.dataclass(frozen=True)
class _Node:
    """An operator node of a pattern or rewrite, as an element of the nested order.

    ``depth`` counts the operator nodes above it (within the rule's template); ``weight``,
    ``misplaced`` and ``entries`` are its local components (0 unless a division): exact
    or a lower bound for the pattern, an upper bound (or :class:`Unbounded`) for the
    rewrite.
    """

    op: str
    depth: int
    weight: Component
    misplaced: Component
    entries: Component
    compared: Component = 0

    def local(self) -> tuple[Component, Component, Component, Component]:
        """The components compared after the depth."""
        return (self.weight, self.misplaced, self.entries, self.compared)


@dataclasses.dataclass(eq=False)
class _Sum:
    """A rewrite value in sum form: ``sum(coef * base) + const`` (coefs are Z3 ints).

    Entries with the same key are combined, as canonicalization would; entries with
    different keys may still be the same term at run time (see ``_Measurer.distinct``).
    """

    entries: tuple[tuple[_Base, _Z], ...]
    const: _Z

    @property
    def key(self) -> str:
        parts = [f"{_sexpr(c)}*{b.key}" for b, c in self.entries]
        return "+".join([*parts, _sexpr(self.const)])


def _sexpr(v: _Z) -> str:
    return str(z3.simplify(v).sexpr())


def _int_literal(v: _Z) -> int | None:
    """The value of ``v`` if it simplifies to an integer literal."""
    if isinstance(v, int):
        return v
    s = v if z3.is_int_value(v) else z3.simplify(v)
    return int(s.as_long()) if z3.is_int_value(s) else None


def _add_sums(a: _Sum, b: _Sum, scale_b: _Z = 1) -> _Sum:
    entries: dict[str, tuple[_Base, _Z]] = {b0.key: (b0, c) for b0, c in a.entries}
    for base, c in b.entries:
        scaled = c * scale_b
        if base.key in entries:
            entries[base.key] = (base, entries[base.key][1] + scaled)
        else:
            entries[base.key] = (base, scaled)
    return _Sum(tuple(entries.values()), a.const + b.const * scale_b)


def _scale(a: _Sum, k: _Z) -> _Sum:
    return _Sum(tuple((b, c * k) for b, c in a.entries), a.const * k)


def _of(base: _Base) -> _Sum:
    return _Sum(((base, z3.IntVal(1)),), z3.IntVal(0))


def _constant(v: _Z) -> _Sum:
    return _Sum((), v)


def _abs(v: _Z) -> _Z:
    return z3.If(v >= 0, v, -v)


def _misplaced(c: _Z, n: _Z) -> _Z:
    """1 if ``c`` lies outside ``[0, n)``, else 0."""
    return z3.If(z3.Or(c < 0, c >= n), 1, 0)


def _when(cond_coef: _Z, v: Component) -> Component:
    """``v`` for an addend with coefficient ``cond_coef``, 0 when that is 0 (it vanishes)."""
    if isinstance(v, Unbounded):
        return v
    lit = _int_literal(cond_coef)
    if lit is not None:
        return v if lit != 0 else z3.IntVal(0)
    return z3.If(cond_coef != 0, v, 0)


def _plus(*parts: Component) -> Component:
    """The sum of ``parts`` (Python ints or Z3 ints), unbounded if any part is."""
    constant = 0
    terms: list[_Z] = []
    for p in parts:
        if isinstance(p, Unbounded):
            return p
        if isinstance(p, int):
            constant += p
        else:
            terms.append(p)
    if not terms:
        return constant
    total = terms[0] if len(terms) == 1 else z3.Sum(*terms)
    return total + constant if constant else total


def _vplus(*vectors: Vector) -> Vector:
    return tuple(_plus(*col) for col in zip(*vectors, strict=True))


_ZERO6: Final = (0, 0, 0, 0, 0, 0)


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


@dataclasses.dataclass
class RuleMeasures:
    """The symbolic measures of one rule instance, with what Z3 may assume.

    ``pattern`` and ``rewrite`` are vectors of :data:`COMPONENTS` (Z3 integer
    expressions; a rewrite component may be :class:`Unbounded`); ``premises`` are the
    encoder's premises, ``axioms`` what every measure satisfies, ``plain`` the measures
    when every term variable is bound to a plain variable, ``term_values`` the values
    the encoder gives the term variables; ``pattern_uses``/``rewrite_uses`` count
    the occurrences of each term variable; ``symbols`` are the rule's named constants
    and the measure unknowns (for counterexamples).
    """

    pattern: Vector
    rewrite: Vector
    premises: list[_Z]
    axioms: list[_Z]
    plain: list[tuple[_Z, _Z]]
    term_values: list[_Z]
    pattern_uses: Counter[str]
    rewrite_uses: Counter[str]
    symbols: dict[str, _Z]
    pattern_nodes: list[_Node] = dataclasses.field(default_factory=list)
    rewrite_nodes: list[_Node] = dataclasses.field(default_factory=list)
    pattern_occurrences: list[tuple[str, int, _Z]] = dataclasses.field(default_factory=list)
    rewrite_occurrences: list[tuple[str, int, _Z]] = dataclasses.field(default_factory=list)


class _Measurer:
    """Builds the symbolic measures of one rule instance (see :func:`rule_measures`)."""

    def __init__(self, rule: Rule, semantics: Semantics | None, arity: int) -> None:
        self.rule = rule
        self.arity = arity
        self.lets = dict(rule.lets)
        self.sem = semantics or Semantics.FLOOR  # what // and % of the rule mean
        self.links: dict[tuple[Expr, bool], str] = {}
        self.vars: dict[str, _VarInfo] = {}
        self.groups = 0
        self.axioms: list[_Z] = []
        self.measure_syms: dict[str, tuple[_Z, _Z, _Z, _Z, _Z, _Z]] = {}  # J, D, V, P, N, Q
        self.w_syms: dict[str, _Z] = {}
        self.mu_funcs: dict[str, _Z] = {}
        self.mu_apps: dict[str, _Z] = {}
        self.quotient_names: dict[str, str] = {}
        self.k_syms: dict[str, _Z] = {}
        self.a_syms: dict[str, _Z] = {}
        self.uses: Counter[str] = Counter()
        # The nested order (see _decide_nested): the operator nodes met and the term
        # variables' occurrences, each with its depth; swapped between the two sides.
        self.nodes: list[_Node] = []
        self.occurrences: list[tuple[str, int, _Z]] = []
        self.scan(rule.pattern)
        self.collect_links(rule.rewrite, in_sum=False)
        enc = encode_rule(self.linked_rule(), semantics, arity)
        self.premises: list[_Z] = list(enc.premises)
        self.sym = enc.symbols

    # ------------------------------------------------------------ pattern facts
    def info(self, name: str) -> _VarInfo:
        return self.vars.setdefault(name, _VarInfo())

    def member(self, name: str, group: int, *, atom: bool, const_zero: bool) -> None:
        v = self.info(name)
        v.atom |= atom
        v.const_zero |= const_zero or atom
        if group in v.groups:
            v.dropped.add(group)  # twice in one sum: never matches; claim nothing
        v.groups.add(group)

    def scan(self, p: Pattern) -> None:
        if isinstance(p, PTerm):
            self.info(p.name)
        elif isinstance(p, POp):
            for c in p.children:
                self.scan(c)
        elif isinstance(p, PSum):
            self.groups += 1
            g = self.groups
            for add in p.addends:
                if isinstance(add.pattern, PTerm):
                    self.member(add.pattern.name, g, atom=True, const_zero=True)
                else:
                    self.scan(add.pattern)
            if p.rest is not None:
                self.member(p.rest, g, atom=False, const_zero=p.const is not None)
            if p.seq is not None:
                for i in range(self.arity):
                    self.member(f"{p.seq.term}[{i + 1}]", g, atom=True, const_zero=True)

    def distinct(self, bases: Sequence[_Base]) -> bool:
        """Whether these rewrite addends are surely distinct atoms (or rests) at run time."""
        refs = [b for b in bases if isinstance(b, _VarRef)]
        if len(refs) != len(bases):
            return len(bases) <= 1
        groups = [self.info(r.name).groups - self.info(r.name).dropped for r in refs]
        return all(groups[i] & groups[j] for i in range(len(refs)) for j in range(i + 1, len(refs)))

    # ------------------------------------------------------------ links to the encoder
    def is_term(self, e: Expr) -> bool:
        """Whether ``e`` evaluates to a term (else to a constant of the match)."""
        if isinstance(e, Name):
            return e.kind in _TERM_KINDS
        if isinstance(e, Unary):
            return e.op != "not" and self.is_term(e.operand)
        if isinstance(e, Binary):
            # ``a and b`` of two terms is a term (of a rewrite); of conditions, a condition.
            return self.is_term(e.left) or self.is_term(e.right)
        if isinstance(e, Call):
            if e.func in ("vmin", "vmax", "all", "any", "gcd", "abs", "divides", "tdivides"):
                return False
            return any(self.is_term(a) for a in e.args)
        return False

    def direct(self, e: Expr) -> bool:
        """Whether the constant ``e`` is read straight from the match (no link needed)."""
        if isinstance(e, Lit):
            return True
        if isinstance(e, Name):
            return e.name not in self.lets
        return isinstance(e, Unary) and e.op == "-" and self.direct(e.operand)

    def collect_links(self, e: Expr, *, in_sum: bool) -> None:
        if not self.is_term(e):
            if self.direct(e):
                return  # the same Z3 value on both sides, so equal parts cancel
            key = (e, in_sum and bool(sequence_names(e)))
            self.links.setdefault(key, f"{_LINK_PREFIX}{len(self.links) + 1}")
            return
        if isinstance(e, Name):
            if e.name in self.lets:
                self.collect_links(self.lets[e.name], in_sum=in_sum)
        elif isinstance(e, Unary):
            self.collect_links(e.operand, in_sum=in_sum)
        elif isinstance(e, Binary):
            self.collect_links(e.left, in_sum=in_sum)
            self.collect_links(e.right, in_sum=in_sum)
        elif isinstance(e, Call):
            for a in e.args:
                self.collect_links(a, in_sum=in_sum or e.func == "sum")

    def linked_rule(self) -> Rule:
        """The rule with guard ``guard and _m1 == e1 and ...`` over fresh names.

        Encoding it makes ``_m1`` the encoder's own value of the rewrite's constant
        sub-expression ``e1`` (same lets, gcds and divisions); the guard's meaning is
        unchanged since the names are otherwise unconstrained.
        """
        names = dict(self.rule.names)
        guard = self.rule.guard
        for (e, per_addend), name in self.links.items():
            if per_addend:
                names[name] = NameKind.SEQ_CONST
                link: Expr = Call("all", (Binary("==", Name(name, NameKind.SEQ_CONST), e),))
            else:
                names[name] = NameKind.CONST
                link = Binary("==", Name(name, NameKind.CONST), e)
            guard = link if guard is None else Binary("and", guard, link)
        return dataclasses.replace(self.rule, names=names, guard=guard)

    def link_value(self, e: Expr, index: int | None) -> _Z:
        if self.direct(e):
            return self.const_value(e, index)
        per_addend = index is not None and bool(sequence_names(e))
        name = self.links[(e, per_addend)]
        return self.sym[f"{name}[{index + 1}]" if per_addend and index is not None else name]

    # ------------------------------------------------------------ measure unknowns
    def var_measure(self, name: str) -> tuple[_Z, _Z, _Z, _Z, _Z, _Z]:
        found = self.measure_syms.get(name)
        if found is not None:
            return found
        j, d, v, p, n, q = (z3.Int(f"{c}({name})") for c in _LETTERS)
        info = self.info(name)
        self.axioms += [j >= 0, d >= 0, p >= 0, v >= 0, q >= 0, n >= 1 if info.atom else n >= 0]
        value = self.sym.get(name)
        # N(t) == 0 only for the constant 0 (every other term has a variable, an operator
        # or a non-zero constant), which measures 0 throughout.
        zero = z3.And(j == 0, d == 0, p == 0, v == 0, q == 0)
        self.axioms.append(z3.Implies(n == 0, zero if value is None else z3.And(zero, value == 0)))
        self.measure_syms[name] = (j, d, v, p, n, q)
        return self.measure_syms[name]

    def w(self, name: str) -> _Z:
        """The weight of the variable's sum form: its coefficients' and constant's ``|.|``.

        1 for an atom (``1*t + 0``); ``|x|`` when ``x`` is a constant; else at least 1,
        since a sum that is not a constant has a non-zero coefficient.
        """
        found = self.w_syms.get(name)
        if found is None:
            found = self.w_syms[name] = z3.Int(f"w({name})")
            info = self.info(name)
            self.axioms.append(found == 1 if info.atom else found >= 0)
            value = self.sym.get(name)
            if value is not None and not info.atom:
                self.axioms.append(z3.Or(found >= 1, found == _abs(value)))
        return found

    def k(self, name: str) -> _Z:
        """The constant of the variable's sum form (0 for an atom or a rest matched apart)."""
        found = self.k_syms.get(name)
        if found is None:
            found = self.k_syms[name] = z3.Int(f"k({name})")
            n_x = self.var_measure(name)[4]
            # A non-zero constant weighs 1 in the node count.
            self.axioms.append(n_x >= z3.If(found != 0, 1, 0))
            if self.info(name).const_zero:
                self.axioms.append(found == 0)
        return found

    def a(self, name: str) -> _Z:
        """The number of atoms of the variable's sum form (1 for an atom)."""
        found = self.a_syms.get(name)
        if found is None:
            found = self.a_syms[name] = z3.Int(f"a({name})")
            self.axioms.append(found == 1 if self.info(name).atom else found >= 0)
        return found

    def entries(self, name: str) -> _Z:
        """The non-zero entries (atoms and constant) of the variable's sum form."""
        return self.a(name) + z3.If(self.k(name) != 0, 1, 0)

    def mu(self, name: str, n: _Z) -> _Z:
        """The misplaced coefficients of ``name``'s sum form relative to the magnitude ``n``."""
        f = self.mu_funcs.get(name)
        if f is None:
            f = self.mu_funcs[name] = z3.Function(f"mu({name})", z3.IntSort(), z3.IntSort())
        app = f(n)
        key = f"{name}@{_sexpr(n)}"
        if key not in self.mu_apps:
            self.mu_apps[key] = app
            n_x = self.var_measure(name)[4]
            self.axioms += [app >= 0, z3.Implies(n_x == 0, app == 0)]
        return app

    def plain(self) -> list[tuple[_Z, _Z]]:
        """The measure unknowns' values when every term variable is a plain variable ``v``.

        ``v`` is the sum ``1*v + 0``: its one coefficient is misplaced under ``n`` iff ``n <= 1``.
        """
        out = [
            (s, z3.IntVal(1 if c == "N" else 0))
            for syms in self.measure_syms.values()
            for c, s in zip(_LETTERS, syms, strict=True)
        ]
        out += [(w, z3.IntVal(1)) for w in self.w_syms.values()]
        out += [(k, z3.IntVal(0)) for k in self.k_syms.values()]
        out += [(a, z3.IntVal(1)) for a in self.a_syms.values()]
        out += [(app, z3.If(app.arg(0) <= 1, 1, 0)) for app in self.mu_apps.values()]
        return out

    # ------------------------------------------------------------ constants of patterns
    def const_value(self, e: Expr, index: int | None = None) -> _Z:
        """A pattern coefficient or constant: a literal, a (negated) name, a product."""
        if isinstance(e, Lit):
            return z3.IntVal(e.value)
        if isinstance(e, Name):
            if e.kind is NameKind.SEQ_CONST:
                assert index is not None
                return self.sym[f"{e.name}[{index + 1}]"]
            return self.sym[e.name]
        if isinstance(e, Unary) and e.op == "-":
            return -self.const_value(e.operand, index)
        if isinstance(e, Binary) and e.op == "*":
            return self.const_value(e.left, index) * self.const_value(e.right, index)
        raise AssertionError(f"unexpected pattern constant {e!r}")

    # ------------------------------------------------------------ the pattern's measure
    def pattern(self, p: Pattern, depth: int = 0) -> Vector:
        """The measure of the term ``p`` matched (exact, or a lower bound).

        ``depth`` is the number of operator nodes above ``p`` in the pattern; the operator
        nodes and variable occurrences met are recorded with theirs (the nested order).
        """
        if isinstance(p, PTerm):
            self.uses[p.name] += 1
            self.occurrences.append((p.name, depth, z3.BoolVal(True)))
            return self.var_measure(p.name)
        if isinstance(p, PConst):
            return (0, 0, 0, 0, z3.If(self.sym[p.name] != 0, 1, 0), 0)
        if isinstance(p, PLit):
            return (0, 0, 0, 0, int(p.value != 0), 0)
        if isinstance(p, POp):
            kids = _vplus(*(self.pattern(c, depth + 1) for c in p.children))
            if p.op in ("div", "mod") or p.op in _DIVISION_FUNCS:
                num, den = p.children
                mag = self.pattern_divisor(den)
                if mag is not None:
                    misplaced = self.pattern_misplaced(num, mag)
                elif _surely_not_constant(den):
                    misplaced = self.pattern_entries(num)
                else:
                    misplaced = 0  # a lower bound: the divisor may be a constant
                weight = self.pattern_weight(den)
                nested = _nested_weight(p.op, weight)
                self.nodes.append(
                    _Node(f"{p.op}", depth, nested, misplaced, self.pattern_entries(num))
                )
                d = _CEILDIV_WEIGHT if p.op == "ceildiv" else 1
                return _vplus(kids, (0, d, weight, misplaced, _OP_WEIGHT, 0))
            if p.op in _COMPARISON_PATTERNS:
                compared = _plus(
                    *(_plus(self.pattern_weight(c), self.pattern_mixed(c)) for c in p.children)
                )
                self.nodes.append(_Node(p.op, depth, 0, 0, 0, compared))
                return _vplus(kids, (0, 0, 0, 0, _OP_WEIGHT, compared))
            self.nodes.append(_Node(p.op, depth, 0, 0, 0))
            junction = int(p.op in _JUNCTION_PATTERNS)
            return _vplus(kids, (junction, 0, 0, 0, _OP_WEIGHT, 0))
        parts: list[Vector] = [self.pattern(add.pattern, depth) for add in p.addends]
        if p.seq is not None:
            for i in range(self.arity):
                name = f"{p.seq.term}[{i + 1}]"
                self.uses[name] += 1
                self.occurrences.append((name, depth, z3.BoolVal(True)))
                parts.append(self.var_measure(name))
        if p.rest is not None:
            self.uses[p.rest] += 1
            self.occurrences.append((p.rest, depth, z3.BoolVal(True)))
            parts.append(self.var_measure(p.rest))
        if p.const is not None:
            parts.append((0, 0, 0, 0, z3.If(self.const_value(p.const) != 0, 1, 0), 0))
        return _vplus(_ZERO6, *parts)

    def pattern_entries(self, num: Pattern) -> _Z:
        """The non-zero entries (coefficients and constant) of the numerator ``num`` matched.

        Exact: the addends of a sum pattern are distinct atoms with non-zero coefficients.
        """
        if isinstance(num, PTerm):
            return self.entries(num.name)
        if isinstance(num, PConst):
            return z3.If(self.sym[num.name] != 0, 1, 0)
        if isinstance(num, PLit):
            return z3.IntVal(int(num.value != 0))
        if isinstance(num, POp):
            return z3.IntVal(1)
        total: _Z = z3.IntVal(len(num.addends) + (self.arity if num.seq is not None else 0))
        if num.rest is not None:
            total = total + self.a(num.rest)
        if num.const is not None:
            total = total + z3.If(self.const_value(num.const) != 0, 1, 0)
        elif num.rest is not None:
            total = total + z3.If(self.k(num.rest) != 0, 1, 0)
        return total

    def pattern_mixed(self, side: Pattern) -> _Z:
        """1 if the comparison operand ``side`` matched has an atom and a non-zero constant.

        Exact where the pattern says; a lower bound (0) where it does not.
        """
        if isinstance(side, PTerm):
            return z3.If(z3.And(self.k(side.name) != 0, self.a(side.name) >= 1), 1, 0)
        if not isinstance(side, PSum):
            return z3.IntVal(0)  # a constant, or one atom with coefficient 1
        constant: _Z = z3.IntVal(0)
        if side.const is not None:
            constant = self.const_value(side.const)
        elif side.rest is not None:
            constant = self.k(side.rest)
        if side.addends or side.seq is not None:
            return z3.If(constant != 0, 1, 0)
        if side.rest is None:
            return z3.IntVal(0)
        return z3.If(z3.And(constant != 0, self.a(side.rest) >= 1), 1, 0)

    def pattern_divisor(self, den: Pattern) -> _Z | None:
        """``|d|`` of a constant divisor pattern, None for any other divisor."""
        if isinstance(den, PConst):
            return _abs(self.sym[den.name])
        if isinstance(den, PLit):
            return z3.IntVal(abs(den.value))
        return None

    def pattern_weight(self, den: Pattern) -> _Z:
        """The weight of the divisor ``den`` matched (exact)."""
        if isinstance(den, PTerm):
            return self.w(den.name)
        if isinstance(den, (PConst, PLit)):
            mag = self.pattern_divisor(den)
            assert mag is not None
            return mag
        if isinstance(den, POp):
            return z3.IntVal(1)  # one atom, coefficient 1
        # The addends of a sum pattern are distinct atoms, the rest holds the others.
        total: _Z = z3.IntVal(0)
        for add in den.addends:
            total = total + _abs(self.const_value(add.coef))
        if den.seq is not None:
            for i in range(self.arity):
                total = total + _abs(self.sym[f"{den.seq.coef}[{i + 1}]"])
        if den.rest is not None:
            total = total + self.w(den.rest)
        if den.const is not None:
            total = total + _abs(self.const_value(den.const))
        return total

    def pattern_misplaced(self, num: Pattern, n: _Z) -> _Z:
        """The misplaced entries of the numerator ``num`` matched, relative to ``n``."""
        if isinstance(num, PTerm):
            return self.mu(num.name, n) + _misplaced(self.k(num.name), n)
        if isinstance(num, PConst):
            return _misplaced(self.sym[num.name], n)
        if isinstance(num, PLit):
            return _misplaced(z3.IntVal(num.value), n)
        if isinstance(num, POp):
            return _misplaced(z3.IntVal(1), n)  # one atom, coefficient 1
        total: _Z = z3.IntVal(0)
        for add in num.addends:
            total = total + _misplaced(self.const_value(add.coef), n)
        if num.seq is not None:
            for i in range(self.arity):
                total = total + _misplaced(self.sym[f"{num.seq.coef}[{i + 1}]"], n)
        constant: _Z = z3.IntVal(0)
        if num.rest is not None:
            total = total + self.mu(num.rest, n)
            constant = self.k(num.rest)  # 0 when the constant is matched apart
        if num.const is not None:
            constant = constant + self.const_value(num.const)
        return total + _misplaced(constant, n)

    # ------------------------------------------------------------ the rewrite's value
    def rewrite_value(self, e: Expr, index: int | None = None) -> _Sum | _Z:
        """The rewrite template ``e`` in sum form (a Z3 int if it is a constant)."""
        if not self.is_term(e):
            return self.link_value(e, index)
        if isinstance(e, Name):
            if e.name in self.lets:
                return self.rewrite_value(self.lets[e.name], index)
            if e.kind is NameKind.SEQ_TERM:
                assert index is not None
                name = f"{e.name}[{index + 1}]"
            else:
                name = e.name
            return _of(_VarRef(name, f"v:{name}"))
        if isinstance(e, Unary):
            return _scale(self.as_sum(self.rewrite_value(e.operand, index)), -1)
        if isinstance(e, Binary):
            a = self.rewrite_value(e.left, index)
            b = self.rewrite_value(e.right, index)
            if e.op in ("+", "-"):
                return _add_sums(self.as_sum(a), self.as_sum(b), 1 if e.op == "+" else -1)
            if e.op == "*" and not isinstance(a, _Sum):
                return _scale(self.as_sum(b), a)
            if e.op == "*" and not isinstance(b, _Sum):
                return _scale(a, b)
            if e.op in ("//", "%"):
                op = "div" if e.op == "//" else "mod"
                return self.node(op, a, b, f"{op}:{self.sem.value}")
            if e.op in _JUNCTION_PATTERNS:
                return self.node(e.op, a, b, e.op)
            return self.node("mul" if e.op == "*" else "cmp", a, b, e.op)
        assert isinstance(e, Call)
        if e.func == "tquotient":
            return self.quotient(e, index)
        if e.func not in (*_DIVISION_FUNCS, "sum", "min", "max"):
            raise _Unsupported(f"the rewrite uses {e.func}(), which the measure does not model")
        if e.func == "sum":
            total = _constant(z3.IntVal(0))
            for i in range(self.arity):
                total = _add_sums(total, self.as_sum(self.rewrite_value(e.args[0], i)))
            return total
        vals = [self.rewrite_value(a, index) for a in e.args]
        if e.func in ("min", "max"):
            acc = vals[0]
            for v in vals[1:]:
                acc = self.node(e.func, acc, v, e.func)
            return acc
        op = "ceildiv" if e.func == "ceildiv" else ("div" if e.func.endswith("div") else "mod")
        return self.node(op, vals[0], vals[1], e.func)

    def quotient(self, e: Call, index: int | None) -> _Sum:
        """``tquotient(x, u)`` of a term variable ``x`` (possibly scaled): a fresh variable.

        The quotient's atoms are ``x``'s with some factors of their products removed
        (quorem.monomial): its nodes are a subset of ``x``'s, none deeper, plus
        products of remaining factors (where ``x`` had one), so each of its components
        is at most ``x``'s, and its nodes in the nested order are below ``x``'s at the
        same depth. Its sum form (coefficients, constant, atoms) is not known, but for a
        constant divisor ``g``: ``x``'s divided through by ``g``.
        """
        num = e.args[0]
        if isinstance(num, Binary) and num.op == "*":
            terms = [a for a in (num.left, num.right) if self.is_term(a)]
            num = terms[0] if len(terms) == 1 else num
        if not (isinstance(num, Name) and num.kind in _TERM_KINDS and num.name not in self.lets):
            raise _Unsupported("tquotient() of something other than a (scaled) term variable")
        of = num.name if num.kind is NameKind.TERM else f"{num.name}[{(index or 0) + 1}]"
        divisor = self.as_sum(self.rewrite_value(e.args[1], index))
        key = f"tquotient({of},{divisor.key})"
        name = self.quotient_names.setdefault(key, f"q{len(self.quotient_names) + 1}({of})")
        mine, theirs = self.var_measure(name), self.var_measure(of)
        self.axioms += [q <= x for q, x in zip(mine, theirs, strict=True)]
        if not divisor.entries:
            # A constant divisor g divides every coefficient and the constant: the
            # quotient's sum form is x's divided through by g, atom for atom.
            g = divisor.const
            self.axioms += [
                self.w(name) * _abs(g) == self.w(of),
                self.k(name) * g == self.k(of),
                self.a(name) == self.a(of),
            ]
        return _of(_VarRef(name, f"v:{name}", of))

    def as_sum(self, v: _Sum | _Z) -> _Sum:
        return v if isinstance(v, _Sum) else _constant(v)

    def node(self, op: str, a: _Sum | _Z, b: _Sum | _Z, exact_op: str) -> _Sum:
        """A node built by the rewrite; ``exact_op`` names its operator exactly.

        Nodes with equal keys are the same term (and combine in a sum), so the key holds
        the exact operator (``<`` and ``==`` differ, and so do floor and truncating).
        """
        kids = (self.as_sum(a), self.as_sum(b))
        key = f"{exact_op}({kids[0].key},{kids[1].key})"
        return _of(_NodeRef(op, kids, key))

    # ------------------------------------------------------------ the rewrite's measure
    def sum_measure(self, s: _Sum, depth: int = 0) -> Vector:
        """An upper bound of the measure of the canonical term ``s`` builds.

        ``depth`` is the number of operator nodes above ``s``; the nodes built and the
        variable occurrences are recorded with theirs (the nested order).
        """
        parts: list[Vector] = [(0, 0, 0, 0, z3.If(s.const != 0, 1, 0), 0)]
        for base, coef in s.entries:
            first = len(self.occurrences)
            parts.append(tuple(_when(coef, c) for c in self.base_measure(base, depth)))
            if _int_literal(coef) is None:
                # An addend whose coefficient is 0 vanishes, and the variables in it.
                self.occurrences[first:] = [
                    (name, d, z3.And(cond, coef != 0)) for name, d, cond in self.occurrences[first:]
                ]
            elif _int_literal(coef) == 0:
                del self.occurrences[first:]
        return _vplus(_ZERO6, *parts)

    def base_measure(self, base: _Base, depth: int = 0) -> Vector:
        if isinstance(base, _VarRef):
            used = base.of or base.name  # a quotient is an occurrence of its variable
            self.uses[used] += 1
            self.occurrences.append((used, depth, z3.BoolVal(True)))
            return self.var_measure(base.name)
        kids = _vplus(*(self.sum_measure(k, depth + 1) for k in base.kids))
        if base.op == "cmp":
            compared = _plus(
                *(
                    _plus(
                        self.rewrite_divisor(k, "an operand of a comparison"),
                        self.rewrite_mixed(k),
                    )
                    for k in base.kids
                )
            )
            self.nodes.append(_Node(base.op, depth, 0, 0, 0, compared))
            return _vplus(kids, (0, 0, 0, 0, _OP_WEIGHT, compared))
        if base.op not in ("div", "mod", "ceildiv"):
            self.nodes.append(_Node(base.op, depth, 0, 0, 0))
            junction = int(base.op in _JUNCTION_PATTERNS)
            return _vplus(kids, (junction, 0, 0, 0, _OP_WEIGHT, 0))
        num, den = base.kids
        weight = self.rewrite_divisor(den)
        misplaced = self.rewrite_misplaced(num, den)
        nested = _nested_weight(base.op, weight)
        self.nodes.append(_Node(base.op, depth, nested, misplaced, self.rewrite_entries(num)))
        d = _CEILDIV_WEIGHT if base.op == "ceildiv" else 1
        return _vplus(kids, (0, d, weight, misplaced, _OP_WEIGHT, 0))

    def rewrite_entries(self, num: _Sum) -> _Z:
        """An upper bound of the non-zero entries of the canonical numerator ``num`` builds.

        Combining like atoms and folding a product only lower the count.
        """
        total: _Z = z3.IntVal(0)
        constant = num.const
        for base, coef in num.entries:
            present = z3.If(coef != 0, 1, 0)
            if isinstance(base, _VarRef) and not self.info(base.name).atom:
                total = total + z3.If(coef != 0, self.a(base.name), 0)
                constant = constant + coef * self.k(base.name)
            else:
                total = total + present
        return total + z3.If(constant != 0, 1, 0)

    def rewrite_mixed(self, side: _Sum) -> _Z:
        """An upper bound of :meth:`pattern_mixed` for the built comparison operand ``side``.

        0 for a constant; otherwise 1 unless its constant (with the constants of the
        variables it adds up) is surely 0.
        """
        if not side.entries:
            return z3.IntVal(0)
        constant = side.const
        atoms: list[_Z] = []  # whether some entry brings an atom
        for base, coef in side.entries:
            if isinstance(base, _VarRef) and not self.info(base.name).atom:
                constant = constant + coef * self.k(base.name)
                atoms.append(z3.And(coef != 0, self.a(base.name) > 0))
            else:
                atoms.append(coef != 0)
        return z3.If(z3.And(constant != 0, z3.Or(*atoms)), 1, 0)

    def atom_like(self, base: _Base) -> bool:
        """Whether ``base`` is surely one atom (a product may fold into a scaled atom)."""
        if isinstance(base, _VarRef):
            return self.info(base.name).atom
        return base.op != "mul"

    def divisor_kind(self, den: _Sum) -> _Z | Unbounded | None:
        """``|d|`` if the built divisor is the constant ``d``; None if surely not constant."""
        if not den.entries:
            return _abs(den.const)
        if len(den.entries) == 1:
            base, coef = den.entries[0]
            lit = _int_literal(coef)
            # A symbolic coefficient is non-zero where the rule fires: 0 would make the
            # divisor the constant 0, and the rewrite is not built (a TermError).
            if self.atom_like(base) and lit != 0:
                return None
        return Unbounded("a divisor of the rewrite may or may not be a constant")

    def rewrite_divisor(self, den: _Sum, what: str = "a divisor of the rewrite") -> Component:
        """An upper bound of the built divisor's (or comparison operand's) weight.

        Canonicalization only merges addends and folds constants, which never raises the
        weight (triangle inequality), so the weights of the entries add up to a bound.
        """
        total: _Z = _abs(den.const)
        for base, coef in den.entries:
            if isinstance(base, _VarRef) and not self.info(base.name).atom:
                total = total + _abs(coef) * self.w(base.name)
            elif self.atom_like(base):
                total = total + _abs(coef)
            else:
                return Unbounded(f"{what} has a product, which may lift out a constant factor")
        return total

    def rewrite_misplaced(self, num: _Sum, den: _Sum) -> Component:
        n = self.divisor_kind(den)
        if n is None:
            return self.rewrite_entries(num)
        if isinstance(n, Unbounded):
            return Unbounded(
                "a divisor of the rewrite may be a constant: its misplaced count is not known"
            )
        bases = [b for b, _ in num.entries]
        if not self.distinct(bases):
            return Unbounded(
                "a numerator of the rewrite adds terms that may combine, changing its coefficients"
            )
        total: _Z = z3.IntVal(0)
        constant = num.const
        for base, coef in num.entries:
            if self.atom_like(base):
                total = total + _misplaced(coef, n)
                continue
            if isinstance(base, _NodeRef):
                return Unbounded(
                    "a numerator of the rewrite has a product, which may lift out a constant factor"
                )
            if _int_literal(coef) != 1:
                return Unbounded(
                    f"a numerator of the rewrite scales {base.name}, whose coefficients"
                    " are not known"
                )
            total = total + self.mu(base.name, n)
            constant = constant + self.k(base.name)
        return total + _misplaced(constant, n)

    def rewrite(self) -> Vector:
        """An upper bound of the measure of the replacement the rewrite builds."""
        return self.sum_measure(self.as_sum(self.rewrite_value(self.rule.rewrite)))


def _nested_weight(op: str, weight: Component) -> Component:
    """A division node's weight in the nested order: twice the divisor's for a ceildiv."""
    if op != "ceildiv" or isinstance(weight, Unbounded):
        return weight
    return _CEILDIV_WEIGHT * weight


def _surely_not_constant(den: Pattern) -> bool:
    """Whether every term the divisor pattern ``den`` matches is not a constant.

    An operator node is not; nor is a sum pattern with an addend or a sequence (distinct
    atoms with non-zero coefficients stay in the matched canonical sum).
    """
    if isinstance(den, POp):
        return True
    return isinstance(den, PSum) and (bool(den.addends) or den.seq is not None)


def rule_measures(rule: Rule, semantics: Semantics | None, arity: int = 0) -> RuleMeasures:
    """The symbolic measures of ``rule`` instantiated for ``semantics`` and ``arity``.

    The pattern's vector is exact or a lower bound of the matched term's measure; the
    rewrite's is an upper bound of the built replacement's (or :class:`Unbounded`),
    whenever the premises hold.
    """
    m = _Measurer(rule, semantics, arity)
    lhs = _as_z3(m.pattern(rule.pattern))
    lhs_uses, m.uses = m.uses, Counter()
    lhs_nodes, m.nodes = m.nodes, []
    lhs_occurrences, m.occurrences = m.occurrences, []
    rhs = _as_z3(m.rewrite())
    symbols: dict[str, _Z] = {
        k: v
        for k, v in m.sym.items()
        if rule.names.get(k.split("[")[0]) in (NameKind.CONST, NameKind.SEQ_CONST)
        and k.split("[")[0] not in m.lets
    }
    for name, syms in m.measure_syms.items():
        symbols.update({f"{c}({name})": s for c, s in zip(_LETTERS, syms, strict=True)})
    symbols.update({f"k({name})": k for name, k in m.k_syms.items()})
    symbols.update({f"a({name})": a for name, a in m.a_syms.items()})
    values = [
        v
        for k, v in m.sym.items()
        if rule.names.get(k.split("[")[0]) in _TERM_KINDS and k.split("[")[0] not in m.lets
    ]
    return RuleMeasures(
        lhs,
        rhs,
        m.premises,
        m.axioms,
        m.plain(),
        values,
        lhs_uses,
        m.uses,
        symbols,
        lhs_nodes,
        m.nodes,
        lhs_occurrences,
        m.occurrences,
    )


# ------------------------------------------------------------------ the decision
def _as_z3(vector: Vector) -> Vector:
    """``vector`` with Python int components as Z3 integers."""
    return tuple(z3.IntVal(c) if isinstance(c, int) else c for c in vector)


def termination_obligations(rule: Rule, max_arity: int = DEFAULT_ARITY) -> list[Obligation]:
    """The termination obligations of ``rule``: one per semantics and ``sum(K*t)`` arity."""
    arities = range(1, max_arity + 1) if has_sequence(rule) else range(1)
    return [
        Obligation(rule, sem, k, OBLIGATION) for sem in rule.semantics or (None,) for k in arities
    ]


class _Solver:
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
        self, claim: _Z, timeout: float, upto: str = "premises"
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
        self, premises: Sequence[_Z], claim: _Z, timeout: float
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


def _conjuncts(premises: Sequence[_Z]) -> list[_Z]:
    out: list[_Z] = []
    todo = list(reversed(premises))
    while todo:
        p = todo.pop()
        if z3.is_and(p):
            todo.extend(reversed(p.children()))
        else:
            out.append(p)
    return out


def _stays_when_plain(growth: _Z, ms: RuleMeasures, solver: _Solver, timeout: float) -> bool:
    """Whether ``growth`` is surely not negative when every term variable is plain.

    Then, if the rule can fire at all, the component can stay the same (with every term
    variable bound to a variable), so it does not always shrink. If the rule cannot fire,
    nothing is lost: the lexicographic fallback shows that.
    """
    plain = z3.simplify(z3.substitute(growth, *ms.plain)) if ms.plain else growth
    value = _int_literal(plain)
    if value is not None:
        return value >= 0
    # Under weaker assumptions, which every instance of the premises satisfies.
    return bool(solver.check(plain < 0, timeout, "constants")[0] == z3.unsat)


def _lex_less(rhs: Vector, lhs: Vector) -> _Z:
    """``rhs < lhs`` lexicographically, over the components before the first unbounded one."""
    cond: _Z = z3.BoolVal(False)
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
    """Show that ``ob``'s rule instance decreases the measure (module docstring).

    Status ``proven`` with the decreasing component as the method, or ``unknown`` with a
    report saying which component failed and why. Never ``proven`` on a Z3 ``unknown``.
    """
    start = time.perf_counter()
    try:
        ms = rule_measures(ob.rule, ob.semantics, ob.arity)
    except _Unsupported as exc:
        seconds = time.perf_counter() - start
        return ProofResult(ob, "unknown", "measure", seconds, None, _report(ob, str(exc), None))
    method, failure, counterexample = _decide(ms, _Solver(ms), timeout)
    seconds = time.perf_counter() - start
    if method is not None:
        return ProofResult(ob, "proven", method, seconds)
    duplicated = [
        f"the rewrite mentions {v} {_times(n)}, the pattern {_times(ms.pattern_uses[v])}"
        for v, n in sorted(ms.rewrite_uses.items())
        if n > ms.pattern_uses[v]
    ]
    if duplicated:
        failure += " — " + "; ".join(duplicated) + " (a term's measure is unbounded)"
    report = _report(ob, failure, counterexample)
    return ProofResult(ob, "unknown", "measure", seconds, counterexample, report)


def _decide(
    ms: RuleMeasures, solver: _Solver, timeout: float
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


# ------------------------------------------------------------------ the nested order
def check_nested(ob: Obligation, timeout: float = DEFAULT_TIMEOUT) -> ProofResult:
    """Show that ``ob``'s rule instance decreases the nested order (module docstring).

    A rule instance that does, applied anywhere in any term, makes the whole canonical
    term smaller in that order (the order is closed under contexts). Status ``proven``,
    or ``unknown`` with a report naming the node or variable that could not be placed
    below the pattern's. Never ``proven`` on a Z3 ``unknown``.
    """
    start = time.perf_counter()
    try:
        ms = rule_measures(ob.rule, ob.semantics, ob.arity)
    except _Unsupported as exc:
        seconds = time.perf_counter() - start
        report = _report(ob, str(exc), None, order=NESTED_ORDER)
        return ProofResult(ob, "unknown", "nested order", seconds, None, report)
    solver = _Solver(ms)
    if _junctions_shrink(ms, solver, timeout):
        seconds = time.perf_counter() - start
        return ProofResult(ob, "proven", "junction count decreases", seconds)
    method, failure, counterexample = _decide_nested(ms, solver, timeout)
    seconds = time.perf_counter() - start
    if method is not None:
        return ProofResult(ob, "proven", method, seconds)
    report = _report(ob, failure, counterexample, order=NESTED_ORDER)
    return ProofResult(ob, "unknown", "nested order", seconds, counterexample, report)


def _junctions_shrink(ms: RuleMeasures, solver: _Solver, timeout: float) -> bool:
    """Whether the rewrite always has fewer ``and``/``or`` nodes than the pattern.

    The junction count of a whole term is sub-additive under replacement and
    canonical rebuilding (see the module docstring), so such a rule lowers it in every
    context; no rule raises it (it is the first component of every rule's measure).
    """
    new, old = ms.rewrite[0], ms.pattern[0]
    if isinstance(new, Unbounded):
        return False
    return bool(solver.check(new >= old, timeout)[0] == z3.unsat)


def _local_cmp(new: _Node, old: _Node, *, strict: bool) -> _Z:
    """``new`` below (``strict``) or at most ``old`` in the nested order, at equal depth.

    An unbounded component of ``new`` is never below nor equal to anything, so the
    comparison is decided by the components before it or fails.
    """
    cond: _Z = z3.BoolVal(not strict)
    for a, b in reversed(list(zip(new.local(), old.local(), strict=True))):
        if isinstance(a, Unbounded):
            cond = z3.BoolVal(False)
            continue
        cond = z3.Or(a < b, z3.And(a == b, cond))
    return cond


def _occurrences_placed(ms: RuleMeasures, solver: _Solver, timeout: float) -> str:
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
        claims: list[_Z] = []
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
                f"the rewrite mentions {name} {_times(len(new))}, the pattern"
                f" {_times(len(old))} (a term's nodes are not bounded)"
            )
        return f"the rewrite puts {name} under more operators than the pattern does"
    return ""


def _decide_nested(
    ms: RuleMeasures, solver: _Solver, timeout: float
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
        some: _Z = z3.Or(
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


def _node_values(model: z3.ModelRef, ms: RuleMeasures, new: _Node, old: _Node) -> dict[str, int]:
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


def _report(ob: Obligation, failure: str, values: dict[str, int] | None, order: str = "") -> str:
    rule = ob.rule
    lines = [
        f"{rule.location}: rule {rule.name} ({ob.label}): not shown decreasing",
        f"  doc: {rule.doc}",
        f"  {failure}",
        f"  measure: {order or '(' + ', '.join(COMPONENTS) + '), compared lexicographically'}",
    ]
    if values:
        width = max(len(k) for k in values)
        lines += ["  example:"] + [f"    {k:<{width}} = {v}" for k, v in values.items()]
    return "\n".join(lines)


# ------------------------------------------------------------------ quorem verify
def termination_digest() -> str:
    """What a cached termination result depends on besides its rule.

    That is the source of this module (the measure) and of the encoder; pass it to
    :func:`termination_cache_key`.
    """
    text = inspect.getsource(sys.modules[__name__])
    return hashlib.sha256((text + inspect.getsource(encode)).encode()).hexdigest()


def termination_cache_key(ob: Obligation, digest: str) -> str:
    """The proof-cache key of a termination obligation, given :func:`termination_digest`."""
    return f"termination:{cache_key(ob)}:{digest}"
