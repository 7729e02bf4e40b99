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
``KNOWN EMPTY`` is the empty map.

The printer writes ``/`` for floor division, constants to the right of ``*``, a sum's
addends in quorem's canonical order and constraints sorted by their text, so equal
maps print equal and ``parse_map(print_map(m)) == m``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from quorem.engine.indexing.map import IndexingMap, IndexingMapError, Variable
from quorem.engine.ops import Op, Semantics
from quorem.engine.term import Term, const, div, maximum, minimum, mod, var

__all__ = ["parse_expr", "parse_map", "print_expr", "print_map"]

_TOKEN: Final = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<arrow>->)|(?P<sym>[-+*/()\[\]{},:]))"
)
_MUL_WORDS: Final = {
    "floordiv": "/",
    "floorDiv": "/",
    "ceildiv": "ceildiv",
    "ceilDiv": "ceildiv",
    "mod": "mod",
}
_MAX_DEPTH: Final = 200  # nesting of parentheses and unary minus (recursive descent)


class _Token:
    __slots__ = ("end", "kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int, end: int) -> None:
        self.kind, self.text, self.pos, self.end = kind, text, pos, end


def _tokenize(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            raise IndexingMapError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup
        out.append(_Token(kind, m.group(kind), m.start(kind), m.end()))
        pos = m.end()
    out.append(_Token("end", "", n, n))
    return out


class _Parser:
    def __init__(self, text: str, bounds: dict[str, tuple[int, int]] | None) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.bounds = bounds  # None while reading the domain: names are collected
        self.depth = 0

    # ------------------------------------------------------------------ tokens
    @property
    def tok(self) -> _Token:
        return self.toks[self.i]

    def error(self, what: str, tok: _Token | None = None) -> IndexingMapError:
        t = tok or self.tok
        found = repr(t.text) if t.kind != "end" else "the end of the text"
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
        v = int(self.tok.text)  # decimal only: a leading 0 is not octal
        self.i += 1
        return -v if neg else v

    # ------------------------------------------------------------------ expressions
    def expr(self) -> Term:
        t = self.term()
        while self.tok.text in ("+", "-") and self.tok.kind == "sym":
            op = self.tok.text
            self.i += 1
            u = self.term()
            t = t + u if op == "+" else t - u
        return t

    def term(self) -> Term:
        t = self.factor()
        while True:
            tok = self.tok
            if tok.kind == "sym" and tok.text in ("*", "/"):
                op = tok.text
            elif tok.kind == "name" and tok.text in _MUL_WORDS:
                op = _MUL_WORDS[tok.text]
            else:
                return t
            self.i += 1
            u = self.factor()
            t = self.apply(op, t, u, tok)

    def apply(self, op: str, a: Term, b: Term, tok: _Token) -> Term:
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

    def factor(self) -> Term:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error(f"expression nested deeper than {_MAX_DEPTH}")
        try:
            return self._factor()
        finally:
            self.depth -= 1

    def _factor(self) -> Term:
        tok = self.tok
        if tok.kind == "sym" and tok.text == "-":
            self.i += 1
            return -self.factor()
        if tok.kind == "sym" and tok.text == "(":
            self.i += 1
            t = self.expr()
            self.expect(")")
            return t
        if tok.kind == "int":
            self.i += 1
            value = const(int(tok.text))
            nxt = self.tok
            if nxt.pos == tok.end and (nxt.kind == "name" or nxt.text == "("):
                return value * self.factor()  # juxtaposition: 16d0
            return value
        if tok.kind == "name" and tok.text in ("min", "max"):
            self.i += 1
            self.expect("(")
            a = self.expr()
            self.expect(",")
            b = self.expr()
            self.expect(")")
            return minimum(a, b) if tok.text == "min" else maximum(a, b)
        if tok.kind == "name" and tok.text not in _MUL_WORDS and tok.text not in ("in", "domain"):
            self.i += 1
            if self.bounds is None:
                return var(tok.text)
            if tok.text not in self.bounds:
                raise self.error(f"undeclared variable {tok.text!r}", tok)
            return var(tok.text, *self.bounds[tok.text])
        raise self.error("expected an expression")

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

    def domain_entries(self) -> list[tuple[Term, int, int, int]]:
        """``domain: e in [lo, hi], ...`` (commas optional): (e, lo, hi, offset of e)."""
        entries: list[tuple[Term, int, int, int]] = []
        if not self.accept("domain"):
            if self.tok.kind != "end":
                raise self.error("expected ', domain:'")
            return entries
        self.expect(":")
        while self.tok.kind != "end":
            at = self.tok.pos
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

    def names(self, open_: str, close: str) -> list[str]:
        out: list[str] = []
        if not self.accept(open_):
            return out
        if self.accept(close):
            return out
        while True:
            if self.tok.kind != "name":
                raise self.error("expected a variable name")
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
    if text.strip() == "KNOWN EMPTY":
        return IndexingMap.empty(0, 0)
    p = _Parser(text, None)
    if p.tok.text != "(":
        raise p.error("a map starts with '(' and its dimension names")
    dims = p.names("(", ")")
    ranges = p.names("[", "]")
    rts = p.names("{", "}")
    declared = dims + ranges + rts
    dup = {n for n in declared if declared.count(n) > 1}
    if dup:
        raise IndexingMapError(f"variable declared twice: {', '.join(sorted(dup))}")
    p.expect("->")
    results_at = p.i
    p.skip_group()  # the results: their variables' bounds come from the domain
    p.accept(",")
    entries = p.domain_entries()
    if not entries and declared:
        raise p.error("expected ', domain:' with the bounds of every variable")
    bounds: dict[str, tuple[int, int]] = {}
    constraint_texts: list[tuple[int, int, int]] = []
    for e, lo, hi, at in entries:
        if e.op is Op.VAR and e.arg[0] in declared:
            name = e.arg[0]
            plo, phi = bounds.get(name, (lo, hi))
            bounds[name] = (max(lo, plo), min(hi, phi))
        else:
            constraint_texts.append((at, lo, hi))
    missing = [n for n in declared if n not in bounds]
    if missing:
        raise IndexingMapError(f"no interval given for {', '.join(missing)} in the domain")
    # Read the results and constraints again, now with every variable bounded.
    # An empty interval makes the map known empty (normalized() below); its variable
    # still needs a valid term to read the results with.
    q = _Parser(text, {n: (lo, max(lo, hi)) for n, (lo, hi) in bounds.items()})
    q.i = results_at
    results = q.result_list()
    constraints: list[tuple[Term, int, int]] = []
    for at, lo, hi in constraint_texts:
        q.i = next(k for k, t in enumerate(q.toks) if t.pos == at)
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


def _scaled(t: Term, c: int, show: Callable[[Term], tuple[str, int]]) -> tuple[str, int]:
    """``t * c`` as text (constants on the right of ``*``)."""
    text, level = show(t)
    if c == 1:
        return text, level
    if level == _SUM or (level == _PRODUCT and t.op is not Op.MUL):
        text = f"({text})"
    if c == -1:
        return "-" + text, _PRODUCT
    return f"{text} * {c}", _PRODUCT


def print_expr(term: Term) -> str:
    """``term`` in XLA's syntax (floor semantics; raises on truncating division)."""
    memo: dict[Term, tuple[str, int]] = {}

    def show(t: Term) -> tuple[str, int]:
        got = memo.get(t)
        if got is None:
            got = memo[t] = _show(t, show)
        return got

    return show(term)[0]


def _show(t: Term, show: Callable[[Term], tuple[str, int]]) -> tuple[str, int]:
    op = t.op
    if op is Op.CONST:
        return str(t.value), (_ATOM if t.value >= 0 else _PRODUCT)
    if op is Op.VAR:
        return t.arg[0], _ATOM
    if op is Op.ADD:
        coefs, k = t.arg
        parts: list[str] = []
        for a, c in zip(t.args, coefs, strict=True):
            if parts and c < 0:
                text, _ = _scaled(a, -c, show)
                parts.append(f"- {text}")
            else:
                text, _ = _scaled(a, c, show)
                parts.append(f"+ {text}" if parts else text)
        if k:
            parts.append(f"+ {k}" if k > 0 else f"- {-k}")
        if len(parts) == 1:
            return _scaled(t.args[0], coefs[0], show)
        return " ".join(parts), _SUM
    if op in (Op.MAX, Op.MIN):
        left, right = (show(x)[0] for x in t.args)
        return f"{'max' if op is Op.MAX else 'min'}({left}, {right})", _ATOM
    if op in _OPS:
        texts: list[str] = []
        for i, a in enumerate(t.args):
            text, level = show(a)
            # XLA's parentheses: a chain of one operator reads left to right (and a
            # product in any order); any other operator of the same level is bracketed.
            chained = (i == 0 and a.op is op) or (op is Op.MUL and a.op is Op.MUL)
            if level == _SUM or (level == _PRODUCT and not chained):
                text = f"({text})"
            texts.append(text)
        return f" {_OPS[op]} ".join(texts), _PRODUCT
    raise IndexingMapError(f"{op.name.lower()} has no XLA form (indexing maps use floor division)")


def print_map(m: IndexingMap) -> str:
    """``m`` in XLA's textual form, canonically: equal maps print equal."""
    if m.known_empty:
        return "KNOWN EMPTY"
    head = f"({', '.join(v.name for v in m.dims)})"
    if m.range_vars:
        head += f"[{', '.join(v.name for v in m.range_vars)}]"
    if m.rt_vars:
        head += "{" + ", ".join(v.name for v in m.rt_vars) + "}"
    body = f"{head} -> ({', '.join(print_expr(t) for t in m.results)})"
    entries = [f"{v.name} in [{v.lo}, {v.hi}]" for v in m.variables()]
    entries += [f"{print_expr(e)} in [{lo}, {hi}]" for e, lo, hi in m.constraints]
    if not entries:
        return body
    return body + ", domain: " + ", ".join(entries)
