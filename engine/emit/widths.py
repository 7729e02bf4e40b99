"""Index width selection (seed 002 §5): int32 where every value fits, else int64.

A node *needs* int32 when its value range, and that of every intermediate its code
computes (each ``c*t`` of a sum and each partial sum, left to right), lie inside
``[-2**31, 2**31 - 1]``; int64 when they lie inside int64. A node's width is the least
upper type of its own need and its operands' widths, so no operand is ever narrowed.
A value outside int64, or unbounded (a variable declared without bounds), is an error
naming the node: code for it would wrap around.
"""

from __future__ import annotations

import enum
from typing import Final

from quorem.engine.errors import QuoremError
from quorem.engine.ops import Op
from quorem.engine.printer import brief
from quorem.engine.term import Term, binary_range
from quorem.engine.walk import postorder

__all__ = ["Width", "WidthError", "node_widths"]

_LIMITS: Final = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}


class Width(enum.IntEnum):
    """An integer type of the emitted code, by its bit count."""

    I32 = 32
    I64 = 64

    @property
    def c_type(self) -> str:
        """The C type (``<stdint.h>``)."""
        return f"int{self.value}_t"


class WidthError(QuoremError):
    """A value of the term needs more than 64 bits (or is unbounded)."""


def _need(lo: int | None, hi: int | None) -> Width | None:
    if lo is None or hi is None:
        return None
    for w in (Width.I32, Width.I64):
        wlo, whi = _LIMITS[w.value]
        if wlo <= lo and hi <= whi:
            return w
    return None


def _own_need(t: Term) -> Width | None:
    """The narrowest width holding ``t`` and the intermediates its own code computes."""
    if t.op is Op.VAR:
        # A parameter is an int64_t: unbounded, it still holds; what is computed from
        # it is then unbounded too and reported there.
        lo = -(2**63) if t.vmin is None else t.vmin
        hi = 2**63 - 1 if t.vmax is None else t.vmax
        return _need(lo, hi)
    needs = [_need(t.vmin, t.vmax)]
    if t.op is Op.ADD:
        coefs, k = t.arg
        lo = hi = 0
        for a, c in zip(t.args, coefs, strict=True):
            if a.vmin is None or a.vmax is None:
                return None
            plo, phi = sorted((c * a.vmin, c * a.vmax))
            lo, hi = lo + plo, hi + phi
            needs += [_need(plo, phi), _need(lo, hi)]
        needs += [_need(k, k), _need(lo + k, hi + k)]
    elif t.op is Op.MUL:
        # Factors multiply left to right: a partial product can exceed the whole (a
        # later factor may be 0).
        part = (1, 1)
        for a in t.args:
            if a.vmin is None or a.vmax is None:
                return None
            corners = [x * y for x in part for y in (a.vmin, a.vmax)]
            part = (min(corners), max(corners))
            needs.append(_need(*part))
    elif t.op in (Op.TRUNCDIV, Op.TRUNCMOD, Op.FLOORDIV, Op.FLOORMOD):
        # C computes the quotient for a remainder too: INT_MIN % -1 overflows.
        needs.append(_need(*binary_range(Op.TRUNCDIV, *t.args)))
    if any(n is None for n in needs):
        return None
    return max(n for n in needs if n is not None)


def node_widths(term: Term) -> dict[Term, Width]:
    """The width of every node of ``term`` (see the module docstring).

    Raises :class:`WidthError` naming the first node, bottom-up, whose values may
    leave int64.
    """
    widths: dict[Term, Width] = {}
    for t in postorder(term):
        need = _own_need(t)
        if need is None:
            rng = f"[{t.vmin}, {t.vmax}]".replace("None", "unbounded")
            raise WidthError(f"{brief(t)} needs more than 64 bits: its values range over {rng}")
        # Comparisons yield 0 or 1, but compare their operands at the operands' width.
        widths[t] = max([need, *(widths[a] for a in t.args)])
    return widths
