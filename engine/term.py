"""Hash-consed integer terms in a canonical form.

Every term is built by the functions of this module and interned: two structurally
equal terms are the same Python object, so ``a is b`` decides equality. The intern
table holds terms weakly, so terms nobody references are freed.

The canonical form is the commutative-ring normal form over opaque atoms:

* a sum is one flat ``ADD`` node ``c_1*t_1 + ... + c_n*t_n + k`` whose atoms ``t_i`` are
  distinct, non-constant, not sums themselves, sorted by a structural key, with non-zero
  integer coefficients; ``x + 0``, ``x*1``, ``x*0``, ``x - x`` and ``c*(a + b)`` are
  therefore normalised on construction;
* a product of non-constant factors is one flat ``MUL`` node of sorted factors, its
  constant coefficient lifted into an ``ADD``;
* the operands of ``max``, ``min``, ``==`` and ``!=`` are sorted; ``a > b`` is ``b < a``.

The order is derived from structure only, never from construction order, so
``add(a, b) is add(b, a)`` always. Every node carries its value range ``vmin..vmax``
(``None`` for an unbounded side), computed once at construction.

One name is one variable: a term may not hold ``var("x", 0, 31)`` and ``var("x", 0, 7)``
(it would print as ``x - x``, text for another term). Building such a term is allowed;
:func:`check_one_name`, which ``simplify`` and ``explain`` call first, raises
VariableClashError naming the variable and both bounds. An error rather than the
intersection of the bounds: which range the user meant cannot be known, and a silent
intersection would change the value of the term where the wider range holds.

Threads
-------
Terms are immutable, and building them is thread-safe: equal terms built by different
threads at the same time are one object, so ``a is b`` decides equality whichever threads
built them. This needs no lock: a new term is entered in the intern table with one
``dict.setdefault``, atomic because the key hashes and compares in C, and the thread
that loses a race returns the winner's term (see ``_lost_race``); its cost was measured
against a lock with ``benchmarks/intern_cost.py``. ``quorem.parse``, ``simplify`` and
``explain`` keep their state in their own call, so they may run in many threads at once
on shared terms. A :class:`~quorem.ruleset.RuleSet` may be shared: it is not
changed after construction except for its dispatchers, compiled on first use under a
lock (rule compilation fills a table shared by all rules, so it is serialised too);
``default_ruleset()`` and ``constraint_ruleset()`` load once, under the same lock. The
per-name count of live variables behind :func:`check_one_name` is updated under a lock,
and deaths (reported by weak-reference callbacks, which take no lock) are counted off
later, so it can overstate, never miss, a clash.

On a free-threaded CPython (3.13t, no GIL) the same code relies only on what that build
guarantees: individual ``dict`` and ``list`` operations are atomic, and the locks above
are real locks. It is not tested there (the test suite runs on CPython 3.11 with a GIL);
``tests/test_threads.py`` is the test to run on such a build.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import math
import operator
import threading
import weakref
from _weakref import _remove_dead_weakref  # type: ignore[attr-defined]
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, NoReturn

from . import interval as iv
from .errors import DivisionByZeroError, TermError, VariableClashError
from .ops import DIV_OF, MOD_OF, Op, Semantics
from .printer import brief, int_text, to_text
from .syntax import RESERVED

__all__ = [
    "Term",
    "as_term",
    "binary",
    "ceildiv",
    "check_one_name",
    "compare",
    "conjunction",
    "const",
    "disjunction",
    "div",
    "junction_chain",
    "junction_clauses",
    "linear",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "nodes",
    "product",
    "sum_of",
    "var",
]

# Operators and semantics as module constants: attribute access on an Enum class is slow
# in CPython 3.11, and these are tested on every node built.
_CONST, _VAR, _ADD, _MUL, _MAX, _MIN = Op.CONST, Op.VAR, Op.ADD, Op.MUL, Op.MAX, Op.MIN
_FLOORDIV, _FLOORMOD, _TRUNCDIV, _TRUNCMOD = Op.FLOORDIV, Op.FLOORMOD, Op.TRUNCDIV, Op.TRUNCMOD
_EUCLIDDIV, _EUCLIDMOD, _CEILDIV = Op.EUCLIDDIV, Op.EUCLIDMOD, Op.CEILDIV
_LT, _LE, _EQ, _NE = Op.LT, Op.LE, Op.EQ, Op.NE
_AND, _OR = Op.AND, Op.OR
_S_FLOOR: Final = Semantics.FLOOR
_OP_VALUE: Final = tuple(op.value for op in Op)  # _OP_VALUE[op] is op.value, fast

_TABLE: Final[weakref.WeakValueDictionary[tuple[Any, ...], Term]] = weakref.WeakValueDictionary()
_RANK: Final[dict[Op, int]] = {op: i for i, op in enumerate(Op)}
_KEYWORDS: Final = frozenset({"and", "or", "not"})  # operators of the text syntax
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_MINUS_ONE_HASH: Final = 0x2545F4914F6CDD1D  # hash(-1) == hash(-2) in CPython; keep them apart


def _ihash(v: int) -> int:
    return _MINUS_ONE_HASH if v == -1 else hash(v)


class Term:
    """An interned integer expression node.

    Attributes:
        op: the operator.
        args: the operand terms (for ``ADD``, the atoms of the sum).
        arg: extra data: the value of a ``CONST``; ``(name, lo, hi)`` of a ``VAR``;
            ``(coefficients, constant)`` of an ``ADD``; ``None`` otherwise.
        vmin: a lower bound of the term's value on its domain, or ``None`` (unbounded).
        vmax: an upper bound of the term's value on its domain, or ``None`` (unbounded).

    """

    __slots__ = ("__weakref__", "arg", "args", "fits64", "h", "op", "skey", "vmax", "vmin")

    op: Op
    args: tuple[Term, ...]
    arg: Any
    vmin: int | None
    vmax: int | None
    skey: tuple[Any, ...]
    h: int  # deterministic structural hash (independent of PYTHONHASHSEED)
    # Whether every intermediate's range lies in int64 (see quorem.overflow): the
    # node's own range, a sum's constant and each c*t, and every operand's fits64. Set
    # at construction from what it computes anyway; the rewriter asks it at every step.
    fits64: bool

    def __init__(self) -> None:
        raise TypeError("build terms with quorem.var, quorem.const, quorem.parse or operators")

    # Python operators build terms (floor semantics for // and %).
    def __add__(self, other: Term | int) -> Term:
        return linear([(self, 1), (as_term(other), 1)])

    def __radd__(self, other: int) -> Term:
        return linear([(as_term(other), 1), (self, 1)])

    def __sub__(self, other: Term | int) -> Term:
        return linear([(self, 1), (as_term(other), -1)])

    def __rsub__(self, other: int) -> Term:
        return linear([(as_term(other), 1), (self, -1)])

    def __neg__(self) -> Term:
        return linear([(self, -1)])

    def __pos__(self) -> Term:
        return self

    def __mul__(self, other: Term | int) -> Term:
        return mul(self, as_term(other))

    def __rmul__(self, other: int) -> Term:
        return mul(as_term(other), self)

    def __floordiv__(self, other: Term | int) -> Term:
        return div(self, as_term(other), Semantics.FLOOR)

    def __rfloordiv__(self, other: int) -> Term:
        return div(as_term(other), self, Semantics.FLOOR)

    def __mod__(self, other: Term | int) -> Term:
        return mod(self, as_term(other), Semantics.FLOOR)

    def __rmod__(self, other: int) -> Term:
        return mod(as_term(other), self, Semantics.FLOOR)

    def __lt__(self, other: Term | int) -> Term:
        return compare(_LT, self, as_term(other))

    def __le__(self, other: Term | int) -> Term:
        return compare(_LE, self, as_term(other))

    def __gt__(self, other: Term | int) -> Term:
        return compare(_LT, as_term(other), self)

    def __ge__(self, other: Term | int) -> Term:
        return compare(_LE, as_term(other), self)

    def __bool__(self) -> NoReturn:
        raise TypeError("a quorem term has no truth value; use `is` to compare terms")

    def __str__(self) -> str:
        return to_text(self)

    def __repr__(self) -> str:
        return f"Term({str(self)!r})"

    def __reduce__(self) -> tuple[Callable[[list[_Node]], Term], tuple[list[_Node]]]:
        """Pickle support: the term's nodes, interned again where it is unpickled.

        Unpickled, the term is the very object an equal term built there is (bounds,
        semantics and all; see :func:`_unpickle`).
        """
        return _unpickle, (_nodes_of(self),)

    @property
    def is_const(self) -> bool:
        """True if the term is an integer literal."""
        return self.op is _CONST

    @property
    def value(self) -> int:
        """The value of a constant term. Raises TermError for any other term."""
        if self.op is not _CONST:
            raise TermError(f"{self} is not a constant")
        return int(self.arg)

    @property
    def name(self) -> str:
        """The name of a variable term. Raises TermError for any other term."""
        if self.op is not _VAR:
            raise TermError(f"{self} is not a variable")
        return str(self.arg[0])

    def addends(self) -> tuple[list[tuple[Term, int]], int]:
        """View the term as a sum: its ``(atom, coefficient)`` pairs and its constant."""
        if self.op is _ADD:
            return list(zip(self.args, self.arg[0], strict=True)), self.arg[1]
        if self.op is _CONST:
            return [], self.arg
        return [(self, 1)], 0


def _range_of(op: Op, args: tuple[Term, ...], arg: Any) -> iv.Range:
    if op is _CONST:
        return (arg, arg)
    if op is _VAR:
        return (arg[1], arg[2])
    if op is _ADD:
        return _sum_range(args, arg[0], arg[1])
    if op is _FLOORDIV or op is _FLOORMOD or op is _EUCLIDDIV or op is _EUCLIDMOD:
        fast = _floor_by_positive_const(op, args[0], args[1])
        if fast is not None:
            return fast
    ranges = [(t.vmin, t.vmax) for t in args]
    if op is _MUL:
        return functools.reduce(iv.mul_range, ranges)
    a, b = ranges
    return _BINARY_RANGE[op](a, b)


def _sum_range(atoms: tuple[Term, ...], coefs: tuple[int, ...], const: int) -> iv.Range:
    """``iv.add_range`` of a sum's atoms, inlined (it runs for every sum built)."""
    lo: int | None = const
    hi: int | None = const
    for t, c in zip(atoms, coefs, strict=False):
        # c * t ranges over [c*vmin, c*vmax] for c > 0 and [c*vmax, c*vmin] for c < 0.
        if c > 0:
            tlo, thi = t.vmin, t.vmax
        else:
            tlo, thi = t.vmax, t.vmin
        lo = None if lo is None or tlo is None else lo + c * tlo
        hi = None if hi is None or thi is None else hi + c * thi
    return (lo, hi)


def _floor_by_positive_const(op: Op, a: Term, b: Term) -> iv.Range | None:
    """The common case, a bounded numerator over a positive constant, without the general code.

    Euclidean division by a positive divisor is floor division, so it takes this path too.
    """
    lo, hi, d = a.vmin, a.vmax, b.arg
    if b.op is not _CONST or d <= 0 or lo is None or hi is None:
        return None
    if op is _FLOORDIV or op is _EUCLIDDIV:
        return (lo // d, hi // d)
    if lo // d == hi // d:
        k = lo // d
        return (lo - k * d, hi - k * d)
    return (0, d - 1)


_BINARY_RANGE: Final[dict[Op, Callable[[iv.Range, iv.Range], iv.Range]]] = {
    _FLOORDIV: iv.floordiv_range,
    _FLOORMOD: iv.floormod_range,
    _TRUNCDIV: iv.truncdiv_range,
    _TRUNCMOD: iv.truncmod_range,
    _EUCLIDDIV: iv.eucliddiv_range,
    _EUCLIDMOD: iv.euclidmod_range,
    _CEILDIV: iv.ceildiv_range,
    _MAX: iv.max_range,
    _MIN: iv.min_range,
    _LT: functools.partial(iv.compare_range, True),
    _LE: functools.partial(iv.compare_range, False),
    _EQ: functools.partial(iv.equality_range, True),
    _NE: functools.partial(iv.equality_range, False),
    _AND: functools.partial(iv.logic_range, True),
    _OR: functools.partial(iv.logic_range, False),
}


def _structural_hash(op: Op, args: tuple[Term, ...], arg: Any) -> int:
    value = _OP_VALUE[op]
    if len(args) == 2:
        return hash((value, args[0].h, args[1].h))
    if op is _ADD:
        coefs = arg[0]
        if -1 in coefs:
            hashes = tuple([_MINUS_ONE_HASH if c == -1 else hash(c) for c in coefs])
        else:
            hashes = tuple(map(hash, coefs))
        extra = hash((hashes, _ihash(arg[1])))
        return hash((value, tuple(map(_hash_of, args)), extra))
    return hash((value, tuple(map(_hash_of, args))))


class _KeyedRef(weakref.ref):  # type: ignore[type-arg]
    """``weakref.KeyedRef`` without its Python-level constructor (built for every new term)."""

    __slots__ = ("key",)
    key: tuple[Any, ...]


# The intern table's internals, used directly on the hot path: its ``data`` maps keys to
# keyed weak references, and ``_remove`` (the callback) drops an entry when its term dies
# (only if the entry is still that dead reference: the dictionary's own guarantee).
_DATA: Final[dict[tuple[Any, ...], Any]] = _TABLE.data  # type: ignore[attr-defined]
_REMOVE: Final[Callable[[Any], None]] = getattr(_TABLE, "_remove")  # noqa: B009
_SETDEFAULT: Final[Callable[[tuple[Any, ...], Any], Any]] = _DATA.setdefault
_ITERATING: Final[set[Any]] = getattr(_TABLE, "_iterating")  # noqa: B009
_PENDING: Final[list[Any]] = getattr(_TABLE, "_pending_removals")  # noqa: B009


def _lost_race(key: tuple[Any, ...], ref: _KeyedRef, got: Any) -> Term:
    """The term to return when ``_SETDEFAULT(key, ref)`` found the entry ``got`` instead.

    Interning needs no lock. A new term is entered with one ``dict.setdefault``, which
    finds or inserts atomically: its key hashes and compares in C (operators are
    ``IntEnum``s, terms compare by identity), so no other thread runs in between under
    the GIL, and a free-threaded build locks the dictionary for the call. The thread
    that loses returns the winner's term and drops its own. An entry whose term is dead
    (its removal callback has not run yet: it is running in another thread, or the
    table is being iterated) is removed only if it is still dead, atomically, and the
    insertion retried.
    """
    while True:
        found: Term | None = got()
        if found is not None:
            return found
        _remove_dead_weakref(_DATA, key)
        got = _SETDEFAULT(key, ref)
        if got is ref:
            alive: Term = ref()  # the caller holds it
            return alive


assert [op.value for op in Op] == list(range(len(Op)))  # ops index tuples
_SKEY_HEAD: Final = tuple(2 + _RANK[op] for op in Op)  # first item of a compound's skey
_ADD_VALUE: Final = Op.ADD.value
_ADD_SKEY_HEAD: Final = _SKEY_HEAD[Op.ADD]


def _make(op: Op, args: tuple[Term, ...], arg: Any) -> Term:
    key = (op, args, arg)
    ref = _DATA.get(key)
    if ref is not None:
        found: Term | None = ref()
        if found is not None:
            return found
    term = object.__new__(Term)
    term.op = op
    term.args = args
    term.arg = arg
    lo, hi = term.vmin, term.vmax = _range_of(op, args, arg)
    fits = lo is not None and hi is not None and lo >= _INT64_MIN and hi <= _INT64_MAX
    # (Sums are built by _make_sum, which also checks each c*t.)
    term.fits64 = fits and all(a.fits64 for a in args)
    if op is _CONST:
        term.h = _ihash(arg)
        term.skey = (0, arg)
    else:  # (variables are made by _make_var)
        h = term.h = _structural_hash(op, args, arg)
        term.skey = (_SKEY_HEAD[op], h)
    ref = _KeyedRef(term, _REMOVE)
    ref.key = key
    got = _SETDEFAULT(key, ref)  # atomic find-or-insert: see _lost_race
    return term if got is ref else _lost_race(key, ref, got)


def _make_binary(op: Op, a: Term, b: Term) -> Term:
    """``_make(op, (a, b), None)`` for a binary operator other than ``MUL``, inlined."""
    args = (a, b)
    key = (op, args, None)
    ref = _DATA.get(key)
    if ref is not None:
        found: Term | None = ref()
        if found is not None:
            return found
    term = object.__new__(Term)
    term.op = op
    term.args = args
    term.arg = None
    lo, hi, d = a.vmin, a.vmax, b.arg
    if (
        (op is _FLOORDIV or op is _FLOORMOD or op is _EUCLIDDIV or op is _EUCLIDMOD)
        and b.op is _CONST
        and d > 0
        and lo is not None
        and hi is not None
    ):  # _floor_by_positive_const
        if op is _FLOORDIV or op is _EUCLIDDIV:
            term.vmin, term.vmax = lo // d, hi // d
        elif lo // d == hi // d:
            k = lo // d
            term.vmin, term.vmax = lo - k * d, hi - k * d
        else:
            term.vmin, term.vmax = 0, d - 1
    else:
        term.vmin, term.vmax = _BINARY_RANGE[op]((lo, hi), (b.vmin, b.vmax))
    lo, hi = term.vmin, term.vmax
    term.fits64 = (
        a.fits64
        and b.fits64
        and lo is not None
        and hi is not None
        and lo >= _INT64_MIN
        and hi <= _INT64_MAX
    )
    h = term.h = hash((_OP_VALUE[op], a.h, b.h))
    term.skey = (_SKEY_HEAD[op], h)
    ref = _KeyedRef(term, _REMOVE)
    ref.key = key
    got = _SETDEFAULT(key, ref)  # atomic find-or-insert: see _lost_race
    return term if got is ref else _lost_race(key, ref, got)


class _VarRef(_KeyedRef):
    """The intern table's reference to a variable; ``counted`` once it is in ``_LIVE``."""

    __slots__ = ("counted",)
    counted: bool


def _make_var(arg: tuple[str, int | None, int | None]) -> Term:
    """``_make(VAR, (), arg)``, also counting the live variables of each name.

    A variable is counted in ``_LIVE`` before it is entered in the table, and its
    reference's callback reports its death (``_var_died``); a term that lost the race
    to enter the table is counted off at once, and its death is not reported.
    """
    key = (_VAR, (), arg)
    ref = _DATA.get(key)
    if ref is not None:
        found: Term | None = ref()
        if found is not None:
            return found
    term = object.__new__(Term)
    term.op = _VAR
    term.args = ()
    term.arg = arg
    lo, hi = term.vmin, term.vmax = arg[1], arg[2]
    term.fits64 = lo is not None and hi is not None and lo >= _INT64_MIN and hi <= _INT64_MAX
    term.h = _var_hash(arg)
    term.skey = (1, arg[0], term.h)
    new = _VarRef(term, _var_died)
    new.key = key
    # Counted before it is entered: another thread may find it in the table at once,
    # and must not see it uncounted. Counted off again if another term wins the race.
    name = arg[0]
    # A new name's dict is made before the lock is taken (see _NAMES_LOCK), and only
    # then: an allocation per variable would bring the cyclic collector's runs forward.
    fresh: dict[tuple[str, int | None, int | None], int] | None = None
    if name not in _LIVE:
        fresh = {}
    with _NAMES_LOCK:
        if _DEATHS:
            _settle()
        variants = _LIVE.get(name)
        if variants is None:
            variants = _LIVE[name] = {} if fresh is None else fresh  # (rare: a race)
        variants[arg] = variants.get(arg, 0) + 1
        if len(variants) > 1:
            _CLASHING.add(name)
    new.counted = True
    got = _SETDEFAULT(key, new)
    if got is not new:
        won = _lost_race(key, new, got)
        if won is not term:  # (it is when a dead entry was replaced by ``new``)
            new.counted = False  # before ``term`` can die: its death is not reported
            _DEATHS.append(arg)  # counted off at the next settle
            return won
    return term


# One name, one variable. Variables are interned by (name, lo, hi), so two variables may
# share a name; a term holding both prints as text that parses back as another term
# (``x - x``). ``_LIVE`` counts, per name and bounds, the variables entered in the table
# and not known dead; ``_CLASHING`` holds the names with two or more bounds there. It is
# almost always empty, and then check_one_name costs one test. Deaths are reported by the
# weak references' callback without a lock (it can run inside a garbage collection
# triggered while the lock is held) and counted off under the lock, later: the counts
# may still include dead variables, never miss a live one.
_LIVE: Final[dict[str, dict[tuple[str, int | None, int | None], int]]] = {}
_CLASHING: Final[set[str]] = set()
_DEATHS: Final[list[tuple[str, int | None, int | None]]] = []
# Held only around code that allocates no object the cyclic collector tracks (counts are
# keyed by the variables' existing ``arg`` tuples), so no collection, and no finalizer
# that might build a variable and wait for this lock, runs while it is held.
_NAMES_LOCK: Final = threading.Lock()


def _var_died(ref: Any) -> None:
    # What the table's own callback (_REMOVE) does, inlined: a variable dies per creation.
    if _ITERATING:
        _PENDING.append(ref.key)
    else:
        _remove_dead_weakref(_DATA, ref.key)
    if ref.counted:
        _DEATHS.append(ref.key[2])  # list.append is atomic: no lock in a callback


def _settle() -> None:
    """Count off the reported deaths (with ``_NAMES_LOCK`` held)."""
    while _DEATHS:
        arg = _DEATHS.pop()
        name = arg[0]
        variants = _LIVE[name]
        left = variants[arg] - 1
        if left:
            variants[arg] = left
        else:
            del variants[arg]
            if len(variants) < 2:
                _CLASHING.discard(name)
            if not variants:
                del _LIVE[name]


def check_one_name(term: Term) -> None:
    """Raise VariableClashError if ``term`` holds two variables with one name.

    Two variables of ``term`` with the same name and different bounds are two variables
    to the term but one to its text (``x - x`` parses back as ``0``), so the rewriter and
    the emitters refuse them. The error names the variable and both bounds. Costs one
    test while no name has two live variables anywhere; otherwise one pass over the
    term's distinct nodes.
    """
    if not _CLASHING:
        return
    with _NAMES_LOCK:
        _settle()
    clashing = frozenset(_CLASHING)  # (one C-level copy: atomic)
    if not clashing:
        return
    first: dict[str, tuple[str, int | None, int | None]] = {}
    for t in nodes(term):
        if t.op is _VAR:
            name = t.arg[0]
            if name in clashing:
                other = first.setdefault(name, t.arg)
                if other != t.arg:
                    raise VariableClashError(name, other[1:], t.arg[1:])


def _structural_cmp(a: Term, b: Term) -> int:
    """Total order on structure, used only when two structural keys collide."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        kx = (_RANK[x.op], repr(x.arg) if x.op is not _CONST else "")
        ky = (_RANK[y.op], repr(y.arg) if y.op is not _CONST else "")
        if x.op is _CONST and y.op is _CONST:
            return -1 if x.arg < y.arg else 1
        if kx != ky:
            return -1 if kx < ky else 1
        if len(x.args) != len(y.args):
            return -1 if len(x.args) < len(y.args) else 1
        stack.extend(reversed(list(zip(x.args, y.args, strict=True))))
    return 0


def _sorted(terms: Iterable[Term]) -> list[Term]:
    out = sorted(terms, key=_skey)
    if len(out) > 1:
        prev = out[0]
        for cur in itertools.islice(out, 1, None):
            if prev.skey == cur.skey and prev is not cur:
                return sorted(out, key=functools.cmp_to_key(_structural_cmp))
            prev = cur
    return out


_skey: Final[Callable[[Term], tuple[Any, ...]]] = operator.attrgetter("skey")
_hash_of: Final[Callable[[Term], int]] = operator.attrgetter("h")


def op_block(atoms: Sequence[Term], op: Op) -> tuple[int, int]:
    """The slice ``atoms[i:j]`` of the atoms with operator ``op``, for the atoms of a sum.

    A sum's atoms are ordered by operator first (the structural key, and the structural
    order used when keys collide, both start with the operator's rank), so the atoms with
    one operator are contiguous; this finds them by bisection.
    """
    return (
        bisect.bisect_left(atoms, op, key=_op_of),
        bisect.bisect_right(atoms, op, key=_op_of),
    )


def atom_ops(atoms: Sequence[Term]) -> set[Op]:
    """The operators of a sum's atoms, one bisection per operator (see :func:`op_block`)."""
    out: set[Op] = set()
    i, n = 0, len(atoms)
    while i < n:
        op = atoms[i].op
        out.add(op)
        i = bisect.bisect_right(atoms, op, lo=i, key=_op_of)
    return out


_op_of: Final[Callable[[Term], Op]] = operator.attrgetter("op")


def const(value: int) -> Term:
    """The constant term with the given integer value."""
    if value.__class__ is not int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TermError(f"a constant must be an int, not {type(value).__name__}")
    return _make(_CONST, (), value)


def _var_hash(arg: tuple[str, int | None, int | None]) -> int:
    """A variable's structural hash, the same in every process (not ``hash()``)."""
    try:
        text = repr(arg)
    except ValueError:
        # Bounds past Python's int/str digit limit: written in hex, which has none (no
        # bound that repr can write looks like this, so no two variables share a text).
        name, lo, hi = arg
        text = f"{name!r}:{lo if lo is None else hex(lo)}:{hi if hi is None else hex(hi)}"
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def var(name: str, lo: int | None = None, hi: int | None = None) -> Term:
    """The variable ``name`` ranging over the inclusive interval ``[lo, hi]``.

    ``None`` leaves a side unbounded. Variables with the same name and bounds are the
    same term; the same name with other bounds is a different term, and one term must
    not hold both: :func:`check_one_name` (run by ``simplify`` and ``explain``) raises
    VariableClashError for ``var("x", 0, 31) - var("x", 0, 7)``, which would otherwise
    print as ``x - x``.
    """
    if (
        not isinstance(name, str)
        or not name.isidentifier()
        or name in _KEYWORDS
        or name in RESERVED
    ):
        # A reserved word would print as text that reads back as something else. (Other
        # non-ASCII identifiers are allowed: internal stand-ins use them precisely because
        # no text can; printed, they are a parse error, never another term.)
        shown = repr(name)[:60] if isinstance(name, str) else type(name).__name__
        raise TermError(f"variable name {shown} is not an identifier outside the reserved words")
    for side in (lo, hi):
        if side is not None and (isinstance(side, bool) or not isinstance(side, int)):
            kind = type(side).__name__
            raise TermError(f"bound of variable {name} is not an int or None: {kind}")
    if lo is not None and hi is not None and lo > hi:
        raise TermError(f"variable {name} has an empty range [{int_text(lo)}, {int_text(hi)}]")
    if lo is not None and lo == hi and not _POINT_VARIABLES:
        _POINT_VARIABLES.append(True)
    return _make_var((name, lo, hi))


_POINT_VARIABLES: Final[list[bool]] = []  # non-empty once a one-value variable was built


def point_variables_built() -> bool:
    """Whether a variable with a one-value range was built in this process.

    Until one is, the rewriter skips its pass that puts such variables' values in.
    """
    return bool(_POINT_VARIABLES)


def as_term(value: Term | int) -> Term:
    """``value`` itself if it is a term, else the constant term of the int ``value``."""
    if isinstance(value, Term):
        return value
    return const(value)


def _accumulate(acc: dict[Term, int], pairs: Iterable[tuple[Term, int]], constant: int) -> int:
    """Add ``c * t`` for each pair into ``acc`` (sums flattened); return the new constant."""
    for term, coeff in pairs:
        if coeff == 0:
            continue
        op = term.op
        if op is _CONST:
            constant += coeff * term.arg
        elif op is _ADD:
            for atom, c in zip(term.args, term.arg[0], strict=True):
                acc[atom] = acc.get(atom, 0) + coeff * c
            constant += coeff * term.arg[1]
        else:
            acc[term] = acc.get(term, 0) + coeff
    return constant


def linear(pairs: Iterable[tuple[Term, int]], constant: int = 0) -> Term:
    """The canonical term of ``constant + sum(c * t for t, c in pairs)``.

    Nested sums are flattened, constants folded and like atoms collected; the cost is
    linear in the number of atoms involved.
    """
    acc: dict[Term, int] = {}
    return _linear_from(acc, _accumulate(acc, pairs, constant))


def _linear_from(acc: dict[Term, int], constant: int) -> Term:
    atoms = [t for t, c in acc.items() if c != 0] if 0 in acc.values() else list(acc)
    if not atoms:
        return const(constant)
    if len(atoms) == 1 and constant == 0 and acc[atoms[0]] == 1:
        return atoms[0]
    if len(atoms) > 1:
        atoms = _sorted(atoms)
    return _make_sum(tuple(atoms), tuple([acc[t] for t in atoms]), constant)


def _make_sum(atoms: tuple[Term, ...], coefs: tuple[int, ...], constant: int) -> Term:
    """``_make(ADD, atoms, (coefs, constant))``, with the range and hash computed inline."""
    arg = (coefs, constant)
    key = (_ADD, atoms, arg)
    ref = _DATA.get(key)
    if ref is not None:
        found: Term | None = ref()
        if found is not None:
            return found
    term = object.__new__(Term)
    term.op = _ADD
    term.args = atoms
    term.arg = arg
    lo: int | None = constant
    hi: int | None = constant
    fits = _INT64_MIN <= constant <= _INT64_MAX
    try:  # every bound finite, the usual case: c * None raises
        for t, c in zip(atoms, coefs, strict=False):
            x = c * t.vmin  # type: ignore[operator]
            y = c * t.vmax  # type: ignore[operator]
            if c > 0:
                lo += x  # type: ignore[operator]
                hi += y  # type: ignore[operator]
            else:
                lo += y  # type: ignore[operator]
                hi += x  # type: ignore[operator]
            # Each c*t is a value the sum's code computes (quorem.overflow).
            if fits and not (
                t.fits64 and _INT64_MIN <= x <= _INT64_MAX and _INT64_MIN <= y <= _INT64_MAX
            ):
                fits = False
    except TypeError:
        lo, hi = _sum_range(atoms, coefs, constant)
        fits = False
    term.vmin = lo
    term.vmax = hi
    term.fits64 = fits and lo >= _INT64_MIN and hi <= _INT64_MAX  # type: ignore[operator]
    if len(atoms) == 2:  # _structural_hash
        h = hash((_ADD_VALUE, atoms[0].h, atoms[1].h))
    else:
        hashes = tuple([_MINUS_ONE_HASH if c == -1 else hash(c) for c in coefs])
        extra = hash((hashes, _MINUS_ONE_HASH if constant == -1 else hash(constant)))
        h = hash((_ADD_VALUE, tuple([t.h for t in atoms]), extra))
    term.h = h
    term.skey = (_ADD_SKEY_HEAD, h)
    ref = _KeyedRef(term, _REMOVE)
    ref.key = key
    got = _SETDEFAULT(key, ref)  # atomic find-or-insert: see _lost_race
    return term if got is ref else _lost_race(key, ref, got)


def linear_update(
    atoms: Sequence[Term],
    coefs: Sequence[int],
    drop: Sequence[Term],
    pairs: Iterable[tuple[Term, int]],
    constant: int,
) -> Term:
    """``linear`` of a sum's ``(atoms, coefs)`` pairs without the atoms ``drop``, plus ``pairs``.

    The same term as ``linear([(a, c) for a, c in zip(atoms, coefs) if a not in drop] +
    list(pairs), constant)`` for the distinct atoms of a canonical sum, built with fewer
    passes over a long sum (its pairs are already collected).
    """
    acc = dict(zip(atoms, coefs, strict=True))
    for a in drop:
        del acc[a]
    return _linear_from(acc, _accumulate(acc, pairs, constant))


def sum_of(terms: Iterable[Term | int]) -> Term:
    """The canonical sum of ``terms`` (linear time; prefer it to a loop of ``+``)."""
    return linear((as_term(t), 1) for t in terms)


def _split_scale(t: Term) -> tuple[int, Term]:
    """Write a product's factor ``t`` as ``c * u``, with ``u`` not scaled: its canonical part.

    A scaled atom ``c*a`` gives ``(c, a)``; a sum gives its content, the gcd of its
    coefficients and constant signed like its first coefficient, and the primitive sum
    left (``2*w + 2*y`` is ``2 * (w + y)``). Otherwise ``w * (2*(w + y))``, whose inner
    product distributes into ``w*(w*2 + y*2)``, and ``w * 2 * (w + y)``, built as one
    product, would be two terms for one expression.
    """
    if t.op is not _ADD:
        return 1, t
    coefs, constant = t.arg
    if len(coefs) == 1 and constant == 0:
        return coefs[0], t.args[0]
    g = math.gcd(constant, *coefs)
    if coefs[0] < 0:
        g = -g
    if g == 1:
        return 1, t
    return g, linear(zip(t.args, [c // g for c in coefs], strict=True), constant // g)


def mul(a: Term, b: Term) -> Term:
    """The canonical term of ``a * b``."""
    return product([a, b])


def product(factors: Sequence[Term]) -> Term:
    """The canonical term of the product of ``factors``."""
    scale = 1
    atoms: list[Term] = []
    for f in factors:
        if f.op is _CONST:
            scale *= f.arg
            continue
        c, u = _split_scale(f)
        scale *= c
        if u.op is _MUL:
            atoms.extend(u.args)
        else:
            atoms.append(u)
    if scale == 0 or not atoms:
        return const(scale)
    if len(atoms) == 1:
        return linear([(atoms[0], scale)])
    core = _make(_MUL, tuple(_sorted(atoms)), None)
    return core if scale == 1 else linear([(core, scale)])


def _zero_divisor(a: Term, op_text: str) -> NoReturn:
    raise DivisionByZeroError(f"division by zero in ({brief(a)}) {op_text} 0")


def div(a: Term, b: Term, semantics: Semantics) -> Term:
    """The quotient term ``a / b`` rounded per ``semantics``.

    Raises TermError if ``b`` is the constant zero.
    """
    if b.op is _CONST and b.arg == 0:
        _zero_divisor(a, "//" if semantics is Semantics.FLOOR else f"{semantics.value}div")
    return _make_binary(_FLOORDIV if semantics is _S_FLOOR else DIV_OF[semantics], a, b)


def mod(a: Term, b: Term, semantics: Semantics) -> Term:
    """The remainder term of ``a / b`` per ``semantics``.

    Raises TermError if ``b`` is the constant zero.
    """
    if b.op is _CONST and b.arg == 0:
        _zero_divisor(a, "%" if semantics is Semantics.FLOOR else f"{semantics.value}mod")
    return _make_binary(_FLOORMOD if semantics is _S_FLOOR else MOD_OF[semantics], a, b)


def ceildiv(a: Term, b: Term) -> Term:
    """The quotient term ``ceil(a / b)``: rounded up, whatever the signs, in every semantics.

    Raises TermError if ``b`` is the constant zero.
    """
    if b.op is _CONST and b.arg == 0:
        _zero_divisor(a, "ceildiv")
    return _make_binary(_CEILDIV, a, b)


def _ordered_pair(a: Term, b: Term) -> tuple[Term, Term]:
    ka, kb = a.skey, b.skey
    if ka < kb or a is b:
        return a, b
    if kb < ka:
        return b, a
    first, second = _sorted([a, b])  # colliding keys: the structural order decides
    return first, second


def maximum(a: Term, b: Term) -> Term:
    """The term ``max(a, b)``."""
    return _make_binary(_MAX, *_ordered_pair(a, b))


def minimum(a: Term, b: Term) -> Term:
    """The term ``min(a, b)``."""
    return _make_binary(_MIN, *_ordered_pair(a, b))


def _sides(a: Term, b: Term) -> tuple[Term, Term]:
    """The canonical sides of a comparison ``a op b``.

    An atom on both sides is cancelled, its net coefficient kept on the side whose
    coefficient dominated (``x*2 + y < x + 5`` is ``x + y < 5``); atoms on one side stay
    there, so a sum keeps its signs (``4*a - 8*b + r < 16``, as tinygrad writes it). The
    constants move right, or left when no atom is left: ``x - 20 < -12`` is ``x < 8``,
    ``x + 1 < y + 1`` is ``x < y``, ``x - 24 == 4`` is ``x == 28``, ``3 < x//4`` stays.
    Where the new sides would not fit int64 and the old ones do, they stay as they are.
    """
    if a.op is _CONST and b.op is _CONST:
        return a, b
    pa, ka = a.addends()
    pb, kb = b.addends()
    moves = ka if pa else kb  # a constant beside atoms on the left, or right of a constant
    if not moves and not (pa and pb and not {t for t, _ in pa}.isdisjoint(t for t, _ in pb)):
        return a, b  # already canonical: the common case, at no cost
    left = dict(pa)
    right = dict(pb)
    for t in set(left) & set(right):
        ca, cb = left.pop(t), right.pop(t)
        net = ca - cb
        if net and (net > 0) == (ca > 0):
            left[t] = net
        elif net:
            right[t] = -net
    k = kb - ka  # the constant on the right once every constant moves there
    if not _INT64_MIN <= k <= _INT64_MAX or not _INT64_MIN <= -k <= _INT64_MAX:
        return a, b
    if left:
        new_a, new_b = linear(left.items()), linear(right.items(), k)
    else:
        new_a, new_b = const(-k), linear(right.items())
    if a.fits64 and b.fits64 and not (new_a.fits64 and new_b.fits64):
        return a, b
    return new_a, new_b


def _equation_sides(a: Term, b: Term) -> tuple[Term, Term]:
    """The operands of ``a == b`` (or ``!=``): a function of ``a - b`` up to its sign.

    The difference is signed so that its first atom (in the structural order) has a
    positive coefficient; its positive atoms go left, the others and the constant right
    (``x - y == 3`` and ``y + 3 == x`` are both ``x == y + 3``). So an equation does not
    depend on the orientation or grouping its sides came in, and built again from its
    own operands it is the same term (its text parses back to it). Where the new sides
    would not fit int64 and the old ones do, the old ones stay, in sorted order.
    """
    if a.op is _CONST and b.op is _CONST:
        return _ordered_pair(a, b)
    acc: dict[Term, int] = {}
    k = 0
    for t, sign in ((a, 1), (b, -1)):
        pairs, kt = t.addends()
        for atom, c in pairs:
            acc[atom] = acc.get(atom, 0) + sign * c
        k += sign * kt
    live = [t for t, c in acc.items() if c]
    if not live:
        return _ordered_pair(const(k), const(0))
    if acc[_sorted(live)[0]] < 0:
        acc = {t: -c for t, c in acc.items()}
        k = -k
    if not _INT64_MIN <= k <= _INT64_MAX or not _INT64_MIN <= -k <= _INT64_MAX:
        return _ordered_pair(a, b)
    left = linear([(t, c) for t, c in acc.items() if c > 0])
    right = linear([(t, -c) for t, c in acc.items() if c < 0], -k)
    if a.fits64 and b.fits64 and not (left.fits64 and right.fits64):
        return _ordered_pair(a, b)
    return left, right


def compare(op: Op, a: Term, b: Term) -> Term:
    """The 0/1 term ``a op b`` for ``op`` in ``LT``, ``LE``, ``EQ``, ``NE``.

    The sides are canonical (see :func:`_sides`): ``x - 20 < -12`` is ``x < 8`` and
    ``x + 1 < y + 1`` is ``x < y``; a sum keeps its atoms on its side. Sides that are
    both constants (``w < w`` once ``w`` cancels) give the constant ``0`` or ``1``.
    """
    if op is _EQ or op is _NE:
        a, b = _equation_sides(a, b)
    elif op is _LT or op is _LE:
        a, b = _sides(a, b)
    else:
        raise TermError(f"{op.name} is not a comparison")
    if a.op is _CONST and b.op is _CONST:
        # Sides that cancelled (``w < w`` is ``0 < 0``) or constants: the value itself,
        # so a divisor that is such a comparison is seen to be 0 where it is built.
        return const(int(_CONSTANT_COMPARISON[op](a.arg, b.arg)))
    return _make_binary(op, a, b)


_CONSTANT_COMPARISON: Final = {
    _LT: operator.lt,
    _LE: operator.le,
    _EQ: operator.eq,
    _NE: operator.ne,
}


# ---------------------------------------------------------------------------- logic
# ``and`` and ``or`` are logical over integers: an operand is true where it is non-zero,
# and the value is 0 or 1. A conjunction is kept as a chain of binary nodes over its
# clauses, flattened, without duplicates, sorted and nested to the right
# (``c1 and (c2 and c3)``), so every association and order of the same clauses is one
# term, and the matcher, the walkers and the prover see ordinary binary operators.
# There is no ``not`` node: ``not c`` is built as the negated comparison, or by De Morgan,
# or as ``c == 0``.


def _known_true(t: Term) -> bool:
    lo, hi = t.vmin, t.vmax
    return (lo is not None and lo > 0) or (hi is not None and hi < 0)


def _known_false(t: Term) -> bool:
    return t.vmin == 0 and t.vmax == 0


def _is_boolean(t: Term) -> bool:
    lo, hi = t.vmin, t.vmax
    return lo is not None and hi is not None and lo >= 0 and hi <= 1


def _junction(op: Op, items: Iterable[Term]) -> Term:
    """The canonical conjunction (``op`` AND) or disjunction (OR) of ``items``.

    A clause decided by its range is dropped (true in a conjunction, false in a
    disjunction) or decides the whole; a clause and its negation decide it too. Each
    clause is kept 0/1-valued (``clause != 0`` where it is not), so one clause left is
    the result itself.
    """
    conj = op is _AND
    stack = list(items)
    seen: dict[Term, None] = {}
    while stack:
        t = stack.pop()
        if t.op is op:
            stack.extend(t.args)
        elif _known_false(t):
            if conj:
                return const(0)
        elif _known_true(t):
            if not conj:
                return const(1)
        elif not _is_boolean(t):
            # A clause stands for its truth value, and is stored as one: ``y or y - 4``
            # is ``y != 0 or y != 4`` however it was built (whole, or a pair at a time,
            # where the pair ``y or y`` is already ``y != 0``).
            stack.append(compare(_NE, t, const(0)))
        elif (
            t.op is _NE and _is_boolean(t.args[0]) and t.args[1].op is _CONST and t.args[1].arg == 0
        ):
            stack.append(t.args[0])  # u != 0 is u itself for a 0/1-valued u
        else:
            seen[t] = None
    for t in seen:
        if t.op in _COMPARISON_OPS and _negated_comparison(t) in seen:
            return const(0 if conj else 1)
    if not seen:
        return const(1 if conj else 0)
    clauses = _sorted(seen)
    if len(clauses) == 1:
        return clauses[0]
    acc = clauses[-1]
    for c in reversed(clauses[:-1]):
        acc = _make_binary(op, c, acc)
    if not _LOGIC_BUILT:
        _LOGIC_BUILT.append(True)
    return acc


_LOGIC_BUILT: Final[list[bool]] = []  # non-empty once any and/or node has been built


def logic_built() -> bool:
    """Whether any ``and``/``or`` node was built in this process (else none exists).

    Until one is, the rewriter skips its pass over conjunctions.
    """
    return bool(_LOGIC_BUILT)


def junction_clauses(t: Term, limit: int | None = None) -> list[Term]:
    """The clauses of ``t``, an ``and`` or ``or`` chain, in canonical order (else ``[t]``).

    With ``limit``, ``[]`` for a chain of more clauses (found without reading them all).
    """
    op = t.op
    if op is not _AND and op is not _OR:
        return [t]
    out: list[Term] = []
    while t.op is op:  # chains nest to the right: iterate, do not recurse
        if limit is not None and len(out) >= limit:
            return []
        out.append(t.args[0])
        t = t.args[1]
    out.append(t)
    return out


def junction_chain(op: Op, clauses: Sequence[Term]) -> Term:
    """The chain of ``op`` over clauses taken, in order, from one canonical chain.

    Such clauses need no canonicalization again (they are sorted, distinct and
    undecided), so this is the sub-chain itself; one clause is that clause.
    """
    acc = clauses[-1]
    for c in reversed(clauses[:-1]):
        acc = _make_binary(op, c, acc)
    return acc


def conjunction(clauses: Iterable[Term]) -> Term:
    """The 0/1 term true where every clause is non-zero (``1`` for no clauses)."""
    return _junction(_AND, clauses)


def disjunction(clauses: Iterable[Term]) -> Term:
    """The 0/1 term true where some clause is non-zero (``0`` for no clauses)."""
    return _junction(_OR, clauses)


def logical_and(a: Term, b: Term) -> Term:
    """The term ``a and b``: 1 where both are non-zero, else 0."""
    return _junction(_AND, (a, b))


def logical_or(a: Term, b: Term) -> Term:
    """The term ``a or b``: 1 where either is non-zero, else 0."""
    return _junction(_OR, (a, b))


def _negated_comparison(t: Term) -> Term:
    a, b = t.args
    op = t.op
    if op is _LT:
        return compare(_LE, b, a)
    if op is _LE:
        return compare(_LT, b, a)
    return compare(_NE if op is _EQ else _EQ, a, b)


def _negated_atom(t: Term) -> Term:
    if t.op is _CONST:
        return const(int(t.arg == 0))
    if t.op in _COMPARISON_OPS:
        return _negated_comparison(t)
    return compare(_EQ, t, const(0))


def logical_not(t: Term) -> Term:
    """The term ``not t``: 1 where ``t`` is 0, else 0.

    A comparison is negated (``not a < b`` is ``b <= a``), a conjunction or disjunction
    by De Morgan's laws down to its clauses, anything else is ``t == 0``. Iterative:
    junctions nested to any depth are negated without recursion.
    """
    if t.op is not _AND and t.op is not _OR:
        return _negated_atom(t)
    stack: list[tuple[Term, bool]] = [(t, False)]
    negated: dict[Term, Term] = {}
    while stack:
        node, ready = stack.pop()
        if node in negated:
            continue
        if node.op is not _AND and node.op is not _OR:
            negated[node] = _negated_atom(node)
        elif ready:
            dual = _OR if node.op is _AND else _AND
            negated[node] = _junction(dual, [negated[a] for a in node.args])
        else:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if a not in negated)
    return negated[t]


_COMPARISON_OPS: Final = frozenset({_LT, _LE, _EQ, _NE})
_QUOTIENT_SEMANTICS: Final = {op: sem for sem, op in DIV_OF.items()}
_REMAINDER_SEMANTICS: Final = {op: sem for sem, op in MOD_OF.items()}


def binary(op: Op, a: Term, b: Term) -> Term:
    """Build the binary term ``op(a, b)`` for any binary operator, in canonical form."""
    if op is _MUL:
        return mul(a, b)
    if op is _ADD:
        return linear([(a, 1), (b, 1)])
    if op in _QUOTIENT_SEMANTICS:
        return div(a, b, _QUOTIENT_SEMANTICS[op])
    if op in _REMAINDER_SEMANTICS:
        return mod(a, b, _REMAINDER_SEMANTICS[op])
    if op is _CEILDIV:
        return ceildiv(a, b)
    if op is _MAX:
        return maximum(a, b)
    if op is _MIN:
        return minimum(a, b)
    if op is _AND or op is _OR:
        return _junction(op, (a, b))
    return compare(op, a, b)


def lookup(op: Op, args: tuple[Term, ...], arg: Any = None) -> Term | None:
    """The live interned term ``(op, args, arg)`` if there is one; never builds a term.

    For a division, remainder or ``<``/``<=``, ``lookup(op, (a, b))`` is ``binary(op, a, b)``
    when that term exists, and None otherwise (matchers use it to ask whether a term occurs
    without creating it).
    """
    return _TABLE.get((op, args, arg))


def binary_range(op: Op, a: Term, b: Term) -> iv.Range:
    """The value range ``binary(op, a, b)`` has, computed without building that term.

    ``op`` is a division, remainder, comparison, ``MAX``, ``MIN`` (or ``AND``/``OR``, which
    are built: their canonical form may fold them). Raises TermError for a
    division or remainder by the constant zero, as :func:`binary` does.
    """
    assert op not in _NOT_BINARY, op
    if op in _DIVISIONS and b.op is _CONST and b.arg == 0:
        raise DivisionByZeroError("division by zero")
    if op is _EQ or op is _NE:
        a, b = _equation_sides(a, b)
    elif op is _LT or op is _LE:
        a, b = _sides(a, b)
    elif op in _SORTED_PAIRS:
        a, b = _ordered_pair(a, b)
    if op is _AND or op is _OR:
        built = binary(op, a, b)  # the junction's canonical form may fold it: build it
        return built.vmin, built.vmax
    return _range_of(op, (a, b), None)


_DIVISIONS: Final = frozenset(
    {_FLOORDIV, _FLOORMOD, _TRUNCDIV, _TRUNCMOD, _EUCLIDDIV, _EUCLIDMOD, _CEILDIV}
)
_SORTED_PAIRS: Final = frozenset({_EQ, _NE, _MAX, _MIN})
_NOT_BINARY: Final = frozenset({_CONST, _VAR, _ADD, _MUL})


def rebuild(term: Term, args: Sequence[Term]) -> Term:
    """``term`` with its operands replaced by ``args``, in canonical form."""
    op = term.op
    if op is _ADD:
        return linear(zip(args, term.arg[0], strict=True), term.arg[1])
    if op is _MUL:
        return product(args)
    if not args:
        return term
    a, b = args
    return binary(op, a, b)


# ---------------------------------------------------------------------------- pickling
# A pickled term is its distinct nodes, operands first: ``(op, operand indices, arg)``
# per node, an operand named by its index in the list. Flat, so a term of any depth
# pickles without recursion, and a subterm shared within the term is written once.
_Node = tuple[int, tuple[int, ...], Any]


def _nodes_of(term: Term) -> list[_Node]:
    """``term``'s distinct nodes in post-order, each as ``(op value, operand indices, arg)``."""
    index: dict[Term, int] = {}
    nodes: list[_Node] = []
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, ready = stack.pop()
        if t in index:
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((a, False) for a in reversed(t.args) if a not in index)
            continue
        index[t] = len(nodes)
        nodes.append((_OP_VALUE[t.op], tuple([index[a] for a in t.args]), t.arg))
    return nodes


def _unpickle(nodes: list[_Node]) -> Term:
    """The term :func:`_nodes_of` wrote, interned in this process.

    Each node is entered in the intern table as it was built where it was pickled (its
    canonical form is not computed again, so it cannot come out as another term), and
    the process-wide facts the rewriter consults are recorded as the constructors do:
    a one-value variable was built (:func:`point_variables_built`), an ``and``/``or``
    node was (:func:`logic_built`); variables are counted for :func:`check_one_name`.
    """
    built: list[Term] = []
    for value, operands, arg in nodes:
        op = Op(value)
        args = tuple([built[i] for i in operands])
        if op is _VAR:
            t = var(*arg)
        elif op is _CONST:
            t = const(arg)
        elif op is _ADD:
            t = _make_sum(args, tuple(arg[0]), arg[1])
        elif op is _MUL:
            t = _make(_MUL, args, None)
        else:
            if (op is _AND or op is _OR) and not _LOGIC_BUILT:
                _LOGIC_BUILT.append(True)
            t = _make_binary(op, *args)
        built.append(t)
    return built[-1]


def nodes(term: Term) -> Iterator[Term]:
    """Every distinct node of ``term`` once (in no promised order); any depth."""
    seen: set[Term] = set()
    stack = [term]
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        yield t
        stack.extend(t.args)
