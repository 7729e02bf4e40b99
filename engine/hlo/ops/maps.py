"""The values op maps are made of: per-operand map sets, unknown indexing, common maps.

:data:`OperandMaps` is the set of maps one operand (or output) gets; an :class:`Unknown`
in it says why no map is given. The identity and scalar maps, and the boxes of a shape,
are the pieces every op family builds from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from ...indexing.map import IndexingMap


@dataclasses.dataclass(frozen=True, slots=True)
class Unknown:
    """Unknown indexing: no map is given, and ``reason`` says why.

    The reason names the instruction and what it lacks (an opaque custom-call target, a
    loop whose trip count is data, a form no map models), so a user sees what blocks a
    composition, not only that something does. It is falsy, as the ``None`` it
    replaces was: ``[m for m in maps if m]`` keeps the known maps.
    """

    reason: str

    def __bool__(self) -> Literal[False]:
        return False


OperandMaps = tuple[IndexingMap | Unknown, ...]


def box(dims: Sequence[int]) -> list[tuple[int, int]]:
    """The bounds ``[0, n - 1]`` of each dimension of a shape of dims ``dims``."""
    return [(0, n - 1) for n in dims]


def identity_map(dims: Sequence[int]) -> IndexingMap:
    """``(d...) -> (d...)`` over the box of ``dims``."""
    return IndexingMap.build(box(dims), lambda d, s, rt: list(d))


def scalar_read_map(dims: Sequence[int]) -> IndexingMap:
    """``(d...) -> ()``: every index of ``dims`` reads the one element of a scalar."""
    return IndexingMap.build(box(dims), lambda d, s, rt: [])


def scalar_write_map(dims: Sequence[int]) -> IndexingMap:
    """``()[s...] -> (s...)``: a scalar reaches every index of ``dims``."""
    return IndexingMap.build([], lambda d, s, rt: list(s), range_vars=box(dims))


def one(m: IndexingMap) -> list[OperandMaps]:
    """One operand (or output), through the one map ``m``."""
    return [(m,)]


def copies(m: IndexingMap, n: int) -> list[OperandMaps]:
    """``n`` operands, each read through the one map ``m``."""
    return [(m,) for _ in range(n)]
