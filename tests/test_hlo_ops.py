"""HLO indexing of the ops real modules are made of (issue 23): call, scatter, sort, ...

Each op's maps are checked, as in ``test_hlo_indexing``, against an element-by-element
simulation of the op on random shapes and indices (``check_op``), and on the forms JAX
prints.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_hlo_cli import run
from test_hlo_indexing import (
    PROPS,
    Index,
    Reads,
    assert_maps,
    box,
    check_op,
    dims_st,
    hlo,
    in_to_out,
    ints,
    map_reads,
    out_to_in,
    shape_text,
    unknowns,
)

from quorem.hlo.indexing import (
    Unknown,
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from quorem.hlo.parse import HloError, parse_hlo

# ---------------------------------------------------------------------------- call
# As jax.jit(lambda x, w: jax.nn.relu(x @ w)).lower(...).as_text(dialect="hlo") prints it.
CALL_MODULE = """HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0})
  ->f32[4,16]{1,0}}

relu.1 {
  Arg_0.2 = f32[4,16]{1,0} parameter(0)
  constant.3 = f32[] constant(0)
  broadcast.4 = f32[4,16]{1,0} broadcast(constant.3), dimensions={}
  ROOT maximum.5 = f32[4,16]{1,0} maximum(Arg_0.2, broadcast.4)
}

ENTRY main.8 {
  Arg_0.1 = f32[4,8]{1,0} parameter(0)
  Arg_1.2 = f32[8,16]{1,0} parameter(1)
  dot.6 = f32[4,16]{1,0} dot(Arg_0.1, Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT call.8 = f32[4,16]{1,0} call(dot.6), to_apply=relu.1
}
"""


def test_call_composes_through_the_called_computation() -> None:
    text = CALL_MODULE
    (ms,) = out_to_in(text)
    assert_maps(ms, "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 15]")
    module = parse_hlo(text)
    # The whole module as one fusion: through the call and the dot.
    lhs, rhs = fused_output_to_input(module, module.entry)
    assert_maps(lhs, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 15], s0 in [0, 7]")
    assert_maps(rhs, "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 15], s0 in [0, 7]")
    (back,) = fused_input_to_output(module, module.entry, 1)
    assert_maps(back, "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 7], d1 in [0, 15], s0 in [0, 3]")
    assert_maps(in_to_out(text, 0)[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 15]")


def test_call_of_a_missing_computation_is_an_error_at_the_call() -> None:
    with pytest.raises(HloError, match="nope") as info:
        out_to_in(CALL_MODULE.replace("to_apply=relu.1\n", "to_apply=nope\n"))
    assert info.value.line == 15
    with pytest.raises(HloError, match="needs to_apply=") as info:
        out_to_in(CALL_MODULE.replace(", to_apply=relu.1\n", "\n"))


# ---------------------------------------------------------------------------- unknown: why
WHY = """HloModule m

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[8] negate(x)
  ROOT t = (s32[], f32[8]) tuple(j, y)
}

cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

fused {
  a = f32[8] parameter(0)
  cc = f32[8] custom-call(a), custom_call_target="__cpu$xnn_thing", api_version=API_VERSION_TYPED
  ROOT e = f32[8] exponential(cc)
}

ENTRY e {
  x0 = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  y = f32[8] get-tuple-element(w), index=1
  ROOT f = f32[8] fusion(y), kind=kLoop, calls=fused
}
"""


def test_unknown_maps_say_why_in_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "why.hlo"
    path.write_text(WHY)
    _, text = run("hlo", str(path))
    assert text.splitlines() == [
        "operand id = 0",
        "  unknown indexing: cc (custom-call): its target (__cpu$xnn_thing) is opaque code: "
        "what it reads is not in the HLO",
    ]
    _, text = run("hlo", str(path), "--json", "--fused")
    (op,) = json.loads(text)["operands"]
    assert op["maps"] == [None] and op["runtime_variables"] == [None]
    (reason,) = op["reasons"]
    assert reason.startswith("cc (custom-call): its target")
    # Through the whole entry computation, the while is the first unknown on the way.
    path.write_text(WHY.replace("fusion(y), kind=kLoop, calls=fused", "negate(y)"))
    _, text = run("hlo", str(path), "--json", "--fused")
    (op,) = json.loads(text)["operands"]
    assert op["maps"] == [None]
    assert op["reasons"][0].startswith("w (while): its body runs a number of times known only")
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0", "--fused", "--json")
    record = json.loads(text)
    assert record["maps"] == [None]
    assert record["reasons"][0].startswith("w (while)")


def test_an_op_without_indexing_says_which_direction() -> None:
    text = "p = f32[4] parameter(0)\nROOT c = f32[4] cholesky(p), lower=true"
    ((m,),) = out_to_in(text)
    assert isinstance(m, Unknown)
    assert m.reason == "c (cholesky): no output-to-input indexing is modelled for cholesky"


# ---------------------------------------------------------------------------- all-reduce
@PROPS
@given(dims_st, st.integers(1, 3))
def test_all_reduce_property(dims: list[int], n: int) -> None:
    # Simulate: output k at d sums operand k at d over the devices (every device's
    # operand has this shape and is read at d).
    ops = [f"p{i} = {shape_text(dims)} parameter({i})" for i in range(n)]
    args = ", ".join(f"p{i}" for i in range(n))
    shape = shape_text(dims) if n == 1 else "(" + ", ".join([shape_text(dims)] * n) + ")"
    text = hlo(
        *ops,
        f"ROOT ar = {shape} all-reduce({args}), channel_id=1, replica_groups={{{{0,1}}}}, "
        "use_global_device_ids=true, to_apply=add",
    )
    module = parse_hlo(text)
    comp = module.entry
    for k in range(n):
        per_operand = output_to_input(module, comp, comp.root, k)
        for o in box(dims):
            got = {(i, x) for i, ms in enumerate(per_operand) for m in ms for x in map_reads(m, o)}
            assert got == {(k, o)}
        per_output = input_to_output(module, comp, comp.root, k)
        for x in box(dims):
            got = {(j, o) for j, ms in enumerate(per_output) for m in ms for o in map_reads(m, x)}
            assert got == {(k, x)}


# ---------------------------------------------------------------------------- sort, topk
def sort_reads(dims: Sequence[int], axis: int, rng: random.Random) -> Reads:
    """Which operand-0 elements each output of a sort along ``axis`` depends on, by running it.

    Sorts random distinct keys row by row, then raises (and lowers) each key past every
    other and records the outputs that change: an output depends on an element when some
    change of that element changes it.
    """
    keys = {x: rng.random() for x in box(dims)}

    def run(data: dict[Index, float]) -> dict[Index, float]:
        out: dict[Index, float] = {}
        for x in box(dims):
            if x[axis] == 0:
                row = [
                    tuple(s if j == axis else v for j, v in enumerate(x)) for s in range(dims[axis])
                ]
                for y, value in zip(row, sorted(data[r] for r in row), strict=True):
                    out[y] = value
        return out

    base = run(keys)
    ref: Reads = {o: set() for o in box(dims)}
    for x in box(dims):
        for extreme in (2.0, -1.0):
            changed = run({**keys, x: extreme})
            for o in box(dims):
                if changed[o] != base[o]:
                    ref[o].add((0, x))
    return ref


@PROPS
@given(dims_st, st.integers(1, 2), st.data())
def test_sort_property(dims: list[int], n: int, data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(dims) - 1))
    ref = sort_reads(dims, axis, random.Random(data.draw(st.integers(0, 2**32))))
    # The other operands are carried along by the permutation the comparator picks, and
    # the comparator may read them too: each output depends on their whole row as well.
    for o in box(dims):
        row = [tuple(s if j == axis else x for j, x in enumerate(o)) for s in range(dims[axis])]
        ref[o] |= {(i, y) for i in range(1, n) for y in row}
    shapes = ", ".join([shape_text(dims)] * n)
    text = hlo(
        *(f"p{i} = {shape_text(dims)} parameter({i})" for i in range(n)),
        f"ROOT s = {shape_text(dims) if n == 1 else '(' + shapes + ')'} "
        f"sort({', '.join(f'p{i}' for i in range(n))}), dimensions={{{axis}}}, "
        "is_stable=true, to_apply=cmp",
    )
    check_op(text, ref, dims, [dims] * n)


@PROPS
@given(dims_st, st.data())
def test_topk_property(dims: list[int], data: st.DataObject) -> None:
    k = data.draw(st.integers(0, dims[-1]))
    out = [*dims[:-1], k]
    ref: Reads = {o: {(0, (*o[:-1], s)) for s in range(dims[-1])} for o in box(out)}
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        f"ROOT t = ({shape_text(out)}, s32[{ints(out)}]) topk(p0), k={k}, largest=true",
    )
    check_op(text, ref, out, [dims])


# ---------------------------------------------------------------------------- dynamic-slice
@PROPS
@given(st.data())
def test_dynamic_slice_property(data: st.DataObject) -> None:
    src = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    sizes = [data.draw(st.integers(1, n)) for n in src]
    # Per dimension, a constant offset (possibly out of range: the op clamps it) or a
    # parameter (any value at run time).
    consts = [data.draw(st.none() | st.integers(-2, 6)) for _ in src]
    lines = [f"p0 = {shape_text(src)} parameter(0)"]
    params = itertools.count(1)
    for j, v in enumerate(consts):
        value = f"parameter({next(params)})" if v is None else f"constant({v})"
        lines.append(f"o{j} = s32[] {value}")
    offsets = ", ".join(f"o{j}" for j in range(len(src)))
    lines.append(
        f"ROOT ds = {shape_text(sizes)} dynamic-slice(p0, {offsets}), "
        f"dynamic_slice_sizes={{{ints(sizes)}}}"
    )
    # Simulate every run: each offset clamped to [0, n - size]; a parameter takes any value.
    choices = [
        range(n - k + 1) if v is None else [min(max(v, 0), n - k)]
        for v, n, k in zip(consts, src, sizes, strict=True)
    ]
    ref: Reads = {}
    for o in box(sizes):
        ref[o] = {(1 + j, ()) for j in range(len(src))}
        for start in itertools.product(*choices):
            ref[o].add((0, tuple(x + a for x, a in zip(o, start, strict=True))))
    check_op(hlo(*lines), ref, sizes, [src] + [[]] * len(src))


# ---------------------------------------------------------------------------- gather
@dataclasses.dataclass
class GatherCase:
    text: str
    src: list[int]
    idx: list[int]
    out: list[int]
    ref: Reads


@st.composite
def gathers(draw: st.DrawFn) -> GatherCase:
    """A gather in any form: collapsed and batching dims, any index_vector_dim, implicit
    index vectors, indices from a parameter or a constant (out of range ones clamp)."""
    src = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    r = len(src)
    dims = list(range(r))
    obatch = [draw(st.sampled_from(dims))] if r >= 2 and draw(st.booleans()) else []
    rest = [j for j in dims if j not in obatch]
    collapsed = sorted(j for j in rest if draw(st.booleans()))
    starts = draw(st.permutations(rest))[: draw(st.integers(1, len(rest)))]
    sizes = [
        1 if j in collapsed or j in obatch else draw(st.integers(1, n)) for j, n in enumerate(src)
    ]
    batch_sizes = draw(st.lists(st.integers(1, 3), max_size=2))
    ibatch_pos = []
    if obatch:
        pos = draw(st.integers(0, len(batch_sizes)))
        batch_sizes.insert(pos, src[obatch[0]])
        ibatch_pos = [pos]
    implicit = len(starts) == 1 and draw(st.booleans())
    if implicit:
        ivd = len(batch_sizes)
        idx = list(batch_sizes)
    else:
        ivd = draw(st.integers(0, len(batch_sizes)))
        idx = [*batch_sizes[:ivd], len(starts), *batch_sizes[ivd:]]
    idx_batch = [j for j in range(len(idx)) if j != ivd]
    ibatch = [idx_batch[p] for p in ibatch_pos]
    offsets = [j for j in dims if j not in collapsed and j not in obatch]
    out_rank = len(offsets) + len(batch_sizes)
    offset_dims = sorted(draw(st.permutations(range(out_rank)))[: len(offsets)])
    batch = [j for j in range(out_rank) if j not in offset_dims]
    out = [0] * out_rank
    for j, o in zip(offsets, offset_dims, strict=True):
        out[o] = sizes[j]
    for b, n in zip(batch, batch_sizes, strict=True):
        out[b] = n
    constant = draw(st.booleans())
    values = {i: draw(st.integers(-2, 6)) for i in box(idx)} if constant else {}
    if constant:
        literal = json.dumps(nested(values, idx)).replace("[", "{").replace("]", "}")
        line = f"i = s32[{ints(idx)}] constant({literal})"
    else:
        line = f"i = s32[{ints(idx)}] parameter(1)"

    spec = GatherSpec(src, idx, out, ivd, implicit, starts, sizes, offsets, offset_dims, batch)
    ref = simulate_gather(
        spec, list(zip(obatch, ibatch, strict=True)), values if constant else None
    )
    text = hlo(
        f"p0 = {shape_text(src)} parameter(0)",
        line,
        f"ROOT g = {shape_text(out)} gather(p0, i), offset_dims={{{ints(offset_dims)}}}, "
        f"collapsed_slice_dims={{{ints(collapsed)}}}, start_index_map={{{ints(starts)}}}, "
        f"operand_batching_dims={{{ints(obatch)}}}, "
        f"start_indices_batching_dims={{{ints(ibatch)}}}, index_vector_dim={ivd}, "
        f"slice_sizes={{{ints(sizes)}}}, indices_are_sorted=false",
    )
    return GatherCase(text, src, idx, out, ref)


@dataclasses.dataclass
class GatherSpec:
    src: list[int]
    idx: list[int]
    out: list[int]
    ivd: int
    implicit: bool
    starts: list[int]
    sizes: list[int]
    offsets: list[int]
    offset_dims: list[int]
    batch: list[int]


def simulate_gather(
    g: GatherSpec, batching: list[tuple[int, int]], values: dict[Index, int] | None
) -> Reads:
    """The reads of each output index, after StableHLO's spec of gather.

    ``values`` are the indices (None: a parameter, every run is folded into one set of
    reads per output index); ``batching`` pairs operand and indices batching dims.
    """
    idx_batch = [j for j in range(len(g.idx)) if j != g.ivd]
    ref: Reads = {}
    for o in box(g.out):
        batch = [o[b] for b in g.batch]
        where = [
            tuple(batch) if g.implicit else (*batch[: g.ivd], k, *batch[g.ivd :])
            for k in range(len(g.starts))
        ]
        reads: set[tuple[int, Index]] = {(1, w) for w in where}
        choices: list[Sequence[int]] = []
        for k, j in enumerate(g.starts):
            hi = g.src[j] - g.sizes[j]
            choices.append(range(hi + 1) if values is None else [min(max(values[where[k]], 0), hi)])
        for picked in itertools.product(*choices):
            full = [0] * len(g.src)
            for j, v in zip(g.starts, picked, strict=True):
                full[j] = v
            for od, ip in batching:
                full[od] = batch[idx_batch.index(ip)]
            for j, od in zip(g.offsets, g.offset_dims, strict=True):
                full[j] += o[od]
            reads.add((0, tuple(full)))
        ref[o] = reads
    return ref


def nested(values: dict[Index, int], dims: Sequence[int]) -> object:
    """A row-major nested list of ``values`` (a scalar for rank 0)."""
    if not dims:
        return values[()]

    def build(prefix: Index, rest: Sequence[int]) -> object:
        if not rest:
            return values[prefix]
        return [build((*prefix, x), rest[1:]) for x in range(rest[0])]

    return build((), dims)


@PROPS
@given(gathers())
def test_gather_property(case: GatherCase) -> None:
    module = parse_hlo(case.text)
    comp = module.entry
    (operand,), _ = output_to_input(module, comp, comp.root)
    assert not isinstance(operand, Unknown)
    if operand.rt_vars and module.entry.get("i").opcode == "constant":
        # A constant read at an index that is not fixed stays a runtime variable: the
        # map reads more, and must read every simulated element.
        per_operand = output_to_input(module, comp, comp.root)
        for o in box(case.out):
            got = {(k, i) for k, ms in enumerate(per_operand) for m in ms for i in map_reads(m, o)}
            assert case.ref[o] <= got, (o, case.text)
        return
    check_op(case.text, case.ref, case.out, [case.src, case.idx])


def test_gather_as_jax_prints_an_embedding_lookup() -> None:
    # jnp.take(x, i, axis=0) for i of shape [3, 8]: XLA's gather simplifier would
    # reshape the indices to [24, 1] and the output to [24, 1, 16]; the maps are those of
    # that rewrite composed back.
    text = hlo(
        "x = f32[8,16]{1,0} parameter(0)",
        "i = s32[3,8,1]{2,1,0} parameter(1)",
        "ROOT g = f32[3,8,16]{2,1,0} gather(x, i), offset_dims={2}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}",
    )
    operand, indices = out_to_in(text)
    assert_maps(
        operand,
        "(d0, d1, d2){rt0} -> (rt0, d2), "
        "domain: d0 in [0, 2], d1 in [0, 7], d2 in [0, 15], rt0 in [0, 7]",
    )
    assert_maps(
        indices,
        "(d0, d1, d2) -> (d0, d1, 0), domain: d0 in [0, 2], d1 in [0, 7], d2 in [0, 15]",
    )
    ((m,),) = out_to_in(text)[:1]
    assert not isinstance(m, Unknown)
    assert [v.source for v in m.rt_vars] == ["i[d0, d1, 0] (operand 1 of g)"]
    (back,) = in_to_out(text, 0)
    assert_maps(
        back,
        "(d0, d1)[s0, s1]{rt0} -> (s0, s1, d1), domain: d0 in [0, 7], d1 in [0, 15], "
        "s0 in [0, 2], s1 in [0, 7], rt0 in [0, 7], d0 - rt0 in [0, 0]",
    )


# ---------------------------------------------------------------------------- scatter
@dataclasses.dataclass
class ScatterCase:
    text: str
    n: int
    src: list[int]
    idx: list[int]
    upd: list[int]
    ref: Reads


@st.composite
def scatters(draw: st.DrawFn) -> ScatterCase:
    """A scatter in any form: inserted and batching dims, any index_vector_dim, implicit
    index vectors, one or two inputs, indices from a parameter or a constant (with
    starts whose window does not fit: those updates are skipped)."""
    src = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n = draw(st.integers(1, 2))
    r = len(src)
    obatch = [draw(st.sampled_from(range(r)))] if r >= 2 and draw(st.booleans()) else []
    rest = [j for j in range(r) if j not in obatch]
    inserted = sorted(j for j in rest if draw(st.booleans()))
    starts = draw(st.permutations(rest))[: draw(st.integers(1, len(rest)))]
    windows = [j for j in rest if j not in inserted]
    wsize = {j: draw(st.integers(1, src[j])) for j in windows}
    positions = draw(st.lists(st.integers(1, 3), max_size=2))
    ibatch_pos = []
    if obatch:
        ibatch_pos = [draw(st.integers(0, len(positions)))]
        positions.insert(ibatch_pos[0], src[obatch[0]])
    implicit = len(starts) == 1 and draw(st.booleans())
    ivd = len(positions) if implicit else draw(st.integers(0, len(positions)))
    idx = list(positions) if implicit else [*positions[:ivd], len(starts), *positions[ivd:]]
    idx_batch = [j for j in range(len(idx)) if j != ivd]
    ibatch = [idx_batch[p] for p in ibatch_pos]
    rank = len(windows) + len(positions)
    window_dims = sorted(draw(st.permutations(range(rank)))[: len(windows)])
    scatter_dims = [j for j in range(rank) if j not in window_dims]
    upd = [0] * rank
    for j, u in zip(windows, window_dims, strict=True):
        upd[u] = wsize[j]
    for u, m in zip(scatter_dims, positions, strict=True):
        upd[u] = m
    kind = draw(st.sampled_from(["parameter", "constant", "splat"]))
    values = {i: draw(st.integers(-2, 6)) for i in box(idx)} if kind != "parameter" else None
    if kind == "splat":  # every start fixed: the maps are exact
        values = dict.fromkeys(box(idx), draw(st.integers(-1, 4)))

    spec = ScatterSpec(n, src, idx, upd, ivd, implicit, starts, scatter_dims)
    windowing = (windows, window_dims, [wsize.get(j, 1) for j in range(r)])
    ref = simulate_scatter(spec, windowing, list(zip(obatch, ibatch_pos, strict=True)), values)
    if values is None:
        line = f"i = s32[{ints(idx)}] parameter({n})"
    else:
        literal = json.dumps(nested(values, idx)).replace("[", "{").replace("]", "}")
        line = f"i = s32[{ints(idx)}] constant({literal})"
    first = n + 1 if values is None else n  # the updates' first parameter number
    out = shape_text(src) if n == 1 else f"({shape_text(src)}, {shape_text(src)})"
    ins = [f"p{i}" for i in range(n)]
    ups = [f"u{i}" for i in range(n)]
    text = hlo(
        *(f"p{i} = {shape_text(src)} parameter({i})" for i in range(n)),
        line,
        *(f"u{i} = {shape_text(upd)} parameter({first + i})" for i in range(n)),
        f"ROOT s = {out} scatter({', '.join([*ins, 'i', *ups])}), "
        f"update_window_dims={{{ints(window_dims)}}}, inserted_window_dims={{{ints(inserted)}}}, "
        f"scatter_dims_to_operand_dims={{{ints(starts)}}}, input_batching_dims={{{ints(obatch)}}}, "
        f"scatter_indices_batching_dims={{{ints(ibatch)}}}, index_vector_dim={ivd}, "
        "to_apply=add",
    )
    return ScatterCase(text, n, src, idx, upd, ref)


@dataclasses.dataclass
class ScatterSpec:
    n: int
    src: list[int]
    idx: list[int]
    upd: list[int]
    ivd: int
    implicit: bool
    starts: list[int]
    scatter_dims: list[int]


def simulate_scatter(
    g: ScatterSpec,
    windowing: tuple[list[int], list[int], list[int]],
    batching: list[tuple[int, int]],
    values: dict[Index, int] | None,
) -> Reads:
    """The reads of each output index, after StableHLO's spec of scatter and XLA's rule
    that an update whose window does not fit is skipped.

    ``windowing`` is (operand window dims, update window dims, window size per operand
    dim); ``batching`` pairs an operand batching dim with its scatter position;
    ``values`` are the indices (None: a parameter, every run folded into one set).
    """
    windows, window_dims, size = windowing
    n = g.n
    ref: Reads = {o: {(i, o) for i in range(n)} | {(n, i) for i in box(g.idx)} for o in box(g.src)}
    for u in box(g.upd):
        pos = [u[p] for p in g.scatter_dims]
        where = [
            tuple(pos) if g.implicit else (*pos[: g.ivd], k, *pos[g.ivd :])
            for k in range(len(g.starts))
        ]
        choices = [
            range(-1, g.src[j] + 1) if values is None else [values[where[k]]]
            for k, j in enumerate(g.starts)
        ]
        for picked in itertools.product(*choices):
            full = [0] * len(g.src)
            for j, v in zip(g.starts, picked, strict=True):
                full[j] = v
            for o, p in batching:
                full[o] = pos[p]
            if any(not 0 <= a <= m - w for a, m, w in zip(full, g.src, size, strict=True)):
                continue  # the window does not fit: XLA skips the update
            for j, w in zip(windows, window_dims, strict=True):
                full[j] += u[w]
            ref[tuple(full)] |= {(n + 1 + i, u) for i in range(n)}
    return ref


@PROPS
@given(scatters())
def test_scatter_property(case: ScatterCase) -> None:
    module = parse_hlo(case.text)
    comp = module.entry
    per_operand = output_to_input(module, comp, comp.root)
    dims = [case.src] * case.n + [case.idx] + [case.upd] * case.n
    values = (
        re.findall(r"-?\d+", case.text.split("constant(")[1].split(")")[0])
        if ("constant(" in case.text)
        else []
    )
    if len(set(values)) > 1:
        # A constant read at an index that is not fixed stays a runtime variable (or
        # its one feasible value): the map reads more, and must read every simulated
        # element.
        for o in box(case.src):
            got = {(k, i) for k, ms in enumerate(per_operand) for m in ms for i in map_reads(m, o)}
            assert case.ref[o] <= got, (o, case.text)
        return
    check_op(case.text, case.ref, case.src, dims)


def test_scatter_as_jax_prints_an_embedding_gradient() -> None:
    # x.at[i].add(u) for i of shape [3], as jax.jit(...).lower(...).as_text("hlo") prints it.
    text = hlo(
        "x.1 = f32[8,16]{1,0} parameter(0)",
        "i.1 = s32[3,1]{1,0} parameter(1)",
        "u.1 = f32[3,16]{1,0} parameter(2)",
        "ROOT scatter-add.5 = f32[8,16]{1,0} scatter(x.1, i.1, u.1), update_window_dims={1}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
        "indices_are_sorted=false, unique_indices=false, to_apply=region_0.1",
    )
    x, i, u = out_to_in(text)
    dom = "d0 in [0, 7], d1 in [0, 15]"
    assert_maps(x, f"(d0, d1) -> (d0, d1), domain: {dom}")
    assert_maps(i, f"(d0, d1)[s0] -> (s0, 0), domain: {dom}, s0 in [0, 2]")
    assert_maps(
        u,
        f"(d0, d1)[s0]{{rt0}} -> (s0, d1), domain: {dom}, s0 in [0, 2], rt0 in [0, 7], "
        "d0 - rt0 in [0, 0]",
    )
    (m,) = u
    assert m and [v.source for v in m.rt_vars] == ["i.1[s0, 0] (operand 1 of scatter-add.5)"]
    assert_maps(
        in_to_out(text, 2)[0],
        "(d0, d1){rt0} -> (rt0, d1), domain: d0 in [0, 2], d1 in [0, 15], rt0 in [0, 7]",
    )


# ---------------------------------------------------------------------------- select-and-scatter
@PROPS
@given(st.data())
def test_select_and_scatter_property(data: st.DataObject) -> None:
    src = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    cfg = []
    for n in src:
        size, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
        lo, hi = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
        if lo + hi + n < size:
            size = 1
        cfg.append((size, stride, lo, hi))
    source = [
        (n + lo + hi - size) // stride + 1
        for n, (size, stride, lo, hi) in zip(src, cfg, strict=True)
    ]

    # Simulate: window position o covers padded positions o*stride + w; the operand
    # element x sits at padded position x + lo. Its real elements take part in its
    # selection; the selected one receives source[o].
    def covered(o: Index) -> list[Index]:
        return [
            x
            for x in box(src)
            if all(
                0 <= xi + lo - oi * stride < size
                for xi, oi, (size, stride, lo, _) in zip(x, o, cfg, strict=True)
            )
        ]

    ref: Reads = {x: {(2, ())} for x in box(src)}
    for o in box(source):
        window = covered(o)
        for x in window:
            ref[x] |= {(1, o)} | {(0, y) for y in window}
    # Run it (select = GE, as max pooling's gradient) on random data: every source
    # element lands on an element whose reads include it.
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    values = {x: rng.random() for x in box(src)}
    for o in box(source):
        window = covered(o)
        if window:
            chosen = max(window, key=lambda x: values[x])
            assert (1, o) in ref[chosen] and all((0, y) in ref[chosen] for y in window)
    spec = "size={} stride={} pad={}".format(
        "x".join(str(c[0]) for c in cfg),
        "x".join(str(c[1]) for c in cfg),
        "x".join(f"{c[2]}_{c[3]}" for c in cfg),
    )
    text = hlo(
        f"p0 = {shape_text(src)} parameter(0)",
        f"g = {shape_text(source)} parameter(1)",
        "c = f32[] constant(0)",
        f"ROOT s = {shape_text(src)} select-and-scatter(p0, g, c), window={{{spec}}}, "
        "select=ge, scatter=add",
    )
    check_op(text, ref, src, [src, source, []])


def test_select_and_scatter_as_jax_prints_max_pooling_gradient() -> None:
    text = hlo(
        "x.1 = f32[2,8,8,3]{3,2,1,0} parameter(0)",
        "g.1 = f32[2,4,4,3]{3,2,1,0} parameter(1)",
        "constant.2 = f32[] constant(0)",
        "ROOT select_and_scatter.9 = f32[2,8,8,3]{3,2,1,0} select-and-scatter(x.1, g.1, "
        "constant.2), window={size=1x2x2x1 stride=1x2x2x1}, select=region_0.1, "
        "scatter=region_1.2",
    )
    x, g, init = out_to_in(text)
    dom = "d0 in [0, 1], d1 in [0, 7], d2 in [0, 7], d3 in [0, 2]"
    assert_maps(g, f"(d0, d1, d2, d3) -> (d0, d1 floordiv 2, d2 floordiv 2, d3), domain: {dom}")
    assert_maps(
        x,
        f"(d0, d1, d2, d3)[s0, s1] -> (d0, (d1 floordiv 2) * 2 + s0, (d2 floordiv 2) * 2 + s1, "
        f"d3), domain: {dom}, s0 in [0, 1], s1 in [0, 1]",
    )
    assert_maps(init, f"(d0, d1, d2, d3) -> (), domain: {dom}")


def test_custom_call_topk_as_xla_cpu_lowers_topk() -> None:
    text = hlo(
        "x.1 = f32[8,16]{1,0} parameter(0)",
        "ROOT custom-call = (f32[8,3]{1,0}, s32[8,3]{1,0}) custom-call(x.1), "
        'custom_call_target="TopK", called_computations={compare-greater-than.1.clone}',
    )
    for k in (0, 1):
        assert_maps(
            out_to_in(text, k)[0],
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 7], d1 in [0, 2], s0 in [0, 15]",
        )
    values, indices = in_to_out(text, 0)
    assert values == indices
    assert_maps(
        values, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 7], d1 in [0, 15], s0 in [0, 2]"
    )


# ---------------------------------------------------------------------------- malformed
SCATTER_1 = "p = f32[4] parameter(0)\ni = s32[1,1] parameter(1)\n"
SCATTER_ATTRS = "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "p = f32[4,4] parameter(0)\nROOT s = f32[4,4] sort(p), dimensions={0,1}, to_apply=lt",
            "the one sorted dimension",
        ),
        (
            "p = f32[4,4] parameter(0)\nROOT t = (f32[4,9], s32[4,9]) topk(p), k=9",
            r"k=9 must be within \[0, 4\]",
        ),
        (
            SCATTER_1 + "ROOT s = f32[4] scatter(p, i), update_window_dims={}, "
            "inserted_window_dims={0}, " + SCATTER_ATTRS,
            "as many updates as inputs",
        ),
        (
            SCATTER_1 + "u = f32[1,5] parameter(2)\nROOT s = f32[4] scatter(p, i, u), "
            "update_window_dims={1}, inserted_window_dims={}, " + SCATTER_ATTRS,
            r"the update window \[5\] exceeds the input \[4\]",
        ),
        (
            "p = f32[4] parameter(0)\ng = f32[3] parameter(1)\nc = f32[] constant(0)\n"
            "ROOT s = f32[4] select-and-scatter(p, g, c), window={size=2 stride=2}, "
            "select=ge, scatter=add",
            r"the source: expected \[2\], found \[3\]",
        ),
        (
            "p = f32[4] parameter(0)\nROOT a = (f32[4], f32[4]) all-reduce(p), to_apply=add",
            "has 1 operands for 2 outputs",
        ),
        # the dimension numbers gather and scatter share, checked alike
        (
            "p = f32[4] parameter(0)\ni = s32[1,2] parameter(1)\nu = f32[1] parameter(2)\n"
            "ROOT s = f32[4] scatter(p, i, u), update_window_dims={}, "
            "inserted_window_dims={0}, " + SCATTER_ATTRS,
            "scatter_dims_to_operand_dims has 1 entries, the index vectors 2",
        ),
        (
            SCATTER_1 + "u = f32[1,1] parameter(2)\nROOT s = f32[4] scatter(p, i, u), "
            "update_window_dims={}, inserted_window_dims={}, " + SCATTER_ATTRS,
            "update_window_dims must list 1 increasing update dims",
        ),
        (
            "p = f32[4,4] parameter(0)\ni = s32[2,2] parameter(1)\n"
            "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
            "start_index_map has 1 entries, the index vectors 2",
        ),
        (
            "p = f32[4,4] parameter(0)\ni = s32[2,1] parameter(1)\n"
            "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
            "operand and start_indices batching dims must pair up",
        ),
        (
            "p = f32[4,4] parameter(0)\ni = s32[2,1] parameter(1)\n"
            "ROOT g = f32[2,4] gather(p, i), offset_dims={}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
            "offset_dims must list 1 increasing output dims",
        ),
        (
            "HloModule m\nENTRY e {\n p = f32[4] parameter(0)\n"
            " ROOT c = f32[4] call(p), to_apply=e\n}",
            "already being expanded",
        ),
    ],
)
def test_malformed_new_ops_are_hlo_errors(text: str, why: str) -> None:
    with pytest.raises(HloError, match=why) as info:
        out_to_in(text)
    assert info.value.line > 0


def test_physical_maps_of_a_tuple_parameter_are_unknown_with_a_reason() -> None:
    module = parse_hlo(WHY)
    body = module.computation("body")
    # The body's one parameter is the (counter, array) tuple: element 1 reads it.
    (carry,) = fused_output_to_input(module, body, 1, physical=True)
    assert unknowns([carry]) == [(None,)]
    (m,) = carry
    assert isinstance(m, Unknown) and m.reason.startswith("p (parameter): a tuple")
