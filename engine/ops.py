"""The operators of quorem terms and the division semantics they carry."""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "COMMUTATIVE",
    "COMPARISONS",
    "DIVISION_FUNCTIONS",
    "DIVISION_OPS",
    "DIV_OF",
    "LOGICAL",
    "MOD_OF",
    "SEMANTICS_OF",
    "Op",
    "Semantics",
]


class Semantics(enum.Enum):
    """How integer division rounds.

    ``FLOOR`` rounds toward negative infinity (Python ``//`` and ``%``); ``TRUNC``
    rounds toward zero (C, CUDA, LLVM ``sdiv``/``srem``). Euclidean division (Halide)
    would be a third member with its own pair of ops in :data:`DIV_OF`/:data:`MOD_OF`.
    """

    FLOOR = "floor"
    TRUNC = "trunc"


class Op(enum.IntEnum):
    """A term's operator. Values are stable small integers used in structural hashes.

    An ``IntEnum`` so that hashing an op (done for every interned node) is C-fast.
    """

    CONST = 0
    VAR = 1
    ADD = 2  # sum of c_i * t_i plus a constant; args are the t_i
    MUL = 3  # product of two or more non-constant factors
    MAX = 4
    MIN = 5
    FLOORDIV = 6
    FLOORMOD = 7
    TRUNCDIV = 8
    TRUNCMOD = 9
    LT = 10
    LE = 11
    EQ = 12
    NE = 13
    AND = 14  # logical: 1 when both operands are non-zero, else 0
    OR = 15  # logical: 1 when either operand is non-zero, else 0


DIV_OF: Final[dict[Semantics, Op]] = {
    Semantics.FLOOR: Op.FLOORDIV,
    Semantics.TRUNC: Op.TRUNCDIV,
}
MOD_OF: Final[dict[Semantics, Op]] = {
    Semantics.FLOOR: Op.FLOORMOD,
    Semantics.TRUNC: Op.TRUNCMOD,
}
SEMANTICS_OF: Final[dict[Op, Semantics]] = {
    Op.FLOORDIV: Semantics.FLOOR,
    Op.FLOORMOD: Semantics.FLOOR,
    Op.TRUNCDIV: Semantics.TRUNC,
    Op.TRUNCMOD: Semantics.TRUNC,
}
DIVISION_OPS: Final[frozenset[Op]] = frozenset(SEMANTICS_OF)
COMMUTATIVE: Final[frozenset[Op]] = frozenset(
    {Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.EQ, Op.NE, Op.AND, Op.OR}
)
COMPARISONS: Final[frozenset[Op]] = frozenset({Op.LT, Op.LE, Op.EQ, Op.NE})
LOGICAL: Final[frozenset[Op]] = frozenset({Op.AND, Op.OR})
# The explicit division functions of the text and rule syntax: name -> (is the quotient,
# semantics). Shared by the parser, the concrete interpreter and the prover's encoder.
DIVISION_FUNCTIONS: Final[dict[str, tuple[bool, Semantics]]] = {
    "floordiv": (True, Semantics.FLOOR),
    "floormod": (False, Semantics.FLOOR),
    "truncdiv": (True, Semantics.TRUNC),
    "truncmod": (False, Semantics.TRUNC),
}
