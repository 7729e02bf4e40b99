"""tinygrad index UOps to quorem terms and back, simplified (:mod:`quorem.adapters.tinygrad`)."""

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
    logical_or,
    maximum,
    mod,
    product,
)
from ..walk import postorder
from ._common import TermWriter, bounded_var, leaf_name, select

try:
    from tinygrad.dtype import Invalid, dtypes, least_upper_dtype
    from tinygrad.uop import GroupOp
    from tinygrad.uop.ops import Ops, UOp
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        'quorem.adapters.tinygrad needs tinygrad 0.14: pip install "quorem[tinygrad]"'
    ) from exc

__all__ = ["TinygradError", "from_term", "simplify", "to_term", "uop_count"]

# The leaf UOps: variables and indices, which become named quorem variables.
_INDEX_LEAVES: Final = frozenset({Ops.RANGE, Ops.SPECIAL})
_DIVISIONS: Final[dict[Any, tuple[bool, Semantics]]] = {
    Ops.FLOORDIV: (True, Semantics.FLOOR),
    Ops.FLOORMOD: (False, Semantics.FLOOR),
    Ops.CDIV: (True, Semantics.TRUNC),
    Ops.CMOD: (False, Semantics.TRUNC),
}
_INT_OPS: Final = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.MAX, *_DIVISIONS})
_BOOL_OPS: Final = frozenset({Ops.AND, Ops.OR, Ops.XOR})
_COMPARISONS: Final = {Ops.CMPLT: Op.LT, Ops.CMPNE: Op.NE, Ops.CMPEQ: Op.EQ}


class TinygradError(QuoremError):
    """A UOp that is no index expression (not of an int or bool dtype)."""


def _is_int(dtype: Any) -> bool:
    return bool(dtypes.is_int(dtype))


def _is_index(u: Any) -> bool:
    """Whether ``u`` has a value quorem can hold: an int, or a bool as 0 or 1."""
    return u.dtype == dtypes.bool or _is_int(u.dtype)


def _is_variable(u: Any) -> bool:
    """``UOp.variable``: a BUFFER (PARAM inside a kernel) in the ALU space, with bounds."""
    arg = getattr(u, "arg", None)
    return (
        u.op in (Ops.BUFFER, Ops.PARAM)
        and getattr(arg, "vmin_vmax", None) is not None
        and _is_int(u.dtype)
        and (u.op is Ops.PARAM or u.is_variable)
    )


def _bound(value: Any, dtype: Any) -> int | None:
    """A UOp's bound as an int; ``None`` for none (weakint's own limit, or not a number)."""
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, int):
        return None
    # weakint's limits are numbers of hundreds of digits standing for "unbounded".
    if dtype == dtypes.weakint and value in (dtypes.weakint.min, dtypes.weakint.max):
        return None
    return value


def _leaf_label(u: Any) -> str:
    """The name a leaf is given (made unique by ``leaf_name``)."""
    if _is_variable(u) and u.arg.name:
        return str(u.arg.name)
    if u.op is Ops.SPECIAL:
        return str(u.arg)
    if u.op is Ops.RANGE:
        return "r" + "_".join(str(a) for a in u.arg if isinstance(a, int) and a >= 0)
    return str(u.op.name).lower()


def to_term(uop: Any, leaves: MutableMapping[str, Any] | None = None) -> Term:
    """The term equal to the index UOp ``uop`` at every point of its leaves' bounds.

    Variables, ``RANGE`` and ``SPECIAL`` become variables bounded by their ``vmin`` and
    ``vmax``; a sub-UOp quorem cannot read becomes an opaque variable bounded the same
    way. Each leaf's name and UOp are entered in ``leaves`` (if given), which
    :func:`from_term` takes to put the same UOps back; a ``leaves`` shared by several
    calls gives each UOp one name. Each sub-UOp is read once, so shared subgraphs stay
    shared (terms are hash-consed). A bool ``uop`` gives a 0/1 term.

    Raises:
        TinygradError: ``uop`` is not of an int or bool dtype.

    """
    if not _is_index(uop):
        raise TinygradError(f"{uop.op} of dtype {uop.dtype} is not an index expression")
    return _Reader({} if leaves is None else leaves).read(uop)


class _Reader:
    """UOps to terms, memoised per UOp (UOps are hash-consed: identity is structure)."""

    def __init__(self, leaves: MutableMapping[str, Any]) -> None:
        self.leaves = leaves
        self.names = {id(u): name for name, u in leaves.items()}
        self.memo: dict[int, Term] = {}
        self.alive: list[Any] = []  # keeps the ids in ``memo`` from being reused

    def read(self, root: Any) -> Term:
        # Iterative post-order: index graphs can nest deeper than Python's recursion limit.
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            u, ready = stack.pop()
            if id(u) in self.memo:
                continue
            kids = self._operands(u)
            if kids and not ready:
                stack.append((u, True))
                stack.extend((k, False) for k in kids if id(k) not in self.memo)
                continue
            self.memo[id(u)] = self._node(u, [self.memo[id(k)] for k in kids])
            self.alive.append(u)
        return self.memo[id(root)]

    def _operands(self, u: Any) -> tuple[Any, ...]:
        """The sources read into ``u``'s term; none for a leaf or an opaque UOp."""
        return u.src if self._readable(u) else ()

    def _readable(self, u: Any) -> bool:
        op = u.op
        if not _is_index(u) or not all(_is_index(s) for s in u.src):
            return False
        if op in _INT_OPS:
            if not _is_int(u.dtype):
                return False
            if op in _DIVISIONS:  # a constant divisor 0 has no term (tinygrad gives 0)
                d = u.src[1]
                return not (d.op is Ops.CONST and d.arg == 0)
            return True
        if op in _COMPARISONS:
            return True
        if op in _BOOL_OPS:
            if u.dtype == dtypes.bool:
                return True
            # ~x is XOR(x, -1) in tinygrad (minimum is built from it): -x - 1 exactly.
            return op is Ops.XOR and _is_const(u.src[1], -1)
        if op is Ops.WHERE:
            return not any(_is_invalid(s) for s in u.src)
        if op is Ops.CAST:
            return _cast_is_exact(u)
        return False

    def _node(self, u: Any, a: list[Term]) -> Term:
        op = u.op
        if not a:
            if op is Ops.CONST and isinstance(u.arg, int):  # (bool is an int)
                return const(int(u.arg))
            return self._leaf(u)
        if op is Ops.ADD:
            return a[0] + a[1]
        if op is Ops.SUB:
            return a[0] - a[1]
        if op is Ops.MUL:
            return product(a)
        if op is Ops.NEG:
            return -a[0]
        if op is Ops.MAX:
            return maximum(a[0], a[1])
        if op in _DIVISIONS:
            quotient, sem = _DIVISIONS[op]
            return div(a[0], a[1], sem) if quotient else mod(a[0], a[1], sem)
        if op in _COMPARISONS:
            return compare(_COMPARISONS[op], a[0], a[1])
        if op is Ops.AND and u.dtype == dtypes.bool:
            return logical_and(a[0], a[1])
        if op is Ops.OR and u.dtype == dtypes.bool:
            return logical_or(a[0], a[1])
        if op is Ops.XOR:
            if u.dtype == dtypes.bool:  # of two 0/1 values: 1 where they differ
                return compare(Op.NE, a[0], a[1])
            return -a[0] - 1
        if op is Ops.WHERE:
            return select(_truth(u.src[0], a[0]), a[1], a[2])
        # CAST, exact (see _cast_is_exact): the value, or its truth for a cast to bool.
        return _truth(u.src[0], a[0]) if u.dtype == dtypes.bool else a[0]

    def _leaf(self, u: Any) -> Term:
        name = leaf_name(_leaf_label(u), u, self.leaves, self.names)
        return bounded_var(name, _bound(u.vmin, u.dtype), _bound(u.vmax, u.dtype))


def _is_const(u: Any, value: int) -> bool:
    return bool(u.op is Ops.CONST and isinstance(u.arg, int) and u.arg == value)


def _is_invalid(u: Any) -> bool:
    return bool(u.op is Ops.CONST and u.arg is Invalid)


def _truth(u: Any, t: Term) -> Term:
    """The 0/1 term of ``u`` used as a condition: itself for a bool, else ``t != 0``."""
    return t if u.dtype == dtypes.bool else compare(Op.NE, t, const(0))


def _cast_is_exact(u: Any) -> bool:
    """Whether the CAST ``u`` keeps its operand's value (bool to int, or a range that fits)."""
    src = u.src[0]
    if dtypes.bool in (u.dtype, src.dtype):
        return True
    lo, hi = src.vmin, src.vmax
    return bool(
        isinstance(lo, int) and isinstance(hi, int) and u.dtype.min <= lo and hi <= u.dtype.max
    )


def from_term(term: Term, leaves: Mapping[str, Any] | None = None, *, dtype: Any = None) -> Any:
    """The UOp equal to ``term`` at every point of its variables' bounds.

    A variable named in ``leaves`` (as filled by :func:`to_term`) is that UOp; another
    becomes ``UOp.variable(name, lo, hi)``, entered in ``leaves`` if it is mutable.
    Arithmetic is built in ``dtype`` (default ``weakint``); ``dtype=dtypes.bool`` gives
    the condition ``term != 0``. Floor and
    truncating divisions become ``FLOORDIV``/``FLOORMOD`` and ``CDIV``/``CMOD``;
    ``ceildiv`` and Euclidean divisions are written with floor ones. A product with
    conditions among its factors becomes a ``WHERE``. Shared subterms are built once.

    Raises:
        TinygradError: a constant of ``term`` does not fit ``dtype``.

    """
    dt = dtypes.weakint if dtype is None else dtype
    want_bool = dt == dtypes.bool
    known = leaves if isinstance(leaves, MutableMapping) else dict(leaves or {})
    writer = _UOpWriter(known, dtypes.weakint if want_bool else dt)
    for t in postorder(term):
        writer.build(t)
    return writer.condition(term) if want_bool else writer.value(term)


def _alu(op: Any, a: Any, b: Any) -> Any:
    """``op(a, b)`` with both operands in one dtype (a leaf may be a sized int)."""
    if a.dtype != b.dtype:
        common = least_upper_dtype(a.dtype, b.dtype)
        a, b = a.cast(common), b.cast(common)
    return a.alu(op, b)


def _less_equal(w: TermWriter, a: Term, b: Term) -> Any:
    return w.value(a) < w.value(b) + w.const(1)  # integers: a <= b is a < b + 1


_BINARY: Final[dict[Op, Callable[[Any, Any], Any]]] = {
    Op.FLOORDIV: lambda a, b: _alu(Ops.FLOORDIV, a, b),
    Op.FLOORMOD: lambda a, b: _alu(Ops.FLOORMOD, a, b),
    Op.TRUNCDIV: lambda a, b: _alu(Ops.CDIV, a, b),
    Op.TRUNCMOD: lambda a, b: _alu(Ops.CMOD, a, b),
    Op.MAX: lambda a, b: a.maximum(b),
    Op.MIN: lambda a, b: a.minimum(b),
}
_CONDITIONS: Final[dict[Op, Callable[[TermWriter, Term, Term], Any]]] = {
    Op.LT: lambda w, a, b: w.value(a) < w.value(b),
    Op.LE: _less_equal,
    Op.EQ: lambda w, a, b: w.value(a).eq(w.value(b)),
    Op.NE: lambda w, a, b: w.value(a).ne(w.value(b)),
    Op.AND: lambda w, a, b: w.condition(a) & w.condition(b),
    Op.OR: lambda w, a, b: w.condition(a) | w.condition(b),
}


class _UOpWriter(TermWriter):
    """Terms to UOps (see :class:`~quorem.adapters._common.TermWriter`)."""

    binary = _BINARY
    conditions = _CONDITIONS

    def const(self, v: int) -> Any:
        # UOp.const keeps any Python int, and a sized int's kernel would wrap it: a
        # constant the dtype cannot hold is refused, never written.
        if not self.dtype.min <= v <= self.dtype.max:
            raise TinygradError(f"the constant {v} does not fit {self.dtype}")
        return UOp.const(v, self.dtype)

    def value(self, t: Term) -> Any:
        u = self.built[t]
        return u.cast(self.dtype) if u.dtype == dtypes.bool else u

    def condition(self, t: Term) -> Any:
        u = self.built[t]
        return u if u.dtype == dtypes.bool else u.ne(self.const(0))

    def leaf(self, t: Term) -> Any:
        name, lo, hi = t.arg
        found = self.leaves.get(name)
        if found is None:
            lo = self.dtype.min if lo is None else lo
            hi = self.dtype.max if hi is None else hi
            found = self.leaves[name] = UOp.variable(name, lo, hi, self.dtype)
        return found

    def is_bool_leaf(self, leaf: Any) -> bool:
        return bool(getattr(leaf, "dtype", None) == dtypes.bool)

    def sum(self, t: Term) -> Any:
        pairs, k = t.addends()
        # Positive coefficients first, so x - y is written ADD(x, MUL(y, -1)) as tinygrad's
        # own subtraction is, not with the negated term first.
        pairs.sort(key=lambda p: p[1] < 0)
        out = None
        for atom, c in pairs:
            x = self.value(atom)
            x = x if c == 1 else x * self.const(c)
            out = x if out is None else out + x
        return out if k == 0 else out + self.const(k)

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def both(self, a: Any, b: Any) -> Any:
        return a & b

    def to_int(self, cond: Any) -> Any:
        return cond.cast(self.dtype)

    def less(self, a: Any, b: Any) -> Any:
        return a < b

    def choose(self, cond: Any, if_true: Any, if_false: Any) -> Any:
        return cond.where(if_true, if_false)  # a WHERE, as tinygrad writes selections


def uop_count(uop: Any) -> int:
    """The number of distinct UOps in ``uop``'s graph: :func:`simplify`'s default cost."""
    return len(uop.toposort())


def simplify(
    uop: Any, rules: RuleSet | None = None, *, cost: Callable[[Any], Any] = uop_count
) -> Any:
    """A UOp equal to the index UOp ``uop`` at every point of its leaves' bounds, simplified.

    ``uop`` is read by :func:`to_term`, simplified by :func:`quorem.simplify` (with
    ``rules``, default the shipped ones) and written back by :func:`from_term` in
    ``uop``'s dtype over the same leaf UOps; the index operands of each opaque UOp (a
    ``WHERE`` with an ``Invalid`` branch, a bitwise op) are simplified the same way.
    Returns ``uop`` itself unless the result costs less: ``cost`` (of a UOp, any
    ordered value; default :func:`uop_count`) is lower for it, for the whole and for
    each opaque UOp's operand. Issues quorem's ``IncompleteRewriteWarning`` as
    :func:`quorem.simplify` does.

    Raises:
        TinygradError: ``uop`` is not of an int or bool dtype.

    """
    return _simplify(uop, rules, {}, cost)


_Cost = Callable[[Any], Any]


def _simplify(uop: Any, rules: RuleSet | None, done: dict[int, Any], cost: _Cost) -> Any:
    if id(uop) in done:
        return done[id(uop)]
    leaves: dict[str, Any] = {}
    term = to_term(uop, leaves)
    inner = {name: _simplify_inside(u, rules, done, cost) for name, u in leaves.items()}
    try:
        built = from_term(simplify_term(term, rules), inner, dtype=uop.dtype)
    except TinygradError:  # a constant of the result does not fit uop's dtype
        done[id(uop)] = uop
        return uop
    # Never worse than the input: reading alone may shorten it (terms are normalised as
    # they are built), but a rewrite can lengthen a graph that tinygrad shares better.
    out = built if cost(built) < cost(uop) else uop
    done[id(uop)] = out
    return out


def _simplify_inside(u: Any, rules: RuleSet | None, done: dict[int, Any], cost: _Cost) -> Any:
    """An opaque ALU UOp with its index operands simplified (a leaf is itself)."""
    if u.op not in GroupOp.ALU or not u.src:
        return u
    src = tuple(
        _simplify(s, rules, done, cost) if _is_index(s) and not _is_invalid(s) else s for s in u.src
    )
    if all(a is b for a, b in zip(src, u.src, strict=True)):
        return u
    return u.replace(src=src)
