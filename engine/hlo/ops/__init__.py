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

The maps of each op family live in a module of their own (:mod:`.elementwise`,
:mod:`.shape`, :mod:`.slicing`, :mod:`.dynamic_slice`, :mod:`.reduction`,
:mod:`.contraction`, :mod:`.gather`, :mod:`.scatter`, :mod:`.collectives`,
:mod:`.scan`, :mod:`.sort`, :mod:`.tuples`, :mod:`.opaque`), on shared helpers
(:mod:`.maps`, :mod:`.context`, :mod:`.window`, :mod:`.runtime_values`,
:mod:`.dimension_numbers`); :mod:`.dispatch` picks the family of an opcode. This
package gives the names callers use.
"""

from __future__ import annotations

from .dispatch import input_to_output, operand_output_id, output_to_input
from .elementwise import ELEMENTWISE
from .maps import (
    OperandMaps,
    Unknown,
    identity_map,
    scalar_read_map,
    scalar_write_map,
)
from .shape import reshape_map
from .slicing import pad_map

__all__ = [
    "ELEMENTWISE",
    "OperandMaps",
    "Unknown",
    "identity_map",
    "input_to_output",
    "operand_output_id",
    "output_to_input",
    "pad_map",
    "reshape_map",
    "scalar_read_map",
    "scalar_write_map",
]
