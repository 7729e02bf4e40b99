"""Code for a term: one C, CUDA or Python function ``index`` of the term's variables.

The term is lowered first to the target's division (:mod:`quorem.engine.emit.lower`):
truncating for C and CUDA, floor for Python. C and CUDA code computes every node at the
width :func:`~quorem.engine.emit.widths.node_widths` chose (``int32_t`` where every
value fits, else ``int64_t``) and casts where an operand is narrower than its user;
parameters and the result are ``int64_t``. A division or remainder by ``2**k`` of a
non-negative numerator is a shift or a mask (exact there: both agree with truncation on
non-negative values, and no negative value is shifted). A subterm used more than once
(terms are hash-consed, so sharing is structural) is computed once into a local.

The function's arguments must lie in the bounds the term's variables declare: the
simplification and the widths rely on them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

from quorem.engine.emit.lower import lower
from quorem.engine.emit.widths import Width, node_widths
from quorem.engine.errors import QuoremError
from quorem.engine.ops import Op, Semantics
from quorem.engine.term import Term
from quorem.engine.walk import free_names, postorder

__all__ = ["LANGUAGES", "EmitError", "emit"]

LANGUAGES: Final = ("c", "cuda", "python")
_COMPARE: Final = {Op.LT: "<", Op.LE: "<=", Op.EQ: "==", Op.NE: "!="}
_IDENT_RESERVED: Final = frozenset(
    {"index", "int", "long", "return", "if", "else", "for", "while", "def", "lambda", "and",
     "or", "not", "in", "is", "None", "True", "False", "class", "import", "from", "max",
     "min", "int32_t", "int64_t", "char", "short", "signed", "unsigned", "const", "static"}
)  # fmt: skip


class EmitError(QuoremError):
    """The term cannot be emitted as asked (a variable that is not a parameter...)."""


def _temporaries(order: list[Term]) -> set[Term]:
    """Nodes to compute once into a local: used twice, or an operand of max/min."""
    uses: Counter[Term] = Counter()
    for t in order:
        for a in t.args:
            uses[a] += 2 if t.op in (Op.MAX, Op.MIN) else 1
    return {t for t in order if t.args and uses[t] > 1}


def _check_params(term: Term, params: Sequence[str]) -> None:
    missing = sorted(free_names(term) - set(params))
    if missing:
        raise EmitError(f"variables {', '.join(missing)} are not parameters of index()")
    dup = sorted({p for p in params if params.count(p) > 1})
    if dup:
        raise EmitError(f"parameter given twice: {', '.join(dup)}")
    for p in params:
        if not p.isidentifier() or p in _IDENT_RESERVED or p.startswith("t_"):
            raise EmitError(f"{p!r} cannot be a parameter name in the emitted code")


def _sum_text(t: Term, operand: Callable[[Term], str], literal: Callable[[int], str]) -> str:
    """A sum ``c1*t1 + c2*t2 + k`` as ``(t1 * c1 - t2 * |c2| + k)``."""
    coefs, k = t.arg
    parts: list[str] = []
    for a, c in zip(t.args, coefs, strict=True):
        text = operand(a)
        term = text if abs(c) == 1 else f"{text} * {literal(abs(c))}"
        sign = ("- " if c < 0 else "+ ") if parts else ("-" if c < 0 else "")
        parts.append(sign + term)
    if k:
        parts.append(f"{'+' if k > 0 else '-'} {literal(abs(k))}")
    return "(" + " ".join(parts) + ")"


class _C:
    """C and CUDA expressions at chosen widths."""

    def __init__(self, widths: dict[Term, Width], temps: dict[Term, str]) -> None:
        self.widths = widths
        self.temps = temps

    @staticmethod
    def literal(v: int, w: Width) -> str:
        if w is Width.I32:
            return "(-2147483647 - 1)" if v == -(2**31) else str(v)
        if v == -(2**63):
            return "(-INT64_C(9223372036854775807) - 1)"
        return f"INT64_C({v})"

    def operand(self, t: Term, want: Width) -> str:
        """``t`` as a value of type ``want`` (never narrower than ``t``'s width)."""
        if t.op is Op.CONST:
            return self.literal(t.value, want)
        if t.op is Op.VAR:
            return t.arg[0] if want is Width.I64 else f"(int32_t){t.arg[0]}"
        text = self.temps.get(t) or self.node(t)
        return text if self.widths[t] is want else f"({want.c_type}){text}"

    def node(self, t: Term) -> str:
        w = self.widths[t]
        op = t.op
        if op is Op.ADD:
            return _sum_text(t, lambda a: self.operand(a, w), lambda v: self.literal(v, w))
        if op is Op.MUL:
            return "(" + " * ".join(self.operand(a, w) for a in t.args) + ")"
        if op in (Op.TRUNCDIV, Op.TRUNCMOD):
            a, b = t.args
            x = self.operand(a, w)
            if b.is_const and b.value > 1 and b.value & (b.value - 1) == 0 and (a.vmin or 0) >= 0:
                if op is Op.TRUNCDIV:
                    return f"({x} >> {b.value.bit_length() - 1})"
                return f"({x} & {self.literal(b.value - 1, w)})"
            return f"({x} {'/' if op is Op.TRUNCDIV else '%'} {self.operand(b, w)})"
        if op in (Op.MAX, Op.MIN):
            left, right = (self.operand(x, w) for x in t.args)
            pick = ">" if op is Op.MAX else "<"
            return f"({left} {pick} {right} ? {left} : {right})"
        if op in _COMPARE:
            wa = max(self.widths[x] for x in t.args)
            left, right = (self.operand(x, wa) for x in t.args)
            return f"({w.c_type})({left} {_COMPARE[op]} {right})"
        raise EmitError(f"{op.name.lower()} has no C form here (was the term lowered?)")


class _Python:
    """Python expressions (unbounded integers, floor division)."""

    def __init__(self, temps: dict[Term, str]) -> None:
        self.temps = temps

    def operand(self, t: Term) -> str:
        if t.op is Op.CONST:
            return str(t.value) if t.value >= 0 else f"({t.value})"
        if t.op is Op.VAR:
            return str(t.arg[0])
        return self.temps.get(t) or self.node(t)

    def node(self, t: Term) -> str:
        op = t.op
        if op is Op.ADD:
            return _sum_text(t, self.operand, str)
        if op is Op.MUL:
            return "(" + " * ".join(self.operand(a) for a in t.args) + ")"
        if op in (Op.FLOORDIV, Op.FLOORMOD):
            left, right = (self.operand(x) for x in t.args)
            return f"({left} {'//' if op is Op.FLOORDIV else '%'} {right})"
        if op in (Op.MAX, Op.MIN):
            left, right = (self.operand(x) for x in t.args)
            return f"{'max' if op is Op.MAX else 'min'}({left}, {right})"
        if op in _COMPARE:
            left, right = (self.operand(x) for x in t.args)
            return f"int({left} {_COMPARE[op]} {right})"
        raise EmitError(f"{op.name.lower()} has no Python form here (was the term lowered?)")


def emit(term: Term, params: Sequence[str] | None = None, lang: str = "c") -> str:
    """Source code of a function ``index(params...)`` returning ``term``'s value.

    ``params`` name the function's parameters in order (default: the term's variables,
    sorted); every variable of the term must be one. ``lang`` is ``c``, ``cuda`` or
    ``python``. For C and CUDA the function takes and returns ``int64_t`` and needs only
    ``<stdint.h>``. At every point of the variables' bounds the function returns the
    term's value. Raises :class:`EmitError` (bad parameters or language),
    :class:`~quorem.engine.emit.widths.WidthError` (a value needing more than 64 bits,
    C and CUDA only) or :class:`~quorem.engine.emit.lower.LoweringError`.
    """
    if lang not in LANGUAGES:
        raise EmitError(f"unknown language {lang!r} (use {', '.join(LANGUAGES)})")
    names = list(params) if params is not None else sorted(free_names(term))
    _check_params(term, names)
    target = Semantics.FLOOR if lang == "python" else Semantics.TRUNC
    low = lower(term, target)
    order = postorder(low)
    shared = _temporaries(order)
    temps = {t: f"t_{i}" for i, t in enumerate(t for t in order if t in shared)}
    if lang == "python":
        return _python_function(low, order, temps, names)
    return _c_function(low, order, temps, names, cuda=lang == "cuda")


def _c_function(
    term: Term, order: list[Term], temps: dict[Term, str], names: list[str], *, cuda: bool
) -> str:
    widths = node_widths(term)
    c = _C(widths, {})
    lines = ["#include <stdint.h>", ""]
    head = "__device__ int64_t" if cuda else "int64_t"
    lines.append(f"{head} index({', '.join(f'int64_t {n}' for n in names)}) {{")
    used = free_names(term)
    lines += [f"    (void){n};" for n in names if n not in used]
    for t in order:
        if t in temps:
            lines.append(f"    const {widths[t].c_type} {temps[t]} = {c.node(t)};")
            c.temps[t] = temps[t]
    lines.append(f"    return {c.operand(term, Width.I64)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _python_function(
    term: Term, order: list[Term], temps: dict[Term, str], names: list[str]
) -> str:
    py = _Python({})
    lines = [f"def index({', '.join(f'{n}: int' for n in names)}) -> int:"]
    for t in order:
        if t in temps:
            lines.append(f"    {temps[t]} = {py.node(t)}")
            py.temps[t] = temps[t]
    lines.append(f"    return {py.operand(term)}")
    return "\n".join(lines) + "\n"
