"""Maps of static slicing ops: slice, concatenate, reverse and pad.

Offsets, strides and paddings are attributes, so each map is affine in the output index
(with ``mod`` constraints where a stride or interior padding skips elements).
:func:`pad_map` is also the padding step of windowed ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from ..parse import PadDim
from .context import OpContext, OpMaps
from .maps import OperandMaps, box, one, scalar_read_map, scalar_write_map


def pad_map(src: Sequence[int], pads: Sequence[PadDim]) -> IndexingMap:
    """The output-to-input map of padding an array of shape ``src`` by ``pads``.

    The output dimension ``k`` has ``lo + hi + n + (n - 1) * interior`` elements; its
    index ``d`` reads input index ``(d - lo) / (interior + 1)`` where that division is
    exact (a ``mod`` constraint) and lands inside the input; other output indices are
    outside the domain (they hold the padding value).
    """
    out_dims = [padded_size(n, p) for n, p in zip(src, pads, strict=True)]
    bounds: list[tuple[int, int]] = []
    for n, p, size in zip(src, pads, out_dims, strict=True):
        last = p.lo + (n - 1) * (p.interior + 1)
        bounds.append((max(0, p.lo), min(size - 1, last)) if n > 0 else (0, -1))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [
            (x - p.lo) // (p.interior + 1) if p.interior else x - p.lo
            for x, p in zip(d, pads, strict=True)
        ]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [
            ((x - p.lo) % (p.interior + 1), 0, 0)
            for x, p in zip(d, pads, strict=True)
            if p.interior
        ]

    return IndexingMap.build(bounds, results, constraints=constraints)


def padded_size(n: int, p: PadDim) -> int:
    """The size of a dimension of ``n`` elements padded by ``p`` (interior padding too)."""
    return p.lo + p.hi + n + max(0, n - 1) * p.interior


def _reverse(c: OpContext, k: int) -> list[OperandMaps]:
    # Its own inverse: the same map in both directions.
    c.n_args(1)
    out = c.out().dims
    c.same_dims("the operand", c.arg(0).dims, out)
    rdims = c.dims_attr("dimensions", len(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [out[j] - 1 - x if j in rdims else x for j, x in enumerate(d)]

    return one(IndexingMap.build(box(out), results))


def _slice_check(c: OpContext) -> tuple[list[tuple[int, int]], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    sl = c.inst.slice_dims()
    if len(sl) != len(src):
        raise c.error(f"slice= has {len(sl)} dimensions, the operand has rank {len(src)}")
    for j, (x, n) in enumerate(zip(sl, src, strict=True)):
        if not 0 <= x.start <= x.limit <= n:
            raise c.error(f"slice dimension {j} [{x.start}:{x.limit}] is outside [0:{n}]")
    c.same_dims("the output", out, [-(-(x.limit - x.start) // x.stride) for x in sl])
    return [(x.start, x.stride) for x in sl], out, src


def _slice_out(c: OpContext, k: int) -> list[OperandMaps]:
    sl, out, _ = _slice_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x * st + a for x, (a, st) in zip(d, sl, strict=True)]

    return one(IndexingMap.build(box(out), results))


def _slice_in(c: OpContext, i: int) -> list[OperandMaps]:
    sl, out, _ = _slice_check(c)
    # Only the input indices the slice keeps: from start, every stride-th, out many.
    bounds = [(a, a + (n - 1) * st) if n else (0, -1) for (a, st), n in zip(sl, out, strict=True)]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [(x - a) // st if st != 1 else x - a for x, (a, st) in zip(d, sl, strict=True)]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [((x - a) % st, 0, 0) for x, (a, st) in zip(d, sl, strict=True) if st != 1]

    return one(IndexingMap.build(bounds, results, constraints=constraints))


def _concat_check(c: OpContext) -> tuple[int, list[int], tuple[int, ...]]:
    if not c.operands:
        raise c.error("needs at least one operand")
    out = c.out().dims
    axes = c.dims_attr("dimensions", len(out))
    if len(axes) != 1:
        raise c.error("dimensions= must name the one concatenated dimension")
    axis = axes[0]
    offsets: list[int] = []
    at = 0
    for i in range(len(c.operands)):
        dims = c.arg(i).dims
        want = list(out)
        if len(dims) == len(out):
            want[axis] = dims[axis]
        c.same_dims(f"operand {i} ({c.operands[i].name})", dims, want)
        offsets.append(at)
        at += dims[axis]
    if at != out[axis]:
        raise c.error(
            f"the operands add up to {at} along dimension {axis}, the output has {out[axis]}"
        )
    return axis, offsets, out


def _concat_out(c: OpContext, k: int) -> list[OperandMaps]:
    axis, offsets, out = _concat_check(c)
    maps: list[OperandMaps] = []
    for i, off in enumerate(offsets):
        n = c.arg(i).dims[axis]
        bounds = box(out)
        bounds[axis] = (off, off + n - 1)
        maps.append((IndexingMap.build(bounds, _shifted(axis, -off)),))
    return maps


def _concat_in(c: OpContext, i: int) -> list[OperandMaps]:
    axis, offsets, _ = _concat_check(c)
    return one(IndexingMap.build(box(c.arg(i).dims), _shifted(axis, offsets[i])))


def _shifted(axis: int, by: int) -> Callable[[list[Term], list[Term], list[Term]], list[Term]]:
    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + by if j == axis else x for j, x in enumerate(d)]

    return results


def _pad_check(c: OpContext) -> tuple[tuple[int, ...], tuple[PadDim, ...], tuple[int, ...]]:
    c.n_args(2)
    src, out = c.arg(0).dims, c.out().dims
    pads = c.inst.padding()
    if len(pads) != len(src):
        raise c.error(f"padding= has {len(pads)} dimensions, the operand has rank {len(src)}")
    c.same_dims("the padding value", c.arg(1).dims, ())
    c.same_dims("the output", out, [padded_size(n, p) for n, p in zip(src, pads, strict=True)])
    if any(n < 0 for n in out):
        raise c.error("the padding removes more than the whole operand")
    return src, pads, out


def _pad_out(c: OpContext, k: int) -> list[OperandMaps]:
    src, pads, out = _pad_check(c)
    return [(pad_map(src, pads),), (scalar_read_map(out),)]


def _pad_in(c: OpContext, i: int) -> list[OperandMaps]:
    src, pads, out = _pad_check(c)
    if i == 1:
        # Over-approximate: the value may land anywhere outside the operand's image.
        return one(scalar_write_map(out))
    bounds: list[tuple[int, int]] = []
    for n, p, size in zip(src, pads, out, strict=True):
        step = p.interior + 1
        # Input indices whose output lo + x * step lies in [0, size - 1].
        bounds.append((max(0, -(p.lo // step)), min(n - 1, (size - 1 - p.lo) // step)))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x * (p.interior + 1) + p.lo for x, p in zip(d, pads, strict=True)]

    return one(IndexingMap.build(bounds, results))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "reverse": _reverse,
    "slice": _slice_out,
    "concatenate": _concat_out,
    "pad": _pad_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "reverse": _reverse,
    "slice": _slice_in,
    "concatenate": _concat_in,
    "pad": _pad_in,
}
