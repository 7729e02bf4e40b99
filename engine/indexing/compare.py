"""Deciding that two indexing maps are the same function on the same domain.

A solver given by the caller answers first (the prover's Z3 query,
:func:`quorem.verify.maps.z3_equal`: the engine itself never imports Z3); failing that, a
domain of at most ``2**20`` points is enumerated. ``None`` means neither could answer.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import Final

from ..evaluation import evaluate
from .map import IndexingMap

__all__ = ["MapSolver", "decide_empty", "decide_equal", "differs_at", "in_domain", "points"]

# A decision procedure for two maps named alike: equal (True), not (False), or unknown (None),
# within a timeout in seconds.
MapSolver = Callable[[IndexingMap, IndexingMap, float], bool | None]

_MAX_POINTS: Final = 2**20


def in_domain(m: IndexingMap, point: dict[str, int]) -> bool:
    """Whether ``point`` (a value per variable) satisfies the box and every constraint."""
    if m.known_empty:
        return False
    for v in m.variables():
        if not v.lo <= point[v.name] <= v.hi:
            return False
    return all(lo <= evaluate(e, point) <= hi for e, lo, hi in m.constraints)


def points(m: IndexingMap) -> list[dict[str, int]] | None:
    """Every point of ``m``'s domain, or None when the box has more than 2**20 points."""
    if m.known_empty:
        return []
    vs = list(m.variables())
    size = 1
    for v in vs:
        size *= max(0, v.hi - v.lo + 1)
    if size > _MAX_POINTS:
        return None
    names = [v.name for v in vs]
    out = []
    for p in product(*(range(v.lo, v.hi + 1) for v in vs)):
        env = dict(zip(names, p, strict=True))
        if in_domain(m, env):
            out.append(env)
    return out


def differs_at(a: IndexingMap, b: IndexingMap, point: dict[str, int]) -> bool:
    """Whether ``point`` is in one domain only, or in both with a result that differs."""
    ina, inb = in_domain(a, point), in_domain(b, point)
    if ina != inb:
        return True
    if not ina:
        return False
    return any(
        evaluate(x, point) != evaluate(y, point) for x, y in zip(a.results, b.results, strict=True)
    )


def decide_equal(
    a: IndexingMap, b: IndexingMap, *, timeout: float = 10.0, solver: MapSolver | None = None
) -> bool | None:
    """Whether maps with the same variable names are equal on their domains (None: unknown).

    Both maps must name their variables alike, position by position. ``solver`` is asked
    first; without it, or when it cannot answer, small domains are enumerated.
    """
    verdict = None if solver is None else solver(a, b, timeout)
    if verdict is not None:
        return verdict
    pa, pb = points(a), points(b)
    if pa is None or pb is None:
        return None
    keys_a = {tuple(sorted(p.items())) for p in pa}
    keys_b = {tuple(sorted(p.items())) for p in pb}
    if keys_a != keys_b:
        return False
    return not any(differs_at(a, b, p) for p in pa)


def decide_empty(
    m: IndexingMap, *, timeout: float = 10.0, solver: MapSolver | None = None
) -> bool | None:
    """Whether ``m``'s domain has no point (None: unknown); ``solver`` as for decide_equal."""
    empty = IndexingMap.empty(m.n_dims, m.n_results)
    return decide_equal(m, empty, timeout=timeout, solver=solver)
