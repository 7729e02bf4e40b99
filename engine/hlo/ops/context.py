"""The instruction an op's maps are built for, with the checks every op family shares.

:class:`OpContext` holds an instruction with the instructions defining its operands and
raises ``HloError`` (naming the instruction's line) when a shape or attribute does not
fit. :data:`OpMaps` is the type of an op family's map functions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ..parse import Instruction, Shape
from .maps import OperandMaps, Unknown


@dataclasses.dataclass(frozen=True, slots=True)
class OpContext:
    """An instruction with the instructions defining its operands."""

    inst: Instruction
    operands: tuple[Instruction, ...]
    # The instruction of a name in the same computation: runtime values are traced
    # through it back to a constant or an iota. None: no tracing past the operands.
    lookup: Callable[[str], Instruction] | None = None

    def error(self, reason: str) -> Exception:
        """An ``HloError`` naming this instruction's line, to raise."""
        return self.inst.error(reason)

    def unknown(self, reason: str) -> OperandMaps:
        """One unknown map, its reason naming this instruction."""
        return (Unknown(f"{self.inst.name} ({self.inst.opcode}): {reason}"),)

    def out(self, output_id: int = 0) -> Shape:
        """The array shape of output ``output_id``; raises if there is no such output."""
        arrays = self.inst.shape.arrays()
        if not 0 <= output_id < len(arrays):
            raise self.error(f"has {len(arrays)} outputs, there is no output {output_id}")
        return arrays[output_id]

    def outputs(self) -> tuple[Shape, ...]:
        """The array shapes of every output (one for an array-shaped instruction)."""
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
        """Raises unless the instruction has one of ``counts`` operands."""
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
        """Raises unless ``what`` has dims ``a`` equal to the expected ``b``."""
        if tuple(a) != tuple(b):
            raise self.error(f"{what}: expected [{dims_text(b)}], found [{dims_text(a)}]")


def dims_text(ds: Sequence[int]) -> str:
    """Dimension sizes as error messages print them: ``2,3,4``."""
    return ",".join(map(str, ds))


# A map function of an op family: (instruction, output or operand number) -> per operand
# (or per output) its maps.
OpMaps = Callable[[OpContext, int], list[OperandMaps]]
