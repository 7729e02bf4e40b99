"""One name, one variable: a term holding two variables with one name is refused.

``var("x", 0, 31) - var("x", 0, 7)`` is a term of two variables that prints as ``x - x``,
text for ``0``. Building it is allowed; simplifying or explaining it raises
VariableClashError (a TermError) naming the variable and both bounds.
"""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem import TermError
from quorem import term as term_module
from quorem.errors import VariableClashError
from quorem.term import Term, check_one_name, maximum, var


def test_issue_example_raises_naming_both_bounds() -> None:
    """The issue's term: simplify and explain refuse it, naming x, [0, 31] and [0, 7]."""
    t = quorem.var("x", 0, 31) - quorem.var("x", 0, 7)
    for run in (quorem.simplify, quorem.explain):
        with pytest.raises(TermError) as info:
            run(t)
        assert isinstance(info.value, VariableClashError)
        assert info.value.name == "x"
        assert sorted(info.value.bounds) == [(0, 7), (0, 31)]
        message = str(info.value)
        assert "variable x" in message
        assert "[0, 31]" in message
        assert "[0, 7]" in message


def test_unbounded_sides_are_named() -> None:
    """An unbounded side shows as -inf or inf in the message."""
    t = maximum(var("n_ub"), var("n_ub", 0, None) * 2)
    with pytest.raises(VariableClashError, match=r"\[-inf, inf\]") as info:
        check_one_name(t)
    assert r"[0, inf]" in str(info.value)


def test_deep_clash_is_found() -> None:
    """The two variables may sit anywhere in a shared (DAG) term."""
    y = var("y_deep", 0, 9)
    shared = (y * 3 + 1) // 2
    t = shared
    for i in range(50):
        t = (t + shared) % (i + 7)
    t = t + var("z_deep", 0, 5) * var("y_deep", 0, 8)
    with pytest.raises(VariableClashError, match="y_deep"):
        quorem.simplify(t)


def test_same_name_same_bounds_and_distinct_names_are_fine() -> None:
    """One variable used twice, and two names, simplify as before."""
    x = quorem.var("x_ok", 0, 31)
    assert quorem.simplify(x - quorem.var("x_ok", 0, 31)) is quorem.const(0)
    u = quorem.var("u_ok", 0, 7)
    assert str(quorem.simplify(x + u - u)) == "x_ok"


def test_variants_in_separate_terms_are_fine() -> None:
    """Two live variables with one name in *different* terms: each term simplifies."""
    wide = quorem.var("s_sep", 0, 31) * 2
    narrow = quorem.var("s_sep", 0, 7) + 1
    assert str(quorem.simplify(wide % 64)) == "s_sep*2"
    assert str(quorem.simplify(narrow // 16)) == "0"
    with pytest.raises(VariableClashError):
        quorem.simplify(wide + narrow)


def test_a_dead_variant_is_forgotten() -> None:
    """Once one of the two variables is gone, terms over the other are not refused, and
    the check is back to its one test (no name is clashing)."""
    keep = quorem.var("d_gone", 0, 31)
    other = quorem.var("d_gone", 0, 7)
    assert "d_gone" in term_module._CLASHING
    del other
    gc.collect()
    check_one_name(keep + 1)
    assert "d_gone" not in term_module._CLASHING
    assert str(quorem.simplify((keep * 4) // 4)) == "d_gone"


def test_variable_rebuilt_after_death_is_counted_once() -> None:
    """A variable dying and being built again leaves one live count, not two or zero."""
    name = "r_again"
    for _ in range(5):
        v = var(name, 1, 2)
        del v
        gc.collect()
    v = var(name, 1, 2)
    check_one_name(v)  # (settles the reported deaths)
    with term_module._NAMES_LOCK:
        term_module._settle()
        assert term_module._LIVE[name] == {(name, 1, 2): 1}
    assert v is var(name, 1, 2)


_BOUNDS = st.tuples(st.integers(-5, 5), st.integers(0, 6)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=examples(60), deadline=None)
@given(
    first=_BOUNDS,
    second=_BOUNDS,
    name=st.sampled_from(["h_a", "h_b"]),
    other=st.sampled_from(["h_a", "h_b", "h_c"]),
    shape=st.integers(0, 3),
)
def test_refused_exactly_when_one_name_has_two_bounds(
    first: tuple[int, int], second: tuple[int, int], name: str, other: str, shape: int
) -> None:
    """A term over ``name`` with ``first`` and ``other`` with ``second``: refused, naming
    both bounds, exactly when the names are equal and the bounds differ; otherwise it
    simplifies to a term with the same values."""
    a, b = var(name, *first), var(other, *second)
    t: Term
    if shape == 0:
        t = a - b
    elif shape == 1:
        t = (a * 3 + b) // 2
    elif shape == 2:
        t = maximum(a, b + 1) % 4
    else:
        t = a * b - b
    if name == other and first != second:
        with pytest.raises(VariableClashError) as info:
            quorem.simplify(t)
        assert info.value.name == name
        assert sorted(info.value.bounds) == sorted([first, second])
        assert f"[{first[0]}, {first[1]}]" in str(info.value)
        assert f"[{second[0]}, {second[1]}]" in str(info.value)
    else:
        out = quorem.simplify(t)
        env = {name: first[0], other: second[1]} if name != other else {name: first[0]}
        assert quorem.evaluate(out, env) == quorem.evaluate(t, env)


def test_emit_refuses_two_variables_with_one_name() -> None:
    t = quorem.var("x", 0, 31) - quorem.var("x", 0, 7)
    with pytest.raises(quorem.VariableClashError, match=r"\[0, 7\] and \[0, 31\]"):
        quorem.emit(t, lang="c")
