"""Composition of indexing maps: the map of a producer read through a consumer.

``compose(consumer, producer)`` is the producer's map applied after the consumer's: a
point of the consumer's domain goes to the consumer's result, an index of the
intermediate tensor, which the producer maps on. This is XLA's
``ComposeIndexingMaps(first=consumer, second=producer)``.
"""

from __future__ import annotations

from ..term import Term
from ..walk import substitute
from .map import IndexingMap, IndexingMapError, Variable

__all__ = ["compose"]


def _renamed(vs: tuple[Variable, ...], prefix: str, start: int) -> tuple[Variable, ...]:
    return tuple(Variable(f"{prefix}{start + i}", v.lo, v.hi, v.source) for i, v in enumerate(vs))


def compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """The map ``producer ∘ consumer``: the consumer's dims to the producer's results.

    Its variables are the consumer's dims (``d0..``), then the range variables of the
    producer and then of the consumer (``s0..``), and likewise the runtime variables
    (``rt0..``), as XLA orders them. Its constraints are both maps' constraints (the
    producer's with its dims replaced by the consumer's results) and, for each consumer
    result, ``result in [lo, hi]`` of the producer dimension it feeds. Raises
    :class:`~quorem.indexing.map.IndexingMapError` when the consumer's results
    do not match the producer's dims in number. The result is not simplified.
    """
    if consumer.n_results != producer.n_dims:
        raise IndexingMapError(
            f"cannot compose: the consumer has {consumer.n_results} results, "
            f"the producer {producer.n_dims} dimensions"
        )
    if consumer.known_empty or producer.known_empty:
        return IndexingMap.empty(consumer.n_dims, producer.n_results)
    dims = _renamed(consumer.dims, "d", 0)
    p_range = _renamed(producer.range_vars, "s", 0)
    c_range = _renamed(consumer.range_vars, "s", len(p_range))
    p_rt = _renamed(producer.rt_vars, "rt", 0)
    c_rt = _renamed(consumer.rt_vars, "rt", len(p_rt))
    # Consumer names to the new names (a simultaneous renaming: new terms are built
    # with the new variables, so no name is replaced twice).
    c_new = {
        v.name: w.term()
        for v, w in zip(
            consumer.dims + consumer.range_vars + consumer.rt_vars,
            dims + c_range + c_rt,
            strict=True,
        )
    }
    c_results = [substitute(t, c_new) for t in consumer.results]
    p_new: dict[str, Term] = {v.name: r for v, r in zip(producer.dims, c_results, strict=True)}
    p_new.update(
        (v.name, w.term())
        for v, w in zip(producer.range_vars + producer.rt_vars, p_range + p_rt, strict=True)
    )
    results = tuple(substitute(t, p_new) for t in producer.results)
    constraints = [(substitute(e, c_new), lo, hi) for e, lo, hi in consumer.constraints]
    constraints += [(substitute(e, p_new), lo, hi) for e, lo, hi in producer.constraints]
    constraints += [(r, v.lo, v.hi) for r, v in zip(c_results, producer.dims, strict=True)]
    return IndexingMap(
        dims, p_range + c_range, p_rt + c_rt, results, tuple(constraints)
    ).normalized()
