"""Indexing maps of single HLO instructions (XLA's indexing analysis, op by op).

For an instruction, the *output-to-input* maps send an index of its output to the
indices of each operand that computing that output element reads; the
*input-to-output* maps send an index of one operand to the output indices it
contributes to. Range variables ``s`` enumerate many elements (a reduction), runtime
variables ``rt`` stand for values known only when the program runs (a dynamic offset).

Maps are returned per operand (or per output) as a tuple of maps, a *set* that is
usually one map; an :class:`Unknown` in it means the indexing is unknown (an op, a
form or a direction no map models exactly), and says why. Maps are built, not
simplified: callers simplify.

Shapes and attributes are checked before any index is used, so a malformed
instruction raises :class:`~quorem.hlo.parse.HloError` naming its line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Final, Literal

from quorem.hlo.attrs import int64_literal
from quorem.hlo.layout import logical_to_physical, physical_to_logical
from quorem.hlo.parse import ConvLabels, Instruction, PadDim, Shape, WindowDim
from quorem.indexing.compose import compose
from quorem.indexing.map import IndexingMap
from quorem.term import Term, as_term, maximum, minimum

__all__ = [
    "ELEMENTWISE",
    "OperandMaps",
    "Unknown",
    "input_to_output",
    "operand_output_id",
    "output_to_input",
    "pad_map",
    "reshape_map",
    "scalar_read_map",
    "scalar_write_map",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Unknown:
    """Unknown indexing: no map is given, and ``reason`` says why.

    The reason names the instruction and what it lacks (an opaque custom-call target, a
    loop whose trip count is data, a form no map models), so a user sees what blocks a
    composition, not only that something does. It is falsy, as the ``None`` it
    replaces was: ``[m for m in maps if m]`` keeps the known maps.
    """

    reason: str

    def __bool__(self) -> Literal[False]:
        return False


OperandMaps = tuple[IndexingMap | Unknown, ...]

# Ops whose output element i reads element i of each operand (a scalar operand, as
# `select` and `clamp` allow, is read whole).
ELEMENTWISE: Final = frozenset(
    {
        "abs",
        "add",
        "and",
        "atan2",
        "cbrt",
        "ceil",
        "clamp",
        "clz",
        "compare",
        "complex",
        "convert",
        "copy",
        "cosine",
        "divide",
        "erf",
        "exponential",
        "exponential-minus-one",
        "floor",
        "imag",
        "is-finite",
        "log",
        "log-plus-one",
        "logistic",
        "map",
        "maximum",
        "minimum",
        "multiply",
        "negate",
        "not",
        "or",
        "popcnt",
        "power",
        "real",
        "reduce-precision",
        "remainder",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "select",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "sign",
        "sine",
        "sqrt",
        "stochastic-convert",
        "subtract",
        "tan",
        "tanh",
        "xor",
    }
)
_NO_OPERANDS: Final = frozenset({"parameter", "constant", "iota"})


def _box(dims: Sequence[int]) -> list[tuple[int, int]]:
    return [(0, n - 1) for n in dims]


def identity_map(dims: Sequence[int]) -> IndexingMap:
    """``(d...) -> (d...)`` over the box of ``dims``."""
    return IndexingMap.build(_box(dims), lambda d, s, rt: list(d))


def scalar_read_map(dims: Sequence[int]) -> IndexingMap:
    """``(d...) -> ()``: every index of ``dims`` reads the one element of a scalar."""
    return IndexingMap.build(_box(dims), lambda d, s, rt: [])


def scalar_write_map(dims: Sequence[int]) -> IndexingMap:
    """``()[s...] -> (s...)``: a scalar reaches every index of ``dims``."""
    return IndexingMap.build([], lambda d, s, rt: list(s), range_vars=_box(dims))


def _one(m: IndexingMap) -> list[OperandMaps]:
    """One operand (or output), through the one map ``m``."""
    return [(m,)]


def _copies(m: IndexingMap, n: int) -> list[OperandMaps]:
    """``n`` operands, each read through the one map ``m``."""
    return [(m,) for _ in range(n)]


# ---------------------------------------------------------------------------- reshape
def _reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Split two shapes of equal element count into minimal runs of equal products.

    Each run pairs consecutive dimensions of ``src`` with consecutive dimensions of
    ``dst``; size-1 dimensions left over at the end form runs of their own (possibly
    with no partner on the other side). Needs no zero-size dimension.
    """
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        gs: list[int] = []
        gd: list[int] = []
        ps = pd = 1
        if i < len(src):
            gs.append(i)
            ps *= src[i]
            i += 1
        if j < len(dst):
            gd.append(j)
            pd *= dst[j]
            j += 1
        while ps != pd:
            if ps < pd:
                gs.append(i)
                ps *= src[i]
                i += 1
            else:
                gd.append(j)
                pd *= dst[j]
                j += 1
        groups.append((gs, gd))
    return groups


def reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    """The map from an index of shape ``dst`` to the ``src`` index of the same element.

    Elements correspond in row-major order: this is the output-to-input map of a
    reshape from ``src`` to ``dst``.

    The shapes are split into minimal subshapes with equal element counts; in each,
    the ``dst`` indices are linearized and the linear index delinearized into ``src``
    indices, so a dimension that only changes name stays a bare variable. Shapes with
    no element give the known-empty map. The counts must be equal (checked by callers).
    """
    total = 1
    for n in src:
        total *= n
    if total == 0:
        return IndexingMap.empty(len(dst), len(src))
    groups = _reshape_groups(src, dst)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        out: list[Term] = [as_term(0)] * len(src)
        for gs, gd in groups:
            linear: Term = as_term(0)
            stride = 1
            for j in reversed(gd):
                linear = linear + d[j] * stride
                stride *= dst[j]
            stride = 1
            for k, i in enumerate(reversed(gs)):
                e = linear // stride if stride != 1 else linear
                # The outermost dimension of a run needs no `mod`: the linear index is
                # below the run's element count.
                out[i] = e % src[i] if k != len(gs) - 1 else e
                stride *= src[i]
        return out

    return IndexingMap.build(_box(dst), results)


# ---------------------------------------------------------------------------- pad
def pad_map(src: Sequence[int], pads: Sequence[PadDim]) -> IndexingMap:
    """The output-to-input map of padding an array of shape ``src`` by ``pads``.

    The output dimension ``k`` has ``lo + hi + n + (n - 1) * interior`` elements; its
    index ``d`` reads input index ``(d - lo) / (interior + 1)`` where that division is
    exact (a ``mod`` constraint) and lands inside the input; other output indices are
    outside the domain (they hold the padding value).
    """
    out_dims = [_padded_size(n, p) for n, p in zip(src, pads, strict=True)]
    bounds: list[tuple[int, int]] = []
    for n, p, size in zip(src, pads, out_dims, strict=True):
        last = p.lo + (n - 1) * (p.interior + 1)
        bounds.append((max(0, p.lo), min(size - 1, last)) if n > 0 else (0, -1))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [
            (x - p.lo) // (p.interior + 1) if p.interior else x - p.lo
            for x, p in zip(d, pads, strict=True)
        ]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [
            ((x - p.lo) % (p.interior + 1), 0, 0)
            for x, p in zip(d, pads, strict=True)
            if p.interior
        ]

    return IndexingMap.build(bounds, results, constraints=constraints)


def _padded_size(n: int, p: PadDim) -> int:
    return p.lo + p.hi + n + max(0, n - 1) * p.interior


# ---------------------------------------------------------------------------- context
@dataclasses.dataclass(frozen=True, slots=True)
class _Ctx:
    """An instruction with the instructions defining its operands."""

    inst: Instruction
    operands: tuple[Instruction, ...]
    # The instruction of a name in the same computation: runtime values are traced
    # through it back to a constant or an iota. None: no tracing past the operands.
    lookup: Callable[[str], Instruction] | None = None

    def error(self, reason: str) -> Exception:
        return self.inst.error(reason)

    def unknown(self, reason: str) -> OperandMaps:
        """One unknown map, its reason naming this instruction."""
        return (Unknown(f"{self.inst.name} ({self.inst.opcode}): {reason}"),)

    def out(self, output_id: int = 0) -> Shape:
        arrays = self.inst.shape.arrays()
        if not 0 <= output_id < len(arrays):
            raise self.error(f"has {len(arrays)} outputs, there is no output {output_id}")
        return arrays[output_id]

    def outputs(self) -> tuple[Shape, ...]:
        return self.inst.shape.arrays()

    def arg(self, i: int) -> Shape:
        """The array shape of operand ``i``."""
        op = self.operands[i]
        shape = op.shape
        if self.inst.opcode == "get-tuple-element":
            arrays = shape.arrays()
            k = self.inst.int_attr("index")
            if not 0 <= k < len(arrays):
                raise self.error(f"index={k} but {op.name} has {len(arrays)} elements")
            return arrays[k]
        if shape.is_tuple:
            raise self.error(f"operand {op.name} is a tuple {shape}; only arrays are indexed")
        return shape

    def n_args(self, *counts: int) -> None:
        if len(self.operands) not in counts:
            want = " or ".join(map(str, counts))
            raise self.error(f"expects {want} operands, has {len(self.operands)}")

    def dims_attr(self, name: str, rank: int, default: tuple[int, ...] | None = None) -> list[int]:
        """An attribute listing distinct dimension numbers below ``rank``."""
        got = self.inst.int_list(name, default)
        if len(set(got)) != len(got) or any(not 0 <= k < rank for k in got):
            raise self.error(f"{name}={{{','.join(map(str, got))}}} must be distinct dims < {rank}")
        return list(got)

    def same_dims(self, what: str, a: Sequence[int], b: Sequence[int]) -> None:
        if tuple(a) != tuple(b):
            raise self.error(f"{what}: expected [{_dims(b)}], found [{_dims(a)}]")


def _dims(ds: Sequence[int]) -> str:
    return ",".join(map(str, ds))


# ---------------------------------------------------------------------------- ops
def _elementwise_out(c: _Ctx, k: int) -> list[OperandMaps]:
    out = c.out(k).dims
    maps: list[OperandMaps] = []
    for i in range(len(c.operands)):
        dims = c.arg(i).dims
        if not dims and out:
            maps.append((scalar_read_map(out),))
        else:
            c.same_dims(f"operand {i} ({c.operands[i].name})", dims, out)
            maps.append((identity_map(out),))
    return maps


def _bitcast_convert_out(c: _Ctx, k: int) -> list[OperandMaps]:
    # Elementwise between types of one bit width; otherwise a dimension appears or
    # disappears, which is not modelled.
    c.n_args(1)
    if c.arg(0).dims != c.out().dims:
        return [c.unknown(_WIDTH_CHANGE)]
    return _elementwise_out(c, k)


def _bitcast_convert_in(c: _Ctx, i: int) -> list[OperandMaps]:
    c.n_args(1)
    if c.arg(0).dims != c.out().dims:
        return [c.unknown(_WIDTH_CHANGE)]
    return _elementwise_in(c, i)


_WIDTH_CHANGE: Final = (
    "between element types of different widths a dimension appears or disappears, "
    "which no map models"
)


def _elementwise_in(c: _Ctx, i: int) -> list[OperandMaps]:
    out = c.out().dims
    dims = c.arg(i).dims
    if not dims and out:
        return _one(scalar_write_map(out))
    c.same_dims(f"operand {i} ({c.operands[i].name})", dims, out)
    return _one(identity_map(dims))


def _broadcast_dims(c: _Ctx) -> tuple[list[int], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    bdims = c.dims_attr("dimensions", len(out))
    if len(bdims) != len(src):
        raise c.error(f"dimensions= has {len(bdims)} entries, the operand has rank {len(src)}")
    c.same_dims("the operand", src, [out[k] for k in bdims])
    return bdims, out, src


def _broadcast_out(c: _Ctx, k: int) -> list[OperandMaps]:
    bdims, out, _ = _broadcast_dims(c)
    return _one(IndexingMap.build(_box(out), lambda d, s, rt: [d[j] for j in bdims]))


def _broadcast_in(c: _Ctx, i: int) -> list[OperandMaps]:
    bdims, out, src = _broadcast_dims(c)
    new = [j for j in range(len(out)) if j not in bdims]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [d[bdims.index(j)] if j in bdims else s[new.index(j)] for j in range(len(out))]

    return _one(IndexingMap.build(_box(src), results, range_vars=_box([out[j] for j in new])))


def _transpose_perm(c: _Ctx) -> tuple[list[int], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    perm = c.dims_attr("dimensions", len(src))
    if len(perm) != len(src):
        raise c.error(f"dimensions= must be a permutation of the {len(src)} operand dims")
    c.same_dims("the output", out, [src[p] for p in perm])
    return perm, out, src


def _transpose_out(c: _Ctx, k: int) -> list[OperandMaps]:
    perm, out, _ = _transpose_perm(c)
    inverse = [perm.index(j) for j in range(len(perm))]
    return _one(IndexingMap.build(_box(out), lambda d, s, rt: [d[k] for k in inverse]))


def _transpose_in(c: _Ctx, i: int) -> list[OperandMaps]:
    perm, _, src = _transpose_perm(c)
    return _one(IndexingMap.build(_box(src), lambda d, s, rt: [d[p] for p in perm]))


def _reverse(c: _Ctx, k: int) -> list[OperandMaps]:
    # Its own inverse: the same map in both directions.
    c.n_args(1)
    out = c.out().dims
    c.same_dims("the operand", c.arg(0).dims, out)
    rdims = c.dims_attr("dimensions", len(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [out[j] - 1 - x if j in rdims else x for j, x in enumerate(d)]

    return _one(IndexingMap.build(_box(out), results))


def _slice_check(c: _Ctx) -> tuple[list[tuple[int, int]], tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    sl = c.inst.slice_dims()
    if len(sl) != len(src):
        raise c.error(f"slice= has {len(sl)} dimensions, the operand has rank {len(src)}")
    for j, (x, n) in enumerate(zip(sl, src, strict=True)):
        if not 0 <= x.start <= x.limit <= n:
            raise c.error(f"slice dimension {j} [{x.start}:{x.limit}] is outside [0:{n}]")
    c.same_dims("the output", out, [-(-(x.limit - x.start) // x.stride) for x in sl])
    return [(x.start, x.stride) for x in sl], out, src


def _slice_out(c: _Ctx, k: int) -> list[OperandMaps]:
    sl, out, _ = _slice_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x * st + a for x, (a, st) in zip(d, sl, strict=True)]

    return _one(IndexingMap.build(_box(out), results))


def _slice_in(c: _Ctx, i: int) -> list[OperandMaps]:
    sl, out, _ = _slice_check(c)
    # Only the input indices the slice keeps: from start, every stride-th, out many.
    bounds = [(a, a + (n - 1) * st) if n else (0, -1) for (a, st), n in zip(sl, out, strict=True)]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [(x - a) // st if st != 1 else x - a for x, (a, st) in zip(d, sl, strict=True)]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [((x - a) % st, 0, 0) for x, (a, st) in zip(d, sl, strict=True) if st != 1]

    return _one(IndexingMap.build(bounds, results, constraints=constraints))


def _concat_check(c: _Ctx) -> tuple[int, list[int], tuple[int, ...]]:
    if not c.operands:
        raise c.error("needs at least one operand")
    out = c.out().dims
    axes = c.dims_attr("dimensions", len(out))
    if len(axes) != 1:
        raise c.error("dimensions= must name the one concatenated dimension")
    axis = axes[0]
    offsets: list[int] = []
    at = 0
    for i in range(len(c.operands)):
        dims = c.arg(i).dims
        want = list(out)
        if len(dims) == len(out):
            want[axis] = dims[axis]
        c.same_dims(f"operand {i} ({c.operands[i].name})", dims, want)
        offsets.append(at)
        at += dims[axis]
    if at != out[axis]:
        raise c.error(
            f"the operands add up to {at} along dimension {axis}, the output has {out[axis]}"
        )
    return axis, offsets, out


def _concat_out(c: _Ctx, k: int) -> list[OperandMaps]:
    axis, offsets, out = _concat_check(c)
    maps: list[OperandMaps] = []
    for i, off in enumerate(offsets):
        n = c.arg(i).dims[axis]
        bounds = _box(out)
        bounds[axis] = (off, off + n - 1)
        maps.append((IndexingMap.build(bounds, _shifted(axis, -off)),))
    return maps


def _concat_in(c: _Ctx, i: int) -> list[OperandMaps]:
    axis, offsets, _ = _concat_check(c)
    return _one(IndexingMap.build(_box(c.arg(i).dims), _shifted(axis, offsets[i])))


def _shifted(axis: int, by: int) -> Callable[[list[Term], list[Term], list[Term]], list[Term]]:
    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + by if j == axis else x for j, x in enumerate(d)]

    return results


def _reshape_check(c: _Ctx) -> tuple[tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    out, src = c.out().dims, c.arg(0).dims
    if c.out().num_elements != c.arg(0).num_elements:
        raise c.error(
            f"cannot reshape [{_dims(src)}] ({c.arg(0).num_elements} elements) to "
            f"[{_dims(out)}] ({c.out().num_elements})"
        )
    return out, src


def _reshape_out(c: _Ctx, k: int) -> list[OperandMaps]:
    out, src = _reshape_check(c)
    return _one(reshape_map(src, out))


def _reshape_in(c: _Ctx, i: int) -> list[OperandMaps]:
    out, src = _reshape_check(c)
    return _one(reshape_map(out, src))


def _bitcast_out(c: _Ctx, k: int) -> list[OperandMaps]:
    # A bitcast keeps the bytes: the physical (memory-order) index is reshaped. Logical
    # output -> physical output -> physical input -> logical input.
    _reshape_check(c)
    out, src = c.out(), c.arg(0)
    m = compose(logical_to_physical(out), reshape_map(src.physical_dims(), out.physical_dims()))
    return _one(compose(m, physical_to_logical(src)))


def _bitcast_in(c: _Ctx, i: int) -> list[OperandMaps]:
    _reshape_check(c)
    out, src = c.out(), c.arg(0)
    m = compose(logical_to_physical(src), reshape_map(out.physical_dims(), src.physical_dims()))
    return _one(compose(m, physical_to_logical(out)))


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


def _dot_check(c: _Ctx, n_operands: int = 2) -> _Dot:
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


def _dot_maps(c: _Ctx, t: _Dot) -> tuple[IndexingMap, IndexingMap]:
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

        return IndexingMap.build(_box(out), results, range_vars=_box([t.lhs[j] for j in t.lc]))

    return (
        side(t.lb, t.lc, t.lf, nb, len(t.lhs)),
        side(t.rb, t.rc, t.rf, nb + nlf, len(t.rhs)),
    )


def _dot_out(c: _Ctx, k: int) -> list[OperandMaps]:
    lhs, rhs = _dot_maps(c, _dot_check(c))
    return [(lhs,), (rhs,)]


def _scaled_dot_out(c: _Ctx, k: int) -> list[OperandMaps]:
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
                f"scale operand {2 + i} [{_dims(scale)}] must have a size dividing each "
                f"dimension of [{_dims(dims)}]"
            )
        blocks = [n // q for n, q in zip(dims, scale, strict=True)]
        scaled.append((_divided(m, blocks),))
    return scaled


def _divided(m: IndexingMap, blocks: Sequence[int]) -> IndexingMap:
    """``m`` with result ``j`` floor-divided by ``blocks[j]`` (kept as is where it is 1)."""
    results = tuple(r // b if b != 1 else r for r, b in zip(m.results, blocks, strict=True))
    return dataclasses.replace(m, results=results).normalized()


def _dot_in(c: _Ctx, i: int) -> list[OperandMaps]:
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

    return _one(IndexingMap.build(_box(src), results, range_vars=_box(other)))


def _reduce_check(c: _Ctx) -> tuple[int, list[int], tuple[int, ...], tuple[int, ...]]:
    n = len(c.operands) // 2
    if n == 0 or len(c.operands) != 2 * n:
        raise c.error("expects inputs followed by as many init values")
    src = c.arg(0).dims
    rdims = sorted(c.dims_attr("dimensions", len(src)))
    kept = [src[j] for j in range(len(src)) if j not in rdims]
    outs = c.outputs()
    if len(outs) != n:
        raise c.error(f"has {n} inputs but {len(outs)} outputs")
    for i in range(n):
        c.same_dims(f"input {i} ({c.operands[i].name})", c.arg(i).dims, src)
        c.same_dims(f"init value {i} ({c.operands[n + i].name})", c.arg(n + i).dims, ())
        c.same_dims(f"output {i}", outs[i].dims, kept)
    return n, rdims, src, tuple(kept)


def _reduce_out(c: _Ctx, k: int) -> list[OperandMaps]:
    n, rdims, src, kept = _reduce_check(c)
    c.out(k)
    free = [j for j in range(len(src)) if j not in rdims]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [s[rdims.index(j)] if j in rdims else d[free.index(j)] for j in range(len(src))]

    m = IndexingMap.build(_box(kept), results, range_vars=_box([src[j] for j in rdims]))
    return _copies(m, n) + _copies(scalar_read_map(kept), n)


def _reduce_in(c: _Ctx, i: int) -> list[OperandMaps]:
    n, rdims, src, kept = _reduce_check(c)
    if i >= n:
        return _copies(scalar_write_map(kept), n)
    free = [j for j in range(len(src)) if j not in rdims]
    return _copies(IndexingMap.build(_box(src), lambda d, s, rt: [d[j] for j in free]), n)


def _reduce_window_check(
    c: _Ctx,
) -> tuple[int, tuple[int, ...], tuple[WindowDim, ...], list[PadDim], tuple[int, ...]]:
    """``(inputs, input dims, window, pads, output dims)`` of a reduce-window."""
    n = len(c.operands) // 2
    if n == 0 or len(c.operands) != 2 * n:
        raise c.error("expects inputs followed by as many init values")
    src = c.arg(0).dims
    window = c.inst.window()
    if len(window) != len(src):
        raise c.error(f"window= has {len(window)} dimensions, the input has rank {len(src)}")
    for i in range(n):
        c.same_dims(f"input {i} ({c.operands[i].name})", c.arg(i).dims, src)
        c.same_dims(f"init value {i} ({c.operands[n + i].name})", c.arg(n + i).dims, ())
    pads = [PadDim(w.pad_lo, w.pad_hi, w.base_dilation - 1) for w in window]
    want = []
    for x, w, p in zip(src, window, pads, strict=True):
        padded = _padded_size(x, p)
        extent = (w.size - 1) * w.window_dilation + 1
        want.append((padded - extent) // w.stride + 1 if padded >= extent else 0)
    for j in range(len(c.outputs())):
        c.same_dims(f"output {j}", c.out(j).dims, want)
    return n, src, window, pads, tuple(want)


def _window_to_input(
    src: Sequence[int], window: Sequence[WindowDim], out: Sequence[int]
) -> IndexingMap:
    """From a window position (of ``out``) to the input elements its window covers.

    XLA's ComposeWindowIndexingMap: the window over the padded, base-dilated input,
    composed with pad indexing back to the input's own elements.
    """
    # Windows of size 1 need no range variable (XLA does the same).
    wide = [j for j, w in enumerate(window) if w.size > 1]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [
            d[j] * w.stride + (s[wide.index(j)] * w.window_dilation if j in wide else 0)
            for j, w in enumerate(window)
        ]

    windowed = IndexingMap.build(
        _box(out), results, range_vars=[(0, window[j].size - 1) for j in wide]
    )
    pads = [PadDim(w.pad_lo, w.pad_hi, w.base_dilation - 1) for w in window]
    return compose(windowed, pad_map(src, pads))


def _covering(
    x: Term, w: WindowDim, m: int, s: Term | None
) -> tuple[Term, list[tuple[Term, int, int]]]:
    """The window position covering input index ``x`` along one dimension.

    And its constraints (see :func:`_input_to_window`); ``s`` is the window index where
    windows overlap (a range variable), None where they do not.
    """
    p = x * w.base_dilation + w.pad_lo - (s * w.window_dilation if s is not None else 0)
    result = p // w.stride if w.stride != 1 else p
    if s is not None:
        cons = [(p, 0, (m - 1) * w.stride)]
        if w.stride != 1:
            cons.append((p % w.stride, 0, 0))
        return result, cons
    cons = [(p, 0, m * w.stride - 1)]
    if w.stride != 1:
        last = (w.size - 1) * w.window_dilation
        if last < w.stride - 1:
            cons.append((p % w.stride, 0, last))
        if w.window_dilation > 1 and w.size > 1:
            cons.append((p % w.stride % w.window_dilation, 0, 0))
    return result, cons


def _overlapping(window: Sequence[WindowDim]) -> list[int]:
    """The dimensions whose windows overlap: an input is in several, a range variable."""
    return [j for j, w in enumerate(window) if (w.size - 1) * w.window_dilation >= w.stride]


def _input_to_window(
    src: Sequence[int], window: Sequence[WindowDim], out: Sequence[int]
) -> IndexingMap:
    """The inverse of :func:`_window_to_input`: the window positions covering an input.

    Input ``x`` sits at padded position ``p = x*base_dilation + pad_lo``; window position
    ``o`` covers ``o*stride + w*window_dilation`` for window index ``w``, so ``x`` is in
    the windows ``o = (p - w*window_dilation) / stride`` for each ``w`` (a range
    variable) where the division is exact and ``o`` is a position of ``out``
    (constraints). Where windows do not overlap (``(size-1)*window_dilation < stride``,
    as in pooling) there is at most one: ``o = p / stride``, the remainder a window
    index times the dilation (constraints), with no range variable.
    """
    overlap = _overlapping(window)

    def covering(d: list[Term], s: list[Term]) -> list[tuple[Term, list[tuple[Term, int, int]]]]:
        return [
            _covering(d[j], w, m, s[overlap.index(j)] if j in overlap else None)
            for j, (w, m) in enumerate(zip(window, out, strict=True))
        ]

    return IndexingMap.build(
        _box(src),
        lambda d, s, rt: [r for r, _ in covering(d, s)],
        range_vars=[(0, window[j].size - 1) for j in overlap],
        constraints=lambda d, s, rt: [c for _, cons in covering(d, s) for c in cons],
    )


def _reduce_window_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """XLA's ComputeOutputToInputReduceWindowOpIndexing: the window over the padded input."""
    if not _window_ok(c):
        return [_window_unknown(c)] * len(c.operands)
    n, src, window, _, out = _reduce_window_check(c)
    c.out(k)
    m = _window_to_input(src, window, out)
    return _copies(m, n) + _copies(scalar_read_map(out), n)


def _reduce_window_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """Input ``x`` reaches each window position whose window covers it.

    The inverse of :func:`_reduce_window_out` (XLA gives none; see
    :func:`_input_to_window`). Every input of a variadic reduce-window reaches every
    output; an init value reaches all of them.
    """
    if not _window_ok(c):
        return [_window_unknown(c)] * len(c.outputs())
    n, src, window, _, out = _reduce_window_check(c)
    if i >= n:
        return _copies(scalar_write_map(out), len(c.outputs()))
    return _copies(_input_to_window(src, window, out), len(c.outputs()))


def _select_and_scatter_check(
    c: _Ctx,
) -> tuple[tuple[int, ...], tuple[WindowDim, ...], tuple[int, ...]]:
    """``(operand dims, window, window positions)`` of a select-and-scatter."""
    c.n_args(3)
    src, source = c.arg(0).dims, c.arg(1).dims
    window = c.inst.window()
    if len(window) != len(src):
        raise c.error(f"window= has {len(window)} dimensions, the operand has rank {len(src)}")
    if any(w.base_dilation != 1 or w.window_dilation != 1 for w in window):
        raise c.error("a select-and-scatter window has no dilation")
    c.same_dims(
        "the source", source, [_windowed_extent(n, w) for n, w in zip(src, window, strict=True)]
    )
    c.same_dims("the init value", c.arg(2).dims, ())
    c.same_dims("the output", c.out().dims, src)
    return src, window, source


def _select_and_scatter_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """Select-and-scatter (the gradient of max pooling; XLA has no indexing for it).

    Each window position selects one element of its window of the operand (``select``
    compares them all) and scatters its source element there. Output ``x`` therefore
    reads the source at every window covering ``x`` and the operand at every element of
    those windows (any of them may win the selection instead of ``x``): the window
    maps of reduce-window, inverted then composed. Padding is never selected.
    """
    if not _window_ok(c):
        return [_window_unknown(c)] * 3
    src, window, source = _select_and_scatter_check(c)
    covering = _input_to_window(src, window, source)
    return [
        (compose(covering, _window_to_input(src, window, source)),),
        (covering,),
        (scalar_read_map(src),),
    ]


def _select_and_scatter_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_select_and_scatter_out`.

    An operand element reaches every element of the windows covering it (it takes part
    in their selections); a source element reaches every element of its window (the
    one selected); the init value reaches every output element.
    """
    if not _window_ok(c):
        return [_window_unknown(c)]
    src, window, source = _select_and_scatter_check(c)
    to_input = _window_to_input(src, window, source)
    if i == 0:
        return _one(compose(_input_to_window(src, window, source), to_input))
    return _one(to_input if i == 1 else scalar_write_map(src))


def _window_ok(c: _Ctx) -> bool:
    """Whether every field of ``window=`` is one indexing reads (else: unknown indexing)."""
    return "window" not in c.inst.attrs or not c.inst.window_unknown_fields()


def _window_unknown(c: _Ctx) -> OperandMaps:
    fields = ", ".join(c.inst.window_unknown_fields())
    return c.unknown(f"window= has field(s) {fields} that no map models")


def _windowed_extent(n: int, w: WindowDim) -> int:
    """The number of window positions along a dimension of ``n`` elements (HLO's rule)."""
    padded = w.pad_lo + w.pad_hi + (n - 1) * w.base_dilation + 1 if n > 0 else w.pad_lo + w.pad_hi
    extent = (w.size - 1) * w.window_dilation + 1
    return (padded - extent) // w.stride + 1 if padded >= extent else 0


def _conv_check(c: _Ctx) -> tuple[ConvLabels, tuple[WindowDim, ...], int, int]:
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
        want[lab.output_spatial[i]] = _windowed_extent(lhs[lab.input_spatial[i]], w)
    c.same_dims("the output", out, want)
    return lab, window, fgc, bgc


def _conv_out(c: _Ctx, k: int) -> list[OperandMaps]:
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
    if not _window_ok(c):
        return [_window_unknown(c)] * 2
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
        _box(out), input_results, range_vars=input_ranges, constraints=input_constraints
    )
    kernel = IndexingMap.build(_box(out), kernel_results, range_vars=ranges)
    return [(inputs,), (kernel,)]


def _conv_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_conv_out` (XLA gives none).

    An input element reaches the output positions whose windows cover it (as for
    reduce-window, the input lhs-dilated and padded), every output feature of its
    feature group (all of them without groups), and its batch (modulo the batch per
    group; with one batch per batch group, only its group's features). A kernel element
    of output feature ``f`` reaches every output element of feature ``f``.
    """
    if not _window_ok(c):
        return [_window_unknown(c)]
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

        return _one(
            IndexingMap.build(_box(rhs), kernel_results, range_vars=_box([out[j] for j in free]))
        )
    cin = rhs[lab.kernel_input_feature]
    any_group = bgc > 1 and out[lab.output_batch] > 1
    overlap = _overlapping(window)
    spatial_out = [out[j] for j in lab.output_spatial]
    # Range variables: the overlapping window indices, then the output feature within
    # the group (or among all features).
    per_group = features // fgc if fgc > 1 else features // bgc if bgc > 1 and not any_group else 0
    feature_range = (0, per_group - 1) if per_group else (0, features - 1)

    def covering(d: list[Term], s: list[Term]) -> list[tuple[Term, list[tuple[Term, int, int]]]]:
        return [
            _covering(d[lab.input_spatial[k]], w, m, s[overlap.index(k)] if k in overlap else None)
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
        _box(c.arg(0).dims),
        results,
        range_vars=[(0, window[k].size - 1) for k in overlap] + [feature_range],
        constraints=lambda d, s, rt: [x for _, cons in covering(d, s) for x in cons],
    )
    return _one(m)


# ---------------------------------------------------------------------------- runtime values
_Value = Callable[[Sequence[Term]], Term]
# How far a runtime value is traced back (broadcast, reverse, copy, convert steps).
_MAX_TRACE: Final = 16
_INT_TYPE: Final = re.compile(r"([su])([0-9]+)")


def _int_bits(dtype: str) -> tuple[bool, int] | None:
    """``(signed, bits)`` of an integer element type, None for any other type."""
    m = _INT_TYPE.fullmatch(dtype)
    return None if m is None else (m.group(1) == "s", int(m.group(2)))


def _constant_values(inst: Instruction) -> list[int] | None:
    """The elements of an integer ``constant(...)`` in row-major order, else None."""
    tokens = re.findall(r"[^\s{},]+", inst.payload)
    try:
        values = [int64_literal(t) for t in tokens]
    except ValueError:
        return None
    return values if len(values) == inst.shape.num_elements else None


def _value_fn(c: _Ctx, inst: Instruction, depth: int = 0) -> _Value | None:
    """The value of ``inst`` at an index, as a term, where constants and iotas fix it.

    The returned function takes the index (terms over the map's variables) and gives
    the element there: a constant's element (every one when they are all equal, else
    the one a constant index names), an iota's index along its dimension, traced back
    through broadcast, reverse, copy and value-preserving convert. None: the value is
    known only at run time.
    """
    bits = _int_bits(inst.shape.dtype)
    if depth > _MAX_TRACE or inst.shape.is_tuple or bits is None:
        return None
    dims = inst.shape.dims
    if inst.opcode == "constant":
        values = _constant_values(inst)
        if not values:
            return None
        if all(v == values[0] for v in values):
            return lambda idx: as_term(values[0])

        def element(idx: Sequence[Term]) -> Term:
            # An index term of one value (a constant, or a variable of a one-point
            # interval) names the element; any other index is a run-time choice.
            lin = 0
            for t, n in zip(idx, dims, strict=True):
                if t.vmin is None or t.vmin != t.vmax:
                    raise _NotFixedError
                lin = lin * n + t.vmin
            return as_term(values[lin])

        return element
    if inst.opcode == "iota":
        k = inst.attrs.get("iota_dimension")
        axis = inst.int_attr("iota_dimension") if k is not None else -1
        return (lambda idx: idx[axis]) if 0 <= axis < len(dims) else None
    if c.lookup is None or len(inst.operands) != 1:
        return None
    src = c.lookup(inst.operands[0])
    src_bits = _int_bits(src.shape.dtype)
    if src.shape.is_tuple or src_bits is None:
        return None
    inner = _value_fn(c, src, depth + 1)
    if inner is None:
        return None
    if inst.opcode == "copy" and src.shape.dims == dims:
        return inner
    if inst.opcode == "convert" and src.shape.dims == dims:
        # Only where every source value is representable: same signedness and no
        # fewer bits, or unsigned to a wider signed type.
        (s0, b0), (s1, b1) = src_bits, bits
        keeps = (s0 == s1 and b1 >= b0) or (not s0 and s1 and b1 > b0)
        return inner if keeps else None
    if inst.opcode == "broadcast":
        bdims = inst.int_list("dimensions", ())
        if len(bdims) != src.shape.rank or any(not 0 <= j < len(dims) for j in bdims):
            return None
        if [dims[j] for j in bdims] != list(src.shape.dims):
            return None
        return lambda idx: inner([idx[j] for j in bdims])
    if inst.opcode == "reverse" and src.shape.dims == dims:
        rdims = inst.int_list("dimensions", ())
        return lambda idx: inner(
            [as_term(dims[j] - 1) - x if j in rdims else x for j, x in enumerate(idx)]
        )
    return None


class _NotFixedError(Exception):
    """A constant's element at an index that is not constant: known only at run time."""


def _fixed_value(fn: _Value | None, idx: Sequence[Term], hi: int) -> Term | None:
    """``fn`` at ``idx`` clamped to ``[0, hi]`` as the op clamps a start; None if unknown."""
    if fn is None:
        return None
    try:
        v = fn(idx)
    except _NotFixedError:
        return None
    if v.is_const:
        return as_term(min(max(v.value, 0), hi))
    # The clamps the value's range already meets are left out.
    if v.vmin is None or v.vmin < 0:
        v = maximum(v, as_term(0))
    if v.vmax is None or v.vmax > hi:
        v = minimum(v, as_term(hi))
    return v


def _offsets(
    c: _Ctx, first: int, src: Sequence[int], sizes: Sequence[int]
) -> tuple[list[tuple[int, int]], list[str], list[Term | None]]:
    """Runtime-variable bounds and sources of dynamic offsets, and the offsets fixed.

    HLO clamps a start index so the slice stays inside the operand: offset ``k`` lies in
    ``[0, src_k - size_k]``. An offset whose value a constant fixes (traced back, see
    :func:`_value_fn`) is that value, clamped; the others are runtime variables.
    """
    rt_bounds: list[tuple[int, int]] = []
    sources: list[str] = []
    fixed: list[Term | None] = []
    for j, (n, size) in enumerate(zip(src, sizes, strict=True)):
        op = c.operands[first + j]
        if c.arg(first + j).dims:
            raise c.error(f"offset operand {op.name} must be a scalar")
        value = _fixed_value(_value_fn(c, op), [], n - size)
        fixed.append(value)
        if value is None:
            rt_bounds.append((0, n - size))
            sources.append(f"{op.name} (operand {first + j} of {c.inst.name})")
    return rt_bounds, sources, fixed


def _rt_terms(fixed: list[Term | None], rt: list[Term]) -> list[Term]:
    it = iter(rt)
    return [next(it) if v is None else v for v in fixed]


def _dynamic_slice_check(
    c: _Ctx,
) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]], list[str], list[Term | None]]:
    if not c.operands:
        raise c.error("needs an operand")
    src = c.arg(0).dims
    c.n_args(1 + len(src))
    out = c.out().dims
    if len(out) != len(src):
        raise c.error(f"the output has rank {len(out)}, the operand rank {len(src)}")
    sizes = c.inst.int_list("dynamic_slice_sizes", out)
    c.same_dims("the output", out, sizes)
    if any(s > n for s, n in zip(sizes, src, strict=True)):
        raise c.error(f"slice sizes [{_dims(sizes)}] exceed the operand [{_dims(src)}]")
    rt_bounds, sources, consts = _offsets(c, 1, src, sizes)
    return src, out, rt_bounds, sources, consts


def _dynamic_slice_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """XLA's ComputeOutputToInputDynamicSliceOpIndexing: ``d + offset``, offsets rt vars."""
    src, out, rt_bounds, sources, consts = _dynamic_slice_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    m = IndexingMap.build(_box(out), results, rt_vars=rt_bounds, rt_sources=sources)
    return _copies(m, 1) + _copies(scalar_read_map(out), len(src))


def _dynamic_slice_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """Operand index ``x`` reaches output ``x - offset`` where that is inside the slice.

    The inverse of :func:`_dynamic_slice_out` (XLA gives none): the same runtime
    variables (or fixed offsets), with ``0 <= x - offset < size`` as constraints. An
    offset operand reaches every output element.
    """
    src, out, rt_bounds, sources, consts = _dynamic_slice_check(c)
    if i > 0:
        return _one(scalar_write_map(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x - o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        return [(r, 0, n - 1) for r, n in zip(results(d, s, rt), out, strict=True)]

    m = IndexingMap.build(
        _box(src), results, rt_vars=rt_bounds, rt_sources=sources, constraints=constraints
    )
    return _one(m)


def _dus_check(
    c: _Ctx,
) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]], list[str], list[Term | None]]:
    if len(c.operands) < 2:
        raise c.error("needs an operand and an update")
    out = c.out().dims
    c.n_args(2 + len(out))
    c.same_dims("the operand", c.arg(0).dims, out)
    upd = c.arg(1).dims
    if len(upd) != len(out) or any(u > n for u, n in zip(upd, out, strict=True)):
        raise c.error(f"the update [{_dims(upd)}] does not fit in [{_dims(out)}]")
    rt_bounds, sources, consts = _offsets(c, 2, out, upd)
    return out, upd, rt_bounds, sources, consts


def _dus_out(c: _Ctx, k: int) -> list[OperandMaps]:
    out, _, rt_bounds, sources, consts = _dus_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x - o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    # As XLA: the operand map is the identity (the update hides part of it) and the
    # update map has no constraint keeping its result inside the update.
    upd_map = IndexingMap.build(_box(out), results, rt_vars=rt_bounds, rt_sources=sources)
    return (
        _copies(identity_map(out), 1)
        + _copies(upd_map, 1)
        + _copies(scalar_read_map(out), len(out))
    )


def _dus_in(c: _Ctx, i: int) -> list[OperandMaps]:
    out, upd, rt_bounds, sources, consts = _dus_check(c)
    if i == 0:
        return _one(identity_map(out))
    if i >= 2:
        return _one(scalar_write_map(out))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + o for x, o in zip(d, _rt_terms(consts, rt), strict=True)]

    return _one(IndexingMap.build(_box(upd), results, rt_vars=rt_bounds, rt_sources=sources))


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


def _index_dims(
    c: _Ctx, idx: Sequence[int], r: int, attrs: tuple[str, str], words: tuple[str, str]
) -> tuple[int, list[int], list[int], list[int], list[int]]:
    """A gather's or scatter's index dimension numbers, checked against each other.

    ``attrs`` names the start map and the dropped operand dims (gather: collapsed,
    scatter: inserted); ``words`` names the operand and the indices in messages. Returns
    ``(index_vector_dim, start map, dropped dims, operand batching, index batching)``.
    """
    starts_attr, dropped_attr = attrs
    operand, indices = words
    ivd = c.inst.int_attr("index_vector_dim")
    if not 0 <= ivd <= len(idx):
        raise c.error(f"index_vector_dim={ivd} must be within [0, {len(idx)}]")
    vector = idx[ivd] if ivd < len(idx) else 1
    starts = c.dims_attr(starts_attr, r)
    if len(starts) != vector:
        raise c.error(f"{starts_attr} has {len(starts)} entries, the index vectors {vector}")
    dropped = c.dims_attr(dropped_attr, r, ())
    obatch = c.dims_attr(f"{operand}_batching_dims", r, ())
    ibatch = c.dims_attr(f"{indices}_batching_dims", len(idx), ())
    if len(obatch) != len(ibatch) or ivd in ibatch or set(dropped) & set(obatch):
        raise c.error(f"{operand} and {indices} batching dims must pair up, apart from the rest")
    return ivd, starts, dropped, obatch, ibatch


def _window_dims(
    c: _Ctx, r: int, dropped: list[int], obatch: list[int], attr: tuple[str, int, str, str]
) -> tuple[list[int], list[int]]:
    """The operand dims a gather's slice (scatter's update window) keeps, and where.

    ``attr`` is ``(name, rank of the shape it indexes, that shape's name, the dropped
    dims' name)``. Returns the kept operand dims and the window dims they map to.
    """
    name, rank, shape, dropped_word = attr
    kept = [j for j in range(r) if j not in dropped and j not in obatch]
    dims = c.dims_attr(name, rank)
    if dims != sorted(dims) or len(dims) != len(kept):
        raise c.error(
            f"{name} must list {len(kept)} increasing {shape} dims (one per operand "
            f"dimension neither {dropped_word} nor batching)"
        )
    return kept, dims


def _gather_check(c: _Ctx) -> _Gather:
    c.n_args(2)
    src, idx, out = c.arg(0).dims, c.arg(1).dims, c.out().dims
    r = len(src)
    ivd, starts, collapsed, obatch, ibatch = _index_dims(
        c, idx, r, ("start_index_map", "collapsed_slice_dims"), ("operand", "start_indices")
    )
    sizes = c.inst.int_list("slice_sizes")
    if len(sizes) != r or any(not 0 <= k <= n for k, n in zip(sizes, src, strict=True)):
        raise c.error(f"slice_sizes must give {r} sizes within [{_dims(src)}]")
    if any(sizes[j] > 1 for j in (*collapsed, *obatch)):
        raise c.error("collapsed and batching dimensions must have slice size 1")
    offsets, offset_dims = _window_dims(
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
    c: _Ctx, g: _Gather
) -> tuple[_Value | None, list[int], list[tuple[int, int]], list[str]]:
    """The indices' value function, and the start components left runtime variables.

    A component is fixed where constants or an iota give it at every output index (a
    probe with the output's own variables), else a runtime variable in ``[0, n - size]``
    (gather clamps a start so the slice stays inside), named by the indices' element.
    """
    value = _value_fn(c, c.operands[1])
    probe = IndexingMap.build(_box(g.out), lambda d, s, rt: list(d)).results
    dyn: list[int] = []
    for k, j in enumerate(g.starts):
        comp = as_term(k) if g.ivd < len(g.idx) else None
        if _fixed_value(value, g.idx_index(probe, comp), g.src[j] - g.sizes[j]) is None:
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
    g: _Gather, value: _Value | None, dyn: list[int], d: Sequence[Term], rt: Sequence[Term]
) -> list[Term]:
    """Per operand dimension, the start of the slice output index ``d`` lies in."""
    res: list[Term] = [as_term(0)] * len(g.src)
    for k, j in enumerate(g.starts):
        if k in dyn:
            res[j] = rt[dyn.index(k)]
        else:
            comp = as_term(k) if g.ivd < len(g.idx) else None
            v = _fixed_value(value, g.idx_index(d, comp), g.src[j] - g.sizes[j])
            assert v is not None  # as probed
            res[j] = v
    for o, pos in g.batching:
        res[o] = d[g.batch[pos]]
    return res


def _gather_out(c: _Ctx, k: int) -> list[OperandMaps]:
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

    operand = IndexingMap.build(_box(g.out), results, rt_vars=bounds, rt_sources=names)
    vector = g.idx[g.ivd] if g.ivd < len(g.idx) else 0
    indices = IndexingMap.build(
        _box(g.out),
        lambda d, s, rt: g.idx_index(d, s[0] if vector else None),
        range_vars=[(0, vector - 1)] if vector else [],
    )
    return [(operand,), (indices,)]


def _gather_in(c: _Ctx, i: int) -> list[OperandMaps]:
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

        return _one(
            IndexingMap.build(
                _box(g.idx), idx_results, range_vars=_box([g.out[o] for o in g.offset_dims])
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
        _box(g.src),
        out_index,
        range_vars=_box([g.out[b] for b in g.batch]),
        rt_vars=bounds,
        rt_sources=names,
        constraints=constraints,
    )
    return _one(m)


# ---------------------------------------------------------------------------- scatter
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


def _scatter_check(c: _Ctx) -> _Scatter:
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
    ivd, starts, inserted, obatch, ibatch = _index_dims(
        c,
        idx,
        r,
        ("scatter_dims_to_operand_dims", "inserted_window_dims"),
        ("input", "scatter_indices"),
    )
    windows, window_dims = _window_dims(
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
        raise c.error(f"the update window [{_dims(wsize)}] exceeds the input [{_dims(src)}]")
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
    c: _Ctx, g: _Scatter, probe: Sequence[Term], names: Sequence[str]
) -> tuple[_Value | None, list[int], list[tuple[int, int]], list[str]]:
    """The indices' value function, and the start components left runtime variables.

    ``probe`` is a scatter position over the map's own variables (``names`` their
    names): a component is fixed where constants or an iota give it there. A runtime start lies in
    ``[0, n - window]``: a scatter whose window does not fit is skipped, not clamped,
    so only those starts write (and read) anything.
    """
    value = _value_fn(c, c.operands[g.n])
    dyn = [k for k in range(len(g.starts)) if _raw_value(value, g.idx_index(probe, k)) is None]
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


def _raw_value(fn: _Value | None, idx: Sequence[Term]) -> Term | None:
    """``fn`` at ``idx`` as is (scatter does not clamp); None where it is not fixed."""
    if fn is None:
        return None
    try:
        return fn(idx)
    except _NotFixedError:
        return None


def _scatter_start(
    g: _Scatter,
    value: _Value | None,
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
            v = _raw_value(value, g.idx_index(pos, k))
            assert v is not None  # as probed
            res[j] = v
            fits.append((v, 0, g.src[j] - g.wsize[j]))
    for o, p in g.batching:
        res[o] = pos[p]
    return res, fits


def _scatter_out(c: _Ctx, k: int) -> list[OperandMaps]:
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
    positions = _box([g.upd[u] for u in g.scatter_dims])
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
        _box(g.src),
        upd_results,
        range_vars=_box([g.upd[u] for u in g.scatter_dims]),
        rt_vars=bounds,
        rt_sources=names,
        constraints=upd_constraints,
    )
    vector = g.idx[g.ivd] if g.ivd < len(g.idx) else 0

    def idx_results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        pos = s[:npos]
        return [*pos[: g.ivd], s[npos], *pos[g.ivd :]] if vector else list(pos)

    indices = IndexingMap.build(
        _box(g.src),
        idx_results,
        range_vars=_box([g.upd[u] for u in g.scatter_dims] + ([vector] if vector else [])),
    )
    return [*_copies(identity_map(g.src), g.n), (indices,), *_copies(updates, g.n)]


def _scatter_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_scatter_out`: where an input, index or update element goes.

    An input element stays at its index; an update at ``(s, w)`` lands at
    ``start(s) + w`` (a start that lets the window fit); an element of the indices
    reaches every output element, as every output element reads it (a new value may
    send an update anywhere).
    """
    g = _scatter_check(c)
    if i < g.n:
        return _copies(identity_map(g.src), g.n)
    if i == g.n:
        every = IndexingMap.build(_box(g.idx), lambda d, s, rt: list(s), range_vars=_box(g.src))
        return _copies(every, g.n)
    probe = IndexingMap.build(_box(g.upd), lambda d, s, rt: list(d)).results
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
        _box(g.upd), results, rt_vars=bounds, rt_sources=names, constraints=constraints
    )
    return _copies(m, g.n)


def _all_gather_check(c: _Ctx) -> tuple[int, list[int]]:
    """The gathered dimension and, per operand, its size (the shard size)."""
    if not c.operands:
        raise c.error("needs an operand")
    outs = c.outputs()
    if len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    dims = c.dims_attr("dimensions", len(c.arg(0).dims))
    if len(dims) != 1:
        raise c.error("dimensions= must name the one gathered dimension")
    axis = dims[0]
    shards: list[int] = []
    for i, out in enumerate(outs):
        src = c.arg(i).dims
        if len(src) != len(out.dims) or axis >= len(src):
            raise c.error(f"operand {i} has rank {len(src)}, output {i} rank {len(out.dims)}")
        want = list(src)
        n = src[axis]
        if n == 0 or out.dims[axis] % n:
            raise c.error(
                f"output {i}'s dimension {axis} ({out.dims[axis]}) is not a whole number "
                f"of shards of {n}"
            )
        want[axis] = out.dims[axis]
        c.same_dims(f"output {i}", out.dims, want)
        shards.append(n)
    return axis, shards


def _all_gather_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """All-gather: the output is the participants' operands concatenated along ``axis``.

    Output index ``d`` along ``axis`` lies in shard ``d // n`` (the participant, XLA's
    replica-id map) at its index ``d mod n``: every participant's operand has this
    operand's shape, so the map reads the operand at ``d mod n`` (as XLA's).
    """
    axis, shards = _all_gather_check(c)
    n = shards[k]

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x % n if j == axis else x for j, x in enumerate(d)]

    m = IndexingMap.build(_box(c.out(k).dims), results)
    return [(m,) if i == k else () for i in range(len(c.operands))]


def _all_gather_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """An operand index reaches its place in every shard: ``x + r*n`` for each ``r``."""
    axis, shards = _all_gather_check(c)
    n = shards[i]
    count = c.out(i).dims[axis] // n

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x + s[0] * n if j == axis else x for j, x in enumerate(d)]

    m = IndexingMap.build(_box(c.arg(i).dims), results, range_vars=[(0, count - 1)])
    return [(m,) if j == i else () for j in range(len(c.outputs()))]


def _scan_check(c: _Ctx) -> tuple[int, int, int, bool] | None:
    """``(inputs, outputs, length, reverse)`` of a scan quorem models, else None.

    Modelled: one scanned dimension of rank-1 inputs, scalar carries, array outputs of
    the inputs' shape. Other forms (higher ranks, whose body may mix the other
    dimensions) are unknown indexing.
    """
    carries = c.inst.int_attr("num_carries")
    outs = c.outputs()
    n_in, n_out = len(c.operands) - carries, len(outs) - carries
    if carries < 0 or n_in < 0 or n_out < 0:
        raise c.error(f"num_carries={carries} but {len(c.operands)} operands, {len(outs)} outputs")
    dims = c.inst.int_list("dimensions")
    arrays = [c.arg(i).dims for i in range(n_in)] + [o.dims for o in outs[:n_out]]
    scalars = [c.arg(i).dims for i in range(n_in, len(c.operands))] + [o.dims for o in outs[n_out:]]
    if dims != (0,) or not arrays or any(len(a) != 1 or a != arrays[0] for a in arrays):
        return None
    if any(scalars):
        return None
    reverse = c.inst.attrs.get("is_reverse", "false") == "true"
    return n_in, n_out, arrays[0][0], reverse


_SCAN_FORM: Final = (
    "only a scan of rank-1 inputs along dimension 0 with scalar carries is modelled "
    "(its body may mix the other dimensions)"
)


def _scan_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """Scan along dimension 0: output ``d`` depends on the inputs up to ``d``.

    The carry after step ``d`` has seen inputs ``0..d`` (``d..n-1`` with
    ``is_reverse=true``) and the initial carries, and the body makes output ``d`` from
    it: the input maps are ``s`` in that prefix (range variable and constraint), the
    carries are read whole. A final carry (a scalar output) has seen every input.
    XLA's map reads input ``d`` only, which leaves out what the carry brings.
    """
    shape = _scan_check(c)
    if shape is None:
        return [c.unknown(_SCAN_FORM)] * len(c.operands)
    n_in, n_out, length, reverse = shape
    c.out(k)
    carries = len(c.operands) - n_in
    if k < n_out:
        bound = (0, length - 1)

        def constraints(
            d: list[Term], s: list[Term], rt: list[Term]
        ) -> list[tuple[Term, int, int]]:
            # s <= d (forward) or s >= d (reverse).
            return [(s[0] - d[0], 0, length - 1) if reverse else (d[0] - s[0], 0, length - 1)]

        prefix = IndexingMap.build(
            [bound], lambda d, s, rt: [s[0]], range_vars=[bound], constraints=constraints
        )
        return _copies(prefix, n_in) + _copies(scalar_read_map([length]), carries)
    everything = IndexingMap.build([], lambda d, s, rt: [s[0]], range_vars=[(0, length - 1)])
    return _copies(everything, n_in) + _copies(scalar_read_map([]), carries)


def _scan_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_scan_out`: input ``d`` reaches outputs ``d..n-1``.

    (``0..d`` with ``is_reverse=true``) and every final carry; an initial carry reaches
    every output.
    """
    shape = _scan_check(c)
    if shape is None:
        return [c.unknown(_SCAN_FORM)] * len(c.outputs())
    n_in, n_out, length, reverse = shape
    carries = len(c.outputs()) - n_out
    bound = (0, length - 1)
    if i >= n_in:
        return _copies(scalar_write_map([length]), n_out) + _copies(scalar_read_map([]), carries)

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        # Output s has seen input d: s >= d (forward) or s <= d (reverse).
        return [(d[0] - s[0], 0, length - 1) if reverse else (s[0] - d[0], 0, length - 1)]

    later = IndexingMap.build(
        [bound], lambda d, s, rt: [s[0]], range_vars=[bound], constraints=constraints
    )
    return _copies(later, n_out) + _copies(scalar_read_map([length]), carries)


# ---------------------------------------------------------------------------- collectives, sort
def _all_reduce_check(c: _Ctx) -> None:
    outs = c.outputs()
    if not c.operands or len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    for i, out in enumerate(outs):
        c.same_dims(f"operand {i} ({c.operands[i].name})", c.arg(i).dims, out.dims)


def _all_reduce_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """All-reduce: output ``k`` at ``d`` combines operand ``k`` at ``d`` over the devices.

    Every participant's operand is read at the same index, so on the operand the map is
    the identity (XLA's ComputeOutputToInputCwiseOpIndexing, which it applies to
    all-reduce: "for a single device, all-reduce is an elementwise op"). A variadic
    all-reduce reduces each operand on its own: output ``k`` reads operand ``k`` only.
    """
    _all_reduce_check(c)
    out = c.out(k).dims
    return [(identity_map(out),) if i == k else () for i in range(len(c.operands))]


def _all_reduce_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_all_reduce_out` (XLA's ComputeInputToOutputCwiseOpIndexing)."""
    _all_reduce_check(c)
    dims = c.arg(i).dims
    return [(identity_map(dims),) if k == i else () for k in range(len(c.outputs()))]


def _sort_check(c: _Ctx) -> tuple[int, tuple[int, ...]]:
    if not c.operands:
        raise c.error("needs an operand")
    dims = c.arg(0).dims
    axes = c.dims_attr("dimensions", len(dims))
    if len(axes) != 1:
        raise c.error("dimensions= must name the one sorted dimension")
    axis = axes[0]
    outs = c.outputs()
    if len(outs) != len(c.operands):
        raise c.error(f"has {len(c.operands)} operands for {len(outs)} outputs")
    for i, out in enumerate(outs):
        c.same_dims(f"operand {i} ({c.operands[i].name})", c.arg(i).dims, dims)
        c.same_dims(f"output {i}", out.dims, dims)
    return axis, dims


def _along(axis: int, by: Term) -> Callable[[list[Term]], list[Term]]:
    """An index with its ``axis`` component replaced by ``by``."""
    return lambda d: [by if j == axis else x for j, x in enumerate(d)]


def _sort_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """Sort: output element ``d`` is the ``d[axis]``-th of its row in the sorted order.

    Which element lands there depends on every element of the row, in every operand (the
    comparator may read them all): each operand is read along the sorted dimension
    whole, a range variable, with the other dimensions equal. XLA has no sort indexing
    (unknown); this map is the exact set of elements an output element depends on.
    """
    axis, dims = _sort_check(c)
    c.out(k)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(axis, s[0])(d)

    m = IndexingMap.build(_box(dims), results, range_vars=[(0, dims[axis] - 1)])
    return _copies(m, len(c.operands))


def _sort_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_sort_out`: an element reaches its whole row of every output."""
    axis, dims = _sort_check(c)

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(axis, s[0])(d)

    m = IndexingMap.build(_box(dims), results, range_vars=[(0, dims[axis] - 1)])
    return _copies(m, len(c.outputs()))


def _topk_check(c: _Ctx) -> tuple[tuple[int, ...], tuple[int, ...]]:
    c.n_args(1)
    src = c.arg(0).dims
    outs = c.outputs()
    if not src or len(outs) != 2:
        raise c.error("expects an operand of rank >= 1 and a (values, indices) tuple")
    if c.inst.opcode == "topk":
        k = c.inst.int_attr("k")
    else:  # A custom-call TopK (XLA:CPU's lowering of topk) has no k=: its outputs give it.
        k = outs[0].dims[-1] if outs[0].dims else -1
    if not 0 <= k <= src[-1]:
        raise c.error(f"k={k} must be within [0, {src[-1]}], the last dimension")
    want = [*src[:-1], k]
    for j, out in enumerate(outs):
        c.same_dims(f"output {j}", out.dims, want)
    return src, tuple(want)


def _topk_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """TopK along the last dimension: output ``(b..., j)`` depends on the whole row ``b``.

    The ``j``-th largest element (and its index) of row ``b``: the operand is read at
    ``(b..., s)`` for every ``s``, a range variable. XLA has no topk indexing (unknown).
    """
    src, out = _topk_check(c)
    c.out(k)
    last = len(src) - 1

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(last, s[0])(d)

    return _one(IndexingMap.build(_box(out), results, range_vars=[(0, src[-1] - 1)]))


def _topk_in(c: _Ctx, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_topk_out`: an element reaches every output of its row."""
    src, out = _topk_check(c)
    last = len(src) - 1

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return _along(last, s[0])(d)

    m = IndexingMap.build(_box(src), results, range_vars=[(0, out[-1] - 1)])
    return _copies(m, 2)


def _tuple_out(c: _Ctx, k: int) -> list[OperandMaps]:
    out = c.out(k).dims
    if len(c.operands) != len(c.outputs()):
        raise c.error(f"has {len(c.operands)} operands for {len(c.outputs())} elements")
    c.same_dims(f"operand {k}", c.arg(k).dims, out)
    return [(identity_map(out),) if i == k else () for i in range(len(c.operands))]


def _tuple_in(c: _Ctx, i: int) -> list[OperandMaps]:
    if len(c.operands) != len(c.outputs()):
        raise c.error(f"has {len(c.operands)} operands for {len(c.outputs())} elements")
    dims = c.arg(i).dims
    c.same_dims(f"element {i}", c.out(i).dims, dims)
    return [(identity_map(dims),) if j == i else () for j in range(len(c.outputs()))]


def _gte(c: _Ctx, k: int) -> list[OperandMaps]:
    c.n_args(1)
    if not c.operands[0].shape.is_tuple:
        raise c.error(f"operand {c.operands[0].name} is not a tuple")
    out = c.out().dims
    c.same_dims("the tuple element", c.arg(0).dims, out)
    return _one(identity_map(out))


def _pad_check(c: _Ctx) -> tuple[tuple[int, ...], tuple[PadDim, ...], tuple[int, ...]]:
    c.n_args(2)
    src, out = c.arg(0).dims, c.out().dims
    pads = c.inst.padding()
    if len(pads) != len(src):
        raise c.error(f"padding= has {len(pads)} dimensions, the operand has rank {len(src)}")
    c.same_dims("the padding value", c.arg(1).dims, ())
    c.same_dims("the output", out, [_padded_size(n, p) for n, p in zip(src, pads, strict=True)])
    if any(n < 0 for n in out):
        raise c.error("the padding removes more than the whole operand")
    return src, pads, out


def _pad_out(c: _Ctx, k: int) -> list[OperandMaps]:
    src, pads, out = _pad_check(c)
    return [(pad_map(src, pads),), (scalar_read_map(out),)]


def _pad_in(c: _Ctx, i: int) -> list[OperandMaps]:
    src, pads, out = _pad_check(c)
    if i == 1:
        # Over-approximate: the value may land anywhere outside the operand's image.
        return _one(scalar_write_map(out))
    bounds: list[tuple[int, int]] = []
    for n, p, size in zip(src, pads, out, strict=True):
        step = p.interior + 1
        # Input indices whose output lo + x * step lies in [0, size - 1].
        bounds.append((max(0, -(p.lo // step)), min(n - 1, (size - 1 - p.lo) // step)))

    def results(d: list[Term], s: list[Term], rt: list[Term]) -> list[Term]:
        return [x * (p.interior + 1) + p.lo for x, p in zip(d, pads, strict=True)]

    return _one(IndexingMap.build(bounds, results))


# Why ops without a map have none. Any other op: no indexing is modelled for it.
_WHY_UNKNOWN: Final = {
    "custom-call": "its target ({target}) is opaque code: what it reads is not in the HLO",
    "while": "its body runs a number of times known only at run time, each iteration "
    "reading the carry the last one wrote",
    "conditional": "which branch runs is known only at run time",
    "rng": "it reads no operand elementwise (its operands are distribution parameters)",
    "rng-bit-generator": "its output comes from the generator state as a whole",
    "infeed": "its values come from outside the program",
    "outfeed": "it sends values out of the program",
    "after-all": "it orders side effects and carries no values",
}


def _why_unknown(c: _Ctx, direction: str) -> OperandMaps:
    op = c.inst.opcode
    why = _WHY_UNKNOWN.get(op)
    if why is None:
        return c.unknown(f"no {direction} indexing is modelled for {op}")
    target = c.inst.attrs.get("custom_call_target", "?").strip('"')
    return c.unknown(why.format(target=target[:80]))


def _unknown_out(c: _Ctx, k: int) -> list[OperandMaps]:
    return [_why_unknown(c, "output-to-input")] * len(c.operands)


def _unknown_in(c: _Ctx, i: int) -> list[OperandMaps]:
    return [_why_unknown(c, "input-to-output")] * len(c.outputs())


def _target(c: _Ctx) -> str:
    return c.inst.attrs.get("custom_call_target", "").strip('"')


def _custom_call_out(c: _Ctx, k: int) -> list[OperandMaps]:
    """A custom-call whose target is an op XLA itself lowers to (TopK), else unknown."""
    if _target(c) == "TopK":
        return _topk_out(c, k)
    return _unknown_out(c, k)


def _custom_call_in(c: _Ctx, i: int) -> list[OperandMaps]:
    if _target(c) == "TopK":
        return _topk_in(c, i)
    return _unknown_in(c, i)


_Fn = Callable[[_Ctx, int], list[OperandMaps]]
_ALL_REDUCE: Final = ("all-reduce", "all-reduce-start", "all-reduce-done")
_OUT_TO_IN: Final[dict[str, _Fn]] = {
    **dict.fromkeys(ELEMENTWISE, _elementwise_out),
    "bitcast-convert": _bitcast_convert_out,
    "broadcast": _broadcast_out,
    "transpose": _transpose_out,
    "reverse": _reverse,
    "slice": _slice_out,
    "concatenate": _concat_out,
    "reshape": _reshape_out,
    "bitcast": _bitcast_out,
    "dot": _dot_out,
    "scaled-dot": _scaled_dot_out,
    "all-gather": _all_gather_out,
    "scan": _scan_out,
    "reduce": _reduce_out,
    "reduce-window": _reduce_window_out,
    "convolution": _conv_out,
    "dynamic-slice": _dynamic_slice_out,
    "dynamic-update-slice": _dus_out,
    "gather": _gather_out,
    "pad": _pad_out,
    "tuple": _tuple_out,
    "get-tuple-element": _gte,
    **dict.fromkeys(_ALL_REDUCE, _all_reduce_out),
    "sort": _sort_out,
    "topk": _topk_out,
    "scatter": _scatter_out,
    "select-and-scatter": _select_and_scatter_out,
    "custom-call": _custom_call_out,
}
_IN_TO_OUT: Final[dict[str, _Fn]] = {
    **dict.fromkeys(ELEMENTWISE, _elementwise_in),
    "bitcast-convert": _bitcast_convert_in,
    "broadcast": _broadcast_in,
    "transpose": _transpose_in,
    "reverse": _reverse,
    "slice": _slice_in,
    "concatenate": _concat_in,
    "reshape": _reshape_in,
    "bitcast": _bitcast_in,
    "dot": _dot_in,
    "all-gather": _all_gather_in,
    "scan": _scan_in,
    "reduce": _reduce_in,
    "dynamic-update-slice": _dus_in,
    "dynamic-slice": _dynamic_slice_in,
    "reduce-window": _reduce_window_in,
    "gather": _gather_in,
    "pad": _pad_in,
    "tuple": _tuple_in,
    "get-tuple-element": _gte,
    **dict.fromkeys(_ALL_REDUCE, _all_reduce_in),
    "sort": _sort_in,
    "topk": _topk_in,
    "scatter": _scatter_in,
    "select-and-scatter": _select_and_scatter_in,
    "convolution": _conv_in,
    "custom-call": _custom_call_in,
}


def operand_output_id(inst: Instruction, operand: int) -> int:
    """Which output of operand ``operand`` the instruction reads.

    The tuple element ``index`` for ``get-tuple-element``, else 0.
    """
    return inst.int_attr("index") if inst.opcode == "get-tuple-element" else 0


def output_to_input(
    inst: Instruction,
    operands: Sequence[Instruction],
    output_id: int = 0,
    lookup: Callable[[str], Instruction] | None = None,
) -> list[OperandMaps]:
    """Per operand, the maps from an index of output ``output_id`` to that operand.

    ``operands`` are the instructions defining the operands (their shapes, and integer
    constants used as dynamic offsets, are read). Ops with no operands give ``[]``;
    unsupported ops give an :class:`Unknown` map per operand. Fusions are handled by
    :mod:`quorem.hlo.indexing`. Raises ``HloError`` on inconsistent
    shapes or attributes. ``lookup`` gives the instruction of a name in the same
    computation: runtime offsets are traced through it to constants and iotas.
    """
    c = _Ctx(inst, tuple(operands), lookup)
    c.out(output_id)
    if inst.opcode in _NO_OPERANDS:
        return []
    return _OUT_TO_IN.get(inst.opcode, _unknown_out)(c, output_id)


def input_to_output(
    inst: Instruction, operands: Sequence[Instruction], operand_id: int
) -> list[OperandMaps]:
    """Per output, the maps from an index of operand ``operand_id`` to that output.

    Unsupported ops and directions give an :class:`Unknown` map per output; an output the operand
    does not reach (another element of a ``tuple``) gets ``()``. Raises ``HloError``
    when there is no such operand or on inconsistent shapes or attributes.
    """
    c = _Ctx(inst, tuple(operands))
    if not 0 <= operand_id < len(operands):
        raise inst.error(f"has {len(operands)} operands, there is no operand {operand_id}")
    return _IN_TO_OUT.get(inst.opcode, _unknown_in)(c, operand_id)
