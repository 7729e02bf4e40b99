"""Soundness and tightness of the interval transfer functions in quorem.interval.

The exhaustive tests take every interval with endpoints in [-6, 6] or unbounded (``None``)
and every pair of such intervals. Bounded intervals are enumerated completely; an
unbounded side is checked against every value in a window around zero plus a few far
values, which covers every sign and bucket case of the small endpoints.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import intervals, point_values
from support import examples

from quorem import arith
from quorem import interval as iv
from quorem.evaluation import evaluate
from quorem.ops import Op, Semantics
from quorem.term import Term, compare, const, div, maximum, minimum, mod, var

Range = tuple[int | None, int | None]
BinaryRange = Callable[[Range, Range], Range]
BinaryOp = Callable[[int, int], int]

ENDS = range(-6, 7)
WINDOW = range(-14, 15)
FAR = (-(10**12), -(10**6) - 1, -1000, 1000, 10**6 + 1, 10**12)

BOUNDED: list[Range] = [(lo, hi) for lo in ENDS for hi in ENDS if lo <= hi]
UNBOUNDED: list[Range] = [(None, e) for e in ENDS] + [(e, None) for e in ENDS] + [(None, None)]
ALL: list[Range] = BOUNDED + UNBOUNDED


def _contains(r: Range, v: int) -> bool:
    lo, hi = r
    return (lo is None or lo <= v) and (hi is None or v <= hi)


@functools.cache
def samples(r: Range) -> tuple[int, ...]:
    """Every value of a bounded range; window and far values for an unbounded one."""
    lo, hi = r
    if lo is not None and hi is not None:
        return tuple(range(lo, hi + 1))
    near = [v for v in WINDOW if _contains(r, v)]
    far = [v for v in FAR if _contains(r, v)]
    return tuple(sorted({*near, *far}))


def _lt(x: int, y: int) -> int:
    return int(x < y)


def _le(x: int, y: int) -> int:
    return int(x <= y)


def _eq(x: int, y: int) -> int:
    return int(x == y)


def _ne(x: int, y: int) -> int:
    return int(x != y)


def _mul(x: int, y: int) -> int:
    return x * y


DIVISIONS: dict[str, tuple[BinaryRange, BinaryOp]] = {
    "floordiv": (iv.floordiv_range, arith.floordiv),
    "floormod": (iv.floormod_range, arith.floormod),
    "truncdiv": (iv.truncdiv_range, arith.truncdiv),
    "truncmod": (iv.truncmod_range, arith.truncmod),
}
OTHERS: dict[str, tuple[BinaryRange, BinaryOp]] = {
    "mul": (iv.mul_range, _mul),
    "max": (iv.max_range, max),
    "min": (iv.min_range, min),
    "lt": (functools.partial(iv.compare_range, True), _lt),
    "le": (functools.partial(iv.compare_range, False), _le),
    "eq": (functools.partial(iv.equality_range, True), _eq),
    "ne": (functools.partial(iv.equality_range, False), _ne),
}
ALL_OPS = {**DIVISIONS, **OTHERS}


def _results(f: BinaryOp, a: Range, b: Range, *, skip_zero: bool) -> list[int]:
    return [f(x, y) for x in samples(a) for y in samples(b) if not (skip_zero and y == 0)]


@pytest.mark.parametrize("name", sorted(ALL_OPS))
def test_binary_range_is_sound_exhaustively(name: str) -> None:
    """For all small/unbounded interval pairs, every concrete result lies in the computed range."""
    range_fn, f = ALL_OPS[name]
    skip_zero = name in DIVISIONS
    for a, b in itertools.product(ALL, ALL):
        got = range_fn(a, b)
        lo, hi = got
        assert lo is None or hi is None or lo <= hi, (name, a, b, got)
        values = _results(f, a, b, skip_zero=skip_zero)
        if not values:
            continue
        small, large = min(values), max(values)
        assert lo is None or lo <= small, (name, a, b, got, small)
        assert hi is None or large <= hi, (name, a, b, got, large)


@pytest.mark.parametrize("name", sorted(ALL_OPS))
def test_constant_operands_give_a_single_point(name: str) -> None:
    """With both operands constant, the range is exactly the one value of the operation."""
    range_fn, f = ALL_OPS[name]
    for x, y in itertools.product(range(-20, 21), repeat=2):
        if name in DIVISIONS and y == 0:
            continue
        v = f(x, y)
        assert range_fn((x, x), (y, y)) == (v, v), (name, x, y)


@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_divisor_exactly_zero_gives_the_full_range(name: str) -> None:
    """A divisor range that is exactly {0} (no value at all) gives the full range."""
    range_fn, _ = DIVISIONS[name]
    for a in ALL:
        assert range_fn(a, (0, 0)) == (None, None), (name, a)


@pytest.mark.parametrize(
    "name", ["mul", "max", "min", "lt", "le", "eq", "ne", "floordiv", "truncdiv"]
)
def test_bounded_range_is_the_exact_hull(name: str) -> None:
    """For bounded operands these ranges are exact: both ends are attained."""
    range_fn, f = ALL_OPS[name]
    skip_zero = name in DIVISIONS
    for a, b in itertools.product(BOUNDED, BOUNDED):
        values = _results(f, a, b, skip_zero=skip_zero)
        if values:
            assert range_fn(a, b) == (min(values), max(values)), (name, a, b)


def test_add_range_is_sound_and_exact() -> None:
    """add_range of c1*x + c2*y + k is the exact hull for bounded ranges, sound for unbounded."""
    coeffs = (-3, -1, 1, 2)
    for c1, c2, k in itertools.product(coeffs, coeffs, (-5, 0, 4)):
        for a, b in itertools.product(ALL[::3], ALL[::4]):
            lo, hi = iv.add_range([(c1, a), (c2, b)], k)
            values = [c1 * x + c2 * y + k for x in samples(a) for y in samples(b)]
            assert lo is None or lo <= min(values), (c1, c2, k, a, b)
            assert hi is None or max(values) <= hi, (c1, c2, k, a, b)
            if a in BOUNDED and b in BOUNDED:
                assert (lo, hi) == (min(values), max(values)), (c1, c2, k, a, b)
            else:
                assert lo is None or hi is None, (c1, c2, k, a, b)


def test_add_range_of_no_terms_is_the_constant() -> None:
    """add_range([], k) is the single point k."""
    for k in (-7, 0, 3, 2**70):
        assert iv.add_range([], k) == (k, k)


def test_mul_range_unbounded_times_zero_is_zero() -> None:
    """An unbounded range times exactly zero is exactly zero (values are finite)."""
    for a in UNBOUNDED:
        assert iv.mul_range(a, (0, 0)) == (0, 0)
        assert iv.mul_range((0, 0), a) == (0, 0)


def test_mod_by_positive_divisor_is_within_divisor() -> None:
    """x % d for a divisor in [1, q] and any x lies in [0, q - 1] (floor semantics)."""
    for q in range(1, 7):
        for p in range(1, q + 1):
            for a in ALL:
                lo, hi = iv.floormod_range(a, (p, q))
                assert lo is not None and lo >= 0, (a, p, q)
                assert hi is not None and hi <= q - 1, (a, p, q)


def test_truncmod_is_bounded_by_divisor_magnitude() -> None:
    """truncmod(x, d) for |d| <= q lies in [-(q - 1), q - 1] whatever x is."""
    for q in range(1, 7):
        for b in [(1, q), (-q, -1), (-q, q)]:
            for a in ALL:
                lo, hi = iv.truncmod_range(a, b)
                assert lo is not None and lo >= -(q - 1), (a, b)
                assert hi is not None and hi <= q - 1, (a, b)


@pytest.mark.parametrize("sem", list(Semantics))
def test_term_ranges_of_division_by_constants(sem: Semantics) -> None:
    """A variable divided by a non-zero constant gets a sound range; exact for positive ones."""
    for (lo, hi), d in itertools.product(ALL, range(-5, 6)):
        if d == 0:
            continue
        x = var("x", lo, hi)
        for t in (div(x, const(d), sem), mod(x, const(d), sem)):
            values = [evaluate(t, {"x": v}) for v in samples((lo, hi))]
            assert t.vmin is None or t.vmin <= min(values), (t, lo, hi)
            assert t.vmax is None or max(values) <= t.vmax, (t, lo, hi)
            if lo is not None and hi is not None and (d > 0 or t is div(x, const(d), sem)):
                assert (t.vmin, t.vmax) == (min(values), max(values)), (t, lo, hi)


def test_term_ranges_of_max_min_and_comparisons() -> None:
    """max, min and comparison terms of two variables carry their exact bounded ranges."""
    for a, b in itertools.product(BOUNDED[::5], BOUNDED[::7]):
        x = var("x", *a)
        y = var("y", *b)
        cases: list[tuple[Term, Callable[[int, int], int]]] = [
            (maximum(x, y), max),
            (minimum(x, y), min),
            (x < y, _lt),
            (x <= y, _le),
            (compare(Op.EQ, x, y), _eq),
            (compare(Op.NE, x, y), _ne),
        ]
        for t, f in cases:
            values = [f(u, v) for u in samples(a) for v in samples(b)]
            assert (t.vmin, t.vmax) == (min(values), max(values)), (t, a, b)


@settings(max_examples=examples(250), deadline=None)
@given(st.sampled_from(sorted(ALL_OPS)), intervals(), intervals(), st.data())
def test_binary_range_is_sound_for_big_values(
    name: str, a: Range, b: Range, data: st.DataObject
) -> None:
    """Ranges with endpoints up to 2**64 (and unbounded sides) contain sampled results."""
    range_fn, f = ALL_OPS[name]
    got = range_fn(a, b)
    for _ in range(6):
        x = data.draw(point_values(*a))
        y = data.draw(point_values(*b))
        if name in DIVISIONS and y == 0:
            continue
        assert _contains(got, f(x, y)), (name, a, b, got, x, y)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.integers(-(2**40), 2**40), intervals()), max_size=4),
    st.integers(-(2**64), 2**64),
    st.data(),
)
def test_add_range_is_sound_for_big_values(
    terms: list[tuple[int, Range]], k: int, data: st.DataObject
) -> None:
    """add_range contains k + sum(c*x) for sampled x in big (or unbounded) ranges."""
    got = iv.add_range(terms, k)
    for _ in range(4):
        xs = [data.draw(point_values(*r)) for _, r in terms]
        value = k + sum(c * x for (c, _), x in zip(terms, xs, strict=True))
        assert _contains(got, value), (terms, k, got, xs)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(-(2**64), 2**64),
    st.integers(-(2**64), 2**64),
    st.one_of(st.integers(1, 2**40), st.integers(-(2**40), -1)),
)
def test_constant_big_division_is_a_point(x: int, y: int, d: int) -> None:
    """Every division transfer function maps big constant operands to their exact value."""
    for range_fn, f in DIVISIONS.values():
        assert range_fn((x, x), (d, d)) == (f(x, d), f(x, d))
    assert iv.mul_range((x, x), (y, y)) == (x * y, x * y)
