"""Indexing maps decided by Z3: equality of two maps on their domains.

The engine decides map equality by simplification and, for small domains, enumeration
(:mod:`quorem.indexing.compare`); it never imports Z3. This module gives it the solver:
:func:`maps_equal` is :func:`quorem.indexing.simplify.maps_equal` with :func:`z3_equal`.
"""

from __future__ import annotations

from typing import Any

import z3

from quorem.indexing.compare import differs_at
from quorem.indexing.map import IndexingMap
from quorem.indexing.simplify import maps_equal as _maps_equal

from .validate import TermTranslator

__all__ = ["maps_equal", "z3_equal"]


def maps_equal(a: IndexingMap, b: IndexingMap, *, timeout: float = 10.0) -> bool:
    """Whether ``a`` and ``b`` are the same function on the same domain, Z3 deciding.

    As :func:`quorem.indexing.simplify.maps_equal`, with Z3 asked where simplification
    does not settle it; raises :class:`~quorem.indexing.map.IndexingMapError` when undecided.
    """
    return _maps_equal(a, b, timeout=timeout, solver=z3_equal)


def z3_equal(a: IndexingMap, b: IndexingMap, timeout: float) -> bool | None:
    """Whether maps named alike are equal on their domains, by one Z3 query (None: unknown).

    Is there a point inside one domain and not the other, or inside both where a result
    differs? A point Z3 finds is replayed by evaluation, so a wrong encoding can never
    claim a difference. A :data:`~quorem.indexing.compare.MapSolver`.
    """
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
        return not differs_at(a, b, point)
    return None
