"""Rules as data: the pattern, guard and rewrite language's syntax tree, and ``Rule``.

A rule says: wherever a term matches ``pattern`` and ``guard`` holds, it may be replaced
by ``rewrite``. Rules are written in ``.rules`` files (see :mod:`quorem.rulefile`)
and this module is their in-memory form, shared by the rewriter (which runs it on
concrete terms) and the prover (which encodes it symbolically).

Names follow one convention: a name starting with a lower-case letter is a *term
variable* (matches any term), one starting with an upper-case letter is a *constant
variable* (matches an integer literal). Inside ``sum(K*t)`` the names are *sequence
variables*: one value per addend of the matched sum.

In patterns, ``//`` and ``%`` mean the division of the rule's semantics, so one rule
text can be stated for floor and truncating division alike.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Final

from .ops import DIV_OF, MOD_OF, Op, Semantics

if TYPE_CHECKING:
    from .proofrecord import RuleProof

__all__ = [
    "AGGREGATES",
    "CONST_FUNCS",
    "TERM_FUNCS",
    "Binary",
    "Call",
    "Expr",
    "Lit",
    "Name",
    "NameKind",
    "PAddend",
    "PConst",
    "PLit",
    "POp",
    "PSum",
    "PTerm",
    "Pattern",
    "Rule",
    "Seq",
    "Unary",
    "expr_names",
    "pattern_op",
    "sequence_names",
]


class NameKind(enum.Enum):
    """What a pattern-bound name stands for."""

    TERM = "term"
    CONST = "const"
    SEQ_TERM = "sequence of terms"
    SEQ_CONST = "sequence of constants"


# ----------------------------------------------------------------------------- patterns
@dataclasses.dataclass(frozen=True, slots=True)
class PTerm:
    """A term variable: matches any term; repeated, the same (interned) term."""

    name: str


@dataclasses.dataclass(frozen=True, slots=True)
class PConst:
    """A constant variable: matches an integer literal."""

    name: str


@dataclasses.dataclass(frozen=True, slots=True)
class PLit:
    """An integer literal: matches exactly that constant."""

    value: int


@dataclasses.dataclass(frozen=True, slots=True)
class POp:
    """An operator node. ``op`` is abstract: ``div``/``mod`` take the rule's semantics.

    ``op`` is one of ``div mod floordiv floormod truncdiv truncmod eucliddiv euclidmod
    ceildiv max min mul lt le eq ne and or``.
    """

    op: str
    children: tuple[Pattern, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PAddend:
    """One addend ``coef * pattern`` of a sum pattern; ``coef`` is a constant expression."""

    pattern: Pattern
    coef: Expr


@dataclasses.dataclass(frozen=True, slots=True)
class Seq:
    """``sum(K*t)``: all remaining addends, coefficients bound to ``coef``, atoms to ``term``.

    ``sum(K*t, cond)`` (``where`` is ``cond``) takes only the remaining addends for which
    the per-addend condition holds (at least one); the others go to the sum's ``rest``.
    """

    coef: str
    term: str
    where: Expr | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class PSum:
    """A sum pattern. Every term is a sum (an atom ``t`` is ``1*t + 0``), so it matches any term.

    ``addends`` each match one distinct addend of the term. What is left over is bound to
    ``rest`` (a term variable written as a bare addend; it includes the constant unless
    ``const`` is given) or to ``seq``; without either, nothing may be left over and the
    constant must match ``const`` (or be zero). A filtered ``seq`` (``seq.where``) takes
    the addends left over that satisfy its condition, and ``rest`` the others.
    """

    addends: tuple[PAddend, ...]
    const: Expr | None
    rest: str | None
    seq: Seq | None


Pattern = PTerm | PConst | PLit | POp | PSum


def pattern_op(op: str, semantics: Semantics | None) -> Op:
    """The concrete operator of an abstract pattern op under ``semantics``."""
    if op == "div":
        assert semantics is not None
        return DIV_OF[semantics]
    if op == "mod":
        assert semantics is not None
        return MOD_OF[semantics]
    return _FIXED_OPS[op]


_FIXED_OPS: Final = {
    "floordiv": Op.FLOORDIV,
    "floormod": Op.FLOORMOD,
    "truncdiv": Op.TRUNCDIV,
    "truncmod": Op.TRUNCMOD,
    "eucliddiv": Op.EUCLIDDIV,
    "euclidmod": Op.EUCLIDMOD,
    "ceildiv": Op.CEILDIV,
    "max": Op.MAX,
    "min": Op.MIN,
    "mul": Op.MUL,
    "lt": Op.LT,
    "le": Op.LE,
    "eq": Op.EQ,
    "ne": Op.NE,
    "and": Op.AND,
    "or": Op.OR,
}

# -------------------------------------------------------------------------- expressions
CONST_FUNCS: Final = frozenset(
    {
        "gcd",
        "abs",
        "min",
        "max",
        "floordiv",
        "floormod",
        "truncdiv",
        "truncmod",
        "eucliddiv",
        "euclidmod",
        "ceildiv",
        "divides",
    }
)
AGGREGATES: Final = frozenset({"sum", "all", "any"})
# Functions of terms (quorem.monomial): ``tdivides(u, t)``, the monomial ``u``
# divides ``t`` as a polynomial over its atoms; ``tquotient(t, u)``, that quotient.
TERM_FUNCS: Final = frozenset({"tdivides", "tquotient"})


@dataclasses.dataclass(frozen=True, slots=True)
class Lit:
    """An integer literal (``True``/``False`` are not literals; use comparisons)."""

    value: int


@dataclasses.dataclass(frozen=True, slots=True)
class Name:
    """A name bound by the pattern."""

    name: str
    kind: NameKind


@dataclasses.dataclass(frozen=True, slots=True)
class Unary:
    """``-e`` or ``not e``."""

    op: str
    operand: Expr


@dataclasses.dataclass(frozen=True, slots=True)
class Binary:
    """``a op b``: ``+ - * // % < <= > >= == != and or`` (``//``/``%`` per the rule's semantics)."""

    op: str
    left: Expr
    right: Expr


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    """A named function: ``vmin vmax`` of a term, constant functions, or an aggregate."""

    func: str
    args: tuple[Expr, ...]


Expr = Lit | Name | Unary | Binary | Call

_SEQ_KINDS: Final = (NameKind.SEQ_TERM, NameKind.SEQ_CONST)


def expr_names(e: Expr) -> set[str]:
    """Every name ``e`` uses, inside aggregates too."""
    if isinstance(e, Name):
        return {e.name}
    if isinstance(e, Unary):
        return expr_names(e.operand)
    if isinstance(e, Binary):
        return expr_names(e.left) | expr_names(e.right)
    if isinstance(e, Call):
        return set().union(*(expr_names(a) for a in e.args))
    return set()


def sequence_names(e: Expr) -> list[str]:
    """The sequence names ``e`` uses outside nested aggregates, in order of occurrence.

    Non-empty exactly when ``e`` ranges over a sequence: evaluated once per addend.
    """
    if isinstance(e, Name):
        return [e.name] if e.kind in _SEQ_KINDS else []
    if isinstance(e, Unary):
        return sequence_names(e.operand)
    if isinstance(e, Binary):
        return sequence_names(e.left) + sequence_names(e.right)
    if isinstance(e, Call) and e.func not in AGGREGATES and e.func not in _TAKES_EVERY_ELEMENT:
        return [n for a in e.args for n in sequence_names(a)]
    return []


# gcd, min and max take every element of a sequence argument (gcd(K) is the gcd of all
# coefficients): like the aggregates, they are one value, not one per addend.
_TAKES_EVERY_ELEMENT: Final = frozenset({"gcd", "min", "max"})


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """One rewrite rule, as written in a rules file.

    Attributes:
        name: unique kebab-case name.
        doc: one line saying what the rule does, usually the identity it applies.
        semantics: the division semantics the rule is stated for; empty means the rule
            uses no division and holds for any.
        pattern: what the rule matches.
        lets: named values computed from the match, in order: ``(name, expression)``;
            the guard and the rewrite may use them.
        guard: when it applies (``None`` means always).
        rewrite: what the match becomes.
        names: every name the pattern binds, with its kind.
        phase: ``main`` (the default), ``early`` (the rule also runs in the early pass,
            which applies the early rules alone to a fixed point before every rule
            runs), ``constraint`` (it rewrites the comparisons of indexing-map
            constraints) or ``lowering`` (it converts one division semantics into the
            other for code emission). Constraint and lowering rules are applied by their
            own passes, with a step budget, to terms built for them; the fixed-point
            rewriter of user terms never applies them, and no termination order is
            asked of them.
        file: the rules file the rule came from.
        line: the line of its ``rule`` header.
        text: the rule's source text (for reports and proof caches).
        proof: what the proof records say of the rule
            (:mod:`quorem.proofrecord`), attached when it is loaded; None for a
            rule no record was looked up for (it counts as unproven).

    """

    name: str
    doc: str
    semantics: tuple[Semantics, ...]
    pattern: Pattern
    lets: tuple[tuple[str, Expr], ...]
    guard: Expr | None
    rewrite: Expr
    names: dict[str, NameKind] = dataclasses.field(hash=False, compare=False)
    phase: str = "main"
    file: str = "<rules>"
    line: int = 0
    text: str = ""
    proof: RuleProof | None = dataclasses.field(default=None, compare=False, hash=False, repr=False)

    @property
    def early(self) -> bool:
        """Whether the rule also runs in the early pass (``phase: early``)."""
        return self.phase == "early"

    @property
    def constraint(self) -> bool:
        """Whether the rule belongs to the indexing-map constraint pass."""
        return self.phase == "constraint"

    @property
    def by_own_pass(self) -> bool:
        """Whether a pass of its own applies the rule (``constraint``, ``lowering``)."""
        return self.phase in ("constraint", "lowering")

    @property
    def location(self) -> str:
        """``file:line`` of the rule's header."""
        return f"{self.file}:{self.line}"
