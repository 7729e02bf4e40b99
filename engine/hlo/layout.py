"""Physical layouts as indexing maps: logical index to memory-order index and back.

A shape ``f32[10,20,30]{2,0,1}`` lists its layout minor-to-major: dimension 2 (size 30)
varies fastest in memory, then 0, then 1. Its *physical index* lists the logical
dimensions major-to-minor, the reversed layout ``(1, 0, 2)``: it is the index of the
same element in the row-major array ``f32[20,10,30]``.

A tiled layout ``f32[4,6]{1,0:T(2,4)}`` is read as XLA's layout documentation
(``docs/tiled_layout.md``) defines it. The tile applies to the *minor* dimensions of the
major-to-minor shape: a tile ``(t_1..t_k)`` turns the last ``k`` dimensions ``n_j`` into
``ceil(n_j / t_j)`` tile positions followed by the ``k`` tile sizes, and the index ``i_j``
into ``i_j // t_j`` and, in the tile, ``i_j % t_j``. The shape is padded up to whole
tiles. With several levels, ``T(8,128)(2,1)``, each next tile applies to the minor
dimensions of the shape the previous level made; a tile of higher rank than the shape
sees the shape with leading dimensions of size 1 added. The physical index is then the
row-major index of the tiled (padded) shape: ``(4/2, 6/4 -> 2, 2, 4)`` above, and element
``(3, 5)`` is at ``(1, 1, 1, 1)``.

The inverse map reads the padded shape: a physical index in a tile's padding maps to no
element, which its constraints (``outer * t + inner in [0, n - 1]``) say. A tile size
``*`` (XLA's combined dimension) is refused with an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import QuoremError
from ..indexing.map import IndexingMap
from ..term import Term, as_term
from .parse import COMBINED_TILE_DIM, Shape

__all__ = ["logical_to_physical", "physical_to_logical", "tiled_dims"]


def _box(dims: Sequence[int]) -> list[tuple[int, int]]:
    return [(0, n - 1) for n in dims]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _levels(shape: Shape) -> list[tuple[list[int], tuple[int, ...], int]]:
    """Per tiling level: the shape it tiles, its tile, and how many size-1 dims it adds."""
    if any(COMBINED_TILE_DIM in t for t in shape.tiles):
        # XLA's combined dimension merges dimensions of the tiled shape: not modelled,
        # and a map that ignored it would say where the element is not.
        raise QuoremError(f"the tile size '*' (combined dimensions) of {shape} is not supported")
    dims = list(shape.physical_dims())
    out = []
    for tile in shape.tiles:
        added = max(0, len(tile) - len(dims))
        dims = [1] * added + dims
        out.append((dims, tile, added))
        lead = len(dims) - len(tile)
        tiled = [_ceil_div(n, t) for n, t in zip(dims[lead:], tile, strict=True)]
        dims = dims[:lead] + tiled + list(tile)
    return out


def tiled_dims(shape: Shape) -> tuple[int, ...]:
    """The sizes of the physical index space: major-to-minor, tiled and padded."""
    dims = list(shape.physical_dims())
    for level_dims, tile, _ in _levels(shape):
        lead = len(level_dims) - len(tile)
        tiled = [_ceil_div(n, t) for n, t in zip(level_dims[lead:], tile, strict=True)]
        dims = level_dims[:lead] + tiled + list(tile)
    return tuple(dims)


def _tile_index(index: list[Term], tile: tuple[int, ...], dims: list[int]) -> list[Term]:
    """One level of tiling: the minor ``len(tile)`` indices split into outer and inner."""
    lead = len(index) - len(tile)
    outer: list[Term] = []
    inner: list[Term] = []
    for x, t, n in zip(index[lead:], tile, dims[lead:], strict=True):
        if t == 1:  # x // 1 and x % 1, written as what they are
            outer.append(x)
            inner.append(as_term(0))
        elif t >= n:  # the whole dimension fits in one tile
            outer.append(as_term(0))
            inner.append(x)
        else:
            outer.append(x // t)
            inner.append(x % t)
    return index[:lead] + outer + inner


def logical_to_physical(shape: Shape) -> IndexingMap:
    """The map from a logical index of the array ``shape`` to its physical index.

    Its dims are the logical dimensions; its results index the major-to-minor, tiled
    shape (:func:`tiled_dims`). The identity for the default, untiled layout.
    """
    order = shape.physical_order()
    levels = _levels(shape)

    def results(d: list[Term], s: object, rt: object) -> list[Term]:
        index = [d[k] for k in order]
        for dims, tile, added in levels:
            index = _tile_index([as_term(0)] * added + index, tile, dims)
        return index

    return IndexingMap.build(_box(shape.dims), results)


def physical_to_logical(shape: Shape) -> IndexingMap:
    """The map from a physical index of the array ``shape`` to its logical index.

    The inverse of :func:`logical_to_physical`: its dims index the tiled shape
    (:func:`tiled_dims`), its results the logical index. For a tiled layout, the
    constraints exclude the padding that rounds each dimension up to whole tiles.
    """
    order = shape.physical_order()
    position = {k: i for i, k in enumerate(order)}
    levels = _levels(shape)

    def untile(d: list[Term]) -> tuple[list[Term], list[tuple[Term, int, int]]]:
        index = list(d)
        constraints: list[tuple[Term, int, int]] = []
        for dims, tile, added in reversed(levels):
            k = len(tile)
            lead = len(index) - 2 * k
            outer, inner = index[lead : lead + k], index[lead + k :]
            merged: list[Term] = []
            for o, i, t, n in zip(outer, inner, tile, dims[len(dims) - k :], strict=True):
                x = o * t + i if t > 1 else o
                if t > 1 and _ceil_div(n, t) * t != n:
                    constraints.append((x, 0, n - 1))  # not in a tile's padding
                merged.append(x)
            index = index[:lead] + merged
            for x, n in zip(index[:added], dims[:added], strict=True):
                constraints.append((x, 0, n - 1))  # an added size-1 dimension: index 0
            index = index[added:]
        return index, constraints

    def results(d: list[Term], s: object, rt: object) -> list[Term]:
        index, _ = untile(d)
        return [index[position[k]] for k in range(shape.rank)]

    return IndexingMap.build(
        _box(tiled_dims(shape)), results, constraints=lambda d, s, rt: untile(d)[1]
    )
