"""The expression tokenizer and parser as first written: the reference for tests/test_syntax.py.

A copy of quorem.syntax before it was made faster (commit 6673f82), kept only to
check that the fast one gives the same trees, tokens, errors and positions. Later changes
to the language are made here too, written the plain way: Python's keywords are not
names, and ``_`` in an integer stands only between digits (issue 14).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from quorem.errors import ParseError

__all__ = ["Binary", "Call", "Name", "Node", "Num", "Token", "Unary", "parse_syntax", "tokenize"]

MAX_DIGITS: Final = 4300  # Python's default int/str conversion limit


@dataclasses.dataclass(frozen=True, slots=True)
class Token:
    """A lexical token: ``kind`` is ``int``, ``name``, ``op`` or ``end``."""

    kind: str
    text: str
    line: int
    col: int


@dataclasses.dataclass(eq=False, slots=True)
class Num:
    """An integer literal."""

    value: int
    line: int
    col: int
    parens: bool = False


@dataclasses.dataclass(eq=False, slots=True)
class Name:
    """An identifier."""

    id: str
    line: int
    col: int
    parens: bool = False


@dataclasses.dataclass(eq=False, slots=True)
class Unary:
    """A prefix operator: ``-``, ``+`` or ``not``."""

    op: str
    operand: Node
    line: int
    col: int
    parens: bool = False


@dataclasses.dataclass(eq=False, slots=True)
class Binary:
    """An infix operator: arithmetic, comparison, ``and`` or ``or``."""

    op: str
    left: Node
    right: Node
    line: int
    col: int
    parens: bool = False


@dataclasses.dataclass(eq=False, slots=True)
class Call:
    """A function call ``name(args...)``."""

    func: str
    args: list[Node]
    line: int
    col: int
    parens: bool = False


Node = Num | Name | Unary | Binary | Call

_TOKEN_RE: Final = re.compile(
    r"(?P<ws>[ \t\r\n]+)|(?P<comment>\#[^\n]*)"
    r"|(?P<int>0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>//|<=|>=|==|!=|&&|\|\||[-+*%<>(),!])"
)
_BINARY_PREC: Final = {
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


def tokenize(text: str, source: str = "<expr>", line: int = 1, col: int = 1) -> list[Token]:
    """Split ``text`` into tokens; positions start at ``line``:``col``.

    Raises ParseError naming the position of any character that starts no token.
    """
    tokens: list[Token] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            hint = " (use // for division)" if ch == "/" else ""
            raise ParseError(f"unexpected character {ch!r}{hint}", line, col, source)
        kind = m.lastgroup
        chunk = m.group()
        if kind in {"int", "name", "op"}:
            if kind == "name" and chunk in ("and", "or", "not"):
                kind = "op"
            # C's spellings (issue 15): && and || are and/or; ! is a unary operator that
            # binds like unary minus and means not.
            word = {"&&": "and", "||": "or"}.get(chunk, chunk)
            tokens.append(Token(str(kind), word, line, col))
        newlines = chunk.count("\n")
        if newlines:
            line += newlines
            col = len(chunk) - chunk.rfind("\n")
        else:
            col += len(chunk)
        pos = m.end()
    tokens.append(Token("end", "", line, col))
    return tokens


_RESERVED: Final = frozenset(
    {
        *("False", "None", "True", "as", "assert", "async", "await", "break", "class"),
        *("continue", "def", "del", "elif", "else", "except", "finally", "for", "from"),
        *("global", "if", "import", "in", "is", "lambda", "nonlocal", "pass", "raise"),
        *("return", "try", "while", "with", "yield"),
    }
)


def _misplaced_underscore(text: str) -> int | None:
    """Offset of the first ``_`` that does not stand between two digits, or None."""
    start = 2 if text.lower().startswith("0x") else 0
    for i in range(start, len(text)):
        if text[i] != "_":
            continue
        before_ok = i > start or (start == 2 and i == 2)  # 0x_ff is allowed
        after_ok = i + 1 < len(text) and text[i + 1] != "_"
        if i > start and text[i - 1] == "_":
            before_ok = False
        if not (before_ok and after_ok):
            return i
    return None


def _int_value(tok: Token, source: str) -> int:
    digits = tok.text.replace("_", "")
    hexadecimal = digits.lower().startswith("0x")
    bad = _misplaced_underscore(tok.text)
    if bad is not None and not (hexadecimal and len(digits) == 2):
        reason = "'_' in an integer must stand between two digits"
        raise ParseError(reason, tok.line, tok.col + bad, source)
    if hexadecimal:
        if len(digits) == 2:
            raise ParseError("hexadecimal literal has no digits", tok.line, tok.col, source)
        return int(digits, 16)
    if len(digits) > MAX_DIGITS:
        raise ParseError(
            f"integer literal has {len(digits)} digits; the limit is {MAX_DIGITS}"
            " (write larger constants in hex, 0x...)",
            tok.line,
            tok.col,
            source,
        )
    if len(digits) > 1 and digits[0] == "0":
        raise ParseError("leading zeros are not allowed in integers", tok.line, tok.col, source)
    return int(digits)


@dataclasses.dataclass(slots=True)
class _Frame:
    """An entry of the operator stack."""

    kind: str  # "bin", "un", "paren", "call"
    tok: Token
    base: int = 0  # operand-stack height when a call or parenthesis opened


def parse_syntax(text: str, source: str = "<expr>", line: int = 1, col: int = 1) -> Node:
    """Parse one expression into a syntax tree.

    Raises ParseError at the first token that does not fit, with its line and column.
    """
    tokens = tokenize(text, source, line, col)
    return _Parser(tokens, source).run()


class _Parser:
    def __init__(self, tokens: list[Token], source: str) -> None:
        self.tokens = tokens
        self.source = source
        self.operands: list[Node] = []
        self.ops: list[_Frame] = []

    def error(self, reason: str, tok: Token) -> ParseError:
        return ParseError(reason, tok.line, tok.col, self.source)

    def run(self) -> Node:  # noqa: PLR0915  (one loop over the tokens)
        expect_operand = True
        i = 0
        toks = self.tokens
        while True:
            tok = toks[i]
            i += 1
            if expect_operand:
                if tok.kind == "int":
                    self.operands.append(Num(_int_value(tok, self.source), tok.line, tok.col))
                    expect_operand = False
                elif tok.kind == "name":
                    if tok.text in _RESERVED:
                        raise self.error(f"{tok.text!r} is a Python keyword, not a name", tok)
                    if toks[i].text == "(":
                        i += 1
                        self.ops.append(_Frame("call", tok, len(self.operands)))
                        if toks[i].text == ")":
                            i += 1
                            self.ops.pop()
                            self.operands.append(Call(tok.text, [], tok.line, tok.col))
                            expect_operand = False
                    else:
                        self.operands.append(Name(tok.text, tok.line, tok.col))
                        expect_operand = False
                elif tok.text == "(":
                    self.ops.append(_Frame("paren", tok, len(self.operands)))
                elif tok.text in _UNARY_PREC:
                    self.ops.append(_Frame("un", tok))
                elif tok.kind == "end":
                    raise self.error("unexpected end of expression", tok)
                else:
                    raise self.error(f"expected an operand, found {tok.text!r}", tok)
                continue
            if tok.text in _BINARY_PREC and tok.kind == "op":
                self.reduce_while(_BINARY_PREC[tok.text])
                self.ops.append(_Frame("bin", tok))
                expect_operand = True
            elif tok.text == ")":
                self.close(tok)
            elif tok.text == ",":
                self.reduce_while(0)
                if not self.ops or self.ops[-1].kind != "call":
                    raise self.error("',' outside a function call", tok)
                expect_operand = True
            elif tok.kind == "end":
                self.reduce_while(0)
                if self.ops:
                    raise self.error("'(' is never closed", self.ops[-1].tok)
                assert len(self.operands) == 1
                return self.operands[0]
            else:
                raise self.error(f"expected an operator, found {tok.text!r}", tok)

    def reduce_while(self, prec: int) -> None:
        """Reduce stacked operators that bind at least as tightly as ``prec``."""
        while self.ops:
            top = self.ops[-1]
            if top.kind == "bin":
                if _BINARY_PREC[top.tok.text] < prec:
                    return
            elif top.kind == "un":
                if _UNARY_PREC[top.tok.text] < prec:
                    return
            else:
                return
            self.ops.pop()
            self.reduce(top)

    def reduce(self, frame: _Frame) -> None:
        tok = frame.tok
        right = self.operands.pop()
        if frame.kind == "un":
            op = "not" if tok.text == "!" else tok.text
            self.operands.append(Unary(op, right, tok.line, tok.col))
            return
        left = self.operands.pop()
        if (
            tok.text in COMPARISON_OPS
            and isinstance(left, Binary)
            and left.op in COMPARISON_OPS
            and not left.parens
        ):
            # a < b < c means (a < b) and (b < c), as in Python.
            chained = Binary(tok.text, left.right, right, tok.line, tok.col)
            self.operands.append(Binary("and", left, chained, tok.line, tok.col))
            return
        self.operands.append(Binary(tok.text, left, right, tok.line, tok.col))

    def close(self, tok: Token) -> None:
        self.reduce_while(0)
        if not self.ops:
            raise self.error("')' without a matching '('", tok)
        frame = self.ops.pop()
        if frame.kind == "paren":
            self.operands[-1].parens = True
            return
        args = self.operands[frame.base :]
        del self.operands[frame.base :]
        self.operands.append(Call(frame.tok.text, args, frame.tok.line, frame.tok.col))
