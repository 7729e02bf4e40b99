"""Concrete meaning of rule expressions: guards, computed constants and rewrite templates.

This is one of the two interpreters of the rule language (the other is the prover's Z3
encoding). Value-range bounds may be unbounded; the guard then takes the value it has
for all sufficiently large finite bounds (its limit), which the prover's statement for
every finite bound covers. Where that limit is not determined (``inf - inf``), or an
operation has no value (division by zero), :class:`Undetermined` is raised and the rule
does not fire.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Union

from .arith import (
    ceildiv,
    eucliddiv,
    euclidmod,
    floordiv,
    floormod,
    truncdiv,
    truncmod,
)
from .errors import TermError
from .monomial import monomial_divides, monomial_quotient
from .ops import DIVISION_FUNCTIONS, Op, Semantics
from .overflow import fits_int64
from .rule import (
    TERM_FUNCS,
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    Unary,
    sequence_names,
)
from .term import (
    Term,
    compare,
    const,
    div,
    linear,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mod,
    mul,
)
from .term import ceildiv as ceildiv_term

__all__ = ["Binding", "Env", "Undetermined", "evaluate_expr", "evaluate_to_term"]


class Undetermined(Exception):  # noqa: N818  (control flow, not an error)
    """An expression has no determined value here; the rule must not fire."""


class _Inf:
    """Plus or minus infinity, for unbounded value ranges."""

    __slots__ = ("sign",)

    def __init__(self, sign: int) -> None:
        self.sign = sign

    def __repr__(self) -> str:
        return "inf" if self.sign > 0 else "-inf"


POS_INF: Final = _Inf(1)
NEG_INF: Final = _Inf(-1)
Ext = Union[int, _Inf]  # noqa: UP007
Binding = Union[Term, int, list[Term], list[int]]  # noqa: UP007
Env = Mapping[str, Binding]
Value = Union[int, _Inf, bool, Term]  # noqa: UP007


def _key(v: Ext) -> tuple[int, int]:
    if isinstance(v, _Inf):
        return (v.sign, 0)
    return (0, v)


def _sign(v: Ext) -> int:
    if isinstance(v, _Inf):
        return v.sign
    return (v > 0) - (v < 0)


def _add(a: Ext, b: Ext) -> Ext:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, _Inf) and isinstance(b, _Inf) and a.sign != b.sign:
        raise Undetermined
    return a if isinstance(a, _Inf) else b


def _neg(a: Ext) -> Ext:
    if isinstance(a, int):
        return -a
    return NEG_INF if a.sign > 0 else POS_INF


def _mul(a: Ext, b: Ext) -> Ext:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    s = _sign(a) * _sign(b)
    return 0 if s == 0 else (POS_INF if s > 0 else NEG_INF)


def _ints(*vals: Ext) -> list[int]:
    out = []
    for v in vals:
        if isinstance(v, _Inf):
            raise Undetermined
        out.append(v)
    return out


def _division(fn: Callable[[int, int], int]) -> Callable[[Ext, Ext], Ext]:
    def apply(a: Ext, b: Ext) -> Ext:
        x, y = _ints(a, b)
        if y == 0:
            raise Undetermined
        return fn(x, y)

    return apply


_DIV: Final = {
    "floordiv": _division(floordiv),
    "floormod": _division(floormod),
    "truncdiv": _division(truncdiv),
    "truncmod": _division(truncmod),
    "eucliddiv": _division(eucliddiv),
    "euclidmod": _division(euclidmod),
    "ceildiv": _division(ceildiv),
}
_CMP_OP: Final = {"<": Op.LT, "<=": Op.LE, "==": Op.EQ, "!=": Op.NE}


def _compare(op: str, a: Ext, b: Ext) -> bool:
    ka, kb = _key(a), _key(b)
    if isinstance(a, _Inf) and isinstance(b, _Inf) and a.sign == b.sign:
        raise Undetermined  # two unbounded sides: their order has no limit
    if op == "<":
        return ka < kb
    if op == "<=":
        return ka <= kb
    if op == ">":
        return ka > kb
    if op == ">=":
        return ka >= kb
    if op == "==":
        return ka == kb
    return ka != kb


def _to_term(v: Value) -> Term:
    if isinstance(v, Term):
        return v
    if isinstance(v, bool | _Inf):
        raise Undetermined
    return const(v)


class _Evaluator:
    def __init__(self, env: Env, semantics: Semantics | None) -> None:
        self.env = env
        self.semantics = semantics
        self.index: int | None = None  # the current addend inside an aggregate

    def name(self, e: Name) -> Value:
        v = self.env[e.name]
        if e.kind in (NameKind.SEQ_TERM, NameKind.SEQ_CONST):
            assert isinstance(v, list) and self.index is not None
            return v[self.index]
        assert not isinstance(v, list)
        return v

    def seq_length(self, e: Expr) -> int:
        for n in sequence_names(e):
            v = self.env[n]
            assert isinstance(v, list)
            return len(v)
        return 0

    def ev(self, e: Expr) -> Value:
        if isinstance(e, Lit):
            return e.value
        if isinstance(e, Name):
            return self.name(e)
        if isinstance(e, Unary):
            v = self.ev(e.operand)
            if e.op == "not":
                return not v
            if isinstance(v, Term):
                return linear([(v, -1)])
            assert not isinstance(v, bool)
            return _neg(v)
        if isinstance(e, Binary):
            return self.binary(e)
        return self.call(e)

    def binary(self, e: Binary) -> Value:
        op = e.op
        if op in ("and", "or"):
            left = self.ev(e.left)
            if isinstance(left, Term):  # the term ``a and b`` of a rewrite (both terms)
                right = _to_term(self.ev(e.right))
                return (logical_and if op == "and" else logical_or)(left, right)
            if op == "and":
                return bool(left) and bool(self.ev(e.right))
            return bool(left) or bool(self.ev(e.right))
        a = self.ev(e.left)
        b = self.ev(e.right)
        if isinstance(a, Term) or isinstance(b, Term):
            return self.term_binary(op, _to_term(a), _to_term(b))
        assert not isinstance(a, bool) and not isinstance(b, bool)
        if op == "+":
            return _add(a, b)
        if op == "-":
            return _add(a, _neg(b))
        if op == "*":
            return _mul(a, b)
        if op in {"//", "%"}:
            return self.const_division(op, a, b)
        return _compare(op, a, b)

    def const_division(self, op: str, a: Ext, b: Ext) -> Ext:
        sem = (self.semantics or Semantics.FLOOR).value
        if op == "//":
            # An unbounded numerator over a constant stays unbounded, its sign set by b's
            # (floor and Euclidean division alike; truncation's limit is left undetermined).
            if sem != "trunc" and isinstance(a, _Inf) and isinstance(b, int) and b != 0:
                return a if b > 0 else _neg(a)
            return _DIV[f"{sem}div"](a, b)
        return _DIV[f"{sem}mod"](a, b)

    def term_binary(self, op: str, a: Term, b: Term) -> Term:
        try:
            if op == "+":
                return linear([(a, 1), (b, 1)])
            if op == "-":
                return linear([(a, 1), (b, -1)])
            if op == "*":
                return mul(a, b)
            sem = self.semantics or Semantics.FLOOR
            if op == "//":
                return div(a, b, sem)
            if op == "%":
                return mod(a, b, sem)
            if op == ">":
                return compare(Op.LT, b, a)
            if op == ">=":
                return compare(Op.LE, b, a)
            return compare(_CMP_OP[op], a, b)
        except TermError:
            raise Undetermined from None

    def call(self, e: Call) -> Value:
        f = e.func
        if f in ("sum", "all", "any"):
            return self.aggregate(f, e.args[0])
        if f == "fits_int64":
            return fits_int64(e.args[0], self.env, self.semantics)
        if f in ("vmin", "vmax"):
            t = self.ev(e.args[0])
            assert isinstance(t, Term)
            bound = t.vmin if f == "vmin" else t.vmax
            if bound is None:
                return NEG_INF if f == "vmin" else POS_INF
            return bound
        args = self.expand(e.args)
        if f in TERM_FUNCS:
            return self.monomial_call(f, _to_term(args[0]), _to_term(args[1]))
        if any(isinstance(a, Term) for a in args):
            return self.term_call(f, [_to_term(a) for a in args])
        nums: list[Ext] = [a for a in args if not isinstance(a, bool | Term)]
        if f == "abs":
            v = nums[0]
            return abs(v) if isinstance(v, int) else POS_INF
        if f == "min":
            return min(nums, key=_key)
        if f == "max":
            return max(nums, key=_key)
        if f == "gcd":
            return math.gcd(*_ints(*nums))
        if f == "divides":
            d, n = _ints(*nums)
            return n == 0 if d == 0 else n % d == 0
        return _DIV[f](nums[0], nums[1])

    def monomial_call(self, f: str, a: Term, b: Term) -> Value:
        """``tdivides(u, t)`` or ``tquotient(t, u)`` (see :mod:`quorem.monomial`)."""
        if f == "tdivides":
            return monomial_divides(a, b)
        q = monomial_quotient(a, b)
        if q is None:
            raise Undetermined  # no quotient: the rule does not fire
        return q

    def term_call(self, f: str, args: list[Term]) -> Term:
        try:
            if f in ("max", "min"):
                fold = maximum if f == "max" else minimum
                acc = args[0]
                for a in args[1:]:
                    acc = fold(acc, a)
                return acc
            if f == "ceildiv":
                return ceildiv_term(args[0], args[1])
            is_div, sem = DIVISION_FUNCTIONS[f]
            return (div if is_div else mod)(args[0], args[1], sem)
        except TermError:
            raise Undetermined from None

    def expand(self, args: Sequence[Expr]) -> list[Value]:
        """Evaluate call arguments; one that ranges over a sequence contributes every element."""
        out: list[Value] = []
        for a in args:
            if self.index is None and sequence_names(a):
                out.extend(self.each(a))
            else:
                out.append(self.ev(a))
        return out

    def each(self, body: Expr) -> list[Value]:
        n = self.seq_length(body)
        values = []
        for i in range(n):
            self.index = i
            try:
                values.append(self.ev(body))
            finally:
                self.index = None
        return values

    def aggregate(self, f: str, body: Expr) -> Value:
        values = self.each(body)
        if f == "all":
            return all(values)
        if f == "any":
            return any(values)
        if any(isinstance(v, Term) for v in values):
            return linear((_to_term(v), 1) for v in values)
        total: Ext = 0
        for v in values:
            assert not isinstance(v, bool | Term)
            total = _add(total, v)
        return total


def evaluate_expr(e: Expr, env: Env, semantics: Semantics | None) -> Value:
    """Evaluate a rule expression with pattern bindings ``env``.

    Returns an int (or an infinity, from an unbounded ``vmin``/``vmax``), a bool for
    conditions, or a Term for rewrite templates. Raises Undetermined when the value is
    not determined (see the module docstring).
    """
    return _Evaluator(env, semantics).ev(e)


def evaluate_to_term(e: Expr, env: Env, semantics: Semantics | None) -> Term:
    """Evaluate a rewrite template to a term (an integer result becomes a constant)."""
    return _to_term(evaluate_expr(e, env, semantics))
