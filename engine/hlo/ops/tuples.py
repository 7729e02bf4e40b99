"""Maps of ``tuple`` and ``get-tuple-element``: element ``k`` is its operand, unchanged."""

from __future__ import annotations

from typing import Final

from .context import OpContext, OpMaps
from .maps import OperandMaps, identity_map, one


def _tuple_out(c: OpContext, k: int) -> list[OperandMaps]:
    out = c.out(k).dims
    if len(c.operands) != len(c.outputs()):
        raise c.error(f"has {len(c.operands)} operands for {len(c.outputs())} elements")
    c.same_dims(f"operand {k}", c.arg(k).dims, out)
    return [(identity_map(out),) if i == k else () for i in range(len(c.operands))]


def _tuple_in(c: OpContext, i: int) -> list[OperandMaps]:
    if len(c.operands) != len(c.outputs()):
        raise c.error(f"has {len(c.operands)} operands for {len(c.outputs())} elements")
    dims = c.arg(i).dims
    c.same_dims(f"element {i}", c.out(i).dims, dims)
    return [(identity_map(dims),) if j == i else () for j in range(len(c.outputs()))]


def _gte(c: OpContext, k: int) -> list[OperandMaps]:
    c.n_args(1)
    if not c.operands[0].shape.is_tuple:
        raise c.error(f"operand {c.operands[0].name} is not a tuple")
    out = c.out().dims
    c.same_dims("the tuple element", c.arg(0).dims, out)
    return one(identity_map(out))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "tuple": _tuple_out,
    "get-tuple-element": _gte,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "tuple": _tuple_in,
    "get-tuple-element": _gte,
}
