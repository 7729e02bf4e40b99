"""Tokenizer and parser for quorem's expression syntax (Python-like, never ``eval``).

The parser is an iterative operator-precedence (shunting-yard) parser, so nesting depth
is bounded by memory, not by the recursion limit. It produces a small syntax tree that
:mod:`quorem.build` turns into terms and :mod:`quorem.rulefile` into rules.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from .errors import ParseError

__all__ = [
    "BINARY_PRECEDENCE",
    "MAX_DIGITS",
    "RESERVED",
    "Binary",
    "Call",
    "Name",
    "Node",
    "Num",
    "Source",
    "Token",
    "Unary",
    "parse_int",
    "parse_syntax",
    "tokenize",
]

MAX_DIGITS: Final = 4300
"""The most digits a decimal literal may have (Python's default int/str conversion limit).

Decimal conversion is quadratic, so unbounded literals would let a short text stall the
parser; hexadecimal literals convert in linear time and have no limit.
"""
_SAFE_DIGITS: Final = 600  # below the lowest limit sys.set_int_max_str_digits accepts (640)


@dataclasses.dataclass(frozen=True, slots=True)
class Token:
    """A lexical token: ``kind`` is ``int``, ``name``, ``op`` or ``end``."""

    kind: str
    text: str
    line: int
    col: int


class Source:
    """The text a syntax tree was parsed from: positions are computed from it on demand.

    Nodes record the index of their token; line and column are worked out only when
    something asks (an error message), by scanning the text again.
    """

    __slots__ = ("_offsets", "col", "line", "name", "text")

    def __init__(self, text: str, name: str, line: int, col: int) -> None:
        self.text = text
        self.name = name
        self.line = line
        self.col = col
        self._offsets: list[int] | None = None

    def at(self, offset: int) -> tuple[int, int]:
        """Line and column of the character at ``offset``."""
        newline = self.text.rfind("\n", 0, offset)
        if newline < 0:
            return self.line, self.col + offset
        return self.line + self.text.count("\n", 0, offset), offset - newline

    def where(self, index: int) -> tuple[int, int]:
        """Line and column of token ``index`` (the end token is one past the last)."""
        if self._offsets is None:
            offsets = [m.start() for m in _SCAN_RE.finditer(self.text) if m.group(1)]
            offsets.append(len(self.text))
            self._offsets = offsets
        return self.at(self._offsets[index])

    def error(self, reason: str, index: int, shift: int = 0) -> ParseError:
        """A ParseError at token ``index``, or ``shift`` characters into that token."""
        line, col = self.where(index)
        return ParseError(reason, line, col + shift, self.name)


class _Node:
    """What every syntax node has: its token (for its position) and a parenthesis flag."""

    __slots__ = ("at", "parens", "src")

    at: int  # index of the node's token
    src: Source
    parens: bool

    @property
    def line(self) -> int:
        """Line of the node's token."""
        return self.src.where(self.at)[0]

    @property
    def col(self) -> int:
        """Column of the node's token."""
        return self.src.where(self.at)[1]


class Num(_Node):
    """An integer literal."""

    __slots__ = ("value",)

    def __init__(self, value: int, at: int, src: Source) -> None:
        self.value = value
        self.at = at
        self.src = src
        self.parens = False


class Name(_Node):
    """An identifier."""

    __slots__ = ("id",)

    def __init__(self, id: str, at: int, src: Source) -> None:
        self.id = id
        self.at = at
        self.src = src
        self.parens = False


class Unary(_Node):
    """A prefix operator: ``-``, ``+`` or ``not``."""

    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Node, at: int, src: Source) -> None:
        self.op = op
        self.operand = operand
        self.at = at
        self.src = src
        self.parens = False


class Binary(_Node):
    """An infix operator: arithmetic, comparison, ``and`` or ``or``."""

    __slots__ = ("left", "op", "right")

    def __init__(self, op: str, left: Node, right: Node, at: int, src: Source) -> None:
        self.op = op
        self.left = left
        self.right = right
        self.at = at
        self.src = src
        self.parens = False


class Call(_Node):
    """A function call ``name(args...)``."""

    __slots__ = ("args", "func")

    def __init__(self, func: str, args: list[Node], at: int, src: Source) -> None:
        self.func = func
        self.args = args
        self.at = at
        self.src = src
        self.parens = False


Node = Num | Name | Unary | Binary | Call

# Tokens, in the order they are tried; blanks and comments separate them.
_TOKEN: Final = (
    r"0[xX][0-9a-fA-F_]+|[0-9][0-9_]*|[A-Za-z_][A-Za-z_0-9]*|//|<=|>=|==|!=|&&|\|\||[-+*%<>(),!]"
)
_BLANK: Final = r"[ \t\r\n]+|\#[^\n]*"
_VALID_RE: Final = re.compile(f"(?:{_BLANK}|{_TOKEN})*")  # stops at a character no token starts
_SCAN_RE: Final = re.compile(f"{_BLANK}|({_TOKEN})")  # group 1: a token; blanks give ""
_KEYWORDS: Final = frozenset({"and", "or", "not"})
# C's spellings, as TVM and CUDA print masks: && and || are and/or; ! is C's unary not,
# which binds as tightly as unary minus (!x < 3 is (not x) < 3, as in C).
_C_SPELLING: Final = {"&&": "and", "||": "or"}
# Python's other keywords: text that reads as Python must not mean something else here
# (`True` a variable, `x if c else y` an error far from its cause). Spelled out rather
# than taken from the `keyword` module, so the language does not change with Python's.
RESERVED: Final = frozenset(
    {
        *("False", "None", "True", "as", "assert", "async", "await", "break", "class"),
        *("continue", "def", "del", "elif", "else", "except", "finally", "for", "from"),
        *("global", "if", "import", "in", "is", "lambda", "nonlocal", "pass", "raise"),
        *("return", "try", "while", "with", "yield"),
    }
)
_MISPLACED_UNDERSCORE_RE: Final = re.compile(r"_(?=_|$)")
BINARY_PRECEDENCE: Final = {
    "or": 1,
    "and": 2,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "==": 4,
    "!=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "//": 6,
    "%": 6,
}
_UNARY_PREC: Final = {"not": 3, "!": 7, "-": 7, "+": 7}
COMPARISON_OPS: Final = frozenset({"<", "<=", ">", ">=", "==", "!="})
_DIGITS: Final = frozenset("0123456789")
_NAME_START: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _split(src: Source) -> list[str]:
    """The texts of the tokens of ``src``, then ``""`` for the end.

    Raises ParseError naming the position of any character that starts no token.
    """
    text = src.text
    valid = _VALID_RE.match(text)
    assert valid is not None  # it matches the empty string
    end = valid.end()
    if end < len(text):
        ch = text[end]
        hint = " (use // for division)" if ch == "/" else ""
        line, col = src.at(end)
        raise ParseError(f"unexpected character {ch!r}{hint}", line, col, src.name)
    texts = [_C_SPELLING.get(t, t) for t in _SCAN_RE.findall(text) if t]
    texts.append("")
    return texts


def _kind(text: str) -> str:
    if not text:
        return "end"
    if text[0] in _DIGITS:
        return "int"
    if text[0] in _NAME_START and text not in _KEYWORDS:
        return "name"
    return "op"


def tokenize(text: str, source: str = "<expr>", line: int = 1, col: int = 1) -> list[Token]:
    """Split ``text`` into tokens; positions start at ``line``:``col``.

    Raises ParseError naming the position of any character that starts no token. (The
    parser does not use this: it splits without positions and finds them on an error.)
    """
    tokens: list[Token] = []
    pos = 0
    for m in _SCAN_RE.finditer(text):
        if m.start() != pos:
            break  # a character no token starts
        chunk = m.group()
        if m.group(1):
            word = _C_SPELLING.get(chunk, chunk)
            tokens.append(Token(_kind(word), word, line, col))
        newlines = chunk.count("\n")
        if newlines:
            line += newlines
            col = len(chunk) - chunk.rfind("\n")
        else:
            col += len(chunk)
        pos = m.end()
    if pos < len(text):
        ch = text[pos]
        hint = " (use // for division)" if ch == "/" else ""
        raise ParseError(f"unexpected character {ch!r}{hint}", line, col, source)
    tokens.append(Token("end", "", line, col))
    return tokens


def _decimal(digits: str) -> int:
    """The value of a string of decimal digits, whatever the interpreter's digit limit.

    Converted in pieces short enough for any limit ``sys.set_int_max_str_digits`` allows;
    callers bound the length (the conversion is quadratic).
    """
    if len(digits) <= _SAFE_DIGITS:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _SAFE_DIGITS):
        piece = digits[start : start + _SAFE_DIGITS]
        value = value * 10 ** len(piece) + int(piece)
    return value


class _LiteralError(Exception):
    """Why an integer token is refused, and where in it (an offset into its text)."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def _literal(text: str) -> int:
    """The value of one int token. Raises _LiteralError.

    Rules as in Python: ``_`` only between digits (after ``0x`` too), no leading zeros;
    decimal literals have at most :data:`MAX_DIGITS` digits.
    """
    hexadecimal = text[:2] in ("0x", "0X")
    body = text[2:] if hexadecimal else text
    if "_" in body:
        # Each '_' must be followed by a digit; then each is also preceded by one (or by
        # the 0x prefix, as Python allows: 0x_ff).
        bad = _MISPLACED_UNDERSCORE_RE.search(body)
        if bad is not None and body.strip("_"):
            offset = len(text) - len(body) + bad.start()
            raise _LiteralError("'_' in an integer must stand between two digits", offset)
        body = body.replace("_", "")
    if hexadecimal:
        if not body:
            raise _LiteralError("hexadecimal literal has no digits")
        return int(body, 16)
    if len(body) > MAX_DIGITS:
        raise _LiteralError(
            f"integer literal has {len(body)} digits; the limit is {MAX_DIGITS}"
            " (write larger constants in hex, 0x...)"
        )
    if len(body) > 1 and body[0] == "0":
        raise _LiteralError("leading zeros are not allowed in integers")
    return _decimal(body)


def _int_value(text: str, at: int, src: Source) -> int:
    try:
        return _literal(text)
    except _LiteralError as bad:
        raise src.error(bad.reason, at, bad.offset) from None


_INTEGER_RE: Final = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)")


def parse_int(text: str, source: str = "<int>") -> int:
    """Parse a signed integer literal (``-12``, ``0x_ff``, ``1_000``), as in expressions.

    Raises ParseError naming the column of the problem; never ValueError, whatever the
    interpreter's int/str digit limit.
    """
    if _INTEGER_RE.fullmatch(text) is None:
        raise ParseError(f"{_shorten(text)} is not an integer", 1, 1, source)
    digits = text.lstrip("+-")
    try:
        value = _literal(digits)
    except _LiteralError as bad:
        col = 1 + len(text) - len(digits) + bad.offset
        raise ParseError(bad.reason, 1, col, source) from None
    return -value if text[0] == "-" else value


def _shorten(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut in the middle when long (error messages quote user text)."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[: limit // 2]) + f"...({len(text)} characters)..." + repr(text[-8:])


def parse_syntax(text: str, source: str = "<expr>", line: int = 1, col: int = 1) -> Node:
    """Parse one expression into a syntax tree.

    Raises ParseError at the first token that does not fit, with its line and column.
    """
    src = Source(text, source, line, col)
    return _Parser(_split(src), src).run()


# Operator-stack frames: (kind, token index, operand-stack height when a call or
# parenthesis opened).
_BIN, _UN, _PAREN, _CALL = 0, 1, 2, 3


class _Parser:
    def __init__(self, texts: list[str], src: Source) -> None:
        self.texts = texts
        self.src = src
        self.operands: list[Node] = []
        self.ops: list[tuple[int, int, int]] = []

    def run(self) -> Node:  # noqa: PLR0915  (one loop over the tokens)
        expect_operand = True
        i = 0
        toks = self.texts
        src = self.src
        operands = self.operands
        ops = self.ops
        while True:
            text = toks[i]
            i += 1
            if expect_operand:
                first = text[:1]
                if first in _DIGITS:
                    operands.append(Num(_int_value(text, i - 1, src), i - 1, src))
                    expect_operand = False
                elif first in _NAME_START and text not in _KEYWORDS:
                    if text in RESERVED:
                        raise src.error(f"{text!r} is a Python keyword, not a name", i - 1)
                    if toks[i] == "(":
                        i += 1
                        ops.append((_CALL, i - 2, len(operands)))
                        if toks[i] == ")":
                            i += 1
                            ops.pop()
                            operands.append(Call(text, [], i - 3, src))
                            expect_operand = False
                    else:
                        operands.append(Name(text, i - 1, src))
                        expect_operand = False
                elif text == "(":
                    ops.append((_PAREN, i - 1, len(operands)))
                elif text in _UNARY_PREC:
                    ops.append((_UN, i - 1, 0))
                elif not text:
                    raise src.error("unexpected end of expression", i - 1)
                else:
                    raise src.error(f"expected an operand, found {text!r}", i - 1)
                continue
            prec = BINARY_PRECEDENCE.get(text)
            if prec is not None:
                while ops:  # reduce_while(prec), inlined: it runs for every operator
                    kind, at, _ = ops[-1]
                    if kind == _BIN:
                        if BINARY_PRECEDENCE[toks[at]] < prec:
                            break
                    elif kind != _UN or _UNARY_PREC[toks[at]] < prec:
                        break
                    ops.pop()
                    self.reduce(kind, at)
                ops.append((_BIN, i - 1, 0))
                expect_operand = True
            elif text == ")":
                self.close(i - 1)
            elif text == ",":
                self.reduce_while(0)
                if not ops or ops[-1][0] != _CALL:
                    raise src.error("',' outside a function call", i - 1)
                expect_operand = True
            elif not text:
                self.reduce_while(0)
                if ops:
                    raise src.error("'(' is never closed", ops[-1][1])
                assert len(operands) == 1
                return operands[0]
            else:
                raise src.error(f"expected an operator, found {text!r}", i - 1)

    def reduce_while(self, prec: int) -> None:
        """Reduce stacked operators that bind at least as tightly as ``prec``."""
        ops, toks = self.ops, self.texts
        while ops:
            kind, at, _ = ops[-1]
            if kind == _BIN:
                if BINARY_PRECEDENCE[toks[at]] < prec:
                    return
            elif kind == _UN:
                if _UNARY_PREC[toks[at]] < prec:
                    return
            else:
                return
            ops.pop()
            self.reduce(kind, at)

    def reduce(self, kind: int, at: int) -> None:
        operands, src = self.operands, self.src
        op = self.texts[at]
        right = operands.pop()
        if kind == _UN:
            operands.append(Unary("not" if op == "!" else op, right, at, src))
            return
        left = operands.pop()
        if (
            op in COMPARISON_OPS
            and isinstance(left, Binary)
            and left.op in COMPARISON_OPS
            and not left.parens
        ):
            # a < b < c means (a < b) and (b < c), as in Python.
            chained = Binary(op, left.right, right, at, src)
            operands.append(Binary("and", left, chained, at, src))
            return
        operands.append(Binary(op, left, right, at, src))

    def close(self, at: int) -> None:
        self.reduce_while(0)
        if not self.ops:
            raise self.src.error("')' without a matching '('", at)
        kind, opened, base = self.ops.pop()
        if kind == _PAREN:
            self.operands[-1].parens = True
            return
        args = self.operands[base:]
        del self.operands[base:]
        self.operands.append(Call(self.texts[opened], args, opened, self.src))
