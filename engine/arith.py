"""Exact integer division under each semantics, on Python integers of any size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .ops import Op

__all__ = [
    "BINARY_EVALUATORS",
    "ceildiv",
    "eucliddiv",
    "euclidmod",
    "floordiv",
    "floormod",
    "truncdiv",
    "truncmod",
]


def floordiv(a: int, b: int) -> int:
    """Return ``a / b`` rounded toward negative infinity. Raises ZeroDivisionError if ``b == 0``."""
    return a // b


def floormod(a: int, b: int) -> int:
    """Return ``a - b*floordiv(a, b)``: zero or of ``b``'s sign, smaller than ``|b|``."""
    return a % b


def truncdiv(a: int, b: int) -> int:
    """Return ``a / b`` rounded toward zero (C ``/``). Raises ZeroDivisionError if ``b == 0``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def truncmod(a: int, b: int) -> int:
    """Return ``a - b*truncdiv(a, b)``: zero or of ``a``'s sign, smaller than ``|b|`` (C ``%``)."""
    return a - b * truncdiv(a, b)


def eucliddiv(a: int, b: int) -> int:
    """Return ``a / b`` rounded so that the remainder is in ``[0, |b|)`` (Halide, SMT-LIB).

    Down for ``b > 0``, up for ``b < 0``. Raises ZeroDivisionError if ``b == 0``.
    """
    q = a // b
    return q + 1 if a - b * q < 0 else q  # floor's remainder is negative only when b < 0


def euclidmod(a: int, b: int) -> int:
    """Return ``a - b*eucliddiv(a, b)``: always in ``[0, |b|)``."""
    return a % abs(b)


def ceildiv(a: int, b: int) -> int:
    """Return ``a / b`` rounded toward positive infinity. Raises ZeroDivisionError if ``b == 0``."""
    return -((-a) // b)


BINARY_EVALUATORS: Final[dict[Op, Callable[[int, int], int]]] = {
    Op.FLOORDIV: floordiv,
    Op.FLOORMOD: floormod,
    Op.TRUNCDIV: truncdiv,
    Op.TRUNCMOD: truncmod,
    Op.EUCLIDDIV: eucliddiv,
    Op.EUCLIDMOD: euclidmod,
    Op.CEILDIV: ceildiv,
    Op.MAX: max,
    Op.MIN: min,
    Op.LT: lambda a, b: int(a < b),
    Op.LE: lambda a, b: int(a <= b),
    Op.EQ: lambda a, b: int(a == b),
    Op.NE: lambda a, b: int(a != b),
    Op.AND: lambda a, b: int(a != 0 and b != 0),
    Op.OR: lambda a, b: int(a != 0 or b != 0),
}
