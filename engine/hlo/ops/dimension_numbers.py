"""Dimension numbers shared by gather and scatter, checked against each other.

Which operand dimensions the index vectors start, which are dropped (collapsed or
inserted) or batching, and which window dimensions the rest map to.
"""

from __future__ import annotations

from collections.abc import Sequence

from .context import OpContext


def index_dims(
    c: OpContext, idx: Sequence[int], r: int, attrs: tuple[str, str], words: tuple[str, str]
) -> tuple[int, list[int], list[int], list[int], list[int]]:
    """A gather's or scatter's index dimension numbers, checked against each other.

    ``attrs`` names the start map and the dropped operand dims (gather: collapsed,
    scatter: inserted); ``words`` names the operand and the indices in messages. Returns
    ``(index_vector_dim, start map, dropped dims, operand batching, index batching)``.
    """
    starts_attr, dropped_attr = attrs
    operand, indices = words
    ivd = c.inst.int_attr("index_vector_dim")
    if not 0 <= ivd <= len(idx):
        raise c.error(f"index_vector_dim={ivd} must be within [0, {len(idx)}]")
    vector = idx[ivd] if ivd < len(idx) else 1
    starts = c.dims_attr(starts_attr, r)
    if len(starts) != vector:
        raise c.error(f"{starts_attr} has {len(starts)} entries, the index vectors {vector}")
    dropped = c.dims_attr(dropped_attr, r, ())
    obatch = c.dims_attr(f"{operand}_batching_dims", r, ())
    ibatch = c.dims_attr(f"{indices}_batching_dims", len(idx), ())
    if len(obatch) != len(ibatch) or ivd in ibatch or set(dropped) & set(obatch):
        raise c.error(f"{operand} and {indices} batching dims must pair up, apart from the rest")
    return ivd, starts, dropped, obatch, ibatch


def kept_window_dims(
    c: OpContext, r: int, dropped: list[int], obatch: list[int], attr: tuple[str, int, str, str]
) -> tuple[list[int], list[int]]:
    """The operand dims a gather's slice (scatter's update window) keeps, and where.

    ``attr`` is ``(name, rank of the shape it indexes, that shape's name, the dropped
    dims' name)``. Returns the kept operand dims and the window dims they map to.
    """
    name, rank, shape, dropped_word = attr
    kept = [j for j in range(r) if j not in dropped and j not in obatch]
    dims = c.dims_attr(name, rank)
    if dims != sorted(dims) or len(dims) != len(kept):
        raise c.error(
            f"{name} must list {len(kept)} increasing {shape} dims (one per operand "
            f"dimension neither {dropped_word} nor batching)"
        )
    return kept, dims
