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
    "QUOTIENT_OPS",
    "REMAINDER_OPS",
    "SEMANTICS_OF",
    "Op",
    "Semantics",
]


class Semantics(enum.Enum):
    """How integer division rounds.

    ``FLOOR`` rounds toward negative infinity (Python ``//`` and ``%``); ``TRUNC``
    rounds toward zero (C, CUDA, LLVM ``sdiv``/``srem``); ``EUCLID`` keeps the remainder
    in ``[0, |b|)`` (Halide, SMT-LIB, Z3), so it rounds down for ``b > 0`` and up for
    ``b < 0``. All three agree when both operands are non-negative.
    """

    FLOOR = "floor"
    TRUNC = "trunc"
    EUCLID = "euclid"


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
    EUCLIDDIV = 16
    EUCLIDMOD = 17
    CEILDIV = 18  # ceil(a / b) for any non-zero b; one meaning in every semantics


DIV_OF: Final[dict[Semantics, Op]] = {
    Semantics.FLOOR: Op.FLOORDIV,
    Semantics.TRUNC: Op.TRUNCDIV,
    Semantics.EUCLID: Op.EUCLIDDIV,
}
MOD_OF: Final[dict[Semantics, Op]] = {
    Semantics.FLOOR: Op.FLOORMOD,
    Semantics.TRUNC: Op.TRUNCMOD,
    Semantics.EUCLID: Op.EUCLIDMOD,
}
SEMANTICS_OF: Final[dict[Op, Semantics]] = {
    Op.FLOORDIV: Semantics.FLOOR,
    Op.FLOORMOD: Semantics.FLOOR,
    Op.TRUNCDIV: Semantics.TRUNC,
    Op.TRUNCMOD: Semantics.TRUNC,
    Op.EUCLIDDIV: Semantics.EUCLID,
    Op.EUCLIDMOD: Semantics.EUCLID,
}
DIVISION_OPS: Final[frozenset[Op]] = frozenset(SEMANTICS_OF)
QUOTIENT_OPS: Final[frozenset[Op]] = frozenset(DIV_OF.values())
REMAINDER_OPS: Final[frozenset[Op]] = frozenset(MOD_OF.values())
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
    "eucliddiv": (True, Semantics.EUCLID),
    "euclidmod": (False, Semantics.EUCLID),
}
