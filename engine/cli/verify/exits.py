"""The exit statuses of ``quorem verify`` (its ``--help`` epilog says what each means)."""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_PROVEN", "EXIT_UNKNOWN", "EXIT_UNSOUND", "EXIT_USAGE"]

EXIT_PROVEN: Final = 0
EXIT_UNSOUND: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNKNOWN: Final = 3
