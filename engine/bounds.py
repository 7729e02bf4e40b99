"""Variable bounds as the API and the command line take them: one reader for both.

A variable's bounds are inclusive, either side ``None`` for unbounded. They may be given
as a pair ``(lo, hi)`` (or a list, as JSON writes it), as ``None`` (unbounded), or as
the command line's text ``"LO:HI"`` (``quorem simplify --var x=LO:HI``): either side may
be empty (``":10"``, ``"0:"``, ``":"``), negative, hexadecimal or have ``_`` between
digits, as integers in expressions may.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from .errors import ParseError, QuoremError
from .syntax import parse_int

__all__ = [
    "BOUNDS_EXAMPLES",
    "BoundsError",
    "Range",
    "bounds_of",
    "quote",
    "range_of_text",
]

Range = tuple[int | None, int | None]

BOUNDS_EXAMPLES: Final = "e.g. 0:31, -5:5, :10, 0:"
_INT_RE: Final = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)")
_SHOW_LIMIT: Final = 60


class BoundsError(QuoremError, ValueError):
    """Bounds that cannot be read: the message quotes them and says why."""


def quote(text: str) -> str:
    """``repr(text)``, shortened in the middle: messages quote what the user wrote."""
    if len(text) <= _SHOW_LIMIT:
        return repr(text)
    half = _SHOW_LIMIT // 2
    return f"{text[:half]!r}...{text[-8:]!r} ({len(text)} characters)"


def _side(text: str) -> int | None:
    """One side of ``LO:HI``: ``None`` when empty, else an integer written as in expressions."""
    text = text.strip()
    if not text:
        return None
    try:
        return parse_int(text)
    except ParseError as exc:
        if _INT_RE.fullmatch(text) is None:
            raise BoundsError(f"bound {quote(text)} is not an integer") from None
        raise BoundsError(f"bound {quote(text)} is not a valid integer: {exc.reason}") from None


def range_of_text(text: str) -> Range:
    """``(lo, hi)`` of the text ``LO:HI`` (either side empty for unbounded).

    Raises BoundsError saying what is wrong: no ``:``, more than one, a side that is not
    an integer. Does not check that ``lo <= hi`` (the caller names the variable).
    """
    if ":" not in text:
        raise BoundsError(f"{quote(text)} is not LO:HI ({BOUNDS_EXAMPLES})")
    lo_text, _, hi_text = text.partition(":")
    if ":" in hi_text:
        raise BoundsError(f"more than one ':' in {quote(text)}")
    return _side(lo_text), _side(hi_text)


def _range_of(name: str, value: object) -> Range:
    """The bounds of one entry of a ``vars`` mapping, in any of the accepted forms."""
    if value is None:
        return None, None
    if isinstance(value, str):
        try:
            return range_of_text(value)
        except BoundsError as exc:
            raise BoundsError(f"bounds of {name}: {exc}") from None
    if isinstance(value, tuple | list) and len(value) == 2:
        lo, hi = value
        for side in (lo, hi):
            if side is not None and (isinstance(side, bool) or not isinstance(side, int)):
                raise BoundsError(
                    f"bounds of {name}: {side!r} is not an int or None (in {value!r})"
                )
        return lo, hi
    shown = repr(value)
    shown = shown if len(shown) <= _SHOW_LIMIT else type(value).__name__
    raise BoundsError(
        f"bounds of {name}: expected (lo, hi), 'LO:HI' ({BOUNDS_EXAMPLES}) or None, got {shown}"
    )


def bounds_of(vars: Mapping[str, object] | None) -> dict[str, Range]:
    """Each variable's ``(lo, hi)``, from a mapping of bounds in any accepted form.

    See the module docstring for the forms. Raises BoundsError naming the variable
    whose bounds cannot be read, and TypeError when ``vars`` is not a mapping.
    """
    if vars is None:
        return {}
    if not isinstance(vars, Mapping):
        raise TypeError(
            f"vars must be a mapping of names to bounds, e.g. {{'x': (0, 31)}} or "
            f"{{'x': '0:31'}}, not {type(vars).__name__}"
        )
    return {name: _range_of(name, value) for name, value in vars.items()}
