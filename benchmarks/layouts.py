"""Index expressions of the shapes tiling and reshapes produce, built from shapes.

A *shape* is a tuple of dimension sizes, row-major. ``flat(indices, shape)`` is the
linear index; ``unflat(f, shape)`` the indices ``(f // stride) % dim`` a reshape to
``shape`` reads (the outermost without ``%``, as compilers emit it). Expressions are
text for ``quorem.parse``; variables are ``i0, i1, ...`` with bounds ``[0, dim - 1]``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

Bounds = dict[str, tuple[int, int]]


def strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides of ``shape``."""
    out = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        out[k] = out[k + 1] * shape[k + 1]
    return out


def flat(indices: Sequence[str], shape: Sequence[int]) -> str:
    """The linear index of ``indices`` (expressions) in ``shape``."""
    return " + ".join(f"({ix})*{s}" for ix, s in zip(indices, strides(shape), strict=True))


def unflat(f: str, shape: Sequence[int]) -> list[str]:
    """The indices in ``shape`` of the linear index ``f``."""
    out = []
    for k, (dim, s) in enumerate(zip(shape, strides(shape), strict=True)):
        q = f"({f})//{s}" if s > 1 else f"({f})"
        out.append(q if k == 0 else f"({q})%{dim}")
    return out


def loop_vars(shape: Sequence[int], prefix: str = "i") -> tuple[list[str], Bounds]:
    """One index variable per dimension of ``shape``, with its bounds."""
    names = [f"{prefix}{k}" for k in range(len(shape))]
    return names, {n: (0, d - 1) for n, d in zip(names, shape, strict=True)}


def reshape_chain(shapes: Sequence[Sequence[int]]) -> tuple[list[str], Bounds]:
    """Indices of ``shapes[-1]`` reached from loop variables over ``shapes[0]`` through
    each reshape in turn (every shape has the same number of elements)."""
    names, bounds = loop_vars(shapes[0])
    indices: list[str] = list(names)
    for prev, nxt in itertools.pairwise(shapes):
        indices = unflat(flat(indices, prev), nxt)
    return indices, bounds


def tiled(extent_tiles: Sequence[int], shape: Sequence[int]) -> tuple[list[str], Bounds]:
    """A loop over ``prod(extent_tiles)`` split into nested tiles (outer to inner), its
    flat index unflattened into ``shape`` (of the same size)."""
    assert math.prod(extent_tiles) == math.prod(shape)
    names, bounds = loop_vars(extent_tiles, "t")
    return unflat(flat(names, extent_tiles), shape), bounds


def affine_form(values: Mapping[tuple[int, ...], int], bounds: Bounds) -> bool:
    """Whether the table ``values`` (point -> value over the whole box) is affine."""
    names = sorted(bounds)
    origin = tuple(lo for lo, _ in (bounds[n] for n in names))
    base = values[origin]
    slopes = []
    for k, n in enumerate(names):
        if bounds[n][0] == bounds[n][1]:
            slopes.append(0)
            continue
        step = list(origin)
        step[k] += 1
        slopes.append(values[tuple(step)] - base)
    return all(
        v == base + sum(c * (x - o) for c, x, o in zip(slopes, p, origin, strict=True))
        for p, v in values.items()
    )
