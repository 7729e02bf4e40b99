"""Maps of ``gather``, in any form of its dimension numbers (XLA's, generalised).

The operand is read at the slice start (a runtime variable unless constants or an iota
fix it) plus the output's offset; the indices at the output's batch position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term, as_term
from .context import OpContext, OpMaps, dims_text
from .dimension_numbers import index_dims, kept_window_dims
from .maps import OperandMaps, box, one
from .runtime_values import Value, fixed_value, value_fn


@dataclasses.dataclass(frozen=True, slots=True)
class _Gather:
    """A gather's dimension numbers, in any form (GatherSimplifier's or JAX's).

    ``starts[k]`` is the operand dimension index-vector component ``k`` starts;
    ``batch`` the output dimensions that are not offset dimensions, in order, matching
    ``idx_batch``, the dimensions of the indices other than ``ivd``; ``offsets[j]`` the
    operand dimension output dimension ``offset_dims[j]`` walks; ``batching`` pairs an
    operand batching dimension with the position in ``batch`` its index comes from.
    """

    src: tuple[int, ...]
    idx: tuple[int, ...]
    out: tuple[int, ...]
    ivd: int
    starts: list[int]
    sizes: tuple[int, ...]
    offset_dims: list[int]
    offsets: list[int]
    batch: list[int]
    idx_batch: list[int]
    batching: list[tuple[int, int]]

    def idx_index(self, d: Sequence[Term], k: Term | None) -> list[Term]:
        """The indices' index of output index ``d``'s start vector, component ``k``."""
        res = [d[b] for b in self.batch]
        if k is not None:
            res.insert(self.ivd, k)
        return res


def _gather_check(c: OpContext) -> _Gather:
    c.n_args(2)
    src, idx, out = c.arg(0).dims, c.arg(1).dims, c.out().dims
    r = len(src)
    ivd, starts, collapsed, obatch, ibatch = index_dims(
        c, idx, r, ("start_index_map", "collapsed_slice_dims"), ("operand", "start_indices")
    )
    sizes = c.inst.int_list("slice_sizes")
    if len(sizes) != r or any(not 0 <= k <= n for k, n in zip(sizes, src, strict=True)):
        raise c.error(f"slice_sizes must give {r} sizes within [{dims_text(src)}]")
    if any(sizes[j] > 1 for j in (*collapsed, *obatch)):
        raise c.error("collapsed and batching dimensions must have slice size 1")
    offsets, offset_dims = kept_window_dims(
        c, r, collapsed, obatch, ("offset_dims", len(out), "output", "collapsed")
    )
    batch = [j for j in range(len(out)) if j not in offset_dims]
    idx_batch = [j for j in range(len(idx)) if j != ivd]
    want = [0] * len(out)
    for j, o in zip(offsets, offset_dims, strict=True):
        want[o] = sizes[j]
    if len(batch) != len(idx_batch):
        raise c.error(f"the output has {len(batch)} batch dims, the indices {len(idx_batch)}")
    for b, j in zip(batch, idx_batch, strict=True):
        want[b] = idx[j]
    c.same_dims("the output", out, want)
    batching = [(o, idx_batch.index(i)) for o, i in zip(obatch, ibatch, strict=True)]
    for o, pos in batching:
        if src[o] != idx[idx_batch[pos]]:
            raise c.error(f"operand batching dim {o} and its indices dim differ in size")
    return _Gather(
        src, idx, out, ivd, starts, sizes, offset_dims, offsets, batch, idx_batch, batching
    )


def _gather_starts(
    c: OpContext, g: _Gather
) -> tuple[Value | None, list[int], list[tuple[int, int]], list[str]]:
    """The indices' value function, and the start components left runtime variables.

    A component is fixed where constants or an iota give it at every output index (a
    probe with the output's own variables), else a runtime variable in ``[0, n - size]``
    (gather clamps a start so the slice stays inside), named by the indices' element.
    """
    value = value_fn(c, c.operands[1])
    probe = IndexingMap.build(box(g.out), lambda d, s, rt: list(d)).results
    dyn: list[int] = []
    for k, j in enumerate(g.starts):
        comp = as_term(k) if g.ivd < len(g.idx) else None
        if fixed_value(value, g.idx_index(probe, comp), g.src[j] - g.sizes[j]) is None:
            dyn.append(k)
    bounds = [(0, g.src[g.starts[k]] - g.sizes[g.starts[k]]) for k in dyn]
    names = []
    for k in dyn:
        where = [f"d{b}" for b in g.batch]
        if g.ivd < len(g.idx):
            where.insert(g.ivd, str(k))
        names.append(f"{c.operands[1].name}[{', '.join(where)}] (operand 1 of {c.inst.name})")
    return value, dyn, bounds, names


def _gather_start(
    g: _Gather, value: Value | None, dyn: list[int], d: Sequence[Term], rt: Sequence[Term]
) -> list[Term]:
    """Per operand dimension, the start of the slice output index ``d`` lies in."""
    res: list[Term] = [as_term(0)] * len(g.src)
    for k, j in enumerate(g.starts):
        if k in dyn:
            res[j] = rt[dyn.index(k)]
        else:
            comp = as_term(k) if g.ivd < len(g.idx) else None
            v = fixed_value(value, g.idx_index(d, comp), g.src[j] - g.sizes[j])
            assert v is not None  # as probed
            res[j] = v
    for o, pos in g.batching:
        res[o] = d[g.batch[pos]]
    return res


def _gather_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Gather, in any form: XLA's ComputeOutputToInputGatherOpIndexing, generalised.

    XLA indexes only the form its GatherSimplifier produces (indices ``[N, K]``,
    ``index_vector_dim=1``, every operand dimension an offset dimension) and rewrites
    other gathers to it by reshaping and transposing the indices and the output. The
    maps here are those of that rewrite composed: output index ``d`` reads the operand
    at the slice start (component ``k`` of the index vector at ``d``'s batch
    position, clamped; a runtime variable unless constants or an iota give it) plus
    ``d``'s offset along the non-collapsed dimensions; batching dimensions (``vmap``)
    read the operand at the batch index itself. The indices are read at ``d``'s batch
    position, the whole index vector (a range variable).
    """
    g = _gather_check(c)
    value, dyn, bounds, names = _gather_starts(c, g)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        start = _gather_start(g, value, dyn, d, rt)
        for j, o in zip(g.offsets, g.offset_dims, strict=True):
            start[j] = start[j] + d[o]
        return start

    operand = IndexingMap.build(box(g.out), results, rt_vars=bounds, rt_sources=names)
    vector = g.idx[g.ivd] if g.ivd < len(g.idx) else 0
    indices = IndexingMap.build(
        box(g.out),
        lambda d, s, rt: g.idx_index(d, s[0] if vector else None),
        range_vars=[(0, vector - 1)] if vector else [],
    )
    return [(operand,), (indices,)]


def _gather_in(c: OpContext, i: int) -> list[OperandMaps]:
    """Gather input-to-output (XLA gives none): where an element can land.

    An operand element ``x`` lands at every batch position (range variables) whose slice
    holds it: the offset along each non-collapsed dimension is ``x - start``, which must
    lie in ``[0, size)``; along a collapsed dimension the start must equal ``x``; a
    batching dimension's batch index is ``x`` itself. Starts are runtime variables unless
    constants or an iota fix them (then the batch positions they give are exact). An
    element of the indices reaches every output element of its batch position.
    """
    g = _gather_check(c)
    if i == 1:

        def idx_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
            res: list[Term] = [as_term(0)] * len(g.out)
            for b, j in zip(g.batch, g.idx_batch, strict=True):
                res[b] = d[j]
            for n, o in enumerate(g.offset_dims):
                res[o] = s[n]
            return res

        return one(
            IndexingMap.build(
                box(g.idx), idx_results, range_vars=box([g.out[o] for o in g.offset_dims])
            )
        )
    value, dyn, bounds, names = _gather_starts(c, g)

    def out_index(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        res: list[Term] = [as_term(0)] * len(g.out)
        for n, b in enumerate(g.batch):
            res[b] = s[n]
        start = _gather_start(g, value, dyn, res, rt)
        for j, o in zip(g.offsets, g.offset_dims, strict=True):
            res[o] = d[j] - start[j]
        return res

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        res = [as_term(0)] * len(g.out)
        for n, b in enumerate(g.batch):
            res[b] = s[n]
        start = _gather_start(g, value, dyn, res, rt)
        cons: list[tuple[Term, int, int]] = []
        for j in range(len(g.src)):
            cons.append((d[j] - start[j], 0, g.sizes[j] - 1))
        return cons

    m = IndexingMap.build(
        box(g.src),
        out_index,
        range_vars=box([g.out[b] for b in g.batch]),
        rt_vars=bounds,
        rt_sources=names,
        constraints=constraints,
    )
    return one(m)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "gather": _gather_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "gather": _gather_in,
}
