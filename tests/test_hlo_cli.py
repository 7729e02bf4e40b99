"""``quorem hlo``: the handler, driven through a parser of its own (as quorem.cli.main does)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from quorem.cli.hlo import HloUsageError, add_parser
from quorem.errors import QuoremError
from quorem.hlo.module import analyse_module, callers
from quorem.hlo.parse import HloError, parse_hlo
from quorem.indexing.mapsyntax import parse_map
from quorem.indexing.simplify import maps_equal

FUSION = """
HloModule m
f {
  p0 = f32[1000, 1000] parameter(0)
  transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
  ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)
}
ENTRY e {
  p = f32[1000, 1000] parameter(0)
  ROOT fusion = f32[1000, 1000] fusion(p), kind=kLoop, calls=f
}
"""
DOM = "domain: d0 in [0, 999], d1 in [0, 999]"


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="quorem")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    status = args.handler(args, out, err)
    assert err.getvalue() == ""
    return status, out.getvalue()


@pytest.fixture
def fusion_file(tmp_path: Path) -> str:
    path = tmp_path / "fusion.hlo"
    path.write_text(FUSION)
    return str(path)


def test_text_output_lists_each_operand_and_its_maps(fusion_file: str) -> None:
    status, text = run("hlo", fusion_file)
    assert status == 0
    assert text.splitlines() == [
        "operand id = 0",
        f"  (d0, d1) -> (d0, d1), {DOM}",
        f"  (d0, d1) -> (d1, d0), {DOM}",
    ]


def test_json_output_to_input(fusion_file: str) -> None:
    _, text = run("hlo", fusion_file, "--json")
    record = json.loads(text)
    assert record["direction"] == "output_to_input"
    ((entry,),) = [record["operands"]]
    assert entry["operand"] == 0
    assert sorted(entry["maps"]) == sorted(
        [f"(d0, d1) -> (d0, d1), {DOM}", f"(d0, d1) -> (d1, d0), {DOM}"]
    )


def test_fused_reads_the_computation_as_a_fusion_body(fusion_file: str) -> None:
    # The root of f itself is an add: its operands are p0 and transpose_p0 ...
    _, text = run("hlo", fusion_file, "--computation", "f")
    assert text.count("operand id") == 2
    # ... but read as a fusion, its one parameter is read twice.
    _, text = run("hlo", fusion_file, "--computation", "f", "--fused")
    assert text.count("operand id") == 1
    assert text.count("->") == 2


def test_input_to_output(tmp_path: Path) -> None:
    path = tmp_path / "slice.hlo"
    path.write_text(
        "p0 = f32[10, 20, 50] parameter(0)\n"
        "slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0), slice={[5:10:1], [3:20:7], [0:50:2]}\n"
    )
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0", "--json")
    record = json.loads(text)
    assert record["direction"] == "input_to_output"
    assert record["operand"] == 0
    (got,) = record["maps"]
    expected = parse_map(
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), domain: d0 in [5, 9], "
        "d1 in [3, 17], d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]"
    )
    assert maps_equal(parse_map(got), expected)
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0")
    assert text.splitlines()[0] == "output id = 0"


def test_tuple_outputs_and_unknown_maps(tmp_path: Path) -> None:
    path = tmp_path / "reduce.hlo"
    path.write_text(
        "p0 = f32[256,10] parameter(0)\np1 = s32[256,10] parameter(1)\n"
        "i0 = f32[] constant(0)\ni1 = s32[] constant(0)\n"
        "ROOT out = (f32[10], s32[10]) reduce(p0, p1, i0, i1), dimensions={0}, to_apply=max\n"
    )
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "1", "--output", "1")
    assert text.splitlines() == [
        "output id = 1",
        "  (d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]",
    ]
    path.write_text(
        'p0 = f32[8] parameter(0)\nROOT r = f32[4] custom-call(p0), custom_call_target="halve"\n'
    )
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0", "--json")
    assert json.loads(text)["maps"] == [None]
    assert json.loads(text)["reasons"] == [
        "r (custom-call): its target (halve) is opaque code: what it reads is not in the HLO"
    ]
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0")
    assert "unknown indexing: r (custom-call)" in text


def test_physical_layouts(tmp_path: Path) -> None:
    path = tmp_path / "layout.hlo"
    path.write_text(
        "p0 = f32[10, 20, 30] parameter(0)\nROOT e = f32[10, 20, 30]{1, 0, 2} exponential(p0)\n"
    )
    _, logical = run("hlo", str(path))
    _, physical = run("hlo", str(path), "--physical")
    assert "(d0, d1, d2) -> (d0, d1, d2)" in logical
    assert "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29]" in physical


def test_no_simplify_and_keep_unused(tmp_path: Path) -> None:
    path = tmp_path / "chain.hlo"
    path.write_text(
        "p0 = f32[10, 10, 10] parameter(0)\nr1 = f32[50, 20] reshape(p0)\n"
        "r2 = f32[10, 10, 10] reshape(r1)\n"
    )
    _, simplified = run("hlo", str(path), "--fused")
    _, raw = run("hlo", str(path), "--fused", "--no-simplify")
    assert "(d0, d1, d2) -> (d0, d1, d2), domain" in simplified
    assert "mod" in raw and "mod" not in simplified
    path.write_text(
        "src = s32[2, 258] parameter(0)\nof1 = s32[] parameter(1)\nof2 = s32[] parameter(2)\n"
        "ds = s32[2, 32] dynamic-slice(src, of1, of2), dynamic_slice_sizes={2, 32}\n"
    )
    _, text = run("hlo", str(path))
    assert "{rt0}" in text  # rt0 in [0, 0] is a constant
    _, text = run("hlo", str(path), "--keep-unused")
    assert "{rt0, rt1}" in text


def test_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("p0 = f32[4] parameter(0)\nn = f32[4] negate(p0)"))
    _, text = run("hlo", "-")
    assert text.splitlines()[1] == "  (d0) -> (d0), domain: d0 in [0, 3]"


@pytest.mark.parametrize(
    ("argv", "error", "why"),
    [
        (["--input-to-output"], HloUsageError, "needs --operand"),
        (["--operand", "0"], HloUsageError, "is for --input-to-output"),
        (["--computation", "nope"], HloError, "no computation named 'nope'"),
        (["--input-to-output", "--operand", "3"], HloError, "no operand 3"),
        (["--input-to-output", "--operand", "3", "--fused", "--computation", "f"], HloError,
         "no parameter(3)"),
        (["--output", "2"], HloError, "no output 2"),
    ],
)  # fmt: skip
def test_usage_errors(fusion_file: str, argv: list[str], error: type[Exception], why: str) -> None:
    with pytest.raises(error) as info:
        run("hlo", fusion_file, *argv)
    assert why in str(info.value)
    assert isinstance(info.value, QuoremError)  # the CLI prints it as `quorem hlo: error: ...`


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(HloUsageError, match="cannot read"):
        run("hlo", str(tmp_path / "missing.hlo"))
    bad = tmp_path / "bad.hlo"
    bad.write_text("p0 = f32[4] parameter(0)\nx = f32[4] negate(p9)\n")
    with pytest.raises(HloError) as info:
        run("hlo", str(bad))
    assert str(info.value).startswith(f"{bad}:2:")
    binary = tmp_path / "binary.hlo"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(HloUsageError, match="not UTF-8"):
        run("hlo", str(binary))


def test_json_names_the_source_of_each_runtime_variable(tmp_path: Path) -> None:
    # Offsets composed through a fusion: rt0 and rt1 come from the inner slice's
    # offsets p1 and p2, rt2 from the outer one's p3 (the order the map's symbols
    # have, not the reverse XLA's source table gives).
    path = tmp_path / "ds.hlo"
    path.write_text(
        "f {\n"
        "  p0 = f32[100,200] parameter(0)\n"
        "  p1 = s32[] parameter(1)\n"
        "  p2 = s32[] parameter(2)\n"
        "  p3 = s32[] parameter(3)\n"
        "  ds0 = f32[50,20] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={50,20}\n"
        "  c = s32[] constant(7)\n"
        "  ROOT ds1 = f32[10,5] dynamic-slice(ds0, p3, c), dynamic_slice_sizes={10,5}\n"
        "}\n"
    )
    _, text = run("hlo", str(path), "--fused", "--json")
    operand = json.loads(text)["operands"][0]
    (got,) = operand["maps"]
    expected = parse_map(
        "(d0, d1){rt0, rt1, rt2} -> (d0 + rt0 + rt2, d1 + rt1 + 7), domain: d0 in [0, 9], "
        "d1 in [0, 4], rt0 in [0, 50], rt1 in [0, 180], rt2 in [0, 40]"
    )
    assert maps_equal(parse_map(got), expected)
    assert operand["runtime_variables"] == [
        [
            {"name": "rt0", "source": "p1 (operand 1 of ds0)"},
            {"name": "rt1", "source": "p2 (operand 2 of ds0)"},
            {"name": "rt2", "source": "p3 (operand 1 of ds1)"},
        ]
    ]
    # The scalar offsets' own maps have none; input-to-output lists them too.
    assert json.loads(text)["operands"][1]["runtime_variables"] == [[]]


def test_window_with_rhs_reversal_or_an_unknown_field_is_not_an_input_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "conv.hlo"
    text = (
        "p0 = f32[1,12,4] parameter(0)\n"
        "p1 = f32[3,4,8] parameter(1)\n"
        "ROOT c = f32[1,10,8] convolution(p0, p1), window={size=3 rhs_reversal=1}, "
        "dim_labels=b0f_0io->b0f\n"
    )
    path.write_text(text)
    status, out = run("hlo", str(path), "--json")
    assert status == 0
    assert all(op["maps"] != [None] for op in json.loads(out)["operands"])
    # A field quorem does not read: the text parses, the maps are unknown.
    path.write_text(text.replace("rhs_reversal=1", "some_future_field=2x"))
    status, out = run("hlo", str(path), "--json")
    assert status == 0
    assert [op["maps"] for op in json.loads(out)["operands"]] == [[None], [None]]


# ---------------------------------------------------------------------------- --all
MODULE = """
HloModule m
f {
  p0 = f32[4,6] parameter(0)
  ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
}
bad {
  q = f32[4] parameter(0)
  ROOT s = f32[9] slice(q), slice={[0:4:1]}
}
ENTRY e {
  p = f32[4,6] parameter(0)
  ROOT fusion = f32[6,4] fusion(p), kind=kLoop, calls=f
}
"""


def test_all_writes_one_json_line_per_computation(tmp_path: Path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    status, out = run("hlo", str(path), "--all", "--jsonl")
    assert status == 1  # one computation not analysed: a negative finding, as in --batch
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["computation"], r["kind"], r["line"]) for r in records] == [
        ("f", "fusion", 3),
        ("bad", "unused", 7),
        ("e", "entry", 11),
    ]
    f, bad, e = records
    assert f["known"] and e["known"]
    assert f["outputs"] == [
        {
            "output": 0,
            "operands": [
                {
                    "operand": 0,
                    "maps": ["(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"],
                    "runtime_variables": [[]],
                }
            ],
        }
    ]
    assert e["outputs"] == f["outputs"]  # through the fusion
    # An error in one computation is its record's; the next ones are still analysed.
    assert not bad["known"]
    assert bad["error"].startswith(f"{path}:9:")
    assert "outputs" not in bad


def test_all_as_text_and_fusions_only(tmp_path: Path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    status, out = run("hlo", str(path), "--all", "--fusions")
    assert status == 0
    assert out == (
        "computation f (fusion, line 3)\n"
        "operand id = 0\n"
        "  (d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]\n"
    )
    status, out = run("hlo", str(path), "--all")
    assert status == 1
    assert "computation bad (unused, line 7)\n  error: " in out


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--all", "--json"], "use --jsonl"),
        (["--all", "--computation", "f"], "--computation"),
        (["--all", "--input-to-output", "--operand", "0"], "--input-to-output"),
        (["--jsonl"], "for --all"),
        (["--fusions"], "for --all"),
    ],
)
def test_all_usage_errors(tmp_path: Path, flags: list[str], why: str) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    with pytest.raises(HloUsageError, match=why):
        run("hlo", str(path), *flags)


def test_analyse_module_api() -> None:
    module = parse_hlo(MODULE)
    assert callers(module)["f"] == [("fusion", "calls")]
    records = list(analyse_module(module))
    assert [r.known for r in records] == [True, False, True]
    assert isinstance(records[1].error, HloError)
    assert records[1].error.line == 9
    assert [r.computation for r in analyse_module(module, fusions_only=True)] == ["f"]
