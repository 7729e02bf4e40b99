"""Write a proof obligation's query as a standalone, standard SMT-LIB 2.6 script.

The prover builds each query as Z3 expressions (:mod:`quorem.verify.encode`). To check
a proof with another solver, or to hand a query to anyone, it is written out as text.
Z3's own ``sexpr()``/``to_smt2()`` is not standard SMT-LIB: it writes ``(+ t)`` with one
argument, a bare ``and`` for an empty conjunction, a backslash before a ``|`` inside a
quoted symbol, and after simplification z3-only operators (``div0``, ``mod0``); other
solvers reject such text. So :func:`to_smtlib` prints the expressions itself, walking
the AST and emitting only the Core and Ints theories (``+ - * div mod abs``,
comparisons, ``ite``, ``and or not => = distinct xor``): an operator outside them
raises :class:`UnsupportedTermError` rather than being written in a form only Z3 reads.

The text is the AST as built, nothing simplified: an n-ary ``+``, ``*``, ``and`` or
``or`` of one argument is that argument, of none its unit (0, 1, true, false), which is
the same term, so every solver is given the same mathematical statement Z3 is. No
``let`` sharing: the queries of the shipped rules print to at most a few thousand
nodes as trees, and a tree is what a reader can follow.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

import z3

from .prove import Obligation, obligation_query

__all__ = ["Script", "UnsupportedTermError", "file_name", "obligation_script", "to_smtlib"]


class UnsupportedTermError(ValueError):
    """A term outside the Core and Ints theories of SMT-LIB (no standard text for it)."""


@dataclasses.dataclass(frozen=True)
class Script:
    """An SMT-LIB 2.6 script and how its symbols relate to Z3's names.

    Attributes:
        text: the script, ending with ``(check-sat)``.
        logic: the logic it sets (``QF_LIA`` or ``QF_NIA``).
        symbols: each Z3 constant's name -> the symbol declared for it (the same name,
            quoted when it is not a simple symbol, or renamed when it is a reserved
            word or a theory symbol, or holds a character a quoted symbol cannot).

    """

    text: str
    logic: str
    symbols: dict[str, str]


# Reserved words of SMT-LIB 2.6 and the symbols the Core and Ints theories declare: a
# constant of that name would redeclare them (``|abs|`` is the same symbol as ``abs``).
_RESERVED_WORDS: Final = (
    "! _ as BINARY DECIMAL exists HEXADECIMAL forall let match NUMERAL par STRING "
    "true false not => and or xor = distinct ite + - * div mod abs <= < >= > Int Bool "
    "assert check-sat check-sat-assuming declare-const declare-datatype declare-datatypes "
    "declare-fun declare-sort define-fun define-fun-rec define-funs-rec define-sort echo "
    "exit get-assertions get-assignment get-info get-model get-option get-proof "
    "get-unsat-assumptions get-unsat-core get-value pop push reset reset-assertions "
    "set-info set-logic set-option"
)
_RESERVED: Final = frozenset(_RESERVED_WORDS.split())
_SIMPLE: Final = re.compile(r"[A-Za-z~!@$%^&*_\-+=<>.?/][A-Za-z0-9~!@$%^&*_\-+=<>.?/]*")
# What a quoted symbol may hold: printable ASCII and blanks but | and \.
_UNQUOTABLE: Final = re.compile(r"[^ -\[\]-{}~]")

_SORTS: Final = {z3.Z3_INT_SORT: "Int", z3.Z3_BOOL_SORT: "Bool"}
# Operators written as they are, with their arguments (n-ary where SMT-LIB allows).
_OPERATORS: Final = {
    z3.Z3_OP_SUB: "-",
    z3.Z3_OP_UMINUS: "-",
    z3.Z3_OP_IDIV: "div",
    z3.Z3_OP_MOD: "mod",
    z3.Z3_OP_ABS: "abs",
    z3.Z3_OP_LE: "<=",
    z3.Z3_OP_LT: "<",
    z3.Z3_OP_GE: ">=",
    z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "=",
    z3.Z3_OP_IFF: "=",
    z3.Z3_OP_DISTINCT: "distinct",
    z3.Z3_OP_ITE: "ite",
    z3.Z3_OP_NOT: "not",
    z3.Z3_OP_IMPLIES: "=>",
    z3.Z3_OP_XOR: "xor",
}
# n-ary operators and the term an empty application of them stands for.
_UNITS: Final = {
    z3.Z3_OP_ADD: ("+", "0"),
    z3.Z3_OP_MUL: ("*", "1"),
    z3.Z3_OP_AND: ("and", "true"),
    z3.Z3_OP_OR: ("or", "false"),
}


def _numeral(e: Any) -> str:
    v = e.as_long()
    return str(v) if v >= 0 else f"(- {-v})"


class _Printer:
    def __init__(self) -> None:
        self.symbols: dict[str, str] = {}
        self.sorts: dict[str, str] = {}
        self.used: set[str] = set()
        self.memo: dict[int, str] = {}
        self.nonlinear = False

    def symbol(self, name: str) -> str:
        found = self.symbols.get(name)
        if found is not None:
            return found
        base = _UNQUOTABLE.sub("_", name)
        if base.startswith(("@", ".")) or not base:
            base = f"_{base}"  # symbols starting with @ or . are the solvers' own
        candidate = base
        n = 1
        # A reserved or theory name, or one a rename made equal to another: a suffix.
        while candidate in _RESERVED or candidate in self.used:
            n += 1
            candidate = f"{base}_{n}"
        self.used.add(candidate)
        out = candidate if _SIMPLE.fullmatch(candidate) else f"|{candidate}|"
        self.symbols[name] = out
        return out

    def term(self, e: Any) -> str:
        key = e.get_id()
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._term(e)
        return found

    def _term(self, e: Any) -> str:
        if z3.is_int_value(e):
            return _numeral(e)
        if z3.is_true(e):
            return "true"
        if z3.is_false(e):
            return "false"
        if not z3.is_app(e):
            raise UnsupportedTermError(f"not an application (a quantifier or variable): {e}")
        decl = e.decl()
        kind = decl.kind()
        if kind == z3.Z3_OP_UNINTERPRETED:
            if e.num_args():
                raise UnsupportedTermError(f"uninterpreted function: {decl.name()}")
            sort = _SORTS.get(e.sort().kind())
            if sort is None:
                raise UnsupportedTermError(f"constant {decl.name()} of sort {e.sort()}")
            name = self.symbol(decl.name())
            self.sorts[name] = sort
            return name
        args = [self.term(c) for c in e.children()]
        if kind in _UNITS:
            op, unit = _UNITS[kind]
            if kind == z3.Z3_OP_MUL and sum(not z3.is_int_value(c) for c in e.children()) > 1:
                self.nonlinear = True
            if not args:
                return unit
            if len(args) == 1:
                return args[0]
            return f"({op} {' '.join(args)})"
        op_name = _OPERATORS.get(kind)
        if op_name is None:
            raise UnsupportedTermError(f"operator {decl.name()} is not in SMT-LIB's Ints theory")
        if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD) and not z3.is_int_value(e.arg(1)):
            self.nonlinear = True  # a linear logic divides by numerals only
        if kind == z3.Z3_OP_SUB and len(args) == 1:
            return args[0]  # Z3's one-argument subtraction is its argument
        return f"({op_name} {' '.join(args)})"


def _comment(line: str) -> str:
    return "; " + line.replace("\n", " ").replace("\r", " ")


def to_smtlib(assertions: Sequence[Any], *, comments: Iterable[str] = ()) -> Script:
    """``assertions`` (Z3 Boolean expressions) as one SMT-LIB 2.6 script.

    The script holds ``comments`` (one ``;`` line each), ``(set-logic QF_NIA)`` (``QF_LIA`` when no
    product of two non-numerals and no division by a non-numeral occurs), one
    ``declare-fun`` per constant in order of first use, one ``assert`` per assertion and
    ``(check-sat)``. Raises :class:`UnsupportedTermError` for a term the Core and Ints
    theories cannot state.
    """
    p = _Printer()
    body = [f"(assert {p.term(a)})" for a in assertions]
    logic = "QF_NIA" if p.nonlinear else "QF_LIA"
    lines = [_comment(c) for c in comments]
    lines.append("(set-info :smt-lib-version 2.6)")
    lines.append(f"(set-logic {logic})")
    lines += [f"(declare-fun {s} () {sort})" for s, sort in p.sorts.items()]
    lines += body
    lines.append("(check-sat)")
    return Script("\n".join(lines) + "\n", logic, dict(p.symbols))


def obligation_script(
    ob: Obligation, method: str = "", *, expected: str = "unsat", location: str = ""
) -> Script:
    """``ob``'s query (:func:`~quorem.verify.prove.obligation_query`) as a script.

    Headed by comments naming the rule, the obligation, the semantics, the arity, where
    the rule is (``location``, default the rule's own ``file:line``), the prover's
    method the query belongs to (``method``, default its first query) and the answer
    expected: ``unsat`` proves the obligation (``sat`` for a refuted one).
    """
    rule = ob.rule
    first = not method
    method = method or ("IntAux" if ob.kind == "equivalence" else "IntAux64")
    comments = [
        "a proof obligation of quorem verify, in SMT-LIB 2.6",
        f"rule: {rule.name}",
        f"obligation: {ob.kind}",
        f"semantics: {ob.semantics.value if ob.semantics else 'any'}",
        f"arity: {ob.arity} (addends of the rule's sum(K*t); 0: it has none)",
        f"location: {location or rule.location}",
        f"method: {method}" + (" (the prover's first query)" if first else ""),
        f"expected: {expected}"
        + (" (unsat proves the obligation; a model refutes it)" if expected == "unsat" else ""),
    ]
    return to_smtlib(obligation_query(ob, method), comments=comments)


_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]+")


def file_name(ob: Obligation) -> str:
    """A file name for ``ob``'s script: ``RULE.SEMANTICS.OBLIGATION.kARITY.smt2``.

    Only letters, digits, ``_``, ``-`` and ``.`` (anything else in a rule's name becomes
    ``_``), so it is a safe name on every file system.
    """
    sem = ob.semantics.value if ob.semantics else "any"
    name = _UNSAFE.sub("_", ob.rule.name).strip(".") or "rule"
    return f"{name}.{sem}.{ob.kind}.k{ob.arity}.smt2"
