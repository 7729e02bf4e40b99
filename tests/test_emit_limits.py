"""Emitted C at the int32 and int64 limits, names, and error messages (issue 14).

The compiled tests run the code under UBSan (any signed overflow or out-of-range shift
stops the program) at every corner of the variables' box and at interior points, and
compare each value with quorem's evaluation.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support import examples
from test_emit import _compiled_cases, _run_c, needs_cc

import quorem
from quorem.codegen import (
    DEFAULT_NAME,
    EmitError,
    LoweringError,
    Width,
    WidthError,
    emit,
    node_widths,
)
from quorem.codegen.names import name_problem
from quorem.ops import Op, Semantics
from quorem.rewrite import rewrite_term
from quorem.ruleset import default_ruleset
from quorem.term import (
    Term,
    compare,
    const,
    div,
    linear,
    maximum,
    minimum,
    mod,
    mul,
    var,
)

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
Box = dict[str, tuple[int, int]]


def _corners(box: Box) -> list[dict[str, int]]:
    names = list(box)
    return [dict(zip(names, c, strict=True)) for c in itertools.product(*box.values())]


def _check_compiled(tmp: Path, text: str, box: Box, sem: str = "floor") -> str:
    term = quorem.parse(text, box, sem)
    _compiled_cases(tmp, [(term, box, _corners(box))], "c")
    return emit(term, list(box))


# ------------------------------------------------------------------ issue 14 regressions
@needs_cc
def test_a_product_printed_is_a_product_checked(tmp_path: Path) -> None:
    # z*2 is 2**31 at z = 2**30 although x - 2*z, -2**31, fits: the code must not
    # compute z*2 in 32 bits.
    code = _check_compiled(tmp_path, "x - 2*z", {"x": (0, 1), "z": (0, 2**30)})
    assert "(int32_t)z * 2" not in code
    code = _check_compiled(tmp_path, "x - 2*z", {"x": (0, 1), "z": (0, 2**62)})
    assert "z * INT64_C(2)" not in code
    _check_compiled(tmp_path, "-2*z - x", {"x": (-1, 0), "z": (0, 2**62)})


@needs_cc
def test_a_negation_printed_is_a_negation_checked(tmp_path: Path) -> None:
    code = _check_compiled(tmp_path, "-x", {"x": (I32_MIN, 0)})
    assert "(int32_t)" not in code  # -x is 2**31 at x = INT32_MIN
    with pytest.raises(WidthError, match="needs more than 64 bits: its code computes -x"):
        emit(quorem.parse("-x", {"x": (I64_MIN, 0)}), ["x"])


@needs_cc
@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("x - 9223372036854775808", {"x": (0, 1)}),
        ("x - 9223372036854775807 - 1", {"x": (0, 5)}),
        ("x - 2147483648", {"x": (0, 1)}),
        ("x*(-9223372036854775808)", {"x": (0, 1)}),
        ("x*(-2147483648)", {"x": (0, 1)}),
        ("x + 9223372036854775807", {"x": (-1, 0)}),
        ("(x - 9223372036854775808) // 3", {"x": (0, 7)}),
    ],
)
def test_every_literal_is_written_in_range(tmp_path: Path, text: str, box: Box) -> None:
    # -Werror: 9223372036854775808 would be "so large that it is unsigned".
    code = _check_compiled(tmp_path, text, box)
    assert "9223372036854775808" not in code and "2147483648" not in code


@needs_cc
@pytest.mark.parametrize("sem", ["floor", "trunc"])
def test_sign_correction_at_the_limits(tmp_path: Path, sem: str) -> None:
    for text, box in [
        ("x // y + x % y", {"x": (I32_MIN, I32_MAX), "y": (-1, 1)}),
        ("x // y", {"x": (I64_MIN + 1, I64_MAX), "y": (-3, -1)}),
        ("x % y", {"x": (I64_MIN, I64_MAX), "y": (2, 7)}),
        ("x // -7 + x % 16", {"x": (I64_MIN, I64_MAX)}),
    ]:
        _check_compiled(tmp_path, text, box, sem)


@needs_cc
def test_no_shift_of_an_unbounded_parameter(tmp_path: Path) -> None:
    t = quorem.parse("x // 8 + x % 4", {"x": (None, None)}, "trunc")
    code = emit(t, ["x"])
    assert ">>" not in code and "&" not in code
    pts = [{"x": v} for v in (I64_MIN, I64_MIN + 1, -9, -1, 0, 7, I64_MAX)]
    _compiled_cases(tmp_path, [(t, {"x": (I64_MIN, I64_MAX)}, pts)], "c")


def test_int64_min_divided_by_minus_one_is_refused() -> None:
    t = quorem.parse("x % y", {"x": (I64_MIN, 0), "y": (-1, -1)}, "trunc")
    with pytest.raises(WidthError, match="quotient C computes"):
        node_widths(t)


def test_a_divisor_zero_everywhere_is_named_as_such() -> None:
    for sem in ("floor", "trunc"):
        t = quorem.parse("x % y + 1", {"x": (0, 5), "y": (0, 0)}, sem)
        for lang in ("c", "python", "cuda"):
            with pytest.raises(EmitError, match="divides by zero at every point") as info:
                emit(t, ["x", "y"], lang)
            assert "64 bits" not in str(info.value) and "y is always 0" in str(info.value)
    with pytest.raises(WidthError, match=r"divides by zero at every point \(y is always 0\)"):
        node_widths(quorem.parse("x % y", {"x": (0, 5), "y": (0, 0)}, "trunc"))


@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x + y", {"x": (0, 2**62)}),
        ("(x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x) // (y + 3)", {"x": (-(2**60), 2**60)}),
        ("x*" + "*".join(f"(x + {i})" for i in range(60)), {"x": (0, 10**9)}),
    ],
)
def test_width_errors_are_short(text: str, box: dict[str, tuple[int | None, int | None]]) -> None:
    box = {**box, "y": (0, 9)}
    with pytest.raises(WidthError) as info:
        emit(quorem.parse(text, box), list(box))
    message = str(info.value)
    assert "needs more than 64 bits" in message
    assert len(message) < 500, message


@pytest.mark.parametrize(
    ("text", "box", "why"),
    [
        ("a % -9223372036854775808", {"a": (-5, 5)}, "no trunc division form that stays"),
        (
            "((c < 2147483645) % -2)*9223372036854775807 + 64",
            {"c": (2**31 - 6, 2**31 - 1)},
            "makes the term around it need more than 64 bits",
        ),
    ],
)
def test_lowering_says_why_a_division_is_left(
    text: str, box: dict[str, tuple[int | None, int | None]], why: str
) -> None:
    with pytest.raises(LoweringError, match=re.escape(why)):
        emit(quorem.parse(text, box), list(box))


def test_a_sum_without_overflow_stays_int32() -> None:
    # x + z*-2 computes only int32 values; the checked form is the printed form.
    t = quorem.parse("x - 2*z", {"x": (0, 1), "z": (0, 2**30)})
    assert node_widths(t)[t] is Width.I32
    assert "(int32_t)z * -2" in emit(t, ["x", "z"])
    u = quorem.parse("x - 2*z", {"x": (0, 1), "z": (0, 2**30 + 1)})
    assert node_widths(u)[u] is Width.I64


# ------------------------------------------------------------------ random terms at the limits
_EDGES = [
    (0, 1),
    (-3, 3),
    (0, 2**30),
    (I32_MIN, I32_MIN + 5),
    (I32_MAX - 5, I32_MAX),
    (I32_MIN, I32_MAX),
    (I32_MAX - 2, I32_MAX + 3),
    (I32_MIN - 3, I32_MIN + 2),
    (-(2**62), 2**62),
    (I64_MIN, I64_MIN + 4),
    (I64_MAX - 4, I64_MAX),
    (I64_MIN, I64_MAX),
    (0, 2**62),
]
_BIG_CONSTANTS = [
    2**31 - 1, 2**31, 2**31 + 1, 2**30, 2**32, 2**62, 2**63 - 1, 2**63, 2**31 - 3, 2**63 - 2,
]  # fmt: skip


def _constants() -> st.SearchStrategy[int]:
    big = st.sampled_from(_BIG_CONSTANTS)
    return st.one_of(st.integers(-9, 9), big, big.map(lambda v: -v), st.sampled_from([16, 64]))


def _divisors() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([1, -1, 2, 3, -3, 8, 7, 2**30, 2**31, -(2**31)]), _constants())


@st.composite
def _limit_terms(draw: st.DrawFn, variables: list[Term], depth: int, sem: Semantics) -> Term:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 3)) == 0:
            return const(draw(_constants()))
        return draw(st.sampled_from(variables))

    def sub() -> Term:
        return draw(_limit_terms(variables, depth - 1, sem))

    kind = draw(st.sampled_from(["lin", "lin", "mul", "div", "mod", "tdiv", "max", "min", "cmp"]))
    if kind == "lin":
        pairs = [(sub(), draw(_constants())) for _ in range(draw(st.integers(1, 3)))]
        return linear(pairs, draw(_constants()))
    if kind == "mul":
        return mul(draw(st.sampled_from(variables)), sub())
    if kind in ("div", "mod"):
        d = draw(_divisors())
        return (div if kind == "div" else mod)(sub(), const(d if d else 1), sem)
    if kind == "tdiv":
        divisor = sub()
        divisor = const(1) if divisor.is_const and divisor.value == 0 else divisor
        return (div if draw(st.booleans()) else mod)(sub(), divisor, sem)
    if kind in ("max", "min"):
        return (maximum if kind == "max" else minimum)(sub(), sub())
    return compare(draw(st.sampled_from([Op.LT, Op.LE, Op.EQ, Op.NE])), sub(), sub())


@st.composite
def _limit_cases(draw: st.DrawFn) -> tuple[Term, Box, list[dict[str, int]]]:
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    box = {n: draw(st.sampled_from(_EDGES)) for n in names}
    sem = draw(st.sampled_from(list(Semantics)))
    term = draw(_limit_terms([var(n, *box[n]) for n in names], 3, sem))
    if draw(st.booleans()):
        term = rewrite_term(term, default_ruleset())
    interior = [{n: draw(st.integers(lo, hi)) for n, (lo, hi) in box.items()} for _ in range(4)]
    return term, box, _corners(box) + interior


@needs_cc
# One example compiles 40 functions in one C file: shrinking would recompile hundreds of
# times, so a failure is reported as drawn (UBSan's message names the function).
@pytest.mark.slow
@settings(
    max_examples=examples(5),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(st.lists(_limit_cases(), min_size=40, max_size=40))
def test_emitted_c_at_every_corner_of_boxes_at_the_limits(
    tmp_path_factory: pytest.TempPathFactory, cases: list[tuple[Term, Box, list[dict[str, int]]]]
) -> None:
    kept = []
    for term, box, pts in cases:
        try:
            emit(term, list(box))
        except (WidthError, EmitError, LoweringError) as exc:
            assert "64 bits" in str(exc) or "at every point" in str(exc), (exc, box, term)
            continue
        kept.append((term, box, pts))
    assert len(kept) >= 8, "the test must run code"
    _compiled_cases(tmp_path_factory.mktemp("limits"), kept, "c")


# ------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("name", "lang", "why"),
    [
        ("pass", "python", "Python keyword"),
        ("yield", "python", "Python keyword"),
        ("max", "python", "calls"),
        ("switch", "c", "C keyword"),
        ("void", "cuda", "C keyword"),
        ("class", "c", "C++ keyword"),
        ("INT64_MAX", "c", "<stdint.h>"),
        ("INT64_C", "c", "<stdint.h>"),
        ("int32_t", "cuda", "<stdint.h>"),
        ("UINT8_WIDTH", "c", "<stdint.h>"),
        ("__device__", "cuda", "reserved"),
        ("_Bool", "c", "reserved"),
        ("a__b", "c", "reserved"),
        ("unix", "c", "predefines"),
        ("threadIdx", "cuda", "CUDA built-in"),
        ("t_0", "python", "local"),
        ("t_12", "c", "local"),
        ("x-y", "c", "not an identifier"),
        ("\u00e9", "python", "not an identifier"),
    ],
)
def test_unusable_parameter_names_are_refused(name: str, lang: str, why: str) -> None:
    # As an unused parameter: the term layer refuses some of these as variables.
    with pytest.raises(EmitError) as info:
        emit(var("x", 0, 3) + 1, ["x", name], lang)
    message = str(info.value)
    assert f"variable {name!r} cannot be a parameter in {lang}" in message and why in message


def test_names_are_judged_per_target() -> None:
    assert name_problem("pass", "c") is None and name_problem("switch", "python") is None
    assert name_problem("threadIdx", "c") is None and name_problem("index", "c") is None
    assert name_problem("t_x", "c") is None and name_problem("_x", "c") is None


@pytest.mark.parametrize(
    ("name", "lang", "why"),
    [
        ("index", "c", "built-in"),
        ("abs", "cuda", "built-in"),
        ("main", "c", "entry point"),
        ("_f", "c", "file scope"),
        ("def", "python", "Python keyword"),
        ("x", "c", "parameter"),
        ("", "c", "not an identifier"),
        ("f(", "python", "not an identifier"),
    ],
)
def test_unusable_function_names_are_refused(name: str, lang: str, why: str) -> None:
    t = quorem.parse("x + 1", {"x": (0, 3)})
    with pytest.raises(EmitError) as info:
        emit(t, ["x"], lang, name)
    assert f"{name!r} cannot name the {lang} function" in str(info.value)
    assert why in str(info.value)


@needs_cc
def test_the_default_name_compiles_without_warnings(tmp_path: Path) -> None:
    # -Wall -Werror: a function named index conflicted with the built-in index().
    assert DEFAULT_NAME == "quorem_index"
    t = quorem.parse("x // 4 + y", {"x": (-9, 9), "y": (0, 3)})
    code = emit(t, ["x", "y"])
    assert re.search(r"^int64_t quorem_index\(int64_t x, int64_t y\) \{$", code, re.M)
    main = 'int main(void) { printf("%d\\n", (int)quorem_index(-9, 3)); return 0; }\n'
    program = code + "#include <stdio.h>\n" + main
    assert _run_c(tmp_path, program) == [quorem.evaluate(t, {"x": -9, "y": 3})]
    assert emit(t, ["x", "y"], "python", "tile").startswith("def tile(x: int, y: int) -> int:")
    assert quorem.emit(t, ["x", "y"], "cuda", name="tile").count("__device__ int64_t tile(") == 1


# ------------------------------------------------------------------ deep terms
@pytest.mark.slow
@needs_cc
def test_deep_terms_get_locals_not_a_recursion_error(tmp_path: Path) -> None:
    x = var("x", -(10**6), 10**6)
    t = x
    for i in range(1500):
        t = div(t + x + i % 7, const(2 + i % 3), Semantics.FLOOR)
    code = emit(t, ["x"])
    assert code.count("    const int32_t t_") >= 1500 // 25
    assert max(len(line) for line in code.splitlines()) < 2000
    py = emit(t, ["x"], "python")
    assert py.count("    t_") >= 1500 // 25
    box = {"x": (-(10**6), 10**6)}
    _compiled_cases(tmp_path, [(t, box, [*_corners(box), {"x": 0}, {"x": -7}])], "c")
