"""Attributes of HLO instructions that indexing reads, parsed from their text.

``dimensions={1,0}`` and the other integer lists, ``slice={[5:10:1], ...}``,
``padding=1_4_1x4_8_0`` and ``window={size=3x2 stride=2x1 pad=1_1x0_1 ...}``. Each
parser raises ``ValueError`` saying what is wrong; the HLO parser turns that into an
error naming the line.

Every integer is one XLA could hold: at most :data:`MAX_DIGITS` digits (Python's own
limit for converting text to ``int``) and inside the int64 range, else ``ValueError``
saying so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Final

__all__ = [
    "CHECKERS",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_DIGITS",
    "PadDim",
    "SliceDim",
    "WindowDim",
    "int64_literal",
    "parse_int",
    "parse_int_list",
    "parse_padding",
    "parse_slice",
    "parse_window",
]


@dataclasses.dataclass(frozen=True, slots=True)
class SliceDim:
    """One dimension of ``slice={[start:limit:stride], ...}``."""

    start: int
    limit: int
    stride: int


@dataclasses.dataclass(frozen=True, slots=True)
class PadDim:
    """One dimension of ``padding=lo_hi_interior x ...`` (low and high may be negative)."""

    lo: int
    hi: int
    interior: int


@dataclasses.dataclass(frozen=True, slots=True)
class WindowDim:
    """One dimension of ``window={size=.. stride=.. pad=.. lhs_dilate=.. rhs_dilate=..}``."""

    size: int
    stride: int = 1
    pad_lo: int = 0
    pad_hi: int = 0
    base_dilation: int = 1
    window_dilation: int = 1


MAX_DIGITS: Final = 4300  # Python's default int/str conversion limit (sys.get_int_max_str_digits)
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

# ASCII digits only: `\d` would also match other scripts' digits, which int() accepts.
_INT: Final = r"-?[0-9]+"
_INT_LIST_RE: Final = re.compile(rf"\{{\s*(?:{_INT}\s*(?:,\s*{_INT}\s*)*)?\}}")
_SLICE_DIM_RE: Final = re.compile(rf"\[\s*({_INT})\s*:\s*({_INT})\s*(?::\s*({_INT})\s*)?\]")
_PAD_DIM_RE: Final = re.compile(rf"({_INT})_({_INT})(?:_({_INT}))?")


def _short(text: str) -> str:
    """``text`` quoted, cut to a length an error message can show."""
    if len(text) <= 40:
        return repr(text)
    return f"{text[:20]!r}...{text[-10:]!r} ({len(text)} characters)"


def int64_literal(text: str) -> int:
    """The value of the decimal literal ``text`` (``-?[0-9]+``), which must fit in int64.

    Raises ``ValueError`` saying "integer literal too long" past :data:`MAX_DIGITS`
    digits (where Python itself would refuse to convert it) and naming the int64 range
    for a value outside it; never converts more than :data:`MAX_DIGITS` digits.
    """
    if not re.fullmatch(_INT, text):
        raise ValueError(f"expected an integer, found {_short(text)}")
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ValueError(f"integer literal too long ({digits} digits; the limit is {MAX_DIGITS})")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({digits} digits)"
        raise ValueError(f"integer {shown} is outside the int64 range of HLO")
    return value


def parse_int_list(text: str) -> tuple[int, ...]:
    """``{1, 2, 3}`` (or ``{}``) as a tuple of int64 values; raises ValueError otherwise."""
    text = text.strip()
    if not _INT_LIST_RE.fullmatch(text):
        raise ValueError(f"expected a list of integers like {{0, 1}}, found {_short(text)}")
    inner = text[1:-1].strip()
    return tuple(int64_literal(x.strip()) for x in inner.split(",")) if inner else ()


def parse_int(text: str) -> int:
    """A decimal int64 integer (surrounding blanks allowed); raises ValueError otherwise."""
    return int64_literal(text.strip())


def parse_slice(text: str) -> tuple[SliceDim, ...]:
    """``{[5:10:1], [3:20]}`` as slice dimensions (stride 1 when omitted, must be > 0)."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected slice={{[start:limit:stride], ...}}, found {_short(text)}")
    inner = text[1:-1].strip()
    out: list[SliceDim] = []
    pos = 0
    while pos < len(inner):
        m = _SLICE_DIM_RE.match(inner, pos)
        if m is None:
            raise ValueError(f"expected [start:limit:stride] at {_short(inner[pos:])}")
        stride = int64_literal(m.group(3)) if m.group(3) is not None else 1
        if stride <= 0:
            raise ValueError(f"slice stride must be positive, found {stride}")
        out.append(SliceDim(int64_literal(m.group(1)), int64_literal(m.group(2)), stride))
        pos = m.end()
        rest = inner[pos:].lstrip()
        if rest.startswith(","):
            pos = len(inner) - len(rest) + 1
            while pos < len(inner) and inner[pos].isspace():
                pos += 1
            if pos >= len(inner):
                raise ValueError("trailing ',' in slice")
        elif rest:
            raise ValueError(f"expected ',' between slice dimensions at {_short(rest)}")
        else:
            break
    return tuple(out)


def parse_padding(text: str) -> tuple[PadDim, ...]:
    """``1_4_1x4_8_0`` (``lo_hi[_interior]`` per dimension, ``x``-separated) as pad dims."""
    text = text.strip()
    if text in ("", "{}"):
        return ()
    out: list[PadDim] = []
    for part in text.split("x"):
        m = _PAD_DIM_RE.fullmatch(part)
        if m is None:
            raise ValueError(f"expected lo_hi_interior for each dimension, found {_short(part)}")
        interior = int64_literal(m.group(3)) if m.group(3) is not None else 0
        if interior < 0:
            raise ValueError(f"interior padding must be non-negative, found {interior}")
        out.append(PadDim(int64_literal(m.group(1)), int64_literal(m.group(2)), interior))
    return tuple(out)


def _x_ints(value: str, key: str) -> list[int]:
    parts = value.split("x")
    if not all(re.fullmatch(_INT, p) for p in parts):
        raise ValueError(f"window {key}= expects integers separated by 'x', found {_short(value)}")
    return [int64_literal(p) for p in parts]


def parse_window(text: str) -> tuple[WindowDim, ...]:
    """``{size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=.. rhs_dilate=..}`` as window dims.

    Sizes, strides and dilations must be positive; ``rhs_reversal`` is accepted only
    when all zero (a reversed window is not modelled).
    """
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected window={{size=... }}, found {_short(text)}")
    fields: dict[str, str] = {}
    for item in text[1:-1].split():
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise ValueError(f"expected key=value in window, found {_short(item)}")
        if key in fields:
            raise ValueError(f"window {key}= given twice")
        fields[key] = value
    if "size" not in fields:
        raise ValueError("window needs size=")
    sizes = _x_ints(fields.pop("size"), "size")
    n = len(sizes)

    def ints(key: str, default: int) -> list[int]:
        if key not in fields:
            return [default] * n
        got = _x_ints(fields.pop(key), key)
        if len(got) != n:
            raise ValueError(f"window {key}= has {len(got)} dimensions, size= has {n}")
        return got

    strides = ints("stride", 1)
    base = ints("lhs_dilate", 1)
    wdil = ints("rhs_dilate", 1)
    reversal = ints("rhs_reversal", 0)
    pads = [PadDim(0, 0, 0)] * n
    if "pad" in fields:
        pads = list(parse_padding(fields.pop("pad")))
        if len(pads) != n:
            raise ValueError(f"window pad= has {len(pads)} dimensions, size= has {n}")
    if fields:
        raise ValueError(f"unknown window field {next(iter(fields))}=")
    for name, values in (("size", sizes), ("stride", strides), ("lhs_dilate", base)):
        if any(v <= 0 for v in values):
            raise ValueError(f"window {name}= must be positive")
    if any(v <= 0 for v in wdil):
        raise ValueError("window rhs_dilate= must be positive")
    if any(reversal):
        raise ValueError("window rhs_reversal is not supported")
    return tuple(
        WindowDim(sizes[i], strides[i], pads[i].lo, pads[i].hi, base[i], wdil[i]) for i in range(n)
    )


_INT_LIST_ATTRS: Final = frozenset(
    {
        "dimensions",
        "dynamic_slice_sizes",
        "offset_dims",
        "collapsed_slice_dims",
        "start_index_map",
        "operand_batching_dims",
        "start_indices_batching_dims",
        "slice_sizes",
        "lhs_batch_dims",
        "rhs_batch_dims",
        "lhs_contracting_dims",
        "rhs_contracting_dims",
    }
)
_INT_ATTRS: Final = frozenset({"index_vector_dim", "index", "iota_dimension"})
# Attributes checked when an instruction is parsed, by name.
CHECKERS: Final[Mapping[str, Callable[[str], object]]] = {
    "slice": parse_slice,
    "padding": parse_padding,
    "window": parse_window,
    **dict.fromkeys(_INT_LIST_ATTRS, parse_int_list),
    **dict.fromkeys(_INT_ATTRS, parse_int),
}
