"""Maps of ops that rearrange elements without reading others: reshape, bitcast, transpose.

:func:`reshape_map` pairs elements in row-major order; a bitcast reshapes the physical
(layout-order) index; a transpose permutes dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...indexing.compose import compose
from ...indexing.map import IndexingMap
from ...term import Term, as_term
from ..layout import logical_to_physical, physical_to_logical
from .context import OpContext, OpMaps, dims_text
from .maps import OperandMaps, box, one


def _reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Split two shapes of equal element count into minimal runs of equal products.

    Each run pairs consecutive dimensions of ``src`` with consecutive dimensions of
    ``dst``; size-1 dimensions left over at the end form runs of their own (possibly
    with no partner on the other side). Needs no zero-size dimension.
    """
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        gs: list[int] = []
        gd: list[int] = []
        ps = pd = 1
        if i < len(src):
            gs.append(i)
            ps *= src[i]
            i += 1
        if j < len(dst):
            gd.append(j)
            pd *= dst[j]
            j += 1
        while ps != pd:
            if ps < pd:
                gs.append(i)
                ps *= src[i]
                i += 1
            else:
                gd.append(j)
                pd *= dst[j]
                j += 1
        groups.append((gs, gd))
    return groups


def reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    """The map from an index of shape ``dst`` to the ``src`` index of the same element.

    Elements correspond in row-major order: this is the output-to-input map of a
    reshape from ``src`` to ``dst``.

    The shapes are split into minimal subshapes with equal element counts; in each,
    the ``dst`` indices are linearized and the linear index delinearized into ``src``
    indices, so a dimension that only changes name stays a bare variable. Shapes with
    no element give the known-empty map. The counts must be equal (checked by callers).
    """
    total = 1
    for n in src:
        total *= n
    if total == 0:
        return IndexingMap.empty(len(dst), len(src))
    groups = _reshape_groups(src, dst)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        out: list[Term] = [as_term(0)] * len(src)
        for gs, gd in groups:
            linear: Term = as_term(0)
            stride = 1
            for j in reversed(gd):
                linear = linear + d[j] * stride
                stride *= dst[j]
            stride = 1
            for k, i in enumerate(reversed(gs)):
                e = linear // stride if stride != 1 else linear
                # The outermost dimension of a run needs no `mod`: the linear index is
                # below the run's element count.
                out[i] = e % src[i] if k != len(gs) - 1 else e
                stride *= src[i]
        return out

    return IndexingMap.build(box(dst), results)


def _reshape_check(c: OpContext) -> tuple[tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    if c.out().num_elements != c.arg(0).num_elements:
        raise c.error(
            f"cannot reshape [{dims_text(src)}] ({c.arg(0).num_elements} elements) to "
            f"[{dims_text(out)}] ({c.out().num_elements})"
        )
    return out, src


def _reshape_out(c: OpContext, k: int) -> list[OperandMaps]:
    out, src = _reshape_check(c)
    return one(reshape_map(src, out))


def _reshape_in(c: OpContext, i: int) -> list[OperandMaps]:
    out, src = _reshape_check(c)
    return one(reshape_map(out, src))


def _bitcast_out(c: OpContext, k: int) -> list[OperandMaps]:
    # A bitcast keeps the bytes: the physical (memory-order) index is reshaped. Logical
    # output -> physical output -> physical input -> logical input.
    _reshape_check(c)
    out, src = c.out(), c.arg(0)
    m = compose(logical_to_physical(out), reshape_map(src.physical_dims(), out.physical_dims()))
    return one(compose(m, physical_to_logical(src)))


def _bitcast_in(c: OpContext, i: int) -> list[OperandMaps]:
    _reshape_check(c)
    out, src = c.out(), c.arg(0)
    m = compose(logical_to_physical(src), reshape_map(out.physical_dims(), src.physical_dims()))
    return one(compose(m, physical_to_logical(out)))


def _transpose_perm(c: OpContext) -> tuple[list[int], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    perm = c.dims_attr("dimensions", len(src))
    if len(perm) != len(src):
        raise c.error(f"dimensions= must be a permutation of the {len(src)} operand dims")
    c.same_dims("the output", out, [src[p] for p in perm])
    return perm, out, src


def _transpose_out(c: OpContext, k: int) -> list[OperandMaps]:
    perm, out, _ = _transpose_perm(c)
    inverse = [perm.index(j) for j in range(len(perm))]
    return one(IndexingMap.build(box(out), lambda d, s, rt: [d[k] for k in inverse]))


def _transpose_in(c: OpContext, i: int) -> list[OperandMaps]:
    perm, _, src = _transpose_perm(c)
    return one(IndexingMap.build(box(src), lambda d, s, rt: [d[p] for p in perm]))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "transpose": _transpose_out,
    "reshape": _reshape_out,
    "bitcast": _bitcast_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "transpose": _transpose_in,
    "reshape": _reshape_in,
    "bitcast": _bitcast_in,
}
