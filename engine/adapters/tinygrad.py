"""tinygrad adapter: index UOps (tinygrad 0.14) to quorem terms and back.

In tinygrad 0.14 an index expression is a graph of UOps, hash-consed (one object
per structure), of dtype ``weakint`` (or a sized int) and ``bool`` for conditions. Its
leaves are constants, variables (``UOp.variable``: a 0-d ``BUFFER`` or ``PARAM`` in the
ALU address space carrying ``vmin_vmax``), loop indices (``RANGE``) and GPU indices
(``SPECIAL``), each with its bounds ``vmin``/``vmax``.

Division: ``//`` and ``%`` on UOps build ``FLOORDIV``/``FLOORMOD``, which round toward
negative infinity (Python), and ``CDIV``/``CMOD`` round toward zero (C); tinygrad's own
evaluator (``tinygrad.uop.ops.python_alu``) computes them with ``helpers.floordiv`` /
``floormod`` and ``cdiv``/``cmod``. They map to quorem's floor and truncating divisions.
(0.14 has no ``IDIV``/``MOD`` ops: those were the names of earlier versions.)

Booleans (``CMPLT``, ``CMPNE``, ``CMPEQ``, ``AND``/``OR``/``XOR`` of bools) are the 0/1
terms of quorem's comparisons and logic; ``WHERE(c, a, b)`` is ``c*a + (not c)*b``,
which :func:`from_term` writes back as a ``WHERE``. Arithmetic is read as exact integer
arithmetic, as tinygrad's own rewrite rules do: a sized int that wraps on overflow
(``int32``) is assumed not to.

Anything else (a bitwise op on ints, a ``WHERE`` with an ``Invalid`` branch, a load, a
cast that could wrap) is an opaque leaf: a variable bounded by that UOp's ``vmin`` and
``vmax``, which :func:`from_term` replaces by the same UOp. :func:`simplify` also
simplifies the index operands under such a UOp.
"""

from __future__ import annotations

from ._tinygrad_hook import (
    HookStats,
    hook,
    hook_stats,
    install,
    install_from_env,
    installed,
    uninstall,
)
from ._tinygrad_terms import TinygradError, from_term, simplify, to_term, uop_count

__all__ = [
    "HookStats",
    "TinygradError",
    "from_term",
    "hook",
    "hook_stats",
    "install",
    "installed",
    "simplify",
    "to_term",
    "uninstall",
    "uop_count",
]

# The kernel-generation hook: off unless QUOREM_TINYGRAD is set.
install_from_env()
