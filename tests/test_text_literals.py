"""Expression text the fuzzer of issue 14 got through: literals, names, sizes, depths.

Each case is a regression test: bad text is a ParseError naming line, column and why
(never a ValueError or RecursionError from inside Python, never a silently odd term),
and every term prints, at any size or depth, as text that parses back to it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem import term as tm
from quorem.ops import Op
from quorem.printer import brief, to_text
from quorem.syntax import MAX_DIGITS, RESERVED, parse_int


@pytest.fixture
def low_digit_limit() -> Iterator[None]:
    """The lowest int/str digit limit Python allows, as a cautious embedder might set."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def _error(text: str, bounds: dict[str, tuple[int, int]] | None = None) -> quorem.ParseError:
    with pytest.raises(quorem.ParseError) as info:
        quorem.parse(text, bounds)
    return info.value


@pytest.mark.parametrize(
    ("text", "col"),
    [("1_", 2), ("x + 1__0", 6), ("0xf_", 4), ("0x__f", 3), ("2_000_", 6), ("(1_)", 3)],
)
def test_misplaced_underscores_are_refused(text: str, col: int) -> None:
    """Python allows '_' only between digits (and after 0x); so does quorem."""
    err = _error(text)
    assert "'_'" in err.reason
    assert (err.line, err.col) == (1, col)


def test_underscores_between_digits_are_accepted() -> None:
    assert quorem.parse("1_000 + 0x_ff + 0xF_F + 1_2_3").value == 1000 + 255 + 255 + 123


@pytest.mark.parametrize("word", sorted(RESERVED))
def test_python_keywords_are_not_names(word: str) -> None:
    """`True`, `None`, `if`, ... would read as Python constants or syntax: refused."""
    err = _error(f"x + {word}")
    assert (err.line, err.col) == (1, 5)
    assert "keyword" in err.reason
    assert "keyword" in _error(f"{word}(x)").reason


def test_soft_keywords_stay_names() -> None:
    """`match`, `case`, `type` and `_` are names in Python expressions too."""
    t = quorem.parse("match + case + type + _")
    assert t.op is Op.ADD and len(t.args) == 4


@pytest.mark.parametrize("text", ["x + \u0661", "\u00e9 + 1", "x\u200b + 1", "x + \uff11"])
def test_non_ascii_digits_and_names_are_refused(text: str) -> None:
    """Names and digits are ASCII: look-alike characters cannot hide in an expression."""
    err = _error(text)
    assert "unexpected character" in err.reason
    assert err.col == next(i for i, ch in enumerate(text, 1) if not ch.isascii())


def test_long_decimal_literal_is_refused_and_hex_is_not() -> None:
    """Decimal literals are capped (quadratic conversion); hex of any length parses."""
    err = _error("x + " + "7" * (MAX_DIGITS + 1))
    assert (err.col, str(MAX_DIGITS)) == (5, str(MAX_DIGITS))
    assert "hex" in err.reason
    assert quorem.parse("7" * MAX_DIGITS).value == int("7" * 700) * 10 ** (MAX_DIGITS - 700) + int(
        "7" * (MAX_DIGITS - 700)
    )
    big = quorem.parse("0x" + "f" * 20_000)
    assert big.value == 16**20_000 - 1


def test_literals_under_the_lowest_digit_limit(low_digit_limit: None) -> None:
    """A decimal literal Python itself would refuse to convert still parses."""
    assert quorem.parse("9" * 4000 + " + x").arg is not None
    assert parse_int("-" + "9" * 4000) == -(10**4000 - 1)


def test_printing_never_raises(low_digit_limit: None) -> None:
    """Constants and coefficients of any size print, in decimal or hex, and parse back."""
    for value in [10**639, -(10**700) + 3, 10**3999, -(10**4000), 7 * 16**6000]:
        for t in [tm.const(value), tm.linear([(tm.var("x"), value)], value)]:
            text = to_text(t)
            assert quorem.parse(text) is t
            assert str(t) == text


def test_a_bound_beyond_the_int_str_limit_is_an_integer_like_any_other() -> None:
    """Bounds are integers: one past Python's int/str digit limit makes a variable too."""
    t = quorem.parse("1 + x", {"x": (0, 16**5000)})
    assert (t.vmin, t.vmax) == (1, 16**5000 + 1)
    assert quorem.simplify(t) is t
    assert quorem.var("x", 0, 16**5000) is quorem.var("x", 0, 16**5000)
    assert quorem.var("x", 0, 16**5000) is not quorem.var("x", 0, 16**5000 - 1)


def test_parse_int_reports_the_column() -> None:
    for text, col in [("+1_", 3), ("-0x_", 2), ("--1", 1), ("12a", 1), ("", 1)]:
        with pytest.raises(quorem.ParseError) as info:
            parse_int(text)
        assert info.value.col == col, text
    assert parse_int("-0x_1F") == -31
    assert parse_int("+1_000") == 1000


# -------------------------------------------------------------------------- depth
DEPTH = 100_000


def test_deep_parentheses_and_minus_chains() -> None:
    """10^5 levels of parentheses or unary minus: no recursion anywhere."""
    x = tm.var("x")
    assert quorem.parse("(" * DEPTH + "x" + ")" * DEPTH) is x
    assert quorem.parse("-" * DEPTH + "x") is x
    assert quorem.parse("-" * (DEPTH + 1) + "x") is tm.linear([(x, -1)])
    assert quorem.parse("+-" * DEPTH + "(x + 1)") is tm.linear([(x, 1)], 1)


@pytest.mark.slow
def test_deep_terms_print_and_parse_back() -> None:
    """A term far deeper than the recursion limit prints as text that parses back to it."""
    depth = 20 * sys.getrecursionlimit()
    for text in [
        "max(" * depth + "x" + "".join(f", y{i % 3})" for i in range(depth)),
        "(" * depth + "x" + " // 3 - y)" * depth,
        "((" * depth + "x" + " < y) + 1)" * depth,
    ]:
        t = quorem.parse(text)
        again = to_text(t)
        assert quorem.parse(again) is t
        assert len(brief(t)) < 200


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=-(16**1200), max_value=16**1200), st.integers(0, 3))
def test_any_constant_round_trips(value: int, shape: int) -> None:
    """Every integer prints as a literal the parser reads back exactly."""
    x = tm.var("x")
    t = [
        tm.const(value),
        tm.linear([(x, value or 1)], value),
        tm.linear([(x, 1)], value),
        tm.div(x, tm.const(value or 1), quorem.Semantics.FLOOR),
    ][shape]
    assert quorem.parse(to_text(t)) is t


def test_division_by_zero_quotes_the_numerator_briefly() -> None:
    """The error names the operator's position and shows about a line of the numerator."""
    product = "*".join(f"x{i}" for i in range(2000))
    err = _error(f"{product} // (y - y)")
    assert err.col == len(product) + 2
    assert err.reason.startswith("division by zero in (x0*x1*")
    assert len(err.reason) < 250
    assert _error("truncmod(x, 0)").reason == "division by zero in truncmod(x, 0)"
