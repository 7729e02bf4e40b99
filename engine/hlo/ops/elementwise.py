"""Maps of elementwise ops, ``bitcast-convert`` and ``broadcast``.

Output element ``i`` of an elementwise op reads element ``i`` of each operand (a scalar
operand whole); ``broadcast`` reads the operand at the output dims it keeps.
"""

from __future__ import annotations

from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from .context import OpContext, OpMaps
from .maps import (
    OperandMaps,
    box,
    identity_map,
    one,
    scalar_read_map,
    scalar_write_map,
)

# Ops whose output element i reads element i of each operand (a scalar operand, as
# `select` and `clamp` allow, is read whole).
ELEMENTWISE: Final = frozenset(
    {
        "abs",
        "add",
        "and",
        "atan2",
        "cbrt",
        "ceil",
        "clamp",
        "clz",
        "compare",
        "complex",
        "convert",
        "copy",
        "cosine",
        "divide",
        "erf",
        "exponential",
        "exponential-minus-one",
        "floor",
        "imag",
        "is-finite",
        "log",
        "log-plus-one",
        "logistic",
        "map",
        "maximum",
        "minimum",
        "multiply",
        "negate",
        "not",
        "or",
        "popcnt",
        "power",
        "real",
        "reduce-precision",
        "remainder",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "select",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "sign",
        "sine",
        "sqrt",
        "stochastic-convert",
        "subtract",
        "tan",
        "tanh",
        "xor",
    }
)


def _elementwise_out(c: OpContext, k: int) -> list[OperandMaps]:
    out = c.out(k).dims
    maps: list[OperandMaps] = []
    for i in range(len(c.operands)):
        dims = c.arg(i).dims
        if not dims and out:
            maps.append((scalar_read_map(out),))
        else:
            c.same_dims(f"operand {i} ({c.operands[i].name})", dims, out)
            maps.append((identity_map(out),))
    return maps


def _bitcast_convert_out(c: OpContext, k: int) -> list[OperandMaps]:
    # Elementwise between types of one bit width; otherwise a dimension appears or
    # disappears, which is not modelled.
    c.n_args(1)
    if c.arg(0).dims != c.out().dims:
        return [c.unknown(_WIDTH_CHANGE)]
    return _elementwise_out(c, k)


def _bitcast_convert_in(c: OpContext, i: int) -> list[OperandMaps]:
    c.n_args(1)
    if c.arg(0).dims != c.out().dims:
        return [c.unknown(_WIDTH_CHANGE)]
    return _elementwise_in(c, i)


_WIDTH_CHANGE: Final = (
    "between element types of different widths a dimension appears or disappears, "
    "which no map models"
)


def _elementwise_in(c: OpContext, i: int) -> list[OperandMaps]:
    out = c.out().dims
    dims = c.arg(i).dims
    if not dims and out:
        return one(scalar_write_map(out))
    c.same_dims(f"operand {i} ({c.operands[i].name})", dims, out)
    return one(identity_map(dims))


def _broadcast_dims(c: OpContext) -> tuple[list[int], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    bdims = c.dims_attr("dimensions", len(out))
    if len(bdims) != len(src):
        raise c.error(f"dimensions= has {len(bdims)} entries, the operand has rank {len(src)}")
    c.same_dims("the operand", src, [out[k] for k in bdims])
    return bdims, out, src


def _broadcast_out(c: OpContext, k: int) -> list[OperandMaps]:
    bdims, out, _ = _broadcast_dims(c)
    return one(IndexingMap.build(box(out), lambda d, s, rt: [d[j] for j in bdims]))


def _broadcast_in(c: OpContext, i: int) -> list[OperandMaps]:
    bdims, out, src = _broadcast_dims(c)
    new = [j for j in range(len(out)) if j not in bdims]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [d[bdims.index(j)] if j in bdims else s[new.index(j)] for j in range(len(out))]

    return one(IndexingMap.build(box(src), results, range_vars=box([out[j] for j in new])))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    **dict.fromkeys(ELEMENTWISE, _elementwise_out),
    "bitcast-convert": _bitcast_convert_out,
    "broadcast": _broadcast_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    **dict.fromkeys(ELEMENTWISE, _elementwise_in),
    "bitcast-convert": _bitcast_convert_in,
    "broadcast": _broadcast_in,
}
