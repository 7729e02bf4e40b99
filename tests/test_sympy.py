"""SymPy interoperability: to_sympy and from_sympy keep every value."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Case, points, random_cases
from support import examples

import quorem
from quorem.errors import EvaluationError
from quorem.ops import DIVISION_OPS, Op
from quorem.sympy_interop import SympyError
from quorem.walk import nodes

sp = pytest.importorskip("sympy")


def _divisors(t: quorem.Term) -> list[quorem.Term]:
    return [u.args[1] for u in nodes(t) if u.op in DIVISION_OPS or u.op is Op.CEILDIV]


def _at(expr: Any, point: dict[str, int]) -> int:
    """The value of a SymPy expression with each symbol set by name."""
    # xreplace puts every number in at once (subs, one symbol at a time, can let SymPy
    # rewrite partly numeric Mods wrongly on the way).
    value = expr.xreplace({s: sp.Integer(point[s.name]) for s in expr.free_symbols})
    assert value.is_Integer, value
    return int(value)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_cases(max_depth=3, term_divisors=False), st.data())
def test_to_sympy_and_back_keep_every_value(case: Case, data: st.DataObject) -> None:
    try:
        expr = quorem.to_sympy(case.term)
    except SympyError as exc:
        # Only a division by something that can be 0 (a comparison, x < x...) may have
        # no SymPy form: SymPy folds such a divisor and divides by its 0 branch.
        assert "division by" in str(exc)
        assert any(
            d.vmin is not None and d.vmin <= 0 <= (d.vmax or 0) for d in _divisors(case.term)
        )
        return
    back = quorem.from_sympy(expr, case.box)
    for _ in range(4):
        p = data.draw(points(case.box))
        try:
            expected = quorem.evaluate(case.term, p)
        except EvaluationError:
            continue  # division by zero at this point
        assert _at(expr, p) == expected
        assert quorem.evaluate(back, p) == expected


def test_variables_carry_what_sympy_can_hold_of_their_bounds() -> None:
    t = quorem.parse("a + b + c", {"a": (0, 9), "b": (1, 9), "c": (-1, 9)})
    syms = {s.name: s for s in quorem.to_sympy(t).free_symbols}
    assert syms["a"].is_nonnegative and not syms["a"].is_positive
    assert syms["b"].is_positive
    assert syms["c"].is_integer and syms["c"].is_nonnegative is None


def test_from_sympy_reads_floor_ceiling_mod_max_min_and_powers() -> None:
    x, y = sp.symbols("x y", integer=True)
    e = (
        sp.floor((x + 3) / 4)
        + sp.Mod(x, 4)
        + sp.ceiling(x / 3)
        + sp.Max(x, y, 2)
        + x**2
        + sp.Abs(x - 2 * y)
    )
    box = {"x": (-10, 10), "y": (-3, 3)}
    t = quorem.from_sympy(e, box)
    for xv in range(-10, 11):
        for yv in (-3, 0, 3):
            assert quorem.evaluate(t, {"x": xv, "y": yv}) == _at(e, {"x": xv, "y": yv})
    assert quorem.simplify(
        quorem.from_sympy(sp.floor(x / 4) * 4 + sp.Mod(x, 4), box)
    ) is quorem.var("x", -10, 10)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: sp.Symbol("z") + 1, "not declared integer"),
        (lambda: sp.Symbol("x", integer=True) / 2, "Half"),
        (lambda: sp.sin(sp.Symbol("x", integer=True)), "sin"),
        (lambda: sp.Symbol("x", integer=True) ** 100, "powers by an integer"),
        (
            lambda: sp.floor(sp.Symbol("x", integer=True) / sp.Integer(0)),
            "ComplexInfinity",
        ),
    ],
)
def test_what_from_sympy_cannot_read_is_named(make: Any, reason: str) -> None:
    with pytest.raises(SympyError, match=reason):
        quorem.from_sympy(make())


@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("ceildiv(x, 4)", {"x": (-20, 20)}),
        ("ceildiv(x, y)", {"x": (-20, 20), "y": (1, 6)}),
        ("ceildiv(x*3 + 1, y)", {"x": (-20, 20), "y": (-6, -1)}),
        ("ceildiv(eucliddiv(x, y), 3)", {"x": (-20, 20), "y": (-6, -1)}),
    ],
)
def test_ceildiv_is_a_sympy_ceiling_and_reads_back_as_ceildiv(
    text: str, box: dict[str, tuple[int, int]]
) -> None:
    t = quorem.parse(text, box)
    e = quorem.to_sympy(t)
    assert isinstance(e, sp.ceiling)  # not -floor(-x/4)
    back = quorem.from_sympy(e, box)
    assert back.op is Op.CEILDIV
    xs = range(box["x"][0], box["x"][1] + 1)
    ys = range(box["y"][0], box["y"][1] + 1) if "y" in box else [0]
    for x in xs:
        for y in ys:
            p = {"x": x, "y": y} if "y" in box else {"x": x}
            assert _at(e, p) == quorem.evaluate(t, p) == quorem.evaluate(back, p)
    if text == "ceildiv(x, 4)":
        assert back is t  # the very term


def test_from_sympy_reads_a_ceiling_as_ceildiv() -> None:
    x = sp.Symbol("x", integer=True)
    t = quorem.from_sympy(sp.ceiling((x + 1) / 3), {"x": (-9, 9)})
    assert t is quorem.parse("ceildiv(x + 1, 3)", {"x": (-9, 9)})


@pytest.mark.parametrize("text", ["x // y + x % y", "x // -3 - x % 5", "(x % y) // 2"])
def test_euclidean_division_goes_to_sympy_through_the_lowering_rules(text: str) -> None:
    box = {"x": (-30, 30), "y": (-7, 7)}
    t = quorem.parse(text, box, "euclid")
    e = quorem.to_sympy(t)
    back = quorem.from_sympy(e, box)
    for x in range(-30, 31):
        for y in [*range(-7, 0), *range(1, 8)]:
            p = {"x": x, "y": y}
            assert _at(e, p) == quorem.evaluate(t, p) == quorem.evaluate(back, p)


def test_sympy_does_not_rewrite_the_divisions_it_is_given() -> None:
    # SymPy 1.14 evaluates Mod(2*a, -6*a) to 2*a, which is wrong for every a != 0.
    t = quorem.parse("(a*2) % (a*-6)", {"a": (1, 9)})
    e = quorem.to_sympy(t)
    for a in range(1, 10):
        assert _at(e, {"a": a}) == quorem.evaluate(t, {"a": a}) == -4 * a


def test_comparisons_nested_in_comparisons_build_and_keep_their_values() -> None:
    # SymPy folds a Piecewise nested in a condition over every combination of the inner
    # conditions: as Piecewise, four levels of this ran for minutes, and the first case
    # (lowering's sign corrections nest comparisons) raised KeyError inside SymPy 1.14.
    box = {"a": (-273, -189)}
    t = quorem.parse("truncmod(min(a, a) - truncmod(a*2 - 2, 2), 51)", box)
    e = quorem.to_sympy(t)
    for a in range(-273, -188):
        assert _at(e, {"a": a}) == quorem.evaluate(t, {"a": a})
    s = "a"
    for i in range(5):
        s = f"({s} < b{i}) + ({s} <= c{i}) - ({s} == b{i}) + ({s} != c{i})"
    box = {"a": (0, 9)} | {f"b{i}": (0, 3) for i in range(5)} | {f"c{i}": (-2, 5) for i in range(5)}
    t = quorem.parse(s, box)
    e = quorem.to_sympy(t)
    back = quorem.from_sympy(e, box)
    for p in ({n: lo for n, (lo, _) in box.items()}, {n: hi for n, (_, hi) in box.items()}):
        assert _at(e, p) == quorem.evaluate(t, p) == quorem.evaluate(back, p)


@pytest.mark.slow
def test_a_term_too_large_as_a_tree_is_refused_with_a_short_message() -> None:
    from quorem.sympy_interop import MAX_TREE_NODES

    s = "a"
    for i in range(16):  # each level uses the one below twice: 2**16 leaves
        s = f"max({s}, b{i}) - min({s} // 3, {i + 2})"
    t = quorem.parse(s, {"a": (0, 9)} | {f"b{i}": (0, 3) for i in range(16)})
    with pytest.raises(SympyError, match=f"more than the {MAX_TREE_NODES}") as info:
        quorem.to_sympy(t)
    assert len(str(info.value)) < 400
