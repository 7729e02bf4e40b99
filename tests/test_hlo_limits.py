"""HLO input at the limits (issue 14): deep fusion nesting, call cycles, huge integers.

Each case once raised RecursionError or ValueError from inside Python; each must now be
analysed, or refused with an :class:`HloError` naming ``file:line:col``.
"""

from __future__ import annotations

import pytest

from quorem.errors import TermError
from quorem.hlo import indexing as hlo_indexing
from quorem.hlo.attrs import (
    parse_int,
    parse_int_list,
    parse_padding,
    parse_window,
)
from quorem.hlo.indexing import (
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from quorem.hlo.parse import Computation, HloError, Module, parse_hlo, parse_slice
from quorem.indexing.map import IndexingMap
from quorem.indexing.mapsyntax import print_map

LONG = "7" * 5000  # past Python's 4300-digit int/str conversion limit


def nested_fusions(depth: int) -> str:
    """A module whose ENTRY calls f{depth-1}, which calls f{depth-2}, ... down to f0."""
    parts = [
        "f0 {\n p = f32[4,6] parameter(0)\n ROOT r = f32[6,4] transpose(p), dimensions={1,0}\n}"
    ]
    for k in range(1, depth):
        parts.append(
            f"f{k} {{\n p = f32[4,6] parameter(0)\n ROOT r = f32[6,4] fusion(p), calls=f{k - 1}\n}}"
        )
    parts.append(
        f"ENTRY e {{\n p = f32[4,6] parameter(0)\n"
        f" ROOT r = f32[6,4] fusion(p), calls=f{depth - 1}\n}}"
    )
    return "\n".join(parts)


# ---------------------------------------------------------------------------- nesting
@pytest.mark.slow
@pytest.mark.parametrize("depth", [1, 600])
def test_nested_fusions_compose_without_recursion(depth: int) -> None:
    # 600 levels would need thousands of Python frames if each expansion were a call.
    module = parse_hlo(nested_fusions(depth), "deep.hlo")
    e = module.entry
    ((m,),) = output_to_input(module, e, e.root)
    assert isinstance(m, IndexingMap)
    assert print_map(m) == "(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"
    ((back,),) = input_to_output(module, e, e.root, 0)
    assert isinstance(back, IndexingMap)
    assert print_map(back) == "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]"
    ((fused,),) = fused_output_to_input(module, e)
    assert isinstance(fused, IndexingMap) and print_map(fused) == print_map(m)
    ((fused_back,),) = fused_input_to_output(module, e, 0, physical=True)
    assert isinstance(fused_back, IndexingMap) and print_map(fused_back) == print_map(back)


def test_a_computation_fused_twice_is_composed_once_for_both() -> None:
    text = """
    f {
      p = f32[4] parameter(0)
      ROOT r = f32[4] reverse(p), dimensions={0}
    }
    ENTRY e {
      p = f32[4] parameter(0)
      a = f32[4] fusion(p), calls=f
      b = f32[4] fusion(a), calls=f
      ROOT c = f32[4] add(a, b)
    }
    """
    module = parse_hlo(text)
    ((m1, m2),) = fused_output_to_input(module, module.entry)
    assert isinstance(m1, IndexingMap) and isinstance(m2, IndexingMap)
    assert {print_map(m1), print_map(m2)} == {
        "(d0) -> (-d0 + 3), domain: d0 in [0, 3]",
        "(d0) -> (d0), domain: d0 in [0, 3]",
    }


@pytest.mark.parametrize(
    ("text", "line", "col", "cycle"),
    [
        ("ENTRY e {\n p = f32[4] parameter(0)\n ROOT r = f32[4] fusion(p), calls=e\n}",
         3, 2, "e -> e"),
        ("f {\n p = f32[4] parameter(0)\n ROOT r = f32[4] fusion(p), calls=g\n}\n"
         "g {\n p = f32[4] parameter(0)\n ROOT r = f32[4] fusion(p), calls=%f\n}\n"
         "ENTRY e {\n p = f32[4] parameter(0)\n   ROOT r = f32[4] fusion(p), calls=f\n}",
         7, 2, "f -> g -> f"),
    ],
)  # fmt: skip
def test_computations_calling_each_other_in_a_cycle_are_refused(
    text: str, line: int, col: int, cycle: str
) -> None:
    with pytest.raises(HloError) as info:
        parse_hlo(text, "cycle.hlo")
    assert (info.value.line, info.value.col) == (line, col)
    assert str(info.value).startswith(f"cycle.hlo:{line}:{col}: r (fusion): calls ")
    assert f"(a cycle: {cycle})" in str(info.value)


def test_a_long_cycle_is_refused_and_shown_short() -> None:
    n = 2000
    comps = [
        f"f{k} {{\n p = f32[4] parameter(0)\n ROOT r = f32[4] fusion(p), calls=f{(k + 1) % n}\n}}"
        for k in range(n)
    ]
    with pytest.raises(
        HloError, match=r"a cycle: f0 -> f1 -> f2 -> f3 -> \.\.\. -> f1998 -> f1999 -> f0\)$"
    ):
        parse_hlo("\n".join(comps))


def test_a_cycle_in_a_module_built_without_the_parser_is_refused_while_analysing() -> None:
    # parse_hlo refuses cycles; a Module built directly is checked again when expanded.
    good = parse_hlo("ENTRY e {\n p = f32[4] parameter(0)\n ROOT r = f32[4] fusion(p), calls=f\n}\n"
                     "f {\n p = f32[4] parameter(0)\n ROOT r = f32[4] negate(p)\n}")  # fmt: skip
    e, f = good.computation("e"), good.computation("f")
    looping = Module("m", (e, Computation("f", e.instructions, line=5, col=1)))
    with pytest.raises(HloError, match=r"calls f, which is already being expanded \(a cycle\)"):
        output_to_input(looping, e, e.root)
    with pytest.raises(HloError, match="a cycle"):
        fused_input_to_output(looping, looping.computation("f"), 0)
    assert f.root.opcode == "negate"


# ---------------------------------------------------------------------------- integers
def one_line(inst: str) -> str:
    return f"p = f32[10] parameter(0)\nc = f32[] constant(0)\nx = {inst}"


@pytest.mark.parametrize(
    "text",
    [
        f"p = f32[{LONG}] parameter(0)",
        f"p = f32[2,{LONG}]{{0,1}} parameter(0)",
        f"p = f32[10]{{{LONG}}} parameter(0)",
        f"p = f32[10] parameter({LONG})",
        f"p = s32[] constant(-{LONG})",
        one_line(f"f32[5] slice(p), slice={{[0:{LONG}:1]}}"),
        one_line(f"f32[5] pad(p, c), padding=1_{LONG}"),
        one_line(f"f32[5] reduce-window(p, c), window={{size=2x{LONG}}}"),
        one_line(f"f32[5] transpose(p), dimensions={{{LONG}}}"),
        one_line(f"f32[5] get-tuple-element(p), index={LONG}"),
        f"HloModule m, attr={LONG}\np = f32[10] parameter(0)",
        f"p = f32[10] parameter(0), metadata={{a={{{{b={LONG}}}}}}}",
    ],
)
def test_integer_literals_past_python_limit_are_refused_where_written(text: str) -> None:
    before = text[: text.index(LONG)]
    line, col = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    with pytest.raises(HloError) as info:
        parse_hlo(text, "big.hlo")
    assert str(info.value) == (
        f"big.hlo:{line}:{col}: integer literal too long (5000 digits; the limit is 4300)"
    )


@pytest.mark.parametrize(
    ("text", "at", "what"),
    [
        (f"p = f32[{10**30}] parameter(0)", str(10**30), str(10**30)),
        (f"p = f32[{2**63}] parameter(0)", str(2**63), str(2**63)),
        (f"p = f32[10]{{{2**64}}} parameter(0)", str(2**64), str(2**64)),
        (one_line(f"f32[5] slice(p), slice={{[0:{10**30}:1]}}"), "{[0:", str(10**30)),
        (one_line(f"f32[5] pad(p, c), padding=-{10**30}_1"), f"-{10**30}_1", "-" + str(10**30)),
        (one_line(f"f32[5] reduce-window(p, c), window={{size={10**20}}}"), "{size=", str(10**20)),
        (f"p = f32[10] parameter({2**63})", "p = ", str(2**63)),
    ],
)
def test_integers_outside_int64_are_refused(text: str, at: str, what: str) -> None:
    # The error is at the number, or at the start of the attribute value or instruction.
    before = text[: text.index(at)]
    line, col = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    with pytest.raises(HloError) as info:
        parse_hlo(text, "big.hlo")
    assert (info.value.line, info.value.col) == (line, col)
    assert f"integer {what} is outside the int64 range of HLO" in str(info.value)


def test_int64_extremes_are_read() -> None:
    big = 2**63 - 1
    m = parse_hlo(f"p = f32[{big}] parameter(0)\nROOT r = f32[{big}] negate(p)")
    assert m.entry.root.shape.dims == (big,)
    ((identity,),) = output_to_input(m, m.entry, m.entry.root)
    assert isinstance(identity, IndexingMap)
    assert print_map(identity) == f"(d0) -> (d0), domain: d0 in [0, {big - 1}]"
    assert parse_padding(f"-{2**63}_0") == parse_padding(f"-{2**63}_0_0")


def test_an_unsigned_constant_past_int64_is_a_runtime_offset() -> None:
    # u64 constants are legal HLO; as a dynamic offset one is clamped at run time.
    text = f"""
    p = f32[10] parameter(0)
    o = u64[] constant({2**64 - 1})
    ROOT d = f32[4] dynamic-slice(p, o), dynamic_slice_sizes={{4}}
    """
    module = parse_hlo(text)
    (m,), _ = output_to_input(module, module.entry, module.entry.root)
    assert isinstance(m, IndexingMap)
    assert print_map(m) == "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 6]"


@pytest.mark.parametrize(
    ("parse", "text", "why"),
    [
        (parse_int, LONG, "integer literal too long (5000 digits; the limit is 4300)"),
        (parse_int, "٣", "expected an integer"),  # int() would read this digit as 3
        (parse_int_list, "{" + LONG + "}", "integer literal too long"),
        (parse_int_list, "{1," + "2" * 5000 + "x}", "...'22222222x}' (5005 characters)"),
        (parse_slice, "{[" + LONG + ":1]}", "integer literal too long"),
        (parse_slice, "{[0:1:" + LONG + "]}", "integer literal too long"),
        (parse_padding, "0_0_" + LONG, "integer literal too long"),
        (parse_window, "{size=1 stride=" + LONG + "}", "integer literal too long"),
        (parse_window, "{size=" + str(2**63) + "}", "outside the int64 range"),
    ],
)
def test_attribute_parsers_refuse_huge_integers_with_value_errors(
    parse: object, text: str, why: str
) -> None:
    assert callable(parse)
    with pytest.raises(ValueError) as info:
        parse(text)
    assert why in str(info.value)
    assert len(str(info.value)) < 200  # the literal is not echoed whole


# ---------------------------------------------------------------------------- size
def test_an_unsimplified_composition_that_explodes_is_refused_quickly() -> None:
    # Each reshape step uses its index several times: written out as trees, the
    # unsimplified composition doubles at every step (it once hung printing them).
    lines = ["x0 = f32[8,6] parameter(0)"]
    lines += [
        f"x{k} = {'f32[48]' if k % 2 else 'f32[8,6]'} reshape(x{k - 1})" for k in range(1, 61)
    ]
    module = parse_hlo("\n".join(lines), "chain.hlo")
    with pytest.raises(HloError, match=r"^chain\.hlo:\d+:1: x\d+ \(reshape\): composed without"):
        fused_output_to_input(module, module.entry, simplify=False)
    ((m,),) = fused_output_to_input(module, module.entry)  # simplified, it stays small
    assert isinstance(m, IndexingMap)
    assert print_map(m) == "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 5]"


# ---------------------------------------------------------------------------- positions
def test_analysis_errors_name_file_line_and_column() -> None:
    text = """HloModule m
    ENTRY e {
      p = (f32[2], f32[2]) parameter(0)
      ROOT g = f32[2] get-tuple-element(p), index=0
    }
    """
    module = parse_hlo(text, "pos.hlo")
    e = module.entry
    # (Read physically, the tuple's map is unknown, as read logically: no error.)
    ((m,),) = fused_output_to_input(module, e, physical=True)
    assert not m
    with pytest.raises(HloError) as info:
        fused_input_to_output(module, e, 0)
    assert str(info.value) == (
        "pos.hlo:3:7: p (parameter): indexing from a tuple-shaped parameter is not supported"
    )
    with pytest.raises(HloError) as info:
        fused_input_to_output(module, e, 3)
    assert str(info.value) == "pos.hlo:2:5: computation e has no parameter(3)"
    with pytest.raises(HloError) as info:
        module.computation("f" * 1000)
    assert str(info.value) == f"pos.hlo: no computation named {'f' * 80!r} (the module has e)"


def test_errors_of_the_maps_code_are_named_at_the_instruction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise TermError("cannot simplify this")

    text = (
        "ENTRY e {\n  p = f32[4] parameter(0)\n  n = f32[4] negate(p)\n  ROOT r = f32[4] abs(n)\n}"
    )
    module = parse_hlo(text, "maps.hlo")
    monkeypatch.setattr(hlo_indexing, "simplify_map", refuse)
    with pytest.raises(HloError) as info:
        fused_output_to_input(module, module.entry)
    # The first composition (root to n) is the first to be simplified.
    assert str(info.value) == "maps.hlo:4:3: r (abs): cannot simplify this"
    assert isinstance(info.value.__cause__, TermError)
    with pytest.raises(HloError, match=r"^maps\.hlo:4:3: r \(abs\): cannot simplify this$"):
        input_to_output(module, module.entry, module.entry.root, 0)


# ------------------------------------------- an op given operands it does not take
@pytest.mark.parametrize("physical", [False, True])
@pytest.mark.parametrize("operands", ["p0", "p0, p0"])
def test_an_op_given_operands_it_does_not_take_is_an_error(physical: bool, operands: str) -> None:
    """Fuzz finding: iota(p0) crashed the physical maps with a ValueError from zip()."""
    m = parse_hlo(f"p0 = f32[] parameter(0)\nROOT r = f32[3,4] iota({operands})")
    with pytest.raises(HloError, match=r"2:1: r \(iota\): iota takes 0 operand\(s\)"):
        output_to_input(m, m.entry, m.entry.root, physical=physical)


def test_an_iota_with_operands_inside_a_fusion_is_an_error() -> None:
    text = """
HloModule m
fused {
  p0 = f32[] parameter(0)
  ROOT r = f32[3,4]{1,0} iota(p0)
}
ENTRY e {
  a = f32[] parameter(0)
  ROOT f = f32[3,4]{0,1} fusion(a), kind=kLoop, calls=fused
}
"""
    m = parse_hlo(text)
    for physical in (False, True):
        with pytest.raises(HloError, match="iota takes 0 operand"):
            output_to_input(m, m.entry, m.entry.root, physical=physical)
