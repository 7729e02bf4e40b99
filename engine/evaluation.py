"""Evaluate terms at a point, and count their divisions."""

from __future__ import annotations

from collections.abc import Mapping

from .arith import BINARY_EVALUATORS
from .errors import EvaluationError
from .ops import DIVISION_OPS, Op
from .printer import brief
from .term import Term

__all__ = ["count_divmod", "division_counts", "evaluate"]


def evaluate(term: Term, env: Mapping[str, int], *, check_bounds: bool = True) -> int:
    """The value of ``term`` when each variable takes its value in ``env``.

    Raises:
        EvaluationError: a variable is missing from ``env`` or (with ``check_bounds``)
            outside its range, or a division by zero occurs at this point.

    """
    values: dict[Term, int] = {}
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, ready = stack.pop()
        if t in values:
            continue
        op = t.op
        if op is Op.CONST:
            values[t] = t.arg
            continue
        if op is Op.VAR:
            name, lo, hi = t.arg
            if name not in env:
                raise EvaluationError(f"no value for variable {name}")
            v = env[name]
            if check_bounds and ((lo is not None and v < lo) or (hi is not None and v > hi)):
                raise EvaluationError(f"{name} = {v} is outside its range [{lo}, {hi}]")
            values[t] = v
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((c, False) for c in t.args if c not in values)
            continue
        args = [values[c] for c in t.args]
        if op is Op.ADD:
            values[t] = t.arg[1] + sum(c * a for c, a in zip(t.arg[0], args, strict=True))
        elif op is Op.MUL:
            p = 1
            for a in args:
                p *= a
            values[t] = p
        else:
            try:
                values[t] = BINARY_EVALUATORS[op](args[0], args[1])
            except ZeroDivisionError:
                raise EvaluationError(f"division by zero at this point in {brief(t)}") from None
    return values[term]


def count_divmod(term: Term) -> int:
    """Number of ``//``/``%`` operations (any semantics) in ``term`` written out as a tree."""
    return division_counts(term)[term]


def division_counts(term: Term) -> dict[Term, int]:
    """The :func:`count_divmod` of every subterm of ``term`` (itself included), in one pass."""
    counts: dict[Term, int] = {}
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, ready = stack.pop()
        if t in counts:
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((c, False) for c in t.args if c not in counts)
            continue
        own = 1 if t.op in DIVISION_OPS or t.op is Op.CEILDIV else 0
        counts[t] = own + sum(counts[c] for c in t.args)
    return counts
