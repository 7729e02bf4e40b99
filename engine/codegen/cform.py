"""The C expressions of emitted code, each with its C type and its range of values.

Width selection (:mod:`quorem.codegen.widths`) and printing
(:mod:`quorem.codegen.code`) share these expressions. Each builder below computes
the range of the value its operator produces from its operands' ranges and refuses
(:class:`DoesNotFit`) a value outside its C type, so an expression that was built is one
whose every step, as printed — each literal, cast, negation, product and partial sum in
its order and grouping, each quotient (C computes one for ``%`` too), shift and mask —
is defined behaviour in C. A division by a value that may be 0 is accepted: where the
divisor is 0 the term has no value either (it is the caller's contract to avoid those
points); a divisor that is 0 at every point is refused (:class:`AlwaysZeroDivisor`).
"""

from __future__ import annotations

import dataclasses
from typing import Final

__all__ = [
    "INT",
    "INT32",
    "INT64",
    "AlwaysZeroDivisor",
    "CExpr",
    "DoesNotFit",
    "arith",
    "cast",
    "compare",
    "fits",
    "leaf",
    "literal",
    "logic",
    "mask",
    "negate",
    "render",
    "select",
    "shift_right",
    "with_range",
]

INT: Final = "int"  # the type of a C comparison (its value is 0 or 1)
INT32: Final = "int32_t"
INT64: Final = "int64_t"
_LIMITS: Final = {
    INT: (-(2**31), 2**31 - 1),
    INT32: (-(2**31), 2**31 - 1),
    INT64: (-(2**63), 2**63 - 1),
}
_BITS: Final = {INT: 32, INT32: 32, INT64: 64}
_ARITH_PREC: Final = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12}
_OTHER_PREC: Final = {
    ">>": 11,
    "<": 10,
    "<=": 10,
    ">": 10,
    "==": 9,
    "!=": 9,
    "&": 8,
    "&&": 5,
    "||": 4,
    "?:": 3,
}
_UNARY: Final = 15
_PRIMARY: Final = 16


@dataclasses.dataclass(frozen=True, eq=False)
class CExpr:
    """One C operation: ``op`` applied to ``args``, of C type ``ctype``, in ``[lo, hi]``.

    ``op`` is ``"leaf"`` (``text`` is the source: a name, a literal, a local), ``"cast"``,
    ``"neg"``, ``"?:"`` (``text`` is the comparison picking the left operand), or a binary
    operator token (``+ - * / % >> & < <= == !=``).
    """

    op: str
    args: tuple[CExpr, ...]
    ctype: str
    lo: int
    hi: int
    text: str = ""


class DoesNotFit(Exception):  # noqa: N818  (a signal between builders and width choice)
    """A value of ``expr`` (``what`` says which, if not its own) leaves its C type."""

    def __init__(self, expr: CExpr, what: str = "") -> None:
        super().__init__(render(expr))
        self.expr = expr
        self.what = what


class AlwaysZeroDivisor(Exception):  # noqa: N818
    """A division or remainder whose divisor is 0 at every point."""


def fits(lo: int, hi: int, ctype: str) -> bool:
    """True if every value of ``[lo, hi]`` is representable in ``ctype``."""
    tlo, thi = _LIMITS[ctype]
    return tlo <= lo and hi <= thi


def _checked(e: CExpr) -> CExpr:
    if not fits(e.lo, e.hi, e.ctype):
        raise DoesNotFit(e)
    return e


def leaf(text: str, ctype: str, lo: int, hi: int) -> CExpr:
    """A name (parameter, local) of type ``ctype`` whose values lie in ``[lo, hi]``."""
    return _checked(CExpr("leaf", (), ctype, lo, hi, text))


def literal(v: int, ctype: str) -> CExpr:
    """The literal ``v`` written so that its type is ``ctype`` (int32_t or int64_t).

    A negative value is a negated positive literal: C has no negative literals, and
    ``INT64_C`` takes only an unsuffixed integer constant. The least value of the type,
    whose magnitude the type cannot hold, is written ``(-MAX - 1)``.
    """
    least = _LIMITS[ctype][0]
    if v == least:
        text = "(-INT64_MAX - 1)" if ctype == INT64 else "(-2147483647 - 1)"
    elif ctype == INT64:
        text = f"INT64_C({v})" if v >= 0 else f"-INT64_C({-v})"
    else:
        text = str(v)
    return _checked(CExpr("leaf", (), ctype, v, v, text))


def with_range(e: CExpr, lo: int, hi: int) -> CExpr:
    """``e``, known to lie in ``[lo, hi]`` too; the range is only ever narrowed.

    For a range found by an analysis that sees more than ``e``'s own operators.
    """
    return dataclasses.replace(e, lo=max(e.lo, lo), hi=min(e.hi, hi))


def cast(e: CExpr, ctype: str) -> CExpr:
    """``e`` converted to ``ctype``.

    A narrowing conversion only where every value fits: out of range, it is
    implementation-defined.
    """
    if e.op == "cast":
        # The inner conversion was exact (checked), so converting its operand directly
        # gives the same value: (int64_t)(a < b), not (int64_t)(int32_t)(a < b).
        e = with_range(e.args[0], e.lo, e.hi)
    if e.ctype == ctype:
        return e
    return _checked(CExpr("cast", (e,), ctype, e.lo, e.hi))


def negate(e: CExpr) -> CExpr:
    """``-e``."""
    return _checked(CExpr("neg", (e,), e.ctype, -e.hi, -e.lo))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _nonzero_parts(lo: int, hi: int) -> list[tuple[int, int]]:
    parts = [(lo, min(hi, -1)), (max(lo, 1), hi)]
    return [(p, q) for p, q in parts if p <= q]


def _quotient_range(a: CExpr, b: CExpr) -> tuple[int, int]:
    # Truncating division is monotone in the numerator for a divisor of fixed sign, and
    # in the divisor for a numerator of fixed value: the extremes are at corners.
    parts = _nonzero_parts(b.lo, b.hi)
    if not parts:
        raise AlwaysZeroDivisor
    qs = [_trunc_div(x, y) for p, q in parts for x in (a.lo, a.hi) for y in (p, q)]
    return min(qs), max(qs)


def arith(op: str, a: CExpr, b: CExpr) -> CExpr:
    """``a op b`` for ``op`` in ``+ - * / %``, both operands of one type.

    ``/`` and ``%`` are C's, truncating.
    """
    assert a.ctype == b.ctype, (a.ctype, b.ctype)
    if op == "+":
        lo, hi = a.lo + b.lo, a.hi + b.hi
    elif op == "-":
        lo, hi = a.lo - b.hi, a.hi - b.lo
    elif op == "*":
        corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        lo, hi = min(corners), max(corners)
    elif op == "/":
        lo, hi = _quotient_range(a, b)
    elif op == "%":
        qlo, qhi = _quotient_range(a, b)
        if not fits(qlo, qhi, a.ctype):
            raise DoesNotFit(CExpr("/", (a, b), a.ctype, qlo, qhi), "the quotient C computes")
        # |a % b| < |b| and |a % b| <= |a|, with the sign of a.
        m = max(max(abs(p), abs(q)) for p, q in _nonzero_parts(b.lo, b.hi)) - 1
        lo = 0 if a.lo >= 0 else max(a.lo, -m)
        hi = 0 if a.hi <= 0 else min(a.hi, m)
    else:
        raise ValueError(f"not an arithmetic operator: {op}")
    return _checked(CExpr(op, (a, b), a.ctype, lo, hi))


def shift_right(a: CExpr, k: int) -> CExpr:
    """``a >> k`` for a non-negative ``a`` (where it is ``a / 2**k``)."""
    assert a.lo >= 0 and 0 < k < _BITS[a.ctype], (a.lo, k)
    count = CExpr("leaf", (), INT, k, k, str(k))
    return _checked(CExpr(">>", (a, count), a.ctype, a.lo >> k, a.hi >> k))


def mask(a: CExpr, m: CExpr) -> CExpr:
    """``a & m`` for a non-negative ``a`` and a mask ``m = 2**k - 1`` (``a % 2**k``)."""
    assert a.lo >= 0 and m.lo == m.hi >= 0, (a.lo, m.lo)
    return _checked(CExpr("&", (a, m), a.ctype, 0, min(a.hi, m.hi)))


def compare(op: str, a: CExpr, b: CExpr) -> CExpr:
    """``a op b`` for a comparison ``op``: an ``int``, 0 or 1."""
    assert a.ctype == b.ctype, (a.ctype, b.ctype)
    return CExpr(op, (a, b), INT, 0, 1)


def logic(op: str, a: CExpr, b: CExpr) -> CExpr:
    """``a && b`` or ``a || b``: an ``int``, 0 or 1 (an operand is true where non-zero)."""
    assert op in ("&&", "||"), op
    return CExpr(op, (a, b), INT, 0, 1)


def select(pick: str, a: CExpr, b: CExpr) -> CExpr:
    """``a pick b ? a : b``: the larger of ``a`` and ``b`` for ``>``, the smaller for ``<``."""
    assert a.ctype == b.ctype, (a.ctype, b.ctype)
    if pick == ">":
        lo, hi = max(a.lo, b.lo), max(a.hi, b.hi)
    else:
        lo, hi = min(a.lo, b.lo), min(a.hi, b.hi)
    return CExpr("?:", (a, b), a.ctype, lo, hi, pick)


def _prec(e: CExpr) -> int:
    if e.op == "leaf":
        return _UNARY if e.text.startswith("-") else _PRIMARY
    if e.op in ("cast", "neg"):
        return _UNARY
    return _ARITH_PREC.get(e.op) or _OTHER_PREC[e.op]


def _starts_with_minus(e: CExpr) -> bool:
    return e.op == "neg" or (e.op == "leaf" and e.text.startswith("-"))


Piece = str | tuple[CExpr, int]


def _pieces(e: CExpr) -> list[Piece]:
    """``e``'s text as strings and operands, each operand with the precedence it needs."""
    if e.op == "leaf":
        return [e.text]
    if e.op == "neg":
        # "--x" would be a decrement.
        (a,) = e.args
        return ["-", (a, _PRIMARY if _starts_with_minus(a) else _UNARY)]
    if e.op == "cast":
        return [f"({e.ctype})", (e.args[0], _UNARY)]
    a, b = e.args
    if e.op == "?:":
        return [(a, _UNARY), f" {e.text} ", (b, _UNARY), " ? ", (a, _UNARY), " : ", (b, _UNARY)]
    if e.op in _ARITH_PREC:
        p = _ARITH_PREC[e.op]
        return [(a, p), f" {e.op} ", (b, p + 1)]
    # Shifts, masks and comparisons take only unary operands: C's precedence there
    # surprises readers, and GCC's -Wparentheses warns.
    return [(a, _UNARY), f" {e.op} ", (b, _UNARY)]


def render(e: CExpr) -> str:
    """The C source text of ``e``, with the parentheses C's precedence needs.

    Iterative, so a sum of many thousand addends (a left-nested chain) is no deeper for
    Python than a single one.
    """
    out: list[str] = []
    stack: list[Piece] = [(e, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        x, need = item
        pieces = _pieces(x)
        if _prec(x) < need:
            pieces = ["(", *pieces, ")"]
        stack.extend(reversed(pieces))
    return "".join(out)
