"""Argument types shared by the command-line subcommands."""

from __future__ import annotations

import argparse

__all__ = ["non_negative"]


def non_negative(text: str) -> int:
    """An argparse type: a non-negative integer, else a usage error saying what was given."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value
