"""Indexing maps: the defects of issue 14 (found by fuzzing), each pinned, with properties."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from indexing_support import (
    image,
    maps_with_constrained_subterms,
    maps_with_unused_symbols,
    renamed,
    small_maps,
    tricky_named_maps,
)
from support import examples

from quorem.cli.main import main
from quorem.cli.map import map_record
from quorem.indexing import (
    IndexingMap,
    IndexingMapError,
    Variable,
    parse_map,
    print_expr,
    print_map,
)
from quorem.indexing.compare import decide_empty
from quorem.indexing.compose import compose
from quorem.indexing.map import internal_names
from quorem.indexing.simplify import maps_equal, simplify_map
from quorem.term import var

PROPERTY = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def simplified(text: str) -> str:
    return print_map(simplify_map(parse_map(text)))


# ------------------------------------------------------------------ 1. name capture
def test_a_user_variable_named_like_the_old_stand_in_is_not_captured() -> None:
    text = "(d0, __c0) -> (__c0), domain: d0 in [0, 10], __c0 in [0, 5], d0 mod 4 in [0, 1]"
    assert simplified(text) == text
    m = parse_map(text)
    assert image(simplify_map(m)) == image(m)


def test_internal_names_cannot_be_parsed_and_avoid_every_name_given() -> None:
    first = next(internal_names("c", []))
    with pytest.raises(IndexingMapError, match="unexpected character"):
        parse_map(f"({first}) -> ({first}), domain: {first} in [0, 3]")
    # A map built in code may use any identifier, that one too: the next is taken.
    assert next(internal_names("c", [first])) != first
    m = IndexingMap(
        (Variable("d0", 0, 10), Variable(first, 0, 5)),
        results=(var(first, 0, 5),),
        constraints=((var("d0", 0, 10) % 4, 0, 1),),
    ).normalized()
    assert simplify_map(m) == m


@PROPERTY
@given(tricky_named_maps())
def test_simplify_with_colliding_names_keeps_the_function(m: IndexingMap) -> None:
    s = simplify_map(m)
    assert image(s) == image(m), (str(m), str(s))
    assert simplify_map(s) == s


@PROPERTY
@given(st.data())
def test_compose_with_colliding_names_is_the_function_composition(data: st.DataObject) -> None:
    consumer = data.draw(tricky_named_maps().filter(lambda m: m.n_results == 1))
    lo = data.draw(st.integers(-4, 2))
    producer = data.draw(small_maps(n_dims=1, dim_bounds=[(lo, lo + data.draw(st.integers(0, 8)))]))
    names = data.draw(st.permutations(["s0", "d0", "rt0", "__c0", "d1", "s1"]))
    producer = renamed(producer, names[: len(list(producer.variables()))])
    assume(not consumer.known_empty and not producer.known_empty)
    inner = image(producer)
    expected: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for d, mids in image(consumer).items():
        for mid in mids:
            expected.setdefault(d, set()).update(inner.get(mid, ()))
    got = compose(consumer, producer)
    assert image(got) == {k: frozenset(v) for k, v in expected.items() if v}
    assert image(simplify_map(got)) == image(got)


# ------------------------------------------------------------------ 2. emptiness of unused symbols
JOINTLY_EMPTY = (
    "(d0)[s0, s1] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 5], "
    "s0 + s1 in [0, 0], s0 - s1 in [1, 1]"
)
IDENTITY = "(d0) -> (d0), domain: d0 in [0, 3]"


def test_constraints_satisfiable_alone_but_not_together_make_the_map_empty() -> None:
    m = parse_map(JOINTLY_EMPTY)
    assert simplified(JOINTLY_EMPTY) == "(d0) -> (0), domain: KNOWN EMPTY"
    assert not maps_equal(m, parse_map(IDENTITY))
    assert maps_equal(m, IndexingMap.empty(1, 1))
    assert image(m) == {}


def test_residue_constraints_that_exclude_each_other_are_not_dropped() -> None:
    small = "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], " + (
        "s0 mod 2 in [0, 0], (s0 + 1) mod 2 in [0, 0]"
    )
    assert simplify_map(parse_map(small)).known_empty
    # Too many points to enumerate: undecided, so s0 and its constraints stay.
    large = small.replace("s0 in [0, 5]", "s0 in [0, 5000000]")
    out = simplify_map(parse_map(large))
    assert [v.name for v in out.range_vars] == ["s0"] and len(out.constraints) == 2
    assert not maps_equal(parse_map(large), parse_map(IDENTITY))


def test_unused_symbols_go_when_their_constraints_have_a_witness() -> None:
    # One solution only (s0 = 3, s1 = 2), and a box too large to enumerate whose
    # witness is at the box's end.
    assert simplified(
        "(d0)[s0, s1] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 5], "
        "s0 + s1 in [5, 5], s0 - s1 in [1, 1]"
    ) == print_map(parse_map(IDENTITY))
    assert simplified(
        "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 100000000], s0 mod 7 in [6, 6]"
    ) == print_map(parse_map(IDENTITY))


@PROPERTY
@given(maps_with_unused_symbols())
def test_removing_unused_symbols_keeps_the_domain(m: IndexingMap) -> None:
    s = simplify_map(m)
    assert image(s) == image(m), (str(m), str(s))
    assert s.known_empty == (not image(m)) or s.range_vars, "empty and decidable: found"
    assert simplify_map(s) == s
    assert maps_equal(m, IndexingMap.empty(1, 1)) == (not image(m))


# ------------------------------------------------------------------ 3. renumbering
def test_renumbering_never_takes_a_dimension_name() -> None:
    text = "(s0)[s1, s2] -> (s0 + s2), domain: s0 in [0, 5], s1 in [0, 3], s2 in [0, 7]"
    assert simplified(text) == "(s0)[s2] -> (s0 + s2), domain: s0 in [0, 5], s2 in [0, 7]"
    text = "(rt0){rt1, rt2} -> (rt0 + rt2), domain: rt0 in [0, 5], rt1 in [0, 3], rt2 in [0, 7]"
    assert simplified(text) == "(rt0){rt2} -> (rt0 + rt2), domain: rt0 in [0, 5], rt2 in [0, 7]"


def test_renumbering_of_default_names_still_happens() -> None:
    text = "(d0)[s0, s1]{rt0, rt1} -> (d0 + s1 + rt1), domain: d0 in [0, 3], s0 in [0, 7], " + (
        "s1 in [0, 2], rt0 in [0, 4], rt1 in [0, 1]"
    )
    assert simplified(text) == (
        "(d0)[s0]{rt0} -> (d0 + rt0 + s0), domain: d0 in [0, 3], s0 in [0, 2], rt0 in [0, 1]"
    )


# ------------------------------------------------------------------ 4. lenient lexing
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "(d0) -> (\u0661\u0662 + d0), domain: d0 in [0, 5]",
            "unexpected character '\u0661' at offset 9",
        ),
        ("(d0) -> (d0), domain: d0 in [0, \u0665]", "unexpected character '\u0665' at offset 32"),
        ("(d0) -> (d0 + \uff11), domain: d0 in [0, 5]", "unexpected character"),  # fullwidth 1
        ("(d0) -> (0x10), domain: d0 in [0, 1]", "'0x' at offset 9: integers are decimal"),
        ("(d0) -> (d0), domain: d0 in [0, 0X1F]", "'0X' at offset 32"),
        ("(d0) -> (0b1 + d0), domain: d0 in [0, 1]", "'0b' at offset 9"),
        ("(d0)\u00a0-> (d0), domain: d0 in [0, 3]", "unexpected character '\\\\xa0' at offset 4"),
        ("(mod) -> (mod), domain: mod in [0, 3]", "reserved word .* at offset 1"),
        ("(and) -> (and), domain: and in [0, 3]", "reserved word .* at offset 1"),
    ],
)
def test_only_ascii_decimal_integers_and_spaces(text: str, reason: str) -> None:
    with pytest.raises(IndexingMapError, match=reason):
        parse_map(text)


def test_juxtaposition_and_leading_zeros_still_read() -> None:
    m = parse_map("(d0, x1) -> (2x1 + 010 + 0d0), domain: d0 in [0, 1], x1 in [0, 3]")
    assert print_map(m) == "(d0, x1) -> (x1 * 2 + 10), domain: d0 in [0, 1], x1 in [0, 3]"


# ------------------------------------------------------------------ 5. huge integers
def test_an_integer_over_4300_digits_is_refused_with_its_offset() -> None:
    with pytest.raises(IndexingMapError, match="an integer of 5000 digits at offset 9"):
        parse_map("(d0) -> (" + "9" * 5000 + " + d0), domain: d0 in [0, 5]")
    with pytest.raises(IndexingMapError, match="5000 digits at offset 32"):
        parse_map("(d0) -> (d0), domain: d0 in [0, " + "9" * 5000 + "]")


def test_integers_up_to_4300_digits_read_and_print_whatever_the_interpreter_limit() -> None:
    big = "9" * 4300
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # the lowest limit Python allows
    try:
        text = f"(d0) -> (d0 + {big}), domain: d0 in [0, 5], d0 * 3 in [-{big}, 9]"
        m = parse_map(text)
        assert print_map(m) == text
        s = simplify_map(m)
        out = print_map(s)
        assert parse_map(out) == s
    finally:
        sys.set_int_max_str_digits(limit)
    assert out == f"(d0) -> (d0 + {big}), domain: d0 in [0, 3]"


@pytest.mark.parametrize("digits", [2, 499, 500, 501, 1001, 4301, 10_000, 123_457])
def test_printing_a_huge_constant_gives_its_decimal_digits(digits: int) -> None:
    n = 10 ** (digits - 1) + 7  # inner zeros: the halves' padding must be right
    text = "1" + "0" * (digits - 2) + "7"
    d = var("d0", 0, 3)
    m = IndexingMap((Variable("d0", 0, 3),), results=(d + n, d * -n)).normalized()
    assert print_expr(m.results[0]) == f"d0 + {text}"
    assert print_expr(m.results[1]) == f"d0 * -{text}"


def test_a_printed_huge_map_reads_back_or_is_refused_clearly() -> None:
    d = var("d0", 0, 3)
    m = IndexingMap((Variable("d0", 0, 3),), results=(d + 10**5000,)).normalized()
    with pytest.raises(IndexingMapError, match="5001 digits at offset"):
        parse_map(print_map(m))


# ------------------------------------------------------------------ 6. deep nesting
@pytest.mark.slow
@pytest.mark.parametrize("bracket", ["[", "(", "{", "-", "min(", "2("])
def test_deeply_nested_map_text_is_a_clear_error(bracket: str) -> None:
    for where in ("(d0) -> ({}d0), domain: d0 in [0, 3]", "(d0) -> (d0), domain: d0 in {}"):
        with pytest.raises(IndexingMapError, match="at offset"):
            parse_map(where.format(bracket * 100_000))


def test_a_long_chain_of_operators_simplifies_and_prints() -> None:
    # Left-associative: no nesting in the text, but a term 4000 deep.
    chain = " * 3 floordiv 2" * 2000
    m = parse_map(f"(d0)[s0] -> (d0{chain} + s0), domain: d0 in [0, 3], s0 in [0, 1]")
    text = print_map(m)
    assert parse_map(text) == m
    s = simplify_map(m)
    assert parse_map(print_map(s)) == s


@pytest.mark.slow
def test_a_batch_goes_on_after_a_deeply_nested_line(tmp_path: Path) -> None:
    ok = json.dumps({"id": 2, "map": "(d0) -> (d0 mod 8), domain: d0 in [0, 7]"})
    lines = [
        json.dumps({"id": 1, "map": "(d0) -> (" + "[" * 100_000 + "), domain: d0 in [0, 3]"}),
        ok,
        "[" * 100_000,
        json.dumps(
            {
                "id": 3,
                "map": "(d0) -> ("
                + "(" * 100_000
                + "d0"
                + ")" * 100_000
                + "), domain: d0 in [0, 3]",
            }
        ),
        '{"id": ' + "9" * 5000 + "}",
        ok,
    ]
    records = [map_record(text, i, keep_unused=False) for i, text in enumerate(lines, 1)]
    assert records[0]["id"] == 1 and "expected an expression at offset 9" in records[0]["error"]
    assert records[1] == records[5] == {"id": 2, "output": "(d0) -> (d0), domain: d0 in [0, 7]"}
    assert records[2] == {"id": None, "error": "line 3: not read: JSON nested too deeply"}
    assert (
        records[3]["id"] == 3 and "nested deeper than 10000 at offset 10009" in records[3]["error"]
    )
    assert records[4]["id"] is None and records[4]["error"].startswith("line 5: not read")
    f = tmp_path / "deep.jsonl"
    f.write_text("\n".join(lines) + "\n")
    assert main(["map", "simplify", "--batch", str(f)]) == 1


# ------------------------------------------------------------------ 7. fixed point, empty maps, CLI
IDEMPOTENCE = (
    "(d0)[s0] -> (((d0 + 8) mod 8 + s0) floordiv 4), "
    "domain: d0 in [0, 100], s0 in [0, 1], d0 mod 8 in [0, 2]"
)


def test_one_pass_reaches_the_fixed_point() -> None:
    once = simplify_map(parse_map(IDEMPOTENCE))
    assert print_map(once) == "(d0) -> (0), domain: d0 in [0, 100], d0 mod 8 in [0, 2]"
    assert simplify_map(once) == once


@PROPERTY
@given(maps_with_constrained_subterms())
def test_simplify_is_idempotent_when_constraints_apply_after_simplifying(m: IndexingMap) -> None:
    s = simplify_map(m)
    assert simplify_map(s) == s, (str(m), str(s))
    assert image(s) == image(m)


@PROPERTY
@given(small_maps())
def test_simplify_is_idempotent_and_exact(m: IndexingMap) -> None:
    s = simplify_map(m)
    assert simplify_map(s) == s, (str(m), str(s))
    assert image(s) == image(m)
    assert parse_map(print_map(s)) == s


@pytest.mark.parametrize(("dims", "results"), [(0, 0), (1, 1), (2, 3), (3, 0), (0, 2)])
def test_known_empty_keeps_its_dimensions_through_text(dims: int, results: int) -> None:
    m = IndexingMap.empty(dims, results)
    text = print_map(m)
    assert text.endswith("domain: KNOWN EMPTY")
    assert parse_map(text) == m
    assert (parse_map(text).n_dims, parse_map(text).n_results) == (dims, results)


def test_known_empty_text_that_is_not_a_map_is_an_error() -> None:
    with pytest.raises(IndexingMapError, match="no range or runtime variables"):
        parse_map("(d0)[s0] -> (0), domain: KNOWN EMPTY")
    with pytest.raises(IndexingMapError, match="expected 'in' at offset 27"):
        parse_map("(d0) -> (0), domain: KNOWN EMPTY, d0 in [0, 1]")


def test_maps_equal_against_empty_maps() -> None:
    empty = parse_map("(d0) -> (0), domain: KNOWN EMPTY")
    assert maps_equal(empty, IndexingMap.empty(1, 1))
    assert maps_equal(empty, parse_map(JOINTLY_EMPTY))
    assert not maps_equal(empty, parse_map(IDENTITY))
    assert not maps_equal(parse_map(IDENTITY), empty)
    # Empty only by the solver or by enumeration: 3a + 5b = 1 has no natural solution.
    hidden = parse_map(
        "(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 9], d0 * 3 + s0 * 5 in [1, 1]"
    )
    assert decide_empty(hidden) is True
    assert maps_equal(hidden, empty) and maps_equal(empty, hidden)
    # Different dimension counts are different maps even when both are empty.
    assert not maps_equal(empty, IndexingMap.empty(2, 1))


@pytest.mark.parametrize(
    "argv",
    [
        ["map", "simplify", "--keep-unused", "MAP"],
        ["map", "simplify", "MAP", "--keep-unused"],
    ],
)
def test_cli_keep_unused_before_or_after_the_map(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    text = "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 2]"
    assert main([text if a == "MAP" else a for a in argv]) == 0
    assert capsys.readouterr().out == text + "\n"
    assert main(["map", "simplify", text]) == 0
    assert capsys.readouterr().out == "(d0) -> (d0), domain: d0 in [0, 3]\n"


def test_cli_prints_known_empty_with_its_dimensions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["map", "simplify", JOINTLY_EMPTY]) == 0
    out = capsys.readouterr().out
    assert out == "(d0) -> (0), domain: KNOWN EMPTY\n"
    assert parse_map(out) == IndexingMap.empty(1, 1)


# ------------------------------------------------------------------ size: no hang
def test_large_maps_are_simplified_without_blowing_up() -> None:
    # Cubic once (residue pairs asked of the rewriter each pass, sums rebuilt at each
    # addend, bounds rebuilt per term): these would outlast the per-test time limit.
    n = 600
    residues = ", ".join(f"d0 mod {k} in [0, 0]" for k in range(2, n))
    assert simplified(f"(d0) -> (d0), domain: d0 in [0, 100000], {residues}") == (
        "(d0) -> (0), domain: d0 in [0, 0]"
    )
    names = [f"d{i}" for i in range(3 * n)]
    wide = (
        f"({', '.join(names)}) -> ({' + '.join(names)}), "
        f"domain: {', '.join(f'{x} in [0, 1]' for x in names)}"
    )
    assert simplified(wide) == print_map(parse_map(wide))
    syms = [f"s{i}" for i in range(n)]
    chained = (
        f"(d0)[{', '.join(syms)}] -> (d0), domain: d0 in [0, 3], "
        + ", ".join(f"{s} in [0, 1]" for s in syms)
        + ", "
        + ", ".join(f"{a} + {b} in [0, 1]" for a, b in itertools.pairwise(syms))
    )
    # 2**600 points: not enumerated, but the probe finds the witness 0, 0, ..., 0.
    assert simplified(chained) == "(d0) -> (d0), domain: d0 in [0, 3]"
