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
    "ConvLabels",
    "PadDim",
    "SliceDim",
    "WindowDim",
    "int64_literal",
    "parse_dim_labels",
    "parse_int",
    "parse_int_list",
    "parse_padding",
    "parse_slice",
    "parse_window",
    "unknown_window_fields",
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
    reversal: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ConvLabels:
    """``dim_labels=b01f_01io->b01f``: where batch, feature and spatial dims sit.

    Each list of spatial positions is indexed by the spatial dimension's number (the
    digit), so ``input_spatial[i]``, ``kernel_spatial[i]`` and ``output_spatial[i]`` are
    the same spatial dimension of the input, the kernel and the output.
    """

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


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


def _window_fields(text: str) -> dict[str, str]:
    """The ``key=value`` items of ``window={...}``, each key once."""
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
    return fields


_WINDOW_KEYS: Final = frozenset(
    {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"}
)


def unknown_window_fields(text: str) -> tuple[str, ...]:
    """The keys of ``window={...}`` that :func:`parse_window` does not read, sorted.

    Such a field (one a later XLA may add) is kept in the text rather than refused:
    the ops reading the window give unknown indexing instead of a guessed map.
    """
    return tuple(sorted(k for k in _window_fields(text) if k not in _WINDOW_KEYS))


def parse_window(text: str) -> tuple[WindowDim, ...]:
    """``{size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=0x1}``.

    Sizes, strides and dilations must be positive and ``rhs_reversal`` entries 0 or 1.
    Fields this parser does not know are skipped (see :func:`unknown_window_fields`).
    """
    fields = _window_fields(text)
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
    for name, values in (("size", sizes), ("stride", strides), ("lhs_dilate", base)):
        if any(v <= 0 for v in values):
            raise ValueError(f"window {name}= must be positive")
    if any(v <= 0 for v in wdil):
        raise ValueError("window rhs_dilate= must be positive")
    if any(v not in (0, 1) for v in reversal):
        raise ValueError("window rhs_reversal= entries must be 0 or 1")
    return tuple(
        WindowDim(sizes[i], strides[i], pads[i].lo, pads[i].hi, base[i], wdil[i], reversal[i] == 1)
        for i in range(n)
    )


def parse_dim_labels(text: str) -> ConvLabels:
    """``b01f_01io->b01f`` (input, kernel, output labels) as :class:`ConvLabels`.

    The input and output labels hold ``b``, ``f`` and the digits ``0..n-1`` once each,
    the kernel labels ``i``, ``o`` and the same digits: ``n`` spatial dimensions (at
    most 10, as a digit names each).
    """
    m = re.fullmatch(r"([0-9a-z]+)_([0-9a-z]+)->([0-9a-z]+)", text.strip())
    if m is None:
        raise ValueError(f"expected dim_labels like b01f_01io->b01f, found {_short(text)}")
    lhs, rhs, out = m.groups()
    n = len(lhs) - 2

    def labels(word: str, letters: str, what: str) -> tuple[int, int, tuple[int, ...]]:
        want = sorted(letters + "".join(str(i) for i in range(n)))
        if n < 0 or sorted(word) != want:
            raise ValueError(
                f"dim_labels: the {what} labels {word!r} must be {letters[0]!r}, "
                f"{letters[1]!r} and the digits 0..{n - 1} once each"
            )
        return (
            word.index(letters[0]),
            word.index(letters[1]),
            tuple(word.index(str(i)) for i in range(n)),
        )

    ib, if_, isp = labels(lhs, "bf", "input")
    ki, ko, ksp = labels(rhs, "io", "kernel")
    ob, of, osp = labels(out, "bf", "output")
    return ConvLabels(ib, if_, isp, ki, ko, ksp, ob, of, osp)


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
_INT_ATTRS: Final = frozenset(
    {
        "index_vector_dim",
        "index",
        "iota_dimension",
        "feature_group_count",
        "batch_group_count",
        "num_carries",
    }
)
# Attributes checked when an instruction is parsed, by name.
CHECKERS: Final[Mapping[str, Callable[[str], object]]] = {
    "slice": parse_slice,
    "padding": parse_padding,
    "window": parse_window,
    "dim_labels": parse_dim_labels,
    **dict.fromkeys(_INT_LIST_ATTRS, parse_int_list),
    **dict.fromkeys(_INT_ATTRS, parse_int),
}
