"""HLO indexing maps: the seed's examples (XLA's indexing analysis docs), fusions, layouts.

Each seed example is checked in both directions the seed gives against the seed's own
map: the same function on the same domain (decided by ``maps_equal``) and no more
divisions than the seed writes. Property tests compare the maps of random small ops
against a reference that simulates each op element by element.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

from quorem.evaluation import count_divmod, evaluate
from quorem.hlo.indexing import (
    OperandMaps,
    Unknown,
    format_indexing,
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from quorem.hlo.layout import logical_to_physical, physical_to_logical
from quorem.hlo.parse import HloError, Module, parse_hlo
from quorem.indexing.map import IndexingMap
from quorem.indexing.mapsyntax import parse_map, print_map
from quorem.indexing.simplify import maps_equal, simplify_map

Index = tuple[int, ...]


# ---------------------------------------------------------------------------- helpers
def out_to_in(text: str, output: int = 0, *, physical: bool = False) -> list[OperandMaps]:
    m = parse_hlo(text)
    return output_to_input(m, m.entry, m.entry.root, output, physical=physical)


def in_to_out(text: str, operand: int, *, physical: bool = False) -> list[OperandMaps]:
    m = parse_hlo(text)
    return input_to_output(m, m.entry, m.entry.root, operand, physical=physical)


def fused(text: str, output: int = 0) -> list[OperandMaps]:
    m = parse_hlo(text)
    return fused_output_to_input(m, m.entry, output)


def only(maps: OperandMaps) -> IndexingMap:
    assert len(maps) == 1, maps
    (m,) = maps
    assert isinstance(m, IndexingMap), m
    return m


def unknowns(per: Sequence[OperandMaps]) -> list[tuple[IndexingMap | None, ...]]:
    """``per`` with each unknown map as None (each has a reason naming its instruction)."""
    out = []
    for ms in per:
        for m in ms:
            assert not isinstance(m, Unknown) or re.match(r"\S+ \([a-z-]+\): \S", m.reason), m
        out.append(tuple(None if isinstance(m, Unknown) else m for m in ms))
    return out


def divmods(m: IndexingMap) -> int:
    return sum(count_divmod(t) for t in m.results) + sum(
        count_divmod(e) for e, _, _ in m.constraints
    )


def assert_map(actual: IndexingMap | None, expected_text: str) -> None:
    """``actual`` is the seed's map: equal as functions on equal domains, no more divisions."""
    assert actual is not None
    expected = simplify_map(parse_map(expected_text))
    assert maps_equal(actual, expected), f"\n{print_map(actual)}\n!=\n{print_map(expected)}"
    assert divmods(actual) <= divmods(expected), f"{print_map(actual)} is not as simple"


def assert_maps(actual: OperandMaps, *expected_texts: str) -> None:
    """The set of maps is the expected set (in any order)."""
    assert len(actual) == len(expected_texts), [print_map(m) for m in actual if m]
    remaining = list(expected_texts)
    for m in actual:
        assert isinstance(m, IndexingMap), m
        for text in remaining:
            e = simplify_map(parse_map(text))
            if m.n_dims == e.n_dims and len(m.range_vars) == len(e.range_vars) and maps_equal(m, e):
                remaining.remove(text)
                break
        else:
            raise AssertionError(f"unexpected map {print_map(m)}; expected {remaining}")


# ---------------------------------------------------------------------------- seed: unfused ops
ADD = """
p0 = f32[10, 20] parameter(0)
p1 = f32[10, 20] parameter(1)
output = f32[10, 20] add(p0, p1)
"""


def test_elementwise() -> None:
    expected = "(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"
    maps = out_to_in(ADD)
    assert len(maps) == 2
    for ms in maps:
        assert_map(only(ms), expected)
    for operand in (0, 1):
        assert_map(only(in_to_out(ADD, operand)[0]), expected)


BROADCAST = """
p0 = f32[20] parameter(0)
bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
"""


def test_broadcast() -> None:
    (ms,) = out_to_in(BROADCAST)
    assert_map(
        only(ms),
        "(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]",
    )
    assert_map(
        only(in_to_out(BROADCAST, 0)[0]),
        "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]",
    )


def test_iota_reads_nothing() -> None:
    # XLA gives an iota no operand maps. The seed's pair `(d0, d1) -> ()` and
    # `()[s0, s1] -> (s0, s1)` are the maps of a scalar read at every index: those of a
    # broadcast scalar (and of reduce's init values, below).
    assert out_to_in("iota = f32[2,4] iota(), dimensions={1}") == []
    text = "c = f32[] constant(0)\nb = f32[2,4] broadcast(c), dimensions={}"
    assert_map(only(out_to_in(text)[0]), "(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 3]")
    assert_map(
        only(in_to_out(text, 0)[0]), "()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 3]"
    )


DYNAMIC_SLICE = """
src = s32[2, 2, 258] parameter(0)
of1 = s32[] parameter(1)
of2 = s32[] parameter(2)
of3 = s32[] parameter(3)
ds = s32[1, 2, 32] dynamic-slice(src, of1, of2, of3), dynamic_slice_sizes={1, 2, 32}
"""


def test_dynamic_slice() -> None:
    maps = out_to_in(DYNAMIC_SLICE)
    assert len(maps) == 4
    assert_map(
        only(maps[0]),
        """(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2),
        domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31],
        rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226]""",
    )
    for ms in maps[1:]:
        assert_map(
            only(ms), "(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]"
        )
    # XLA has no input-to-output indexing for it; quorem inverts the map above.
    assert_map(
        only(in_to_out(DYNAMIC_SLICE, 0)[0]),
        """(d0, d1, d2){rt0, rt1} -> (d0 - rt0, d1, d2 - rt1),
        domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 257], rt0 in [0, 1], rt1 in [0, 226],
        d0 - rt0 in [0, 0], d2 - rt1 in [0, 31]""",
    )
    assert_map(
        only(in_to_out(DYNAMIC_SLICE, 2)[0]),
        "()[s0, s1, s2] -> (s0, s1, s2), domain: s0 in [0, 0], s1 in [0, 1], s2 in [0, 31]",
    )


def test_dynamic_slice_folds_constant_offsets_clamped() -> None:
    text = """
    p0 = s32[100] parameter(0)
    c = s64[] constant({})
    ds = s32[10] dynamic-slice(p0, c), dynamic_slice_sizes={{10}}
    """
    assert_map(only(out_to_in(text.format(42))[0]), "(d0) -> (d0 + 42), domain: d0 in [0, 9]")
    # HLO clamps the start so that the slice stays inside: 99 reads from 90.
    assert_map(only(out_to_in(text.format(99))[0]), "(d0) -> (d0 + 90), domain: d0 in [0, 9]")


DUS = """
src = s32[20,30] parameter(0)
upd = s32[5,10] parameter(1)
of1 = s32[] parameter(2)
of2 = s32[] parameter(3)
dus = s32[20,30] dynamic-update-slice(
s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)
"""


def test_dynamic_update_slice() -> None:
    maps = out_to_in(DUS)
    assert len(maps) == 4
    assert_map(only(maps[0]), "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]")
    assert_map(
        only(maps[1]),
        """(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1),
        domain: d0 in [0, 19], d1 in [0, 29], rt0 in [0, 15], rt1 in [0, 20]""",
    )
    for ms in maps[2:]:
        assert_map(only(ms), "(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]")
    assert_map(
        only(in_to_out(DUS, 1)[0]),
        "(d0, d1){rt0, rt1} -> (d0 + rt0, d1 + rt1), "
        "domain: d0 in [0, 4], d1 in [0, 9], rt0 in [0, 15], rt1 in [0, 20]",
    )


GATHER = """
operand = f32[33,76,70] parameter(0)
indices = s32[1806,2] parameter(1)
gather = f32[1806,7,8,4] gather(operand, indices),
offset_dims={1,2,3},
collapsed_slice_dims={},
start_index_map={0,1},
index_vector_dim=1,
slice_sizes={7,8,4}
"""


def test_gather() -> None:
    operand, indices = out_to_in(GATHER)
    assert_map(
        only(operand),
        """(d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3),
        domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3],
        rt0 in [0, 26], rt1 in [0, 68]""",
    )
    assert_map(
        only(indices),
        """(d0, d1, d2, d3)[s0] -> (d0, s0),
        domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], s0 in [0, 1]""",
    )


def test_gather_collapsing_a_wide_slice_is_an_error() -> None:
    text = GATHER.replace("collapsed_slice_dims={}", "collapsed_slice_dims={0}")
    with pytest.raises(HloError, match="slice size 1"):
        out_to_in(text)


TRANSPOSE = """
p0 = f32[3, 12288, 6, 128] parameter(0)
transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}
"""


def test_transpose() -> None:
    assert_map(
        only(out_to_in(TRANSPOSE)[0]),
        """(d0, d1, d2, d3) -> (d0, d3, d1, d2),
        domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287]""",
    )
    assert_map(
        only(in_to_out(TRANSPOSE, 0)[0]),
        """(d0, d1, d2, d3) -> (d0, d2, d3, d1),
        domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]""",
    )


REVERSE = """
p0 = f32[1, 17, 9, 9] parameter(0)
reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}
"""


def test_reverse() -> None:
    expected = """(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3),
        domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]"""
    assert_map(only(out_to_in(REVERSE)[0]), expected)
    assert_map(only(in_to_out(REVERSE, 0)[0]), expected)


REDUCE = """
p0 = f32[256,10] parameter(0)
p0_init = f32[] constant(-inf)
p1 = s32[256,10] parameter(1)
p1_init = s32[] constant(0)
out = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init),
dimensions={0}, to_apply=max
"""


def test_variadic_reduce() -> None:
    for output in (0, 1):  # every output reads every input
        maps = out_to_in(REDUCE, output)
        assert len(maps) == 4
        for ms in maps[:2]:
            assert_map(only(ms), "(d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]")
        for ms in maps[2:]:
            assert_map(only(ms), "(d0) -> (), domain: d0 in [0, 9]")
    for operand in (0, 1):
        per_output = in_to_out(REDUCE, operand)
        assert len(per_output) == 2
        for ms in per_output:
            assert_map(only(ms), "(d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]")
    for operand in (2, 3):
        for ms in in_to_out(REDUCE, operand):
            assert_map(only(ms), "()[s0] -> (s0), domain: s0 in [0, 9]")


def test_reduce_of_several_dimensions() -> None:
    # The seed's introduction: reduce dims {0, 3} of f32[2, 4, 8, 16].
    text = """
    in = f32[2, 4, 8, 16] parameter(0)
    c = f32[] constant(0)
    out = f32[4, 8] reduce(in, c), dimensions={3, 0}, to_apply=add
    """
    assert_map(
        only(out_to_in(text)[0]),
        "(d0, d1)[s0, s1] -> (s0, d0, d1, s1), "
        "domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 1], s1 in [0, 15]",
    )
    assert_map(
        only(in_to_out(text, 0)[0]),
        "(d0, d1, d2, d3) -> (d1, d2), "
        "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 7], d3 in [0, 15]",
    )


SLICE = """
p0 = f32[10, 20, 50] parameter(0)
slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0),
slice={[5:10:1], [3:20:7], [0:50:2]}
"""


def test_slice() -> None:
    assert_map(
        only(out_to_in(SLICE)[0]),
        """(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2),
        domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]""",
    )
    m = only(in_to_out(SLICE, 0)[0])
    assert_map(
        m,
        """(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2),
        domain: d0 in [5, 9], d1 in [3, 17], d2 in [0, 48],
        (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]""",
    )
    assert len(m.constraints) == 2  # the strides' residues


@pytest.mark.parametrize(
    ("src", "dst", "out_to_in_text", "in_to_out_text"),
    [
        (  # collapse
            "4,8",
            "32",
            "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]",
            "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]",
        ),
        (  # expand
            "32",
            "4, 8",
            "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]",
            "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]",
        ),
        (  # generic: linearize then delinearize
            "4,8",
            "2, 4, 4",
            "(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4), "
            "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]",
            "(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7]",
        ),
        (  # generic: a collapsed and an expanded subshape
            "4, 8, 12",
            "32, 3, 4",
            "(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), "
            "domain: d0 in [0, 31], d1 in [0, 2] d2 in [0, 3]",
            "(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]",
        ),
    ],
)
def test_reshape(src: str, dst: str, out_to_in_text: str, in_to_out_text: str) -> None:
    text = f"p0 = f32[{src}] parameter(0)\nreshape = f32[{dst}] reshape(p0)"
    assert_map(only(out_to_in(text)[0]), out_to_in_text)
    assert_map(only(in_to_out(text, 0)[0]), in_to_out_text)


def test_reshape_keeps_size_one_dimensions_and_empty_shapes() -> None:
    text = "p0 = f32[32] parameter(0)\nr = f32[1, 32] reshape(p0)"
    assert_map(only(out_to_in(text)[0]), "(d0, d1) -> (d1), domain: d0 in [0, 0], d1 in [0, 31]")
    text = "p0 = f32[2, 1] parameter(0)\nr = f32[2] reshape(p0)"
    assert_map(only(out_to_in(text)[0]), "(d0) -> (d0, 0), domain: d0 in [0, 1]")
    empty = only(out_to_in("p0 = f32[1,0,0] parameter(0)\nr = f32[0] reshape(p0)")[0])
    assert empty.known_empty
    assert empty.n_results == 3


@pytest.mark.parametrize(
    ("text", "out_to_in_text", "in_to_out_text"),
    [
        (  # no layouts: a reshape
            "p0 = f32[4, 32] parameter(0)\nb = f32[4, 8, 4] bitcast(p0)",
            "(d0, d1, d2) -> (d0, d1 * 4 + d2), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 3]",
            "(d0, d1) -> (d0, d1 floordiv 4, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 31]",
        ),
        (  # a transpose
            "p0 = f32[3, 12288, 6, 128] parameter(0)\nb = f32[3, 6, 128, 12288] {2, 1, 3, 0} "
            "bitcast(p0)",
            "(d0, d1, d2, d3) -> (d0, d3, d1, d2), "
            "domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287]",
            "(d0, d1, d2, d3) -> (d0, d2, d3, d1), "
            "domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]",
        ),
        (  # transpose-reshape-transpose
            "p0 = f32[16, 17, 3] parameter(0)\nb = f32[51, 16] {0, 1} bitcast(p0)",
            "(d0, d1) -> (d1, d0 floordiv 3, d0 mod 3), domain: d0 in [0, 50], d1 in [0, 15]",
            "(d0, d1, d2) -> (d1 * 3 + d2, d0), domain: d0 in [0, 15], d1 in [0, 16], d2 in [0, 2]",
        ),
    ],
)
def test_bitcast(text: str, out_to_in_text: str, in_to_out_text: str) -> None:
    assert_map(only(out_to_in(text)[0]), out_to_in_text)
    assert_map(only(in_to_out(text, 0)[0]), in_to_out_text)


CONCAT = """
p0 = f32[2, 5, 7] parameter(0)
p1 = f32[2, 11, 7] parameter(1)
p2 = f32[2, 17, 7] parameter(2)
ROOT output = f32[2, 33, 7] concatenate(f32[2, 5, 7] p0, f32[2, 11, 7] p1, f32[2, 17, 7] p2),
  dimensions={1}
"""


def test_concatenate() -> None:
    maps = out_to_in(CONCAT)
    domains = ["d1 in [0, 4]", "d1 in [5, 15]", "d1 in [16, 32]"]
    results = ["d1", "d1 - 5", "d1 - 16"]
    for ms, dom, res in zip(maps, domains, results, strict=True):
        assert_map(
            only(ms), f"(d0, d1, d2) -> (d0, {res}, d2), domain: d0 in [0, 1], {dom}, d2 in [0, 6]"
        )
    domains = ["d1 in [0, 4]", "d1 in [0, 10]", "d1 in [0, 16]"]
    results = ["d1", "d1 + 5", "d1 + 16"]
    for operand, (dom, res) in enumerate(zip(domains, results, strict=True)):
        assert_map(
            only(in_to_out(CONCAT, operand)[0]),
            f"(d0, d1, d2) -> (d0, {res}, d2), domain: d0 in [0, 1], {dom}, d2 in [0, 6]",
        )


DOT = """
p0 = f32[4, 128, 256] parameter(0)
p1 = f32[4, 256, 64] parameter(1)
output = f32[4, 128, 64] dot(p0, p1),
lhs_batch_dims={0}, rhs_batch_dims={0},
lhs_contracting_dims={2}, rhs_contracting_dims={1}
"""


def test_dot() -> None:
    lhs, rhs = out_to_in(DOT)
    dom = "domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]"
    assert_map(only(lhs), f"(d0, d1, d2)[s0] -> (d0, d1, s0), {dom}")
    assert_map(only(rhs), f"(d0, d1, d2)[s0] -> (d0, s0, d2), {dom}")
    assert_map(
        only(in_to_out(DOT, 0)[0]),
        "(d0, d1, d2)[s0] -> (d0, d1, s0), "
        "domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 255], s0 in [0, 63]",
    )
    # The seed prints `(d0, s0, d1)` here, which would put p1's contracted index d1
    # (up to 255) in the output's last dimension (size 64): p1[b, k, n] reaches
    # output[b, *, n], as the property test below checks against a reference.
    assert_map(
        only(in_to_out(DOT, 1)[0]),
        "(d0, d1, d2)[s0] -> (d0, s0, d2), "
        "domain: d0 in [0, 3], d1 in [0, 255], d2 in [0, 63], s0 in [0, 127]",
    )


def test_dot_with_permuted_batch_and_contracting_dims() -> None:
    text = """
    p0 = f32[4, 38, 17, 11, 18, 10] parameter(0)
    p1 = f32[17, 10, 16, 18, 22, 38] parameter(1)
    ROOT dot = f32[10, 38, 4, 11, 16, 22] dot(p0, p1),
      lhs_batch_dims={5,1}, rhs_batch_dims={1,5},
      lhs_contracting_dims={4,2}, rhs_contracting_dims={3,0}
    """
    dom = (
        "domain: d0 in [0, 9], d1 in [0, 37], d2 in [0, 3], d3 in [0, 10], d4 in [0, 15], "
        "d5 in [0, 21], s0 in [0, 17], s1 in [0, 16]"
    )
    lhs, rhs = out_to_in(text)
    assert_map(only(lhs), f"(d0, d1, d2, d3, d4, d5)[s0, s1] -> (d2, d1, s1, d3, s0, d0), {dom}")
    assert_map(only(rhs), f"(d0, d1, d2, d3, d4, d5)[s0, s1] -> (s1, d0, d4, s0, d5, d1), {dom}")


PAD = """
p0 = f32[4, 4] parameter(0)
p1 = f32[] parameter(1)
pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
"""


def test_pad() -> None:
    operand, value = out_to_in(PAD)
    assert_map(
        only(operand),
        """(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4),
        domain: d0 in [1, 7], d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]""",
    )
    assert_map(only(value), "(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]")
    assert_map(
        only(in_to_out(PAD, 0)[0]),
        "(d0, d1) -> (d0 * 2 + 1, d1 + 4), domain: d0 in [0, 3], d1 in [0, 3]",
    )


def test_pad_with_negative_padding() -> None:
    # Interior padding first, then -3 low and -5 high: 7 + 6 - 8 = 5 elements.
    text = """
    p0 = f32[7] parameter(0)
    p1 = f32[] parameter(1)
    pad = f32[5] pad(p0, p1), padding=-3_-5_1
    """
    assert_map(
        only(out_to_in(text)[0]),
        "(d0) -> ((d0 + 3) floordiv 2), domain: d0 in [0, 4], (d0 + 3) mod 2 in [0, 0]",
    )
    assert_map(only(in_to_out(text, 0)[0]), "(d0) -> (d0 * 2 - 3), domain: d0 in [2, 3]")


REDUCE_WINDOW = """
c_inf = f32[] constant(-inf)
p0 = f32[1024, 514] parameter(0)
outpu = f32[1024, 3] reduce-window(p0, c_inf),
window={size=1x512 pad=0_0x0_0}, to_apply=max
"""


def test_reduce_window() -> None:
    operand, init = out_to_in(REDUCE_WINDOW)
    assert_map(
        only(operand),
        "(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]",
    )
    assert_map(only(init), "(d0, d1) -> (), domain: d0 in [0, 1023], d1 in [0, 2]")
    # XLA has no input-to-output indexing for it; quorem inverts the map above.
    assert_map(
        only(in_to_out(REDUCE_WINDOW, 0)[0]),
        """(d0, d1)[s0] -> (d0, d1 - s0), domain: d0 in [0, 1023], d1 in [0, 513],
        s0 in [0, 511], d1 - s0 in [0, 2]""",
    )


@pytest.mark.parametrize(
    ("shapes", "window", "expected"),
    [
        (
            "f32[13, 17] -> f32[7, 17]",
            "size=3x2 stride=2x1 pad=1_1x0_1",
            "(d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1 + s1), domain: d0 in [0, 6], "
            "d1 in [0, 16], s0 in [0, 2], s1 in [0, 1], d0 * 2 + s0 in [1, 13], d1 + s1 in [0, 16]",
        ),
        (
            "f32[2, 3] -> f32[3, 5]",
            "size=1x1 pad=0_0x0_0 lhs_dilate=2x2",
            "(d0, d1) -> (d0 floordiv 2, d1 floordiv 2), domain: d0 in [0, 2], d1 in [0, 4], "
            "d0 mod 2 in [0, 0], d1 mod 2 in [0, 0]",
        ),
        (
            "f32[7, 3] -> f32[4, 3]",
            "size=2x1 pad=0_0x0_0 rhs_dilate=3x1",
            "(d0, d1)[s0] -> (d0 + s0 * 3, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]",
        ),
    ],
)
def test_reduce_window_padding_stride_and_dilations(
    shapes: str, window: str, expected: str
) -> None:
    src, out = shapes.split(" -> ")
    text = f"""
    c = f32[] constant(-inf)
    p0 = {src} parameter(0)
    ROOT rw = {out} reduce-window(p0, c), window={{{window}}}, to_apply=max
    """
    assert_map(only(out_to_in(text)[0]), expected)


def test_tuple_and_get_tuple_element() -> None:
    text = """
    p0 = f32[2] parameter(0)
    p1 = s32[3] parameter(1)
    t = (f32[2], s32[3]) tuple(p0, p1)
    ROOT g = s32[3] get-tuple-element(t), index=1
    """
    assert_map(only(out_to_in(text)[0]), "(d0) -> (d0), domain: d0 in [0, 2]")
    m = parse_hlo(text)
    t = m.entry.get("t")
    maps = output_to_input(m, m.entry, t, 1)
    assert maps[0] == ()  # element 1 does not read p0
    assert_map(only(maps[1]), "(d0) -> (d0), domain: d0 in [0, 2]")
    # Through the tuple, parameter 1 reaches the root; parameter 0 does not.
    assert_map(only(fused(text)[1]), "(d0) -> (d0), domain: d0 in [0, 2]")
    assert fused(text)[0] == ()


def test_bitcast_convert_is_elementwise_only_between_equal_widths() -> None:
    same = "p0 = f32[4] parameter(0)\nb = s32[4] bitcast-convert(p0)"
    assert_map(only(out_to_in(same)[0]), "(d0) -> (d0), domain: d0 in [0, 3]")
    narrower = "p0 = f32[4] parameter(0)\nb = s16[4, 2] bitcast-convert(p0)"
    assert unknowns(out_to_in(narrower)) == [(None,)]


def test_tuple_parameters_of_a_fusion() -> None:
    text = """
    f {
      p0 = (f32[2], f32[3]) parameter(0)
      ROOT g = f32[3] get-tuple-element(p0), index=1
    }
    """
    assert unknowns(fused(text)) == [(None,)]  # read, but no map indexes a tuple
    m = parse_hlo(text)
    with pytest.raises(HloError, match="tuple-shaped parameter"):
        fused_input_to_output(m, m.entry, 0)


def test_unsupported_op_is_unknown() -> None:
    text = """
    p0 = f32[4,4] parameter(0)
    p1 = f32[4,3] parameter(1)
    ROOT out = f32[4,3] triangular-solve(f32[4,4] p0, f32[4,3] p1), left_side=true
    """
    assert unknowns(out_to_in(text)) == [(None,), (None,)]
    assert "unknown indexing" in format_indexing(out_to_in(text))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("p0 = f32[2,3] parameter(0)\nt = f32[3,2] transpose(p0), dimensions={0,0}", "distinct"),
        ("p0 = f32[2,3] parameter(0)\nt = f32[2,3] transpose(p0), dimensions={1,0}", "expected"),
        ("p0 = f32[6] parameter(0)\nr = f32[4] reshape(p0)", "cannot reshape"),
        ("p0 = f32[6] parameter(0)\nr = f32[3] slice(p0), slice={[4:9:1]}", "outside"),
        ("p0 = f32[6] parameter(0)\nr = f32[4] slice(p0), slice={[0:6:2]}", "expected [3]"),
        ("p0 = f32[6] parameter(0)\nr = f32[6,2] broadcast(p0), dimensions={1}", "expected"),
        ("p0 = f32[6] parameter(0)\nr = f32[7] add(p0, p0)", "expected [7]"),
        ("p0 = f32[6] parameter(0)\nr = f32[7] negate(p0), extra={}", "expected [7]"),
        ("p0 = f32[2] parameter(0)\nc = f32[] constant(0)\nr = f32[9] pad(p0, c), padding=1_1",
         "expected [4]"),
        ("p0 = f32[2] parameter(0)\nr = f32[2] dot(p0, p0), lhs_contracting_dims={0}",
         "as many contracting"),
        ("p0 = f32[2] parameter(0)\nr = f32[2] dot(p0, p0), lhs_contracting_dims={0}, "
         "rhs_contracting_dims={0}", "the output: expected []"),
        ("p0 = f32[2] parameter(0)\nc = f32[] constant(0)\nr = f32[2] reduce(p0, c), "
         "dimensions={1}", "distinct"),
        ("p0 = f32[2] parameter(0)\nr = (f32[2]) tuple(p0)\ng = f32[2] get-tuple-element(r), "
         "index=3", "index=3"),
        ("p0 = f32[4] parameter(0)\nr = f32[9] dynamic-slice(p0, p0), dynamic_slice_sizes={9}",
         "exceed"),
        ("p0 = f32[2] parameter(0)\nr = f32[4] concatenate(p0, p0), dimensions={0, 0}", "distinct"),
        ("f {\n p = f32[2] parameter(0)\n ROOT n = f32[2] negate(p)\n}\n"
         "ENTRY e {\n p0 = f32[3] parameter(0)\n ROOT x = f32[3] fusion(p0), calls=f\n}",
         "parameter(0) of f"),
        ("f {\n p = f32[2] parameter(0)\n ROOT n = f32[2] negate(p)\n}\n"
         "ENTRY e {\n p0 = f32[2] parameter(0)\n ROOT x = f32[2] fusion(p0, p0), calls=f\n}",
         "1 parameters"),
    ],
)  # fmt: skip
def test_inconsistent_instructions_are_hlo_errors(text: str, why: str) -> None:
    module = parse_hlo(text, "x.hlo")
    with pytest.raises(HloError, match=re.escape(why)) as info:
        output_to_input(module, module.entry, module.entry.root)
    assert str(info.value).startswith("x.hlo:")  # and names the line


# ---------------------------------------------------------------------------- seed: fusions
def test_fusion_of_a_tensor_and_its_transpose_reads_it_twice() -> None:
    text = """
    f {
    p0 = f32[1000, 1000] parameter(0)
    transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
    ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)
    }
    """
    dom = "domain: d0 in [0, 999], d1 in [0, 999]"
    (maps,) = fused(text)
    assert_maps(maps, f"(d0, d1) -> (d0, d1), {dom}", f"(d0, d1) -> (d1, d0), {dom}")


TRANSPOSES = """
f {
p0 = f32[20, 10, 50] parameter(0)
lhs_transpose_1 = f32[10, 20, 50] transpose(p0), dimensions={1, 0, 2}
lhs_e = f32[10, 20, 50] exponential(lhs_transpose_1)
lhs_transpose_2 = f32[10, 50, 20] transpose(lhs_e), dimensions={0, 2, 1}
rhs_transpose_1 = f32[50, 10, 20] transpose(p0), dimensions={2, 1, 0}
rhs_log = f32[50, 10, 20] exponential(rhs_transpose_1)
rhs_transpose_2 = f32[10, 50, 20] transpose(rhs_log), dimensions={1, 0, 2}
ROOT output = f32[10, 50, 20] add(lhs_transpose_2, rhs_transpose_2)
}
"""


def test_fusion_deduplicates_equal_maps() -> None:
    (maps,) = fused(TRANSPOSES)
    assert_maps(
        maps, "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]"
    )


def test_fusion_instruction_is_analysed_through_its_computation() -> None:
    text = (
        TRANSPOSES
        + """
    ENTRY e {
      p0 = f32[20, 10, 50] parameter(0)
      ROOT fusion = f32[10, 50, 20] fusion(p0), kind=kLoop, calls=f
    }
    """
    )
    (maps,) = out_to_in(text)
    assert print_map(only(maps)) == (
        "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]"
    )


RESHAPE_CHAIN = """
p0 = f32[10, 10, 10] parameter(0)
reshape1 = f32[50, 20] reshape(p0)
reshape2 = f32[10, 10, 10] reshape(reshape1)
"""


def test_reshape_chain_simplifies_to_the_identity() -> None:
    (maps,) = fused(RESHAPE_CHAIN)
    assert print_map(only(maps)) == (
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    m = parse_hlo(RESHAPE_CHAIN)
    (back,) = fused_input_to_output(m, m.entry, 0)
    assert print_map(only(back)) == print_map(only(maps))
    # Unsimplified, the composition is full of divisions: the simplifier did the work.
    raw = only(fused_output_to_input(m, m.entry, simplify=False)[0])
    assert divmods(raw) > 0


def test_softmax_fusion() -> None:
    # XLA's softmax fusion (indexing_analysis_test.cc): a reduction over the last dim
    # read through bitcasts and broadcasts, and the element itself.
    text = """
    softmax {
      p0 = f32[2,65,125]{2,1,0} parameter(0)
      bitcast0 = f32[65,2,125]{2,1,0} bitcast(p0)
      c = f32[] constant(-inf)
      reduce0 = f32[2,65]{1,0} reduce(p0, c), dimensions={2}, to_apply=max
      bitcast1 = f32[130]{0} bitcast(reduce0)
      bcast1 = f32[130,125]{1,0} broadcast(bitcast1), dimensions={0}
      bitcast2 = f32[65,2,125]{2,1,0} bitcast(bcast1)
      subtract0 = f32[65,2,125]{2,1,0} subtract(bitcast0, bitcast2)
      exponential0 = f32[65,2,125]{2,1,0} exponential(subtract0)
      zero = f32[] constant(0)
      reduce2 = f32[65,2]{1,0} reduce(exponential0, zero), dimensions={2}, to_apply=add
      bitcast6 = f32[130]{0} bitcast(reduce2)
      bcast3 = f32[130,125]{1,0} broadcast(bitcast6), dimensions={0}
      bitcast7 = f32[65,2,125]{2,1,0} bitcast(bcast3)
      divide = f32[65,2,125]{2,1,0} divide(exponential0, bitcast7)
      ROOT bitcast8 = f32[2,65,125]{2,1,0} bitcast(divide)
    }
    """
    (maps,) = fused(text)
    dom = "domain: d0 in [0, 1], d1 in [0, 64], d2 in [0, 124]"
    assert_maps(
        maps,
        f"(d0, d1, d2)[s0] -> (d0, d1, s0), {dom}, s0 in [0, 124]",
        f"(d0, d1, d2) -> (d0, d1, d2), {dom}",
    )
    assert all(isinstance(m, IndexingMap) and divmods(m) == 0 for m in maps)


def test_fusion_of_reduce_of_reduce_and_nested_slices() -> None:
    text = """
    f {
      p0 = f32[150, 20, 10, 50] parameter(0)
      p0_init = f32[] parameter(1)
      reduce_1 = f32[20, 10] reduce(p0, p0_init), dimensions={0, 3}, to_apply=max
      ROOT reduce_2 = f32[10] reduce(reduce_1, p0_init), dimensions={0}, to_apply=max
    }
    """
    p0, init = fused(text)
    assert_maps(
        p0,
        "(d0)[s0, s1, s2] -> (s0, s2, d0, s1), "
        "domain: d0 in [0, 9], s0 in [0, 149], s1 in [0, 49], s2 in [0, 19]",
    )
    assert_maps(init, "(d0) -> (), domain: d0 in [0, 9]")
    text = """
    f {
      p0 = f32[150, 64, 1024] parameter(0)
      s1 = f32[16, 32, 128] slice(p0), slice={[5:21:1], [0:64:2], [50:434:3]}
      ROOT s2 = f32[7, 9, 24] slice(s1), slice={[3:16:2], [4:30:3], [5:100:4]}
    }
    """
    (maps,) = fused(text)
    assert print_map(only(maps)) == (
        "(d0, d1, d2) -> (d0 * 2 + 8, d1 * 6 + 8, d2 * 12 + 65), "
        "domain: d0 in [0, 6], d1 in [0, 8], d2 in [0, 23]"
    )


def test_fusion_slice_of_concatenate_and_reshape_of_concatenate() -> None:
    text = """
    f {
      p0 = f32[2, 5, 7] parameter(0)
      p1 = f32[2, 11, 7] parameter(1)
      p2 = f32[2, 17, 7] parameter(2)
      concat = f32[2, 33, 7] concatenate(p0, p1, p2), dimensions={1}
      ROOT slice = f32[2, 3, 7] slice(concat), slice={[0:2:1], [0:5:2], [0:7:1]}
    }
    """
    p0, p1, p2 = fused(text)
    assert_maps(
        p0, "(d0, d1, d2) -> (d0, d1 * 2, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 6]"
    )
    assert only(p1).known_empty and only(p2).known_empty  # the slice ends inside p0
    text = """
    f {
      p0 = f32[2] parameter(0)
      p1 = f32[30] parameter(1)
      concat = f32[32] concatenate(p0, p1), dimensions={0}
      ROOT reshape = f32[4, 8] reshape(concat)
    }
    """
    p0, p1 = fused(text)
    assert_maps(
        p0, "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7], d0 * 8 + d1 in [0, 1]"
    )
    assert_maps(
        p1,
        "(d0, d1) -> (d0 * 8 + d1 - 2), domain: d0 in [0, 3], d1 in [0, 7], d0 * 8 + d1 in [2, 31]",
    )


def test_fusion_of_dynamic_slice_of_dynamic_slice() -> None:
    text = """
    f {
      src = s32[150, 64] parameter(0)
      of11 = s32[] parameter(1)
      of12 = s32[] parameter(2)
      of21 = s32[] parameter(3)
      of22 = s32[] parameter(4)
      ds1 = s32[50, 32] dynamic-slice(src, of11, of12), dynamic_slice_sizes={50, 32}
      ROOT ds2 = s32[25, 16] dynamic-slice(ds1, of21, of22), dynamic_slice_sizes={25, 16}
    }
    """
    maps = fused(text)
    assert_maps(
        maps[0],
        "(d0, d1){rt0, rt1, rt2, rt3} -> (d0 + rt0 + rt2, d1 + rt1 + rt3), domain: d0 in [0, 24], "
        "d1 in [0, 15], rt0 in [0, 100], rt1 in [0, 32], rt2 in [0, 25], rt3 in [0, 16]",
    )
    for ms in maps[1:]:
        assert_maps(ms, "(d0, d1) -> (), domain: d0 in [0, 24], d1 in [0, 15]")


def test_fusion_with_an_unsupported_op_is_unknown_only_there() -> None:
    text = """
    f {
      p0 = f32[20, 20] parameter(0)
      p1 = f32[4,4] parameter(1)
      p2 = f32[4,3] parameter(2)
      lhs = f32[4,3] triangular-solve(p1, p2), left_side=true
      rhs = f32[4, 3] slice(p0), slice={[0:20:6], [0:5:2]}
      ROOT add = f32[4, 3] add(lhs, rhs)
    }
    """
    p0, p1, p2 = fused(text)
    assert_maps(p0, "(d0, d1) -> (d0 * 6, d1 * 2), domain: d0 in [0, 3], d1 in [0, 2]")
    assert unknowns([p1, p2]) == [(None,), (None,)]


def test_fusion_with_dot_through_bitcasts_with_layouts() -> None:
    # XLA's FusionOpWithDot (indexing_analysis_test.cc), shortened to its bitcasts.
    text = """
    f {
      p0 = s8[3,12288,6,128]{3,2,1,0} parameter(0)
      bitcast1 = s8[3,6,128,12288]{2,1,3,0} bitcast(p0)
      copy1 = s8[3,6,128,12288]{3,2,1,0} copy(bitcast1)
      bitcast2 = s8[2304,12288]{1,0} bitcast(copy1)
      bitcast3 = s8[2304,16,768]{2,1,0} bitcast(bitcast2)
      p1 = s8[16,12288]{1,0} parameter(1)
      bcast4 = s8[16,16,768]{2,1,0} bitcast(p1)
      dot = s8[16,2304,16]{2,1,0} dot(bitcast3, bcast4),
        lhs_batch_dims={1}, lhs_contracting_dims={2},
        rhs_batch_dims={1}, rhs_contracting_dims={2}
      bcast5 = s8[16,3,6,128,16]{4,3,2,1,0} bitcast(dot)
      copy2 = s8[16,3,6,128,16]{3,2,4,1,0} copy(bcast5)
      ROOT bcast8 = s8[16,16,3,1,6,128]{5,4,1,3,2,0} bitcast(copy2)
    }
    """
    p0, p1 = fused(text)
    dom = (
        "domain: d0 in [0, 15], d1 in [0, 15], d2 in [0, 2], d3 in [0, 0], d4 in [0, 5], "
        "d5 in [0, 127], s0 in [0, 767]"
    )
    assert (
        print_map(only(p0)) == f"(d0, d1, d2, d3, d4, d5)[s0] -> (d2, d0 * 768 + s0, d4, d5), {dom}"
    )
    assert print_map(only(p1)) == f"(d0, d1, d2, d3, d4, d5)[s0] -> (d1, d0 * 768 + s0), {dom}"


def test_nested_fusion() -> None:
    text = """
    inner {
      a = f32[4, 6] parameter(0)
      ROOT t = f32[6, 4] transpose(a), dimensions={1, 0}
    }
    outer {
      p = f32[24] parameter(0)
      r = f32[4, 6] reshape(p)
      ROOT x = f32[6, 4] fusion(r), kind=kLoop, calls=inner
    }
    ENTRY e {
      q = f32[24] parameter(0)
      ROOT y = f32[6, 4] fusion(q), kind=kLoop, calls=outer
    }
    """
    (maps,) = out_to_in(text)
    assert_maps(maps, "(d0, d1) -> (d1 * 6 + d0), domain: d0 in [0, 5], d1 in [0, 3]")
    m = parse_hlo(text)
    (back,) = input_to_output(m, m.entry, m.entry.root, 0)
    assert_maps(back, "(d0) -> (d0 mod 6, d0 floordiv 6), domain: d0 in [0, 23]")


# ---------------------------------------------------------------------------- physical layouts
def test_layout_maps() -> None:
    shape = parse_hlo("p = f32[10,20,30]{2,0,1} parameter(0)").entry.root.shape
    assert_map(
        logical_to_physical(shape),
        "(d0, d1, d2) -> (d1, d0, d2), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]",
    )
    assert_map(
        physical_to_logical(shape),
        "(d0, d1, d2) -> (d1, d0, d2), domain: d0 in [0, 19], d1 in [0, 9], d2 in [0, 29]",
    )


@pytest.mark.parametrize(
    ("in_layout", "out_layout", "out_to_in_text", "in_to_out_text"),
    [
        (
            "",
            "{1, 0, 2}",
            "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]",
            "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]",
        ),
        (
            "{1, 0, 2}",
            "",
            "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]",
            "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]",
        ),
        (
            "{1, 0, 2}",
            "{1, 0, 2}",
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]",
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]",
        ),
    ],
)
def test_physical_layouts(
    in_layout: str, out_layout: str, out_to_in_text: str, in_to_out_text: str
) -> None:
    text = f"""
    p0 = f32[10, 20, 30]{in_layout} parameter(0)
    e = f32[10, 20, 30]{out_layout} exponential(p0)
    """
    assert_map(only(out_to_in(text, physical=True)[0]), out_to_in_text)
    assert_map(only(in_to_out(text, 0, physical=True)[0]), in_to_out_text)


def test_physical_fusion_uses_root_and_parameter_layouts() -> None:
    text = """
    f {
      p0 = f32[4, 6]{0, 1} parameter(0)
      ROOT t = f32[6, 4]{1, 0} transpose(p0), dimensions={1, 0}
    }
    """
    m = parse_hlo(text)
    (maps,) = fused_output_to_input(m, m.entry, physical=True)
    # The transpose only changes the layout: physically, element (i, j) stays (i, j).
    assert_maps(maps, "(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 3]")


# ---------------------------------------------------------------------------- properties
Reads = dict[Index, set[tuple[int, Index]]]


def box(dims: Sequence[int]) -> Iterator[Index]:
    return itertools.product(*(range(n) for n in dims))


def map_reads(m: IndexingMap | Unknown, point: Index) -> set[Index]:
    """The indices ``m`` gives at dims ``point``: over all range/runtime values in its domain.

    ``m`` must be known: an unknown map fails the test (its reads cannot be checked).
    """
    assert isinstance(m, IndexingMap), m
    if m.known_empty or any(not v.lo <= x <= v.hi for x, v in zip(point, m.dims, strict=True)):
        return set()
    env = {v.name: x for v, x in zip(m.dims, point, strict=True)}
    symbols = list(m.range_vars + m.rt_vars)
    out: set[Index] = set()
    for values in itertools.product(*(range(v.lo, v.hi + 1) for v in symbols)):
        env.update((v.name, x) for v, x in zip(symbols, values, strict=True))
        if all(lo <= evaluate(e, env) <= hi for e, lo, hi in m.constraints):
            out.add(tuple(evaluate(t, env) for t in m.results))
    return out


def check_op(
    text: str,
    ref: Reads,
    out_dims: Sequence[int],
    operand_dims: Sequence[Sequence[int]],
    *,
    in_to_out_too: bool = True,
) -> None:
    """Both directions of the root of ``text`` agree with the reference ``ref``."""
    module: Module = parse_hlo(text)
    comp = module.entry
    per_operand = output_to_input(module, comp, comp.root)
    assert len(per_operand) == len(operand_dims)
    for o in box(out_dims):
        got = {(k, i) for k, ms in enumerate(per_operand) for m in ms if m for i in map_reads(m, o)}
        assert got == ref.get(o, set()), (o, [print_map(m) for ms in per_operand for m in ms if m])
    if not in_to_out_too:
        return
    for k, dims in enumerate(operand_dims):
        maps = input_to_output(module, comp, comp.root, k)[0]  # to output 0, as ``ref``
        for i in box(dims):
            reached = {o for m in maps if m for o in map_reads(m, i)}
            want = {o for o, rs in ref.items() if (k, i) in rs}
            assert reached == want, (k, i, [print_map(m) for m in maps if m])


def hlo(*lines: str) -> str:
    return "\n".join(lines)


def ints(xs: Sequence[int]) -> str:
    return ",".join(map(str, xs))


def shape_text(dims: Sequence[int], layout: Sequence[int] | None = None) -> str:
    text = f"f32[{','.join(map(str, dims))}]"
    return text + ("{" + ",".join(map(str, layout)) + "}" if layout is not None else "")


def ravel(i: Index, dims: Sequence[int]) -> int:
    lin = 0
    for x, n in zip(i, dims, strict=True):
        lin = lin * n + x
    return lin


def unravel(lin: int, dims: Sequence[int]) -> Index:
    out = []
    for n in reversed(dims):
        out.append(lin % n)
        lin //= n
    return tuple(reversed(out))


PROPS = settings(
    max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
dims_st = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@st.composite
def reshaped(draw: st.DrawFn, dims: Sequence[int]) -> list[int]:
    """A random shape with the element count of ``dims`` (size-1 dims sprinkled in)."""
    total = 1
    for n in dims:
        total *= n
    primes: list[int] = []
    p, rest = 2, total
    while rest > 1:
        while rest % p == 0:
            primes.append(p)
            rest //= p
        p += 1
    primes = draw(st.permutations(primes))
    cuts = draw(st.lists(st.integers(0, len(primes)), max_size=3))
    bounds = sorted({0, len(primes), *cuts})
    out = []
    for a, b in itertools.pairwise(bounds):
        n = 1
        for q in primes[a:b]:
            n *= q
        out.append(n)
    for _ in range(draw(st.integers(0, 1))):
        out.insert(draw(st.integers(0, len(out))), 1)
    return out or [1]


@PROPS
@given(dims_st.flatmap(lambda d: st.tuples(st.just(d), st.permutations(range(len(d))))))
def test_transpose_property(case: tuple[list[int], list[int]]) -> None:
    dims, perm = case
    out = [dims[p] for p in perm]
    ref: Reads = {}
    for i in box(dims):
        o = tuple(i[p] for p in perm)
        ref[o] = {(0, i)}
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        f"t = {shape_text(out)} transpose(p0), dimensions={{{ints(perm)}}}",
    )
    check_op(text, ref, out, [dims])


@PROPS
@given(dims_st.flatmap(lambda d: st.tuples(st.just(d), reshaped(d))))
def test_reshape_property(case: tuple[list[int], list[int]]) -> None:
    src, dst = case
    ref: Reads = {unravel(ravel(i, src), dst): {(0, i)} for i in box(src)}
    text = f"p0 = {shape_text(src)} parameter(0)\nr = {shape_text(dst)} reshape(p0)"
    check_op(text, ref, dst, [src])


@PROPS
@given(
    dims_st.flatmap(
        lambda d: st.tuples(
            st.just(d),
            st.permutations(range(len(d))),
            reshaped(d).flatmap(lambda e: st.tuples(st.just(e), st.permutations(range(len(e))))),
        )
    )
)
def test_bitcast_property(case: tuple[list[int], list[int], tuple[list[int], list[int]]]) -> None:
    # A bitcast keeps memory: elements at the same physical (layout-order) position match.
    src, src_layout, (dst, dst_layout) = case

    def physical_linear(i: Index, dims: Sequence[int], layout: Sequence[int]) -> int:
        order = list(reversed(layout))
        return ravel(tuple(i[k] for k in order), [dims[k] for k in order])

    by_position = {physical_linear(o, dst, dst_layout): o for o in box(dst)}
    ref: Reads = {by_position[physical_linear(i, src, src_layout)]: {(0, i)} for i in box(src)}
    text = hlo(
        f"p0 = {shape_text(src, src_layout)} parameter(0)",
        f"b = {shape_text(dst, dst_layout)} bitcast(p0)",
    )
    check_op(text, ref, dst, [src])


@PROPS
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=4).flatmap(
        lambda out: st.tuples(
            st.just(out), st.lists(st.sampled_from(range(len(out))), unique=True, max_size=len(out))
        )
    )
)
def test_broadcast_property(case: tuple[list[int], list[int]]) -> None:
    out, bdims = case
    src = [out[k] for k in bdims]
    ref: Reads = {o: {(0, tuple(o[k] for k in bdims))} for o in box(out)}
    text = hlo(
        f"p0 = {shape_text(src)} parameter(0)",
        f"b = {shape_text(out)} broadcast(p0), dimensions={{{ints(bdims)}}}",
    )
    check_op(text, ref, out, [src])


@PROPS
@given(dims_st.flatmap(lambda d: st.tuples(st.just(d), st.sets(st.sampled_from(range(len(d)))))))
def test_reverse_property(case: tuple[list[int], set[int]]) -> None:
    dims, rdims = case
    ref: Reads = {
        o: {
            (
                0,
                tuple(
                    n - 1 - x if k in rdims else x
                    for k, (x, n) in enumerate(zip(o, dims, strict=True))
                ),
            )
        }
        for o in box(dims)
    }
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        f"r = {shape_text(dims)} reverse(p0), dimensions={{{ints(sorted(rdims))}}}",
    )
    check_op(text, ref, dims, [dims])


@st.composite
def slices(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int, int]]]:
    dims = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    sl = []
    for n in dims:
        start = draw(st.integers(0, n))
        limit = draw(st.integers(start, n))
        sl.append((start, limit, draw(st.integers(1, 3))))
    return dims, sl


@PROPS
@given(slices())
def test_slice_property(case: tuple[list[int], list[tuple[int, int, int]]]) -> None:
    dims, sl = case
    # Simulate: walk each dimension from start to limit by stride.
    kept = [list(range(a, b, st_)) for a, b, st_ in sl]
    out = [len(k) for k in kept]
    ref: Reads = {o: {(0, tuple(k[x] for k, x in zip(kept, o, strict=True)))} for o in box(out)}
    spec = ", ".join(f"[{a}:{b}:{c}]" for a, b, c in sl)
    text = (
        f"p0 = {shape_text(dims)} parameter(0)\ns = {shape_text(out)} slice(p0), slice={{{spec}}}"
    )
    check_op(text, ref, out, [dims])


@st.composite
def pads(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int, int]], list[int]]:
    dims = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    cfg, out = [], []
    for n in dims:
        interior = draw(st.integers(0, 2))
        full = n + (n - 1) * interior
        lo = draw(st.integers(-full + 1, 3))
        hi = draw(st.integers(-(full + lo) + 1, 3))
        cfg.append((lo, hi, interior))
        out.append(lo + hi + full)
    return dims, cfg, out


@PROPS
@given(pads())
def test_pad_property(case: tuple[list[int], list[tuple[int, int, int]], list[int]]) -> None:
    dims, cfg, out = case
    # Simulate: place each input element, then keep those that land inside the output.
    ref: Reads = {o: {(1, ())} for o in box(out)}
    for i in box(dims):
        o = tuple(lo + x * (interior + 1) for x, (lo, _, interior) in zip(i, cfg, strict=True))
        if all(0 <= y < n for y, n in zip(o, out, strict=True)):
            ref[o].add((0, i))
    spec = "x".join(f"{lo}_{hi}_{interior}" for lo, hi, interior in cfg)
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        "v = f32[] parameter(1)",
        f"p = {shape_text(out)} pad(p0, v), padding={spec}",
    )
    check_op(text, ref, out, [dims, []])


@PROPS
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.integers(0, 2),
    st.lists(st.integers(0, 3), min_size=1, max_size=3),
)
def test_concatenate_property(base: list[int], axis_seed: int, sizes: list[int]) -> None:
    axis = axis_seed % len(base)
    shapes = [[*base[:axis], n, *base[axis + 1 :]] for n in sizes]
    out = [*base[:axis], sum(sizes), *base[axis + 1 :]]
    ref: Reads = {}
    at = 0
    for k, s in enumerate(shapes):
        for i in box(s):
            o = tuple(x + at if j == axis else x for j, x in enumerate(i))
            ref.setdefault(o, set()).add((k, i))
        at += s[axis]
    params = "\n".join(f"p{k} = {shape_text(s)} parameter({k})" for k, s in enumerate(shapes))
    ops = ", ".join(f"p{k}" for k in range(len(shapes)))
    text = f"{params}\nc = {shape_text(out)} concatenate({ops}), dimensions={{{axis}}}"
    check_op(text, ref, out, shapes)


@PROPS
@given(
    dims_st.flatmap(
        lambda d: st.tuples(st.just(d), st.sets(st.sampled_from(range(len(d))), min_size=1))
    ),
    st.integers(1, 2),
)
def test_reduce_property(case: tuple[list[int], set[int]], n: int) -> None:
    dims, rdims = case
    out = [x for k, x in enumerate(dims) if k not in rdims]
    ref: Reads = {o: {(n + j, ()) for j in range(n)} for o in box(out)}
    for i in box(dims):
        o = tuple(x for k, x in enumerate(i) if k not in rdims)
        ref[o] |= {(j, i) for j in range(n)}
    params = "\n".join(f"p{j} = {shape_text(dims)} parameter({j})" for j in range(n))
    inits = "\n".join(f"c{j} = f32[] constant(0)" for j in range(n))
    shape = shape_text(out) if n == 1 else "(" + ", ".join([shape_text(out)] * n) + ")"
    ops = ", ".join([f"p{j}" for j in range(n)] + [f"c{j}" for j in range(n)])
    text = hlo(
        params,
        inits,
        f"r = {shape} reduce({ops}), dimensions={{{ints(sorted(rdims))}}}, to_apply=f",
    )
    check_op(text, ref, out, [dims] * n + [[]] * n)


@st.composite
def dots(draw: st.DrawFn) -> tuple[list[int], list[int], dict[str, list[int]], list[int]]:
    nb, nc, nlf, nrf = (draw(st.integers(0, 1)) for _ in range(4))
    b = [draw(st.integers(1, 3)) for _ in range(nb)]
    c = [draw(st.integers(1, 3)) for _ in range(nc)]
    lf = [draw(st.integers(1, 3)) for _ in range(nlf)]
    rf = [draw(st.integers(1, 3)) for _ in range(nrf)]
    # Each side's dims in a random order: ("b", k), ("c", k), ("f", k).
    lhs_dims = draw(
        st.permutations(
            [("b", k) for k in range(nb)]
            + [("c", k) for k in range(nc)]
            + [("f", k) for k in range(nlf)]
        )
    )
    rhs_dims = draw(
        st.permutations(
            [("b", k) for k in range(nb)]
            + [("c", k) for k in range(nc)]
            + [("f", k) for k in range(nrf)]
        )
    )
    sizes = {"b": b, "c": c}
    lhs = [sizes.get(kind, lf)[k] for kind, k in lhs_dims]
    rhs = [sizes.get(kind, rf)[k] for kind, k in rhs_dims]
    attrs = {
        "lhs_batch_dims": [lhs_dims.index(("b", k)) for k in range(nb)],
        "rhs_batch_dims": [rhs_dims.index(("b", k)) for k in range(nb)],
        "lhs_contracting_dims": [lhs_dims.index(("c", k)) for k in range(nc)],
        "rhs_contracting_dims": [rhs_dims.index(("c", k)) for k in range(nc)],
    }
    return lhs, rhs, attrs, b + lf + rf


def _dot_dims(
    lhs: list[int], rhs: list[int], attrs: dict[str, list[int]]
) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """A dot's batch and contracting dims of each side, then each side's free dims."""
    names = ("lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims")
    lb, rb, lc, rc = (attrs[k] for k in names)
    lf = [j for j in range(len(lhs)) if j not in lb + lc]
    rf = [j for j in range(len(rhs)) if j not in rb + rc]
    return lb, rb, lc, rc, lf, rf


@PROPS
@given(dots())
def test_dot_property(case: tuple[list[int], list[int], dict[str, list[int]], list[int]]) -> None:
    lhs, rhs, attrs, out = case
    lb, rb, lc, rc, lf, rf = _dot_dims(lhs, rhs, attrs)
    # out[b, f, g] = sum over c of lhs[b, f, c] * rhs[b, c, g]: simulate every product.
    ref: Reads = {}
    for li in box(lhs):
        for ri in box(rhs):
            if [li[j] for j in lb] != [ri[j] for j in rb] or [li[j] for j in lc] != [
                ri[j] for j in rc
            ]:
                continue
            o = tuple([li[j] for j in lb] + [li[j] for j in lf] + [ri[j] for j in rf])
            ref.setdefault(o, set()).update({(0, li), (1, ri)})
    spec = ", ".join(f"{k}={{{','.join(map(str, v))}}}" for k, v in attrs.items())
    text = hlo(
        f"p0 = {shape_text(lhs)} parameter(0)",
        f"p1 = {shape_text(rhs)} parameter(1)",
        f"d = {shape_text(out)} dot(p0, p1), {spec}",
    )
    check_op(text, ref, out, [lhs, rhs])


@st.composite
def windows(
    draw: st.DrawFn,
) -> tuple[list[int], list[tuple[int, int, int, int, int, int]], list[int]]:
    dims = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    cfg, out = [], []
    for n in dims:
        size, stride = draw(st.integers(1, 3)), draw(st.integers(1, 4))
        lo, hi = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        base, wdil = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        padded = lo + hi + (n - 1) * base + 1
        extent = (size - 1) * wdil + 1
        if padded < extent:
            size, wdil = 1, 1
            extent = 1
        cfg.append((size, stride, lo, hi, base, wdil))
        out.append((padded - extent) // stride + 1)
    return dims, cfg, out


@PROPS
@given(windows())
def test_reduce_window_property(
    case: tuple[list[int], list[tuple[int, int, int, int, int, int]], list[int]],
) -> None:
    dims, cfg, out = case
    # Simulate: each window position covers padded positions; input element i sits at
    # padded position lo + i * base.
    ref: Reads = {o: {(1, ())} for o in box(out)}
    for o in box(out):
        for i in box(dims):
            hit = True
            for x, y, (size, stride, lo, _, base, wdil) in zip(i, o, cfg, strict=True):
                position = lo + x * base
                hit &= any(y * stride + w * wdil == position for w in range(size))
            if hit:
                ref[o].add((0, i))
    spec = "size={} stride={} pad={} lhs_dilate={} rhs_dilate={}".format(
        "x".join(str(c[0]) for c in cfg),
        "x".join(str(c[1]) for c in cfg),
        "x".join(f"{c[2]}_{c[3]}" for c in cfg),
        "x".join(str(c[4]) for c in cfg),
        "x".join(str(c[5]) for c in cfg),
    )
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        "c = f32[] constant(0)",
        f"r = {shape_text(out)} reduce-window(p0, c), window={{{spec}}}, to_apply=max",
    )
    check_op(text, ref, out, [dims, []])


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, list[int], list[int], dict[Index, set[Index]]]:
    """A fusion body: a random chain of transposes, reshapes, reverses, slices, negates."""
    src = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    lines = [f"p0 = {shape_text(src)} parameter(0)"]
    # reads: for each index of the current value, the p0 indices it comes from.
    reads: dict[Index, set[Index]] = {i: {i} for i in box(src)}
    dims = list(src)
    for n in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["transpose", "reshape", "reverse", "slice", "negate"]))
        name = f"v{n}"
        prev = lines[-1].split(" = ")[0]
        if kind == "transpose":
            perm = draw(st.permutations(range(len(dims))))
            new = [dims[p] for p in perm]
            reads = {tuple(i[p] for p in perm): r for i, r in reads.items()}
            lines.append(
                f"{name} = {shape_text(new)} transpose({prev}), dimensions={{{ints(perm)}}}"
            )
        elif kind == "reshape":
            new = draw(reshaped(dims))
            reads = {unravel(ravel(i, dims), new): r for i, r in reads.items()}
            lines.append(f"{name} = {shape_text(new)} reshape({prev})")
        elif kind == "reverse":
            rd = sorted(draw(st.sets(st.sampled_from(range(len(dims))))))
            new = dims
            reads = {
                tuple(dims[k] - 1 - x if k in rd else x for k, x in enumerate(i)): r
                for i, r in reads.items()
            }
            lines.append(f"{name} = {shape_text(new)} reverse({prev}), dimensions={{{ints(rd)}}}")
        elif kind == "slice":
            sl = []
            for d in dims:
                start = draw(st.integers(0, d - 1))
                sl.append((start, d, draw(st.integers(1, 2))))
            new = [len(range(a, b, c)) for a, b, c in sl]
            reads = {
                o: reads[tuple(a + x * c for x, (a, _, c) in zip(o, sl, strict=True))]
                for o in box(new)
            }
            spec = ", ".join(f"[{a}:{b}:{c}]" for a, b, c in sl)
            lines.append(f"{name} = {shape_text(new)} slice({prev}), slice={{{spec}}}")
        else:
            new = dims
            lines.append(f"{name} = {shape_text(new)} negate({prev})")
        dims = list(new)
    lines[-1] = "ROOT " + lines[-1]
    return "f {\n" + "\n".join(lines) + "\n}", src, dims, reads


@PROPS
@given(chains())
def test_fused_chain_property(
    case: tuple[str, list[int], list[int], dict[Index, set[Index]]],
) -> None:
    text, src, out, reads = case
    module = parse_hlo(text)
    (maps,) = fused_output_to_input(module, module.entry)
    for o in box(out):
        got = {i for m in maps if m for i in map_reads(m, o)}
        assert got == reads[o], (text, o, [print_map(m) for m in maps if m])
    (back,) = fused_input_to_output(module, module.entry, 0)
    for i in box(src):
        got = {o for m in back if m for o in map_reads(m, i)}
        assert got == {o for o, r in reads.items() if i in r}, (text, i)


# ---------------------------------------------------------------------------- convolution
ConvCase = tuple[str, Reads, list[int], list[int], list[int]]


@st.composite
def convolutions(draw: st.DrawFn) -> ConvCase:
    """A random convolution (HLO text), its simulated reads, and its three shapes."""
    ns = draw(st.integers(0, 2))
    fgc, bgc = draw(st.sampled_from([(1, 1), (1, 1), (2, 1), (3, 1), (1, 2), (1, 3)]))
    cin, bout = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    features = max(fgc, bgc) * draw(st.integers(1, 2))
    batch, in_features = bout * bgc, cin * fgc
    spatial_in, cfg, spatial_out = [], [], []
    for _ in range(ns):
        n = draw(st.integers(1, 4))
        size, stride = draw(st.integers(1, 3)), draw(st.integers(1, 4))
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        base, wdil = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        rev = draw(st.booleans())
        padded = lo + hi + (n - 1) * base + 1
        extent = (size - 1) * wdil + 1
        spatial_in.append(n)
        cfg.append((size, stride, lo, hi, base, wdil, rev))
        spatial_out.append((padded - extent) // stride + 1 if padded >= extent else 0)
    digits = [str(i) for i in range(ns)]
    lhs_l = "".join(draw(st.permutations(["b", "f", *digits])))
    rhs_l = "".join(draw(st.permutations(["i", "o", *digits])))
    out_l = "".join(draw(st.permutations(["b", "f", *digits])))

    def shape(labels: str, sizes: dict[str, int], spatial: list[int]) -> list[int]:
        return [sizes[ch] if ch in sizes else spatial[int(ch)] for ch in labels]

    lhs = shape(lhs_l, {"b": batch, "f": in_features}, spatial_in)
    rhs = shape(rhs_l, {"i": cin, "o": features}, [c[0] for c in cfg])
    out = shape(out_l, {"b": bout, "f": features}, spatial_out)
    # Simulate: for each output index, every window index and kernel input feature;
    # the input element is read where the window position lands on one (not padding,
    # not a hole of lhs dilation), the kernel element always.
    ref: Reads = {}
    for o in box(out):
        ob, of = o[out_l.index("b")], o[out_l.index("f")]
        group = of // (features // fgc) if fgc > 1 else 0
        # One batch per group: feature f's own group. Larger groups: any group (the
        # map's over-approximation, see _conv_out).
        bgroups = [of // (features // bgc)] if bgc > 1 and bout == 1 else range(bgc)
        for w, bgroup in itertools.product(box([c[0] for c in cfg]), bgroups):
            for z in range(cin):
                at: dict[str, int] = {"b": bgroup * bout + ob, "f": group * cin + z}
                real = True
                for i, (_size, stride, lo, _, base, wdil, _) in enumerate(cfg):
                    p = o[out_l.index(str(i))] * stride + w[i] * wdil - lo
                    real &= p % base == 0 and 0 <= p // base < spatial_in[i]
                    at[str(i)] = p // base
                kat = {"i": z, "o": of}
                for i, (size, *_, rev) in enumerate(cfg):
                    kat[str(i)] = size - 1 - w[i] if rev else w[i]
                reads = ref.setdefault(o, set())
                reads.add((1, tuple(kat[ch] for ch in rhs_l)))
                if real:
                    reads.add((0, tuple(at[ch] for ch in lhs_l)))
    window = ""
    if ns:
        window = ", window={{size={} stride={} pad={} lhs_dilate={} rhs_dilate={} {}}}".format(
            "x".join(str(c[0]) for c in cfg),
            "x".join(str(c[1]) for c in cfg),
            "x".join(f"{c[2]}_{c[3]}" for c in cfg),
            "x".join(str(c[4]) for c in cfg),
            "x".join(str(c[5]) for c in cfg),
            "rhs_reversal=" + "x".join(str(int(c[6])) for c in cfg),
        )
    groups = (f", feature_group_count={fgc}" if fgc > 1 else "") + (
        f", batch_group_count={bgc}" if bgc > 1 else ""
    )
    text = hlo(
        f"p0 = {shape_text(lhs)} parameter(0)",
        f"p1 = {shape_text(rhs)} parameter(1)",
        f"c = {shape_text(out)} convolution(p0, p1){window}, "
        f"dim_labels={lhs_l}_{rhs_l}->{out_l}{groups}",
    )
    return text, ref, out, lhs, rhs


@PROPS
@given(convolutions())
def test_convolution_property(case: ConvCase) -> None:
    text, ref, out, lhs, rhs = case
    check_op(text, ref, out, [lhs, rhs])


def test_convolution_with_padding_and_strides_as_xla() -> None:
    text = hlo(
        "p0 = f32[1,12,10,4] parameter(0)",
        "p1 = f32[3,5,4,8] parameter(1)",
        "ROOT c = f32[1,6,5,8] convolution(p0, p1), dim_labels=b01f_01io->b01f,",
        "  window={size=3x5 pad=1_1x2_2 stride=2x2 rhs_reversal=0x1}",
    )
    lhs, rhs = out_to_in(text)
    assert_maps(
        lhs,
        "(d0, d1, d2, d3)[s0, s1, s2] -> (d0, d1 * 2 + s0 - 1, d2 * 2 + s1 - 2, s2), "
        "domain: d0 in [0, 0], d1 in [0, 5], d2 in [0, 4], d3 in [0, 7], s0 in [0, 2], "
        "s1 in [0, 4], s2 in [0, 3], d1 * 2 + s0 in [1, 12], d2 * 2 + s1 in [2, 11]",
    )
    assert_maps(
        rhs,
        "(d0, d1, d2, d3)[s0, s1, s2] -> (s0, s1, s2, d3), domain: d0 in [0, 0], "
        "d1 in [0, 5], d2 in [0, 4], d3 in [0, 7], s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]",
    )


def test_window_field_not_understood_is_unknown_indexing_not_an_error() -> None:
    text = hlo(
        "p0 = f32[1,12,4] parameter(0)",
        "p1 = f32[3,4,8] parameter(1)",
        "ROOT c = f32[1,10,8] convolution(p0, p1), dim_labels=b0f_0io->b0f,",
        "  window={size=3 future_field=7}",
    )
    assert unknowns(out_to_in(text)) == [(None,), (None,)]


@pytest.mark.parametrize(
    ("attrs", "why"),
    [
        ("dim_labels=b0f_0io->b0f, window={size=2}", "kernel's spatial sizes"),
        ("dim_labels=b0f_0io->bf", "output labels"),
        ("dim_labels=b0f_0io->b0f, feature_group_count=3", "features"),
        ("dim_labels=b0f_0io->b0f, feature_group_count=2, batch_group_count=2", "at most one"),
        ("window={size=3}", "dim_labels"),
    ],
)
def test_malformed_convolutions_are_hlo_errors(attrs: str, why: str) -> None:
    text = hlo(
        "p0 = f32[1,12,4] parameter(0)",
        "p1 = f32[3,4,8] parameter(1)",
        f"ROOT c = f32[1,10,8] convolution(p0, p1), {attrs}",
    )
    with pytest.raises(HloError, match=why):
        out_to_in(text)


# ---------------------------------------------------------------------------- scaled dot
@PROPS
@given(dots(), st.data())
def test_scaled_dot_property(
    case: tuple[list[int], list[int], dict[str, list[int]], list[int]], data: st.DataObject
) -> None:
    lhs, rhs, attrs, out = case
    # Each scale dimension divides its operand's: a block of n // q elements per scale.
    scales = [
        [data.draw(st.sampled_from([q for q in range(1, n + 1) if n % q == 0])) for n in dims]
        for dims in (lhs, rhs)
    ]
    lb, rb, lc, rc, lf, rf = _dot_dims(lhs, rhs, attrs)

    def block(i: Index, dims: list[int], scale: list[int]) -> Index:
        return tuple(x // (n // q) for x, n, q in zip(i, dims, scale, strict=True))

    # out = sum over c of (lhs * lhs_scale[block]) * (rhs * rhs_scale[block]).
    ref: Reads = {}
    for li in box(lhs):
        for ri in box(rhs):
            if [li[j] for j in lb] != [ri[j] for j in rb] or [li[j] for j in lc] != [
                ri[j] for j in rc
            ]:
                continue
            o = tuple([li[j] for j in lb] + [li[j] for j in lf] + [ri[j] for j in rf])
            ref.setdefault(o, set()).update(
                {
                    (0, li),
                    (1, ri),
                    (2, block(li, lhs, scales[0])),
                    (3, block(ri, rhs, scales[1])),
                }
            )
    spec = ", ".join(f"{k}={{{','.join(map(str, v))}}}" for k, v in attrs.items())
    text = hlo(
        f"p0 = {shape_text(lhs)} parameter(0)",
        f"p1 = {shape_text(rhs)} parameter(1)",
        f"p2 = {shape_text(scales[0])} parameter(2)",
        f"p3 = {shape_text(scales[1])} parameter(3)",
        f"d = {shape_text(out)} scaled-dot(p0, p1, p2, p3), {spec}",
    )
    check_op(text, ref, out, [lhs, rhs, scales[0], scales[1]], in_to_out_too=False)


def test_scaled_dot_as_xla() -> None:
    text = hlo(
        "lhs = f8e4m3fn[128,64] parameter(0)",
        "rhs = f8e4m3fn[64,128] parameter(1)",
        "lhs_scale = f8e8m0fnu[128,2] parameter(2)",
        "rhs_scale = f8e8m0fnu[2,128] parameter(3)",
        "ROOT dot = f32[128,128] scaled-dot(lhs, rhs, lhs_scale, rhs_scale),",
        "  lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    )
    lhs, rhs, ls, rs = out_to_in(text)
    box_ = "domain: d0 in [0, 127], d1 in [0, 127], s0 in [0, 63]"
    assert_maps(lhs, f"(d0, d1)[s0] -> (d0, s0), {box_}")
    assert_maps(rhs, f"(d0, d1)[s0] -> (s0, d1), {box_}")
    assert_maps(ls, f"(d0, d1)[s0] -> (d0, s0 / 32), {box_}")
    assert_maps(rs, f"(d0, d1)[s0] -> (s0 / 32, d1), {box_}")
    bad = text.replace("f8e8m0fnu[128,2]", "f8e8m0fnu[128,3]")
    with pytest.raises(HloError, match="scale operand 2"):
        out_to_in(bad)


# ---------------------------------------------------------------------------- all-gather
@PROPS
@given(dims_st, st.data())
def test_all_gather_property(dims: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(dims) - 1))
    shards = data.draw(st.integers(1, 3))
    out = list(dims)
    out[axis] *= shards
    # Shard r of the output is participant r's operand, of this operand's shape: output
    # index o reads index o mod n (of participant o // n) along the gathered dimension.
    ref: Reads = {
        o: {(0, tuple(x % dims[axis] if j == axis else x for j, x in enumerate(o)))}
        for o in box(out)
    }
    text = hlo(
        f"p0 = {shape_text(dims)} parameter(0)",
        f"ag = {shape_text(out)} all-gather(p0), replica_groups={{}}, dimensions={{{axis}}}",
    )
    check_op(text, ref, out, [dims])


def test_variadic_all_gather_reads_its_own_operand() -> None:
    text = hlo(
        "p0 = f32[2,3] parameter(0)",
        "p1 = f32[4] parameter(1)",
        "ROOT ag = (f32[4,3], f32[8]) all-gather(p0, p1), replica_groups={{0,1}}, dimensions={0}",
    )
    assert_maps(
        out_to_in(text, 0)[0], "(d0, d1) -> (d0 mod 2, d1), domain: d0 in [0, 3], d1 in [0, 2]"
    )
    assert out_to_in(text, 0)[1] == ()
    assert_maps(out_to_in(text, 1)[1], "(d0) -> (d0 mod 4), domain: d0 in [0, 7]")
    with pytest.raises(HloError, match="whole number of shards"):
        out_to_in(text.replace("f32[8]", "f32[6]"))


# ---------------------------------------------------------------------------- scan
@PROPS
@given(st.integers(1, 5), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), st.booleans())
def test_scan_property(length: int, n_in: int, n_out: int, carries: int, reverse: bool) -> None:
    # Simulate an inclusive scan: carry_{i+1} = body(carry_i, inputs[i]), output i made
    # from carry_{i+1}; output i reads inputs at every step so far and the initial
    # carries, a final carry reads every step.
    steps = range(length - 1, -1, -1) if reverse else range(length)
    seen: set[tuple[int, Index]] = {(n_in + j, ()) for j in range(carries)}
    per_step: dict[int, set[tuple[int, Index]]] = {}
    for i in steps:
        seen |= {(k, (i,)) for k in range(n_in)}
        per_step[i] = set(seen)
    shape = shape_text([length])
    params = [f"p{k} = {shape} parameter({k})" for k in range(n_in)]
    params += [f"c{j} = f32[] parameter({n_in + j})" for j in range(carries)]
    operands = ", ".join([f"p{k}" for k in range(n_in)] + [f"c{j}" for j in range(carries)])
    out_shape = ", ".join([shape] * n_out + ["f32[]"] * carries)
    text = hlo(
        "body {",
        *(f"  b{k} = f32[] parameter({k})" for k in range(n_in + carries)),
        f"  ROOT t = ({', '.join(['f32[]'] * (n_out + carries))}) tuple("
        + ", ".join(["b0"] * (n_out + carries))
        + ")",
        "}",
        "ENTRY e {",
        *params,
        f"  ROOT s = ({out_shape}) scan({operands}), dimensions={{0}}, num_carries={carries}, "
        f"is_reverse={'true' if reverse else 'false'}, to_apply=body",
        "}",
    )
    module = parse_hlo(text)
    comp = module.entry
    for k in range(n_out + carries):
        per_operand = output_to_input(module, comp, comp.root, k)
        if k < n_out:
            for o in box([length]):
                got = {
                    (j, i)
                    for j, ms in enumerate(per_operand)
                    for m in ms
                    if m
                    for i in map_reads(m, o)
                }
                assert got == per_step[o[0]], (k, o)
        else:
            got = {
                (j, i)
                for j, ms in enumerate(per_operand)
                for m in ms
                if m
                for i in map_reads(m, ())
            }
            assert got == seen, k
    # Input-to-output is the same relation read backwards.
    reads: dict[tuple[int, Index], set[tuple[int, Index]]] = {
        (k, (o,)): per_step[o] for k in range(n_out) for o in range(length)
    }
    reads |= {(n_out + j, ()): seen for j in range(carries)}
    for j in range(n_in + carries):
        per_output = input_to_output(module, comp, comp.root, j)
        for point in box([length] if j < n_in else []):
            got = {
                (k, o)
                for k, ms in enumerate(per_output)
                for m in ms
                if m
                for o in map_reads(m, point)
            }
            assert got == {key for key, r in reads.items() if (j, point) in r}, (j, point)


def test_scan_of_higher_rank_is_unknown() -> None:
    text = hlo(
        "p0 = f32[4,3] parameter(0)",
        "c = f32[] parameter(1)",
        "ROOT s = (f32[4,3], f32[]) scan(p0, c), dimensions={0}, num_carries=1, to_apply=f",
    )
    assert unknowns(out_to_in(text)) == [(None,), (None,)]


# ---------------------------------------------------------------------------- runtime values
GATHER_OF = """p0 = f32[33,76] parameter(0)
{indices}
ROOT gather = f32[42,1,1] gather(p0, idx), offset_dims={{1,2}}, collapsed_slice_dims={{}},
  start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,1}}"""
BOX_42 = "domain: d0 in [0, 41], d1 in [0, 0], d2 in [0, 0]"


@pytest.mark.parametrize(
    ("indices", "expected"),
    [
        # XLA's FusionWithRTVarsSimplification_* cases; XLA leaves d0 unclamped where
        # it passes the 32 a gather of f32[33] slices of 1 is clamped to.
        ("idx = s64[42,1] iota(), iota_dimension=0", f"(d0, d1, d2) -> (min(d0, 32), 0), {BOX_42}"),
        ("idx = s64[42,1] iota(), iota_dimension=1", f"(d0, d1, d2) -> (0, 0), {BOX_42}"),
        (
            "c = s64[] constant(42)\nidx = s64[42,1] broadcast(c), dimensions={}",
            f"(d0, d1, d2) -> (32, 0), {BOX_42}",
        ),
        (
            "c = s64[] constant(12)\nidx = s64[42,1] broadcast(c), dimensions={}",
            f"(d0, d1, d2) -> (12, 0), {BOX_42}",
        ),
        (
            "i = s64[42,1] iota(), iota_dimension=0\nidx = s64[42,1] reverse(i), dimensions={0}",
            f"(d0, d1, d2) -> (min(-d0 + 41, 32), 0), {BOX_42}",
        ),
        (
            "i = s32[42,1] iota(), iota_dimension=0\nidx = s64[42,1] convert(i)",
            f"(d0, d1, d2) -> (min(d0, 32), 0), {BOX_42}",
        ),
        # Narrowing may wrap: not traced. A parameter is a runtime value.
        (
            "i = s64[42,1] iota(), iota_dimension=0\nidx = s8[42,1] convert(i)",
            f"(d0, d1, d2){{rt0}} -> (rt0, 0), {BOX_42}, rt0 in [0, 32]",
        ),
        (
            "idx = s64[42,1] parameter(1)",
            f"(d0, d1, d2){{rt0}} -> (rt0, 0), {BOX_42}, rt0 in [0, 32]",
        ),
    ],
)
def test_gather_start_indices_from_iota_or_constant(indices: str, expected: str) -> None:
    maps = fused(GATHER_OF.format(indices=indices))
    assert_maps(maps[0], expected)


def test_dynamic_slice_offset_from_a_constant_in_a_fusion() -> None:
    body = """p0 = s32[4096] parameter(0)
offset = s64[] constant(42)
ROOT ds = s32[10] dynamic-slice(p0, offset), dynamic_slice_sizes={10}"""
    assert_maps(fused(body)[0], "(d0) -> (d0 + 42), domain: d0 in [0, 9]")
    # Traced through copy and a widening convert; clamped to 4086.
    body = """p0 = s32[4096] parameter(0)
c = s32[] constant(5000)
k = s32[] copy(c)
offset = s64[] convert(k)
ROOT ds = s32[10] dynamic-slice(p0, offset), dynamic_slice_sizes={10}"""
    assert_maps(fused(body)[0], "(d0) -> (d0 + 4086), domain: d0 in [0, 9]")


@st.composite
def gathers_of_known_indices(draw: st.DrawFn) -> tuple[str, Reads, list[int], list[int], list[int]]:
    """A gather whose start indices an iota or a constant array gives."""
    src = [draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 2)))]
    r = len(src)
    start = draw(st.permutations(range(r)))[: draw(st.integers(1, r))]
    sizes = [draw(st.integers(1, n)) for n in src]
    rows = draw(st.integers(1, 6))
    idx = [rows, len(start)]
    kind = draw(st.sampled_from(["iota0", "iota1", "constant"]))
    if kind == "constant":
        values = [[draw(st.integers(-3, 8)) for _ in start] for _ in range(rows)]
        if draw(st.booleans()):  # a splat
            values = [values[0][:1] * len(start)] * rows
        literal = "{" + ", ".join("{" + ", ".join(map(str, row)) + "}" for row in values) + "}"
        line = f"idx = s32[{rows},{len(start)}] constant({literal})"
    else:
        axis = 0 if kind == "iota0" else 1
        values = [[(b if axis == 0 else k) for k in range(len(start))] for b in range(rows)]
        line = f"idx = s32[{rows},{len(start)}] iota(), iota_dimension={axis}"
    out = [rows, *sizes]
    # Simulate: row b's start along start[k] is values[b][k] clamped to [0, n - size].
    ref: Reads = {}
    for o in box(out):
        begin = [0] * r
        for k, j in enumerate(start):
            begin[j] = min(max(values[o[0]][k], 0), src[j] - sizes[j])
        read = tuple(begin[j] + o[1 + j] for j in range(r))
        ref[o] = {(0, read)} | {(1, (o[0], k)) for k in range(len(start))}
    text = hlo(
        f"p0 = {shape_text(src)} parameter(0)",
        line,
        f"ROOT g = {shape_text(out)} gather(p0, idx), offset_dims={{{ints(range(1, r + 1))}}}, "
        f"collapsed_slice_dims={{}}, start_index_map={{{ints(start)}}}, index_vector_dim=1, "
        f"slice_sizes={{{ints(sizes)}}}",
    )
    return text, ref, out, src, idx


@PROPS
@given(gathers_of_known_indices())
def test_gather_of_known_indices_property(
    case: tuple[str, Reads, list[int], list[int], list[int]],
) -> None:
    text, ref, out, _src, _idx = case
    module = parse_hlo(text)
    comp = module.entry
    per_operand = output_to_input(module, comp, comp.root)
    for o in box(out):
        got = {(k, i) for k, ms in enumerate(per_operand) for m in ms if m for i in map_reads(m, o)}
        # A runtime variable left (a constant array read at a row that is not fixed)
        # reads more: the simulated element must be among them.
        if any(m and m.rt_vars for m in per_operand[0]):
            assert ref[o] <= got, (o, text)
        else:
            assert got == ref[o], (o, text, [print_map(m) for ms in per_operand for m in ms if m])


def test_convolution_batch_groups_as_xla() -> None:
    # XLA's ConvolutionOp_BatchGroups: 2 batches per group, a range variable over groups.
    text = hlo(
        "p0 = f32[14,12,10,4] parameter(0)",
        "p1 = f32[4,3,5,21] parameter(1)",
        "ROOT conv = f32[2,10,6,21] convolution(p0, p1), window={size=3x5 pad=0_0x0_0},",
        "  dim_labels=b01f_i01o->b01f, batch_group_count=7",
    )
    dom = "d0 in [0, 1], d1 in [0, 9], d2 in [0, 5], d3 in [0, 20], s0 in [0, 2], s1 in [0, 4]"
    lhs, rhs = out_to_in(text)
    assert_maps(
        lhs,
        f"(d0, d1, d2, d3)[s0, s1, s2, s3] -> (d0 + s3 * 2, d1 + s0, d2 + s1, s2), domain: {dom}, "
        "s2 in [0, 3], s3 in [0, 6]",
    )
    assert_maps(
        rhs, f"(d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3), domain: {dom}, s2 in [0, 3]"
    )
    # One batch per group: output feature f reads batch f // 3 only.
    one = text.replace("f32[14,12,10,4]", "f32[7,12,10,4]").replace(
        "f32[2,10,6,21]", "f32[1,10,6,21]"
    )
    dom1 = dom.replace("d0 in [0, 1]", "d0 in [0, 0]")
    assert_maps(
        out_to_in(one)[0],
        f"(d0, d1, d2, d3)[s0, s1, s2] -> (d3 floordiv 3, d1 + s0, d2 + s1, s2), domain: {dom1}, "
        "s2 in [0, 3]",
    )


def test_convolution_with_no_output_features_reads_nothing() -> None:
    text = hlo(
        "p0 = f32[1,12,4] parameter(0)",
        "p1 = f32[3,2,0] parameter(1)",
        "ROOT c = f32[1,10,0] convolution(p0, p1), dim_labels=b0f_0io->b0f, feature_group_count=2",
    )
    lhs, rhs = out_to_in(text)
    assert only(lhs).known_empty and only(rhs).known_empty
    with pytest.raises(HloError, match="positive sizes"):
        out_to_in(text.replace("f32[3,2,0]", "f32[0,2,0]").replace("f32[1,10,0]", "f32[1,13,0]"))
