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

from quorem.indexing.map import IndexingMap, IndexingMapError, Variable
from quorem.ops import Op, Semantics
from quorem.term import Term, const, div, linear, maximum, minimum, mod, var
from quorem.walk import postorder, tree_size

__all__ = ["parse_expr", "parse_map", "print_expr", "print_map"]

# ASCII only: \d and \s would take other scripts' digits and spaces, which XLA never writes.
_TOKEN: Final = re.compile(
    r"(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<arrow>->)|(?P<sym>[-+*/()\[\]{},:])"
)
_SPACE: Final = frozenset(" \t\n\r\f\v")
_MAX_DIGITS: Final = 4300  # Python's default int-from-text limit; see _decimal
_CHUNK: Final = 500  # digits per int() call: below the lowest limit Python allows (640)
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


# ------------------------------------------------------------------ printing
_ATOM, _PRODUCT, _SUM = 0, 1, 2  # precedence levels of printed expressions
_OPS: Final[dict[Op, str]] = {Op.FLOORDIV: "/", Op.FLOORMOD: "mod", Op.MUL: "*"}
_MAX_PRINTED_NODES: Final = 2**21  # a shared subterm is printed at each use: text can explode
_Piece = str | Term  # text, or an operand whose text goes in its place
_POWERS: dict[int, int] = {}


def _digits(n: int, width: int = 0) -> str:
    """Non-negative ``n`` in decimal, zero-padded to ``width``, for any size.

    Split in halves rather than by ``str``: Python refuses ``str`` of an int of more
    than 4300 digits, and converting chunk by chunk from one end would be quadratic.
    """
    if n < 10**_CHUNK:
        return str(n).zfill(width)
    half = max(_CHUNK, int(n.bit_length() * 0.30103) // 2)
    power = _POWERS.get(half)
    if power is None:
        power = _POWERS[half] = 10**half
    high, low = divmod(n, power)
    return _digits(high, max(0, width - half)) + _digits(low, half)


def _int_text(n: int) -> str:
    """``n`` in decimal, however many digits it has."""
    return "-" + _digits(-n) if n < 0 else _digits(n)


def _scaled(t: Term, c: int, levels: dict[Term, int]) -> tuple[list[_Piece], int]:
    """``t * c`` (constants on the right of ``*``) as pieces, and its level."""
    level = levels[t]
    if c == 1:
        return [t], level
    inner: list[_Piece] = [t]
    if level == _SUM or (level == _PRODUCT and t.op is not Op.MUL):
        inner = ["(", t, ")"]
    if c == -1:
        return ["-", *inner], _PRODUCT
    return [*inner, f" * {_int_text(c)}"], _PRODUCT


def _layout(t: Term, levels: dict[Term, int]) -> tuple[list[_Piece], int]:
    """How ``t`` prints, its operands' texts left as terms, and its precedence level."""
    op = t.op
    if op is Op.CONST:
        return [_int_text(t.value)], (_ATOM if t.value >= 0 else _PRODUCT)
    if op is Op.VAR:
        return [t.arg[0]], _ATOM
    if op is Op.ADD:
        coefs, k = t.arg
        if len(coefs) == 1 and not k:
            return _scaled(t.args[0], coefs[0], levels)
        pieces: list[_Piece] = []
        for a, c in zip(t.args, coefs, strict=True):
            if pieces and c < 0:
                pieces += [" - ", *_scaled(a, -c, levels)[0]]
            else:
                pieces += [" + "] if pieces else []
                pieces += _scaled(a, c, levels)[0]
        if k:
            pieces.append(f" + {_int_text(k)}" if k > 0 else f" - {_int_text(-k)}")
        return pieces, _SUM
    if op in (Op.MAX, Op.MIN):
        left, right = t.args
        return [f"{'max' if op is Op.MAX else 'min'}(", left, ", ", right, ")"], _ATOM
    if op in _OPS:
        pieces = []
        for i, a in enumerate(t.args):
            if i:
                pieces.append(f" {_OPS[op]} ")
            level = levels[a]
            # XLA's parentheses: a chain of one operator reads left to right (and a
            # product in any order); any other operator of the same level is bracketed.
            chained = (i == 0 and a.op is op) or (op is Op.MUL and a.op is Op.MUL)
            if level == _SUM or (level == _PRODUCT and not chained):
                pieces += ["(", a, ")"]
            else:
                pieces.append(a)
        return pieces, _PRODUCT
    raise IndexingMapError(f"{op.name.lower()} has no XLA form (indexing maps use floor division)")


def print_expr(term: Term) -> str:
    """``term`` in XLA's syntax (floor semantics; raises on truncating division).

    Any depth and any size of integer prints. Raises :class:`IndexingMapError` when
    the text would have more than 2**21 operators and operands, which a term sharing
    its subterms can reach with few distinct nodes.
    """
    if tree_size(term) > _MAX_PRINTED_NODES:
        raise IndexingMapError(
            f"the expression is too large to print (over {_MAX_PRINTED_NODES} nodes as text)"
        )
    # Operands before the terms that use them, and the text written from an explicit
    # stack: a deep term (a long chain of mod) must not hit Python's recursion limit.
    levels: dict[Term, int] = {}
    layouts: dict[Term, list[_Piece]] = {}
    for t in postorder(term):
        layouts[t], levels[t] = _layout(t, levels)
    out: list[str] = []
    stack: list[_Piece] = [term]
    while stack:
        piece = stack.pop()
        if isinstance(piece, str):
            out.append(piece)
        else:
            stack.extend(reversed(layouts[piece]))
    return "".join(out)


def print_map(m: IndexingMap) -> str:
    """``m`` in XLA's textual form, canonically: equal maps print equal.

    A known-empty map prints as ``(d0, ...) -> (0, ...), domain: KNOWN EMPTY``, keeping
    how many dimensions and results it has, so that ``parse_map`` gives it back.
    """
    if m.known_empty:
        dims = ", ".join(f"d{i}" for i in range(m.n_dims))
        return f"({dims}) -> ({', '.join('0' for _ in m.results)}), domain: KNOWN EMPTY"
    head = f"({', '.join(v.name for v in m.dims)})"
    if m.range_vars:
        head += f"[{', '.join(v.name for v in m.range_vars)}]"
    if m.rt_vars:
        head += "{" + ", ".join(v.name for v in m.rt_vars) + "}"
    body = f"{head} -> ({', '.join(print_expr(t) for t in m.results)})"
    entries = [f"{v.name} in [{_int_text(v.lo)}, {_int_text(v.hi)}]" for v in m.variables()]
    entries += [
        f"{print_expr(e)} in [{_int_text(lo)}, {_int_text(hi)}]" for e, lo, hi in m.constraints
    ]
    if not entries:
        return body
    return body + ", domain: " + ", ".join(entries)
