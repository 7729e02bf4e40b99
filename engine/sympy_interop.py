"""SymPy interoperability: quorem terms to SymPy expressions and back.

SymPy's integer division is ``floor(a/b)`` and its ``Mod`` is floor modulo, so a term is
first lowered to floor division by the proven rules of ``rules/lowering/`` (a
truncating or Euclidean division becomes a floor one with a sign correction). A ceiling
division is kept: it is ``ceiling(a/b)``, which :func:`from_sympy` reads back as one.
Comparisons become clamped differences (``a < b`` is ``Min(1, Max(0, b - a))``, ``a == b`` is
``1 - Min(1, Abs(a - b))``). Variables become integer symbols, non-negative
(or positive) where their lower bound says so, which SymPy's simplifier can use; their
upper bounds SymPy cannot hold, so :func:`from_sympy` takes bounds again.

Divisions are built unevaluated: SymPy's own rewriting of ``Mod`` is not always sound
(``Mod(2*a, -6*a)`` becomes ``2*a``), and quorem does not pass it terms to rewrite.

SymPy is imported only when these functions are called (the ``sympy`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .arith import BINARY_EVALUATORS
from .codegen.lower import lower
from .errors import QuoremError
from .ops import Op, Semantics
from .printer import brief
from .term import (
    Term,
    ceildiv,
    compare,
    const,
    div,
    maximum,
    minimum,
    mod,
    product,
    var,
)
from .walk import postorder, tree_size

__all__ = ["SympyError", "from_sympy", "to_sympy"]

_MAX_POWER: Final = 64
# SymPy keeps no sharing: a term is a tree to it, and its constructors walk those trees
# (Max and Min count nodes to order their arguments). A term whose tree is larger is
# refused with a clear error rather than left to run for minutes.
MAX_TREE_NODES: Final = 50_000


class SympyError(QuoremError):
    """A SymPy expression outside what quorem terms express (names the node and why)."""


def _sympy() -> Any:
    try:
        import sympy  # noqa: PLC0415  (optional, slow to import)
    except ImportError as exc:
        raise SympyError('SymPy is not installed: pip install "quorem[sympy]"') from exc
    return sympy


def to_sympy(term: Term) -> Any:
    """The SymPy expression equal to ``term`` at every point of its variables' bounds.

    Truncating and Euclidean divisions are lowered to floor ones first (proven rules);
    ``ceildiv(a, b)`` becomes ``ceiling(a/b)``. Raises
    :class:`SympyError` when SymPy is missing, or when the term written as a tree (as
    SymPy holds it) has more than :data:`MAX_TREE_NODES` nodes.
    """
    sp = _sympy()
    low = lower(term, Semantics.FLOOR, ceildiv=False)
    size = tree_size(low)
    if size > MAX_TREE_NODES:
        raise SympyError(
            f"{brief(term)}: {size} nodes with its shared subterms written out (SymPy keeps no "
            f"sharing), more than the {MAX_TREE_NODES} to_sympy builds"
        )
    values: dict[Term, Any] = {}
    try:
        _build(sp, low, values)
    except ZeroDivisionError:
        # SymPy knows no bounds: its arithmetic may fold a divisor that the bounds keep
        # from 0 (or a comparison's 0/1 value) to the number 0 and divide by it.
        raise SympyError(f"{brief(term)}: SymPy divides by zero while building it") from None
    if values[low].has(sp.zoo, sp.nan):
        raise SympyError(f"{brief(term)}: SymPy divides by zero while building it")
    return values[low]


def _build(sp: Any, low: Term, values: dict[Term, Any]) -> None:
    for t in postorder(low):
        op = t.op
        args = [values[a] for a in t.args]
        if op is Op.CONST:
            values[t] = sp.Integer(t.value)
        elif op is Op.VAR:
            name, lo, _ = t.arg
            assume = {"positive": True} if lo is not None and lo > 0 else {}
            if lo is not None and lo == 0:
                assume = {"nonnegative": True}
            values[t] = sp.Symbol(name, integer=True, **assume)
        elif op is Op.ADD:
            coefs, k = t.arg
            values[t] = sp.Add(*[c * a for c, a in zip(coefs, args, strict=True)], sp.Integer(k))
        elif op is Op.MUL:
            values[t] = sp.Mul(*args)
        elif op in (Op.FLOORDIV, Op.FLOORMOD, Op.CEILDIV):
            if args[1] == 0:  # SymPy folded the divisor (x < x, say): never defined
                raise SympyError(f"{brief(t)}: division by zero at every point")
            a, b = args
            # Unevaluated: SymPy 1.14 rewrites Mod(2*a, -6*a) to 2*a, wrong for every
            # a != 0 (Mod(10, -30) is -20). Numbers substituted later evaluate right.
            if a.is_Integer and b.is_Integer:  # numbers: no rewriting to fear
                values[t] = sp.Integer(BINARY_EVALUATORS[op](int(a), int(b)))
            elif op is Op.FLOORDIV:
                values[t] = sp.floor(sp.Mul(a, sp.Pow(b, -1)), evaluate=False)
            elif op is Op.CEILDIV:
                values[t] = sp.ceiling(sp.Mul(a, sp.Pow(b, -1)), evaluate=False)
            else:
                values[t] = sp.Mod(a, b, evaluate=False)
        elif op is Op.MAX:  # unevaluated, like the comparisons (see _indicator)
            values[t] = _lattice(sp.Max, *args)
        elif op is Op.MIN:
            values[t] = _lattice(sp.Min, *args)
        elif op is Op.AND or op is Op.OR:
            # min/max of the operands' truth values, each min(1, |operand|).
            a, b = (_lattice(sp.Min, sp.Integer(1), _magnitude(sp, x)) for x in args)
            values[t] = _lattice(sp.Min if op is Op.AND else sp.Max, a, b)
        else:
            values[t] = _indicator(sp, op, *args)


def _indicator(sp: Any, op: Op, a: Any, b: Any) -> Any:
    """The 0/1 value of the comparison ``a op b`` of integers, as a SymPy expression.

    Clamped differences, not ``Piecewise``: SymPy folds a ``Piecewise`` nested in a
    condition into one over every combination of the inner conditions (exponential in
    the nesting, and SymPy 1.14 raises ``KeyError`` on conditions it cannot attach to
    one symbol). Built unevaluated: evaluating ``Max``/``Min`` compares their arguments
    through SymPy's assumptions, which walks the whole tree below at every level
    (seconds at a nesting of four). Numbers put in later evaluate them.
    """
    one, zero = sp.Integer(1), sp.Integer(0)
    if op is Op.LT:  # b - a >= 1 exactly when a < b
        return _lattice(sp.Min, one, _lattice(sp.Max, zero, b - a))
    if op is Op.LE:
        return _lattice(sp.Min, one, _lattice(sp.Max, zero, b - a + 1))
    # Abs, unevaluated unless a number: it then holds a - b once (Max(a - b, b - a)
    # would write both out twice to SymPy, which keeps no sharing).
    d = a - b
    distance = sp.Abs(d) if d.is_Integer else sp.Abs(d, evaluate=False)
    if op is Op.NE:
        return _lattice(sp.Min, one, distance)
    return 1 - _lattice(sp.Min, one, distance)


def _magnitude(sp: Any, a: Any) -> Any:
    """``|a|``, unevaluated unless a number (see :func:`_indicator`)."""
    return sp.Abs(a) if a.is_Integer else sp.Abs(a, evaluate=False)


def _lattice(cls: Any, a: Any, b: Any) -> Any:
    """``cls(a, b)`` (SymPy's ``Max`` or ``Min``): a number if both are, else unevaluated."""
    if a.is_Integer and b.is_Integer:
        return cls(a, b)
    return cls(a, b, evaluate=False)


def from_sympy(
    expr: Any, bounds: Mapping[str, tuple[int | None, int | None]] | None = None
) -> Term:
    """The quorem term of a SymPy integer expression, its symbols bounded by ``bounds``.

    Understands integers, symbols declared integer, ``+``, ``*``, powers by a
    non-negative integer, ``floor(a/b)`` and ``ceiling(a/b)`` of integer ``a``, ``b``,
    ``Mod``, ``Abs``, ``Max``, ``Min`` and ``Piecewise`` over comparisons (with ``&``, ``|``,
    ``~``) whose values are integer expressions. Anything else (a non-integer symbol or
    constant, a real function) raises :class:`SympyError` naming the sub-expression.
    """
    reader = _Reader(_sympy(), dict(bounds or {}))
    try:
        return reader.read(expr)
    except RecursionError:
        raise SympyError("expression nested too deeply to read") from None


class _Reader:
    """SymPy to quorem, memoised on SymPy's (hash-consed) sub-expressions."""

    def __init__(self, sp: Any, box: dict[str, tuple[int | None, int | None]]) -> None:
        self.sp = sp
        self.box = box
        self.memo: dict[Any, Term] = {}

    def read(self, e: Any) -> Term:
        got = self.memo.get(e)
        if got is None:
            got = self.memo[e] = self._read(e)
        return got

    def _read(self, e: Any) -> Term:
        sp = self.sp
        if isinstance(e, sp.Integer):
            return const(int(e))
        if isinstance(e, sp.Symbol):
            if e.is_integer is not True:
                raise SympyError(
                    f"symbol {e} is not declared integer (Symbol({str(e)!r}, integer=True))"
                )
            return var(e.name, *self.box.get(e.name, (None, None)))
        if isinstance(e, sp.Add):
            total = const(0)
            for a in e.args:
                total = total + self.read(a)
            return total
        if isinstance(e, sp.Mul):
            return product([self.read(a) for a in e.args])
        if isinstance(e, sp.Pow):
            n = e.exp
            if not (isinstance(n, sp.Integer) and 0 <= int(n) <= _MAX_POWER):
                raise SympyError(f"{e}: only powers by an integer in 0..{_MAX_POWER} are integer")
            return product([self.read(e.base)] * int(n)) if int(n) else const(1)
        if isinstance(e, sp.floor | sp.ceiling):
            num, den = (self.read(x) for x in sp.fraction(sp.together(e.args[0])))
            if den.is_const and den.value == 0:
                raise SympyError(f"{e}: division by zero")
            if isinstance(e, sp.floor):
                return div(num, den, Semantics.FLOOR)
            return ceildiv(num, den)
        if isinstance(e, sp.Mod):
            return mod(self.read(e.args[0]), self.read(e.args[1]), Semantics.FLOOR)
        if isinstance(e, sp.Abs):
            x = self.read(e.args[0])
            return maximum(x, -x)
        if isinstance(e, sp.Max | sp.Min):
            kids = [self.read(a) for a in e.args]
            out = kids[0]
            for k in kids[1:]:
                out = maximum(out, k) if isinstance(e, sp.Max) else minimum(out, k)
            return out
        if isinstance(e, sp.Piecewise):
            return self.piecewise(e)
        raise SympyError(
            f"{e} ({type(e).__name__}) is not an integer index expression quorem reads"
        )

    def piecewise(self, e: Any) -> Term:
        """``sum(value_i * [cond_i and no earlier cond])``, conditions read as 0/1 terms."""
        total = const(0)
        none_before = const(1)
        for value, cond in e.args:
            holds = self.condition(cond)
            total = total + product([self.read(value), holds, none_before])
            none_before = product([none_before, 1 - holds])
        if not (none_before.is_const and none_before.value == 0):
            raise SympyError(f"{e}: a Piecewise needs a last condition True (a value everywhere)")
        return total

    def condition(self, c: Any) -> Term:
        """A SymPy condition as a 0/1 term."""
        sp = self.sp
        if c == sp.true:
            return const(1)
        if c == sp.false:
            return const(0)
        if isinstance(c, sp.And):
            return product([self.condition(a) for a in c.args])
        if isinstance(c, sp.Or):
            out = const(0)
            for a in c.args:
                out = maximum(out, self.condition(a))
            return out
        if isinstance(c, sp.Not):
            return 1 - self.condition(c.args[0])
        if isinstance(c, sp.ITE):  # if a then b else c
            a, b, otherwise = (self.condition(x) for x in c.args)
            return product([a, b]) + product([1 - a, otherwise])
        relations = {
            sp.StrictLessThan: Op.LT,
            sp.LessThan: Op.LE,
            sp.StrictGreaterThan: Op.LT,
            sp.GreaterThan: Op.LE,
            sp.Equality: Op.EQ,
            sp.Unequality: Op.NE,
        }
        op = relations.get(type(c))
        if op is None:
            raise SympyError(f"{c} ({type(c).__name__}) is not a comparison quorem reads")
        # SymPy may scale a relation by a rational (x <= 10*y as x/10 <= y): compare the
        # numerator of lhs - rhs with 0, the sign of the denominator deciding the side.
        num, den = sp.fraction(sp.together(c.lhs - c.rhs))
        if not (isinstance(den, sp.Integer) and den != 0):
            raise SympyError(f"{c}: not a comparison of integer expressions")
        diff = self.read(num)
        flip = isinstance(c, sp.StrictGreaterThan | sp.GreaterThan) != (den < 0)
        left, right = (const(0), diff) if flip else (diff, const(0))
        return compare(op, left, right)
