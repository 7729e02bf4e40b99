"""Test helpers for indexing maps: random small maps, and a map's function by enumeration."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from quorem.indexing import IndexingMap
from quorem.indexing.compare import points
from quorem.term import Term

Image = dict[tuple[int, ...], frozenset[tuple[int, ...]]]


def image(m: IndexingMap) -> Image:
    """Each dim point of the domain and the set of result tuples its symbols reach.

    This is the map's meaning (a range variable enumerates, a runtime variable is
    any feasible value), independent of how its symbols are named or numbered.
    """
    pts = points(m)
    assert pts is not None, "domain too large to enumerate"
    from quorem.evaluation import evaluate

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


# Names a user may give that look like the simplifier's or the printer's own: default
# names in other roles (a dimension called s0), and the old internal ``__c0``.
TRICKY_NAMES = ["d0", "d1", "s0", "s1", "s2", "rt0", "rt1", "__c0", "__c1", "c0", "x"]


def renamed(m: IndexingMap, names: list[str]) -> IndexingMap:
    """``m`` with its variables renamed to ``names``, in order (a simultaneous renaming).

    A known-empty map comes back as it is: its intervals are empty, no term has them.
    """
    if m.known_empty:
        return m
    from quorem.indexing.map import Variable
    from quorem.term import var
    from quorem.walk import substitute

    old = list(m.variables())
    to = {v.name: var(n, v.lo, v.hi) for v, n in zip(old, names, strict=True)}

    def rn(vs: tuple[Variable, ...]) -> tuple[Variable, ...]:
        return tuple(Variable(to[v.name].arg[0], v.lo, v.hi) for v in vs)

    return IndexingMap(
        rn(m.dims),
        rn(m.range_vars),
        rn(m.rt_vars),
        tuple(substitute(t, to) for t in m.results),
        tuple((substitute(e, to), lo, hi) for e, lo, hi in m.constraints),
        m.known_empty,
    ).normalized()


@st.composite
def tricky_named_maps(draw: st.DrawFn) -> IndexingMap:
    """A small map whose variables have names that collide with default or internal ones."""
    m = draw(small_maps())
    n = len(list(m.variables()))
    names = draw(st.permutations(TRICKY_NAMES))[:n]
    return renamed(m, names)


@st.composite
def maps_with_unused_symbols(draw: st.DrawFn) -> IndexingMap:
    """A map whose results use its dims only, with constraints tying its symbols together.

    Narrow constraints on small linear forms and residues of the symbols: each is
    often satisfiable alone while together they cannot hold (or hold at one point
    only). Removing the unused symbols must keep the domain.
    """
    d_hi = draw(st.integers(0, 3))
    n_s = draw(st.integers(1, 3))
    s_bounds = []
    for _ in range(n_s):
        lo = draw(st.integers(-3, 2))
        s_bounds.append((lo, lo + draw(st.integers(0, 5))))
    n_c = draw(st.integers(2, 3))
    with_dim = draw(st.booleans())  # the first constraint may tie a symbol to the dim

    def form(atoms: list[Term]) -> Term:
        e = atoms[0] * 0
        for a in atoms:
            e = e + a * draw(st.integers(-2, 2))
        if draw(st.booleans()):
            e = (e + draw(st.integers(0, 3))) % draw(st.sampled_from([2, 3]))
        return e

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [d[0]]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        out = []
        for i in range(n_c):
            e = form(s + d if with_dim and i == 0 else s)
            lo = draw(st.integers(-3, 3))
            out.append((e, lo, lo + draw(st.integers(0, 1))))
        return out

    build: Callable[..., IndexingMap] = IndexingMap.build
    return build([(0, d_hi)], results, range_vars=s_bounds, constraints=constraints)


@st.composite
def maps_with_constrained_subterms(draw: st.DrawFn) -> IndexingMap:
    """A map whose results contain its constrained expressions, whole or disguised.

    ``(e + k * n) mod n`` simplifies to ``e mod n``: a constraint on ``e mod n`` then
    applies only after the result is simplified (the simplifier must still get there
    in one call).
    """
    d_hi = draw(st.integers(0, 15))
    s_hi = draw(st.integers(0, 3))
    n = draw(st.sampled_from([2, 3, 4, 8]))
    k = draw(st.integers(-2, 2))
    lo = draw(st.integers(0, n - 1))
    hi = draw(st.integers(lo, n - 1))
    div = draw(st.sampled_from([2, 3, 4]))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        inner = (d[0] + k * n) % n
        return [(inner + s[0]) // div, inner * draw(st.sampled_from([1, -1, 2])) + s[0]]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [(d[0] % n, lo, hi)]

    build: Callable[..., IndexingMap] = IndexingMap.build
    return build([(0, d_hi)], results, range_vars=[(0, s_hi)], constraints=constraints)
