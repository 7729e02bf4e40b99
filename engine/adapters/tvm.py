"""TVM adapter: index ``PrimExpr`` trees (apache-tvm 0.27) to quorem terms and back.

In the 0.27 wheel the expression nodes are in ``tvm.tirx`` (``tvm.ir.prim.expr``) and
the arithmetic analyzer is ``tvm.sym.Analyzer`` (``tvm.tir``/``tvm.arith`` of earlier
versions). ``FloorDiv``/``FloorMod`` round toward negative infinity and ``Div``/``Mod``
toward zero (the analyzer folds ``Div(-7, 2)`` to -3 and ``FloorDiv(-7, 2)`` to -4):
they map to quorem's floor and truncating divisions.

Comparisons and ``And``/``Or``/``Not`` are quorem's 0/1 comparisons and logic, and
``Select(c, a, b)`` is ``c*a + (not c)*b``, written back as a ``Select``. A ``Cast``
between ints whose operand's range fits, or from a bool, keeps the value. Anything else
(a ``Call``, a load, a ``Let``, a bitwise op) is an opaque leaf: a variable bounded by
that node's own bounds (the analyzer's ``const_int_bound``, or its dtype's range when
bounds are given as a dict), which :func:`from_term` replaces by the same node.
Arithmetic is read as exact integer arithmetic, as TVM's analyzer does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Final

from ..api import simplify as simplify_term
from ..errors import QuoremError
from ..ops import Op, Semantics
from ..ruleset import RuleSet
from ..term import (
    Term,
    compare,
    const,
    div,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    product,
)
from ..walk import postorder
from ._common import TermWriter, bounded_var, leaf_name, select

try:
    from tvm import sym, tirx
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        'quorem.adapters.tvm needs apache-tvm 0.27: pip install "quorem[tvm]"'
    ) from exc

__all__ = ["Bounds", "TVMError", "expr_cost", "from_term", "simplify", "to_term"]

Bounds = Any  # a tvm.sym.Analyzer, or a mapping of Var or name to (lo, hi)

_DIVISIONS: Final[dict[Any, tuple[bool, Semantics]]] = {
    tirx.FloorDiv: (True, Semantics.FLOOR),
    tirx.FloorMod: (False, Semantics.FLOOR),
    tirx.Div: (True, Semantics.TRUNC),
    tirx.Mod: (False, Semantics.TRUNC),
}
# Comparisons: TVM node -> (quorem op, operands swapped).
_COMPARISONS: Final[dict[Any, tuple[Op, bool]]] = {
    tirx.LT: (Op.LT, False),
    tirx.LE: (Op.LE, False),
    tirx.GT: (Op.LT, True),
    tirx.GE: (Op.LE, True),
    tirx.EQ: (Op.EQ, False),
    tirx.NE: (Op.NE, False),
}
_ARITHMETIC: Final = frozenset({tirx.Add, tirx.Sub, tirx.Mul, tirx.Min, tirx.Max, *_DIVISIONS})
_LOGIC: Final = frozenset({tirx.And, tirx.Or, tirx.Not})


class TVMError(QuoremError):
    """An expression that is no index expression (not of an int or bool dtype)."""


def _dtype(e: Any) -> str:
    return str(e.ty.dtype)


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint")) and "x" not in dtype  # scalar, not a vector


def _is_index(e: Any) -> bool:
    try:
        dtype = _dtype(e)
    except AttributeError:
        return False
    return dtype == "bool" or _is_int(dtype)


def _dtype_range(dtype: str) -> tuple[int, int]:
    if dtype == "bool":
        return 0, 1
    bits = int(dtype.removeprefix("u").removeprefix("int") or 32)
    if dtype.startswith("uint"):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def _handle(e: Any) -> int:
    return int(e.__chandle__())


def to_term(
    expr: Any, bounds: Bounds = None, leaves: MutableMapping[str, Any] | None = None
) -> Term:
    """The term equal to the index expression ``expr`` at every point of its variables' bounds.

    ``bounds`` is a ``tvm.sym.Analyzer`` (each ``Var``'s bounds are its
    ``const_int_bound``) or a mapping from ``Var`` or name to inclusive ``(lo, hi)``
    (``None`` for an unbounded side; a variable not listed has its dtype's range). A
    node quorem cannot read becomes an opaque variable bounded by the analyzer's
    ``const_int_bound`` of it (by its dtype's range with a mapping). Each variable's
    name and node are entered in ``leaves`` (if given) for :func:`from_term`; two
    ``Var`` nodes of one name get two names. Each node is read once. A bool ``expr``
    gives a 0/1 term.

    Raises:
        TVMError: ``expr`` is not of an int or bool dtype.

    """
    if not _is_index(expr):
        raise TVMError(f"{type(expr).__name__} {expr} is not an integer index expression")
    return _Reader(bounds, {} if leaves is None else leaves).read(expr)


class _Reader:
    """PrimExprs to terms, memoised per node (by its handle: TVM's wrappers are not unique)."""

    def __init__(self, bounds: Bounds, leaves: MutableMapping[str, Any]) -> None:
        self.analyzer = bounds if isinstance(bounds, sym.Analyzer) else None
        self.box: dict[Any, tuple[int | None, int | None]] = {}
        if self.analyzer is None:
            for key, value in dict(bounds or {}).items():
                self.box[key if isinstance(key, str) else _handle(key)] = value
        self.leaves = leaves
        self.names = {_handle(e): name for name, e in leaves.items()}
        self.memo: dict[int, Term] = {}
        self.alive: list[Any] = []  # keeps the handles in ``memo`` from being reused

    def read(self, root: Any) -> Term:
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            e, ready = stack.pop()
            h = _handle(e)
            if h in self.memo:
                continue
            kids = self._operands(e)
            if kids and not ready:
                stack.append((e, True))
                stack.extend((k, False) for k in kids if _handle(k) not in self.memo)
                continue
            self.memo[h] = self._node(e, [self.memo[_handle(k)] for k in kids])
            self.alive.append(e)
        return self.memo[_handle(root)]

    def _operands(self, e: Any) -> tuple[Any, ...]:
        kind = type(e)
        if kind in _ARITHMETIC or kind in _COMPARISONS or kind in (tirx.And, tirx.Or):
            kids: tuple[Any, ...] = (e.a, e.b)
        elif kind is tirx.Not:
            kids = (e.a,)
        elif kind is tirx.Select:
            kids = (e.condition, e.true_value, e.false_value)
        elif kind is tirx.Cast and _is_index(e) and _is_index(e.value) and self._exact(e):
            kids = (e.value,)
        else:
            return ()
        if not all(_is_index(k) for k in kids):
            return ()
        if kind in _DIVISIONS and isinstance(e.b, tirx.IntImm) and int(e.b.value) == 0:
            return ()  # no term divides by the constant 0
        return kids

    def _exact(self, e: Any) -> bool:
        """Whether the Cast ``e`` keeps its operand's value."""
        to, src = _dtype(e), _dtype(e.value)
        if "bool" in (to, src):
            return True
        lo, hi = _dtype_range(to)
        slo, shi = self._range(e.value)
        return slo is not None and shi is not None and lo <= slo and shi <= hi

    def _range(self, e: Any) -> tuple[int | None, int | None]:
        if self.analyzer is not None:
            b = self.analyzer.const_int_bound(e)
            lo, hi = int(b.min_value), int(b.max_value)
            inf = int(sym.ConstIntBound.POS_INF)
            return (None if lo <= -inf else lo), (None if hi >= inf else hi)
        if isinstance(e, tirx.Var):
            found = self.box.get(_handle(e), self.box.get(e.name))
            if found is not None:
                return found
        return _dtype_range(_dtype(e))

    def _node(self, e: Any, a: list[Term]) -> Term:
        kind = type(e)
        if not a:
            if kind is tirx.IntImm:
                return const(int(e.value))
            label = e.name if isinstance(e, tirx.Var) else kind.__name__.lower()
            name = leaf_name(label, e, self.leaves, self.names)
            return bounded_var(name, *self._range(e))
        if kind is tirx.Add:
            return a[0] + a[1]
        if kind is tirx.Sub:
            return a[0] - a[1]
        if kind is tirx.Mul:
            return product(a)
        if kind is tirx.Min:
            return minimum(a[0], a[1])
        if kind is tirx.Max:
            return maximum(a[0], a[1])
        if kind in _DIVISIONS:
            quotient, sem = _DIVISIONS[kind]
            return div(a[0], a[1], sem) if quotient else mod(a[0], a[1], sem)
        if kind in _COMPARISONS:
            op, swap = _COMPARISONS[kind]
            return compare(op, a[1], a[0]) if swap else compare(op, a[0], a[1])
        if kind is tirx.And:
            return logical_and(a[0], a[1])
        if kind is tirx.Or:
            return logical_or(a[0], a[1])
        if kind is tirx.Not:
            return logical_not(a[0])
        if kind is tirx.Select:
            return select(a[0], a[1], a[2])
        # An exact Cast: the value, or its truth for a cast to bool.
        return compare(Op.NE, a[0], const(0)) if _dtype(e) == "bool" else a[0]


def from_term(term: Term, leaves: Mapping[str, Any] | None = None, *, dtype: str = "int64") -> Any:
    """The PrimExpr equal to ``term`` at every point of its variables' bounds.

    A variable named in ``leaves`` (as filled by :func:`to_term`) is that node (cast to
    ``dtype`` if it has another int dtype); another becomes ``tirx.Var(name, dtype)``,
    entered in ``leaves`` if it is mutable. Arithmetic is built in ``dtype``;
    ``dtype="bool"`` gives the condition ``term != 0``. Floor and truncating divisions
    become ``FloorDiv``/``FloorMod`` and ``Div``/``Mod``; ``ceildiv`` and Euclidean
    divisions are written with floor ones; a product with conditions among its factors
    becomes a ``Select``. Nodes are built directly, without TVM's folding.

    Raises:
        TVMError: a constant of ``term`` does not fit ``dtype``.

    """
    want_bool = dtype == "bool"
    known = leaves if isinstance(leaves, MutableMapping) else dict(leaves or {})
    writer = _PrimExprWriter(known, "int64" if want_bool else dtype)
    for t in postorder(term):
        writer.build(t)
    return writer.condition(term) if want_bool else writer.value(term)


_BINARY: Final[dict[Op, Callable[[Any, Any], Any]]] = {
    Op.FLOORDIV: tirx.FloorDiv,
    Op.FLOORMOD: tirx.FloorMod,
    Op.TRUNCDIV: tirx.Div,
    Op.TRUNCMOD: tirx.Mod,
    Op.MAX: tirx.Max,
    Op.MIN: tirx.Min,
}
_CONDITIONS: Final[dict[Op, Callable[[TermWriter, Term, Term], Any]]] = {
    Op.LT: lambda w, a, b: tirx.LT(w.value(a), w.value(b)),
    Op.LE: lambda w, a, b: tirx.LE(w.value(a), w.value(b)),
    Op.EQ: lambda w, a, b: tirx.EQ(w.value(a), w.value(b)),
    Op.NE: lambda w, a, b: tirx.NE(w.value(a), w.value(b)),
    Op.AND: lambda w, a, b: tirx.And(w.condition(a), w.condition(b)),
    Op.OR: lambda w, a, b: tirx.Or(w.condition(a), w.condition(b)),
}


class _PrimExprWriter(TermWriter):
    """Terms to PrimExprs (see :class:`~quorem.adapters._common.TermWriter`)."""

    binary = _BINARY
    conditions = _CONDITIONS

    def const(self, v: int) -> Any:
        lo, hi = _dtype_range(self.dtype)
        if not lo <= v <= hi:
            raise TVMError(f"the constant {v} does not fit {self.dtype}")
        return tirx.IntImm(self.dtype, v)

    def value(self, t: Term) -> Any:
        e = self.built[t]
        return e if _dtype(e) == self.dtype else tirx.Cast(self.dtype, e)

    def condition(self, t: Term) -> Any:
        e = self.built[t]
        return e if _dtype(e) == "bool" else tirx.NE(self.value(t), self.const(0))

    def leaf(self, t: Term) -> Any:
        found = self.leaves.get(t.name)
        if found is None:
            found = self.leaves[t.name] = tirx.Var(t.name, self.dtype)
        return found

    def is_bool_leaf(self, leaf: Any) -> bool:
        return _dtype(leaf) == "bool"

    def sum(self, t: Term) -> Any:
        pairs, k = t.addends()
        pairs.sort(key=lambda p: p[1] < 0)  # x - y as Sub(x, y), not Add(-y, x)
        out = None
        for atom, c in pairs:
            x = self.value(atom)
            if out is None:
                out = x if c == 1 else tirx.Mul(x, self.const(c))
            else:
                scaled = x if abs(c) == 1 else tirx.Mul(x, self.const(abs(c)))
                out = tirx.Add(out, scaled) if c > 0 else tirx.Sub(out, scaled)
        if k == 0:
            return out
        return tirx.Add(out, self.const(k)) if k > 0 else tirx.Sub(out, self.const(-k))

    def mul(self, a: Any, b: Any) -> Any:
        return tirx.Mul(a, b)

    def both(self, a: Any, b: Any) -> Any:
        return tirx.And(a, b)

    def to_int(self, cond: Any) -> Any:
        return tirx.Cast(self.dtype, cond)

    def less(self, a: Any, b: Any) -> Any:
        return tirx.LT(a, b)

    def choose(self, cond: Any, if_true: Any, if_false: Any) -> Any:
        return tirx.Select(cond, if_true, if_false)


def simplify(expr: Any, bounds: Bounds = None, rules: RuleSet | None = None) -> Any:
    """A PrimExpr equal to ``expr`` at every point of its variables' bounds, simplified.

    ``expr`` is read by :func:`to_term` with ``bounds`` (an Analyzer or a mapping, as
    there), simplified by :func:`quorem.simplify` (with ``rules``, default the shipped
    ones) and written back by :func:`from_term` in ``expr``'s dtype over the same
    variables and opaque nodes. Issues quorem's ``IncompleteRewriteWarning`` as
    :func:`quorem.simplify` does.

    Returns ``expr`` itself unless the result costs less (:func:`expr_cost`: fewer
    divisions and remainders, or as many and fewer distinct nodes), so a caller never
    gets a worse expression back.

    Raises:
        TVMError: ``expr`` is not of an int or bool dtype.

    """
    leaves: dict[str, Any] = {}
    term = to_term(expr, bounds, leaves)
    try:
        out = from_term(simplify_term(term, rules), leaves, dtype=_dtype(expr))
    except TVMError:
        return expr  # quorem's exact result has a constant the dtype cannot hold
    return out if expr_cost(out) < expr_cost(expr) else expr


def expr_cost(expr: Any) -> tuple[int, int]:
    """``(divisions and remainders, distinct nodes)`` of the PrimExpr ``expr``.

    Counted over the nodes :func:`to_term` reads through (an opaque node counts as one).
    """
    reader = _Reader(None, {})
    seen: set[int] = set()
    stack = [expr]
    divisions = nodes = 0
    while stack:
        e = stack.pop()
        h = _handle(e)
        if h in seen:
            continue
        seen.add(h)
        nodes += 1
        divisions += type(e) in _DIVISIONS
        stack.extend(reader._operands(e))
    return divisions, nodes
