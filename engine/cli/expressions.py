"""Expressions and variable bounds as the command line gives them.

``--var NAME=LO:HI`` values, checked ranges, and parse errors shown with a caret under
where they are.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from typing import Final

from ..api import ParseError, Semantics, Term, parse
from ..bounds import quote as _quote
from ..bounds import range_of_text
from ..printer import int_text
from ..syntax import RESERVED
from .args import CliError

__all__ = [
    "SHOW_LIMIT",
    "Bounds",
    "add_var_option",
    "bounds_of",
    "caret",
    "check_range",
    "is_name",
    "parse_expr",
    "parse_var",
]

Bounds = dict[str, tuple[int | None, int | None]]

SHOW_LIMIT: Final = 60  # characters of a value quoted in full in an error message
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NOT_NAMES: Final = RESERVED | {"and", "or", "not"}
_CARET_WINDOW: Final = 60


def check_range(name: str, lo: int | None, hi: int | None) -> None:
    """Raise ValueError if ``[lo, hi]`` is empty."""
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"variable {name} has an empty range: {_show_int(lo)} > {_show_int(hi)}")


def _show_int(value: int) -> str:
    """``value`` for a message: in full when short, else its ends and its length."""
    text = int_text(value)
    if len(text) <= SHOW_LIMIT:
        return text
    return f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def is_name(text: str) -> bool:
    """Whether ``text`` can name a variable in an expression (ASCII, not a keyword)."""
    return _NAME_RE.fullmatch(text) is not None and text not in _NOT_NAMES


def parse_var(text: str) -> tuple[str, int | None, int | None]:
    """Parse a ``--var`` value ``NAME=LO:HI`` into ``(name, lo, hi)``.

    Either bound may be empty (unbounded on that side) and may be negative. The range is
    inclusive and must not be empty. Raises ``argparse.ArgumentTypeError`` with a
    message quoting the value, so argparse names the ``--var`` option.
    """
    option = _quote(text)
    name, eq, bounds = text.partition("=")
    name = name.strip()
    if not eq or ":" not in bounds:
        raise argparse.ArgumentTypeError(
            f"{option} is not NAME=LO:HI (e.g. x=0:31, x=-5:5, x=:10, x=0:)"
        )
    if not is_name(name):
        raise argparse.ArgumentTypeError(f"{option}: {_quote(name)} is not a variable name")
    try:
        lo, hi = range_of_text(bounds)
        check_range(name, lo, hi)
    except ValueError as exc:  # a BoundsError too
        raise argparse.ArgumentTypeError(f"{option}: {exc}") from None
    return name, lo, hi


def add_var_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """Add ``--var NAME=LO:HI`` (repeatable, parsed by :func:`parse_var`) to ``parser``."""
    parser.add_argument(
        "--var", action="append", default=[], type=parse_var, metavar="NAME=LO:HI", help=help_text
    )


def bounds_of(specs: Iterable[tuple[str, int | None, int | None]]) -> Bounds:
    """Collect the bounds named by ``--var`` options; a name given twice is a CliError."""
    bounds: Bounds = {}
    for name, lo, hi in specs:
        if name in bounds:
            raise CliError(f"argument --var: variable {name} is given twice")
        bounds[name] = (lo, hi)
    return bounds


def caret(text: str, line: int, col: int) -> list[str]:
    """Show the source line of a parse error with a caret under column ``col``."""
    lines = text.splitlines() or [""]
    if not 1 <= line <= len(lines):
        return []
    src = lines[line - 1].expandtabs(1)
    start = max(0, col - 1 - _CARET_WINDOW)
    shown = src[start : col - 1 + _CARET_WINDOW]
    prefix = "..." if start else ""
    suffix = "..." if start + len(shown) < len(src) else ""
    pad = len(prefix) + (col - 1 - start)
    return [f"  {prefix}{shown}{suffix}", "  " + " " * pad + "^"]


def parse_expr(text: str, bounds: Bounds, semantics: Semantics) -> Term:
    """Parse ``text``, turning a ParseError into a CliError that shows where it is."""
    try:
        return parse(text, bounds, semantics)
    except ParseError as exc:
        detail = "\n".join(caret(text, exc.line, exc.col))
        raise CliError(f"{exc}\n{detail}" if detail else str(exc)) from None
