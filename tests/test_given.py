"""Simplification under conditions (issue 15, class 5): ``given=``, ``--given``, batch.

The result equals the input at every point of the box where every condition holds;
the variables' ranges are narrowed by the conditions and never widened.
"""

from __future__ import annotations

import io
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem.cli.main import main

BOX = {"x": (0, 1000), "y": (0, 100)}


def under(text: str, *conditions: str, bounds: dict[str, tuple[int, int]] = BOX) -> str:
    term = quorem.parse(text, bounds)
    conds = [quorem.parse(c, bounds) for c in conditions]
    return quorem.to_text(quorem.simplify(term, given=conds))


@pytest.mark.parametrize(
    ("text", "conditions", "want"),
    [
        ("x // 4 + y // 8", ["x < 4", "y*2 < 15"], "0"),
        ("x % 8", ["x < 8"], "x"),
        ("(x*4 + y) % 16", ["x < 2", "y < 4"], "x*4 + y"),
        ("(x*4 + y) // 30", ["x*4 + y < 30"], "0"),
        ("x // 8", ["x // 8 == 3"], "3"),
        ("x % 8 + y", ["24 <= x", "x < 28"], "x + y - 24"),
        ("x % 8", [], "x%8"),
        ("max(x, 10)", ["x < 5"], "10"),
    ],
)
def test_simplified_under_conditions(text: str, conditions: list[str], want: str) -> None:
    assert quorem.parse(under(text, *conditions), BOX) is quorem.parse(want, BOX)


def test_explain_says_under_which_conditions() -> None:
    cond = quorem.parse("x < 8", BOX)
    result = quorem.explain(quorem.parse("x % 8", BOX), given=[cond])
    assert result.given == (cond,)
    assert not result.given_never_hold
    assert quorem.to_text(result.term) == "x"
    never = quorem.explain(quorem.parse("x % 8", BOX), given=[cond, quorem.parse("9 < x", BOX)])
    assert never.given_never_hold
    assert quorem.to_text(never.term) == "x%8"


def test_ranges_are_never_widened() -> None:
    # A condition weaker than the bounds changes nothing.
    assert under("x % 2000", "x < 5000") == "x"
    assert under("x % 8", "x < 5000") == "x%8"


def test_one_name_one_variable_across_conditions() -> None:
    term = quorem.parse("x % 8", {"x": (0, 100)})
    cond = quorem.parse("x < 8", {"x": (0, 50)})
    with pytest.raises(quorem.VariableClashError):
        quorem.simplify(term, given=[cond])


def test_no_new_overflow_from_narrowed_ranges() -> None:
    # Under x < 2 the product fits easily; with x's own range it would not, so the
    # result must not compute it where the input did not.
    b = {"x": (0, 2**62)}
    term = quorem.parse("x % 4", b)
    out = quorem.simplify(term, given=[quorem.parse("x < 2", b)])
    assert out.fits64


def test_cli_given(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simplify", "x % 8", "--var", "x=0:100", "--given", "x < 8"]) == 0
    assert capsys.readouterr().out == "x\n"
    assert main(["simplify", "x % 8", "--var", "x=0:100", "--given", "x <"]) == 2
    assert "unexpected end" in capsys.readouterr().err
    argv = ["simplify", "x % 8", "--var", "x=0:100", "--given", "x < 3", "--given", "5 < x"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "can never hold together" in captured.err


def test_batch_given(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        {"id": "a", "expr": "x % 8", "vars": {"x": [0, 100]}, "given": ["x < 8"]},
        {"id": "b", "expr": "x % 8", "vars": {"x": [0, 100]}, "given": "x < 8"},
        {"id": "c", "expr": "x % 8", "vars": {"x": [0, 100]}, "given": ["x <"]},
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(json.dumps(x) for x in lines) + "\n"))
    assert main(["simplify", "--batch", "-"]) == 1
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert out[0]["output"] == "x"
    assert "given must be a list" in out[1]["error"]
    assert "given[0] at 1:4" in out[2]["error"]


SMALL = {"x": (-12, 20), "y": (-4, 9)}
POINTS = [
    dict(zip(("x", "y"), v, strict=True)) for v in itertools.product(range(-12, 21), range(-4, 10))
]


@st.composite
def linear_condition(draw: st.DrawFn) -> str:
    a, b = draw(st.integers(-4, 4)), draw(st.integers(-4, 4))
    op = draw(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]))
    d = draw(st.sampled_from([2, 3, 4, 8]))
    left = draw(st.sampled_from([f"{a}*x + {b}*y", f"x // {d}", f"(x + {b}*y) // {d}"]))
    return f"{left} {op} {draw(st.integers(-10, 10))}"


@st.composite
def index_term(draw: st.DrawFn) -> str:
    a, b, c = draw(st.integers(-3, 5)), draw(st.integers(-3, 5)), draw(st.integers(-8, 8))
    d, e = draw(st.sampled_from([2, 3, 4, 8, -3])), draw(st.sampled_from([2, 4, 5, 16]))
    return draw(
        st.sampled_from(
            [
                f"({a}*x + {b}*y + {c}) // {d}",
                f"({a}*x + {b}*y + {c}) % {e}",
                f"(x % {e}) * {a} + (x // {e}) * {b}",
                f"max(x // {d}, y) - min(x, {c})",
                f"(x*{e} + y) // {e} + (y % {e} < {c})",
            ]
        )
    )


@settings(max_examples=examples(300), deadline=None)
@given(
    index_term(),
    st.lists(linear_condition(), min_size=1, max_size=3),
    st.sampled_from(["floor", "trunc"]),
)
def test_equal_wherever_the_conditions_hold(
    text: str, conditions: list[str], semantics: str
) -> None:
    term = quorem.parse(text, SMALL, semantics)
    conds = [quorem.parse(c, SMALL, semantics) for c in conditions]
    out = quorem.simplify(term, given=conds)
    for point in POINTS:
        if all(quorem.evaluate(c, point) for c in conds):
            want = quorem.evaluate(term, point)
            assert quorem.evaluate(out, point) == want, (text, conditions, point)


def test_map_results_simplified_under_the_constraints() -> None:
    """The indexing-map simplifier narrows variables by its linear constraints too."""
    from quorem.indexing.mapsyntax import parse_map, print_map
    from quorem.indexing.simplify import simplify_map
    from quorem.verify.maps import maps_equal

    m = parse_map(
        "(d0, d1) -> (d0 floordiv 8, d0 mod 8), "
        "domain: d0 in [0, 100], d1 in [0, 3], d0*4 + d1 in [0, 29]"
    )
    out = simplify_map(m)
    assert print_map(out).startswith("(d0, d1) -> (0, d0)")
    assert maps_equal(m, out)


def test_defined_wherever_the_input_is_even_outside_the_conditions() -> None:
    """A divisor pinned to 0 by a condition neither raises nor leaks an undefined term."""
    b = {"x": (0, 10), "y": (-3, 3)}
    term = quorem.parse("x % y", b)
    assert quorem.simplify(term, given=[quorem.parse("y == 0", b)]) is term
    # Fuzz finding: under `not A` the clause's divisor became 0 % -3 = 0 everywhere.
    b = {"y": (-(2**63), 2**63 - 1)}
    text = "(((y*3 + 1)//2)*4 + ((y*3 + 1)%2)*2 or (y*2)%(y%-3))%5"
    term = quorem.parse(text, b)
    out = quorem.simplify(term)
    for y in (-(2**63), -7, -1, 1, 5, 2**63 - 1):
        assert quorem.evaluate(out, {"y": y}) == quorem.evaluate(term, {"y": y})


def test_one_value_variables_are_their_value() -> None:
    """A variable whose range is one value (tinygrad's size-1 ranges) is that value."""
    b = {"x": (4, 4), "y": (0, 9)}
    assert quorem.to_text(quorem.simplify(quorem.parse("x*3 + y + x // 2", b))) == "y + 14"
    # Dividing by a variable that can only be 0 is undefined everywhere: kept as written.
    term = quorem.parse("y // x", {"x": (0, 0), "y": (0, 9)})
    assert quorem.simplify(term) is term


def test_pinning_one_value_variables_adds_no_overflow() -> None:
    """CI finding: y*(x + y) fits int64 on its box, but with y's one value put in, the
    canonical form distributes it to x*c + c*c, beyond int64: the term stays as written."""
    c = 6_917_529_027_641_081_856
    b = {"x": (-c - 1, -c), "y": (c, c)}
    term = quorem.parse("y*(x + y) + truncmod(279912, -16)", b, "trunc")
    assert term.fits64
    assert quorem.simplify(term).fits64
