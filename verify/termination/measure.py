"""The concrete measure of a term, and its nested measure (the orders themselves).

:func:`term_measure` is the tuple of :data:`COMPONENTS` the per-rule order compares;
:func:`term_nodes` the multiset of operator nodes the nested order compares, by
:func:`nested_less`. The package docstring defines both and says what is proven of them.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from quorem.ops import COMPARISONS, DIVISION_OPS, LOGICAL, Op
from quorem.term import Term
from quorem.walk import postorder

__all__ = [
    "CEILDIV_WEIGHT",
    "COMPONENTS",
    "OP_WEIGHT",
    "Element",
    "Measure",
    "nested_less",
    "term_measure",
    "term_nodes",
]

COMPONENTS: Final = (
    "junction count",
    "div/mod count",
    "divisor magnitude",
    "misplaced constants",
    "node count",
    "comparison weight",
)
Measure = tuple[int, int, int, int, int, int]
OP_WEIGHT: Final = 2  # an operator node's weight in the node count (see the package docstring)
CEILDIV_WEIGHT: Final = 2  # ceildiv's weight in D: a floor division, negated twice


def term_measure(t: Term) -> Measure:
    """The measure ``(D, V, P, N)`` of a canonical term (see the package docstring).

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
    n += OP_WEIGHT
    if op in LOGICAL:
        j += 1
    if op in COMPARISONS:
        q += _comparison_weight(u)
    if op in DIVISION_OPS or op is Op.CEILDIV:
        d += CEILDIV_WEIGHT if op is Op.CEILDIV else 1
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
    """A comparison node's own weight (see the package docstring).

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
    the node alone, 0 unless it is a division (see the package docstring). ``memo`` (node
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
    scale = CEILDIV_WEIGHT if u.op is Op.CEILDIV else 1  # see the package docstring
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
