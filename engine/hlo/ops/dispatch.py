"""Dispatch of an instruction to the maps of its op family, in either direction.

:func:`output_to_input` and :func:`input_to_output` look the opcode up in the family
modules' tables (ops with no operands give no maps, ops no family models give unknown
maps, saying why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from ..parse import Instruction
from . import (
    collectives,
    contraction,
    dynamic_slice,
    elementwise,
    gather,
    opaque,
    reduction,
    scan,
    scatter,
    shape,
    slicing,
    sort,
    tuples,
)
from .context import OpContext, OpMaps
from .maps import OperandMaps
from .opaque import unknown_in, unknown_out

_NO_OPERANDS: Final = frozenset({"parameter", "constant", "iota"})

# Each family module maps the opcodes it models to its map functions; no opcode is in two.
_OUT_TO_IN: Final[dict[str, OpMaps]] = {
    **elementwise.OUT_TO_IN,
    **shape.OUT_TO_IN,
    **slicing.OUT_TO_IN,
    **dynamic_slice.OUT_TO_IN,
    **contraction.OUT_TO_IN,
    **reduction.OUT_TO_IN,
    **gather.OUT_TO_IN,
    **scatter.OUT_TO_IN,
    **collectives.OUT_TO_IN,
    **scan.OUT_TO_IN,
    **sort.OUT_TO_IN,
    **tuples.OUT_TO_IN,
    **opaque.OUT_TO_IN,
}
_IN_TO_OUT: Final[dict[str, OpMaps]] = {
    **elementwise.IN_TO_OUT,
    **shape.IN_TO_OUT,
    **slicing.IN_TO_OUT,
    **dynamic_slice.IN_TO_OUT,
    **contraction.IN_TO_OUT,
    **reduction.IN_TO_OUT,
    **gather.IN_TO_OUT,
    **scatter.IN_TO_OUT,
    **collectives.IN_TO_OUT,
    **scan.IN_TO_OUT,
    **sort.IN_TO_OUT,
    **tuples.IN_TO_OUT,
    **opaque.IN_TO_OUT,
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
    c = OpContext(inst, tuple(operands), lookup)
    c.out(output_id)
    if inst.opcode in _NO_OPERANDS:
        return []
    return _OUT_TO_IN.get(inst.opcode, unknown_out)(c, output_id)


def input_to_output(
    inst: Instruction, operands: Sequence[Instruction], operand_id: int
) -> list[OperandMaps]:
    """Per output, the maps from an index of operand ``operand_id`` to that output.

    Unsupported ops and directions give an :class:`Unknown` map per output; an output the operand
    does not reach (another element of a ``tuple``) gets ``()``. Raises ``HloError``
    when there is no such operand or on inconsistent shapes or attributes.
    """
    c = OpContext(inst, tuple(operands))
    if not 0 <= operand_id < len(operands):
        raise inst.error(f"has {len(operands)} operands, there is no operand {operand_id}")
    return _IN_TO_OUT.get(inst.opcode, unknown_in)(c, operand_id)
