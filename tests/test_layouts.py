"""Issue #4's target: tiling and reshape index expressions lose every // and % they can.

Each expression is built from shapes (``layouts``), simplified, and checked on every point
of its box. Whenever the expression is affine on its box (its ideal form has no // or %),
the result must have none.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from benchmarks.layouts import affine_form, flat, loop_vars, reshape_chain, tiled, unflat

FACTORS = (2, 3, 4, 6, 8)


def check(text: str, bounds: dict[str, tuple[int, int]]) -> quorem.Term:
    """Simplify ``text``; assert equivalence everywhere, and zero // and % if affine."""
    term = quorem.parse(text, bounds)
    got = quorem.simplify(term)
    names = sorted(bounds)
    table = {}
    for p in itertools.product(*(range(lo, hi + 1) for lo, hi in (bounds[n] for n in names))):
        env = dict(zip(names, p, strict=True))
        want = quorem.evaluate(term, env)
        assert quorem.evaluate(got, env) == want, f"{text} => {got} differs at {env}"
        table[p] = want
    if affine_form(table, bounds):
        assert quorem.count_divmod(got) == 0, f"{text} is affine but simplified to {got}"
    return got


@st.composite
def shapes_of(draw: st.DrawFn, size: int | None = None) -> tuple[int, ...]:
    """A shape (tuple of dims > 1) of ``size`` elements, or of any size up to 576."""
    if size is None:
        dims = draw(st.lists(st.sampled_from(FACTORS), min_size=1, max_size=3))
        return tuple(dims)
    dims = []
    rest = size
    while rest > 1:
        choices = [d for d in range(2, rest + 1) if rest % d == 0 and d <= 12]
        if not choices:
            dims.append(rest)
            break
        d = draw(st.sampled_from(choices))
        dims.append(d)
        rest //= d
    return tuple(dims)


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_reshape_round_trip_is_the_identity(data: st.DataObject) -> None:
    """A -> B -> A reshapes give back each loop variable: no division left."""
    a = data.draw(shapes_of())
    b = data.draw(shapes_of(math.prod(a)))
    indices, bounds = reshape_chain([a, b, a])
    names, _ = loop_vars(a)
    for ix, name in zip(indices, names, strict=True):
        got = check(ix, bounds)
        assert got is quorem.parse(name, bounds), f"{ix} => {got}"


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_reshape_then_flatten_is_the_flat_index(data: st.DataObject) -> None:
    """Unflattening into B and flattening B again is the flat index of A."""
    a = data.draw(shapes_of())
    b = data.draw(shapes_of(math.prod(a)))
    names, bounds = loop_vars(a)
    got = check(flat(unflat(flat(names, a), b), b), bounds)
    assert got is quorem.parse(flat(names, a), bounds)


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_reshape_chains_lose_every_division_they_can(data: st.DataObject) -> None:
    """Every index of a chain A -> B -> C: zero // and % wherever it is affine."""
    a = data.draw(shapes_of())
    b = data.draw(shapes_of(math.prod(a)))
    c = data.draw(shapes_of(math.prod(a)))
    indices, bounds = reshape_chain([a, b, c])
    for ix in indices:
        check(ix, bounds)


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_tiled_loops_lose_every_division_they_can(data: st.DataObject) -> None:
    """A loop split into nested tiles, indexed into a shape: zero // and % where affine."""
    shape = data.draw(shapes_of())
    tiles = data.draw(shapes_of(math.prod(shape)))
    indices, bounds = tiled(tiles, shape)
    for ix in indices:
        check(ix, bounds)


@pytest.mark.parametrize(
    ("tiles", "shape"),
    [((4, 2, 4), (4, 8)), ((8, 4), (4, 8)), ((2, 2, 2, 4), (4, 8)), ((4, 8), (4, 2, 4))],
)
def test_seed_worked_example_tilings(tiles: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """Seed 002's [4, 8] buffer indexed from tilings of its 32-element loop."""
    indices, bounds = tiled(tiles, shape)
    address = flat(indices, shape)
    got = check(address, bounds)
    names, _ = loop_vars(tiles, "t")
    assert got is quorem.parse(flat(names, tiles), bounds)
