"""What the adapters share: names for the leaves they read, and selections as terms."""

from __future__ import annotations

import keyword
import re
from collections.abc import MutableMapping
from typing import Any, Final

from quorem.ops import COMPARISONS, LOGICAL
from quorem.syntax import RESERVED
from quorem.term import Term, logical_not, product, var

__all__ = ["bounded_var", "is_boolean", "leaf_name", "select"]

_NOT_WORD: Final = re.compile(r"\W")
_KEYWORDS: Final = frozenset({"and", "or", "not"})


def leaf_name(
    wanted: str, leaf: object, leaves: MutableMapping[str, Any], names: dict[int, str]
) -> str:
    """A variable name for ``leaf``, entered in ``leaves``, that no other leaf there has.

    The name is ``wanted`` made an identifier, with a numeric suffix if another leaf
    already holds it: one name is one variable in a term, while two leaves of a
    compiler's graph may share a name (two ``Var("i")`` of TVM are two variables).
    ``names`` maps ``id(leaf)`` to its name for the leaves in ``leaves`` (the caller keeps
    them alive), so a leaf read twice keeps its name.
    """
    known = names.get(id(leaf))
    if known is not None and leaves.get(known) is leaf:
        return known
    base = _NOT_WORD.sub("_", wanted) or "v"
    if not base.isidentifier():  # starts with a digit
        base = "v_" + base
    if base in RESERVED or base in _KEYWORDS or keyword.iskeyword(base):
        base += "_"
    name, n = base, 0
    while name in leaves:
        n += 1
        name = f"{base}_{n}"
    leaves[name] = leaf
    names[id(leaf)] = name
    return name


def bounded_var(name: str, lo: int | None, hi: int | None) -> Term:
    """The variable ``name`` over ``[lo, hi]``, unbounded instead where the range is empty.

    An empty range (a loop of no iterations) means the expression is never evaluated;
    no bound at all is still a true statement about it, where an empty range is not a
    term quorem can hold.
    """
    if lo is not None and hi is not None and lo > hi:
        return var(name)
    return var(name, lo, hi)


def is_boolean(t: Term) -> bool:
    """Whether ``t`` is a comparison or a logical term (its value is 0 or 1)."""
    return t.op in COMPARISONS or t.op in LOGICAL


def select(cond: Term, if_true: Term, if_false: Term) -> Term:
    """``if_true`` where the 0/1 term ``cond`` is 1, else ``if_false``, as a term.

    quorem has no selection operator: ``cond*if_true + (not cond)*if_false`` is equal to
    it for a ``cond`` of value 0 or 1, which the callers guarantee (a comparison, a
    logical term or a boolean leaf). ``not cond`` rather than ``1 - cond``: it is a
    comparison again, which the adapters write back as a condition.
    """
    if cond.is_const:
        return if_true if cond.value else if_false
    if if_true is if_false:
        return if_true
    return product([cond, if_true]) + product([logical_not(cond), if_false])
