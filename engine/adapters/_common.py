"""What the adapters share.

Names for the leaves they read, selections as terms, and the writer of terms back into
a compiler's nodes (:class:`TermWriter`).
"""

from __future__ import annotations

import abc
import keyword
import re
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, ClassVar, Final

from ..ops import COMPARISONS, LOGICAL, Op
from ..syntax import RESERVED
from ..term import Term, logical_not, product, var

__all__ = ["TermWriter", "bounded_var", "is_boolean", "leaf_name", "select"]

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


class TermWriter(abc.ABC):
    """Terms to a compiler's nodes, built bottom up.

    :meth:`build` each subterm of a term in post-order (children first), then read the
    whole as :meth:`value` or :meth:`condition`.
    ``built`` holds each subterm's node (an int or a bool one) as it is made. What every
    compiler shares is written here once: the walk over the operators, a product with
    conditions among its factors as a selection, and ``ceildiv`` and the Euclidean
    divisions written with floor ones. A subclass says how its compiler writes a
    constant, a leaf, a sum and each node (the abstract methods), and which of quorem's
    operators it has directly (:attr:`binary`, :attr:`conditions`).
    """

    # Floor and truncating division and remainder, max and min: the compiler's own node.
    binary: ClassVar[Mapping[Op, Callable[[Any, Any], Any]]]
    # Comparisons and logic, each given the writer and its two operand terms.
    conditions: ClassVar[Mapping[Op, Callable[[TermWriter, Term, Term], Any]]]

    def __init__(self, leaves: MutableMapping[str, Any], dtype: Any) -> None:
        self.leaves = leaves
        self.dtype = dtype
        self.built: dict[Term, Any] = {}

    @abc.abstractmethod
    def const(self, v: int) -> Any:
        """The constant ``v`` in the writer's dtype; an error if the dtype cannot hold it."""

    @abc.abstractmethod
    def value(self, t: Term) -> Any:
        """``t``'s node as an integer of the writer's dtype (a bool one is cast)."""

    @abc.abstractmethod
    def condition(self, t: Term) -> Any:
        """``t``'s node as a bool (an integer one is compared with 0)."""

    @abc.abstractmethod
    def leaf(self, t: Term) -> Any:
        """The node of the variable ``t``: its leaf in ``leaves``, else a new one entered there."""

    @abc.abstractmethod
    def is_bool_leaf(self, leaf: Any) -> bool:
        """Whether the leaf node ``leaf`` is a bool (a factor written as a condition)."""

    @abc.abstractmethod
    def sum(self, t: Term) -> Any:
        """The node of the sum ``t``, its addends already built."""

    @abc.abstractmethod
    def mul(self, a: Any, b: Any) -> Any:
        """The node ``a * b`` of two integer nodes."""

    @abc.abstractmethod
    def both(self, a: Any, b: Any) -> Any:
        """The node ``a and b`` of two bool nodes."""

    @abc.abstractmethod
    def to_int(self, cond: Any) -> Any:
        """The bool node ``cond`` as an integer (0 or 1) of the writer's dtype."""

    @abc.abstractmethod
    def less(self, a: Any, b: Any) -> Any:
        """The bool node ``a < b`` of two integer nodes."""

    @abc.abstractmethod
    def choose(self, cond: Any, if_true: Any, if_false: Any) -> Any:
        """The node that is ``if_true`` where the bool node ``cond`` holds, else ``if_false``."""

    def build(self, t: Term) -> None:
        """Make ``t``'s node from its children's, which must be built already."""
        op = t.op
        if op is Op.CONST:
            self.built[t] = self.const(t.value)
        elif op is Op.VAR:
            self.built[t] = self.leaf(t)
        elif op is Op.ADD:
            self.built[t] = self.sum(t)
        elif op is Op.MUL:
            self.built[t] = self._product(t)
        elif op in self.conditions:
            a, b = t.args
            self.built[t] = self.conditions[op](self, a, b)
        else:
            a, b = (self.value(x) for x in t.args)
            self.built[t] = self._binary(op, t, a, b)

    def _is_condition(self, t: Term) -> bool:
        """Whether ``t`` is written as a bool node: a comparison, logic, or a bool leaf."""
        if is_boolean(t):
            return True
        leaf = self.leaves.get(t.name) if t.op is Op.VAR else None
        return leaf is not None and self.is_bool_leaf(leaf)

    def _product(self, t: Term) -> Any:
        is_cond = [self._is_condition(f) for f in t.args]
        conds = [self.condition(f) for f, c in zip(t.args, is_cond, strict=True) if c]
        rest = [self.value(f) for f, c in zip(t.args, is_cond, strict=True) if not c]
        body = None
        for x in rest:
            body = x if body is None else self.mul(body, x)
        if not conds:
            return body
        cond = conds[0]
        for c in conds[1:]:
            cond = self.both(cond, c)
        if body is None:
            return self.to_int(cond)
        # c * x is x where c holds, else 0: a selection, as compilers write them.
        return self.choose(cond, body, self.const(0))

    def _binary(self, op: Op, t: Term, a: Any, b: Any) -> Any:
        direct = self.binary.get(op)
        if direct is not None:
            return direct(a, b)
        floordiv, floormod = self.binary[Op.FLOORDIV], self.binary[Op.FLOORMOD]
        minus = self.const(-1)
        if op is Op.CEILDIV:  # ceil(a/b) = -floor(-a/b), for either sign of b
            return self.mul(floordiv(self.mul(a, minus), b), minus)
        # Euclidean: the remainder is a mod |b| (floor), the quotient floor(a/|b|)*sign(b).
        divisor = t.args[1]
        if divisor.vmin is not None and divisor.vmin > 0:
            magnitude, sign = b, 1
        elif divisor.vmax is not None and divisor.vmax < 0:
            magnitude, sign = self.mul(b, minus), -1
        else:
            magnitude, sign = self.binary[Op.MAX](b, self.mul(b, minus)), 0
        if op is Op.EUCLIDMOD:
            return floormod(a, magnitude)
        q = floordiv(a, magnitude)
        if sign:
            return q if sign > 0 else self.mul(q, minus)
        return self.choose(self.less(b, self.const(0)), self.mul(q, minus), q)
