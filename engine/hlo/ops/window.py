"""Window maps shared by reduce-window, select-and-scatter and convolution.

From a window position to the input elements its window covers (over the padded,
base-dilated input) and back, and whether a ``window=`` attribute is one the maps read.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...indexing.compose import compose
from ...indexing.map import IndexingMap
from ...term import Term
from ..parse import PadDim, WindowDim
from .context import OpContext
from .maps import OperandMaps, box
from .slicing import pad_map


def window_ok(c: OpContext) -> bool:
    """Whether every field of ``window=`` is one indexing reads (else: unknown indexing)."""
    return "window" not in c.inst.attrs or not c.inst.window_unknown_fields()


def window_unknown(c: OpContext) -> OperandMaps:
    """An unknown map naming the fields of ``window=`` that no map models."""
    fields = ", ".join(c.inst.window_unknown_fields())
    return c.unknown(f"window= has field(s) {fields} that no map models")


def windowed_extent(n: int, w: WindowDim) -> int:
    """The number of window positions along a dimension of ``n`` elements (HLO's rule)."""
    padded = w.pad_lo + w.pad_hi + (n - 1) * w.base_dilation + 1 if n > 0 else w.pad_lo + w.pad_hi
    extent = (w.size - 1) * w.window_dilation + 1
    return (padded - extent) // w.stride + 1 if padded >= extent else 0


def window_to_input(
    src: Sequence[int], window: Sequence[WindowDim], out: Sequence[int]
) -> IndexingMap:
    """From a window position (of ``out``) to the input elements its window covers.

    XLA's ComposeWindowIndexingMap: the window over the padded, base-dilated input,
    composed with pad indexing back to the input's own elements.
    """
    # Windows of size 1 need no range variable (XLA does the same).
    wide = [j for j, w in enumerate(window) if w.size > 1]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [
            d[j] * w.stride + (s[wide.index(j)] * w.window_dilation if j in wide else 0)
            for j, w in enumerate(window)
        ]

    windowed = IndexingMap.build(
        box(out), results, range_vars=[(0, window[j].size - 1) for j in wide]
    )
    pads = [PadDim(w.pad_lo, w.pad_hi, w.base_dilation - 1) for w in window]
    return compose(windowed, pad_map(src, pads))


def window_covering(
    x: Term, w: WindowDim, m: int, s: Term | None
) -> tuple[Term, list[tuple[Term, int, int]]]:
    """The window position covering input index ``x`` along one dimension.

    And its constraints (see :func:`input_to_window`); ``s`` is the window index where
    windows overlap (a range variable), None where they do not.
    """
    p = x * w.base_dilation + w.pad_lo - (s * w.window_dilation if s is not None else 0)
    result = p // w.stride if w.stride != 1 else p
    if s is not None:
        cons = [(p, 0, (m - 1) * w.stride)]
        if w.stride != 1:
            cons.append((p % w.stride, 0, 0))
        return result, cons
    cons = [(p, 0, m * w.stride - 1)]
    if w.stride != 1:
        last = (w.size - 1) * w.window_dilation
        if last < w.stride - 1:
            cons.append((p % w.stride, 0, last))
        if w.window_dilation > 1 and w.size > 1:
            cons.append((p % w.stride % w.window_dilation, 0, 0))
    return result, cons


def overlapping_dims(window: Sequence[WindowDim]) -> list[int]:
    """The dimensions whose windows overlap: an input is in several, a range variable."""
    return [j for j, w in enumerate(window) if (w.size - 1) * w.window_dilation >= w.stride]


def input_to_window(
    src: Sequence[int], window: Sequence[WindowDim], out: Sequence[int]
) -> IndexingMap:
    """The inverse of :func:`window_to_input`: the window positions covering an input.

    Input ``x`` sits at padded position ``p = x*base_dilation + pad_lo``; window position
    ``o`` covers ``o*stride + w*window_dilation`` for window index ``w``, so ``x`` is in
    the windows ``o = (p - w*window_dilation) / stride`` for each ``w`` (a range
    variable) where the division is exact and ``o`` is a position of ``out``
    (constraints). Where windows do not overlap (``(size-1)*window_dilation < stride``,
    as in pooling) there is at most one: ``o = p / stride``, the remainder a window
    index times the dilation (constraints), with no range variable.
    """
    overlap = overlapping_dims(window)

    def covering(d: list[Term], s: list[Term]) -> list[tuple[Term, list[tuple[Term, int, int]]]]:
        return [
            window_covering(d[j], w, m, s[overlap.index(j)] if j in overlap else None)
            for j, (w, m) in enumerate(zip(window, out, strict=True))
        ]

    return IndexingMap.build(
        box(src),
        lambda d, s, rt: [r for r, _ in covering(d, s)],
        range_vars=[(0, window[j].size - 1) for j in overlap],
        constraints=lambda d, s, rt: [c for _, cons in covering(d, s) for c in cons],
    )
