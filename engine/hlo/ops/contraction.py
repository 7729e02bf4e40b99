"""Maps of contractions: ``dot``, ``scaled-dot`` and ``convolution``.

Contracting dimensions (and a convolution's window and input features) become range
variables; an input-to-output map reaches every element of the other side's free
dimensions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term, as_term
from ..parse import ConvLabels, WindowDim
from .context import OpContext, OpMaps, dims_text
from .maps import OperandMaps, box, one
from .window import (
    overlapping_dims,
    window_covering,
    window_ok,
    window_unknown,
    windowed_extent,
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Dot:
    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    lb: list[int]
    rb: list[int]
    lc: list[int]
    rc: list[int]
    lf: list[int]
    rf: list[int]


def _dot_check(c: OpContext, n_operands: int = 2) -> _Dot:
    c.n_args(n_operands)
    lhs, rhs = c.arg(0).dims, c.arg(1).dims
    lb = c.dims_attr("lhs_batch_dims", len(lhs), ())
    rb = c.dims_attr("rhs_batch_dims", len(rhs), ())
    lc = c.dims_attr("lhs_contracting_dims", len(lhs), ())
    rc = c.dims_attr("rhs_contracting_dims", len(rhs), ())
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise c.error("lhs and rhs need as many batch dims, and as many contracting dims")
    if set(lb) & set(lc) or set(rb) & set(rc):
        raise c.error("a dimension cannot be both batch and contracting")
    c.same_dims("rhs batch sizes", [rhs[j] for j in rb], [lhs[j] for j in lb])
    c.same_dims("rhs contracting sizes", [rhs[j] for j in rc], [lhs[j] for j in lc])
    lf = [j for j in range(len(lhs)) if j not in lb and j not in lc]
    rf = [j for j in range(len(rhs)) if j not in rb and j not in rc]
    want = [lhs[j] for j in lb] + [lhs[j] for j in lf] + [rhs[j] for j in rf]
    c.same_dims("the output", c.out().dims, want)
    return _Dot(lhs, rhs, lb, rb, lc, rc, lf, rf)


def _dot_maps(c: OpContext, t: _Dot) -> tuple[IndexingMap, IndexingMap]:
    """The lhs and rhs maps of a dot: contracting dims become range variables."""
    out = c.out().dims
    nb, nlf = len(t.lb), len(t.lf)

    def side(
        batch: list[int], contr: list[int], free: list[int], first_free: int, rank: int
    ) -> IndexingMap:
        def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
            res: list[Term] = []
            for j in range(rank):
                if j in batch:
                    res.append(d[batch.index(j)])
                elif j in contr:
                    res.append(s[contr.index(j)])
                else:
                    res.append(d[first_free + free.index(j)])
            return res

        return IndexingMap.build(box(out), results, range_vars=box([t.lhs[j] for j in t.lc]))

    return (
        side(t.lb, t.lc, t.lf, nb, len(t.lhs)),
        side(t.rb, t.rc, t.rf, nb + nlf, len(t.rhs)),
    )


def _dot_out(c: OpContext, k: int) -> list[OperandMaps]:
    lhs, rhs = _dot_maps(c, _dot_check(c))
    return [(lhs,), (rhs,)]


def _scaled_dot_out(c: OpContext, k: int) -> list[OperandMaps]:
    """``scaled-dot(lhs, rhs, lhs_scale, rhs_scale)``: a dot of block-scaled operands.

    Operand element ``x`` is multiplied by scale element ``x // (n / m)`` per dimension
    (``n`` the operand's size, ``m`` the scale's, which must divide it), so each scale
    map is its operand's map with every result divided by that block size (XLA's
    ``RescaleIndexingMap``).
    """
    t = _dot_check(c, 4)
    maps = _dot_maps(c, t)
    scaled: list[OperandMaps] = [(m,) for m in maps]
    for i, (m, dims) in enumerate(zip(maps, (t.lhs, t.rhs), strict=True)):
        scale = c.arg(2 + i).dims
        if len(scale) != len(dims) or any(
            q <= 0 or n % q for n, q in zip(dims, scale, strict=True)
        ):
            raise c.error(
                f"scale operand {2 + i} [{dims_text(scale)}] must have a size dividing each "
                f"dimension of [{dims_text(dims)}]"
            )
        blocks = [n // q for n, q in zip(dims, scale, strict=True)]
        scaled.append((_divided(m, blocks),))
    return scaled


def _divided(m: IndexingMap, blocks: Sequence[int]) -> IndexingMap:
    """``m`` with result ``j`` floor-divided by ``blocks[j]`` (kept as is where it is 1)."""
    results = tuple(r // b if b != 1 else r for r, b in zip(m.results, blocks, strict=True))
    return dataclasses.replace(m, results=results).normalized()


def _dot_in(c: OpContext, i: int) -> list[OperandMaps]:
    t = _dot_check(c)
    if i == 0:
        batch, own_free, other = t.lb, t.lf, [t.rhs[j] for j in t.rf]
        src = t.lhs
    else:
        batch, own_free, other = t.rb, t.rf, [t.lhs[j] for j in t.lf]
        src = t.rhs

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        res = [d[j] for j in batch]
        own = [d[j] for j in own_free]
        # Output dims: batch, then lhs free, then rhs free; the other side's free
        # dims are all reached (range variables).
        return res + (own + list(s) if i == 0 else list(s) + own)

    return one(IndexingMap.build(box(src), results, range_vars=box(other)))


def _conv_check(c: OpContext) -> tuple[ConvLabels, tuple[WindowDim, ...], int, int]:
    c.n_args(2)
    lhs, rhs, out = c.arg(0).dims, c.arg(1).dims, c.out().dims
    lab = c.inst.conv_labels()
    rank = len(lab.input_spatial) + 2
    for what, dims in (("the input", lhs), ("the kernel", rhs), ("the output", out)):
        if len(dims) != rank:
            raise c.error(f"dim_labels= name {rank} dimensions, {what} has rank {len(dims)}")
    if "window" in c.inst.attrs:
        window = c.inst.window()
    else:  # No window: the kernel's size, no stride, padding or dilation.
        window = tuple(WindowDim(rhs[k]) for k in lab.kernel_spatial)
        if any(w.size <= 0 for w in window):
            raise c.error("a window (the kernel's spatial sizes) must have positive sizes")
    if len(window) != rank - 2:
        raise c.error(f"window= has {len(window)} dimensions, dim_labels= {rank - 2} spatial")
    fgc = c.inst.int_attr("feature_group_count", 1)
    bgc = c.inst.int_attr("batch_group_count", 1)
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise c.error(
            f"feature_group_count={fgc}, batch_group_count={bgc}: both must be positive "
            "and at most one above 1"
        )
    c.same_dims(
        "the kernel's spatial sizes", [rhs[k] for k in lab.kernel_spatial], [w.size for w in window]
    )
    features = rhs[lab.kernel_output_feature]
    if lhs[lab.input_feature] != rhs[lab.kernel_input_feature] * fgc:
        raise c.error(
            f"the input has {lhs[lab.input_feature]} features, the kernel "
            f"{rhs[lab.kernel_input_feature]} input features x feature_group_count={fgc}"
        )
    if features % fgc or features % bgc or lhs[lab.input_batch] % bgc:
        raise c.error(
            f"the kernel's {features} output features (and the input's batch "
            f"{lhs[lab.input_batch]}) must split into the feature or batch groups"
        )
    want = [0] * rank
    want[lab.output_batch] = lhs[lab.input_batch] // bgc
    want[lab.output_feature] = features
    for i, w in enumerate(window):
        want[lab.output_spatial[i]] = windowed_extent(lhs[lab.input_spatial[i]], w)
    c.same_dims("the output", out, want)
    return lab, window, fgc, bgc


def _conv_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Convolution, as HLO defines it (StableHLO's spec spells it out).

    Output spatial index ``o`` with window index ``w`` (a range variable) reads the
    padded, base-dilated input at ``o*stride + w*rhs_dilate``; the input element ``x``
    sits there when ``o*stride + w*rhs_dilate - pad_lo = x*lhs_dilate``, so the input
    index is that difference divided by ``lhs_dilate``, with the remainder 0 and the
    quotient inside the input as constraints (other positions are padding or holes).
    The kernel is read at every window index (the padding value is a term of the sum,
    as for ``pad``). ``rhs_reversal`` only changes which kernel element meets which
    input element, not the set each operand reads, so it leaves both maps alone.
    Feature groups split the input features (group ``f // (features/groups)``). Batch
    groups split the input batch: with one batch per group (the usual form, the filter
    gradient) output feature ``f`` reads batch ``f // (features/groups)`` only, which
    StableHLO's spec and XLA's evaluator agree on. With larger groups the two texts
    pair features with groups differently, so a range variable runs over every group,
    as XLA's map does: more than the op reads, never less.
    """
    if not window_ok(c):
        return [window_unknown(c)] * 2
    lab, window, fgc, bgc = _conv_check(c)
    lhs, rhs, out = c.arg(0).dims, c.arg(1).dims, c.out().dims
    rank, ns = len(out), len(window)
    cin = rhs[lab.kernel_input_feature]
    features = rhs[lab.kernel_output_feature]
    # Range variables of both maps: the window index per spatial dim, then the kernel's
    # input feature within the group.
    ranges = [(0, w.size - 1) for w in window] + [(0, cin - 1)]
    any_group = bgc > 1 and out[lab.output_batch] > 1
    input_ranges = [*ranges, (0, bgc - 1)] if any_group else ranges

    def positions(d: list[Term], s: list[Term]) -> list[Term]:
        """Per spatial dim, the input index times lhs_dilate (before the division)."""
        return [
            d[lab.output_spatial[i]] * w.stride + s[i] * w.window_dilation - w.pad_lo
            for i, w in enumerate(window)
        ]

    def input_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        res: list[Term] = [as_term(0)] * rank
        for i, (x, w) in enumerate(zip(positions(d, s), window, strict=True)):
            res[lab.input_spatial[i]] = x // w.base_dilation if w.base_dilation > 1 else x
        group_f = d[lab.output_feature]
        feature: Term = s[ns]
        if fgc > 1:
            # (max: a kernel of no output features has an empty box, but terms are built.)
            feature = (group_f // max(1, features // fgc)) * cin + s[ns]
        res[lab.input_feature] = feature
        batch = d[lab.output_batch]
        if bgc > 1:
            group = s[ns + 1] if any_group else group_f // max(1, features // bgc)
            batch = group * out[lab.output_batch] + batch
        res[lab.input_batch] = batch
        return res

    def input_constraints(
        d: list[Term], s: list[Term], rt: list[Term]
    ) -> list[tuple[Term, int, int]]:
        cons: list[tuple[Term, int, int]] = []
        for i, (x, w) in enumerate(zip(positions(d, s), window, strict=True)):
            n = lhs[lab.input_spatial[i]]
            cons.append((x, 0, (n - 1) * w.base_dilation))
            if w.base_dilation > 1:
                cons.append((x % w.base_dilation, 0, 0))
        return cons

    def kernel_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        res: list[Term] = [as_term(0)] * rank
        for i in range(ns):
            res[lab.kernel_spatial[i]] = s[i]
        res[lab.kernel_input_feature] = s[ns]
        res[lab.kernel_output_feature] = d[lab.output_feature]
        return res

    inputs = IndexingMap.build(
        box(out), input_results, range_vars=input_ranges, constraints=input_constraints
    )
    kernel = IndexingMap.build(box(out), kernel_results, range_vars=ranges)
    return [(inputs,), (kernel,)]


def _conv_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_conv_out` (XLA gives none).

    An input element reaches the output positions whose windows cover it (as for
    reduce-window, the input lhs-dilated and padded), every output feature of its
    feature group (all of them without groups), and its batch (modulo the batch per
    group; with one batch per batch group, only its group's features). A kernel element
    of output feature ``f`` reaches every output element of feature ``f``.
    """
    if not window_ok(c):
        return [window_unknown(c)]
    lab, window, fgc, bgc = _conv_check(c)
    rhs, out = c.arg(1).dims, c.out().dims
    rank = len(out)
    features = rhs[lab.kernel_output_feature]
    if i == 1:
        free = [lab.output_batch, *lab.output_spatial]

        def kernel_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
            res: list[Term] = [as_term(0)] * rank
            for n, j in enumerate(free):
                res[j] = s[n]
            res[lab.output_feature] = d[lab.kernel_output_feature]
            return res

        return one(
            IndexingMap.build(box(rhs), kernel_results, range_vars=box([out[j] for j in free]))
        )
    cin = rhs[lab.kernel_input_feature]
    any_group = bgc > 1 and out[lab.output_batch] > 1
    overlap = overlapping_dims(window)
    spatial_out = [out[j] for j in lab.output_spatial]
    # Range variables: the overlapping window indices, then the output feature within
    # the group (or among all features).
    per_group = features // fgc if fgc > 1 else features // bgc if bgc > 1 and not any_group else 0
    feature_range = (0, per_group - 1) if per_group else (0, features - 1)

    def covering(d: list[Term], s: list[Term]) -> list[tuple[Term, list[tuple[Term, int, int]]]]:
        return [
            window_covering(
                d[lab.input_spatial[k]], w, m, s[overlap.index(k)] if k in overlap else None
            )
            for k, (w, m) in enumerate(zip(window, spatial_out, strict=True))
        ]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        res: list[Term] = [as_term(0)] * rank
        for k, (r, _) in enumerate(covering(d, s)):
            res[lab.output_spatial[k]] = r
        f = s[len(overlap)]
        batch = d[lab.input_batch]
        if fgc > 1:
            f = (d[lab.input_feature] // max(1, cin)) * per_group + f
        elif bgc > 1 and not any_group:
            f = batch * per_group + f  # one batch per group: the batch is the group
        res[lab.output_feature] = f
        res[lab.output_batch] = batch % out[lab.output_batch] if bgc > 1 else batch
        return res

    m = IndexingMap.build(
        box(c.arg(0).dims),
        results,
        range_vars=[(0, window[k].size - 1) for k in overlap] + [feature_range],
        constraints=lambda d, s, rt: [x for _, cons in covering(d, s) for x in cons],
    )
    return one(m)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "dot": _dot_out,
    "scaled-dot": _scaled_dot_out,
    "convolution": _conv_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "dot": _dot_in,
    "convolution": _conv_in,
}
