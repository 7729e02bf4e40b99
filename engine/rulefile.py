"""Read ``.rules`` files into :class:`~quorem.rule.Rule` objects, checking them.

A rules file is a sequence of blocks::

    # Comments start with '#'.
    rule mod-of-small-range
      doc:       x % n is x itself when x already lies in [0, n)
      semantics: floor, trunc
      pattern:   x % N
      guard:     vmin(x) >= 0 and vmax(x) < N
      rewrite:   x

A field's value may continue on following lines indented deeper than its key. Every
problem is reported as ``file:line:col: what is wrong``; nothing is evaluated as Python.

A rules file is UTF-8 text (a leading byte-order mark is ignored) whose lines end in a
line feed, optionally after a carriage return. Control characters other than tab, and the
invisible characters that reorder or separate text (bidirectional controls, U+2028 and
U+2029, a byte-order mark elsewhere), are refused where they stand: what a reader sees
is what is checked.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from . import syntax as sx
from .compiler.cache import load_parsed, shipped, store_parsed
from .errors import ParseError, RuleError, RuleErrors
from .ops import Semantics
from .printer import int_text
from .proofrecord import attach_proofs
from .rule import (
    AGGREGATES,
    CONST_FUNCS,
    TERM_FUNCS,
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    PAddend,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Rule,
    Seq,
    Unary,
    expr_names,
)

__all__ = [
    "check_unique_names",
    "load_rule_files",
    "parse_rules",
    "raise_all",
    "unique_name_errors",
]

_NAME_RE: Final = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_FIELD_RE: Final = re.compile(r"^(?P<indent>[ \t]+)(?P<key>[a-z]+):(?P<sep>[ \t]*)(?P<value>.*)$")
_PHASES: Final = ("main", "early", "constraint", "lowering")
_FIELDS: Final = ("doc", "semantics", "phase", "pattern", "let", "guard", "rewrite")
_LET_RE: Final = re.compile(r"^(?P<lead>\s*)(?P<name>[A-Za-z_][A-Za-z_0-9]*)\s*=(?!=)(?P<expr>.*)$")
_REQUIRED: Final = ("doc", "semantics", "pattern", "rewrite")
# Canonical terms keep a product flat (one MUL node of all its factors, see
# quorem.term), and a product pattern matches a product of exactly two factors:
# a factor that is itself a product can never be matched.
_NESTED_PRODUCT: Final = (
    "this pattern never matches: a factor of a product cannot be a product, since terms "
    "keep products flat (x*x*x is one product of three factors) and a product pattern "
    "matches two factors"
)
_PATTERN_CALLS: Final = {
    "max": "max",
    "min": "min",
    "floordiv": "floordiv",
    "floormod": "floormod",
    "truncdiv": "truncdiv",
    "truncmod": "truncmod",
    "eucliddiv": "eucliddiv",
    "euclidmod": "euclidmod",
    "ceildiv": "ceildiv",
}
_CMP_OPS: Final = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne"}
_ARITH: Final = frozenset({"+", "-", "*", "//", "%"})
_COMPARE: Final = frozenset({"<", "<=", ">", ">=", "==", "!="})
# The explicit division functions: each names its semantics, so a rule using only these
# (and no // or %) means one thing whatever it is instantiated for, and may say 'any'.
_DIVISION_FUNCS: Final = frozenset(
    {"floordiv", "floormod", "truncdiv", "truncmod", "eucliddiv", "euclidmod"}
)
# Characters a rules file may not contain (see the module docstring): C0 controls but tab
# and newline, a carriage return not ending a line, DEL, C1 controls, and the invisible
# format characters (zero-width, bidirectional, separators) that change how the text
# around them is displayed.
_HIDDEN_RE: Final = re.compile(
    r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
    r"\u2060-\u2064\u2066-\u2069\ufeff]|\r(?!\n)"
)
MAX_LITERAL_BITS: Final = 256
"""Rules-file integers are below ``2**256`` in magnitude (compiled code and the prover
spell constants out in decimal, and no rule needs more)."""
_NOT_NAMES: Final = sx.RESERVED | {"and", "or", "not"}


@dataclasses.dataclass
class _Field:
    value: str
    line: int
    col: int


@dataclasses.dataclass
class _Block:
    name: str
    line: int
    col: int
    fields: dict[str, _Field] = dataclasses.field(default_factory=dict)
    text_lines: list[str] = dataclasses.field(default_factory=list)


_BLANKS: Final = " \t"


def _check_characters(text: str, file: str) -> None:
    """Raise RuleError at the first character a rules file may not contain."""
    bad = _HIDDEN_RE.search(text)
    if bad is None:
        return
    at = bad.start()
    line = text.count("\n", 0, at) + 1
    col = at - text.rfind("\n", 0, at)
    ch = text[at]
    raise RuleError(f"character U+{ord(ch):04X} is not allowed in a rules file", line, col, file)


def _split_blocks(  # noqa: PLR0915  (one pass over the lines)
    text: str, file: str, errors: list[RuleError]
) -> list[_Block]:
    """The rule blocks of ``text``; each malformed line is added to ``errors``.

    A bad header skips its whole block (up to the next unindented line); a bad field
    line drops that block: later blocks are still read, so one run reports every
    problem of the file.
    """
    blocks: list[_Block] = []
    current: _Block | None = None
    skipping = False  # inside a block whose header was bad
    last_field: tuple[_Field, int] | None = None  # field and its key's indentation

    def fail(reason: str, lineno: int, col: int) -> None:
        nonlocal current, skipping
        errors.append(RuleError(reason, lineno, col, file))
        if current is not None and blocks and blocks[-1] is current:
            blocks.pop()  # a block with a malformed line is not built
        current, skipping = None, True  # the rest of the block is not read

    for lineno, line in enumerate(text.split("\n"), start=1):
        # Only \n ends a line (str.splitlines would also split at \x0c, \x1c, \x85...,
        # and line numbers would disagree with editors and the expression parser).
        raw = line.removesuffix("\r")
        stripped = raw.strip(_BLANKS)
        if not stripped or stripped.startswith("#"):
            continue
        if raw[0] not in _BLANKS:
            current, skipping, last_field = None, True, None
            words = stripped.split()
            if words[0] != "rule":
                fail(f"expected 'rule NAME', found {words[0]!r}", lineno, 1)
                continue
            if len(words) != 2:
                fail("a rule header is 'rule NAME'", lineno, 1)
                continue
            name = words[1]
            if not _NAME_RE.fullmatch(name):
                col = raw.index(name) + 1
                fail(f"rule name {name!r} is not kebab-case (like mod-of-small-range)", lineno, col)
                continue
            current = _Block(name, lineno, raw.index(name) + 1, text_lines=[raw])
            blocks.append(current)
            skipping = False
            continue
        if current is None:
            if not skipping:
                fail("indented line outside a rule", lineno, 1)
                skipping = True
            continue
        current.text_lines.append(raw)
        m = _FIELD_RE.match(raw)
        if m and m.group("key") in _FIELDS:
            key = m.group("key")
            if key in current.fields:
                col = len(m.group("indent")) + 1
                fail(f"field {key!r} given twice", lineno, col)
                continue
            col = m.start("value") + 1
            fld = _Field(m.group("value"), lineno, col)
            current.fields[key] = fld
            last_field = (fld, len(m.group("indent")))
            continue
        indent = len(raw) - len(raw.lstrip(_BLANKS))
        if last_field is not None and indent > last_field[1] and not m:
            last_field[0].value += "\n" + raw
            continue
        if m:
            known = ", ".join(_FIELDS)
            fail(f"unknown field {m.group('key')!r} (fields: {known})", lineno, indent + 1)
            continue
        fail("expected 'field: value'", lineno, indent + 1)
    return blocks


class _Checker:
    """Turns one rule's syntax trees into pattern and expression data, checking them."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.names: dict[str, NameKind] = {}
        self.term_lets: set[str] = set()
        # Per-addend lets (``R = K % D`` over ``sum(K*t)``) are inlined where they are
        # used, so every backend sees plain sequence expressions.
        self.seq_lets: dict[str, Expr] = {}
        self.uses_division = False
        # Conditions of sum(K*t, cond) patterns, checked once the whole pattern is bound.
        self.seq_filters: list[tuple[Seq, sx.Node]] = []

    def error(self, reason: str, node: sx.Node) -> RuleError:
        return RuleError(reason, node.line, node.col, self.file)

    def bind(self, name: str, kind: NameKind, node: sx.Node) -> None:
        known = self.names.get(name)
        if known is not None and known is not kind:
            raise self.error(f"{name!r} is used as a {kind.value} and as a {known.value}", node)
        self.names[name] = kind

    # ------------------------------------------------------------------ patterns
    def pattern(self, node: sx.Node) -> Pattern:
        if isinstance(node, sx.Num):
            return PLit(node.value)
        if isinstance(node, sx.Name):
            if node.id[0].isupper():
                self.bind(node.id, NameKind.CONST, node)
                return PConst(node.id)
            self.bind(node.id, NameKind.TERM, node)
            return PTerm(node.id)
        if (isinstance(node, sx.Unary) and node.op in ("-", "+")) or (
            isinstance(node, sx.Binary) and node.op in ("+", "-", "*")
        ):
            return self.sum_pattern(node)
        if isinstance(node, sx.Binary):
            if node.op in ("//", "%"):
                self.uses_division = True
                kids = (self.pattern(node.left), self.pattern(node.right))
                return POp("div" if node.op == "//" else "mod", kids)
            if node.op in _CMP_OPS:
                return POp(_CMP_OPS[node.op], (self.pattern(node.left), self.pattern(node.right)))
            if node.op in ("and", "or"):
                return POp(node.op, (self.pattern(node.left), self.pattern(node.right)))
            if node.op in (">", ">="):
                op = "lt" if node.op == ">" else "le"
                return POp(op, (self.pattern(node.right), self.pattern(node.left)))
            raise self.error(f"{node.op!r} is not allowed in a pattern", node)
        if isinstance(node, sx.Call):
            if node.func == "sum":
                raise self.error("sum(...) must be an addend of a sum pattern", node)
            if node.func not in _PATTERN_CALLS:
                known = ", ".join(_PATTERN_CALLS)
                reason = f"{node.func}() cannot appear in a pattern (allowed: {known})"
                raise self.error(reason, node)
            if len(node.args) != 2:
                raise self.error(f"{node.func}() takes exactly 2 arguments in a pattern", node)
            kids = (self.pattern(node.args[0]), self.pattern(node.args[1]))
            return POp(_PATTERN_CALLS[node.func], kids)
        raise self.error(f"{getattr(node, 'op', '?')!r} is not allowed in a pattern", node)

    def product(self, node: sx.Binary) -> POp:
        """The pattern of a product of two non-constant factors; none may be a product."""
        kids = (self.pattern(node.left), self.pattern(node.right))
        for kid, kid_node in zip(kids, (node.left, node.right), strict=True):
            if isinstance(kid, POp) and kid.op == "mul":
                raise self.error(_NESTED_PRODUCT, kid_node)
        return POp("mul", kids)

    def const_factor(self, node: sx.Node) -> Expr | None:
        """The constant expression of ``node`` if it is a literal or (negated) constant name."""
        if isinstance(node, sx.Num):
            return Lit(node.value)
        if isinstance(node, sx.Name) and node.id[0].isupper():
            self.bind(node.id, NameKind.CONST, node)
            return Name(node.id, NameKind.CONST)
        if isinstance(node, sx.Unary) and node.op == "-":
            inner = self.const_factor(node.operand)
            return None if inner is None else _neg(inner)
        return None

    def sum_pattern(self, root: sx.Node) -> Pattern:
        addends: list[PAddend] = []
        consts: list[tuple[Expr, sx.Node]] = []
        rests: list[tuple[str, sx.Node]] = []
        seqs: list[tuple[Seq, sx.Node]] = []
        stack: list[tuple[sx.Node, Expr]] = [(root, Lit(1))]
        while stack:
            node, coef = stack.pop()
            if isinstance(node, sx.Unary) and node.op in ("-", "+"):
                stack.append((node.operand, _neg(coef) if node.op == "-" else coef))
            elif isinstance(node, sx.Binary) and node.op in ("+", "-"):
                stack.append((node.right, _neg(coef) if node.op == "-" else coef))
                stack.append((node.left, coef))
            elif isinstance(node, sx.Binary) and node.op == "*":
                left_k = self.const_factor(node.left)
                right_k = self.const_factor(node.right) if left_k is None else None
                if left_k is not None:
                    stack.append((node.right, _mul(coef, left_k)))
                elif right_k is not None:
                    stack.append((node.left, _mul(coef, right_k)))
                else:
                    addends.append(PAddend(self.product(node), coef))
            else:
                k = self.const_factor(node)
                if k is not None:
                    consts.append((_mul(coef, k), node))
                elif isinstance(node, sx.Call) and node.func == "sum":
                    seqs.append((self.seq_pattern(node, coef), node))
                elif isinstance(node, sx.Name) and coef == Lit(1):
                    self.bind(node.id, NameKind.TERM, node)
                    rests.append((node.id, node))
                else:
                    if coef == Lit(0):
                        raise self.error("an addend with coefficient 0 never matches", node)
                    addends.append(PAddend(self.pattern(node), coef))
        filtered = len(seqs) == 1 and len(rests) == 1 and seqs[0][0] in self.pending_filters()
        if len(rests) + len(seqs) > 1 and not filtered:
            where = [n for _, n in rests] + [n for _, n in seqs]

            raise self.error(
                "a sum pattern has at most one rest (a bare term variable or one sum(...))",
                where[1],
            )
        if len(consts) > 1:
            raise self.error("a sum pattern has at most one constant addend", consts[1][1])
        const = consts[0][0] if consts else None
        if const is not None and not _is_simple_const(const):
            raise self.error(
                "a pattern constant must be a literal or a (negated) constant variable",
                consts[0][1],
            )
        rest = rests[0][0] if rests else None
        seq = seqs[0][0] if seqs else None
        if not addends and const is None and seq is None and rest is not None:
            return PTerm(rest)
        lone = len(addends) == 1 and addends[0].coef == Lit(1)
        if lone and const is None and rest is None and seq is None:
            return addends[0].pattern
        return PSum(tuple(addends), const, rest, seq)

    def pending_filters(self) -> list[Seq]:
        return [seq for seq, _ in self.seq_filters]

    def seq_pattern(self, node: sx.Call, coef: Expr) -> Seq:
        if coef != Lit(1):
            raise self.error("sum(...) cannot be scaled in a pattern", node)
        if len(node.args) not in (1, 2):
            raise self.error(
                "sum(...) in a pattern takes one argument, like sum(K*t), or a condition"
                " too, like sum(K*t, divides(D, K))",
                node,
            )
        arg = node.args[0]
        if isinstance(arg, sx.Binary) and arg.op == "*":
            a, b = arg.left, arg.right
            if isinstance(b, sx.Name) and b.id[0].isupper():
                a, b = b, a
            if (
                isinstance(a, sx.Name)
                and a.id[0].isupper()
                and isinstance(b, sx.Name)
                and not b.id[0].isupper()
            ):
                self.bind(a.id, NameKind.SEQ_CONST, a)
                self.bind(b.id, NameKind.SEQ_TERM, b)
                seq = Seq(a.id, b.id)
                if len(node.args) == 2:
                    self.seq_filters.append((seq, node.args[1]))
                return seq
        raise self.error("sum(...) in a pattern must be sum(K*t): a constant and a term name", node)

    # ---------------------------------------------------------------- expressions
    def expr(self, node: sx.Node) -> Expr:
        if isinstance(node, sx.Num):
            return Lit(node.value)
        if isinstance(node, sx.Name):
            inlined = self.seq_lets.get(node.id)
            if inlined is not None:
                return inlined
            kind = self.names.get(node.id)
            if kind is None:
                raise self.error(f"name {node.id!r} is not bound by the pattern", node)
            return Name(node.id, kind)
        if isinstance(node, sx.Unary):
            operand = self.expr(node.operand)
            return operand if node.op == "+" else Unary(node.op, operand)
        if isinstance(node, sx.Binary):
            if node.op in ("//", "%"):
                self.uses_division = True
            return Binary(node.op, self.expr(node.left), self.expr(node.right))
        assert isinstance(node, sx.Call)
        func = node.func
        if func in ("vmin", "vmax", "fits_int64") or func in AGGREGATES:
            if len(node.args) != 1:
                raise self.error(f"{func}() takes exactly one argument", node)
        elif func not in CONST_FUNCS and func not in TERM_FUNCS:
            known = ", ".join(
                sorted({"vmin", "vmax", "fits_int64", *CONST_FUNCS, *TERM_FUNCS, *AGGREGATES})
            )
            raise self.error(f"unknown function {func!r} (known: {known})", node)
        if func in (*_DIVISION_FUNCS, "ceildiv", "divides", *TERM_FUNCS) and len(node.args) != 2:
            raise self.error(f"{func}() takes exactly 2 arguments", node)
        if func == "abs" and len(node.args) != 1:
            raise self.error("abs() takes exactly one argument", node)
        if not node.args:
            raise self.error(f"{func}() needs arguments", node)
        return Call(func, tuple(self.expr(a) for a in node.args))

    def type_error(self, reason: str) -> RuleError:
        line, col = self.where
        return RuleError(reason, line, col, self.file)

    where: tuple[int, int] = (1, 1)  # start of the field being type-checked


def _neg(e: Expr) -> Expr:
    if isinstance(e, Lit):
        return Lit(-e.value)
    if isinstance(e, Unary) and e.op == "-":
        return e.operand
    return Unary("-", e)


def _mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Lit) and isinstance(b, Lit):
        return Lit(a.value * b.value)
    if a == Lit(1):
        return b
    if b == Lit(1):
        return a
    if a == Lit(-1):
        return _neg(b)
    if b == Lit(-1):
        return _neg(a)
    return Binary("*", a, b)


def _is_simple_const(e: Expr) -> bool:
    if isinstance(e, Lit | Name):
        return True
    return isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, Name)


_SEQ_OUTSIDE: Final = (
    "a name from sum(K*t) has one value per addend: use it inside sum(), all(), any(),"
    " gcd(), min() or max()"
)
_INT: Final = "int"
_BOOL: Final = "bool"
_TERM: Final = "term"


def _type_of(e: Expr, ck: _Checker) -> tuple[str, bool]:
    """Infer ``(type, per-addend)`` of an expression, raising RuleError on misuse."""
    if isinstance(e, Lit):
        return _INT, False
    if isinstance(e, Name):
        return {
            NameKind.TERM: (_TERM, False),
            NameKind.CONST: (_INT, False),
            NameKind.SEQ_TERM: (_TERM, True),
            NameKind.SEQ_CONST: (_INT, True),
        }[e.kind]
    if isinstance(e, Unary):
        t, seq = _type_of(e.operand, ck)
        if e.op == "not":
            if t != _BOOL:
                raise ck.type_error("'not' needs a condition")
            return _BOOL, seq
        if t == _BOOL:
            raise ck.type_error("cannot negate a condition with '-'; use 'not'")
        return t, seq
    if isinstance(e, Binary):
        lt, ls = _type_of(e.left, ck)
        rt, rs = _type_of(e.right, ck)
        seq = ls or rs
        if e.op in ("and", "or"):
            if lt == rt == _TERM:
                return _TERM, seq  # the term ``a and b`` of a rewrite
            if lt != _BOOL or rt != _BOOL:
                raise ck.type_error(f"'{e.op}' joins conditions, or two terms, not numbers")
            return _BOOL, seq
        if _BOOL in (lt, rt):
            raise ck.type_error(f"'{e.op}' needs numbers or terms, not conditions")
        if e.op in _COMPARE:
            return (_TERM if _TERM in (lt, rt) else _BOOL), seq
        return (_TERM if _TERM in (lt, rt) else _INT), seq
    assert isinstance(e, Call)
    types = [_type_of(a, ck) for a in e.args]
    seq = any(s for _, s in types)
    kinds = {t for t, _ in types}
    if e.func in ("vmin", "vmax"):
        if kinds != {_TERM}:
            raise ck.type_error(f"{e.func}() takes a term")
        return _INT, seq
    if e.func == "fits_int64":
        return _fits_type(e, kinds, seq, ck)
    if e.func in TERM_FUNCS:
        return _monomial_type(e, kinds, seq, ck)
    if e.func in AGGREGATES:
        (t, s) = types[0]
        if not s:
            raise ck.type_error(f"{e.func}(...) must range over sequence names from sum(K*t)")
        if e.func == "sum":
            if t == _BOOL:
                raise ck.type_error("sum() adds numbers or terms, not conditions")
            return t, False
        if t != _BOOL:
            raise ck.type_error(f"{e.func}() takes a condition")
        return _BOOL, False
    if _BOOL in kinds:
        raise ck.type_error(f"{e.func}() takes numbers, not conditions")
    if e.func in ("gcd", "min", "max"):
        # Sequence arguments are expanded: gcd(K, D) is the gcd of every K and D.
        if _TERM in kinds:
            if e.func == "gcd" or seq:
                raise ck.type_error(f"{e.func}() of terms over a sequence is not supported")
            return _TERM, False
        return _INT, False
    if _TERM in kinds:
        if e.func in _DIVISION_FUNCS or e.func == "ceildiv":
            return _TERM, seq
        raise ck.type_error(f"{e.func}() takes constants, not terms")
    if e.func == "divides":
        return _BOOL, seq
    return _INT, seq


def _monomial_type(e: Call, kinds: set[str], seq: bool, ck: _Checker) -> tuple[str, bool]:
    """``tdivides(u, t)`` is a condition and ``tquotient(t, u)`` a term, of terms."""
    if _BOOL in kinds:
        raise ck.type_error(f"{e.func}() takes terms (or numbers), not conditions")
    if _TERM not in kinds:
        raise ck.type_error(f"{e.func}() takes terms; for numbers use divides() and //")
    return (_BOOL if e.func == "tdivides" else _TERM), seq


def _fits_type(e: Call, kinds: set[str], seq: bool, ck: _Checker) -> tuple[str, bool]:
    if _BOOL in kinds:
        raise ck.type_error("fits_int64() takes a term or a number, not a condition")
    if seq:
        raise ck.type_error("fits_int64() must not range over a sequence; use sum(...) inside")
    # fits_int64 trusts a matched term to be a value the input computes; a term a let
    # builds is not one.
    built = sorted(expr_names(e) & ck.term_lets)
    if built:
        raise ck.type_error(f"fits_int64() cannot read {built[0]!r}, a term the rule builds")
    return _BOOL, False


# Real rules are a few levels deep; the checks and compilers after parsing recurse, so a
# deeper field is refused here, whatever the interpreter's recursion limit is.
_MAX_FIELD_DEPTH: Final = 100


def _field_syntax(fld: _Field, file: str) -> sx.Node:
    try:
        node = sx.parse_syntax(fld.value, file, fld.line, fld.col)
    except RuleError:
        raise
    except ParseError as exc:
        raise RuleError(exc.reason, exc.line, exc.col, file) from None
    stack: list[tuple[sx.Node, int]] = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        if depth > _MAX_FIELD_DEPTH:
            reason = f"nested too deeply (more than {_MAX_FIELD_DEPTH} levels of operators)"
            raise RuleError(reason, n.line, n.col, file)
        if isinstance(n, sx.Num) and abs(n.value).bit_length() > MAX_LITERAL_BITS:
            shown = int_text(n.value)
            shown = shown if len(shown) <= 24 else f"{shown[:12]}...({len(shown)} digits)"
            reason = f"integer {shown} is too large for a rule (the limit is 2**{MAX_LITERAL_BITS})"
            raise RuleError(reason, n.line, n.col, file)
        stack.extend((k, depth + 1) for k in _syntax_children(n))
    return node


def _syntax_children(n: sx.Node) -> list[sx.Node]:
    if isinstance(n, sx.Unary):
        return [n.operand]
    if isinstance(n, sx.Binary):
        return [n.left, n.right]
    if isinstance(n, sx.Call):
        return list(n.args)
    return []


def _parse_semantics(fld: _Field, file: str) -> tuple[Semantics, ...]:
    words = [w.strip() for w in fld.value.replace(",", " ").split()]
    if words == ["any"]:
        return ()
    out: list[Semantics] = []
    for w in words:
        try:
            sem = Semantics(w)
        except ValueError:
            raise RuleError(
                f"unknown semantics {w!r} (use floor, trunc, euclid, or any)",
                fld.line,
                fld.col,
                file,
            ) from None
        if sem in out:
            raise RuleError(f"semantics {w!r} listed twice", fld.line, fld.col, file)
        out.append(sem)
    if not out:
        raise RuleError(
            "semantics needs a value: floor, trunc, euclid, or any", fld.line, fld.col, file
        )
    return tuple(out)


def _parse_phase(fld: _Field | None, file: str) -> str:
    """The ``phase`` field: main, early, constraint or lowering (see ``Rule.phase``)."""
    if fld is None:
        return "main"
    word = fld.value.strip()
    if word not in _PHASES:
        raise RuleError(
            f"unknown phase {word!r} (use {', '.join(_PHASES)})", fld.line, fld.col, file
        )
    return word


def _build_rule(block: _Block, file: str) -> Rule:
    for key in _REQUIRED:
        if key not in block.fields:
            raise RuleError(f"rule {block.name!r} has no {key!r} field", block.line, 1, file)
    ck = _Checker(file)
    fields = block.fields
    semantics = _parse_semantics(fields["semantics"], file)
    phase = _parse_phase(fields.get("phase"), file)
    pat_node = _field_syntax(fields["pattern"], file)
    pattern = ck.pattern(pat_node)
    if isinstance(pattern, PTerm | PConst | PLit):
        raise ck.error("a pattern must have an operator at its root", pat_node)
    if ck.seq_filters:
        ck.where = (fields["pattern"].line, fields["pattern"].col)
        pattern = _with_seq_filters(pattern, ck)
    lets = _parse_lets(fields["let"], ck, file) if "let" in fields else ()
    guard = None
    if "guard" in fields:
        g_node = _field_syntax(fields["guard"], file)
        guard = ck.expr(g_node)
        ck.where = (fields["guard"].line, fields["guard"].col)
        gtype, gseq = _type_of(guard, ck)
        if gseq:
            raise ck.type_error(_SEQ_OUTSIDE)
        if gtype != _BOOL:
            raise ck.type_error("the guard must be a condition (a comparison, and/or/not)")
    r_node = _field_syntax(fields["rewrite"], file)
    rewrite = ck.expr(r_node)
    ck.where = (fields["rewrite"].line, fields["rewrite"].col)
    rtype, rseq = _type_of(rewrite, ck)
    if rseq:
        raise ck.type_error(_SEQ_OUTSIDE)
    if rtype == _BOOL:
        raise ck.type_error("the rewrite must be a term or a number, not a condition")
    doc = fields["doc"].value.strip()
    if not doc:
        raise RuleError("the doc field is empty", fields["doc"].line, fields["doc"].col, file)
    if not semantics and ck.uses_division:
        sem_field = fields["semantics"]
        raise RuleError(
            "a rule using // or % must name its semantics (floor, trunc, euclid), not 'any'",
            sem_field.line,
            sem_field.col,
            file,
        )
    return Rule(
        name=block.name,
        doc=doc,
        semantics=semantics,
        pattern=pattern,
        lets=lets,
        guard=guard,
        rewrite=rewrite,
        # Per-addend lets are inlined: no backend binds them.
        names={n: k for n, k in ck.names.items() if n not in ck.seq_lets},
        phase=phase,
        file=file,
        line=block.line,
        text="\n".join(block.text_lines),
    )


def _with_seq_filters(p: Pattern, ck: _Checker) -> Pattern:
    """``p`` with the conditions of its ``sum(K*t, cond)`` addends checked and attached.

    A condition is per addend: it may use the sequence's own names and constant names
    of the pattern, which the matchers bind before the sum's leftover addends are split.
    """
    if isinstance(p, POp):
        return dataclasses.replace(p, children=tuple(_with_seq_filters(c, ck) for c in p.children))
    if not isinstance(p, PSum):
        return p
    addends = tuple(
        dataclasses.replace(a, pattern=_with_seq_filters(a.pattern, ck)) for a in p.addends
    )
    seq = p.seq
    for pending, node in ck.seq_filters:
        if seq is pending:
            cond = ck.expr(node)
            for name in expr_names(cond):
                kind = ck.names[name]
                # Term names are matched before the sum (the matchers match a filtered
                # sum last), except the sum's own rest, which the filter makes.
                outside = kind is NameKind.CONST or (kind is NameKind.TERM and name != p.rest)
                if name not in (seq.coef, seq.term) and not outside:
                    raise ck.error(
                        f"the condition of sum({seq.coef}*{seq.term}, ...) may use"
                        f" {seq.coef}, {seq.term}, constant names and term names matched"
                        f" outside the sum, not {name!r}",
                        node,
                    )
            ctype, _ = _type_of(cond, ck)
            if ctype != _BOOL:
                raise ck.error("the second argument of sum(K*t, ...) must be a condition", node)
            if p.rest is None:
                raise ck.error("sum(K*t, cond) needs a rest for the other addends: + y", node)
            seq = dataclasses.replace(seq, where=cond)
    return dataclasses.replace(p, addends=addends, seq=seq)


def _parse_lets(fld: _Field, ck: _Checker, file: str) -> tuple[tuple[str, Expr], ...]:
    """``let:`` holds ``NAME = expression`` definitions, one per line or separated by ';'."""
    out: list[tuple[str, Expr]] = []
    for offset, line_text in enumerate(fld.value.split("\n")):
        line = fld.line + offset
        base_col = fld.col if offset == 0 else 1
        col = base_col
        for piece in line_text.split(";"):
            m = _LET_RE.match(piece)
            if not piece.strip():
                col += len(piece) + 1
                continue
            if m is None:
                raise RuleError("expected 'NAME = expression' in let", line, col, file)
            name = m.group("name")
            name_col = col + len(m.group("lead"))
            if name in _NOT_NAMES:
                raise RuleError(f"let name {name!r} is a Python keyword", line, name_col, file)
            if name in ck.names:
                raise RuleError(f"let redefines {name!r}", line, name_col, file)
            expr_col = col + m.start("expr")
            node = _field_syntax(_Field(m.group("expr"), line, expr_col), file)
            e = ck.expr(node)
            ck.where = (line, expr_col + len(m.group("expr")) - len(m.group("expr").lstrip()))
            etype, seq = _type_of(e, ck)
            want = _INT if name[0].isupper() else _TERM
            if etype != want:
                kind = "a number" if want == _INT else "a term"
                raise RuleError(
                    f"{name!r} must be {kind} (upper-case names are numbers, lower-case terms)",
                    line,
                    name_col,
                    file,
                )
            col += len(piece) + 1
            if seq:
                ck.names[name] = NameKind.SEQ_CONST if want == _INT else NameKind.SEQ_TERM
                ck.seq_lets[name] = e
                continue
            ck.names[name] = NameKind.CONST if want == _INT else NameKind.TERM
            if want == _TERM:
                ck.term_lets.add(name)
            out.append((name, e))
    return tuple(out)


def parse_rules(text: str, file: str = "<rules>") -> list[Rule]:
    """Parse the text of a rules file. Raises RuleError (``file:line:col: reason``).

    Every problem of the file is reported, not only the first: with more than one the
    error is a :class:`~quorem.errors.RuleErrors` listing them in file order (one
    per rule block at most, since a block's later fields may depend on its first
    error). A leading byte-order mark is ignored; see the module docstring for what text
    is allowed. Every problem, however malformed the text, is a RuleError.
    """
    text = text.removeprefix("\ufeff")
    _check_characters(text, file)
    errors: list[RuleError] = []
    rules = []
    for block in _split_blocks(text, file, errors):
        try:
            rules.append(_build_rule(block, file))
        except RuleError as exc:
            errors.append(exc)
        except RecursionError:
            # Rule expressions are checked recursively; real rules are a few levels deep.
            errors.append(
                RuleError(f"rule {block.name!r} is nested too deeply to check", block.line, 1, file)
            )
    errors.extend(unique_name_errors(rules))
    raise_all(errors)
    return rules


def raise_all(errors: list[RuleError]) -> None:
    """Raise nothing for no error, the error itself for one, a RuleErrors for more."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        errors.sort(key=lambda e: (e.source, e.line, e.col))
        raise RuleErrors(errors)


def unique_name_errors(rules: Iterable[Rule]) -> list[RuleError]:
    """A RuleError at the second rule of each name used twice."""
    seen: dict[str, Rule] = {}
    out = []
    for rule in rules:
        first = seen.setdefault(rule.name, rule)
        if first is not rule:
            out.append(
                RuleError(
                    f"duplicate rule name {rule.name!r} (first defined at {first.location})",
                    rule.line,
                    1,
                    rule.file,
                )
            )
    return out


def check_unique_names(rules: Iterable[Rule]) -> None:
    """Raise RuleError at the second rule of any name used twice (RuleErrors for several)."""
    raise_all(unique_name_errors(rules))


def _decode(data: bytes, file: str) -> str:
    """The text of a rules file's bytes; a byte that is not UTF-8 is a RuleError there."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        reason = f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start a character here"
        raise RuleError(reason, line, col, file) from None


def _no_rules_error(text: str, file: str) -> RuleError:
    """The error for a rules file holding no rule: empty, or comments and blank lines only."""
    empty = not text.removeprefix("\ufeff").strip()
    what = "is empty" if empty else "holds only comments and blank lines"
    return RuleError(
        f"no rules: the file {what} (a rule starts with a line 'rule NAME')", 1, 1, file
    )


def load_rule_files(paths: Iterable[str | Path]) -> list[Rule]:
    """Load rules files in order; rule names must be unique across all of them.

    A file with no rule (empty, or only comments and blank lines) is a RuleError: it is
    a wrong path or an unfinished file, never a rule set meant to be empty.

    The parse of files read before (same bytes, same engine) is taken from
    :func:`~quorem.compiler.cache.load_parsed`: parsing is a large share of start-up.
    Each rule carries what its file's proof record (``FILE.proof.json``) says of it
    (:func:`~quorem.proofrecord.attach_proofs`).
    """
    files: list[tuple[str, bytes]] = []
    for path in paths:
        p = Path(path)
        try:
            files.append((str(p), p.read_bytes()))
        except OSError as exc:
            raise RuleError(
                f"cannot read rules file: {exc.strerror or exc}", 1, 1, str(p)
            ) from None
    cached = load_parsed(files)
    if isinstance(cached, list) and all(isinstance(r, Rule) for r in cached):
        return attach_proofs(cached, files, shipped=shipped)
    rules: list[Rule] = []
    errors: list[RuleError] = []
    for name, data in files:
        # Every file is read, so that one run reports the problems of all of them.
        try:
            text = _decode(data, name)
            found = parse_rules(text, name)
            if not found:
                raise _no_rules_error(text, name)
            rules.extend(found)
        except RuleErrors as exc:
            errors.extend(exc.errors)
        except RuleError as exc:
            errors.append(exc)
    if not errors:
        errors.extend(unique_name_errors(rules))
    raise_all(errors)
    store_parsed(files, rules)
    return attach_proofs(rules, files, shipped=shipped)
