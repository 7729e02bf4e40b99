"""Test helpers for indexing maps: random small maps, and a map's function by enumeration."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st
from quorem.engine.indexing import IndexingMap
from quorem.engine.indexing.compare import points
from quorem.engine.term import Term

Image = dict[tuple[int, ...], frozenset[tuple[int, ...]]]


def image(m: IndexingMap) -> Image:
    """Each dim point of the domain and the set of result tuples its symbols reach.

    This is the map's meaning (a range variable enumerates, a runtime variable is
    any feasible value), independent of how its symbols are named or numbered.
    """
    pts = points(m)
    assert pts is not None, "domain too large to enumerate"
    from quorem.engine.evaluate import evaluate

    out: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for p in pts:
        d = tuple(p[v.name] for v in m.dims)
        out.setdefault(d, set()).add(tuple(evaluate(t, p) for t in m.results))
    return {k: frozenset(v) for k, v in out.items()}


def _affine(draw: st.DrawFn, atoms: list[Term], depth: int) -> Term:
    """A random quasi-affine expression over ``atoms``."""
    kind = draw(st.integers(0, 5 if depth > 0 else 1))
    if kind == 0:
        return draw(st.sampled_from(atoms))
    if kind == 1:
        return atoms[0] * 0 + draw(st.integers(-6, 6))
    a = _affine(draw, atoms, depth - 1)
    if kind == 2:
        return a + _affine(draw, atoms, depth - 1)
    if kind == 3:
        return a * draw(st.sampled_from([-3, -2, -1, 2, 3, 4]))
    if kind == 4:
        return a // draw(st.sampled_from([-3, 2, 3, 4, 8]))
    return a % draw(st.sampled_from([2, 3, 4, 6]))


@st.composite
def small_maps(
    draw: st.DrawFn,
    n_dims: int | None = None,
    n_results: int | None = None,
    dim_bounds: list[tuple[int, int]] | None = None,
) -> IndexingMap:
    """A random map with at most ~600 domain points, results and constraints included."""
    nd = draw(st.integers(1, 2)) if n_dims is None else n_dims
    ns = draw(st.integers(0, 1))
    if dim_bounds is None:
        dim_bounds = []
        for _ in range(nd):
            lo = draw(st.integers(-4, 3))
            dim_bounds.append((lo, lo + draw(st.integers(0, 7))))
    sym_bounds = []
    for _ in range(ns):
        lo = draw(st.integers(-3, 2))
        sym_bounds.append((lo, lo + draw(st.integers(0, 4))))
    nr = draw(st.integers(0, 2)) if n_results is None else n_results
    nc = draw(st.integers(0, 2))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [_affine(draw, d + s, 2) for _ in range(nr)]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        out = []
        for _ in range(nc):
            e = _affine(draw, d + s, 2)
            lo = draw(st.integers(-8, 8))
            out.append((e, lo, lo + draw(st.integers(0, 10))))
        return out

    build: Callable[..., IndexingMap] = IndexingMap.build
    return build(dim_bounds, results, range_vars=sym_bounds, constraints=constraints)
