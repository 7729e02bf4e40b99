"""Print terms back to the text syntax, so that ``parse(to_text(t)) is t``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeAlias

from .ops import QUOTIENT_OPS, SEMANTICS_OF, Op, Semantics

if TYPE_CHECKING:  # terms are read, never built, here: term.py prints with this module
    from .term import Term

__all__ = ["brief", "int_text", "to_text"]

# Binding strength, Python's: or < and < comparisons < sums < products < unary minus < atoms.
_OR: Final = 1
_AND: Final = 2
_CMP: Final = 3
_SUM: Final = 4
_PROD: Final = 5
_UNARY: Final = 6
_ATOM: Final = 7
# Beyond this, print in hex: it converts in linear time and parses back at any length,
# while decimal literals are limited (quorem.syntax.MAX_DIGITS).
_HUGE: Final = 10**4000
# str() of an int this small works under any limit sys.set_int_max_str_digits accepts
# (at least 640 digits); larger decimals are converted in pieces of _PIECE digits.
_SAFE: Final = 10**600
_PIECE: Final = 500
_BRIEF_CHARS: Final = 160
_CMP_TEXT: Final = {Op.LT: "<", Op.LE: "<=", Op.EQ: "==", Op.NE: "!="}
_FUNC_TEXT: Final = {
    Op.FLOORDIV: "floordiv",
    Op.FLOORMOD: "floormod",
    Op.TRUNCDIV: "truncdiv",
    Op.TRUNCMOD: "truncmod",
    Op.EUCLIDDIV: "eucliddiv",
    Op.EUCLIDMOD: "euclidmod",
    Op.CEILDIV: "ceildiv",
    Op.MAX: "max",
    Op.MIN: "min",
}


def int_text(v: int) -> str:
    """``v`` as a literal the parser reads back; never raises, whatever its size.

    Decimal up to 4000 digits (under any int/str digit limit Python allows), hex beyond.
    """
    if -_SAFE < v < _SAFE:
        return str(v)
    magnitude = -v if v < 0 else v
    if magnitude >= _HUGE:
        digits = f"{magnitude:#x}"
    else:
        pieces: list[str] = []
        unit = 10**_PIECE
        while magnitude >= unit:
            magnitude, low = divmod(magnitude, unit)
            pieces.append(f"{low:0{_PIECE}d}")
        pieces.append(str(magnitude))
        digits = "".join(reversed(pieces))
    return "-" + digits if v < 0 else digits


def _prec(t: Term, semantics: Semantics) -> int:
    op = t.op
    if op is Op.CONST:
        return _UNARY if t.arg < 0 else _ATOM
    if op is Op.VAR or op is Op.MAX or op is Op.MIN or op is Op.CEILDIV:
        return _ATOM
    if op is Op.ADD:
        return _SUM
    if op is Op.MUL:
        return _PROD
    if op in SEMANTICS_OF:
        return _PROD if SEMANTICS_OF[op] is semantics else _ATOM
    if op is Op.AND:
        return _AND
    if op is Op.OR:
        return _OR
    return _CMP


Item: TypeAlias = "str | tuple[Term, int]"


def to_text(term: Term, semantics: Semantics = Semantics.FLOOR, limit: int | None = None) -> str:
    """Render ``term`` in quorem's text syntax.

    ``//`` and ``%`` are printed for the division ops of ``semantics``; the others are
    printed as ``floordiv``/``truncmod``/... calls. The text parses back, under the same
    semantics and variable bounds, to the identical term. Iterative: any depth prints.
    With ``limit``, printing stops once the text is longer than ``limit`` characters
    and the text ends in ``...`` (it then does not parse): a term with shared subterms
    prints each use in full, so its text can be exponentially longer than the term.
    """
    out: list[str] = []
    length = 0
    # Work stack: a string to emit, or (term, minimum precedence the context needs).
    stack: list[Item] = [(term, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            length += len(item)
            if limit is not None and length > limit:
                return "".join(out)[:limit] + "..."
            continue
        t, need = item
        pieces = _expand(t, semantics)
        wrap = _prec(t, semantics) < need
        if wrap:
            stack.append(")")
        stack.extend(reversed(pieces))
        if wrap:
            stack.append("(")
    return "".join(out)


def brief(term: Term, semantics: Semantics = Semantics.FLOOR) -> str:
    """``term``'s text cut to about a line, for error messages (see :func:`to_text`)."""
    return to_text(term, semantics, _BRIEF_CHARS)


def _expand(t: Term, semantics: Semantics) -> list[Item]:
    op = t.op
    if op is Op.CONST:
        return [int_text(t.arg)]
    if op is Op.VAR:
        return [t.arg[0]]
    if op is Op.ADD:
        return _expand_sum(t)
    if op is Op.MUL:
        pieces: list[Item] = []
        for i, f in enumerate(t.args):
            if i:
                pieces.append("*")
            pieces.append((f, _PROD + 1 if i else _PROD))
        return pieces
    a, b = t.args
    if op is Op.AND or op is Op.OR:
        # The chain nests to the right: its right operand needs no parentheses.
        level = _AND if op is Op.AND else _OR
        if b.op is not op:
            b = _truth_operand(b)
        return [(_truth_operand(a), level + 1), " and " if op is Op.AND else " or ", (b, level)]
    if op in _CMP_TEXT:
        return [(a, _CMP + 1), f" {_CMP_TEXT[op]} ", (b, _CMP + 1)]
    if op in SEMANTICS_OF and SEMANTICS_OF[op] is semantics:
        sym = "//" if op in QUOTIENT_OPS else "%"
        return [(a, _PROD), sym, (b, _PROD + 1)]
    return [f"{_FUNC_TEXT[op]}(", (a, 0), ", ", (b, 0), ")"]


def _truth_operand(clause: Term) -> Term:
    """A clause of ``and``/``or`` as written: ``u`` for ``u != 0``.

    The chain stores each clause as its 0/1 truth value, and parsing ``u`` there gives
    ``u != 0`` back.
    """
    if clause.op is Op.NE:
        u, zero = clause.args
        if zero.op is Op.CONST and zero.arg == 0 and u.op not in (Op.AND, Op.OR):
            return u
    return clause


def _scaled(atom: Term, coeff: int) -> list[Item]:
    """``atom * coeff`` for ``coeff > 0``; div/mod operands are parenthesised for readers."""
    if coeff == 1:
        return [(atom, _SUM + 1)]
    need = _ATOM if atom.op in SEMANTICS_OF else _PROD
    return [(atom, need), f"*{int_text(coeff)}"]


def _expand_sum(t: Term) -> list[Item]:
    pieces: list[Item] = []
    for i, (atom, coeff) in enumerate(zip(t.args, t.arg[0], strict=True)):
        if coeff > 0:
            if i:
                pieces.append(" + ")
            pieces.extend(_scaled(atom, coeff))
        elif i:
            pieces.append(" - ")
            pieces.extend(_scaled(atom, -coeff))
        else:
            # A leading minus binds to the first atom only: wrap anything larger.
            pieces.extend(["-", (atom, _ATOM)])
            if coeff != -1:
                pieces.append(f"*{int_text(-coeff)}")
    k = t.arg[1]
    if k > 0:
        pieces.append(f" + {int_text(k)}")
    elif k < 0:
        pieces.append(f" - {int_text(-k)}")
    return pieces
