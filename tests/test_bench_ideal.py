"""benchmarks/ideal.py: the proven ideal_ops of the benchmark corpora.

A claim is only as good as its two bounds: the lower bound (affine tables, the carry
count) must never exceed what an expression itself uses, which random quasi-affine
expressions check, boxes crossing zero included (where truncation differs); the upper
bound's witness search must find a one-division form where there is one.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from benchmarks import ideal


def test_ideal_known_values() -> None:
    examples = [
        ("(x//2)%3", {"x": (0, 23)}, "floor", 2),
        ("(x//2)%3", {"x": (0, 23)}, "trunc", 2),
        ("(x//2)%3", {"x": (0, 5)}, "floor", 1),  # x//2: the % never wraps
        ("(x*4 + 1)//2 + (x*4 + 3)//2", {"x": (0, 50)}, "floor", 0),
        ("((x*6 + y)//4)%3", {"x": (0, 9), "y": (0, 5)}, "trunc", 2),
        ("((x*8 + y)//4)%2", {"x": (0, 3), "y": (0, 7)}, "floor", 1),  # y//4, a witness
    ]
    for text, bounds, semantics, want in examples:
        term = quorem.parse(text, bounds, semantics)
        assert ideal.ideal_ops(term, bounds, semantics) == want, text


def test_ideal_gives_none_for_big_boxes() -> None:
    bounds = {"x": (0, ideal.MAX_POINTS)}
    assert ideal.ideal_ops(quorem.parse("x//3", bounds), bounds, "floor") is None


@st.composite
def quasi_affine(draw: st.DrawFn, depth: int = 3) -> str:
    """Random quasi-affine text over x and y: the language ideal_ops counts in."""
    if depth == 0 or draw(st.booleans()):
        a, b, c = (draw(st.integers(-4, 4)) for _ in range(3))
        return f"(x*{a} + y*{b} + {c})"
    kind = draw(st.sampled_from(("//", "%", "+")))
    left = draw(quasi_affine(depth - 1))
    if kind == "+":
        scale = draw(st.integers(-3, 3))
        return f"({left} + {draw(quasi_affine(depth - 1))}*{scale})"
    return f"({left}{kind}{draw(st.sampled_from((-3, 2, 3, 4, 6)))})"


@settings(max_examples=examples(300), deadline=None)
@given(
    quasi_affine(),
    st.sampled_from(("floor", "trunc")),
    st.integers(-6, 3),
    st.integers(1, 9),
    st.integers(1, 7),
)
def test_lower_bound_never_exceeds_an_expressions_own_count(
    text: str, semantics: str, lo: int, width: int, height: int
) -> None:
    """The carry argument is sound: every expression is a witness of its own count (the
    boxes cross zero, where truncation's wide step is)."""
    bounds = {"x": (lo, lo + width), "y": (-height // 2, height)}
    term = quorem.parse(text, bounds, semantics)
    table = ideal.tabulate(term, bounds)
    assert ideal.lower_bound(table, semantics) <= quorem.count_divmod(term)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(-5, 5),
    st.integers(-5, 5),
    st.integers(-3, 3).filter(bool),
    st.integers(2, 7),
    st.integers(0, 20),
)
def test_fits_finds_one_division_witnesses(a: int, b: int, c: int, n: int, k: int) -> None:
    """x*a + c*((x*b + y + k)//n): fits() finds it from its floor column."""
    bounds = {"x": (0, 9), "y": (0, 5)}
    term = quorem.parse(f"x*{a} + ((x*{b} + y + {k})//{n})*{c}", bounds)
    table = ideal.tabulate(term, bounds)
    column = [(x * b + y + k) // n for x, y in table.points]
    assert ideal.fits(table, [column])
