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

The package
-----------
:mod:`~quorem.verify.termination.measure` is the concrete measure and nested measure of a
term; :mod:`~quorem.verify.termination.values` the symbolic values they are computed
with for a rule, by :mod:`~quorem.verify.termination.symbolic`;
:mod:`~quorem.verify.termination.solver` asks Z3 about them;
:mod:`~quorem.verify.termination.decide` proves the per-rule order,
:mod:`~quorem.verify.termination.nested` the nested order, and
:mod:`~quorem.verify.termination.report` says why a rule was not shown decreasing;
:mod:`~quorem.verify.termination.digest` keys their cached results.
"""

from __future__ import annotations

from .decide import (
    OBLIGATION,
    check_termination,
    termination_obligations,
)
from .digest import termination_cache_key, termination_digest
from .measure import (
    COMPONENTS,
    Element,
    Measure,
    nested_less,
    term_measure,
    term_nodes,
)
from .nested import (
    NESTED_OBLIGATION,
    NESTED_ORDER,
    check_nested,
    nested_obligations,
)
from .symbolic import RuleMeasures, rule_measures
from .values import Unbounded

__all__ = [
    "COMPONENTS",
    "NESTED_OBLIGATION",
    "NESTED_ORDER",
    "OBLIGATION",
    "Element",
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
