"""No rewrite introduces overflow: the guard ``fits_int64(e)`` and the rewriter's backstop.

A rewrite can compute an intermediate the input never did (``x*c2`` where the input had
``(x % c1)*c2`` and ``(x // c1)*c3``), and that one may overflow a machine integer although
every value of the input fits. Rules whose rewrite can do that say so in their guard with
``fits_int64(...)``; the prover's ``int64`` obligation then shows that nothing else can
overflow.

The check walks the *template*, not the canonical term it builds: each of its nodes
(operands, each ``K*t`` of a ``sum`` and its total, constants) gets a range from the
ranges of the matched terms through the interval transfer functions of
:mod:`quorem.engine.interval`, which are proven sound (``quorem verify --obligation
interval``). A matched term the input computes (any node of it but the rest of a sum
pattern, a partial sum) counts as ranging over int64 at most, since the promise is
relative: where every value of the input fits. The guard holds only if every range
lies inside int64, so every value the template computes does, which is the premise
the prover's int64 obligation assumes for it. A partial sum or a value built from an
unbounded one (a variable declared without bounds, scaled) does not fit.

The rules' proofs cover their templates. Building a canonical term can still create a
value no template shows (negating a matched sum scales each of its addends), so the
rewriter also refuses any rewrite whose result does not provably fit in int64 by value
ranges when its input did (:func:`term_fits_int64`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Union

from quorem.engine import interval as iv
from quorem.engine.ops import DIVISION_FUNCTIONS, Op, Semantics
from quorem.engine.rule import Binary, Call, Expr, Lit, Name, Unary, sequence_names
from quorem.engine.term import Term

__all__ = ["INT64_MAX", "INT64_MIN", "fits_int64", "term_fits_int64"]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

Binding = Union[Term, int, Sequence[Term], Sequence[int]]  # noqa: UP007
_Range = iv.Range


class _TooWide(Exception):  # noqa: N818  (control flow: stop at the first wide node)
    pass


def _check(r: _Range) -> _Range:
    lo, hi = r
    if lo is None or hi is None or lo < INT64_MIN or hi > INT64_MAX:
        raise _TooWide
    return r


_DIVISION: Final = {
    (True, Semantics.FLOOR): iv.floordiv_range,
    (False, Semantics.FLOOR): iv.floormod_range,
    (True, Semantics.TRUNC): iv.truncdiv_range,
    (False, Semantics.TRUNC): iv.truncmod_range,
}
_COMPARE: Final = {"<", "<=", ">", ">=", "==", "!="}


def _computed_by_input(t: Term) -> bool:
    """Whether code for the matched input computes ``t`` itself, not only as a partial sum.

    A matched term is a node of the input, except the rest of a sum pattern, which is
    the matched sum without some addends: a sum with a constant or several addends the
    input adds up in its own order. One addend ``c*a`` is computed (scaled addends are).
    """
    return t.op is not Op.ADD or (len(t.args) == 1 and t.arg[1] == 0)


class _Walk:
    def __init__(self, env: Mapping[str, Binding], semantics: Semantics) -> None:
        self.env = env
        self.sem = semantics
        self.index: int | None = None

    def name(self, e: Name) -> _Range:
        v = self.env[e.name]
        if isinstance(v, list | tuple):  # the compiled matcher binds sequences as tuples
            assert self.index is not None, "sequence name outside sum()"
            v = v[self.index]
        if isinstance(v, Term):
            lo, hi = v.vmin, v.vmax
            if _computed_by_input(v):
                # The input's code computes this value, and the promise is relative:
                # where every value of the input fits in int64, so does this one.
                lo = INT64_MIN if lo is None else max(lo, INT64_MIN)
                hi = INT64_MAX if hi is None else min(hi, INT64_MAX)
            return (lo, hi)
        assert isinstance(v, int)
        return (v, v)

    def range(self, e: Expr) -> _Range:
        return _check(self.node(e))

    def node(self, e: Expr) -> _Range:
        if isinstance(e, Lit):
            return (e.value, e.value)
        if isinstance(e, Name):
            return self.name(e)
        if isinstance(e, Unary):
            if e.op == "not":
                raise _TooWide  # a condition is not a value (the rules checker forbids it)
            return iv.add_range([(-1, self.range(e.operand))], 0)
        if isinstance(e, Binary):
            return self.binary(e)
        return self.call(e)

    def binary(self, e: Binary) -> _Range:
        a = self.range(e.left)
        b = self.range(e.right)
        op = e.op
        if op == "+":
            return iv.add_range([(1, a), (1, b)], 0)
        if op == "-":
            return iv.add_range([(1, a), (-1, b)], 0)
        if op == "*":
            return iv.mul_range(a, b)
        if op in ("//", "%"):
            return _DIVISION[(op == "//", self.sem)](a, b)
        if op in _COMPARE:
            return (0, 1)
        raise _TooWide  # and/or: conditions, not values

    def call(self, e: Call) -> _Range:
        f = e.func
        if f in ("vmin", "vmax"):
            lo, hi = self.range(e.args[0])
            v = lo if f == "vmin" else hi
            return (v, v)
        if f == "sum":
            return self.sum(e.args[0])
        if f in DIVISION_FUNCTIONS:
            a, b = (self.range(x) for x in e.args)
            return _DIVISION[DIVISION_FUNCTIONS[f]](a, b)
        if f in ("min", "max") and len(e.args) == 2:
            a, b = (self.range(x) for x in e.args)
            return iv.min_range(a, b) if f == "min" else iv.max_range(a, b)
        if f == "abs":
            lo, hi = self.range(e.args[0])
            assert lo is not None and hi is not None
            return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
        raise _TooWide  # gcd, aggregates of conditions, ...: not needed by any rule

    def sum(self, body: Expr) -> _Range:
        n = self._length(body)
        parts: list[tuple[int, _Range]] = []
        for i in range(n):
            self.index = i
            try:
                parts.append((1, self.range(body)))
            finally:
                self.index = None
        return iv.add_range(parts, 0)

    def _length(self, e: Expr) -> int:
        for name in sequence_names(e):
            v = self.env[name]
            if isinstance(v, list | tuple):
                return len(v)
        return 0


def fits_int64(e: Expr, env: Mapping[str, Binding], semantics: Semantics | None) -> bool:
    """Whether every node of template ``e`` provably lies in int64 under ``env``.

    ``env`` binds the rule's names as the matcher and lets do. True promises: at every
    point of the matched terms' ranges where every value the input computes is in int64,
    every value the template computes (each operand, each ``K*t`` and the total of a
    ``sum``, the result) is in ``[-2**63, 2**63 - 1]``. False means that could not be
    shown; it never raises.
    """
    try:
        _Walk(env, semantics or Semantics.FLOOR).range(e)
    except (_TooWide, ZeroDivisionError):
        return False
    return True


def _own_fits(t: Term) -> bool:
    """Whether ``t``'s own value, constants and scaled addends have ranges inside int64."""
    lo, hi = t.vmin, t.vmax
    if lo is None or hi is None or lo < INT64_MIN or hi > INT64_MAX:
        return False
    if t.op is Op.ADD:
        coefs, offset = t.arg
        if not INT64_MIN <= offset <= INT64_MAX:
            return False
        for a, c in zip(t.args, coefs, strict=True):
            alo, ahi = a.vmin, a.vmax
            if alo is None or ahi is None:
                return False
            # c*a is linear in a: its extremes are at the ends of a's range.
            x, y = c * alo, c * ahi
            if not (INT64_MIN <= x <= INT64_MAX and INT64_MIN <= y <= INT64_MAX):
                return False
    return True


def _fits(t: Term, depth: int) -> bool:
    ok = t.fits64
    if ok is not None:
        return ok
    if depth > _MAX_RECURSION:
        raise RecursionError
    ok = _own_fits(t)
    for a in t.args:
        # Every operand gets a definite answer cached, even after a failure.
        ok = _fits(a, depth + 1) and ok
    t.fits64 = ok
    return ok


_MAX_RECURSION: Final = 200


def term_fits_int64(t: Term) -> bool:
    """Whether every value code for ``t`` holds provably fits in int64, by value ranges.

    That is every subterm, every constant and every ``c*a`` of a sum. The answer is cached
    on each node (terms are immutable), so asking again, or about a term sharing
    subterms, costs little; deep terms are walked without deep recursion.
    """
    ok = t.fits64
    if ok is not None:
        return ok
    try:
        return _fits(t, 0)
    except RecursionError:
        pass
    # A deep term: answer bottom-up without recursion.
    stack = [t]
    while stack:
        u = stack[-1]
        pending = [a for a in u.args if a.fits64 is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if u.fits64 is None:
            u.fits64 = _own_fits(u) and all(a.fits64 for a in u.args)
    return bool(t.fits64)
