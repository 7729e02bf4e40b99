"""Deciding that two indexing maps are the same function on the same domain.

With Z3 (the ``verify`` extra) the question is one query: is there a point inside one
domain and not the other, or inside both where a result differs? Without Z3, a domain
of at most ``2**20`` points is enumerated. ``None`` means neither could answer.
"""

from __future__ import annotations

from itertools import product
from typing import Any, Final

from quorem.evaluate import evaluate
from quorem.indexing.map import IndexingMap

__all__ = ["decide_empty", "decide_equal", "in_domain", "points"]

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


def _z3_equal(a: IndexingMap, b: IndexingMap, timeout: float) -> bool | None:
    try:
        import z3  # noqa: PLC0415  (optional)

        from quorem.verify.validate import TermTranslator  # noqa: PLC0415
    except ImportError:
        return None
    tr = TermTranslator()
    defined: list[Any] = []

    def domain(m: IndexingMap) -> Any:
        if m.known_empty:
            return z3.BoolVal(False)
        conds = []
        for v in m.variables():
            x = z3.Int(v.name)
            conds += [x >= v.lo, x <= v.hi]
        for e, lo, hi in m.constraints:
            z = tr.translate(e, defined)
            conds += [z >= lo, z <= hi]
        return z3.And(*conds)

    da, db = domain(a), domain(b)
    differ = []
    if not (a.known_empty or b.known_empty):
        for ra, rb in zip(a.results, b.results, strict=True):
            differ.append(tr.translate(ra, defined) != tr.translate(rb, defined))
    s = z3.Solver()
    s.set("timeout", int(timeout * 1000))
    s.add(*tr.axioms)
    s.add(z3.Or(z3.Xor(da, db), z3.And(da, db, z3.Or(*differ) if differ else z3.BoolVal(False))))
    verdict = s.check()
    if verdict == z3.unsat:
        return True
    if verdict == z3.sat:
        # Replayed, so that a wrong encoding can never claim a difference.
        model = s.model()
        names = {v.name for v in (*a.variables(), *b.variables())}
        point = {n: model.eval(z3.Int(n), model_completion=True).as_long() for n in names}
        return not _differs_at(a, b, point)
    return None


def _differs_at(a: IndexingMap, b: IndexingMap, point: dict[str, int]) -> bool:
    ina, inb = in_domain(a, point), in_domain(b, point)
    if ina != inb:
        return True
    if not ina:
        return False
    return any(
        evaluate(x, point) != evaluate(y, point) for x, y in zip(a.results, b.results, strict=True)
    )


def decide_equal(a: IndexingMap, b: IndexingMap, *, timeout: float = 10.0) -> bool | None:
    """Whether maps with the same variable names are equal on their domains (None: unknown).

    Both maps must name their variables alike, position by position.
    """
    verdict = _z3_equal(a, b, timeout)
    if verdict is not None:
        return verdict
    pa, pb = points(a), points(b)
    if pa is None or pb is None:
        return None
    keys_a = {tuple(sorted(p.items())) for p in pa}
    keys_b = {tuple(sorted(p.items())) for p in pb}
    if keys_a != keys_b:
        return False
    return not any(_differs_at(a, b, p) for p in pa)


def decide_empty(m: IndexingMap, *, timeout: float = 10.0) -> bool | None:
    """Whether ``m``'s domain has no point (None: unknown)."""
    return decide_equal(m, IndexingMap.empty(m.n_dims, m.n_results), timeout=timeout)
