"""rules/48-min-max-compare.rules and rules/49-clause-pairs.rules (issue 15, class 1).

A min or max compared with one of its operands or, across its constant, with a
constant is decided by the other operand; two comparisons of the same operands in one
junction are one comparison; a clause that contradicts another through the difference
of two atoms folds the conjunction; C's ``&&``, ``||`` and ``!`` read as TVM and CUDA
print them. Each form where a rule must stop is checked too, and random expressions of
these shapes keep their value at every point of a small box.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import assert_simplified_keeps_value, examples

import quorem

WIDE = {"x": (-1000, 1000), "y": (-1000, 1000), "z": (-1000, 1000)}
SMALL = {"x": (-6, 6), "y": (-6, 6), "z": (-3, 3)}


def simplified(text: str, bounds: dict[str, tuple[int, int]] = WIDE) -> quorem.Term:
    result = quorem.explain(quorem.parse(text, bounds))
    assert result.reason is quorem.StopReason.FIXED_POINT
    return result.term


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("min(x, y) <= x", "1"),
        ("x < min(y, x)", "0"),
        ("min(x, y) < y", "x < y"),
        ("x <= min(x, y)", "x <= y"),
        ("min(x, y) == x", "x <= y"),
        ("min(x, y) != y", "x < y"),
        ("max(x, y) >= x", "1"),
        ("max(y, x) < x", "0"),
        ("x < max(x, y)", "x < y"),
        ("max(x, y) <= x", "y <= x"),
        ("max(x // 4, y) == y", "x // 4 <= y"),
        ("min(x, 3) < 3", "x < 3"),
        ("min(x, 3) < 2", "x < 2"),
        ("min(x, 3) <= 2", "x <= 2"),
        ("3 <= min(x, 3)", "3 <= x"),
        ("-2 < min(x, 3)", "-2 < x"),
        ("min(x, 5) == 2", "x == 2"),
        ("min(x, 5) == 5", "5 <= x"),
        ("min(x, 5) != 5", "x < 5"),
        ("max(x, 3) < 5", "x < 5"),
        ("max(x, 3) <= 3", "x <= 3"),
        ("4 < max(x, 3)", "4 < x"),
        ("3 <= max(x, -1)", "3 <= x"),
        ("max(x, 7) == 9", "x == 9"),
        ("max(x, 7) != 7", "7 < x"),
        ("min(x // 4, 10) < 3", "x < 12"),
        ("min(x + 1, y) < x + 1", "y < x + 1"),
        # an operand shifted by a constant
        ("x + 1 < max(8, x)", "x < 7"),
        ("x < max(x, y) - 2", "x < y - 2"),
        ("max(x, y) <= x + 1", "y <= x + 1"),
        ("max(x, y) < x", "0"),
        ("max(x, y) < x + 3", "y < x + 3"),
        ("x - 1 < min(x, y)", "x < y + 1"),
        ("min(x, y) <= x - 1", "y <= x - 1"),
        ("x + 2 <= max(x, 5)", "x <= 3"),
        ("x < min(x, y) - 1", "0"),
        ("min(x, y) < x + 2", "1"),
    ],
)
def test_min_max_compared(text: str, want: str) -> None:
    assert simplified(text) is quorem.parse(want, WIDE), quorem.to_text(simplified(text))


@pytest.mark.parametrize(
    "text",
    [
        "min(x, y) < z",  # no operand on the other side
        "min(x, 3) < y",
        "min(x, y + 1) <= y",
    ],
)
def test_min_max_rules_stop(text: str) -> None:
    result = quorem.explain(quorem.parse(text, WIDE))
    assert not any(r.startswith(("min-", "max-", "operand-", "const-")) for r in result.rules)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("min(x, 2) < 3", "1"),  # the range decides where the constants are the other way
        ("max(x, 3) <= 2", "0"),
        ("min(x, 5) == 7", "0"),
    ],
)
def test_min_max_decided_by_range(text: str, want: str) -> None:
    assert simplified(text) is quorem.parse(want, WIDE)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x < y or y < x", "x != y"),
        ("x < y or x == y", "x <= y"),
        ("x <= y and x != y", "x < y"),
        ("x < y or z == 1 or y < x", "z == 1 or x != y"),
        ("z < 3 and x <= y and x != y", "z < 3 and x < y"),
        # contradictions through the difference of two atoms
        ("x - 2 < y - 2 and y < x", "0"),
        ("x < y + 3 and y < x - 5", "0"),
        ("x*2 < y and y < x*2 - 1", "0"),
        ("x <= y and x == y + 1", "0"),
        ("x < y or y <= x", "1"),
        # not a pair: different operands
        ("x < y or y < z", "x < y or y < z"),
    ],
)
def test_clause_pairs(text: str, want: str) -> None:
    assert simplified(text) is quorem.parse(want, WIDE), quorem.to_text(simplified(text))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x < 3 && y < 4", "x < 3 and y < 4"),
        ("x < 3 || y < 4", "x < 3 or y < 4"),
        ("!(x < 3)", "not (x < 3)"),
        ("!x < 3", "(not x) < 3"),  # C's ! binds like unary minus
        ("x != 3 && !(y == 2) || z < 0", "(x != 3 and not (y == 2)) or z < 0"),
    ],
)
def test_c_spellings(text: str, want: str) -> None:
    assert quorem.parse(text, WIDE) is quorem.parse(want, WIDE)


@pytest.mark.parametrize("text", ["x ! y", "!", "x && ", "|| x", "x & y", "x | y"])
def test_c_spellings_malformed(text: str) -> None:
    with pytest.raises(quorem.QuoremError) as err:
        quorem.parse(text, WIDE)
    assert "<expr>:1:" in str(err.value)


_OPERANDS = ["x", "y", "z", "x // 3", "y + 2", "3", "-2"]


@st.composite
def shapes(draw: st.DrawFn) -> str:
    a, b, c = (draw(st.sampled_from(_OPERANDS)) for _ in range(3))
    op = draw(st.sampled_from(["<", "<=", "==", "!="]))
    f = draw(st.sampled_from(["min", "max"]))
    inner = f"{f}({a}, {b})"
    left, right = (inner, draw(st.sampled_from([a, b, c]))) if draw(st.booleans()) else (c, inner)
    clause = f"{left} {op} {right}"
    if draw(st.booleans()):
        return clause
    p, q = draw(st.sampled_from(["x", "y", "x*2"])), draw(st.sampled_from(["y", "z", "x - 1"]))
    ops = [f"{p} < {q}", f"{q} < {p}", f"{p} == {q}", f"{p} <= {q}", f"{p} != {q}"]
    clauses = [clause, *draw(st.lists(st.sampled_from(ops), min_size=1, max_size=3))]
    return f" {draw(st.sampled_from(['and', 'or']))} ".join(f"({k})" for k in clauses)


@settings(max_examples=examples(200), deadline=None)
@given(shapes(), st.sampled_from(["floor", "trunc"]))
def test_simplified_keeps_value(text: str, semantics: str) -> None:
    assert_simplified_keeps_value(text, SMALL, semantics)
