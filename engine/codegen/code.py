"""Code for a term: one C, CUDA or Python function of the term's variables.

The term is lowered first to the target's division (:mod:`quorem.codegen.lower`):
truncating for C and CUDA, floor for Python; Euclidean and ceiling divisions become
divisions of that semantics with proven corrections. C and CUDA code computes every node at the
width :func:`~quorem.codegen.widths.plan_widths` chose, printing the very
expressions that choice checked (:mod:`quorem.codegen.cform`), so no step of it
overflows; parameters and the result are ``int64_t``. A division or remainder by
``2**k`` of a non-negative numerator is a shift or a mask (exact there: both agree with
truncation on non-negative values, and no negative value is shifted). A subterm used
more than once (terms are hash-consed, so sharing is structural), or nested deeper than
a line should be, is computed once into a local.

The function's arguments must lie in the bounds the term's variables declare, and at
points where a divisor is 0 the term has no value and the code none either: the
simplification and the widths rely on both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from ..errors import QuoremError
from ..ops import DIVISION_OPS, Op, Semantics
from ..printer import brief
from ..term import Term, check_one_name
from ..walk import free_names, nodes, postorder
from .cform import CExpr, leaf, render
from .lower import lower
from .names import DEFAULT_NAME, name_problem
from .widths import Planned, Width, node_expr, operand_at, plan_widths

__all__ = ["DEFAULT_NAME", "LANGUAGES", "EmitError", "emit"]

LANGUAGES: Final = ("c", "cuda", "python")
_COMPARE: Final = {Op.LT: "<", Op.LE: "<=", Op.EQ: "==", Op.NE: "!="}
# Operators nested in one expression before a subterm gets a local: keeps lines
# readable and the printers' recursion shallow however deep the term.
_INLINE_DEPTH: Final = 24


class EmitError(QuoremError):
    """The term cannot be emitted as asked.

    A bad name, a variable that is not a parameter, a division with no value...
    """


def _temporaries(order: list[Term]) -> set[Term]:
    """Nodes to compute once into a local.

    Those used twice, an operand of max/min (printed twice), or nested too deep.
    """
    uses: Counter[Term] = Counter()
    for t in order:
        for a in t.args:
            uses[a] += 2 if t.op in (Op.MAX, Op.MIN) else 1
    temps = {t for t in order if t.args and uses[t] > 1}
    depth: dict[Term, int] = {}
    for t in order:
        depth[t] = 1 + max((depth[a] for a in t.args if a not in temps), default=-1)
        if depth[t] > _INLINE_DEPTH:
            temps.add(t)
    return temps


def _check_names(term: Term, params: Sequence[str], name: str, lang: str) -> None:
    missing = sorted(free_names(term) - set(params))
    if missing:
        listed = ", ".join(repr(p) for p in [*params, *missing])
        raise EmitError(
            f"variables {', '.join(missing)} are not parameters of {name}(): every variable "
            f"of the term must be one (params=[{listed}])"
        )
    dup = sorted({p for p in params if params.count(p) > 1})
    if dup:
        raise EmitError(f"parameter given twice: {', '.join(dup)}")
    for p in params:
        problem = name_problem(p, lang)
        if problem:
            raise EmitError(f"variable {p!r} cannot be a parameter in {lang}: it {problem}")
    problem = name_problem(name, lang, function=True, params=params)
    if problem:
        raise EmitError(f"{name!r} cannot name the {lang} function: it {problem}")


def _check_divisors(term: Term) -> None:
    """A division whose divisor is 0 at every point has no value: refuse to write code."""
    for t in nodes(term):
        if t.op in DIVISION_OPS or t.op is Op.CEILDIV:
            d = t.args[1]
            if d.vmin == d.vmax == 0:
                raise EmitError(
                    f"{brief(t)} divides by zero at every point ({brief(d)} is always 0): "
                    "it has no value"
                )


class _Python:
    """Python expressions (unbounded integers, floor division), fully parenthesised."""

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
            coefs, k = t.arg
            parts: list[str] = []
            for a, c in zip(t.args, coefs, strict=True):
                text = self.operand(a) if abs(c) == 1 else f"{self.operand(a)} * {abs(c)}"
                sign = ("- " if c < 0 else "+ ") if parts else ("-" if c < 0 else "")
                parts.append(sign + text)
            if k:
                parts.append(f"{'+' if k > 0 else '-'} {abs(k)}")
            return "(" + " ".join(parts) + ")"
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
        if op is Op.AND or op is Op.OR:
            left, right = (self.operand(x) for x in t.args)
            return f"int({left} != 0 {'and' if op is Op.AND else 'or'} {right} != 0)"
        raise EmitError(f"{op.name.lower()} has no Python form here (was the term lowered?)")


def emit(
    term: Term, params: Sequence[str] | None = None, lang: str = "c", name: str = DEFAULT_NAME
) -> str:
    """Source code of a function ``name(params...)`` returning ``term``'s value.

    ``params`` name the function's parameters in order (default: the term's variables,
    sorted); every variable of the term must be one. ``lang`` is ``c``, ``cuda`` or
    ``python``. For C and CUDA the function takes and returns ``int64_t``, needs only
    ``<stdint.h>``, and no step of it overflows or converts a value out of range. At
    every point of the variables' bounds where the term has a value, the function
    returns it. Names that are not usable in ``lang`` (keywords, reserved or library
    names, the generated locals ``t_0``...; see :mod:`quorem.codegen.names`) are
    refused, not renamed. Raises :class:`EmitError` (bad names or language, a divisor 0
    at every point), :class:`~quorem.codegen.widths.WidthError` (a value needing
    more than 64 bits, C and CUDA only), :class:`~quorem.codegen.lower.LoweringError`
    or :class:`~quorem.errors.VariableClashError` (two variables with one name).
    """
    if lang not in LANGUAGES:
        raise EmitError(f"unknown language {lang!r} (use {', '.join(LANGUAGES)})")
    # Two variables with one name would become one parameter: a wrong function.
    check_one_name(term)
    names = list(params) if params is not None else sorted(free_names(term))
    _check_names(term, names, name, lang)
    _check_divisors(term)
    target = Semantics.FLOOR if lang == "python" else Semantics.TRUNC
    low = lower(term, target)
    order = postorder(low)
    shared = _temporaries(order)
    temps = {t: f"t_{i}" for i, t in enumerate(t for t in order if t in shared)}
    if lang == "python":
        return _python_function(low, order, temps, names, name)
    return _c_function(low, order, temps, names, name, cuda=lang == "cuda")


def _c_function(
    term: Term,
    order: list[Term],
    temps: dict[Term, str],
    names: list[str],
    name: str,
    *,
    cuda: bool,
) -> str:
    plan: dict[Term, Planned] = plan_widths(term)

    def inline(a: Term) -> CExpr:
        p = plan[a]
        if a in temps:
            return leaf(temps[a], p.width.c_type, p.lo, p.hi)
        return node_expr(a, p.width, operand)

    operand = operand_at(plan, inline)
    lines = ["#include <stdint.h>", ""]
    head = "__device__ int64_t" if cuda else "int64_t"
    lines.append(f"{head} {name}({', '.join(f'int64_t {n}' for n in names)}) {{")
    used = free_names(term)
    lines += [f"    (void){n};" for n in names if n not in used]
    for t in order:
        if t in temps:
            # Built before the name is bound, so its own operands are inlined.
            code = render(node_expr(t, plan[t].width, operand))
            lines.append(f"    const {plan[t].width.c_type} {temps[t]} = {code};")
    lines.append(f"    return {render(operand(term, Width.I64))};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _python_function(
    term: Term, order: list[Term], temps: dict[Term, str], names: list[str], name: str
) -> str:
    py = _Python({})
    lines = [f"def {name}({', '.join(f'{n}: int' for n in names)}) -> int:"]
    for t in order:
        if t in temps:
            lines.append(f"    {temps[t]} = {py.node(t)}")
            py.temps[t] = temps[t]
    lines.append(f"    return {py.operand(term)}")
    return "\n".join(lines) + "\n"
