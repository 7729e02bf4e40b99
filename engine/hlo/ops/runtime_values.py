"""Values of integer instructions that constants and iotas fix, for dynamic offsets.

:func:`value_fn` traces an operand back through broadcast, reverse, copy and
value-preserving convert to a constant or an iota; where it gets there, an offset is a
term instead of a runtime variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from ...term import Term, as_term, maximum, minimum
from ..attrs import int64_literal
from ..parse import Instruction
from .context import OpContext

Value = Callable[[Sequence[Term]], Term]


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


def value_fn(c: OpContext, inst: Instruction, depth: int = 0) -> Value | None:
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
    inner = value_fn(c, src, depth + 1)
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


def fixed_value(fn: Value | None, idx: Sequence[Term], hi: int) -> Term | None:
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


def raw_value(fn: Value | None, idx: Sequence[Term]) -> Term | None:
    """``fn`` at ``idx`` as is (scatter does not clamp); None where it is not fixed."""
    if fn is None:
        return None
    try:
        return fn(idx)
    except _NotFixedError:
        return None
