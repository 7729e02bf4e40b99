"""What the command-line subcommands share.

Argument types, exit statuses, the usage error, and how a closed pipe ends.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Final

from ..ops import Semantics

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_LINE_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "CliError",
    "add_semantics_option",
    "non_negative",
    "positive",
    "silence_stdout",
]

EXIT_OK: Final = 0
EXIT_LINE_ERRORS: Final = 1  # a negative finding: bad batch lines, a wrong step, ...
EXIT_USAGE: Final = 2
EXIT_BROKEN_PIPE: Final = 1  # the report was cut short
EXIT_INTERRUPTED: Final = 130


class CliError(Exception):
    """A usage or input error: printed as ``quorem COMMAND: error: <message>``, exit status 2."""


def add_semantics_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """Add ``--semantics floor|trunc|euclid`` (the meaning of ``//`` and ``%``; default floor)."""
    parser.add_argument(
        "--semantics",
        choices=[s.value for s in Semantics],
        default=Semantics.FLOOR.value,
        help=help_text,
    )


def non_negative(text: str) -> int:
    """An argparse type: a non-negative integer, else a usage error saying what was given."""
    return _at_least(text, 0, "a non-negative")


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1, else a usage error saying what was given."""
    return _at_least(text, 1, "a positive")


def _at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {value}")
    return value


def silence_stdout() -> None:
    """After a closed pipe, send stdout to devnull so interpreter exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
