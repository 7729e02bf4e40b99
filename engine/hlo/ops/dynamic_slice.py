"""Maps of ``dynamic-slice`` and ``dynamic-update-slice``.

An offset is a runtime variable in the range HLO clamps it to, unless constants or an
iota fix it (:mod:`quorem.hlo.ops.runtime_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from .context import OpContext, OpMaps, dims_text
from .maps import (
    OperandMaps,
    box,
    copies,
    identity_map,
    one,
    scalar_read_map,
    scalar_write_map,
)
from .runtime_values import fixed_value, value_fn


def _offsets(
    c: OpContext, first: int, src: Sequence[int], sizes: Sequence[int]
) -> tuple[list[tuple[int, int]], list[str], list[Term | None]]:
    """Runtime-variable bounds and sources of dynamic offsets, and the offsets fixed.

    HLO clamps a start index so the slice stays inside the operand: offset ``k`` lies in
    ``[0, src_k - size_k]``. An offset whose value a constant fixes (traced back, see
    :func:`value_fn`) is that value, clamped; the others are runtime variables.
    """
    rt_bounds: list[tuple[int, int]] = []
    sources: list[str] = []
    fixed: list[Term | None] = []
    for j, (n, size) in enumerate(zip(src, sizes, strict=True)):
        op = c.operands[first + j]
        if c.arg(first + j).dims:
            raise c.error(f"offset operand {op.name} must be a scalar")
        value = fixed_value(value_fn(c, op), [], n - size)
        fixed.append(value)
        if value is None:
            rt_bounds.append((0, n - size))
            sources.append(f"{op.name} (operand {first + j} of {c.inst.name})")
    return rt_bounds, sources, fixed


def _rt_terms(fixed: list[Term | None], rt: list[Term]) -> list[Term]:
    it = iter(rt)
    return [next(it) if v is None else v for v in fixed]


def _dynamic_slice_check(
    c: OpContext,
) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]], list[str], list[Term | None]]:
    if not c.operands:
        raise c.error("needs an operand")
    src = c.arg(0).dims
    c.n_args(1 + len(src))
    out = c.out().dims
    if len(out) != len(src):
        raise c.error(f"the output has rank {len(out)}, the operand rank {len(src)}")
    sizes = c.inst.int_list("dynamic_slice_sizes", out)
    c.same_dims("the output", out, sizes)
    if any(s > n for s, n in zip(sizes, src, strict=True)):
        raise c.error(f"slice sizes [{dims_text(sizes)}] exceed the operand [{dims_text(src)}]")
    rt_bounds, sources, consts = _offsets(c, 1, src, sizes)
    return src, out, rt_bounds, sources, consts


def _dynamic_slice_out(c: OpContext, k: int) -> list[OperandMaps]:
    """XLA's ComputeOutputToInputDynamicSliceOpIndexing: ``d + offset``, offsets rt vars."""
    src, out, rt_bounds, sources, consts = _dynamic_slice_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    m = IndexingMap.build(box(out), results, rt_vars=rt_bounds, rt_sources=sources)
    return copies(m, 1) + copies(scalar_read_map(out), len(src))


def _dynamic_slice_in(c: OpContext, i: int) -> list[OperandMaps]:
    """Operand index ``x`` reaches output ``x - offset`` where that is inside the slice.

    The inverse of :func:`_dynamic_slice_out` (XLA gives none): the same runtime
    variables (or fixed offsets), with ``0 <= x - offset < size`` as constraints. An
    offset operand reaches every output element.
    """
    src, out, rt_bounds, sources, consts = _dynamic_slice_check(c)
    if i > 0:
        return one(scalar_write_map(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x - o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [(r, 0, n - 1) for r, n in zip(results(d, s, rt), out, strict=True)]

    m = IndexingMap.build(
        box(src), results, rt_vars=rt_bounds, rt_sources=sources, constraints=constraints
    )
    return one(m)


def _dus_check(
    c: OpContext,
) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]], list[str], list[Term | None]]:
    if len(c.operands) < 2:
        raise c.error("needs an operand and an update")
    out = c.out().dims
    c.n_args(2 + len(out))
    c.same_dims("the operand", c.arg(0).dims, out)
    upd = c.arg(1).dims
    if len(upd) != len(out) or any(u > n for u, n in zip(upd, out, strict=True)):
        raise c.error(f"the update [{dims_text(upd)}] does not fit in [{dims_text(out)}]")
    rt_bounds, sources, consts = _offsets(c, 2, out, upd)
    return out, upd, rt_bounds, sources, consts


def _dus_out(c: OpContext, k: int) -> list[OperandMaps]:
    out, _, rt_bounds, sources, consts = _dus_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x - o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    # As XLA: the operand map is the identity (the update hides part of it) and the
    # update map has no constraint keeping its result inside the update.
    upd_map = IndexingMap.build(box(out), results, rt_vars=rt_bounds, rt_sources=sources)
    return (
        copies(identity_map(out), 1) + copies(upd_map, 1) + copies(scalar_read_map(out), len(out))
    )


def _dus_in(c: OpContext, i: int) -> list[OperandMaps]:
    out, upd, rt_bounds, sources, consts = _dus_check(c)
    if i == 0:
        return one(identity_map(out))
    if i >= 2:
        return one(scalar_write_map(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    return one(IndexingMap.build(box(upd), results, rt_vars=rt_bounds, rt_sources=sources))


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "dynamic-slice": _dynamic_slice_out,
    "dynamic-update-slice": _dus_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "dynamic-update-slice": _dus_in,
    "dynamic-slice": _dynamic_slice_in,
}
