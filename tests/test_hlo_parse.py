"""The HLO text parser: the seed's forms, real-module forms, and clear errors on bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from quorem.errors import QuoremError
from quorem.hlo.indexing import input_to_output, output_to_input
from quorem.hlo.parse import (
    HloError,
    PadDim,
    Shape,
    SliceDim,
    WindowDim,
    parse_hlo,
    parse_padding,
    parse_slice,
    parse_window,
)


def test_bare_instruction_list_is_one_computation() -> None:
    m = parse_hlo(
        "p0 = f32[20] parameter(0)\nbc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}\n"
    )
    (comp,) = m.computations
    assert [i.name for i in comp.instructions] == ["p0", "bc0"]
    assert comp.root.name == "bc0"  # no ROOT: the last instruction
    bc = comp.root
    assert bc.shape == Shape("f32", (10, 20, 30))
    assert bc.operands == ("p0",)
    assert bc.int_list("dimensions") == (1,)
    assert comp.get("p0").parameter_number() == 0
    assert bc.line == 2


def test_module_with_computations_entry_and_multiline_instructions() -> None:
    text = """
    HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

    max {
      p0 = f32[] parameter(0)
      p1 = f32[] parameter(1)
      ROOT max = f32[] maximum(p0, p1)
    }
    ENTRY %e (a: f32[4]) -> f32[4] {
      %src = s32[20,30] parameter(0)
      %upd = s32[5,10] parameter(1)
      %of1 = s32[] parameter(2)
      %of2 = s32[] parameter(3)
      ROOT %dus = s32[20,30]{1,0:T(8,128)} dynamic-update-slice(
          s32[20,30] %src, s32[5,10] %upd, s32[] %of1, s32[] %of2),
          metadata={op_name="a, b" source_line=3}, dim_labels=b01f_01io->b01f
      x = f32[] constant(-inf)
    }
    """
    m = parse_hlo(text)
    assert m.name == "m"
    assert [c.name for c in m.computations] == ["max", "e"]
    assert m.entry.name == "e"
    dus = m.entry.root
    assert dus.name == "dus"  # ROOT wins over the last instruction
    assert dus.operands == ("src", "upd", "of1", "of2")
    assert dus.operand_shapes[1] == Shape("s32", (5, 10))
    assert dus.shape.layout == (1, 0)  # the tiling suffix is skipped
    assert dus.attrs["dim_labels"] == "b01f_01io->b01f"
    assert dus.attrs["metadata"] == '{op_name="a, b" source_line=3}'
    assert m.entry.get("x").payload == "-inf"


def test_shapes_tuples_scalars_and_layouts() -> None:
    m = parse_hlo(
        "p0 = f32[256,10] parameter(0)\n"
        "p1 = s32[256,10] parameter(1)\n"
        "i0 = f32[] constant(-inf)\n"
        "i1 = s32[] constant(0)\n"
        "out = (f32[10]{0}, s32[10]) reduce(p0, p1, i0, i1), dimensions={0}, to_apply=max\n"
    )
    out = m.entry.root
    assert out.shape.is_tuple
    assert out.shape.arrays() == (Shape("f32", (10,), (0,)), Shape("s32", (10,)))
    assert str(out.shape) == "(f32[10]{0}, s32[10])"
    assert m.entry.get("i0").shape.rank == 0
    assert m.entry.get("i1").scalar_int_constant() == 0
    assert m.entry.get("i0").scalar_int_constant() is None


def test_layout_orders() -> None:
    s = parse_hlo("p = f32[10,20,30]{2,0,1} parameter(0)").entry.root.shape
    assert s.minor_to_major() == (2, 0, 1)
    assert s.physical_order() == (1, 0, 2)
    assert s.physical_dims() == (20, 10, 30)
    plain = parse_hlo("p = f32[10,20,30] parameter(0)").entry.root.shape
    assert plain.layout is None
    assert plain.physical_order() == (0, 1, 2)


def test_attribute_parsers() -> None:
    assert parse_slice("{[5:10:1], [3:20:7], [0:50]}") == (
        SliceDim(5, 10, 1),
        SliceDim(3, 20, 7),
        SliceDim(0, 50, 1),
    )
    assert parse_padding("1_4_1x4_8_0") == (PadDim(1, 4, 1), PadDim(4, 8, 0))
    assert parse_padding("-3_-5_1") == (PadDim(-3, -5, 1),)
    assert parse_window("{size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=1x2 rhs_dilate=3x1}") == (
        WindowDim(3, 2, 1, 1, 1, 3),
        WindowDim(2, 1, 0, 1, 2, 1),
    )
    assert parse_window("{size=1x512 pad=0_0x0_0}") == (WindowDim(1), WindowDim(512))


def test_gather_and_dot_attributes() -> None:
    m = parse_hlo(
        """operand = f32[33,76,70] parameter(0)
        indices = s32[1806,2] parameter(1)
        gather = f32[1806,7,8,4] gather(operand, indices),
        offset_dims={1,2,3},
        collapsed_slice_dims={},
        start_index_map={0,1},
        index_vector_dim=1,
        slice_sizes={7,8,4}"""
    )
    g = m.entry.root
    assert g.int_list("offset_dims") == (1, 2, 3)
    assert g.int_list("collapsed_slice_dims") == ()
    assert g.int_attr("index_vector_dim") == 1


def test_comments_are_skipped() -> None:
    m = parse_hlo("/* a */ p0 = f32[2] parameter(0) // b\nx = f32[2] negate(p0)")
    assert m.entry.root.opcode == "negate"


# ---------------------------------------------------------------------------- errors
BAD = [
    ("p0 = f32[10 parameter(0)", 1, "',' or ']'"),
    ("p0 = parameter(0)", 1, "expected a shape"),
    ("p0 = f32[2]{0,0} parameter(0)", 1, "not a permutation"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] add(p0, p1)", 2, "'p1' is not defined"),
    ("f {\n p0 = f32[2] parameter(0)\n", 3, "expected '}'"),
    ("p0 = f32[10] parameter(0)\nx = f32[10] slice(p0),\n  slice={[0:10:0]}", 3, "stride"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] add(p0 p0)", 2, "between operands"),
    ("p0 = f32[2] parameter(0)\n@", 2, "unexpected character"),
    ("p0 = f32[2] parameter(0)\np0 = f32[2] parameter(1)", 2, "already used"),
    ("p0 = f32[2] parameter(0)\np1 = f32[2] parameter(0)", 2, "parameter(0) is also p0"),
    ("p0 = f32[2] parameter(1)", 0, "not 0..0"),
    ("p0 = f32[2] parameter(x)", 1, "parameter(N)"),
    ("a = f32[2] negate(b)\nb = f32[2] negate(a)", 0, "cycle"),
    ("p0 = f32[2] parameter(0)\nx = f32[3] negate(f32[3] p0)", 2, "written f32[3]"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] fusion(p0), calls=nowhere", 2, "calls=nowhere"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] fusion(p0)", 2, "calls="),
    ("p0 = f32[2] parameter(0)\nx = f32[2] pad(p0, p0), padding=1x2", 2, "lo_hi"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] r(p0), window={size=2 pad=1}", 2, "lo_hi"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] r(p0), window={stride=2}", 2, "size="),
    ("p0 = f32[2] parameter(0)\nx = f32[2] t(p0), dimensions={a}", 2, "list of integers"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] t(p0), dimensions={0}, dimensions={0}", 2, "twice"),
    ("p0 = f32[2] parameter(0)\nROOT x = f32[2] t(p0)\nROOT y = f32[2] t(p0)", 3, "second ROOT"),
    ("HloModule m", 1, "expected a computation"),
    ("", 1, "expected a computation"),
    ("e {\n}", 1, "no instructions"),
    ("p0 = f32[2] parameter(0)\nx = f32[2] Add(p0)", 2, "expected an opcode"),
    ('p0 = f32[2] parameter(0), metadata="unterminated', 1, "unexpected character"),
    ("x = " + "(" * 200 + "f32[]" + ")" * 200 + " tuple()", 1, "nested deeper"),
    ("f {\n p = f32[2] parameter(0)\n ROOT n = f32[2] fusion(p), calls=f\n}", 3, "a cycle: f -> f"),
]


@pytest.mark.parametrize(("text", "line", "why"), BAD)
def test_bad_input_names_line_and_reason(text: str, line: int, why: str) -> None:
    with pytest.raises(HloError) as info:
        parse_hlo(text, "bad.hlo")
    msg = str(info.value)
    assert why in msg
    assert msg.startswith("bad.hlo")
    if line:
        assert info.value.line == line
        assert msg.startswith(f"bad.hlo:{line}")


def test_hlo_error_is_a_quorem_error() -> None:
    assert issubclass(HloError, QuoremError)


# Tokens HLO text is made of, to throw random (mostly wrong) text at the parser.
_PIECES = [
    "p0", "x", "ROOT", "ENTRY", "HloModule", "f", "=", ",", "(", ")", "[", "]", "{", "}",
    ":", "->", "f32", "s32", "[2,3]", "[]", "{1,0}", "parameter", "constant", "add",
    "reshape", "transpose", "slice", "pad", "reduce", "fusion", "dynamic-slice", "dot",
    "broadcast", "concatenate", "bitcast", "reduce-window", "gather", "tuple",
    "get-tuple-element", "dimensions={0}", "dimensions={1,0}", "slice={[0:2:1]}",
    "padding=1_1_0", "window={size=2}", "calls=f", "index=0", "0", "1", "2", "-1", "\n",
    " ", '"s"', "lhs_contracting_dims={1}", "rhs_contracting_dims={0}",
]  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_random_text_gives_hlo_errors_never_tracebacks(pieces: list[str]) -> None:
    text = " ".join(pieces)
    try:
        module = parse_hlo(text)
    except HloError:
        return
    comp = module.entry
    try:
        output_to_input(module, comp, comp.root)
        if comp.root.operands:
            input_to_output(module, comp, comp.root, 0)
    except QuoremError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sampled_from(
        [
            "p0 = f32[2,3] parameter(0)\nROOT x = f32[3,2] transpose(p0), dimensions={1,0}",
            "p0 = f32[6] parameter(0)\nROOT x = f32[2,3] reshape(p0)",
            "p0 = f32[4] parameter(0)\nROOT x = f32[2] slice(p0), slice={[0:4:2]}",
            "p0 = f32[2] parameter(0)\nc = f32[] constant(0)\n"
            "ROOT x = f32[5] pad(p0, c), padding=1_1_1",
        ]
    ),
    st.integers(min_value=0, max_value=200),
    st.sampled_from(["", "x", "(", ")", "{", "}", ",", "=", "[", "]", "9", "-", "\n"]),
)
def test_corrupted_valid_text_gives_hlo_errors(text: str, at: int, insert: str) -> None:
    at = min(at, len(text))
    corrupted = text[:at] + insert + text[at + 1 :]
    try:
        module = parse_hlo(corrupted)
        comp = module.entry
        output_to_input(module, comp, comp.root)
    except QuoremError:
        pass
