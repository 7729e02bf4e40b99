"""Unknown indexing of ops no map models, with the reason, and ``custom-call``.

A custom-call of a target XLA itself lowers to (TopK) gets that op's maps; any other
target is opaque code.
"""

from __future__ import annotations

from typing import Final

from .context import OpContext, OpMaps
from .maps import OperandMaps
from .sort import topk_in, topk_out

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


def _why_unknown(c: OpContext, direction: str) -> OperandMaps:
    op = c.inst.opcode
    why = _WHY_UNKNOWN.get(op)
    if why is None:
        return c.unknown(f"no {direction} indexing is modelled for {op}")
    target = c.inst.attrs.get("custom_call_target", "?").strip('"')
    return c.unknown(why.format(target=target[:80]))


def unknown_out(c: OpContext, k: int) -> list[OperandMaps]:
    """An unknown output-to-input map per operand, saying why the op has none."""
    return [_why_unknown(c, "output-to-input")] * len(c.operands)


def unknown_in(c: OpContext, i: int) -> list[OperandMaps]:
    """An unknown input-to-output map per output, saying why the op has none."""
    return [_why_unknown(c, "input-to-output")] * len(c.outputs())


def _target(c: OpContext) -> str:
    return c.inst.attrs.get("custom_call_target", "").strip('"')


def _custom_call_out(c: OpContext, k: int) -> list[OperandMaps]:
    """A custom-call whose target is an op XLA itself lowers to (TopK), else unknown."""
    if _target(c) == "TopK":
        return topk_out(c, k)
    return unknown_out(c, k)


def _custom_call_in(c: OpContext, i: int) -> list[OperandMaps]:
    if _target(c) == "TopK":
        return topk_in(c, i)
    return unknown_in(c, i)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "custom-call": _custom_call_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "custom-call": _custom_call_in,
}
