"""Property tests of simplification, canonical sums, printing and value ranges."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import (
    Case,
    SyntaxCase,
    boxes,
    cases,
    expressions,
    point_values,
    points,
    random_cases,
    semantics,
    syntax_cases,
    tensor_cases,
)
from support import examples

import quorem
from quorem import EvaluationError, Semantics, Term, count_divmod, evaluate
from quorem.printer import to_text

POINTS_PER_CASE = 8
SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def simplify(term: Term) -> Term:
    """quorem.simplify (a divisor that folds to zero is kept, never raised on)."""
    return quorem.simplify(term)


def _value(term: Term, env: dict[str, int]) -> int | None:
    """The value of ``term`` at ``env``, or None where it is undefined (a division by zero)."""
    try:
        return evaluate(term, env)
    except EvaluationError:
        return None


def _subterms(term: Term) -> list[Term]:
    """Every distinct subterm of ``term``, itself included."""
    seen: dict[Term, None] = {}
    stack = [term]
    while stack:
        t = stack.pop()
        if t not in seen:
            seen[t] = None
            stack.extend(t.args)
    return list(seen)


def _in_range(term: Term, value: int) -> bool:
    return (term.vmin is None or term.vmin <= value) and (term.vmax is None or value <= term.vmax)


def _check_equivalent(case: Case, data: st.DataObject) -> None:
    simple = simplify(case.term)
    for _ in range(POINTS_PER_CASE):
        env = data.draw(points(case.box))
        before = _value(case.term, env)
        if before is None:
            continue
        try:
            after = evaluate(simple, env)
        except EvaluationError as exc:
            raise AssertionError(
                f"{case.term} is defined ({before}) at {env} but {simple} is not: {exc}"
            ) from None
        assert after == before, f"{case.term} -> {simple} differs at {env}: {before} != {after}"


@SETTINGS
@given(cases(), st.data())
def test_simplify_preserves_value(case: Case, data: st.DataObject) -> None:
    """simplify(e) is defined and equal to e at every sampled point where e is defined."""
    _check_equivalent(case, data)


@settings(SETTINGS, max_examples=examples(100))
@given(random_cases(allow_unbounded=True), st.data())
def test_simplify_preserves_value_with_unbounded_variables(case: Case, data: st.DataObject) -> None:
    """simplify(e) equals e at sampled points also when some variables are unbounded."""
    _check_equivalent(case, data)


@SETTINGS
@given(tensor_cases(), st.data())
def test_simplify_preserves_tensor_index_value(case: Case, data: st.DataObject) -> None:
    """simplify keeps the value of tiled/reshaped flat index expressions at sampled points."""
    _check_equivalent(case, data)


@SETTINGS
@given(cases())
def test_simplify_never_adds_divisions(case: Case) -> None:
    """count_divmod(simplify(e)) <= count_divmod(e)."""
    assert count_divmod(simplify(case.term)) <= count_divmod(case.term)


@SETTINGS
@given(cases())
def test_simplify_is_idempotent(case: Case) -> None:
    """simplify(simplify(e)) is simplify(e): the result is a fixed point."""
    once = simplify(case.term)
    assert simplify(once) is once


@SETTINGS
@given(cases())
def test_explain_agrees_with_simplify(case: Case) -> None:
    """explain(e).term is simplify(e); its step count matches its trace and per-rule counts."""
    simple = simplify(case.term)
    result = quorem.explain(case.term)
    assert result.term is simple
    assert result.steps == len(result.trace) == sum(result.counts.values())


@SETTINGS
@given(st.data())
def test_sum_is_independent_of_addend_order(data: st.DataObject) -> None:
    """a + b is b + a, and sum_of a shuffled list of addends gives the identical term."""
    box = data.draw(boxes())
    sem = data.draw(semantics())
    addends = data.draw(st.lists(expressions(box, sem, max_depth=2), min_size=2, max_size=6))
    a, b = addends[0], addends[1]
    assert a + b is b + a
    assert simplify(a + b) is simplify(b + a)
    shuffled = data.draw(st.permutations(addends))
    total = quorem.sum_of(addends)
    assert quorem.sum_of(shuffled) is total
    folded = shuffled[0]
    for t in shuffled[1:]:
        folded = folded + t
    assert folded is total
    assert quorem.linear([(t, 1) for t in reversed(addends)]) is total
    assert simplify(quorem.sum_of(shuffled)) is simplify(total)


@SETTINGS
@given(st.data())
def test_parsed_sum_is_independent_of_addend_order(data: st.DataObject) -> None:
    """Parsing the same addends' text in any order gives the identical term."""
    box = data.draw(boxes())
    sem = data.draw(semantics())
    addends = data.draw(st.lists(expressions(box, sem, max_depth=2), min_size=2, max_size=5))
    texts = [f"({to_text(t, sem)})" for t in addends]
    shuffled = data.draw(st.permutations(texts))
    left = quorem.parse(" + ".join(texts), box, sem)
    right = quorem.parse(" + ".join(shuffled), box, sem)
    assert left is right is quorem.sum_of(addends)


@SETTINGS
@given(cases(allow_unbounded=True))
def test_print_parse_round_trip(case: Case) -> None:
    """parse(to_text(t, sem), bounds, sem) is t, for t and simplify(t), under both semantics."""
    for t in (case.term, simplify(case.term)):
        for sem in Semantics:
            text = to_text(t, sem)
            assert quorem.parse(text, case.box, sem) is t, text


@SETTINGS
@given(syntax_cases(), st.data())
def test_parse_matches_python_syntax(case: SyntaxCase, data: st.DataObject) -> None:
    """Text printed by ast.unparse parses to a term with the value of the Python syntax tree."""
    try:
        term = quorem.parse(case.text, case.box, case.semantics)
    except quorem.ParseError as exc:
        # A divisor that folds to the constant 0 while parsing (e.g. "a // (2 - 2)").
        assert "division by zero" in exc.reason, exc
        reject()
    for _ in range(4):
        env = data.draw(points(case.box))
        try:
            expected = case.value(env)
        except ZeroDivisionError:
            continue
        assert evaluate(term, env) == expected, f"{case.text} at {env}"


def _check_ranges(term: Term, env: dict[str, int]) -> None:
    for t in _subterms(term):
        v = _value(t, env)
        if v is not None:
            assert _in_range(t, v), f"{t} = {v} at {env} is outside [{t.vmin}, {t.vmax}]"


@SETTINGS
@given(cases(allow_unbounded=True), st.data())
def test_value_ranges_are_sound(case: Case, data: st.DataObject) -> None:
    """vmin <= value <= vmax for e, simplify(e) and all their subterms at sampled points."""
    simple = simplify(case.term)
    for _ in range(POINTS_PER_CASE):
        env = data.draw(points(case.box))
        _check_ranges(case.term, env)
        _check_ranges(simple, env)


@settings(SETTINGS, max_examples=examples(60))
@given(st.data())
def test_simplify_is_independent_of_construction_order(data: st.DataObject) -> None:
    """Simplifying a sum gives the same term whichever order its addends were built in."""
    case = data.draw(tensor_cases())
    extra = data.draw(expressions(case.box, case.semantics, max_depth=2))
    parts = [case.term, extra, quorem.const(data.draw(st.integers(-5, 5)))]
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    shuffled = parts[:]
    rng.shuffle(shuffled)
    assert simplify(quorem.sum_of(parts)) is simplify(quorem.sum_of(shuffled))


@settings(SETTINGS, max_examples=examples(60))
@given(st.integers(-(2**80), 2**80), point_values(-(2**40), 2**40))
def test_wide_ranges_and_big_constants_round_trip(k: int, x: int) -> None:
    """Huge constants and ±2**40 bounds print, parse back and evaluate exactly."""
    box = {"a": (-(2**40), 2**40)}
    a = quorem.var("a", -(2**40), 2**40)
    t = (a * k + (k + 1)) // 3 % 7 + (a // 2**20) * 2**20
    assert quorem.parse(to_text(t), box) is t
    assert evaluate(simplify(t), {"a": x}) == evaluate(t, {"a": x})


def test_huge_constant_round_trip() -> None:
    """Constants beyond the decimal digit limit print in hex and parse back identically."""
    a = quorem.var("a", 0, 9)
    t = a * (10**5000 + 1) - 10**4500
    assert quorem.parse(to_text(t), {"a": (0, 9)}) is t


@pytest.mark.parametrize("name", ["max", "min", "floordiv", "truncmod", "match", "_x", "x_1"])
def test_unusual_variable_names_round_trip(name: str) -> None:
    """Variables named like functions or soft keywords print and parse back to themselves."""
    t = quorem.var(name, 0, 5) * 3 + 1
    assert quorem.parse(to_text(t), {name: (0, 5)}) is t


@pytest.mark.parametrize("name", ["and", "or", "not", "if", "True", "None", "lambda", "x y"])
def test_names_the_syntax_cannot_read_back_are_refused(name: str) -> None:
    """var() refuses what would print as text that reads back as something else."""
    with pytest.raises(quorem.TermError, match="not an identifier"):
        quorem.var(name, 0, 5)
    with pytest.raises(quorem.ParseError):
        quorem.parse(f"{name} * 2", {})


@pytest.mark.parametrize(
    "text",
    ["a // (i // 8)", "a % (i // 8)", "a // (i % 1)", "a // (a % 4 + (a // 4)*4 - a)"],
)
def test_simplify_divisor_that_folds_to_zero(text: str) -> None:
    """simplify returns a term (never raises) when a divisor simplifies to the constant 0."""
    t = quorem.parse(text, {"a": (0, 10), "i": (0, 7)})
    out = quorem.simplify(t)
    assert isinstance(out, Term)


_XY = {"x": (0, 9), "y": (0, 9)}


@pytest.mark.parametrize("sem", list(Semantics))
@pytest.mark.parametrize("op", ["div", "mod"])
def test_negated_product_prints_with_its_sign(sem: Semantics, op: str) -> None:
    """A sum starting with -(f*g), f a division, prints to text with the same value."""
    x = quorem.var("x", 0, 9)
    y = quorem.var("y", 0, 9)
    build = quorem.div if op == "div" else quorem.mod
    f = build(y, quorem.const(3), sem)
    g = build(x, quorem.const(2), sem)
    t = -(f * g)
    parsed = quorem.parse(to_text(t, sem), _XY, sem)
    env = {"x": 3, "y": 1}
    # Under floor semantics the values differ (0 vs -1 for //, -1 vs 2 for %).
    assert evaluate(parsed, env) == evaluate(t, env)
    assert parsed is t


@pytest.mark.parametrize("sem", list(Semantics))
def test_negated_product_of_sums_round_trips(sem: Semantics) -> None:
    """-((x + 1)*(y + 1)) prints to text that parses back to the identical term."""
    x = quorem.var("x", 0, 9)
    y = quorem.var("y", 0, 9)
    t = -((x + 1) * (y + 1))
    assert quorem.parse(to_text(t, sem), _XY, sem) is t
