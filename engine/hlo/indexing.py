"""HLO indexing analysis: instruction and fusion indexing maps, logical or physical.

* :func:`output_to_input` and :func:`input_to_output` give the maps of one
  instruction (a ``fusion`` or ``call`` instruction through its called computation);
* :func:`fused_output_to_input` and :func:`fused_input_to_output` treat a whole
  computation as a fusion: its root is mapped to its parameters (and back) by
  composing the maps of every instruction on the way, simplifying each composition and
  keeping each distinct map once per parameter (XLA's grouped output-to-input indexing);
* ``physical=True`` gives maps between physical indices (memory order, see
  :mod:`quorem.hlo.layout`) instead of logical ones.

Every function returns one :data:`OperandMaps` per operand (or per output): a tuple of
distinct maps, where an :class:`Unknown` stands for unknown indexing and says why (the
reason of the instruction that has no map, carried through every composition). Maps
are simplified with :func:`~quorem.indexing.simplify.simplify_map` unless ``simplify=False``.

Every error is an :class:`~quorem.hlo.parse.HloError` naming the instruction
(``file:line:col``) whose maps were being built or composed. Fusions may nest to any
depth (no Python recursion); a computation fused into itself is refused.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final, TypeVar

from ..errors import QuoremError
from ..indexing.compose import compose
from ..indexing.map import IndexingMap
from ..indexing.mapsyntax import print_map
from ..indexing.simplify import simplify_map
from ..walk import tree_size
from . import ops as hlo_ops
from .layout import logical_to_physical, physical_to_logical
from .ops import OperandMaps, Unknown, identity_map
from .parse import Computation, HloError, Instruction, Module, Shape

__all__ = [
    "OperandMaps",
    "Unknown",
    "format_indexing",
    "fused_input_to_output",
    "fused_output_to_input",
    "input_to_output",
    "output_to_input",
]


# A fusion's called computation, read in one direction: ("out", name, output id) for its
# output-to-input maps, ("in", name, parameter) for its input-to-output maps.
_Key = tuple[str, str, int]
_T = TypeVar("_T")
# A step of the analysis that may need the maps of a called computation: it yields the
# computation's key (with the fusion instruction asking, for errors) and is sent the maps.
_Steps = Generator[tuple[_Key, Instruction], list[OperandMaps], _T]


class _Options:
    """How maps are finished, and the maps of called computations already composed."""

    def __init__(self, simplify: bool, remove_unused: bool) -> None:
        self.simplify = simplify
        self.remove_unused = remove_unused
        # Per called computation and direction: a computation fused in many places is
        # composed once.
        self.done: dict[_Key, list[OperandMaps]] = {}

    def finish(self, m: IndexingMap) -> IndexingMap:
        return simplify_map(m, remove_unused=self.remove_unused) if self.simplify else m


@contextmanager
def _blamed(inst: Instruction) -> Iterator[None]:
    """Errors of the maps' code (a map too large to print, ...) named at ``inst``.

    They know no HLO position; the instruction whose maps were being built or composed
    gives them one.
    """
    try:
        yield
    except HloError:
        raise
    except QuoremError as exc:
        raise inst.error(str(exc)) from exc


def _key(m: IndexingMap | Unknown) -> str:
    return f"unknown indexing: {m.reason}" if isinstance(m, Unknown) else print_map(m)


def _distinct(maps: Iterable[IndexingMap | Unknown]) -> OperandMaps:
    """The maps with duplicates (by canonical printed form) removed, in first-seen order."""
    seen: dict[str, IndexingMap | Unknown] = {}
    for m in maps:
        seen.setdefault(_key(m), m)
    return tuple(seen.values())


# A map to compose further, and the finished (simplified) map. Compositions go on from the
# unsimplified composition while it is small: simplifying a few steps at once sees
# patterns (a linearization undone by a later delinearization) that step-by-step
# simplification may already have rewritten away. Unsimplified compositions grow
# exponentially as trees along a chain (each step uses an index several times), so past
# _MAX_TREE nodes they restart from the finished map, as XLA composes.
_Entry = tuple[IndexingMap | Unknown, IndexingMap | Unknown]
_Bucket = dict[str, _Entry]  # distinct maps, keyed by the finished map's printed form
_MAX_TREE: Final = 400
# Without simplification nothing restarts a composition: refused past this size (well
# under what printing allows) instead of printed at ever greater cost, step after step.
_MAX_UNSIMPLIFIED: Final = 100_000


def _tree_size(m: IndexingMap) -> int:
    """The number of nodes of ``m``'s terms written out as trees (shared subterms repeated)."""
    return tree_size(*m.results, *(e for e, _, _ in m.constraints))


def _add_compositions(
    bucket: _Bucket,
    firsts: Iterable[_Entry],
    seconds: OperandMaps,
    opts: _Options,
    inst: Instruction,
) -> None:
    """Add every ``second ∘ first`` to ``bucket``; unknown (its reason) when either is.

    ``inst`` is the instruction whose maps ``seconds`` are, named by the error raised
    when an unsimplified composition grows past :data:`_MAX_UNSIMPLIFIED` nodes.
    """
    for carried, _ in firsts:
        for s in seconds:
            if isinstance(carried, Unknown) or isinstance(s, Unknown):
                why = carried if isinstance(carried, Unknown) else s
                bucket.setdefault(_key(why), (why, why))
                continue
            with _blamed(inst):
                composed = compose(carried, s)
                size = _tree_size(composed)
                if not opts.simplify and size > _MAX_UNSIMPLIFIED:
                    raise inst.error(
                        f"composed without simplification, the map through it has over "
                        f"{_MAX_UNSIMPLIFIED} nodes written out; simplify the maps"
                    )
                done = opts.finish(composed)
                if opts.simplify and size > _MAX_TREE:
                    composed = done
                bucket.setdefault(_key(done), (composed, done))


def _finished(bucket: _Bucket | None) -> OperandMaps:
    return tuple(done for _, done in (bucket or {}).values())


def _composed(bucket: _Bucket | None) -> OperandMaps:
    return tuple(raw for raw, _ in (bucket or {}).values())


def _output_shape(inst: Instruction, output_id: int) -> Shape:
    arrays = inst.shape.arrays()
    if not 0 <= output_id < len(arrays):
        raise inst.error(f"has {len(arrays)} outputs, there is no output {output_id}")
    return arrays[output_id]


def _post_order(comp: Computation) -> list[Instruction]:
    """The instructions the root depends on (and the root), each after its operands."""
    by_name = {i.name: i for i in comp.instructions}
    done: set[str] = set()
    order: list[Instruction] = []
    stack: list[tuple[Instruction, int]] = [(comp.root, 0)]
    while stack:
        inst, k = stack.pop()
        if k < len(inst.operands):
            stack.append((inst, k + 1))
            nxt = inst.operands[k]
            if nxt not in done:  # the parser refused cycles
                stack.append((by_name[nxt], 0))
        elif inst.name not in done:
            done.add(inst.name)
            order.append(inst)
    return order


# ---------------------------------------------------------------------------- nested fusions
def _run(module: Module, top: Computation, steps: _Steps[_T], opts: _Options) -> _T:
    """Run ``steps``, composing each called computation it asks for first.

    Fusions may nest as deep as the module is long: each computation waiting for the
    maps of the one it calls is a suspended generator on an explicit stack, not a Python
    frame. A computation asked for while it is on the stack (or is ``top``) is a cycle.
    """
    # Under each generator, the key its result is stored as (None: the caller's steps).
    stack: list[tuple[_Key | None, _Steps[object]]] = [(None, steps)]
    expanding = {top.name: None}  # ordered as the stack, and asked in O(1)
    reply: list[OperandMaps] | None = None
    while True:
        key, gen = stack[-1]
        try:
            need, asker = gen.send(reply) if reply is not None else next(gen)
        except StopIteration as stop:
            stack.pop()
            if key is None:
                result: _T = stop.value
                return result
            expanding.popitem()
            reply = opts.done[key] = stop.value
            continue
        reply = opts.done.get(need)
        if reply is not None:
            continue
        if need[1] in expanding:
            raise asker.error(f"calls {need[1]}, which is already being expanded (a cycle)")
        callee = module.computation(need[1])
        expanding[callee.name] = None
        stack.append((need, _expand(module, callee, need, opts)))


def _expand(module: Module, callee: Computation, key: _Key, opts: _Options) -> _Steps[object]:
    """The maps of a fusion through ``callee``, in the direction and for the id of ``key``."""
    if key[0] == "out":
        buckets = yield from _fused_out_to_in(module, callee, key[2], opts)
    else:
        buckets = yield from _fused_in_to_out(module, callee, key[2], opts)
    return [_composed(b) for b in buckets]


# ---------------------------------------------------------------------------- one instruction
def _op_out_to_in(
    module: Module, comp: Computation, inst: Instruction, output_id: int
) -> _Steps[list[OperandMaps]]:
    if inst.opcode in _CALLERS:
        callee = _callee(module, comp, inst)
        _output_shape(inst, output_id)
        return (yield (("out", callee.name, output_id), inst))
    operands = comp.operands_of(inst)
    with _blamed(inst):
        maps = hlo_ops.output_to_input(inst, operands, output_id, comp.get)
    if len(maps) != len(operands):
        # The op's indexing covers the operands it takes (iota takes none): more or
        # fewer is a malformed instruction, not a map to guess.
        raise inst.error(f"{inst.opcode} takes {len(maps)} operand(s), given {len(operands)}")
    return maps


def _op_in_to_out(
    module: Module, comp: Computation, inst: Instruction, operand_id: int
) -> _Steps[list[OperandMaps]]:
    if inst.opcode in _CALLERS:
        callee = _callee(module, comp, inst)
        if not 0 <= operand_id < len(inst.operands):
            raise inst.error(f"has {len(inst.operands)} operands, there is no operand {operand_id}")
        return (yield (("in", callee.name, operand_id), inst))
    with _blamed(inst):
        return hlo_ops.input_to_output(inst, comp.operands_of(inst), operand_id)


# Ops whose value is their called computation's root applied to their operands: a fusion
# (calls=) and a call (to_apply=; JAX wraps relu, where, clip, ... in calls). Both are
# analysed by composing through the computation (XLA's
# ComputeOutputToInputFusionOpIndexing; XLA inlines calls before its analysis runs).
_CALLERS: Final = {"fusion": "calls", "call": "to_apply"}


def _callee(module: Module, comp: Computation, inst: Instruction) -> Computation:
    attr = _CALLERS[inst.opcode]
    if attr not in inst.attrs:
        raise inst.error(f"a {inst.opcode} needs {attr}=COMPUTATION")
    try:
        callee = module.computation(inst.attrs[attr].lstrip("%"))
    except HloError as exc:
        raise inst.error(str(exc)) from None
    params = callee.parameters()
    if len(params) != len(inst.operands):
        raise inst.error(
            f"has {len(inst.operands)} operands but {callee.name} has {len(params)} parameters"
        )
    for k, op in enumerate(comp.operands_of(inst)):
        if _dims(op.shape) != _dims(params[k].shape):
            raise inst.error(
                f"operand {k} ({op.name}) is {op.shape}, parameter({k}) of {callee.name} is "
                f"{params[k].shape}"
            )
    if _dims(inst.shape) != _dims(callee.root.shape):
        raise inst.error(
            f"its shape {inst.shape} differs from {callee.name}'s root {callee.root.shape}"
        )
    return callee


def _dims(s: Shape) -> object:
    return tuple(_dims(e) for e in s.elements) if s.elements is not None else s.dims


# ---------------------------------------------------------------------------- fusion traversal
def _elements(inst: Instruction, i: int, op: Instruction) -> list[tuple[str, int]]:
    """The (instruction, output id) pairs operand ``i`` of ``inst`` stands for.

    One output, except where a whole tuple is an operand of an op other than
    get-tuple-element (a while's or a call's carry): no map indexes a tuple, so the
    op's map for it (unknown) stands for every element, none of which may be dropped.
    """
    if inst.opcode != "get-tuple-element" and op.shape.is_tuple:
        return [(op.name, j) for j in range(len(op.shape.arrays()))]
    return [(op.name, hlo_ops.operand_output_id(inst, i))]


def _fused_out_to_in(
    module: Module, comp: Computation, output_id: int, opts: _Options
) -> _Steps[list[_Bucket]]:
    root = comp.root
    start = identity_map(_output_shape(root, output_id).dims)
    # Maps from the root's output to each (instruction, output id) reached so far.
    reached: dict[tuple[str, int], _Bucket] = {
        (root.name, output_id): {_key(start): (start, start)}
    }
    for inst in reversed(_post_order(comp)):  # every user before the instructions it uses
        if inst.opcode == "parameter":
            continue
        operands = comp.operands_of(inst)
        for k in range(len(inst.shape.arrays())):
            consumer = reached.get((inst.name, k))
            if not consumer:
                continue
            per_operand = yield from _op_out_to_in(module, comp, inst, k)
            for i, producer in enumerate(per_operand):
                for target in _elements(inst, i, operands[i]):
                    _add_compositions(
                        reached.setdefault(target, {}), consumer.values(), producer, opts, inst
                    )
    params = comp.parameters()
    out: list[_Bucket] = []
    for n in range(len(params)):
        p = params[n]
        if p.shape.is_tuple:
            # An element of a tuple parameter is read: no map indexes the tuple itself.
            read = any(key[0] == p.name for key in reached)
            why = Unknown(f"{p.name} (parameter): a tuple; no map indexes the tuple itself")
            out.append({_key(why): (why, why)} if read else {})
        else:
            out.append(reached.get((p.name, 0), {}))
    return out


def _fused_in_to_out(
    module: Module, comp: Computation, parameter: int, opts: _Options
) -> _Steps[list[_Bucket]]:
    params = comp.parameters()
    if parameter not in params:
        raise comp.error(f"computation {comp.name} has no parameter({parameter})")
    p = params[parameter]
    if p.shape.is_tuple:
        raise p.error("indexing from a tuple-shaped parameter is not supported")
    start = identity_map(p.shape.dims)
    reached: dict[tuple[str, int], _Bucket] = {(p.name, 0): {_key(start): (start, start)}}
    for inst in _post_order(comp):  # every instruction after those it uses
        for i, op in enumerate(comp.operands_of(inst)):
            source: _Bucket = {}
            for element in _elements(inst, i, op):
                for key, entry in reached.get(element, {}).items():
                    source.setdefault(key, entry)
            if not source:
                continue
            per_output = yield from _op_in_to_out(module, comp, inst, i)
            for k, consumer in enumerate(per_output):
                _add_compositions(
                    reached.setdefault((inst.name, k), {}), source.values(), consumer, opts, inst
                )
    root = comp.root
    return [reached.get((root.name, k), {}) for k in range(len(root.shape.arrays()))]


# ---------------------------------------------------------------------------- physical layouts
def _physical_out_to_in(
    maps: list[OperandMaps],
    out: Shape,
    operands: Sequence[tuple[Shape, Instruction]],
    opts: _Options,
) -> list[OperandMaps]:
    """Logical output-to-input maps made physical.

    Output physical -> output logical -> operand logical -> operand physical. Each
    operand shape comes with the instruction an error about it names.
    """
    to_logical = physical_to_logical(out)
    out_maps: list[OperandMaps] = []
    if len(maps) != len(operands):  # (callers check first: a malformed instruction)
        reason = f"{len(operands)} operand(s), but maps for {len(maps)}"
        raise operands[0][1].error(reason) if operands else HloError(reason)
    for ms, (shape, blame) in zip(maps, operands, strict=True):
        if all(isinstance(m, Unknown) for m in ms):
            # Nothing to convert: a tuple operand (a while's carry) has only unknown maps.
            out_maps.append(ms)
            continue
        to_physical = logical_to_physical(_array(shape, blame))
        out_maps.append(
            _distinct(
                m
                if isinstance(m, Unknown)
                else opts.finish(compose(compose(to_logical, m), to_physical))
                for m in ms
            )
        )
    return out_maps


def _physical_in_to_out(
    maps: list[OperandMaps],
    operand: Shape,
    outs: Sequence[Shape],
    opts: _Options,
    blame: Instruction,
) -> list[OperandMaps]:
    """Logical input-to-output maps made physical, from the operand's physical index.

    ``blame`` is the instruction an error about the operand's shape names.
    """
    to_logical = physical_to_logical(_array(operand, blame))
    out_maps: list[OperandMaps] = []
    for ms, shape in zip(maps, outs, strict=True):
        to_physical = logical_to_physical(shape)
        out_maps.append(
            _distinct(
                m
                if isinstance(m, Unknown)
                else opts.finish(compose(compose(to_logical, m), to_physical))
                for m in ms
            )
        )
    return out_maps


def _array(shape: Shape, blame: Instruction) -> Shape:
    if shape.is_tuple:
        raise blame.error(f"physical indexing of the tuple {shape} is not supported")
    return shape


def _finish_all(maps: list[OperandMaps], opts: _Options) -> list[OperandMaps]:
    return [_distinct(m if isinstance(m, Unknown) else opts.finish(m) for m in ms) for ms in maps]


# ---------------------------------------------------------------------------- public API
def output_to_input(
    module: Module,
    computation: Computation,
    inst: Instruction,
    output_id: int = 0,
    *,
    physical: bool = False,
    simplify: bool = True,
    remove_unused: bool = True,
) -> list[OperandMaps]:
    """Per operand of ``inst``, the maps from an index of its output ``output_id``.

    ``inst`` belongs to ``computation`` of ``module``. A ``fusion`` (or ``call``) is
    analysed through its called computation. With ``physical``, indices are in memory
    order of the shapes' layouts. Ops without operands give ``[]``; unsupported ops give
    :class:`Unknown` maps, with their reason. Raises :class:`HloError` on inconsistent
    shapes or attributes.
    """
    with _blamed(inst):
        opts = _Options(simplify, remove_unused)
        _output_shape(inst, output_id)
        maps = _run(module, computation, _op_out_to_in(module, computation, inst, output_id), opts)
        if not physical:
            return _finish_all(maps, opts)
        shapes = [(op.shape, inst) for op in computation.operands_of(inst)]
        if inst.opcode == "get-tuple-element":
            element = _output_shape(computation.operands_of(inst)[0], inst.int_attr("index"))
            shapes = [(element, inst)]
        return _physical_out_to_in(maps, _output_shape(inst, output_id), shapes, opts)


def input_to_output(
    module: Module,
    computation: Computation,
    inst: Instruction,
    operand_id: int,
    *,
    physical: bool = False,
    simplify: bool = True,
    remove_unused: bool = True,
) -> list[OperandMaps]:
    """Per output of ``inst``, the maps from an index of its operand ``operand_id``.

    Otherwise as :func:`output_to_input`. Ops with no input-to-output indexing give
    :class:`Unknown` maps, with their reason.
    """
    with _blamed(inst):
        opts = _Options(simplify, remove_unused)
        maps = _run(module, computation, _op_in_to_out(module, computation, inst, operand_id), opts)
        if not physical:
            return _finish_all(maps, opts)
        operand = computation.operands_of(inst)[operand_id].shape
        if inst.opcode == "get-tuple-element":
            operand = _output_shape(computation.operands_of(inst)[0], inst.int_attr("index"))
        return _physical_in_to_out(maps, operand, inst.shape.arrays(), opts, inst)


def fused_output_to_input(
    module: Module,
    computation: Computation,
    output_id: int = 0,
    *,
    physical: bool = False,
    simplify: bool = True,
    remove_unused: bool = True,
) -> list[OperandMaps]:
    """Per parameter number, the maps from the root's output ``output_id`` to it.

    The computation is read as a fusion: the maps of the instructions between the root
    and each parameter are composed (in reverse post-order, users first), each
    composition simplified, and each distinct map kept once. A parameter the root does
    not read gets ``()``.
    """
    with _blamed(computation.root):
        opts = _Options(simplify, remove_unused)
        buckets = _run(
            module, computation, _fused_out_to_in(module, computation, output_id, opts), opts
        )
        if not physical:
            return [_finished(b) for b in buckets]
        params = computation.parameters()
        shapes = [(params[n].shape, params[n]) for n in range(len(params))]
        maps = [_composed(b) for b in buckets]
        return _physical_out_to_in(maps, _output_shape(computation.root, output_id), shapes, opts)


def fused_input_to_output(
    module: Module,
    computation: Computation,
    parameter: int,
    *,
    physical: bool = False,
    simplify: bool = True,
    remove_unused: bool = True,
) -> list[OperandMaps]:
    """Per output of the root, the maps from parameter ``parameter`` to it.

    The computation is read as a fusion; maps are composed from the parameter towards
    the root. Unknown where an op on the way has no input-to-output indexing.
    """
    with _blamed(computation.root):
        opts = _Options(simplify, remove_unused)
        buckets = _run(
            module, computation, _fused_in_to_out(module, computation, parameter, opts), opts
        )
        if not physical:
            return [_finished(b) for b in buckets]
        p = computation.parameters()[parameter]
        maps = [_composed(b) for b in buckets]
        return _physical_in_to_out(maps, p.shape, computation.root.shape.arrays(), opts, p)


def format_indexing(
    maps: Sequence[OperandMaps], label: str = "operand id", ids: Sequence[int] | None = None
) -> str:
    """XLA's textual form: ``operand id = N`` then each map.

    An unknown map prints as ``unknown indexing: REASON`` (XLA prints no reason).

    ``ids`` numbers the entries (default 0, 1, ...); ``label`` names them.
    """
    lines: list[str] = []
    for n, ms in zip(range(len(maps)) if ids is None else ids, maps, strict=True):
        lines.append(f"{label} = {n}")
        lines.extend(f"  {_key(m)}" for m in ms)
    return "\n".join(lines) + ("\n" if lines else "")
