"""Code emission: index width selection, division lowering and C / CUDA / Python code."""

from quorem.codegen.code import DEFAULT_NAME, LANGUAGES, EmitError, emit
from quorem.codegen.lower import LoweringError, lower
from quorem.codegen.widths import Width, WidthError, node_widths

__all__ = [
    "DEFAULT_NAME",
    "LANGUAGES",
    "EmitError",
    "LoweringError",
    "Width",
    "WidthError",
    "emit",
    "lower",
    "node_widths",
]
