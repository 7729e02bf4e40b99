"""Maps of collectives: ``all-gather`` and ``all-reduce`` (and its async halves).

On one device's view: all-gather reads its operand at the index modulo the shard size,
all-reduce at the same index.
"""

from __future__ import annotations

from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from .context import OpContext, OpMaps
from .maps import OperandMaps, box, identity_map

_ALL_REDUCE: Final = ("all-reduce", "all-reduce-start", "all-reduce-done")


def _all_gather_check(c: OpContext) -> tuple[int, list[int]]:
    """The gathered dimension and, per operand, its size (the shard size)."""
    if not c.operands:
        raise c.error("needs an operand")
    outs = c.outputs()
    if len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    dims = c.dims_attr("dimensions", len(c.arg(0).dims))
    if len(dims) != 1:
        raise c.error("dimensions= must name the one gathered dimension")
    axis = dims[0]
    shards: list[int] = []
    for i, out in enumerate(outs):
        src = c.arg(i).dims
        if len(src) != len(out.dims) or axis >= len(src):
            raise c.error(f"operand {i} has rank {len(src)}, output {i} rank {len(out.dims)}")
        want = list(src)
        n = src[axis]
        if n == 0 or out.dims[axis] % n:
            raise c.error(
                f"output {i}'s dimension {axis} ({out.dims[axis]}) is not a whole number "
                f"of shards of {n}"
            )
        want[axis] = out.dims[axis]
        c.same_dims(f"output {i}", out.dims, want)
        shards.append(n)
    return axis, shards


def _all_gather_out(c: OpContext, k: int) -> list[OperandMaps]:
    """All-gather: the output is the participants' operands concatenated along ``axis``.

    Output index ``d`` along ``axis`` lies in shard ``d // n`` (the participant, XLA's
    replica-id map) at its index ``d mod n``: every participant's operand has this
    operand's shape, so the map reads the operand at ``d mod n`` (as XLA's).
    """
    axis, shards = _all_gather_check(c)
    n = shards[k]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x % n if j == axis else x for j, x in enumerate(d)]

    m = IndexingMap.build(box(c.out(k).dims), results)
    return [(m,) if i == k else () for i in range(len(c.operands))]


def _all_gather_in(c: OpContext, i: int) -> list[OperandMaps]:
    """An operand index reaches its place in every shard: ``x + r*n`` for each ``r``."""
    axis, shards = _all_gather_check(c)
    n = shards[i]
    count = c.out(i).dims[axis] // n

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + s[0] * n if j == axis else x for j, x in enumerate(d)]

    m = IndexingMap.build(box(c.arg(i).dims), results, range_vars=[(0, count - 1)])
    return [(m,) if j == i else () for j in range(len(c.outputs()))]


def _all_reduce_check(c: OpContext) -> None:
    outs = c.outputs()
    if not c.operands or len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    for i, out in enumerate(outs):
        c.same_dims(f"operand {i} ({c.operands[i].name})", c.arg(i).dims, out.dims)


def _all_reduce_out(c: OpContext, k: int) -> list[OperandMaps]:
    """All-reduce: output ``k`` at ``d`` combines operand ``k`` at ``d`` over the devices.

    Every participant's operand is read at the same index, so on the operand the map is
    the identity (XLA's ComputeOutputToInputCwiseOpIndexing, which it applies to
    all-reduce: "for a single device, all-reduce is an elementwise op"). A variadic
    all-reduce reduces each operand on its own: output ``k`` reads operand ``k`` only.
    """
    _all_reduce_check(c)
    out = c.out(k).dims
    return [(identity_map(out),) if i == k else () for i in range(len(c.operands))]


def _all_reduce_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_all_reduce_out` (XLA's ComputeInputToOutputCwiseOpIndexing)."""
    _all_reduce_check(c)
    dims = c.arg(i).dims
    return [(identity_map(dims),) if k == i else () for k in range(len(c.outputs()))]


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "all-gather": _all_gather_out,
    **dict.fromkeys(_ALL_REDUCE, _all_reduce_out),
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "all-gather": _all_gather_in,
    **dict.fromkeys(_ALL_REDUCE, _all_reduce_in),
}
