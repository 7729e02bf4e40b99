"""Maps of ``scatter`` (StableHLO's definition; XLA has none).

An output element reads the inputs at its index, every update that may land there and
every index vector; starts are runtime variables unless constants or an iota fix them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term, as_term
from .context import OpContext, OpMaps, dims_text
from .dimension_numbers import index_dims, kept_window_dims
from .maps import OperandMaps, box, copies, identity_map
from .runtime_values import Value, raw_value, value_fn


@dataclasses.dataclass(frozen=True, slots=True)
class _Scatter:
    """A scatter's dimension numbers (StableHLO's names).

    ``n`` inputs (and as many updates and outputs) of dims ``src``; ``starts[k]`` is the
    operand dimension index-vector component ``k`` starts; ``scatter_dims`` are the
    update dimensions that pick a scatter position (matching ``idx_batch``, the
    dimensions of the indices other than ``ivd``); ``window_dims[j]`` walks operand
    dimension ``windows[j]``; ``batching`` pairs an operand batching dimension with the
    position in ``scatter_dims`` its index comes from; ``wsize`` is the update window's
    size along each operand dimension (1 where it is inserted or batching).
    """

    n: int
    src: tuple[int, ...]
    idx: tuple[int, ...]
    upd: tuple[int, ...]
    ivd: int
    starts: list[int]
    scatter_dims: list[int]
    idx_batch: list[int]
    window_dims: list[int]
    windows: list[int]
    batching: list[tuple[int, int]]
    wsize: list[int]

    def idx_index(self, pos: Sequence[Term], k: int) -> list[Term]:
        """The indices' index of component ``k`` of the start at scatter position ``pos``."""
        res = list(pos)
        if self.ivd < len(self.idx):
            res.insert(self.ivd, as_term(k))
        return res


def _scatter_check(c: OpContext) -> _Scatter:
    n = (len(c.operands) - 1) // 2
    if n < 1 or len(c.operands) != 2 * n + 1:
        raise c.error("expects inputs, the indices, then as many updates as inputs")
    src, idx, upd = c.arg(0).dims, c.arg(n).dims, c.arg(n + 1).dims
    outs = c.outputs()
    if len(outs) != n:
        raise c.error(f"has {n} inputs but {len(outs)} outputs")
    for i in range(n):
        c.same_dims(f"input {i} ({c.operands[i].name})", c.arg(i).dims, src)
        c.same_dims(f"update {i} ({c.operands[n + 1 + i].name})", c.arg(n + 1 + i).dims, upd)
        c.same_dims(f"output {i}", outs[i].dims, src)
    r = len(src)
    ivd, starts, inserted, obatch, ibatch = index_dims(
        c,
        idx,
        r,
        ("scatter_dims_to_operand_dims", "inserted_window_dims"),
        ("input", "scatter_indices"),
    )
    windows, window_dims = kept_window_dims(
        c, r, inserted, obatch, ("update_window_dims", len(upd), "update", "inserted")
    )
    scatter_dims = [j for j in range(len(upd)) if j not in window_dims]
    idx_batch = [j for j in range(len(idx)) if j != ivd]
    c.same_dims(
        "the update's scatter dims", [upd[j] for j in scatter_dims], [idx[j] for j in idx_batch]
    )
    wsize = [1] * r
    for j, w in zip(windows, window_dims, strict=True):
        wsize[j] = upd[w]
    if any(k > m for k, m in zip(wsize, src, strict=True)):
        raise c.error(
            f"the update window [{dims_text(wsize)}] exceeds the input [{dims_text(src)}]"
        )
    batching = [(o, idx_batch.index(i)) for o, i in zip(obatch, ibatch, strict=True)]
    for o, pos in batching:
        if src[o] != idx[idx_batch[pos]]:
            raise c.error(f"input batching dim {o} and its indices dim differ in size")
    return _Scatter(
        n,
        src,
        idx,
        upd,
        ivd,
        starts,
        scatter_dims,
        idx_batch,
        window_dims,
        windows,
        batching,
        wsize,
    )


def _scatter_starts(
    c: OpContext, g: _Scatter, probe: Sequence[Term], names: Sequence[str]
) -> tuple[Value | None, list[int], list[tuple[int, int]], list[str]]:
    """The indices' value function, and the start components left runtime variables.

    ``probe`` is a scatter position over the map's own variables (``names`` their
    names): a component is fixed where constants or an iota give it there. A runtime start lies in
    ``[0, n - window]``: a scatter whose window does not fit is skipped, not clamped,
    so only those starts write (and read) anything.
    """
    value = value_fn(c, c.operands[g.n])
    dyn = [k for k in range(len(g.starts)) if raw_value(value, g.idx_index(probe, k)) is None]
    bounds = [(0, g.src[g.starts[k]] - g.wsize[g.starts[k]]) for k in dyn]
    sources = []
    for k in dyn:
        where = list(names)
        if g.ivd < len(g.idx):
            where.insert(g.ivd, str(k))
        sources.append(
            f"{c.operands[g.n].name}[{', '.join(where)}] (operand {g.n} of {c.inst.name})"
        )
    return value, dyn, bounds, sources


def _scatter_start(
    g: _Scatter,
    value: Value | None,
    dyn: list[int],
    pos: Sequence[Term],
    rt: Sequence[Term],
) -> tuple[list[Term], list[tuple[Term, int, int]]]:
    """Per operand dimension, the window start of scatter position ``pos``.

    And the constraints that each fixed start lets the window fit (else the update is
    skipped).
    """
    res: list[Term] = [as_term(0)] * len(g.src)
    fits: list[tuple[Term, int, int]] = []
    for k, j in enumerate(g.starts):
        if k in dyn:
            res[j] = rt[dyn.index(k)]
        else:
            v = raw_value(value, g.idx_index(pos, k))
            assert v is not None  # as probed
            res[j] = v
            fits.append((v, 0, g.src[j] - g.wsize[j]))
    for o, p in g.batching:
        res[o] = pos[p]
    return res, fits


def _scatter_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Scatter output ``d``: the inputs at ``d``, and every update that lands there.

    XLA has no scatter indexing; this follows StableHLO's spec. An update at scatter
    position ``s`` (range variables) and window offset ``w`` lands at ``start(s) + w``,
    so output ``d`` reads the update at window offset ``d - start(s)`` where that lies
    in the window (constraints); the start is a runtime variable unless constants or an
    iota give it. Output ``d`` also reads every index vector (any of them may send an
    update to ``d``). The combiner of a variadic scatter sees every input and update,
    so output ``k`` reads all of them.
    """
    g = _scatter_check(c)
    c.out(k)
    npos = len(g.scatter_dims)
    positions = box([g.upd[u] for u in g.scatter_dims])
    probe = IndexingMap.build([], lambda d, s, rt: list(s), range_vars=positions).results
    value, dyn, bounds, names = _scatter_starts(c, g, probe, [f"s{p}" for p in range(npos)])

    def upd_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        start, _ = _scatter_start(g, value, dyn, s[:npos], rt)
        res: list[Term] = [as_term(0)] * len(g.upd)
        for p, u in enumerate(g.scatter_dims):
            res[u] = s[p]
        for j, u in zip(g.windows, g.window_dims, strict=True):
            res[u] = d[j] - start[j]
        return res

    def upd_constraints(
        d: list[Term], s: list[Term], rt: list[Term]
    ) -> list[tuple[Term, int, int]]:
        start, fits = _scatter_start(g, value, dyn, s[:npos], rt)
        inside = [(d[j] - start[j], 0, g.wsize[j] - 1) for j in range(len(g.src))]
        return inside + fits

    updates = IndexingMap.build(
        box(g.src),
        upd_results,
        range_vars=box([g.upd[u] for u in g.scatter_dims]),
        rt_vars=bounds,
        rt_sources=names,
        constraints=upd_constraints,
    )
    vector = g.idx[g.ivd] if g.ivd < len(g.idx) else 0

    def idx_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        pos = s[:npos]
        return [*pos[: g.ivd], s[npos], *pos[g.ivd :]] if vector else list(pos)

    indices = IndexingMap.build(
        box(g.src),
        idx_results,
        range_vars=box([g.upd[u] for u in g.scatter_dims] + ([vector] if vector else [])),
    )
    return [*copies(identity_map(g.src), g.n), (indices,), *copies(updates, g.n)]


def _scatter_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_scatter_out`: where an input, index or update element goes.

    An input element stays at its index; an update at ``(s, w)`` lands at
    ``start(s) + w`` (a start that lets the window fit); an element of the indices
    reaches every output element, as every output element reads it (a new value may
    send an update anywhere).
    """
    g = _scatter_check(c)
    if i < g.n:
        return copies(identity_map(g.src), g.n)
    if i == g.n:
        every = IndexingMap.build(box(g.idx), lambda d, s, rt: list(s), range_vars=box(g.src))
        return copies(every, g.n)
    probe = IndexingMap.build(box(g.upd), lambda d, s, rt: list(d)).results
    value, dyn, bounds, names = _scatter_starts(
        c, g, [probe[p] for p in g.scatter_dims], [f"d{p}" for p in g.scatter_dims]
    )

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        start, _ = _scatter_start(g, value, dyn, [d[p] for p in g.scatter_dims], rt)
        for j, u in zip(g.windows, g.window_dims, strict=True):
            start[j] = start[j] + d[u]
        return start

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return _scatter_start(g, value, dyn, [d[p] for p in g.scatter_dims], rt)[1]

    m = IndexingMap.build(
        box(g.upd), results, rt_vars=bounds, rt_sources=names, constraints=constraints
    )
    return copies(m, g.n)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "scatter": _scatter_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "scatter": _scatter_in,
}
