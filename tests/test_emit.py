"""Code emission: widths, lowering, and C / Python code run against quorem's evaluation."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from strategies import Case, points, random_cases
from support import examples

import quorem
from quorem.codegen import (
    EmitError,
    LoweringError,
    Width,
    WidthError,
    emit,
    lower,
    node_widths,
)
from quorem.codegen.lower import lowering_rules, lowers_to
from quorem.errors import EvaluationError
from quorem.ops import DIVISION_OPS, SEMANTICS_OF, Op, Semantics
from quorem.rule import POp
from quorem.rulefile import parse_rules
from quorem.term import Term
from quorem.walk import nodes

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


def _ops(t: Term) -> set[Any]:
    return {u.op for u in nodes(t)}


# ------------------------------------------------------------------ widths
def test_int32_where_every_value_fits() -> None:
    t = quorem.parse("(x*4 + y)//3", {"x": (0, 1000), "y": (0, 3)}, "trunc")
    assert set(node_widths(t).values()) == {Width.I32}


def test_int64_where_an_intermediate_needs_it() -> None:
    # The result is small, but x*100000 is not.
    t = quorem.parse("x*100000 - x*99999", {"x": (0, 100000)})
    assert node_widths(t)[t] is Width.I32  # the canonical form is just x
    u = quorem.parse("(x*100000 + y) // 100000", {"x": (0, 100000), "y": (0, 9)}, "trunc")
    w = node_widths(u)
    assert w[u] is Width.I64  # its numerator needs 64 bits, so the division works at 64
    assert w[u.args[1]] is Width.I32  # the divisor alone fits


def test_a_node_is_as_wide_as_its_operands() -> None:
    t = quorem.parse("(x*70000) // 70000 < 5", {"x": (0, 70000)}, "trunc")
    assert node_widths(t)[t] is Width.I64


@pytest.mark.parametrize(
    ("text", "box"),
    [("x * 4", {"x": (0, 2**62)}), ("x + 1", {"x": (None, None)}), ("x*x", {"x": (0, 2**32)})],
)
def test_more_than_64_bits_is_an_error(
    text: str, box: dict[str, tuple[int | None, int | None]]
) -> None:
    with pytest.raises(WidthError, match="more than 64 bits"):
        node_widths(quorem.parse(text, box))


def test_an_unbounded_parameter_is_an_int64_until_computed_with() -> None:
    x = quorem.var("x")
    assert node_widths(x)[x] is Width.I64
    assert "return x;" in emit(x, ["x"])
    with pytest.raises(WidthError, match=r"^x \+ 1 needs more than 64 bits: .*x unbounded"):
        emit(x + 1, ["x"])
    with pytest.raises(WidthError, match="unbounded"):
        node_widths(x + 1)


def test_int32_min_divided_by_minus_one_needs_64_bits() -> None:
    t = quorem.parse("x % y", {"x": (-(2**31), 0), "y": (-1, -1)}, "trunc")
    assert node_widths(t)[t] is Width.I64


# ------------------------------------------------------------------ lowering
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_cases(), st.data())
def test_lowering_keeps_the_value_and_leaves_one_semantics(case: Case, data: st.DataObject) -> None:
    for target in Semantics:
        try:
            low = lower(case.term, target)
        except LoweringError as exc:
            if "64 bits" in str(exc):  # its lowered form would need more than int64
                return
            assert "divides by zero at every point" in str(exc), (exc, case)
            with pytest.raises(EvaluationError):
                quorem.evaluate(case.term, data.draw(points(case.box)))
            return
        assert not any(op in DIVISION_OPS and SEMANTICS_OF[op] is not target for op in _ops(low))
        assert Op.CEILDIV not in _ops(low)
        for _ in range(5):
            p = data.draw(points(case.box))
            try:
                expected = quorem.evaluate(case.term, p)
            except EvaluationError:
                continue  # a division by zero at this point: no value to keep
            assert quorem.evaluate(low, p) == expected


def test_lowering_is_cheap_where_operands_are_non_negative() -> None:
    t = quorem.parse("x // 8 + x % 8", {"x": (0, 100)})
    assert str(lower(t, Semantics.TRUNC)) == "truncdiv(x, 8) + truncmod(x, 8)"


def test_node_widths_wants_the_lowered_term() -> None:
    t = quorem.parse("x // 3", {"x": (-9, 9)})
    with pytest.raises(WidthError, match="floor division"):
        node_widths(t)
    assert set(node_widths(lower(t, Semantics.TRUNC)).values()) == {Width.I32}
    for text, kind in [("eucliddiv(x, 3)", "Euclidean"), ("ceildiv(x, 3)", "ceiling")]:
        with pytest.raises(WidthError, match=f"{kind} division, which C lacks"):
            node_widths(quorem.parse(text, {"x": (-9, 9)}))


@pytest.mark.parametrize(
    ("text", "sem", "target", "lowered"),
    [
        # Euclidean and floor division agree for a positive divisor.
        ("x // y + x % y", "euclid", "floor", "floordiv(x, y) + floormod(x, y)"),
        ("eucliddiv(x, y)", "floor", "euclid", "eucliddiv(x, y)"),
        ("x // y", "floor", "euclid", "eucliddiv(x, y)"),
        # ... and Euclidean and truncating division for a non-negative numerator.
        ("x // 3 + x % 3", "euclid", "trunc", "truncdiv(x, 3) + truncmod(x, 3)"),
        ("x // -3", "euclid", "floor", "-floordiv(x, 3)"),
        ("x % -3", "euclid", "floor", "floormod(x, 3)"),
        # A ceiling division by a positive divisor: one division, where the sum fits.
        ("ceildiv(x, y)", "floor", "floor", "floordiv(x + y - 1, y)"),
        ("ceildiv(x, y)", "floor", "euclid", "eucliddiv(x + y - 1, y)"),
        ("ceildiv(x, -y)", "floor", "euclid", "eucliddiv(x, -y)"),
        ("ceildiv(-x, y)", "floor", "trunc", "truncdiv(-x, y)"),
    ],
)
def test_lowering_is_cheap_where_ranges_allow(
    text: str, sem: str, target: str, lowered: str
) -> None:
    t = quorem.parse(text, {"x": (0, 100), "y": (1, 9)}, sem)
    low = lower(t, Semantics(target))
    assert str(low) == str(quorem.parse(lowered, {"x": (0, 100), "y": (1, 9)}, target))


def test_ceildiv_lowering_takes_the_form_whose_values_fit() -> None:
    top = quorem.parse("ceildiv(x, 5)", {"x": (0, 2**63 - 1)})  # x + 4 may overflow
    low = lower(top, Semantics.FLOOR)
    assert str(low) == str(quorem.parse("(x - 1) // 5 + 1", {"x": (0, 2**63 - 1)}))
    every = quorem.parse("ceildiv(x, 5)", {"x": (-(2**63), 2**63 - 1)})  # and x - 1 too
    general = lower(every, Semantics.FLOOR)
    assert Op.FLOORMOD in _ops(general)  # x // 5 + (x % 5 != 0)
    for x in (-(2**63), -(2**63) + 1, -6, -5, -4, 0, 1, 5, 6, 2**63 - 2, 2**63 - 1):
        expected = -((-x) // 5)
        assert quorem.evaluate(general, {"x": x}) == expected
        if x >= 0:
            assert quorem.evaluate(low, {"x": x}) == expected


def test_lowering_can_keep_ceiling_divisions() -> None:
    t = quorem.parse("ceildiv(x, 4) + eucliddiv(x, -3)", {"x": (-50, 50)})
    low = lower(t, Semantics.FLOOR, ceildiv=False)
    assert Op.CEILDIV in _ops(low) and Op.EUCLIDDIV not in _ops(low)
    assert Op.CEILDIV not in _ops(lower(t, Semantics.FLOOR))


@pytest.mark.parametrize("target", list(Semantics))
def test_each_lowering_rule_removes_a_division_and_adds_none_to_lower(target: Semantics) -> None:
    rules = lowering_rules(target)
    assert rules, "every target has lowering rules"
    roots = set()
    for r in rules:
        assert lowers_to(r, r.semantics[0] if r.semantics else None, target)
        roots.add(r.pattern.op if isinstance(r.pattern, POp) else None)
    # Every division a term may hold is lowered by some rule: quotients, remainders, ceildiv.
    assert {"div", "mod", "ceildiv"} <= roots


def test_a_rule_writing_another_division_is_not_a_lowering_rule() -> None:
    (rule,) = parse_rules(
        "rule r\n  doc: d\n  semantics: euclid\n  phase: lowering\n"
        "  pattern: x // y\n  rewrite: floordiv(x, y) + truncmod(x, y)*0\n"
    )
    assert not lowers_to(rule, Semantics.EUCLID, Semantics.FLOOR)
    assert not lowers_to(rule, Semantics.EUCLID, Semantics.TRUNC)
    # A rule whose pattern already is a target division lowers nothing.
    (same,) = parse_rules(
        "rule s\n  doc: d\n  semantics: floor\n  phase: lowering\n"
        "  pattern: x // y\n  rewrite: floordiv(x, y)\n"
    )
    assert not lowers_to(same, Semantics.FLOOR, Semantics.FLOOR)


# ------------------------------------------------------------------ C
_NEAR_LIMITS = [
    {"x": (2**31 - 40, 2**31 + 40), "y": (-5, 5)},
    {"x": (-(2**31) - 3, -(2**31) + 60), "y": (1, 9)},
    {"x": (-(2**31), 2**31 - 1), "y": (-3, 3)},
    {"x": (-100, 100), "y": (-7, 7)},
]


def _c_program(functions: list[str], calls: list[str]) -> str:
    body = "\n".join(functions)
    lines = [f'    printf("%" PRId64 "\\n", {c});' for c in calls]
    return (
        "#include <stdint.h>\n#include <inttypes.h>\n#include <stdio.h>\n"
        + body
        + "\nint main(void) {\n"
        + "\n".join(lines)
        + "\n    return 0;\n}\n"
    )


def _run_c(tmp: Path, source: str) -> list[int]:
    assert CC is not None
    (tmp / "t.c").write_text(source)
    # An unsimplified term may compare a 0/1 comparison with a constant, or x with x.
    flags = [
        "-std=c99",
        "-O1",
        "-Wall",
        "-Werror",
        "-Wno-unused-function",
        "-Wno-bool-compare",
        "-Wno-tautological-compare",
    ]
    sanitize = ["-fsanitize=undefined", "-fno-sanitize-recover=all"]
    build = subprocess.run(
        [CC, *flags, *sanitize, str(tmp / "t.c"), "-o", str(tmp / "t")],
        capture_output=True,
        text=True,
        check=False,
    )
    if build.returncode != 0:  # no UBSan runtime here: compile without it
        build = subprocess.run(
            [CC, *flags, str(tmp / "t.c"), "-o", str(tmp / "t")],
            capture_output=True,
            text=True,
            check=False,
        )
    assert build.returncode == 0, build.stderr + source
    run = subprocess.run([str(tmp / "t")], capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 0, run.stderr  # UBSan stops at any signed overflow
    return [int(x) for x in run.stdout.split()]


def _compiled_cases(
    tmp: Path, cases: list[tuple[Term, dict[str, tuple[int, int]], list[dict[str, int]]]], lang: str
) -> None:
    functions, calls, expected = [], [], []
    for i, (term, box, pts) in enumerate(cases):
        names = list(box)
        code = emit(term, names, lang, f"index_{i}").replace("#include <stdint.h>\n", "")
        if lang == "cuda":
            code = code.replace("__device__ ", "")
        functions.append(code)
        for p in pts:
            try:
                value = quorem.evaluate(term, p)
            except EvaluationError:
                continue
            args = ", ".join(f"INT64_C({p[n]})" if p[n] != -(2**63) else "INT64_MIN" for n in names)
            calls.append(f"index_{i}({args})")
            expected.append(value)
    assert calls, "no point to run"
    assert _run_c(tmp, _c_program(functions, calls)) == expected


@needs_cc
# One example compiles 30 functions: shrinking would recompile thousands of times, so
# a failure is reported as drawn (the compiler's or UBSan's message names the case).
@pytest.mark.slow
@settings(
    max_examples=examples(6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(st.data())
def test_emitted_c_computes_the_term(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    cases = []
    for _ in range(30):
        case = data.draw(random_cases(allow_big=True))
        term = data.draw(st.sampled_from([case.term, quorem.simplify(case.term)]))
        box = {n: (lo, hi) for n, (lo, hi) in case.box.items() if lo is not None and hi is not None}
        try:
            emit(term, list(box))
        except (WidthError, LoweringError, EmitError) as exc:
            # Needs more than 64 bits, or divides by zero everywhere.
            assert "64 bits" in str(exc) or "at every point" in str(exc), (exc, box, term)
            continue
        cases.append((term, box, [data.draw(points(case.box)) for _ in range(8)]))
    assert len(cases) >= 10, "most drawn cases fit in 64 bits: the test must run code"
    _compiled_cases(tmp_path_factory.mktemp("c"), cases, "c")


@needs_cc
@pytest.mark.parametrize("box", _NEAR_LIMITS)
@pytest.mark.parametrize(
    "text",
    [
        "x // 8 + x % 8",
        "(x + y) // 3 - x % 7",
        "x // -4 + max(x, y) % 5",
        "(x*3 + y) % 16 + (x < y)",
        "x // 2 + x % 2",
    ],
)
@pytest.mark.parametrize("sem", ["floor", "trunc"])
def test_emitted_c_near_the_int32_limits(
    tmp_path: Path, text: str, box: dict[str, tuple[int, int]], sem: str
) -> None:
    term = quorem.simplify(quorem.parse(text, box, sem))
    corners: list[dict[str, int]] = []
    for k in range(60):
        corners.append(
            {
                n: (lo + (k * 7919 + j * 104729) % (hi - lo + 1))
                for j, (n, (lo, hi)) in enumerate(box.items())
            }
        )
    corners += [{n: b[0] for n, b in box.items()}, {n: b[1] for n, b in box.items()}]
    _compiled_cases(tmp_path, [(term, box, corners)], "c")


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
# Boxes reaching the int64 limits, divisors of either sign (never -1 where x reaches
# INT64_MIN: that quotient is 2**63, which no int64 code holds).
_INT64_EDGES = [
    {"x": (_I64_MIN, _I64_MAX), "y": (2, 9)},
    {"x": (_I64_MIN, _I64_MAX), "y": (-9, -2)},
    {"x": (_I64_MIN + 2, _I64_MAX - 1), "y": (-9, 9)},
    {"x": (-100, 100), "y": (-7, 7)},
    {"x": (_I64_MAX - 40, _I64_MAX), "y": (1, 2**62)},
]


def test_euclidmod_by_int64_min_of_a_negative_numerator_is_refused_clearly() -> None:
    # Its value x + 2**63 fits, but every lowered form writes 2**63 (the divisor's
    # magnitude) as a constant: an honest refusal, not wrong code.
    t = quorem.parse("euclidmod(x, -9223372036854775808)", {"x": (-5, 5)})
    for target in (Semantics.FLOOR, Semantics.TRUNC):
        with pytest.raises(LoweringError, match="stays in 64 bits"):
            lower(t, target)
    nonneg = quorem.parse("euclidmod(x, -9223372036854775808)", {"x": (0, 5)})
    assert str(lower(nonneg, Semantics.TRUNC)) == "truncmod(x, -9223372036854775808)"


def _edge_points(box: dict[str, tuple[int, int]]) -> list[dict[str, int]]:
    """The box's corners, values next to them and near 0, and a spread between."""
    (xlo, xhi), (ylo, yhi) = box["x"], box["y"]
    xs = {xlo, xlo + 1, xhi, xhi - 1, 0, 1, -1, 7, -7, 12, -12}
    xs |= {xlo + (k * 0x9E3779B97F4A7C15) % (xhi - xlo + 1) for k in range(12)}
    ys = {ylo, ylo + 1, yhi, yhi - 1, 3, -3, 4, -4, 1, -1, 2, -2}
    return [
        {"x": x, "y": y}
        for x in sorted(v for v in xs if xlo <= v <= xhi)
        for y in sorted(v for v in ys if ylo <= v <= yhi)
    ]


@needs_cc
@pytest.mark.parametrize("box", _INT64_EDGES)
@pytest.mark.parametrize(
    ("text", "sem"),
    [
        ("eucliddiv(x, y)", "floor"),
        ("euclidmod(x, y)", "trunc"),
        ("(x // y < x % y) + x % y*2", "euclid"),
        ("x // 4 + x % -3", "euclid"),
        ("ceildiv(x, y)", "floor"),
        ("ceildiv(x, -5) - ceildiv(x, 8)", "trunc"),
        ("ceildiv(euclidmod(x, y), 3) + eucliddiv(x, -7)", "floor"),
        ("eucliddiv(x, -9223372036854775808)", "euclid"),
        ("ceildiv(x, -9223372036854775808)", "floor"),
    ],
)
def test_emitted_c_for_euclidean_and_ceiling_division_at_the_int64_limits(
    tmp_path: Path, text: str, sem: str, box: dict[str, tuple[int, int]]
) -> None:
    term = quorem.parse(text, box, sem)
    pts = _edge_points(box)
    for t in (term, quorem.simplify(term)):
        code = emit(t, ["x", "y"])
        assert "ceildiv" not in code and "euclid" not in code
    _compiled_cases(tmp_path, [(term, box, pts), (quorem.simplify(term), box, pts)], "c")
    fn = _python_function(tmp_path, emit(term, ["x", "y"], "python"))
    for p in pts:
        try:
            expected = quorem.evaluate(term, p)
        except EvaluationError:
            continue
        assert fn(p["x"], p["y"]) == expected


@needs_cc
def test_cuda_source_differs_only_in_its_qualifiers(tmp_path: Path) -> None:
    term = quorem.simplify(quorem.parse("(x + 5) // 4 - y % 3", {"x": (-50, 50), "y": (-9, 9)}))
    cuda = emit(term, ["x", "y"], "cuda")
    assert "__device__" in cuda and cuda.startswith("#include <stdint.h>")
    pts = [{"x": x, "y": y} for x in range(-50, 51, 7) for y in range(-9, 10, 4)]
    _compiled_cases(tmp_path, [(term, {"x": (-50, 50), "y": (-9, 9)}, pts)], "cuda")


def test_shifts_and_masks_only_for_non_negative_numerators() -> None:
    nonneg = quorem.parse("x // 16 + x % 8", {"x": (0, 1000)})
    code = emit(nonneg, ["x"])
    assert ">> 4" in code and "& 7" in code and "/" not in code.split("{", 1)[1]
    signed = quorem.parse("x // 16", {"x": (-1000, 1000)})
    assert ">>" not in emit(signed, ["x"])


def test_shared_subterms_are_computed_once() -> None:
    t = quorem.parse("(x*3 + y) // 5 + ((x*3 + y) % 5) * 7", {"x": (0, 9), "y": (-4, 4)})
    code = emit(t, ["x", "y"])
    assert code.count("const int32_t t_") >= 1


# ------------------------------------------------------------------ Python
def _python_function(tmp: Path, source: str) -> Any:
    path = tmp / "emitted.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"emitted_{abs(hash(source))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quorem_index


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_cases(allow_unbounded=True), st.data())
def test_emitted_python_computes_the_term(
    tmp_path_factory: pytest.TempPathFactory, case: Case, data: st.DataObject
) -> None:
    names = list(case.box)
    try:
        source = emit(case.term, names, "python")
    except (LoweringError, EmitError) as exc:  # a term with no value anywhere has no code
        assert "divides by zero at every point" in str(exc)
        return
    fn = _python_function(tmp_path_factory.mktemp("py"), source)
    for _ in range(10):
        p = data.draw(points(case.box))
        try:
            expected = quorem.evaluate(case.term, p)
        except EvaluationError:
            continue
        assert fn(*(p[n] for n in names)) == expected


# ------------------------------------------------------------------ errors and CLI
def test_every_variable_must_be_a_parameter() -> None:
    t = quorem.parse("x + y", {"x": (0, 3), "y": (0, 3)})
    with pytest.raises(EmitError, match="y are not parameters"):
        emit(t, ["x"])
    with pytest.raises(EmitError, match="given twice"):
        emit(t, ["x", "y", "x"])
    with pytest.raises(EmitError, match="unknown language"):
        emit(t, ["x", "y"], "fortran")
    with pytest.raises(EmitError, match="cannot be a parameter"):
        emit(quorem.parse("int + 1", {"int": (0, 3)}), ["int"])


def test_cli_emit(capsys: pytest.CaptureFixture[str]) -> None:
    from quorem.cli.main import main

    assert main(["emit", "(x*4 + y)//4", "--var", "x=0:1023", "--var", "y=0:3", "--lang", "c"]) == 0
    out = capsys.readouterr().out
    assert "int64_t quorem_index(int64_t x, int64_t y)" in out and "return x;" in out
    assert main(["emit", "x // 3", "--var", "x=-9:9", "--lang", "python", "--name", "f"]) == 0
    assert "def f(x: int) -> int:" in capsys.readouterr().out
    assert main(["emit", "x", "--var", "x=0:3", "--name", "index"]) == 2
    assert "'index' cannot name the c function" in capsys.readouterr().err
    assert main(["emit", "x + switch", "--var", "x=0:3", "--var", "switch=0:1"]) == 2
    assert "variable 'switch' cannot be a parameter in c: it is a C keyword" in (
        capsys.readouterr().err
    )
    assert main(["emit", "x * y", "--var", "x=0:3"]) == 2
    assert "variable y has no --var: add --var y=LO:HI" in capsys.readouterr().err
    assert main(["emit", "x * 8", "--var", "x=0:9223372036854775807"]) == 2
    assert "more than 64 bits" in capsys.readouterr().err
