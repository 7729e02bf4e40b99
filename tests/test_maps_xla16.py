"""Indexing maps, issue 16: the simplifier's XLA parity (recombination, residues, rescaling)."""

from __future__ import annotations

import json
from math import gcd, prod
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from indexing_support import image
from support import examples

from quorem.cli.main import main
from quorem.hlo.ops import reshape_map
from quorem.indexing import IndexingMap, parse_map, print_map
from quorem.indexing.compose import compose
from quorem.indexing.simplify import crt, simplify_map
from quorem.ops import Op
from quorem.verify.maps import maps_equal

PROPERTY = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


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


def test_a_bitcast_and_back_recombines_a_division_written_over_another_numerator() -> None:
    # n = d0*64 + d1 in digits 32, 3, 512 and the rest: d0 // 768 is n // 49152, the
    # division of (n // 96) % 512 by 512; both directions of writing are needed.
    text = (
        "(d0, d1) -> ((d0 floordiv 768) * 98304 + (((d0 * 64 + d1) floordiv 96) mod 512) * 192"
        " + ((d0 * 2 + d1 floordiv 32) mod 3) * 64 + (d1 mod 32) * 2),"
        " domain: d0 in [0, 2047], d1 in [0, 63]"
    )
    want = "(d0, d1) -> (d0 * 128 + d1 * 2), domain: d0 in [0, 2047], d1 in [0, 63]"
    assert simplified(text) == want
    assert maps_equal(parse_map(text), parse_map(want))


def test_two_remainder_digits_become_one_remainder_where_that_is_cheaper() -> None:
    # (x % 4)*6 + d1 % 6 is (x*6 + d1 % 6) % 24 with x*6 + d1 % 6 = d0*12 + d1.
    text = (
        "(d0, d1) -> ((((d0 * 2 + d1 floordiv 6) mod 4) * 6 + d1 mod 6) mod 12),"
        " domain: d0 in [0, 3], d1 in [0, 11]"
    )
    assert simplified(text) == "(d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 11]"
    # Nothing cheaper: the two digits stay.
    kept = "(d0, d1) -> ((d0 mod 4) * 6 + d1 mod 6), domain: d0 in [0, 9], d1 in [0, 11]"
    assert simplified(kept) == kept


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
            if len(shape) > 0 and draw(st.booleans()):
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
        # two remainder digits from numerators simplified apart: one remainder first
        [[2, 3, 16, 2, 2, 2, 2], [2, 6, 8, 4, 2, 2], [3, 4, 4, 4, 2, 2, 2]],
        [[4, 12, 16], [4, 2, 2, 2, 2, 2, 2, 3], [2, 4, 3, 16, 2]],
        [[2, 4, 3, 5, 3], [2, 4, 3, 3, 5], [3, 2, 2, 6, 5]],
    ],
)
def test_three_reshapes_back_are_the_identity(shapes: list[list[int]]) -> None:
    assert is_identity(simplify_map(chain_map(shapes)))


# ------------------------------------------------------------------ residues
@pytest.mark.parametrize(
    ("constraints", "expected"),
    [
        # Coprime moduli, one residue: the lcm.
        ("s0 mod 2 in [0, 0], s0 mod 3 in [0, 0]", "s0 in [0, 54], s0 mod 6 in [0, 0]"),
        # Different residues (Chinese remainder): 9 is 1 mod 4 and 3 mod 6.
        ("s0 mod 4 in [1, 1], s0 mod 6 in [3, 3]", "s0 in [9, 57], s0 mod 12 in [9, 9]"),
        # One modulus divides the other: the larger one stays.
        ("s0 mod 2 in [1, 1], s0 mod 6 in [3, 3]", "s0 in [3, 57], s0 mod 6 in [3, 3]"),
        # Three moduli meet at one point of the box: the variable is pinned.
        ("s0 mod 4 in [1, 1], s0 mod 3 in [2, 2], s0 mod 5 in [0, 0]", None),
    ],
)
def test_residue_constraints_merge(constraints: str, expected: str | None) -> None:
    text = f"(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 59], {constraints}"
    out = simplify_map(parse_map(text))
    assert image(out) == image(parse_map(text))
    if expected is None:
        assert print_map(out) == "(d0) -> (d0, 5), domain: d0 in [0, 3]"
    else:
        assert print_map(out) == f"(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], {expected}"


def test_residues_that_disagree_make_the_map_empty() -> None:
    # Odd (1 mod 4) and even (2 mod 6) at once: no integer.
    text = (
        "(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 59],"
        " s0 mod 4 in [1, 1], s0 mod 6 in [2, 2]"
    )
    assert simplify_map(parse_map(text)).known_empty


def test_residues_on_an_expression_merge_too() -> None:
    text = (
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 9],"
        " (d0 + d1) mod 2 in [1, 1], (d0 + d1) mod 3 in [1, 1]"
    )
    out = simplify_map(parse_map(text))
    assert print_map(out).endswith("(d0 + d1) mod 6 in [1, 1]")
    assert image(out) == image(parse_map(text))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 11)), min_size=1, max_size=4))
def test_crt_is_exact_over_one_period(classes: list[tuple[int, int]]) -> None:
    # Both sides depend on x only through x mod lcm: one period decides every integer.
    classes = [(n, r % n) for n, r in classes]
    period = 1
    for n, _ in classes:
        period = period * n // gcd(period, n)
    solution = crt(classes)
    for x in range(period):
        holds = all(x % n == r for n, r in classes)
        if solution is None:
            assert not holds
        else:
            assert solution[0] == period
            assert holds == (x % solution[0] == solution[1])


@PROPERTY
@given(
    st.lists(
        st.tuples(st.sampled_from([2, 3, 4, 5, 6]), st.integers(0, 5)), min_size=2, max_size=3
    ),
    st.integers(-7, 3),
    st.integers(0, 40),
)
def test_merged_residues_keep_the_domain(
    classes: list[tuple[int, int]], lo: int, width: int
) -> None:
    cons = ", ".join(f"s0 mod {n} in [{r % n}, {r % n}]" for n, r in classes)
    text = f"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 2], s0 in [{lo}, {lo + width}], {cons}"
    m = parse_map(text)
    assert image(simplify_map(m)) == image(m)


# ------------------------------------------------------------------ rescaling symbols
def rescaled(text: str) -> str:
    return print_map(simplify_map(parse_map(text), rescale=True))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "(d0)[s0] -> (d0, s0 floordiv 6), domain: d0 in [0, 3], s0 in [0, 11],"
            " s0 mod 6 in [0, 0]",
            "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 1]",
        ),
        (  # a shift: 2 and 8
            "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 11], s0 mod 6 in [2, 2]",
            "(d0)[s0] -> (d0 + s0 * 6 + 2), domain: d0 in [0, 3], s0 in [0, 1]",
        ),
        (  # several residues: merged first (lcm 6)
            "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 59],"
            " s0 mod 2 in [0, 0], s0 mod 3 in [0, 0]",
            "(d0)[s0] -> (d0 + s0 * 6), domain: d0 in [0, 3], s0 in [0, 9]",
        ),
        (  # negative bounds, two symbols, and a constraint rewritten through them
            "(d0)[s0, s1] -> (s0 + s1, d0), domain: d0 in [0, 3], s0 in [-7, 20], s1 in [0, 9],"
            " s0 mod 4 in [3, 3], s1 mod 3 in [1, 1], s0 + s1 in [0, 20]",
            "(d0)[s0, s1] -> (s0 * 4 + s1 * 3 + 4, d0), domain: d0 in [0, 3], s0 in [-2, 4],"
            " s1 in [0, 2], s0 * 4 + s1 * 3 in [-4, 16]",
        ),
        (  # a runtime variable is a value the program supplies: never rescaled
            "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 11], rt0 mod 6 in [0, 0]",
            "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 6], rt0 mod 6 in [0, 0]",
        ),
        (  # a dimension is an index: never rescaled
            "(d0) -> (d0 floordiv 6), domain: d0 in [0, 11], d0 mod 6 in [0, 0]",
            "(d0) -> (d0 / 6), domain: d0 in [0, 6], d0 mod 6 in [0, 0]",
        ),
        (  # a residue of an expression: not a variable's class
            "(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 5],"
            " (s0 + s1) mod 2 in [0, 0]",
            "(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 5],"
            " (s0 + s1) mod 2 in [0, 0]",
        ),
    ],
)
def test_rescale_symbols(text: str, expected: str) -> None:
    assert rescaled(text) == expected
    assert image(parse_map(expected)) == image(parse_map(text))


def test_rescaling_is_off_by_default_and_keeps_the_reads() -> None:
    text = (
        "(d0)[s0] -> (d0, s0 floordiv 6), domain: d0 in [0, 3], s0 in [0, 11], s0 mod 6 in [0, 0]"
    )
    assert simplified(text) == (
        "(d0)[s0] -> (d0, s0 / 6), domain: d0 in [0, 3], s0 in [0, 6], s0 mod 6 in [0, 0]"
    )


@st.composite
def maps_with_residue_symbols(draw: st.DrawFn) -> IndexingMap:
    """A map whose symbols carry residue constraints (one or two each), results over them."""
    n_s = draw(st.integers(1, 2))
    parts = []
    cons = []
    bounds = []
    for i in range(n_s):
        lo = draw(st.integers(-8, 4))
        bounds.append(f"s{i} in [{lo}, {lo + draw(st.integers(0, 24))}]")
        for _ in range(draw(st.integers(1, 2))):
            n = draw(st.sampled_from([2, 3, 4, 6]))
            r = draw(st.integers(0, n - 1))
            cons.append(f"s{i} mod {n} in [{r}, {r}]")
        k = draw(st.sampled_from([1, 2, -3]))
        parts.append(f"s{i} * {k}")
    res = [" + ".join(["d0", *parts]), f"s0 floordiv {draw(st.sampled_from([2, 3, 4]))}"]
    if draw(st.booleans()):
        cons.append(f"d0 + s0 in [0, {draw(st.integers(0, 20))}]")
    syms = ", ".join(f"s{i}" for i in range(n_s))
    text = f"(d0)[{syms}] -> ({', '.join(res)}), domain: d0 in [0, 3], " + ", ".join(bounds + cons)
    return parse_map(text)


@PROPERTY
@given(maps_with_residue_symbols())
def test_rescaling_keeps_what_each_point_reads(m: IndexingMap) -> None:
    out = simplify_map(m, rescale=True, remove_unused=False)
    assert image(out) == image(m)
    # Every residue class of a symbol was merged into one, then counted: none is left.
    assert not any(
        e.op is Op.FLOORMOD and e.args[0].op is Op.VAR and lo == hi for e, lo, hi in out.constraints
    )


# ------------------------------------------------------------------ unused variables
def test_unused_dimensions_stay_by_default_and_go_when_asked() -> None:
    text = "(d0, d1) -> (d0), domain: d0 in [0, 200], d1 in [0, 5], d1 mod 2 in [1, 1]"
    assert simplified(text) == (
        "(d0, d1) -> (d0), domain: d0 in [0, 200], d1 in [1, 5], d1 mod 2 in [1, 1]"
    )
    m = parse_map(text)
    assert print_map(simplify_map(m, remove_unused_dims=True)) == (
        "(d0) -> (d0), domain: d0 in [0, 200]"
    )
    # The kept dims are renumbered; a dim tied to a used one by a constraint stays.
    m = parse_map(
        "(d0, d1, d2)[s0] -> (d2 + s0), domain: d0 in [0, 3], d1 in [0, 3], d2 in [0, 3],"
        " s0 in [0, 2], d0 + d2 in [0, 4], d1 mod 2 in [0, 0]"
    )
    assert print_map(simplify_map(m, remove_unused_dims=True)) == (
        "(d0, d1)[s0] -> (d1 + s0), domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 2],"
        " d0 + d1 in [0, 4]"
    )


def test_an_unused_dimension_whose_constraint_cannot_hold_makes_the_map_empty() -> None:
    m = parse_map("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 5], (d1 * 2) mod 4 in [1, 1]")
    assert simplify_map(m, remove_unused_dims=True).known_empty


def test_cli_map_simplify_options(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0, d1)[s0] -> (s0 floordiv 6), domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 11],"
    text += " s0 mod 6 in [0, 0]"
    assert main(["map", "simplify", "--rescale-symbols", "--remove-unused-dims", text]) == 0
    assert capsys.readouterr().out == "()[s0] -> (s0), domain: s0 in [0, 1]\n"


# ------------------------------------------------------------------ constraints by steps
@pytest.mark.parametrize(
    ("constraint", "d0_box", "kept"),
    [
        ("d0 * 6 + s0 * 3 + s1 in [0, 599]", "[0, 99]", False),
        # the gcd of 8 and 3 is 1: the step is d0's own coefficient, rest in [0, 5]
        ("d0 * 8 + s0 * 3 + s1 in [0, 799]", "[0, 99]", False),
        ("d0 * 8 + s0 * 3 + s1 in [8, 799]", "[1, 99]", False),
        # the rest reaches 5 > 4: a value of d0 where only some rests fit, kept
        ("d0 * 4 + s0 * 3 + s1 in [0, 599]", "[0, 200]", True),
        ("d0 * 6 + s1 * 5 in [0, 599]", "[0, 200]", True),
        # the lower side straddles a step (d0 = 1: 6 + rest >= 7 for some rests only)
        ("d0 * 6 + s0 * 3 + s1 in [7, 599]", "[0, 99]", True),
    ],
)
def test_a_constraint_whose_rest_fits_one_step_bounds_the_scaled_part(
    constraint: str, d0_box: str, kept: bool
) -> None:
    head = "(d0)[s0, s1] -> (d0, s0, s1), domain: "
    text = f"{head}d0 in [0, 200], s0 in [0, 1], s1 in [0, 2], {constraint}"
    m = parse_map(text)
    out = simplify_map(m)
    want = f"{head}d0 in {d0_box}, s0 in [0, 1], s1 in [0, 2]"
    assert print_map(out) == (f"{want}, {constraint}" if kept else want)
    assert image(out) == image(m)


@PROPERTY
@given(
    st.integers(2, 9),
    st.lists(st.integers(-4, 4), min_size=2, max_size=2),
    st.integers(-20, 60),
    st.integers(0, 60),
)
def test_splitting_a_constraint_by_a_step_keeps_the_domain(
    k: int, coefs: list[int], lo: int, width: int
) -> None:
    text = (
        "(d0)[s0, s1] -> (d0 + s0 * 7 + s1 * 13), domain: d0 in [-3, 12], s0 in [0, 2],"
        f" s1 in [-1, 2], d0 * {k} + s0 * {coefs[0]} + s1 * {coefs[1]} in [{lo}, {lo + width}]"
    )
    m = parse_map(text)
    assert image(simplify_map(m)) == image(m)


@PROPERTY
@given(
    st.tuples(st.integers(0, 5), st.integers(-3, 3)),
    st.tuples(st.sampled_from([2, 3, 4]), st.integers(0, 3)),
    st.tuples(st.integers(-2, 6), st.integers(0, 4)),
)
def test_removing_an_unused_dimension_projects_the_domain(
    box: tuple[int, int], residue: tuple[int, int], scaled: tuple[int, int]
) -> None:
    (d1_hi, shift), (n, r), (lo, width) = box, residue, scaled
    # d1 is in no result; its own constraints go with it when they can hold, and the
    # map at each d0 reads what the old map read at d0 for some d1.
    text = (
        f"(d0, d1)[s0] -> (d0 + s0), domain: d0 in [0, 4], d1 in [0, {d1_hi}], s0 in [0, 2],"
        f" (d1 + {shift}) mod {n} in [{r % n}, {r % n}], d1 * 2 in [{lo}, {lo + width}],"
        " d0 + s0 in [1, 5]"
    )
    m = parse_map(text)
    out = simplify_map(m, remove_unused_dims=True)
    projected: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for (d0, _), reads in image(m).items():
        projected.setdefault((d0,), set()).update(reads)
    if out.known_empty:
        assert not projected
    else:
        assert out.n_dims == 1
        assert image(out) == {k: frozenset(v) for k, v in projected.items()}


def test_cli_map_batch_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "()[s0] -> (s0 floordiv 6), domain: s0 in [0, 11], s0 mod 6 in [0, 0]"
    batch = tmp_path / "maps.jsonl"
    batch.write_text(json.dumps({"id": "a", "map": text}) + "\n", encoding="utf-8")
    assert main(["map", "simplify", "--rescale-symbols", "--batch", str(batch)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"id": "a", "output": "()[s0] -> (s0), domain: s0 in [0, 1]"}
