"""Indexing maps, issue 16: the simplifier's XLA parity (recombination, residues, rescaling)."""

from __future__ import annotations

from math import prod

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from indexing_support import image
from quorem.engine.indexing import IndexingMap, parse_map, print_map
from quorem.engine.indexing.compose import compose
from quorem.engine.indexing.hlo_ops import reshape_map
from quorem.engine.indexing.simplify import simplify_map

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def simplified(text: str) -> str:
    return print_map(simplify_map(parse_map(text)))


def is_identity(m: IndexingMap) -> bool:
    return [str(r) for r in m.results] == [v.name for v in m.dims] and not m.constraints


# ------------------------------------------------------------------ min and max
@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ("min(d0, d0 + 1)", "d0"),
        ("max(d0, d0 - 1)", "d0"),
        ("min(d0 + 1, d0)", "d0"),
        ("max(d0 + 3, d0 - 2)", "d0 + 3"),
        ("min(d0 * 2 + 5, d0 * 2 + 1)", "d0 * 2 + 1"),
        # Different terms: not decided by the offset (the ranges overlap), kept.
        ("min(d0, 10 - d0)", "min(d0, -d0 + 10)"),
    ],
)
def test_min_and_max_of_one_term_shifted(results: str, expected: str) -> None:
    text = f"(d0) -> ({results}), domain: d0 in [0, 20]"
    assert simplified(text) == f"(d0) -> ({expected}), domain: d0 in [0, 20]"


# ------------------------------------------------------------------ recombination
def test_a_pair_split_by_a_merged_nested_division_recombines() -> None:
    # (d1*2 + d0 // 64) % 3 and (d1*128 + d0) // 192 are digits of d1*2 + d0 // 64.
    text = (
        "(d0, d1) -> (((d1 * 2 + d0 floordiv 64) mod 3) * 64 + d0 mod 64"
        " + ((d1 * 128 + d0) floordiv 192) * 192),"
        " domain: d0 in [0, 127], d1 in [0, 5]"
    )
    assert simplified(text) == "(d0, d1) -> (d0 + d1 * 128), domain: d0 in [0, 127], d1 in [0, 5]"


def test_recombination_needs_the_remainder_to_be_the_digit() -> None:
    # (d1*2 + d0 // 64) % 3 is not a digit of (d1*64 + d0) // 192: nothing to recombine.
    text = (
        "(d0, d1) -> (((d1 * 2 + d0 floordiv 64) mod 3) * 64"
        " + ((d1 * 64 + d0) floordiv 192) * 192),"
        " domain: d0 in [0, 127], d1 in [0, 5]"
    )
    m = parse_map(text)
    out = simplify_map(m)
    assert image(out) == image(m)
    assert "mod 3" in print_map(out)


FACTORS = [2, 3, 4, 6, 8, 16]


@st.composite
def reshape_chains(draw: st.DrawFn) -> list[list[int]]:
    """Two or three shapes of one element count: a reshape chain back to the first."""
    n_factors = draw(st.integers(2, 5))
    factors = [draw(st.sampled_from(FACTORS)) for _ in range(n_factors)]
    shapes = []
    for _ in range(draw(st.integers(2, 3))):
        order = draw(st.permutations(factors))
        shape: list[int] = []
        for f in order:  # merge neighbours at random into one dimension
            if shape and draw(st.booleans()):
                shape[-1] *= f
            else:
                shape.append(f)
        shapes.append(shape)
    assert len({prod(s) for s in shapes}) == 1
    return shapes


def chain_map(shapes: list[list[int]]) -> IndexingMap:
    """Indices of shapes[0] read through reshapes to shapes[1], ... and back to shapes[0]."""
    m = reshape_map(shapes[1], shapes[0])
    for a, b in zip(shapes[1:], [*shapes[2:], shapes[0]], strict=True):
        m = compose(m, reshape_map(b, a))
    return m


@PROPERTY
@given(reshape_chains())
def test_a_reshape_chain_back_to_its_shape_is_the_identity(shapes: list[list[int]]) -> None:
    m = chain_map(shapes)
    out = simplify_map(m)
    if prod(shapes[0]) <= 4096:
        assert image(out) == image(m)
    if len(shapes) == 2:
        assert is_identity(out), (shapes, print_map(out))


@pytest.mark.parametrize(
    "shapes",
    [
        [[2, 3, 2, 8, 2, 2], [4, 4, 2, 2, 3, 2], [2, 4, 2, 2, 3, 2, 2]],
        [[4, 4, 3, 2, 2, 2, 2], [16, 2, 2, 2, 6], [4, 2, 2, 4, 2, 3, 2]],
        [[3, 2, 3, 4, 5], [3, 2, 2, 2, 3, 5], [2, 4, 3, 3, 5]],
        [[6, 2, 2, 8, 2], [3, 4, 2, 2, 2, 2, 2], [2, 2, 2, 4, 3, 2, 2]],
        [[4, 192], [4, 3, 64], [12, 64]],
    ],
)
def test_three_reshapes_back_are_the_identity(shapes: list[list[int]]) -> None:
    assert is_identity(simplify_map(chain_map(shapes)))
