"""XLA's textual form of indexing maps: a parser and a canonical printer.

The form is ``(d0, d1)[s0]{rt0} -> (expr, ...), domain: d0 in [0, 9], ..., expr in [lo, hi]``.
Expressions follow current XLA:

* ``+`` and ``-`` bind loosest; then ``*``, ``/`` (floor division), ``floordiv``,
  ``ceildiv`` and ``mod`` (floor modulo), left-associative; unary minus binds tighter
  than all of them, so ``-d0 mod 2`` is ``(-d0) mod 2``;
* ``min(a, b)``, ``max(a, b)``, integers and variable names;
* the documentation's spellings are accepted too: ``floorDiv``, ``ceilDiv`` and
  juxtaposition ``16d0`` (an integer written right before a name or a parenthesis).

The domain's entries may be separated by commas or newlines. Each declared variable
needs its interval; an entry whose expression is not a bare variable is a constraint.
A known-empty map is ``(d0, d1) -> (0, 0), domain: KNOWN EMPTY`` (its dimensions and
results counted, so that printing and parsing keep them); XLA's bare ``KNOWN EMPTY`` is
read as the empty map without dimensions or results.

Integers are ASCII decimal digits only, at most 4300 of them (Python's default limit
for converting text to int, enforced here whatever the interpreter's setting); ``0x10``
is an error, not ``0 * x10``. Parentheses and unary minus nest at most 200 deep. Every
error is an :class:`IndexingMapError` naming the offset and the reason.

The printer writes ``/`` for floor division, constants to the right of ``*``, a sum's
addends in quorem's canonical order and constraints sorted by their text, so equal
maps print equal and ``parse_map(print_map(m)) == m``.
"""

from __future__ import annotations

import re
from typing import Final

from ..ops import Op, Semantics
from ..term import Term, const, div, linear, maximum, minimum, mod, var
from .map import IndexingMap, IndexingMapError, Variable
from .mapprint import DIGITS_PER_CHUNK as _CHUNK
from .mapprint import print_expr, print_map

__all__ = ["parse_expr", "parse_map", "print_expr", "print_map"]  # the printers: mapprint

# ASCII only: \d and \s would take other scripts' digits and spaces, which XLA never writes.
_TOKEN: Final = re.compile(
    r"(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<arrow>->)|(?P<sym>[-+*/()\[\]{},:])"
)
_SPACE: Final = frozenset(" \t\n\r\f\v")
_MAX_DIGITS: Final = 4300  # Python's default int-from-text limit; see _decimal
_BASE_PREFIX: Final = re.compile(r"0[xXoObB]")
_RESERVED: Final = frozenset(
    {"floordiv", "floorDiv", "ceildiv", "ceilDiv", "mod", "min", "max", "in", "domain"}
    | {"and", "or", "not"}  # operators of quorem's own syntax: not variable names
)
_MUL_WORDS: Final = {
    "floordiv": "/",
    "floorDiv": "/",
    "ceildiv": "ceildiv",
    "ceilDiv": "ceildiv",
    "mod": "mod",
}
_MAX_DEPTH: Final = 10_000  # nesting of parentheses, calls, unary minus and 16(...)


def _binary_precedence(tok: _Token) -> int:
    """2 for ``*`` and the division words, 1 for ``+`` and ``-``, 0 for any other token."""
    if tok.kind == "sym":
        return {"+": 1, "-": 1, "*": 2, "/": 2}.get(tok.text, 0)
    return 2 if tok.kind == "name" and tok.text in _MUL_WORDS else 0


class _Pending:
    """An operator or an opener waiting for its operands: see ``_Parser.expr``."""

    __slots__ = ("args", "kind", "prec", "scale", "tok")

    def __init__(self, kind: str, tok: _Token, prec: int = 0, scale: int = 1) -> None:
        self.kind, self.tok, self.prec = kind, tok, prec
        self.scale = scale  # the constant of a juxtaposed factor (kind "scale")
        self.args = 0  # operands read so far by a min or max call (kind "call")


class _Token:
    __slots__ = ("end", "kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int, end: int) -> None:
        self.kind, self.text, self.pos, self.end = kind, text, pos, end


def _decimal(digits: str) -> int:
    """The value of ASCII decimal ``digits``, in chunks that no int-str limit refuses."""
    value = 0
    for i in range(0, len(digits), _CHUNK):
        chunk = digits[i : i + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def _tokenize(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos] in _SPACE:
            pos += 1
        if pos >= n:
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            raise IndexingMapError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup
        if kind == "int":
            if _BASE_PREFIX.match(text, pos):
                raise IndexingMapError(
                    f"{text[pos : pos + 2]!r} at offset {pos}: integers are decimal "
                    "(no hexadecimal, octal or binary prefix)"
                )
            if m.end() - pos > _MAX_DIGITS:
                raise IndexingMapError(
                    f"an integer of {m.end() - pos} digits at offset {pos} (at most {_MAX_DIGITS})"
                )
        out.append(_Token(kind, m.group(kind), pos, m.end()))
        pos = m.end()
    out.append(_Token("end", "", n, n))
    return out


def _shown(text: str) -> str:
    """``text`` quoted for an error message, shortened when long (a huge integer)."""
    return repr(text) if len(text) <= 40 else repr(text[:20]) + f"... ({len(text)} characters)"


class _Parser:
    def __init__(self, text: str, bounds: dict[str, tuple[int, int]] | None) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.bounds = bounds  # None while reading the domain: names are collected
        self.depth = 0  # openers and prefixes pending in the expression being read

    # ------------------------------------------------------------------ tokens
    @property
    def tok(self) -> _Token:
        return self.toks[self.i]

    def error(self, what: str, tok: _Token | None = None) -> IndexingMapError:
        t = tok or self.tok
        found = _shown(t.text) if t.kind != "end" else "the end of the text"
        return IndexingMapError(f"{what} at offset {t.pos}, found {found}")

    def accept(self, text: str) -> bool:
        if self.tok.text == text and self.tok.kind in ("sym", "arrow", "name"):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise self.error(f"expected {text!r}")

    def integer(self) -> int:
        neg = self.accept("-")
        if self.tok.kind != "int":
            raise self.error("expected an integer")
        v = _decimal(self.tok.text)  # a leading 0 is not octal
        self.i += 1
        return -v if neg else v

    # ------------------------------------------------------------------ expressions
    # Operator precedence with explicit stacks, not recursive descent: a deeply nested
    # expression (the printer brackets every ``(x / 2) * 3`` of a long chain) must not
    # reach Python's recursion limit. Stack entries are _Pending.

    def expr(self) -> Term:
        """An expression: ends before the first token that cannot continue it."""
        operands: list[Term] = []
        pending: list[_Pending] = []
        while True:
            self.operand(operands, pending)
            while True:  # after an operand: an operator, a closer, or the end
                tok = self.tok
                prec = _binary_precedence(tok)
                if prec:
                    # + and - stay pending until the sum ends (see reduce), so that a
                    # long sum is built once, not once per addend.
                    self.reduce(operands, pending, 2)
                    pending.append(_Pending("binary", tok, prec))
                    self.i += 1
                    break
                opener = self.reduce(operands, pending, 1)
                if opener is None:
                    return operands.pop()
                if tok.kind == "sym" and tok.text == ")" and opener.kind == "(":
                    self.pop(pending)
                    self.i += 1
                elif opener.kind == "call" and opener.args == 0:
                    self.expect(",")
                    opener.args = 1
                    break
                elif opener.kind == "call":
                    self.expect(")")
                    self.pop(pending)
                    b, a = operands.pop(), operands.pop()
                    operands.append(minimum(a, b) if opener.tok.text == "min" else maximum(a, b))
                else:
                    raise self.error("expected ')'")
                self.prefixes(operands, pending)  # the bracket or call was a factor

    def operand(self, operands: list[Term], pending: list[_Pending]) -> None:
        """Read prefixes and openers up to an operand; apply the prefixes it completes."""
        while True:
            tok = self.tok
            if self.depth >= _MAX_DEPTH:
                raise self.error(f"expression nested deeper than {_MAX_DEPTH}")
            if tok.kind == "sym" and tok.text in ("-", "("):
                self.push(pending, _Pending("neg" if tok.text == "-" else "(", tok))
                self.i += 1
                continue
            if tok.kind == "name" and tok.text in ("min", "max"):
                self.i += 1
                self.expect("(")
                self.push(pending, _Pending("call", tok))
                continue
            if tok.kind == "int":
                self.i += 1
                value = _decimal(tok.text)
                nxt = self.tok
                if nxt.pos == tok.end and (nxt.kind == "name" or nxt.text == "("):
                    self.push(pending, _Pending("scale", tok, scale=value))  # 16d0
                    continue
                operands.append(const(value))
            elif tok.kind == "name" and tok.text not in _RESERVED:
                self.i += 1
                if self.bounds is None:
                    operands.append(var(tok.text))
                elif tok.text not in self.bounds:
                    raise self.error(f"undeclared variable {tok.text!r}", tok)
                else:
                    operands.append(var(tok.text, *self.bounds[tok.text]))
            else:
                raise self.error("expected an expression")
            self.prefixes(operands, pending)
            return

    def push(self, pending: list[_Pending], p: _Pending) -> None:
        """Open a level of nesting (an opener or a prefix); ``pop`` closes it."""
        pending.append(p)
        self.depth += 1

    def pop(self, pending: list[_Pending]) -> _Pending:
        self.depth -= 1
        return pending.pop()

    def prefixes(self, operands: list[Term], pending: list[_Pending]) -> None:
        """Apply the unary minus and juxtaposed factors that end at the operand just read."""
        while pending and pending[-1].kind in ("neg", "scale"):
            p = self.pop(pending)
            t = operands.pop()
            operands.append(-t if p.kind == "neg" else const(p.scale) * t)

    def reduce(self, operands: list[Term], pending: list[_Pending], prec: int) -> _Pending | None:
        """Apply pending binary operators binding at least ``prec``; the opener under them."""
        while pending and pending[-1].kind == "binary" and pending[-1].prec >= prec:
            if pending[-1].prec == 1:
                # A run of + and -: one canonical sum of all its addends (the same term
                # as adding them left to right, without rebuilding it at each one).
                signs = []
                while pending and pending[-1].kind == "binary" and pending[-1].prec == 1:
                    signs.append(1 if pending.pop().tok.text == "+" else -1)
                addends = operands[-len(signs) - 1 :]
                del operands[-len(signs) - 1 :]
                pairs = zip(addends, [1, *reversed(signs)], strict=True)
                operands.append(linear(pairs))
                continue
            p = pending.pop()
            b, a = operands.pop(), operands.pop()
            operands.append(self.apply(p.tok, a, b))
        if not pending:
            return None
        if pending[-1].kind == "binary":
            return None  # unreachable: prec 1 reduces every binary operator
        return pending[-1]

    def apply(self, tok: _Token, a: Term, b: Term) -> Term:
        op = _MUL_WORDS.get(tok.text, tok.text)
        if op == "*":
            if not (a.is_const or b.is_const):
                raise self.error("a product needs a constant factor (maps are quasi-affine)", tok)
            return a * b
        if not b.is_const:
            raise self.error("the divisor must be a constant", tok)
        if b.value == 0:
            raise self.error("division by zero", tok)
        if op == "/":
            return div(a, b, Semantics.FLOOR)
        if op == "mod":
            return mod(a, b, Semantics.FLOOR)
        if b.value > 0:  # ceildiv(a, b) = floor((a + b - 1) / b), as XLA canonicalizes it
            return div(a + (b.value - 1), b, Semantics.FLOOR)
        return -div(-a, b, Semantics.FLOOR)  # = ceil(a / b) for any non-zero b

    # ------------------------------------------------------------------ maps
    def skip_group(self) -> None:
        """Skip a parenthesized list, checking only that it is balanced."""
        self.expect("(")
        level = 1
        while level:
            if self.tok.kind == "end":
                raise self.error("unbalanced parentheses in the results")
            if self.tok.kind == "sym":
                level += {"(": 1, ")": -1}.get(self.tok.text, 0)
            self.i += 1

    def result_list(self) -> list[Term]:
        """``(e1, e2, ...)``, possibly empty."""
        self.expect("(")
        results: list[Term] = []
        if self.accept(")"):
            return results
        while True:
            results.append(self.expr())
            if self.accept(")"):
                return results
            self.expect(",")

    def known_empty_domain(self) -> bool:
        """Whether the rest is ``domain: KNOWN EMPTY`` (consumed if so)."""
        toks = self.toks[self.i : self.i + 5]
        if [t.text for t in toks] != ["domain", ":", "KNOWN", "EMPTY", ""]:
            return False
        self.i += 4
        return True

    def domain_entries(self) -> list[tuple[Term, int, int, int]]:
        """``domain: e in [lo, hi], ...`` (commas optional): (e, lo, hi, token index of e)."""
        entries: list[tuple[Term, int, int, int]] = []
        if not self.accept("domain"):
            if self.tok.kind != "end":
                raise self.error("expected ', domain:'")
            return entries
        self.expect(":")
        while self.tok.kind != "end":
            at = self.i
            e = self.expr()
            self.expect("in")
            self.expect("[")
            lo = self.integer()
            self.expect(",")
            hi = self.integer()
            self.expect("]")
            entries.append((e, lo, hi, at))
            self.accept(",")
        return entries

    def names(self, open_: str, close: str, at: dict[str, int]) -> list[str]:
        """``(a, b)``: the names, each one's offset recorded in ``at`` (the first's, if twice)."""
        out: list[str] = []
        if not self.accept(open_):
            return out
        if self.accept(close):
            return out
        while True:
            if self.tok.kind != "name":
                raise self.error("expected a variable name")
            if self.tok.text in _RESERVED:
                raise self.error("a reserved word cannot name a variable")
            if self.tok.text in at:
                raise self.error(f"variable declared twice (first at offset {at[self.tok.text]})")
            at[self.tok.text] = self.tok.pos
            out.append(self.tok.text)
            self.i += 1
            if self.accept(close):
                return out
            self.expect(",")


def parse_expr(text: str, bounds: dict[str, tuple[int, int]]) -> Term:
    """Parse one XLA affine expression over variables with the given inclusive bounds."""
    p = _Parser(text, bounds)
    t = p.expr()
    if p.tok.kind != "end":
        raise p.error("unexpected text after the expression")
    return t


def parse_map(text: str) -> IndexingMap:
    """Parse XLA's textual form of an indexing map (see the module docstring).

    Raises :class:`IndexingMapError` naming the offset and the reason on malformed
    text, an undeclared or unbounded variable, a non-constant divisor or product, or
    division by zero. The result is normalized (constraints merged, sorted).
    """
    if text.strip(" \t\n\r\f\v") == "KNOWN EMPTY":
        return IndexingMap.empty(0, 0)
    p = _Parser(text, None)
    if p.tok.text != "(":
        raise p.error("a map starts with '(' and its dimension names")
    seen: dict[str, int] = {}  # each declared name's offset
    dims = p.names("(", ")", seen)
    ranges = p.names("[", "]", seen)
    rts = p.names("{", "}", seen)
    declared = dims + ranges + rts
    p.expect("->")
    results_at = p.i
    p.skip_group()  # the results: their variables' bounds come from the domain
    p.accept(",")
    if p.known_empty_domain():
        # Nothing is bounded: the results are read over unbounded variables, only to
        # check them and count them.
        p.i = results_at
        n_results = len(p.result_list())
        if ranges or rts:
            raise p.error("a known-empty map has no range or runtime variables")
        return IndexingMap.empty(len(dims), n_results)
    entries = p.domain_entries()
    if not entries and declared:
        raise p.error("expected ', domain:' with the bounds of every variable")
    bounds: dict[str, tuple[int, int]] = {}
    constraint_at: list[tuple[int, int, int]] = []
    for e, lo, hi, at in entries:
        if e.op is Op.VAR and e.arg[0] in seen:
            name = e.arg[0]
            plo, phi = bounds.get(name, (lo, hi))
            bounds[name] = (max(lo, plo), min(hi, phi))
        else:
            constraint_at.append((at, lo, hi))
    missing = [n for n in declared if n not in bounds]
    if missing:
        raise IndexingMapError(
            f"no interval given in the domain for {missing[0]!r} declared at offset "
            f"{seen[missing[0]]}" + (f" (nor for {', '.join(missing[1:])})" if missing[1:] else "")
        )
    # Read the results and constraints again, now with every variable bounded.
    # An empty interval makes the map known empty (normalized() below); its variable
    # still needs a valid term to read the results with.
    q = _Parser(text, {n: (lo, max(lo, hi)) for n, (lo, hi) in bounds.items()})
    q.i = results_at
    results = q.result_list()
    constraints: list[tuple[Term, int, int]] = []
    for at, lo, hi in constraint_at:
        q.i = at
        constraints.append((q.expr(), lo, hi))

    def variables(names: list[str]) -> tuple[Variable, ...]:
        return tuple(Variable(n, *bounds[n]) for n in names)

    m = IndexingMap(
        variables(dims), variables(ranges), variables(rts), tuple(results), tuple(constraints)
    )
    return m.normalized()
