"""The expression half of the rule compiler (:mod:`quorem.compiler.dispatch`).

Guards, lets and rewrites are compiled for their static types -- ``INT`` (a Python int),
``EXT`` (an int or an infinity, from an unbounded ``vmin``/``vmax``), ``BOOL`` and ``TERM`` --
into Python expressions with the meaning :mod:`quorem.interpret` gives them: plain
``int`` arithmetic where no value can be infinite, the reference's own extended arithmetic
and :class:`~quorem.interpret.Undetermined` where one can. The runtime helpers that
generated code calls are defined here too, each mirroring one operation of the reference.

Internal to the compiler: nothing here is public API.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from typing import Any, Final

from .. import interpret as ref
from ..arith import ceildiv, eucliddiv, euclidmod, truncdiv, truncmod
from ..errors import TermError
from ..interpret import NEG_INF, POS_INF, Undetermined
from ..monomial import monomial_divides, monomial_quotient
from ..ops import COMMUTATIVE, DIV_OF, DIVISION_OPS, MOD_OF, Op, Semantics
from ..overflow import FitsCheck, compile_fits
from ..rule import (
    TERM_FUNCS,
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    Pattern,
    PConst,
    PLit,
    POp,
    PTerm,
    Rule,
    Unary,
    expr_names,
    pattern_op,
    sequence_names,
)
from ..term import (
    Term,
    atom_ops,
    binary,
    binary_range,
    compare,
    const,
    div,
    linear,
    linear_update,
    lookup,
    maximum,
    minimum,
    mod,
    mul,
    op_block,
)
from ..term import ceildiv as ceildiv_term

__all__ = [
    "BIG_SUM",
    "BOOL",
    "EXT",
    "INT",
    "NON_COMMUTATIVE_BINARY",
    "RUNTIME",
    "SEQ_KINDS",
    "TERM",
    "Binding",
    "Ctx",
    "ExprCompiler",
    "Path",
    "Rest",
    "State",
    "Unsupported",
    "fits_check",
    "fits_refs",
    "lit",
]


class Unsupported(Exception):  # noqa: N818  (control flow: fall back to the reference)
    """The rule uses a construct this compiler does not handle."""


# fits_int64 checks of the compiled rules, each compiled once, called by index.
_FITS_CHECKS: list[FitsCheck] = []
_FITS_INDEX: dict[tuple[Expr, Semantics | None], int] = {}
_FITS_USE_RE: Final = re.compile(r"_FITS_CHECKS\[(\d+)\]")


def fits_refs(source: str) -> tuple[tuple[int, object], ...]:
    """The ``_FITS_CHECKS[i]`` that generated ``source`` calls: each ``i`` and its key.

    The indices are this process's; a process running the same source elsewhere (the
    rule-code cache) rebuilds each check from its key with :func:`fits_check`.
    """
    keys = {i: k for k, i in _FITS_INDEX.items()}
    used = sorted({int(m.group(1)) for m in _FITS_USE_RE.finditer(source)})
    return tuple((i, keys[i]) for i in used)


def fits_check(key: object) -> FitsCheck:
    """The check of a key :func:`fits_refs` gave, (compiled and) registered in this process."""
    if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], Expr)):
        raise TypeError(f"not a fits_int64 check key: {key!r}")
    arg, sem = key
    index = _FITS_INDEX.setdefault((arg, sem), len(_FITS_CHECKS))
    if index == len(_FITS_CHECKS):
        _FITS_CHECKS.append(compile_fits(arg, sem))
    return _FITS_CHECKS[index]


# --------------------------------------------------------------------- runtime helpers
# Called by generated code; each mirrors one operation of quorem.interpret exactly.


def _fin(v: ref.Ext) -> int:
    """An extended integer that must be finite (a let, or an operand turned into a term)."""
    if isinstance(v, ref._Inf):
        raise Undetermined
    return v


def _fin_raw(v: int | None) -> int:
    if v is None:
        raise Undetermined
    return v


def _lo(v: int | None) -> ref.Ext:
    return NEG_INF if v is None else v


def _hi(v: int | None) -> ref.Ext:
    return POS_INF if v is None else v


def _fdiv(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return a // b


def _fmod(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return a % b


def _tdiv(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return truncdiv(a, b)


def _tmod(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return truncmod(a, b)


def _ediv(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return eucliddiv(a, b)


def _emod(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return euclidmod(a, b)


def _cdiv(a: int, b: int) -> int:
    if b == 0:
        raise Undetermined
    return ceildiv(a, b)


def _divides(d: int, n: int) -> bool:
    return n == 0 if d == 0 else n % d == 0


def _tquotient(t: Term, u: Term) -> Term:
    q = monomial_quotient(t, u)
    if q is None:
        raise Undetermined
    return q


def _divides_ext(d: ref.Ext, n: ref.Ext) -> bool:
    x, y = ref._ints(d, n)
    return _divides(x, y)


def _cdiv_ext(sem: str, is_div: bool, a: ref.Ext, b: ref.Ext) -> ref.Ext:
    """``a // b`` or ``a % b`` of extended integers (the reference's const_division)."""
    if is_div:
        if sem != "trunc" and isinstance(a, ref._Inf) and isinstance(b, int) and b != 0:
            return a if b > 0 else ref._neg(a)
        return ref._DIV[f"{sem}div"](a, b)
    return ref._DIV[f"{sem}mod"](a, b)


def _abs_ext(v: ref.Ext) -> ref.Ext:
    return abs(v) if isinstance(v, int) else POS_INF


def _min_ext(values: list[ref.Ext]) -> ref.Ext:
    return min(values, key=ref._key)


def _max_ext(values: list[ref.Ext]) -> ref.Ext:
    return max(values, key=ref._key)


def _gcd_ext(values: list[ref.Ext]) -> int:
    return math.gcd(*ref._ints(*values))


def _sum_ext(values: Iterable[ref.Ext]) -> ref.Ext:
    total: ref.Ext = 0
    for v in values:
        total = ref._add(total, v)
    return total


def _cmp_raw(op: str, a: int | None, sa: int, b: int | None, sb: int) -> bool:
    """Compare two raw bounds (None is -inf when the sign is -1, +inf when it is 1)."""
    if a is not None and b is not None:
        return ref._compare(op, a, b)
    ea: ref.Ext = a if a is not None else (POS_INF if sa > 0 else NEG_INF)
    eb: ref.Ext = b if b is not None else (POS_INF if sb > 0 else NEG_INF)
    return ref._compare(op, ea, eb)


def _const_ext(v: ref.Ext) -> Term:
    if isinstance(v, ref._Inf):
        raise Undetermined
    return const(v)


def _const_raw(v: int | None) -> Term:
    if v is None:
        raise Undetermined
    return const(v)


def _range2(op: Op, a: Term, b: Term) -> tuple[int | None, int | None]:
    try:
        return binary_range(op, a, b)
    except TermError:
        raise Undetermined from None


def _lookup2(op: Op, a: Term | None, b: Term | None) -> Term | None:
    """The live term ``binary(op, a, b)`` (op non-commutative, built as is), or None."""
    if a is None or b is None:
        return None
    return lookup(op, (a, b))


def _build2(op: Op, a: Term | None, b: Term | None) -> Term | None:
    if a is None or b is None:
        return None
    try:
        return binary(op, a, b)
    except TermError:
        return None


def _locate(atoms: tuple[Term, ...], g: Term | None, index: Any) -> tuple[int, Any]:
    """The position of ``g`` among ``atoms`` (by identity) or -1, and the updated ``index``.

    ``index`` starts at 0 for each sum matched: the first few look-ups scan the atoms (in
    C), later ones in a long sum go through a dictionary of positions, built once.
    """
    if g is None:
        return -1, index
    if index.__class__ is dict:
        return index.get(g, -1), index
    if index < _SCANS or len(atoms) <= BIG_SUM:
        try:
            return atoms.index(g), index + 1  # Term has no __eq__: index compares identity
        except ValueError:
            return -1, index + 1
    index = {a: i for i, a in enumerate(atoms)}
    return index.get(g, -1), index


def _op_slices(
    atoms: tuple[Term, ...], coefs: tuple[int, ...], op: Op
) -> tuple[tuple[Term, ...], tuple[int, ...]]:
    """The atoms of a long sum with operator ``op``, and their coefficients."""
    i, j = op_block(atoms, op)
    return atoms[i:j], coefs[i:j]


# The last few numerator indexes (see _keyed_slices), by the identity of the atoms they
# index; each entry holds its atoms, so an id is never taken for another tuple's.
_KEYED: dict[tuple[int, Op, bool], tuple[tuple[Term, ...], dict[Any, Any]]] = {}
_KEYED_KEPT: Final = 8


def _numerator_key(n: Term, whole: bool) -> Term:
    """``n``, or with ``whole`` false its non-constant part, as a sum pattern binds it."""
    if whole:
        return n
    if n.op is Op.ADD:
        return linear_update(n.args, n.arg[0], (), (), 0)
    if n.op is Op.CONST:
        return linear_update((), (), (), (), 0)
    return n


def _keyed_slices(  # noqa: PLR0917  (called by generated code only)
    atoms: tuple[Term, ...],
    coefs: tuple[int, ...],
    op: Op,
    key: Term,
    divisor: Term,
    whole: bool,
) -> tuple[list[Term], list[int]]:
    """The atoms ``op(n, divisor)`` of a long sum whose numerator ``n`` has key ``key``.

    The key of ``n`` is ``n`` itself (``whole``) or ``n`` without its constant: what a
    pattern ``op(x + C, D)`` or ``op(x, D)`` with ``x`` and ``D`` already bound can
    match. Every other atom fails that match, so the matcher's loop over this list finds
    what its loop over all atoms of ``op`` would, in the same order. The index of the sum
    is built once (a dict from key and divisor) and kept for the next lookups.
    """
    cache_key = (id(atoms), op, whole)
    entry = _KEYED.get(cache_key)
    if entry is None or entry[0] is not atoms:
        index: dict[Any, tuple[list[Term], list[int]]] = {}
        i, j = op_block(atoms, op)
        for a, c in zip(atoms[i:j], coefs[i:j], strict=True):
            n, d = a.args
            found = index.get((_numerator_key(n, whole), d))
            if found is None:
                index[(_numerator_key(n, whole), d)] = ([a], [c])
            else:
                found[0].append(a)
                found[1].append(c)
        if len(_KEYED) >= _KEYED_KEPT:
            _KEYED.pop(next(iter(_KEYED)), None)
        entry = _KEYED[cache_key] = (atoms, index)
    return entry[1].get((key, divisor), _NO_SLICES)


_NO_SLICES: Final[tuple[list[Term], list[int]]] = ([], [])


def _n_unbounded(atoms: tuple[Term, ...]) -> int:
    """How many of a sum's atoms have an unbounded side (see ``_RuleCompiler.rest_unbounded``)."""
    return sum(1 for a in atoms if a.vmin is None or a.vmax is None)


def _unbounded(a: Term) -> bool:
    return a.vmin is None or a.vmax is None


def _atom_ops(atoms: tuple[Term, ...]) -> set[Op]:
    return {a.op for a in atoms} if len(atoms) <= BIG_SUM else atom_ops(atoms)


def _sum_ops(t: Term) -> set[Op] | frozenset[Op]:
    """The operators of the atoms of ``t`` seen as a sum (a non-sum is its only atom)."""
    if t.op is _ADD:
        return _atom_ops(t.args)
    return _NO_OPS if t.op is _CONST else {t.op}


_ADD, _CONST = Op.ADD, Op.CONST
_NO_OPS: Final[frozenset[Op]] = frozenset()


_FAIL: Final = object()

BIG_SUM: Final = 24  # a sum with more atoms is long: find atoms by bisection and dictionary
_SCANS: Final = 4  # look-ups by scanning before a long sum's dictionary of positions

RUNTIME: Final[dict[str, Any]] = {
    "Undetermined": Undetermined,
    "_ABORT": (Undetermined, TermError),
    "_FAIL": _FAIL,
    "_FLOOR": Semantics.FLOOR,
    "_TRUNC": Semantics.TRUNC,
    "_EUCLID": Semantics.EUCLID,
    "ceildiv": ceildiv_term,
    "linear": linear,
    "linear_update": linear_update,
    "const": const,
    "div": div,
    "mod": mod,
    "mul": mul,
    "compare": compare,
    "maximum": maximum,
    "minimum": minimum,
    "_gcd": math.gcd,
    "_tdivides": monomial_divides,
    "_FITS_CHECKS": _FITS_CHECKS,
    "_DIV_EXT": ref._DIV,
    "_add_ext": ref._add,
    "_neg_ext": ref._neg,
    "_mul_ext": ref._mul,
    "_cmp_ext": ref._compare,
    **{f"_OP_{op.name}": op for op in Op},
    **{
        f.__name__: f
        for f in (
            _fin,
            _fin_raw,
            _lo,
            _hi,
            _fdiv,
            _fmod,
            _tdiv,
            _tmod,
            _ediv,
            _emod,
            _cdiv,
            _divides,
            _divides_ext,
            _tquotient,
            _cdiv_ext,
            _abs_ext,
            _min_ext,
            _max_ext,
            _gcd_ext,
            _sum_ext,
            _cmp_raw,
            _const_ext,
            _const_raw,
            _range2,
            _lookup2,
            _build2,
            _locate,
            _op_slices,
            _keyed_slices,
            _atom_ops,
            _sum_ops,
            _n_unbounded,
            _unbounded,
        )
    },
}

# ----------------------------------------------------------------- static information

# Static types of expressions. RLO/RHI: a raw bound (int, or None for -inf/+inf).
INT, EXT, BOOL, TERM, RLO, RHI = "int", "ext", "bool", "term", "rlo", "rhi"

_NUMERIC: Final = frozenset({INT, EXT, RLO, RHI})

_ARITH: Final = frozenset({"+", "-", "*", "//", "%"})

_COMPARE: Final = frozenset({"<", "<=", ">", ">=", "==", "!="})

_AGGREGATES: Final = frozenset({"sum", "all", "any"})

_DIV_FUNCS: Final = {
    "floordiv": Op.FLOORDIV,
    "floormod": Op.FLOORMOD,
    "truncdiv": Op.TRUNCDIV,
    "truncmod": Op.TRUNCMOD,
    "eucliddiv": Op.EUCLIDDIV,
    "euclidmod": Op.EUCLIDMOD,
    "ceildiv": Op.CEILDIV,
}

_INT_DIV_HELPER: Final = {
    Op.FLOORDIV: "_fdiv",
    Op.FLOORMOD: "_fmod",
    Op.TRUNCDIV: "_tdiv",
    Op.TRUNCMOD: "_tmod",
    Op.EUCLIDDIV: "_ediv",
    Op.EUCLIDMOD: "_emod",
    Op.CEILDIV: "_cdiv",
}

_TERM_DIVISION: Final = {
    Op.FLOORDIV: "div({}, {}, _FLOOR)",
    Op.FLOORMOD: "mod({}, {}, _FLOOR)",
    Op.TRUNCDIV: "div({}, {}, _TRUNC)",
    Op.TRUNCMOD: "mod({}, {}, _TRUNC)",
    Op.EUCLIDDIV: "div({}, {}, _EUCLID)",
    Op.EUCLIDMOD: "mod({}, {}, _EUCLID)",
    Op.CEILDIV: "ceildiv({}, {})",
}

NON_COMMUTATIVE_BINARY: Final = frozenset({*DIVISION_OPS, Op.CEILDIV, Op.LT, Op.LE})

_SIMPLE: Final = re.compile(r"\(?-?\d+\)?|[A-Za-z_]\w*(\.\w+|\[\d+\])?")

SEQ_KINDS: Final = (NameKind.SEQ_CONST, NameKind.SEQ_TERM)

Path = tuple[Any, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Rest:
    """A sum pattern's rest, not yet built: the atoms not matched and the constant."""

    atoms: str
    coefs: str
    constant: str
    used: tuple[str, ...]
    unbounded: str | None = None  # local counting the atoms with an unbounded side (-1: not yet)


@dataclasses.dataclass(frozen=True, slots=True)
class Binding:
    """A bound name: a local holding its value (an int, a term or a sequence)."""

    kind: str  # "int", "term" or "seq"
    code: str
    term: str | None = None  # for an int matched from a literal: the literal's term
    rest: Rest | None = None  # a rest not yet built into ``code``


@dataclasses.dataclass(frozen=True, slots=True)
class State:
    """What the code emitted so far on one path of the matcher has established."""

    binds: dict[str, Binding]
    done: frozenset[int]  # items emitted
    complete: dict[Path, str]  # pattern nodes matched, and the local holding the term
    top: bool  # no enclosing loop or alternative: a failed check may return at once

    def bind(self, name: str, b: Binding) -> State:
        """The state with ``name`` bound as ``b``."""
        return dataclasses.replace(self, binds={**self.binds, name: b})


@dataclasses.dataclass(slots=True)
class _C:
    """Compiled expression code and its static type."""

    code: str
    ty: str
    term: str | None = None  # for an int a literal pattern matched: the literal's term


@dataclasses.dataclass(slots=True)
class Ctx:
    """Where an expression is compiled: bindings, and the current aggregate element."""

    st: State
    elem: dict[str, str] | None = None  # sequence name -> element local, inside sum/all/any
    pre: list[str] | None = None  # statements to run first (None: no hoisting here)
    ranges: dict[Expr, str] = dataclasses.field(default_factory=dict)
    fuse: frozenset[str] = frozenset()  # rests the rewrite adds without building them

    def lazy(self) -> Ctx:
        """The context of an operand that may not be evaluated: nothing may be hoisted."""
        return Ctx(self.st, self.elem, None, {}, frozenset())


@dataclasses.dataclass(slots=True)
class _Lin:
    """A sum being compiled: pair and constant code, and rests added with their scale."""

    pairs: list[str] = dataclasses.field(default_factory=list)
    consts: list[str] = dataclasses.field(default_factory=list)
    rests: list[tuple[Rest, str | None]] = dataclasses.field(default_factory=list)


def lit(v: int) -> str:
    """Python source of the int ``v``."""
    return f"({v})" if v < 0 else str(v)


def _scaled(scale: str | None, factor: str) -> str:
    return factor if scale is None else f"({scale} * {factor})"


def _negated(scale: str | None) -> str:
    return "(-1)" if scale is None else f"(-{scale})"


class ExprCompiler:
    """Compiles the expressions of one rule instance; the rule compiler extends it.

    It knows the pattern's names (``kinds``), its sequences (``seq_of``), its operator nodes
    by path (``nodes``, for expressions that rebuild a matched term) and the lets' types.
    """

    def __init__(self, rule: Rule, sem: Semantics | None) -> None:
        self.rule = rule
        self.sem = sem
        self.term_sem = sem or Semantics.FLOOR
        self.counter = 0
        self.prefix = ""  # of local names, to inline several rules in one function
        self.kinds: dict[str, NameKind] = {}
        self.seq_of: dict[str, tuple[str, str]] = {}  # sequence name -> its (K, t) pair
        self.nodes: dict[Path, POp] = {}
        self.let_types: dict[str, str] = {}

    def _name_type(self, e: Name, elem: bool) -> str:
        if e.name in self.let_types:
            want = NameKind.CONST if self.let_types[e.name] == INT else NameKind.TERM
            if e.kind is not want:
                raise Unsupported
            return self.let_types[e.name]
        kind = self.kinds.get(e.name)
        if kind is None or kind is not e.kind:
            raise Unsupported
        if kind in SEQ_KINDS and not elem:
            raise Unsupported
        return INT if kind in (NameKind.CONST, NameKind.SEQ_CONST) else TERM

    def _type(self, e: Expr, group: tuple[str, str] | None) -> str:
        """Static type (INT, EXT, BOOL or TERM) of ``e``; ``group``: the sequence in scope."""
        if isinstance(e, Lit):
            if isinstance(e.value, bool) or not isinstance(e.value, int):
                raise Unsupported
            return INT
        if isinstance(e, Name):
            if e.kind in SEQ_KINDS and (group is None or self.seq_of.get(e.name) != group):
                raise Unsupported
            return self._name_type(e, group is not None)
        if isinstance(e, Unary):
            t = self._type(e.operand, group)
            if e.op == "not":
                if t != BOOL:
                    raise Unsupported
                return BOOL
            if e.op != "-" or t == BOOL:
                raise Unsupported
            return t
        if isinstance(e, Binary):
            lt, rt = self._type(e.left, group), self._type(e.right, group)
            if e.op in ("and", "or"):
                if lt != BOOL or rt != BOOL:
                    raise Unsupported
                return BOOL
            if BOOL in (lt, rt) or e.op not in _ARITH | _COMPARE:
                raise Unsupported
            if TERM in (lt, rt):
                return TERM
            if e.op in _COMPARE:
                return BOOL
            if e.op == "%":
                return INT
            return INT if lt == rt == INT else EXT
        if isinstance(e, Call):
            return self._call_type(e, group)
        raise Unsupported

    def _call_type(self, e: Call, group: tuple[str, str] | None) -> str:
        f = e.func
        if f in _AGGREGATES:
            if group is not None or len(e.args) != 1:
                raise Unsupported  # nested aggregates: left to the reference
            body = e.args[0]
            g = self._group(body)
            bt = self._type(body, g)
            if f == "sum":
                if bt == BOOL:
                    raise Unsupported
                return bt
            if bt != BOOL:
                raise Unsupported
            return BOOL
        if f in ("vmin", "vmax"):
            if len(e.args) != 1 or self._type(e.args[0], group) != TERM:
                raise Unsupported
            return EXT
        if f == "fits_int64":
            if group is not None:
                raise Unsupported
            return BOOL
        if f in TERM_FUNCS:
            if len(e.args) != 2 or (group is None and any(sequence_names(a) for a in e.args)):
                raise Unsupported
            if BOOL in (self._type(a, group) for a in e.args):
                raise Unsupported
            return BOOL if f == "tdivides" else TERM
        types = []
        expanded = False
        for a in e.args:
            if group is None and sequence_names(a):
                expanded = True
                types.append(self._type(a, self._group(a)))
            else:
                types.append(self._type(a, group))
        if not types or BOOL in types:
            raise Unsupported
        if TERM in types:
            if expanded:
                raise Unsupported
            if f in ("max", "min") or (f in _DIV_FUNCS and len(e.args) == 2):
                return TERM
            raise Unsupported
        if f == "abs":
            if len(e.args) != 1 or expanded:
                raise Unsupported
            return types[0]
        if f in ("min", "max"):
            return INT if all(t == INT for t in types) else EXT
        if f == "gcd":
            return INT
        if f in ("divides", *_DIV_FUNCS):
            if len(e.args) != 2 or expanded:
                raise Unsupported
            return BOOL if f == "divides" else INT
        raise Unsupported

    def _group(self, body: Expr) -> tuple[str, str]:
        """The one sequence an aggregate body ranges over."""
        names = sequence_names(body)
        if not names:
            raise Unsupported
        groups = {self.seq_of.get(n) for n in names}
        if len(groups) != 1 or None in groups:
            raise Unsupported
        group = groups.pop()
        assert group is not None
        return group

    def _raises(self, e: Expr, group: tuple[str, str] | None) -> bool:
        """Whether evaluating ``e`` may raise Undetermined (conservative)."""
        if isinstance(e, Lit | Name):
            return False
        if isinstance(e, Unary):
            return self._raises(e.operand, group)
        if isinstance(e, Binary):
            sub = self._raises(e.left, group) or self._raises(e.right, group)
            if e.op in ("and", "or"):
                return sub
            lt, rt = self._type(e.left, group), self._type(e.right, group)
            if TERM in (lt, rt):
                if e.op in ("//", "%"):
                    return True
                return sub or EXT in (lt, rt)
            if e.op in ("//", "%"):
                nonzero = isinstance(e.right, Lit) and e.right.value != 0
                return sub or not (lt == rt == INT and nonzero)
            if e.op in _COMPARE:
                return sub or lt == rt == EXT
            return sub or EXT in (lt, rt)
        assert isinstance(e, Call)
        f = e.func
        if f in _AGGREGATES:
            body = e.args[0]
            g = self._group(body)
            return self._raises(body, g) or (f == "sum" and self._type(body, g) == EXT)
        if f in ("vmin", "vmax"):
            return self._raises(e.args[0], group)
        if f == "fits_int64":
            return False  # it answers False rather than raise
        if f in TERM_FUNCS:
            sub = any(self._raises(a, group) for a in e.args)
            return True if f == "tquotient" else sub
        sub = False
        types = []
        for a in e.args:
            scope = self._group(a) if group is None and sequence_names(a) else group
            sub = sub or self._raises(a, scope)
            types.append(self._type(a, scope))
        if f in _DIV_FUNCS:
            return True
        if f in ("gcd", "divides") or TERM in types:
            return sub or EXT in types
        return sub

    def _cost(self, e: Expr) -> int:
        if isinstance(e, Lit | Name):
            return 0
        if isinstance(e, Unary):
            return 1 + self._cost(e.operand)
        if isinstance(e, Binary):
            own = 1
            if e.op not in ("and", "or") and self._type(e, self._maybe_group(e)) == TERM:
                own = 20
            return own + self._cost(e.left) + self._cost(e.right)
        assert isinstance(e, Call)
        inner = sum(self._cost(a) for a in e.args)
        if e.func in _AGGREGATES:
            return 10 + 3 * inner
        if e.func in ("vmin", "vmax"):
            arg = e.args[0]
            if isinstance(arg, Name) or self._identity_paths(arg):
                return 2
            return 6 + inner
        if e.func == "fits_int64":
            return 30 + inner  # walks the template in the interpreter: test it last
        return 2 + inner

    def _maybe_group(self, e: Expr) -> tuple[str, str] | None:
        return self._group(e) if sequence_names(e) else None

    # ----------------------------------------------------------------- identities
    def _term_op(self, e: Expr) -> tuple[Op, Expr, Expr] | None:
        """The operator ``e`` builds as a term, with its operands in built order."""
        if isinstance(e, Binary):
            flipped = {">": Op.LT, ">=": Op.LE}
            if e.op in flipped:
                return flipped[e.op], e.right, e.left
            direct = {
                "//": DIV_OF[self.term_sem],
                "%": MOD_OF[self.term_sem],
                "<": Op.LT,
                "<=": Op.LE,
                "==": Op.EQ,
                "!=": Op.NE,
            }
            if e.op in direct:
                return direct[e.op], e.left, e.right
            return None
        if isinstance(e, Call) and len(e.args) == 2:
            if e.func in _DIV_FUNCS:
                return _DIV_FUNCS[e.func], e.args[0], e.args[1]
            if e.func in ("max", "min"):
                return (Op.MAX if e.func == "max" else Op.MIN), e.args[0], e.args[1]
        return None

    def _same(self, e: Expr, p: Pattern) -> bool:
        """Whether ``e`` evaluates to the term pattern ``p`` matched (canonical rebuild)."""
        if isinstance(p, PTerm):
            return isinstance(e, Name) and e.name == p.name and e.kind is NameKind.TERM
        if isinstance(p, PConst):
            return isinstance(e, Name) and e.name == p.name and e.kind is NameKind.CONST
        if isinstance(p, PLit):
            return isinstance(e, Lit) and e.value == p.value
        if isinstance(p, POp):
            shape = self._term_op(e)
            if shape is None or self._type(e, self._maybe_group(e)) != TERM:
                return False
            op, left, right = shape
            if op is not pattern_op(p.op, self.sem):
                return False
            a, b = p.children
            if self._same(left, a) and self._same(right, b):
                return True
            return op in COMMUTATIVE and self._same(left, b) and self._same(right, a)
        return False

    def _identity(self, e: Expr) -> Path | None:
        if not isinstance(e, Binary | Call) or sequence_names(e):
            return None
        for path, p in self.nodes.items():
            if self._same(e, p):
                return path
        return None

    def _identity_paths(self, e: Expr) -> list[Path]:
        found = self._identity(e)
        if found is not None:
            return [found]
        out: list[Path] = []
        if isinstance(e, Unary):
            out += self._identity_paths(e.operand)
        elif isinstance(e, Binary):
            out += self._identity_paths(e.left) + self._identity_paths(e.right)
        elif isinstance(e, Call) and e.func not in _AGGREGATES:
            for a in e.args:
                out += self._identity_paths(a)
        return out

    # ------------------------------------------------------------------- emission
    def fresh(self, base: str) -> str:
        """A new local variable name."""
        self.counter += 1
        return f"{self.prefix}{base}{self.counter}"

    def rest_pairs(self, r: Rest, scale: str | None) -> str:
        """Code iterating the ``(atom, coefficient * scale)`` pairs of a rest."""
        if not r.used and scale is None:
            return f"zip({r.atoms}, {r.coefs})"
        a, c = self.fresh("x"), self.fresh("y")
        keep = " and ".join(f"{a} is not {u}" for u in r.used)
        cond = f" if {keep}" if keep else ""
        return f"[({a}, {_scaled(scale, c)}) for {a}, {c} in zip({r.atoms}, {r.coefs}){cond}]"

    def rest_code(self, r: Rest) -> str:
        """Code building a rest: the matched sum's pairs but the atoms its addends used."""
        drop = "".join(f"{u}, " for u in r.used)
        return f"linear_update({r.atoms}, {r.coefs}, ({drop}), (), {r.constant})"

    # ---------------------------------------------------------------- expressions
    def expr(self, e: Expr, ctx: Ctx) -> _C:
        """Compile ``e``; its names are bound (rests and cheap lets built) in ``ctx``."""
        group = self.group_of(ctx)
        ty = self._type(e, group)
        if ty == TERM:
            return _C(self.term(e, ctx), TERM)
        if isinstance(e, Lit):
            return _C(lit(e.value), INT)
        if isinstance(e, Name):
            if ctx.elem is not None and e.name in ctx.elem:
                return _C(ctx.elem[e.name], INT)
            b = ctx.st.binds[e.name]
            return _C(b.code, INT, b.term)
        if isinstance(e, Unary):
            c = self.expr(e.operand, ctx)
            if e.op == "not":
                return _C(f"(not {c.code})", BOOL)
            if c.ty == INT:
                return _C(f"(-{c.code})", INT)
            return _C(f"_neg_ext({self.ext(c)})", EXT)
        if isinstance(e, Binary):
            return self.binary(e, ctx)
        assert isinstance(e, Call)
        return self.call(e, ctx)

    def group_of(self, ctx: Ctx) -> tuple[str, str] | None:
        """The sequence ``ctx`` ranges over, inside an aggregate."""
        if ctx.elem is None:
            return None
        return self.seq_of[next(iter(ctx.elem))]

    def ext(self, c: _C) -> str:
        """Code for ``c`` as an extended integer (infinities as the reference's objects)."""
        if c.ty == RLO:
            return f"_lo({c.code})"
        if c.ty == RHI:
            return f"_hi({c.code})"
        return c.code

    def finite(self, c: _C) -> str:
        """Code for an int that must be finite (Undetermined otherwise)."""
        if c.ty in (RLO, RHI):
            return f"_fin_raw({c.code})"
        if c.ty == EXT:
            return f"_fin({c.code})"
        return c.code

    def as_term(self, c: _C) -> str:
        """Code turning a value into a term, as the reference's ``_to_term``."""
        if c.ty == TERM:
            return c.code
        if c.ty == INT:
            return c.term or f"const({c.code})"  # a literal the pattern matched is its term
        if c.ty in (RLO, RHI):
            return f"_const_raw({c.code})"
        if c.ty == EXT:
            return f"_const_ext({c.code})"
        raise Unsupported

    def simple(self, c: _C, ctx: Ctx) -> _C:
        """``c`` with code that may be evaluated twice: a local or a hoisted temporary."""
        if _SIMPLE.fullmatch(c.code) or ctx.pre is None:
            return c
        v = self.fresh("v")
        ctx.pre.append(f"{v} = {c.code}")
        return _C(v, c.ty)

    def binary(self, e: Binary, ctx: Ctx) -> _C:
        """A binary operator on numbers or conditions (terms go through :meth:`term`)."""
        op = e.op
        if op in ("and", "or"):
            a = self.expr(e.left, ctx)
            b = self.expr(e.right, ctx.lazy())
            return _C(f"({a.code} {op} {b.code})", BOOL)
        a = self.expr(e.left, ctx)
        b = self.expr(e.right, ctx)
        if op in _COMPARE:
            return self.compare(op, a, b, ctx)
        if a.ty == b.ty == INT:
            if op in ("+", "-", "*"):
                return _C(f"({a.code} {op} {b.code})", INT)
            sem = self.sem or Semantics.FLOOR
            # Python's own operator is floor division, and Euclidean by a positive divisor.
            literal = e.right.value if isinstance(e.right, Lit) else 0
            if literal > 0 or (literal != 0 and sem is Semantics.FLOOR):
                return _C(f"({a.code} {op} {b.code})", INT)
            ops = DIV_OF if op == "//" else MOD_OF
            return _C(f"{_INT_DIV_HELPER[ops[sem]]}({a.code}, {b.code})", INT)
        x, y = self.ext(a), self.ext(b)
        if op == "+":
            return _C(f"_add_ext({x}, {y})", EXT)
        if op == "-":
            return _C(f"_add_ext({x}, _neg_ext({y}))", EXT)
        if op == "*":
            return _C(f"_mul_ext({x}, {y})", EXT)
        name = (self.sem or Semantics.FLOOR).value
        return _C(f"_cdiv_ext({name!r}, {op == '//'}, {x}, {y})", EXT if op == "//" else INT)

    def compare(self, op: str, a: _C, b: _C, ctx: Ctx) -> _C:
        """A comparison of numbers; a raw bound against an int needs no infinity object."""
        if a.ty == b.ty == INT:
            return _C(f"({a.code} {op} {b.code})", BOOL)
        raw = (RLO, RHI)
        if EXT in (a.ty, b.ty):
            return _C(f"_cmp_ext({op!r}, {self.ext(a)}, {self.ext(b)})", BOOL)
        sa = -1 if a.ty == RLO else 1
        sb = -1 if b.ty == RLO else 1
        a, b = self.simple(a, ctx), self.simple(b, ctx)
        if not (_SIMPLE.fullmatch(a.code) and _SIMPLE.fullmatch(b.code)):
            return _C(f"_cmp_raw({op!r}, {a.code}, {sa}, {b.code}, {sb})", BOOL)
        if a.ty in raw and b.ty in raw:
            both = f"{a.code} is not None and {b.code} is not None"
            slow = f"_cmp_raw({op!r}, {a.code}, {sa}, {b.code}, {sb})"
            return _C(f"({a.code} {op} {b.code} if {both} else {slow})", BOOL)
        # One raw bound against a finite int: an infinite bound decides alone.
        r = a if a.ty in raw else b
        inf = POS_INF if r.ty == RHI else NEG_INF
        when_none = ref._compare(op, inf, 0) if r is a else ref._compare(op, 0, inf)
        return _C(f"({when_none} if {r.code} is None else {a.code} {op} {b.code})", BOOL)

    def call(self, e: Call, ctx: Ctx) -> _C:
        """A function of numbers; sequence arguments contribute every element."""
        f = e.func
        if f in _AGGREGATES:
            return self.aggregate(e, ctx)
        if f in ("vmin", "vmax"):
            return self.bound(f, e.args[0], ctx)
        if f == "fits_int64":
            return self.fits(e.args[0], ctx)
        if f == "tdivides":
            u, t = (self.as_term(self.expr(a, ctx)) for a in e.args)
            return _C(f"_tdivides({u}, {t})", BOOL)
        if f == "abs":
            c = self.expr(e.args[0], ctx)
            if c.ty == INT:
                return _C(f"abs({c.code})", INT)
            return _C(f"_abs_ext({self.ext(c)})", EXT)
        items: list[str] = []
        types: list[str] = []
        for a in e.args:
            if ctx.elem is None and sequence_names(a):
                c, loop = self.per_element(a, ctx)
                types.append(c.ty)
                if isinstance(a, Name):
                    items.append(f"*{ctx.st.binds[a.name].code}")
                else:
                    items.append(f"*[{self.ext(c)} {loop}]")
            else:
                c = self.expr(a, ctx)
                types.append(c.ty)
                items.append(self.ext(c))
        exact = all(t == INT for t in types)
        joined = ", ".join(items)
        if f in ("min", "max"):
            if exact:
                if len(items) == 1 and not items[0].startswith("*"):
                    return _C(items[0], INT)
                return _C(f"{f}([{joined}])", INT)
            return _C(f"_{f}_ext([{joined}])", EXT)
        if f == "gcd":
            if exact:
                return _C(f"_gcd({joined})", INT)
            return _C(f"_gcd_ext([{joined}])", INT)
        if f == "divides":
            d, n = items
            if exact and _SIMPLE.fullmatch(d) and _SIMPLE.fullmatch(n):
                return _C(f"({n} % {d} == 0 if {d} else {n} == 0)", BOOL)
            helper = "_divides" if exact else "_divides_ext"
            return _C(f"{helper}({joined})", BOOL)
        assert f in _DIV_FUNCS
        if exact:
            return _C(f"{_INT_DIV_HELPER[_DIV_FUNCS[f]]}({joined})", INT)
        return _C(f"_DIV_EXT[{f!r}]({joined})", INT)

    def fits(self, arg: Expr, ctx: Ctx) -> _C:
        """``fits_int64(arg)``: the shared template walk, given the names ``arg`` reads."""
        if ctx.elem is not None:
            raise Unsupported
        items = []
        for name in sorted(expr_names(arg)):
            b = ctx.st.binds.get(name)
            if b is None:
                raise Unsupported
            if b.kind == "term":
                code = self.term(Name(name, self.kinds.get(name, NameKind.TERM)), ctx)
            else:
                code = b.code
            items.append(f"{name!r}: {code}")
        index = _FITS_INDEX.setdefault((arg, self.sem), len(_FITS_CHECKS))
        if index == len(_FITS_CHECKS):
            _FITS_CHECKS.append(compile_fits(arg, self.sem))
        return _C(f"_FITS_CHECKS[{index}]({{{', '.join(items)}}})", BOOL)

    def per_element(self, body: Expr, ctx: Ctx) -> tuple[_C, str]:
        """Compile ``body`` for one element of its sequence: the code and its ``for`` clause."""
        group = self._group(body)
        k, t = group
        kv, tv = self.fresh("k"), self.fresh("u")
        elem = {k: kv, t: tv}
        inner = Ctx(ctx.st, elem, None, {}, frozenset())
        c = self.expr(body, inner)
        ks, ts = ctx.st.binds[k].code, ctx.st.binds[t].code
        return c, f"for {kv}, {tv} in zip({ks}, {ts})"

    def aggregate(self, e: Call, ctx: Ctx) -> _C:
        """``sum``/``all``/``any`` of numbers or conditions (a sum of terms is :meth:`term`)."""
        body = e.args[0]
        c, loop = self.per_element(body, ctx)
        if e.func in ("all", "any"):
            if self._raises(body, self._group(body)):
                return _C(f"{e.func}([{c.code} {loop}])", BOOL)
            return _C(f"{e.func}({c.code} {loop})", BOOL)
        if c.ty == INT:
            return _C(f"sum([{c.code} {loop}])", INT)
        return _C(f"_sum_ext([{self.ext(c)} {loop}])", EXT)

    def bound(self, f: str, arg: Expr, ctx: Ctx) -> _C:
        """``vmin``/``vmax`` of a term: a raw bound (None means unbounded)."""
        side, ty = (0, RLO) if f == "vmin" else (1, RHI)
        attr = "vmin" if f == "vmin" else "vmax"
        path = self._identity(arg)
        if path is not None and path in ctx.st.complete:
            return _C(f"{ctx.st.complete[path]}.{attr}", ty)
        if isinstance(arg, Name) and ctx.elem is None:
            return _C(f"{ctx.st.binds[arg.name].code}.{attr}", ty)
        shape = self._term_op(arg)
        if shape is not None and self._type(arg, self.group_of(ctx)) == TERM:
            if arg in ctx.ranges:
                return _C(f"{ctx.ranges[arg]}[{side}]", ty)
            op, left, right = shape
            a = self.as_term(self.expr(left, ctx))
            b = self.as_term(self.expr(right, ctx))
            code = f"_range2(_OP_{op.name}, {a}, {b})"
            if ctx.pre is None:
                return _C(f"{code}[{side}]", ty)
            v = self.fresh("rg")
            ctx.pre.append(f"{v} = {code}")
            ctx.ranges[arg] = v
            return _C(f"{v}[{side}]", ty)
        return _C(f"{self.term(arg, ctx)}.{attr}", ty)

    # -------------------------------------------------------------------- terms
    def term(self, e: Expr, ctx: Ctx) -> str:
        """Code building the term ``e`` (its static type is TERM)."""
        path = self._identity(e)
        if path is not None and path in ctx.st.complete:
            return ctx.st.complete[path]
        if isinstance(e, Name):
            if ctx.elem is not None and e.name in ctx.elem:
                return ctx.elem[e.name]
            b = ctx.st.binds[e.name]
            if b.rest is not None:
                if e.name not in ctx.fuse:
                    raise Unsupported  # cannot happen: rests are built before use
                return self.rest_code(b.rest)
            return b.code
        if (
            isinstance(e, Unary)
            or (isinstance(e, Binary) and e.op in ("+", "-"))
            or (isinstance(e, Call) and e.func == "sum")
            or (isinstance(e, Binary) and e.op == "*" and self.scaled(e, ctx) is not None)
        ):
            acc = _Lin()
            self.linear(e, None, ctx, acc)
            return self.linear_code(acc)
        if isinstance(e, Binary) and e.op == "*":
            x = self.as_term(self.expr(e.left, ctx))
            y = self.as_term(self.expr(e.right, ctx))
            return f"mul({x}, {y})"
        shape = self._term_op(e)
        if shape is None:
            if isinstance(e, Call) and e.func == "tquotient":
                t, u = (self.as_term(self.expr(a, ctx)) for a in e.args)
                return f"_tquotient({t}, {u})"
            if isinstance(e, Call) and e.func in ("max", "min"):
                fold = "maximum" if e.func == "max" else "minimum"
                codes = [self.as_term(self.expr(a, ctx)) for a in e.args]
                folded = codes[0]
                for c in codes[1:]:
                    folded = f"{fold}({folded}, {c})"
                return folded
            raise Unsupported
        op, left, right = shape
        x = self.as_term(self.expr(left, ctx))
        y = self.as_term(self.expr(right, ctx))
        if op in _TERM_DIVISION:
            return _TERM_DIVISION[op].format(x, y)
        if op is Op.MAX:
            return f"maximum({x}, {y})"
        if op is Op.MIN:
            return f"minimum({x}, {y})"
        return f"compare(_OP_{op.name}, {x}, {y})"

    def scaled(self, e: Binary, ctx: Ctx) -> tuple[Expr, Expr] | None:
        """``(number, term)`` if ``e`` is a product of a number and a term."""
        group = self.group_of(ctx)
        lt, rt = self._type(e.left, group), self._type(e.right, group)
        if lt in _NUMERIC and rt == TERM:
            return e.left, e.right
        if lt == TERM and rt in _NUMERIC:
            return e.right, e.left
        return None

    def linear(self, e: Expr, scale: str | None, ctx: Ctx, acc: _Lin) -> None:
        """Add the pairs and constants of ``scale * e`` (a sum, in canonical-form terms)."""
        group = self.group_of(ctx)
        ty = self._type(e, group)
        if ty != TERM:
            acc.consts.append(_scaled(scale, self.finite(self.expr(e, ctx))))
            return
        path = self._identity(e)
        if path is not None and path in ctx.st.complete:
            acc.pairs.append(f"({ctx.st.complete[path]}, {scale or 1})")
            return
        if isinstance(e, Unary):
            self.linear(e.operand, _negated(scale), ctx, acc)
            return
        if isinstance(e, Binary) and e.op in ("+", "-"):
            self.linear(e.left, scale, ctx, acc)
            right_scale = scale if e.op == "+" else _negated(scale)
            self.linear(e.right, right_scale, ctx, acc)
            return
        if isinstance(e, Binary) and e.op == "*":
            split = self.scaled(e, ctx)
            if split is not None:
                number, term = split
                factor = self.finite(self.expr(number, ctx))
                self.linear(term, _scaled(scale, factor), ctx, acc)
                return
        if isinstance(e, Name) and e.name in ctx.fuse and ctx.elem is None:
            rest = ctx.st.binds[e.name].rest
            assert rest is not None
            acc.rests.append((rest, scale))
            return
        if isinstance(e, Call) and e.func == "sum":
            body = e.args[0]
            group = self._group(body)
            k, t = group
            kv, tv = self.fresh("k"), self.fresh("u")
            inner = Ctx(ctx.st, {k: kv, t: tv}, None, {}, frozenset())
            sub = _Lin()
            self.linear(body, scale, inner, sub)
            if sub.rests:
                raise Unsupported  # cannot happen: rests are fused outside aggregates only
            loop = f"for {kv}, {tv} in zip({ctx.st.binds[k].code}, {ctx.st.binds[t].code})"
            acc.pairs.extend(f"*[{p} {loop}]" for p in sub.pairs)
            acc.consts.extend(f"sum([{c} {loop}])" for c in sub.consts)
            return
        acc.pairs.append(f"({self.term(e, ctx)}, {scale or 1})")

    def linear_code(self, acc: _Lin) -> str:
        """Code building the sum ``acc`` holds: one call to ``linear`` (or ``linear_update``).

        A sum rebuilt around its pattern's rest (``x + y`` with ``y`` the rest) starts from
        the matched sum's own pairs, dropping the atoms the pattern used.
        """
        if len(acc.rests) == 1 and acc.rests[0][1] is None:
            rest = acc.rests[0][0]
            constant = " + ".join([rest.constant, *acc.consts])
            drop = "".join(f"{u}, " for u in rest.used)
            extra = ", ".join(acc.pairs)
            return f"linear_update({rest.atoms}, {rest.coefs}, ({drop}), [{extra}], {constant})"
        pairs = list(acc.pairs)
        consts = list(acc.consts)
        for rest, scale in acc.rests:
            pairs.append(f"*{self.rest_pairs(rest, scale)}")
            consts.append(_scaled(scale, rest.constant))
        constant = " + ".join(consts) if consts else "0"
        return f"linear([{', '.join(pairs)}], {constant})"
