"""Code emission: index width selection, division lowering and C / CUDA / Python code."""

from .code import DEFAULT_NAME, LANGUAGES, EmitError, emit
from .lower import LoweringError, lower
from .widths import Width, WidthError, node_widths

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
