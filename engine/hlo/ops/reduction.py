"""Maps of reductions: ``reduce``, ``reduce-window`` and ``select-and-scatter``.

Reduced dimensions (and window indices) become range variables; init values are read
whole.
"""

from __future__ import annotations

from typing import Final

from ...indexing.compose import compose
from ...indexing.map import IndexingMap
from ...term import Term
from ..parse import PadDim, WindowDim
from .context import OpContext, OpMaps
from .maps import OperandMaps, box, copies, one, scalar_read_map, scalar_write_map
from .slicing import padded_size
from .window import (
    input_to_window,
    window_ok,
    window_to_input,
    window_unknown,
    windowed_extent,
)


def _reduce_check(c: OpContext) -> tuple[int, list[int], tuple[int, ...], tuple[int, ...]]:
    n = len(c.operands) // 2
    if n == 0 or len(c.operands) != 2 * n:
        raise c.error("expects inputs followed by as many init values")
    src = c.arg(0).dims
    rdims = sorted(c.dims_attr("dimensions", len(src)))
    kept = [src[j] for j in range(len(src)) if j not in rdims]
    outs = c.outputs()
    if len(outs) != n:
        raise c.error(f"has {n} inputs but {len(outs)} outputs")
    for i in range(n):
        c.same_dims(f"input {i} ({c.operands[i].name})", c.arg(i).dims, src)
        c.same_dims(f"init value {i} ({c.operands[n + i].name})", c.arg(n + i).dims, ())
        c.same_dims(f"output {i}", outs[i].dims, kept)
    return n, rdims, src, tuple(kept)


def _reduce_out(c: OpContext, k: int) -> list[OperandMaps]:
    n, rdims, src, kept = _reduce_check(c)
    c.out(k)
    free = [j for j in range(len(src)) if j not in rdims]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [s[rdims.index(j)] if j in rdims else d[free.index(j)] for j in range(len(src))]

    m = IndexingMap.build(box(kept), results, range_vars=box([src[j] for j in rdims]))
    return copies(m, n) + copies(scalar_read_map(kept), n)


def _reduce_in(c: OpContext, i: int) -> list[OperandMaps]:
    n, rdims, src, kept = _reduce_check(c)
    if i >= n:
        return copies(scalar_write_map(kept), n)
    free = [j for j in range(len(src)) if j not in rdims]
    return copies(IndexingMap.build(box(src), lambda d, s, rt: [d[j] for j in free]), n)


def _reduce_window_check(
    c: OpContext,
) -> tuple[int, tuple[int, ...], tuple[WindowDim, ...], list[PadDim], tuple[int, ...]]:
    """``(inputs, input dims, window, pads, output dims)`` of a reduce-window."""
    n = len(c.operands) // 2
    if n == 0 or len(c.operands) != 2 * n:
        raise c.error("expects inputs followed by as many init values")
    src = c.arg(0).dims
    window = c.inst.window()
    if len(window) != len(src):
        raise c.error(f"window= has {len(window)} dimensions, the input has rank {len(src)}")
    for i in range(n):
        c.same_dims(f"input {i} ({c.operands[i].name})", c.arg(i).dims, src)
        c.same_dims(f"init value {i} ({c.operands[n + i].name})", c.arg(n + i).dims, ())
    pads = [PadDim(w.pad_lo, w.pad_hi, w.base_dilation - 1) for w in window]
    want = []
    for x, w, p in zip(src, window, pads, strict=True):
        padded = padded_size(x, p)
        extent = (w.size - 1) * w.window_dilation + 1
        want.append((padded - extent) // w.stride + 1 if padded >= extent else 0)
    for j in range(len(c.outputs())):
        c.same_dims(f"output {j}", c.out(j).dims, want)
    return n, src, window, pads, tuple(want)


def _reduce_window_out(c: OpContext, k: int) -> list[OperandMaps]:
    """XLA's ComputeOutputToInputReduceWindowOpIndexing: the window over the padded input."""
    if not window_ok(c):
        return [window_unknown(c)] * len(c.operands)
    n, src, window, _, out = _reduce_window_check(c)
    c.out(k)
    m = window_to_input(src, window, out)
    return copies(m, n) + copies(scalar_read_map(out), n)


def _reduce_window_in(c: OpContext, i: int) -> list[OperandMaps]:
    """Input ``x`` reaches each window position whose window covers it.

    The inverse of :func:`_reduce_window_out` (XLA gives none; see
    :func:`input_to_window`). Every input of a variadic reduce-window reaches every
    output; an init value reaches all of them.
    """
    if not window_ok(c):
        return [window_unknown(c)] * len(c.outputs())
    n, src, window, _, out = _reduce_window_check(c)
    if i >= n:
        return copies(scalar_write_map(out), len(c.outputs()))
    return copies(input_to_window(src, window, out), len(c.outputs()))


def _select_and_scatter_check(
    c: OpContext,
) -> tuple[tuple[int, ...], tuple[WindowDim, ...], tuple[int, ...]]:
    """``(operand dims, window, window positions)`` of a select-and-scatter."""
    c.n_args(3)
    src, source = c.arg(0).dims, c.arg(1).dims
    window = c.inst.window()
    if len(window) != len(src):
        raise c.error(f"window= has {len(window)} dimensions, the operand has rank {len(src)}")
    if any(w.base_dilation != 1 or w.window_dilation != 1 for w in window):
        raise c.error("a select-and-scatter window has no dilation")
    c.same_dims(
        "the source", source, [windowed_extent(n, w) for n, w in zip(src, window, strict=True)]
    )
    c.same_dims("the init value", c.arg(2).dims, ())
    c.same_dims("the output", c.out().dims, src)
    return src, window, source


def _select_and_scatter_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Select-and-scatter (the gradient of max pooling; XLA has no indexing for it).

    Each window position selects one element of its window of the operand (``select``
    compares them all) and scatters its source element there. Output ``x`` therefore
    reads the source at every window covering ``x`` and the operand at every element of
    those windows (any of them may win the selection instead of ``x``): the window
    maps of reduce-window, inverted then composed. Padding is never selected.
    """
    if not window_ok(c):
        return [window_unknown(c)] * 3
    src, window, source = _select_and_scatter_check(c)
    covering = input_to_window(src, window, source)
    return [
        (compose(covering, window_to_input(src, window, source)),),
        (covering,),
        (scalar_read_map(src),),
    ]


def _select_and_scatter_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_select_and_scatter_out`.

    An operand element reaches every element of the windows covering it (it takes part
    in their selections); a source element reaches every element of its window (the
    one selected); the init value reaches every output element.
    """
    if not window_ok(c):
        return [window_unknown(c)]
    src, window, source = _select_and_scatter_check(c)
    to_input = window_to_input(src, window, source)
    if i == 0:
        return one(compose(input_to_window(src, window, source), to_input))
    return one(to_input if i == 1 else scalar_write_map(src))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "reduce": _reduce_out,
    "reduce-window": _reduce_window_out,
    "select-and-scatter": _select_and_scatter_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "reduce": _reduce_in,
    "reduce-window": _reduce_window_in,
    "select-and-scatter": _select_and_scatter_in,
}
