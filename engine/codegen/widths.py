"""Index width selection (seed 002 §5): int32 where every value fits, else int64.

A node's code is the C expression :func:`node_expr` builds from its operands (see
:mod:`quorem.codegen.cform`), and the emitted code prints exactly that expression.
A node is ``int32_t`` when its expression at int32 (operands cast to int32) computes
only values representable there at every step as printed — each literal, cast,
negation, product and partial sum in the printed order and grouping, each quotient
(also the one C computes for ``%``), the sign correction of a lowered floor division,
shifts and masks — given its operands' ranges; else ``int64_t`` when the same holds at
int64; and never narrower than its operands, so no operand is narrowed. Otherwise the
node is a :class:`WidthError` naming it: code for it would overflow. A sum is written to
stay inside its type where it can: ``x - z*2`` becomes ``x + z*-2`` when ``z*2`` alone
overflows.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Final

from ..errors import QuoremError
from ..ops import Op
from ..printer import brief
from ..term import Term
from ..walk import nodes, postorder
from .cform import (
    INT64,
    AlwaysZeroDivisor,
    CExpr,
    DoesNotFit,
    arith,
    cast,
    compare,
    fits,
    leaf,
    literal,
    logic,
    mask,
    negate,
    render,
    select,
    shift_right,
    with_range,
)

__all__ = ["Operand", "Planned", "Width", "WidthError", "node_expr", "node_widths", "plan_widths"]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
# The divisions C has no operator for (the emitter lowers them to truncating ones).
_NOT_C: Final = {
    Op.FLOORDIV: "a floor division",
    Op.FLOORMOD: "a floor division",
    Op.EUCLIDDIV: "a Euclidean division",
    Op.EUCLIDMOD: "a Euclidean division",
    Op.CEILDIV: "a ceiling division",
}
_COMPARE: Final = {Op.LT: "<", Op.LE: "<=", Op.EQ: "==", Op.NE: "!="}
_EXPR_CHARS: Final = 100


class Width(enum.IntEnum):
    """An integer type of the emitted code, by its bit count."""

    I32 = 32
    I64 = 64

    @property
    def c_type(self) -> str:
        """The C type (``<stdint.h>``)."""
        return f"int{self.value}_t"


class WidthError(QuoremError):
    """A value of the term's code needs more than 64 bits, or a division has no value."""


@dataclasses.dataclass(frozen=True)
class Planned:
    """A node's width and the range of its value.

    The term's range, narrowed further where its code's operators show a tighter one.
    """

    width: Width
    lo: int
    hi: int


Operand = Callable[[Term, Width | None], CExpr]
"""An operand's expression converted to a width (``None``: at its own width)."""


def operand_at(plan: dict[Term, Planned], inline: Callable[[Term], CExpr]) -> Operand:
    """Operands as C expressions, cast to the width asked for.

    Literals, ``int64_t`` parameters, and any other node as ``inline`` gives it (its
    expression, a local or a placeholder), each with the range ``plan`` found for it.
    """

    def operand(a: Term, want: Width | None) -> CExpr:
        p = plan[a]
        ctype = (want or p.width).c_type
        if a.op is Op.CONST:
            return literal(a.value, ctype)
        if a.op is Op.VAR:
            return cast(leaf(a.name, INT64, p.lo, p.hi), ctype)
        return cast(with_range(inline(a), p.lo, p.hi), ctype)

    return operand


def _subtract(acc: CExpr, x: CExpr, m: int, ctype: str) -> CExpr:
    """``acc - x*m`` for ``m > 0``, or ``acc + x*-m`` where only ``x*-m`` fits.

    The int types hold one more negative value than positive ones.
    """
    if m == 1:
        return arith("-", acc, x)
    try:
        return arith("-", acc, arith("*", x, literal(m, ctype)))
    except DoesNotFit:
        return arith("+", acc, arith("*", x, literal(-m, ctype)))


def _sum_expr(t: Term, w: Width, operand: Operand) -> CExpr:
    ctype = w.c_type
    coefs, k = t.arg
    pairs = list(zip(t.args, coefs, strict=True))
    # Lead with a positive addend (or the constant): "y - x" rather than "-x + y", and
    # no negation that could itself overflow.
    first = next((i for i, (_, c) in enumerate(pairs) if c > 0), None)
    acc: CExpr | None = None
    if first is not None:
        pairs.insert(0, pairs.pop(first))
    elif k > 0:
        acc, k = literal(k, ctype), 0
    for a, c in pairs:
        x = operand(a, w)
        if acc is None:
            acc = x if c == 1 else negate(x) if c == -1 else arith("*", x, literal(c, ctype))
        elif c > 0:
            acc = arith("+", acc, x if c == 1 else arith("*", x, literal(c, ctype)))
        else:
            acc = _subtract(acc, x, -c, ctype)
    assert acc is not None  # a sum has at least one non-constant addend
    if k > 0:
        acc = arith("+", acc, literal(k, ctype))
    elif k < 0:
        try:
            acc = arith("-", acc, literal(-k, ctype))
        except DoesNotFit:  # -k is 2**63
            acc = arith("+", acc, literal(k, ctype))
    return acc


def node_expr(t: Term, w: Width, operand: Operand) -> CExpr:
    """The C expression computing the compound node ``t`` at width ``w``.

    Raises :class:`~quorem.codegen.cform.DoesNotFit` if a value it computes leaves
    ``w`` (or an operand does not fit ``w``), and
    :class:`~quorem.codegen.cform.AlwaysZeroDivisor`; ``ValueError`` for an operator
    C has no form for (floor division: lower the term first).
    """
    op = t.op
    if op is Op.ADD:
        return _sum_expr(t, w, operand)
    if op is Op.MUL:
        acc = operand(t.args[0], w)
        for a in t.args[1:]:
            acc = arith("*", acc, operand(a, w))
        return acc
    if op in (Op.TRUNCDIV, Op.TRUNCMOD):
        a, b = t.args
        x = operand(a, w)
        if b.is_const and b.value > 1 and b.value & (b.value - 1) == 0 and x.lo >= 0:
            # Exact on non-negative values, where shifting and masking agree with
            # truncation.
            k = b.value.bit_length() - 1
            if k < w.value:
                if op is Op.TRUNCDIV:
                    return shift_right(x, k)
                return mask(x, literal(b.value - 1, w.c_type))
        return arith("/" if op is Op.TRUNCDIV else "%", x, operand(b, w))
    if op in (Op.MAX, Op.MIN):
        left, right = (operand(a, w) for a in t.args)
        return select(">" if op is Op.MAX else "<", left, right)
    if op is Op.AND or op is Op.OR:
        left, right = (operand(a, None) for a in t.args)
        return cast(logic("&&" if op is Op.AND else "||", left, right), w.c_type)
    if op in _COMPARE:
        # Compared at the operands' width, whatever width holds the 0 or 1.
        left, right = (operand(a, None) for a in t.args)
        wide = INT64 if INT64 in (left.ctype, right.ctype) else left.ctype
        return cast(compare(_COMPARE[op], cast(left, wide), cast(right, wide)), w.c_type)
    raise ValueError(f"{op.name.lower()} has no C form (was the term lowered?)")


def _bound_text(v: int) -> str:
    if abs(v) <= 2**64:
        return str(v)
    n = abs(v).bit_length() - 1
    return f"-2**{n} or less" if v < 0 else f"2**{n} or more"


def _overflow_message(t: Term, exc: DoesNotFit) -> str:
    e = exc.expr
    text = render(e)
    if len(text) > _EXPR_CHARS:
        text = text[: _EXPR_CHARS - 3] + "..."
    what = f"{exc.what} {text}" if exc.what else text
    message = (
        f"{brief(t)} needs more than 64 bits: its code computes {what}, whose values range "
        f"over [{_bound_text(e.lo)}, {_bound_text(e.hi)}]"
    )
    unbounded = sorted(
        u.name for u in nodes(t) if u.op is Op.VAR and (u.vmin is None or u.vmax is None)
    )
    if unbounded:
        message += f" ({', '.join(unbounded)} unbounded)"
    return message


def _leaf_plan(t: Term) -> Planned:
    if t.op is Op.CONST:
        v = t.value
        if not fits(v, v, INT64):
            raise WidthError(f"the constant {brief(t)} needs more than 64 bits")
        return Planned(Width.I32 if fits(v, v, Width.I32.c_type) else Width.I64, v, v)
    # A parameter is an int64_t: unbounded, it still holds; what is computed from it is
    # then checked over all of int64.
    lo = _INT64_MIN if t.vmin is None else t.vmin
    hi = _INT64_MAX if t.vmax is None else t.vmax
    if not fits(lo, hi, INT64):
        raise WidthError(
            f"{t.name} ranges over [{_bound_text(lo)}, {_bound_text(hi)}], beyond int64: "
            "its parameter is an int64_t"
        )
    return Planned(Width.I32 if fits(lo, hi, Width.I32.c_type) else Width.I64, lo, hi)


def plan_widths(term: Term) -> dict[Term, Planned]:
    """The width and value range of every node of ``term`` (see the module docstring).

    ``term`` has C's truncating divisions only. Raises :class:`WidthError` naming the
    first node, bottom-up, whose code would compute a value outside int64 or whose
    divisor is 0 at every point.
    """
    plan: dict[Term, Planned] = {}

    def placeholder(a: Term) -> CExpr:
        p = plan[a]
        return leaf(f"({brief(a)})", p.width.c_type, p.lo, p.hi)

    operand = operand_at(plan, placeholder)
    for t in postorder(term):
        if not t.args:
            plan[t] = _leaf_plan(t)
            continue
        if t.op in _NOT_C:
            raise WidthError(f"{brief(t)} is {_NOT_C[t.op]}, which C lacks: lower it first")
        least = max(plan[a].width for a in t.args)
        failure: DoesNotFit | None = None
        for w in (x for x in Width if x >= least):
            try:
                e = node_expr(t, w, operand)
                break
            except DoesNotFit as exc:
                failure = exc
            except AlwaysZeroDivisor:
                raise WidthError(
                    f"{brief(t)} divides by zero at every point ({brief(t.args[1])} is "
                    "always 0): it has no value"
                ) from None
        else:
            assert failure is not None
            raise WidthError(_overflow_message(t, failure))
        lo = e.lo if t.vmin is None else max(e.lo, t.vmin)
        hi = e.hi if t.vmax is None else min(e.hi, t.vmax)
        plan[t] = Planned(w, lo, hi) if lo <= hi else Planned(w, e.lo, e.hi)
    return plan


def node_widths(term: Term) -> dict[Term, Width]:
    """The width of every node of ``term`` (see the module docstring).

    ``term`` has C's truncating divisions only (lower it first). Raises
    :class:`WidthError` naming the first node, bottom-up, whose code would compute a
    value outside int64, or whose divisor is 0 at every point.
    """
    return {t: p.width for t, p in plan_widths(term).items()}
