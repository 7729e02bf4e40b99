"""Maps of ``sort`` and ``topk``: an output element depends on its whole row.

The sorted (or last) dimension becomes a range variable, the others are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from .context import OpContext, OpMaps
from .maps import OperandMaps, box, copies, one


def _sort_check(c: OpContext) -> tuple[int, tuple[int, ...]]:
    if not c.operands:
        raise c.error("needs an operand")
    dims = c.arg(0).dims
    axes = c.dims_attr("dimensions", len(dims))
    if len(axes) != 1:
        raise c.error("dimensions= must name the one sorted dimension")
    axis = axes[0]
    outs = c.outputs()
    if len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    for i, out in enumerate(outs):
        c.same_dims(f"operand {i} ({c.operands[i].name})", c.arg(i).dims, dims)
        c.same_dims(f"output {i}", out.dims, dims)
    return axis, dims


def _along(axis: int, by: Term) -> Callable[[list[Term]], list[Term]]:
    """An index with its ``axis`` component replaced by ``by``."""
    return lambda d: [by if j == axis else x for j, x in enumerate(d)]


def _sort_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Sort: output element ``d`` is the ``d[axis]``-th of its row in the sorted order.

    Which element lands there depends on every element of the row, in every operand (the
    comparator may read them all): each operand is read along the sorted dimension
    whole, a range variable, with the other dimensions equal. XLA has no sort indexing
    (unknown); this map is the exact set of elements an output element depends on.
    """
    axis, dims = _sort_check(c)
    c.out(k)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(axis, s[0])(d)

    m = IndexingMap.build(box(dims), results, range_vars=[(0, dims[axis] - 1)])
    return copies(m, len(c.operands))


def _sort_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_sort_out`: an element reaches its whole row of every output."""
    axis, dims = _sort_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(axis, s[0])(d)

    m = IndexingMap.build(box(dims), results, range_vars=[(0, dims[axis] - 1)])
    return copies(m, len(c.outputs()))


def _topk_check(c: OpContext) -> tuple[tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    src = c.arg(0).dims
    outs = c.outputs()
    if not src or len(outs) != 2:
        raise c.error("expects an operand of rank >= 1 and a (values, indices) tuple")
    if c.inst.opcode == "topk":
        k = c.inst.int_attr("k")
    else:  # A custom-call TopK (XLA:CPU's lowering of topk) has no k=: its outputs give it.
        k = outs[0].dims[-1] if outs[0].dims else -1
    if not 0 <= k <= src[-1]:
        raise c.error(f"k={k} must be within [0, {src[-1]}], the last dimension")
    want = [*src[:-1], k]
    for j, out in enumerate(outs):
        c.same_dims(f"output {j}", out.dims, want)
    return src, tuple(want)


def topk_out(c: OpContext, k: int) -> list[OperandMaps]:
    """TopK along the last dimension: output ``(b..., j)`` depends on the whole row ``b``.

    The ``j``-th largest element (and its index) of row ``b``: the operand is read at
    ``(b..., s)`` for every ``s``, a range variable. XLA has no topk indexing (unknown).
    """
    src, out = _topk_check(c)
    c.out(k)
    last = len(src) - 1

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(last, s[0])(d)

    return one(IndexingMap.build(box(out), results, range_vars=[(0, src[-1] - 1)]))


def topk_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`topk_out`: an element reaches every output of its row."""
    src, out = _topk_check(c)
    last = len(src) - 1

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(last, s[0])(d)

    m = IndexingMap.build(box(src), results, range_vars=[(0, out[-1] - 1)])
    return copies(m, 2)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "sort": _sort_out,
    "topk": topk_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "sort": _sort_in,
    "topk": topk_in,
}
