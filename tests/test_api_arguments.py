"""The public API refuses arguments of the wrong kind with a message saying what to do.

Text where a term is expected is a TypeError showing the ``quorem.parse(...)`` call to
make; bounds are taken in every form the command line's ``--var`` takes (``"LO:HI"``,
open ends), and malformed ones are a BoundsError naming the variable.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bounds, expressions

import quorem
from quorem.cli.expressions import parse_var
from quorem.ops import Op, Semantics
from quorem.walk import free_names

X = quorem.parse("x", {"x": (0, 9)})

# Each public function taking a term: a call with ``bad`` in a term's place. Every
# function of quorem.__all__ with a parameter annotated Term must be here.
TERM_CALLS: dict[str, Callable[[Any], object]] = {
    "simplify": quorem.simplify,
    "explain": quorem.explain,
    "emit": quorem.emit,
    "evaluate": lambda bad: quorem.evaluate(bad, {"x": 1}),
    "count_divmod": quorem.count_divmod,
    "to_text": quorem.to_text,
    "to_sympy": quorem.to_sympy,
    "div": lambda bad: quorem.div(X, bad, Semantics.FLOOR),
    "mod": lambda bad: quorem.mod(bad, X, Semantics.FLOOR),
    "ceildiv": lambda bad: quorem.ceildiv(bad, X),
    "maximum": lambda bad: quorem.maximum(X, bad),
    "minimum": lambda bad: quorem.minimum(bad, X),
    "compare": lambda bad: quorem.compare(Op.LT, bad, X),
    "logical_and": lambda bad: quorem.logical_and(bad, X),
    "logical_or": lambda bad: quorem.logical_or(X, bad),
    "logical_not": quorem.logical_not,
    "linear": lambda bad: quorem.linear([(X, 2), (bad, 1)]),
    "sum_of": lambda bad: quorem.sum_of([X, bad]),
    "conjunction": lambda bad: quorem.conjunction([X, bad]),
    "disjunction": lambda bad: quorem.disjunction([bad]),
}


def _takes_a_term(fn: object) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return any(re.search(r"\bTerm\b", str(p.annotation)) for p in params)


def test_every_function_taking_a_term_is_checked() -> None:
    """The table above covers every public function with a Term parameter."""
    public = {name for name in quorem.__all__ if _takes_a_term(getattr(quorem, name))}
    public -= {"Term", "RewriteResult", "Step", "Rule", "RuleSet", "from_sympy"}
    assert public <= set(TERM_CALLS), sorted(public - set(TERM_CALLS))


def _suggested_text(message: str) -> tuple[str, list[str]]:
    """The text and the variable names of the ``quorem.parse(...)`` call a message shows."""
    quoted = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
    m = re.search(rf"quorem\.parse\(({quoted})(?:, \{{(.*?)\}})?\)", message)
    assert m is not None, message
    names = re.findall(r"'([A-Za-z_]\w*)': \(lo, hi\)", m.group(2) or "")
    return ast.literal_eval(m.group(1)), names


@pytest.mark.parametrize("function", sorted(TERM_CALLS))
def test_text_for_a_term_shows_the_parse_call(function: str) -> None:
    """Text where a term goes: a TypeError naming the function and the parse to make."""
    with pytest.raises(TypeError) as info:
        TERM_CALLS[function]("x//4 + y")
    message = str(info.value)
    assert f"quorem.{function} expects a Term, not a str" in message
    text, names = _suggested_text(message)
    assert text == "x//4 + y"
    assert names == ["x", "y"]


@pytest.mark.parametrize("function", sorted(TERM_CALLS))
@pytest.mark.parametrize("bad", [4, None, 2.5, b"x"])
def test_other_values_for_a_term_say_what_to_make(function: str, bad: object) -> None:
    """An int says quorem.const; anything else says how to make a term."""
    if function == "sum_of" and isinstance(bad, int):
        return  # sum_of takes ints as well as terms
    with pytest.raises(TypeError) as info:
        TERM_CALLS[function](bad)
    message = str(info.value)
    assert f"quorem.{function} expects a Term" in message
    assert ("quorem.const(4)" if bad == 4 else "quorem.parse(") in message


@given(
    st.dictionaries(st.sampled_from(["x", "y", "n0", "w_1"]), bounds(), min_size=1, max_size=3),
    st.sampled_from(list(Semantics)),
    st.data(),
)
def test_the_suggested_parse_makes_the_term(
    box: dict[str, tuple[int | None, int | None]], sem: Semantics, data: st.DataObject
) -> None:
    """The call shown parses the text given, and names exactly its variables."""
    term = data.draw(expressions(box, sem, max_depth=3))
    text = quorem.to_text(term, sem)
    with pytest.raises(TypeError) as info:
        quorem.simplify(text)  # type: ignore[arg-type]
    message = str(info.value)
    if len(text) > 200:  # too long to quote: the call says "text"
        assert "quorem.parse(text, {" in message
        return
    shown, names = _suggested_text(message)
    assert shown == text
    assert names == sorted(free_names(term))
    assert quorem.parse(shown, {n: box[n] for n in names}, sem) == term


@pytest.mark.parametrize("function", ["simplify", "explain"])
def test_conditions_and_rules_of_the_wrong_kind(function: str) -> None:
    """given as text (or holding text) shows the parse; rules as a path says how to load."""
    call = getattr(quorem, function)
    with pytest.raises(TypeError, match=r"given=\[quorem\.parse\('x < 4', \{'x': \(lo, hi\)\}\)\]"):
        call(X, given="x < 4")
    with pytest.raises(TypeError, match=r"given\[1\]: .*quorem\.parse\('x > 1'"):
        call(X, given=[X, "x > 1"])
    with pytest.raises(TypeError, match=r"RuleSet\.from_files"):
        call(X, rules="my.rules")


# ------------------------------------------------------------------------------- bounds
def _cli_form(lo: int | None, hi: int | None) -> str:
    return f"{'' if lo is None else lo}:{'' if hi is None else hi}"


@given(bounds(allow_unbounded=True), st.sampled_from(["", " "]), st.booleans())
def test_parse_takes_every_form_of_the_command_line(
    b: tuple[int | None, int | None], pad: str, as_hex: bool
) -> None:
    """'LO:HI' (open ends, spaces, hex) gives the same term as (lo, hi), as --var does."""
    lo, hi = b

    def side(v: int | None) -> str:
        if v is None:
            return ""
        return (("-" if v < 0 else "") + hex(abs(v))) if as_hex else str(v)

    text = f"{pad}{side(lo)}{pad}:{pad}{side(hi)}{pad}"
    expected = quorem.parse("x//4", {"x": b})
    assert quorem.parse("x//4", {"x": text}) == expected
    # A list (as JSON writes a pair) is read too, beyond the annotated (lo, hi).
    assert quorem.parse("x//4", {"x": list(b)}) == expected  # type: ignore[dict-item]
    assert parse_var(f"x={text}")[1:] == b  # the command line reads it alike
    assert quorem.parse("x//4", {"x": _cli_form(lo, hi)}) == expected


def test_none_is_unbounded() -> None:
    assert quorem.parse("x", {"x": None}) == quorem.parse("x", {"x": ":"}) == quorem.parse("x")


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("0-9", r"'0-9' is not LO:HI \(e\.g\. 0:31"),
        ("0:1:2", r"more than one ':' in '0:1:2'"),
        ("zero:9", r"bound 'zero' is not an integer"),
        ("0:9x", r"bound '9x' is not an integer"),
        ("09:10", r"bound '09' is not a valid integer"),
        (3, r"expected \(lo, hi\), 'LO:HI' .* or None, got 3"),
        ((0, 1, 2), r"expected \(lo, hi\)"),
        ((0, "9"), r"'9' is not an int or None"),
        ((True, 9), r"True is not an int or None"),
        ((0.5, 9), r"0\.5 is not an int or None"),
    ],
)
def test_malformed_bounds_name_the_variable(value: object, why: str) -> None:
    """Bounds that cannot be read: a BoundsError (a QuoremError, a ValueError) naming x."""
    with pytest.raises(quorem.BoundsError, match=r"^bounds of x: " + why):
        quorem.parse("x + 1", {"x": value})  # type: ignore[dict-item]
    assert issubclass(quorem.BoundsError, quorem.QuoremError)
    assert issubclass(quorem.BoundsError, ValueError)
    if isinstance(value, str):  # the command line refuses the same text
        with pytest.raises(argparse.ArgumentTypeError):
            parse_var(f"x={value}")


def test_an_empty_range_is_refused_in_either_form() -> None:
    for value in ("5:1", (5, 1)):
        with pytest.raises(quorem.ParseError, match="empty range"):
            quorem.parse("x", {"x": value})


def test_vars_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match=r"vars must be a mapping .*'0:31'"):
        quorem.parse("x", [("x", (0, 1))])  # type: ignore[arg-type]


def test_from_sympy_takes_the_same_bounds() -> None:
    sympy = pytest.importorskip("sympy")
    x = sympy.Symbol("x", integer=True)
    assert quorem.from_sympy(x, {"x": "0:9"}) == quorem.parse("x", {"x": (0, 9)})
