"""Physical layouts as indexing maps: logical index to memory-order index and back.

A shape ``f32[10,20,30]{2,0,1}`` lists its layout minor-to-major: dimension 2 (size 30)
varies fastest in memory, then 0, then 1. Its *physical index* lists the logical
dimensions major-to-minor, the reversed layout ``(1, 0, 2)``: it is the index of the
same element in the row-major array ``f32[20,10,30]``.
"""

from __future__ import annotations

from quorem.engine.indexing.hlo import Shape
from quorem.engine.indexing.map import IndexingMap

__all__ = ["logical_to_physical", "physical_to_logical"]


def _box(dims: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(0, n - 1) for n in dims]


def logical_to_physical(shape: Shape) -> IndexingMap:
    """The map from a logical index of the array ``shape`` to its physical index.

    Its dims are the logical dimensions; result ``i`` is the logical dimension that is
    ``i``-th in major-to-minor order. The identity for the default layout.
    """
    order = shape.physical_order()
    return IndexingMap.build(_box(shape.dims), lambda d, s, rt: [d[k] for k in order])


def physical_to_logical(shape: Shape) -> IndexingMap:
    """The map from a physical index of the array ``shape`` to its logical index.

    The inverse of :func:`logical_to_physical`: its dims are the physical dimensions
    (major-to-minor), its results the logical index.
    """
    order = shape.physical_order()
    position = {k: i for i, k in enumerate(order)}
    return IndexingMap.build(
        _box(shape.physical_dims()), lambda d, s, rt: [d[position[k]] for k in range(shape.rank)]
    )
