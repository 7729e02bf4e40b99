"""No rewrite introduces overflow: the guard ``fits_int64(e)`` and the rewriter's backstop.

A rewrite can compute an intermediate the input never did (``x*c2`` where the input had
``(x % c1)*c2`` and ``(x // c1)*c3``), and that one may overflow a machine integer although
every value of the input fits. Rules whose rewrite can do that say so in their guard with
``fits_int64(...)``; the prover's ``int64`` obligation then shows that nothing else can
overflow.

The check walks the *template*, not the canonical term it builds: each of its nodes
(operands, each ``K*t`` of a ``sum`` and its total, constants) gets a range from the
ranges of the matched terms through the interval transfer functions of
:mod:`quorem.interval`, which are proven sound (``quorem verify --obligation
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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Union

from . import interval as iv
from .ops import DIVISION_FUNCTIONS, Op, Semantics
from .rule import Binary, Call, Expr, Lit, Name, Unary, expr_names, sequence_names
from .term import Term

__all__ = ["INT64_MAX", "INT64_MIN", "FitsCheck", "compile_fits", "fits_int64", "term_fits_int64"]

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
    (True, Semantics.EUCLID): iv.eucliddiv_range,
    (False, Semantics.EUCLID): iv.euclidmod_range,
}
_COMPARE: Final = {"<", "<=", ">", ">=", "==", "!="}


def _computed_by_input(t: Term) -> bool:
    """Whether code for the matched input computes ``t`` itself, not only as a partial sum.

    A matched term is a node of the input, except the rest of a sum pattern, which is
    the matched sum without some addends: a sum with a constant or several addends the
    input adds up in its own order. One addend ``c*a`` is computed (scaled addends are).
    """
    return t.op is not Op.ADD or (len(t.args) == 1 and t.arg[1] == 0)


# A compiled template: its range under a binding ``env`` and the current index into the
# sequences (None outside ``sum``). Every node's range is checked, so a node outside
# int64 raises _TooWide at once.
_Node = Callable[[Mapping[str, Binding], "int | None"], _Range]


def _name_node(name: str) -> _Node:
    def node(env: Mapping[str, Binding], index: int | None) -> _Range:
        v = env[name]
        if isinstance(v, list | tuple):  # the compiled matcher binds sequences as tuples
            assert index is not None, "sequence name outside sum()"
            v = v[index]
        if isinstance(v, Term):
            lo, hi = v.vmin, v.vmax
            if _computed_by_input(v):
                # The input's code computes this value, and the promise is relative:
                # where every value of the input fits in int64, so does this one.
                lo = INT64_MIN if lo is None else max(lo, INT64_MIN)
                hi = INT64_MAX if hi is None else min(hi, INT64_MAX)
            return _check((lo, hi))
        assert isinstance(v, int)
        return _check((v, v))

    return node


def _too_wide(env: Mapping[str, Binding], index: int | None) -> _Range:
    raise _TooWide


def _binary_node(op: str, fa: _Node, fb: _Node, sem: Semantics) -> _Node:
    if op in _COMPARE:
        return lambda env, i: (fa(env, i), fb(env, i), (0, 1))[2]
    if op == "+":
        return lambda env, i: _check(iv.add_range([(1, fa(env, i)), (1, fb(env, i))], 0))
    if op == "-":
        return lambda env, i: _check(iv.add_range([(1, fa(env, i)), (-1, fb(env, i))], 0))
    if op == "*":
        return lambda env, i: _check(iv.mul_range(fa(env, i), fb(env, i)))
    if op in ("//", "%"):
        f = _DIVISION[(op == "//", sem)]
        return lambda env, i: _check(f(fa(env, i), fb(env, i)))
    return _too_wide  # and/or: conditions, not values


def _abs_range(r: _Range) -> _Range:
    lo, hi = r
    assert lo is not None and hi is not None
    return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))


def _magnitude_range(r: _Range) -> _Range:
    """``[-m, m]`` for the largest magnitude ``m`` in ``r``."""
    lo, hi = r
    assert lo is not None and hi is not None
    m = max(abs(lo), abs(hi))
    return (-m, m)


def _call_node(e: Call, sem: Semantics) -> _Node:
    f = e.func
    kids = [_compile(a, sem) for a in e.args]
    if f in ("vmin", "vmax"):
        (fa,) = kids
        pick = 0 if f == "vmin" else 1
        return lambda env, i: (fa(env, i)[pick],) * 2
    if f == "sum":
        return _sum_node(e.args[0], kids[0])
    if f in DIVISION_FUNCTIONS or f == "ceildiv":
        fd = iv.ceildiv_range if f == "ceildiv" else _DIVISION[DIVISION_FUNCTIONS[f]]
        fa, fb = kids
        return lambda env, i: _check(fd(fa(env, i), fb(env, i)))
    if f in ("min", "max") and len(kids) == 2:
        fm = iv.min_range if f == "min" else iv.max_range
        fa, fb = kids
        return lambda env, i: _check(fm(fa(env, i), fb(env, i)))
    if f == "abs":
        (fa,) = kids
        return lambda env, i: _check(_abs_range(fa(env, i)))
    if f == "tquotient":
        # t == q*u with u a non-zero integer, so |q| <= |t| (quorem.monomial).
        fa, fb = kids
        return lambda env, i: (fb(env, i), _check(_magnitude_range(fa(env, i))))[1]
    return _too_wide  # gcd, aggregates of conditions, ...: not needed by any rule


def _sum_node(body: Expr, fb: _Node) -> _Node:
    names = sequence_names(body)

    def node(env: Mapping[str, Binding], index: int | None) -> _Range:
        n = 0
        for name in names:
            v = env[name]
            if isinstance(v, list | tuple):
                n = len(v)
                break
        return _check(iv.add_range([(1, fb(env, k)) for k in range(n)], 0))

    return node


def _compile(e: Expr, sem: Semantics) -> _Node:
    """The template ``e`` as a tree of closures: built once, run at every match."""
    if isinstance(e, Lit):
        r = _check((e.value, e.value)) if INT64_MIN <= e.value <= INT64_MAX else None
        if r is None:
            return _too_wide
        return lambda env, i: r
    if isinstance(e, Name):
        return _name_node(e.name)
    if isinstance(e, Unary):
        if e.op == "not":
            return _too_wide  # a condition is not a value (the rules checker forbids it)
        fa = _compile(e.operand, sem)
        return lambda env, i: _check(iv.add_range([(-1, fa(env, i))], 0))
    if isinstance(e, Binary):
        return _binary_node(e.op, _compile(e.left, sem), _compile(e.right, sem), sem)
    return _call_node(e, sem)


# The fast path. Index arithmetic is small next to int64, so most checks can be settled
# by magnitudes alone: if every leaf (a matched term's bounds, a constant) is at most m
# in magnitude and sequences have n entries, every node of the template is at most a
# polynomial bound(m, n): |a+b| <= |a|+|b|, |a*b| <= |a|*|b|, |a//b| <= |a| and
# |a%b| < |b| for b != 0, a sum of n products <= n*|K|*|t|. Where that bound is inside
# int64, so is every node's interval, and the interval walk (tens of microseconds)
# would answer True too; otherwise it runs. A template with a node the bound does not
# cover, or a divisor that is not a name or a non-zero literal, never takes the fast
# path; nor does a binding where a divisor name is exactly 0 (no value at all: the walk
# answers False). A divisor may be a product of such names and literals.
# A bound: (m, n) -> (bound on the node's magnitude, bound on every node's below it).
_Bound = Callable[[int, int], tuple[int, int]]


def _bound(e: Expr, divisors: set[str]) -> _Bound | None:
    """The magnitude bound of template ``e``, or None; adds divisor names to ``divisors``."""
    if isinstance(e, Lit):
        v = abs(e.value)
        return lambda m, n: (v, v)
    if isinstance(e, Name):
        return lambda m, n: (m, m)
    if isinstance(e, Unary):
        return _bound(e.operand, divisors) if e.op == "-" else None
    if isinstance(e, Binary):
        return _binary_bound(e.op, e.left, e.right, divisors)
    if isinstance(e, Call):
        if e.func in ("vmin", "vmax", "abs") and len(e.args) == 1:
            return _bound(e.args[0], divisors)
        if (e.func in DIVISION_FUNCTIONS or e.func == "ceildiv") and len(e.args) == 2:
            # Any quotient, ceildiv's too, is no larger than its numerator in magnitude.
            op = "%" if e.func in DIVISION_FUNCTIONS and not DIVISION_FUNCTIONS[e.func][0] else "//"
            return _binary_bound(op, e.args[0], e.args[1], divisors)
        if e.func in ("min", "max") and len(e.args) == 2:
            return _binary_bound("max", e.args[0], e.args[1], divisors)
        if e.func == "sum" and len(e.args) == 1:
            body = _bound(e.args[0], divisors)
            if body is None:
                return None

            def sum_bound(m: int, n: int) -> tuple[int, int]:
                v, inner = body(m, n)
                total = n * v
                return total, max(total, inner)

            return sum_bound
    return None


def _nonzero_if_names_are(e: Expr, divisors: set[str]) -> bool:
    """Whether ``e`` is non-zero whenever the names it adds to ``divisors`` are.

    True for a name, a non-zero literal, and negations and products of those: a product
    of non-zero integers is non-zero.
    """
    if isinstance(e, Name):
        divisors.add(e.name)
        return True
    if isinstance(e, Lit):
        return e.value != 0
    if isinstance(e, Unary) and e.op == "-":
        return _nonzero_if_names_are(e.operand, divisors)
    if isinstance(e, Binary) and e.op == "*":
        return _nonzero_if_names_are(e.left, divisors) and _nonzero_if_names_are(e.right, divisors)
    return False


def _binary_bound(op: str, a: Expr, b: Expr, divisors: set[str]) -> _Bound | None:
    if op in ("//", "%") and not _nonzero_if_names_are(b, divisors):
        return None
    fa, fb = _bound(a, divisors), _bound(b, divisors)
    if fa is None or fb is None:
        return None

    def of(value: Callable[[int, int], int]) -> _Bound:
        def bound(m: int, n: int) -> tuple[int, int]:
            (va, ia), (vb, ib) = fa(m, n), fb(m, n)
            v = value(va, vb)
            return v, max(v, ia, ib)

        return bound

    if op in ("+", "-"):
        return of(lambda x, y: x + y)
    if op == "*":
        return of(lambda x, y: x * y)
    if op == "//":
        return of(lambda x, y: x)
    if op == "%":
        return of(lambda x, y: y)
    if op == "max":
        return of(max)
    if op in _COMPARE:
        return of(lambda x, y: 1)
    return None  # and/or: conditions, not values


def _largest_magnitude(bound: _Bound, n: int) -> int:
    """The largest leaf magnitude m for which ``bound(m, n)`` is inside int64 (-1: none).

    Every bound is non-decreasing in m, so a binary search finds it.
    """
    if bound(0, n)[1] > INT64_MAX:
        return -1
    lo, hi = 0, INT64_MAX  # bound(lo) fits; m > INT64_MAX never fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bound(mid, n)[1] <= INT64_MAX:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _leaf_magnitude(
    names: Sequence[str], divisors: Sequence[str]
) -> Callable[[Mapping[str, Binding]], tuple[int, int]]:
    """The largest magnitude of the leaves ``names`` bind and their sequences' length.

    The magnitude is -1 when a leaf is unbounded or a divisor is exactly 0.
    """

    def magnitude(env: Mapping[str, Binding]) -> tuple[int, int]:
        # Exact class tests: this runs at every rule match that reaches its guard.
        m = 0
        n = 0
        x: Any
        for name in names:
            v: Any = env[name]
            cls = v.__class__
            if cls is int:
                if v > m:
                    m = v
                elif -v > m:
                    m = -v
                continue
            items = (v,) if cls is Term else v
            if items is v:
                n = len(items)
            for x in items:
                if x.__class__ is Term:
                    lo, hi = x.vmin, x.vmax
                    if lo is None or hi is None:
                        return -1, n
                    if hi > m:  # noqa: PLR1730  (a call to max() costs more here)
                        m = hi
                    if -lo > m:  # noqa: PLR1730
                        m = -lo
                elif x > m:
                    m = x
                elif -x > m:
                    m = -x
        for name in divisors:
            v = env[name]
            for x in v if isinstance(v, list | tuple) else (v,):
                if x == 0 or (x.__class__ is Term and x.vmin == 0 and x.vmax == 0):
                    return -1, n
        return m, n

    return magnitude


FitsCheck = Callable[[Mapping[str, Binding]], bool]
_COMPILED: dict[tuple[Expr, Semantics], FitsCheck] = {}


def _interval_walk(e: Expr, sem: Semantics) -> FitsCheck:
    """``fits_int64(e)`` by the interval of every node: the definition the fast path meets."""
    node = _compile(e, sem)

    def walk(env: Mapping[str, Binding]) -> bool:
        try:
            node(env, None)
        except (_TooWide, ZeroDivisionError):
            return False
        return True

    return walk


def compile_fits(e: Expr, semantics: Semantics | None) -> FitsCheck:
    """``fits_int64(e)`` for one template, compiled once: call it with the bindings.

    The returned function answers as :func:`fits_int64` does, and never raises.
    """
    sem = semantics or Semantics.FLOOR
    check = _COMPILED.get((e, sem))
    if check is None:
        check = walk = _interval_walk(e, sem)
        divisors: set[str] = set()
        bound = _bound(e, divisors)
        if bound is not None:
            magnitude = _leaf_magnitude(sorted(expr_names(e)), sorted(divisors))
            limits: dict[int, int] = {}

            def fast(env: Mapping[str, Binding]) -> bool:
                m, n = magnitude(env)
                limit = limits.get(n)
                if limit is None:
                    limit = limits[n] = _largest_magnitude(bound, n)
                return (0 <= m <= limit) or walk(env)

            check = fast
        _COMPILED[(e, sem)] = check
    return check


def fits_int64(e: Expr, env: Mapping[str, Binding], semantics: Semantics | None) -> bool:
    """Whether every node of template ``e`` provably lies in int64 under ``env``.

    ``env`` binds the rule's names as the matcher and lets do. True promises: at every
    point of the matched terms' ranges where every value the input computes is in int64,
    every value the template computes (each operand, each ``K*t`` and the total of a
    ``sum``, the result) is in ``[-2**63, 2**63 - 1]``. False means that could not be
    shown; it never raises.
    """
    return compile_fits(e, semantics)(env)


def term_fits_int64(t: Term) -> bool:
    """Whether every value code for ``t`` holds provably fits in int64, by value ranges.

    That is every subterm, every constant and every ``c*a`` of a sum. Each node knows
    this from its construction (``Term.fits64``), so the answer costs nothing.
    """
    return t.fits64
