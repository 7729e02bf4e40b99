"""Walking terms: substitution, free variables, re-bounding.

Terms are interned and carry their value range, which comes from the bounds of their
variables. A map's variable bounds change (a constraint tightens one, composition
renames them), so its terms are rebuilt with :func:`substitute`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import TermError
from .ops import Op
from .term import Term, const, nodes, rebuild, var

__all__ = [
    "free_names",
    "nodes",
    "pin_point_variables",
    "postorder",
    "rebound",
    "replace_subterms",
    "substitute",
    "tree_size",
]


def substitute(term: Term, replacements: Mapping[str, Term]) -> Term:
    """``term`` with each variable named in ``replacements`` replaced by its term.

    The result is rebuilt bottom-up in canonical form, so ranges follow the new
    variables. Shared subterms are rebuilt once; depth is limited by memory only.
    """
    if not replacements:
        return term
    return _rebuild(term, {}, replacements)


def replace_subterms(term: Term, replacements: Mapping[Term, Term]) -> Term:
    """``term`` with every occurrence of a key of ``replacements`` replaced by its value.

    Terms are interned, so an occurrence is a structurally equal subterm; a sum matches
    only as a whole (``a + b`` is not found inside ``a + b + c``).
    """
    if not replacements:
        return term
    return _rebuild(term, dict(replacements), {})


def _rebuild(term: Term, memo: dict[Term, Term], replacements: Mapping[str, Term]) -> Term:
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, ready = stack.pop()
        if t in memo:
            continue
        if t.op is Op.VAR:
            memo[t] = replacements.get(t.arg[0], t)
            continue
        if not t.args:
            memo[t] = t
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((a, False) for a in t.args if a not in memo)
            continue
        args = [memo[a] for a in t.args]
        same = all(a is b for a, b in zip(args, t.args, strict=True))
        memo[t] = t if same else rebuild(t, args)
    return memo[term]


def postorder(term: Term) -> list[Term]:
    """Every distinct node of ``term`` once, each after its operands, ``term`` last."""
    order: list[Term] = []
    seen: set[Term] = set()
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, ready = stack.pop()
        if ready:
            order.append(t)
        elif t not in seen:
            seen.add(t)
            stack.append((t, True))
            stack.extend((a, False) for a in reversed(t.args) if a not in seen)
    return order


def tree_size(*terms: Term) -> int:
    """The number of nodes of ``terms`` written out as trees.

    Each use of a shared subterm counts again, as it does in printed text or in a
    library without sharing: this can be exponentially more than the distinct nodes.
    """
    sizes: dict[Term, int] = {}
    for root in terms:
        for t in postorder(root):
            if t not in sizes:
                sizes[t] = 1 + sum(sizes[a] for a in t.args)
    return sum(sizes[t] for t in terms)


def free_names(term: Term) -> set[str]:
    """The names of the variables ``term`` mentions."""
    return {t.arg[0] for t in nodes(term) if t.op is Op.VAR}


def rebound(term: Term, bounds: Mapping[str, tuple[int, int]]) -> Term:
    """``term`` with the variables named in ``bounds`` given those inclusive bounds."""
    return substitute(term, {n: var(n, lo, hi) for n, (lo, hi) in bounds.items()})


def pin_point_variables(term: Term) -> Term:
    """``term`` with each variable whose range is one value replaced by that value.

    Equal at every point of the box (the variable takes no other value). A replacement
    that would divide by the constant 0 is not made (the term is undefined everywhere
    there), and neither is one whose canonical form leaves int64 where the term did not
    (``y*(x + y)`` with ``y`` one large value distributes to ``x*c + c*c``): the term is
    then kept as written.
    """
    values = {
        t.arg[0]: const(t.vmin)
        for t in nodes(term)
        if t.op is Op.VAR and t.vmin is not None and t.vmin == t.vmax
    }
    if not values:
        return term
    try:
        pinned = substitute(term, values)
    except TermError:
        return term
    return pinned if pinned.fits64 or not term.fits64 else term
