"""Euclidean division and ceildiv in the core (issue 17): arithmetic, ranges, syntax.

The rules, the lowering and the emitter have tests of their own; these check what they
rest on, against definitions written here independently of ``quorem.arith``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import quorem
from quorem import arith
from quorem import interval as iv
from quorem.cli.main import main
from quorem.errors import ParseError, TermError
from quorem.ops import Op, Semantics
from quorem.term import ceildiv, const, div, mod, var

SEMANTICS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "simplifying.md"
EUCLID = Semantics.EUCLID


def _euclid_by_search(a: int, b: int) -> tuple[int, int]:
    """The unique ``(q, r)`` with ``a == b*q + r`` and ``0 <= r < |b|``, found by search."""
    for r in range(abs(b)):
        if (a - r) % b == 0:
            return (a - r) // b, r
    raise AssertionError("no Euclidean remainder")


def _ceil_by_search(a: int, b: int) -> int:
    """The least ``q >= a / b``: ``q*b >= a`` for ``b > 0``, ``q*b <= a`` for ``b < 0``."""
    q = -abs(a) - 1
    while not (q * b >= a if b > 0 else q * b <= a):
        q += 1
    return q


@pytest.mark.parametrize(
    ("a", "b"), list(itertools.product(range(-13, 14), [-7, -3, -2, -1, 1, 2, 5]))
)
def test_euclidean_division_matches_its_definition(a: int, b: int) -> None:
    assert (arith.eucliddiv(a, b), arith.euclidmod(a, b)) == _euclid_by_search(a, b)
    assert arith.ceildiv(a, b) == _ceil_by_search(a, b)


@given(st.integers(-(2**70), 2**70), st.integers(-(2**70), 2**70).filter(lambda b: b != 0))
def test_euclidean_division_on_big_integers(a: int, b: int) -> None:
    q, r = arith.eucliddiv(a, b), arith.euclidmod(a, b)
    assert a == b * q + r
    assert 0 <= r < abs(b)
    c = arith.ceildiv(a, b)
    assert c * b >= a if b > 0 else c * b <= a
    assert (c - 1) * b < a if b > 0 else (c - 1) * b > a


def test_division_by_zero_is_refused() -> None:
    x = var("x", 0, 9)
    builds: list[Callable[[], object]] = [
        lambda: div(x, const(0), EUCLID),
        lambda: mod(x, const(0), EUCLID),
    ]
    for build in builds:
        with pytest.raises(TermError, match="division by zero"):
            build()
    with pytest.raises(TermError, match="ceildiv"):
        ceildiv(x, const(0))
    with pytest.raises(ParseError, match="division by zero"):
        quorem.parse("ceildiv(x, 0)", {"x": (0, 9)})
    with pytest.raises(ParseError, match="division by zero"):
        quorem.parse("x % 0", {"x": (0, 9)}, "euclid")


_RANGES = st.one_of(
    st.tuples(st.integers(-40, 40), st.integers(0, 30)).map(lambda p: (p[0], p[0] + p[1])),
    st.tuples(st.none(), st.integers(-40, 40)),
    st.tuples(st.integers(-40, 40), st.none()),
)


def _window(r: tuple[int | None, int | None]) -> range:
    lo, hi = r
    lo = (hi if hi is not None else 0) - 45 if lo is None else lo
    hi = lo + 45 if hi is None else hi
    return range(lo, hi + 1)


@pytest.mark.parametrize(
    ("fn", "name"),
    [
        (iv.eucliddiv_range, "eucliddiv"),
        (iv.euclidmod_range, "euclidmod"),
        (iv.ceildiv_range, "ceildiv"),
    ],
)
@given(a=_RANGES, b=_RANGES)
def test_ranges_contain_every_value(
    fn: Callable[[iv.Range, iv.Range], iv.Range], name: str, a: iv.Range, b: iv.Range
) -> None:
    lo, hi = fn(a, b)
    concrete = getattr(arith, name)
    for x in _window(a):
        for y in _window(b):
            if y == 0:
                continue
            v = concrete(x, y)
            assert lo is None or lo <= v, (a, b, x, y, v)
            assert hi is None or v <= hi, (a, b, x, y, v)


def test_positive_constant_divisor_takes_the_floor_fast_path_exactly() -> None:
    x = var("x", -17, 23)
    assert (div(x, const(5), EUCLID).vmin, div(x, const(5), EUCLID).vmax) == (-4, 4)
    assert (mod(x, const(5), EUCLID).vmin, mod(x, const(5), EUCLID).vmax) == (0, 4)
    # A negative divisor rounds up: -17 / -5 is 4 (remainder 3), 23 / -5 is -4.
    q = div(x, const(-5), EUCLID)
    assert (q.vmin, q.vmax) == (-4, 4)
    assert (mod(x, const(-5), EUCLID).vmin, mod(x, const(-5), EUCLID).vmax) == (0, 4)
    c = ceildiv(x, const(5))
    assert (c.vmin, c.vmax) == (-3, 5)


@pytest.mark.parametrize(
    ("text", "op"),
    [
        ("x // y", Op.EUCLIDDIV),
        ("x % y", Op.EUCLIDMOD),
        ("eucliddiv(x, y)", Op.EUCLIDDIV),
        ("euclidmod(x, y)", Op.EUCLIDMOD),
        ("ceildiv(x, y)", Op.CEILDIV),
    ],
)
def test_euclid_syntax(text: str, op: Op) -> None:
    box = {"x": (-9, 9), "y": (1, 4)}
    t = quorem.parse(text, box, "euclid")
    assert t.op is op
    for sem in Semantics:
        assert quorem.parse(quorem.to_text(t, sem), box, sem) is t
    # Under floor, // is floor division; the explicit functions are one thing everywhere.
    if text.startswith(("eucliddiv", "euclidmod", "ceildiv")):
        assert quorem.parse(text, box, "floor") is t


def test_printing_names_the_semantics_it_is_not_printed_in() -> None:
    box = {"x": (-9, 9)}
    t = quorem.parse("x // -3 + x % -3 + ceildiv(x, 4)", box, "euclid")
    assert quorem.to_text(t, Semantics.FLOOR) == (
        "eucliddiv(x, -3) + euclidmod(x, -3) + ceildiv(x, 4)"
    )
    assert "eucliddiv" not in quorem.to_text(t, EUCLID)


def test_evaluation_follows_the_semantics() -> None:
    box = {"x": (-20, 20), "y": (-5, 5)}
    t = quorem.parse("x // y * 100 + x % y", box, "euclid")
    for x, y in itertools.product(range(-20, 21), range(-5, 6)):
        if y:
            q, r = _euclid_by_search(x, y)
            assert quorem.evaluate(t, {"x": x, "y": y}) == q * 100 + r
    c = quorem.parse("ceildiv(x, y)", box)
    assert quorem.evaluate(c, {"x": 7, "y": -2}) == -3
    assert quorem.evaluate(c, {"x": -7, "y": -2}) == 4


def test_unknown_semantics_names_the_three() -> None:
    with pytest.raises(quorem.QuoremError, match="euclid"):
        quorem.parse("x", {}, "halide")


def _cells(row: str) -> list[str]:
    """A Markdown table row's cells (an escaped ``\\|`` stays inside its cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def test_docs_table_states_the_three_meanings() -> None:
    """The documentation's table of ``-7 // 2``, ``-7 % 2``, ... is what the engine computes."""
    text = SEMANTICS_PAGE.read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("| semantics |"))
    cells = _cells(header)
    operations = [re.fullmatch(r"`(-?\d+) (//|%) (-?\d+)`", c) for c in cells]
    columns = [(i, m) for i, m in enumerate(operations) if m is not None]
    assert len(columns) >= 4
    rows = 0
    for line in text.splitlines():
        m = re.match(r"\| `(floor|trunc|euclid)` \|", line)
        if m is None:
            continue
        rows += 1
        values = _cells(line)
        sem = Semantics(m.group(1))
        for i, op in columns:
            a, b = int(op.group(1)), int(op.group(3))
            term = quorem.parse(f"{a} {op.group(2)} ({b})", {}, sem)
            assert int(values[i].replace("\u2212", "-")) == quorem.evaluate(term, {}), (sem, op[0])
    assert rows == 3


def test_command_line_reads_and_prints_euclid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--semantics euclid`` and a batch line's ``"semantics": "euclid"`` mean Euclid."""
    status = main(
        ["simplify", "x // -4 + ceildiv(x, 4)", "--var", "x=-9:9", "--semantics", "euclid"]
    )
    out = capsys.readouterr().out.strip()
    assert status == 0
    box = {"x": (-9, 9)}
    printed = quorem.parse(out, box, "euclid")
    original = quorem.parse("x // -4 + ceildiv(x, 4)", box, "euclid")
    for x in range(-9, 10):
        assert quorem.evaluate(printed, {"x": x}) == quorem.evaluate(original, {"x": x})
    batch = tmp_path / "in.jsonl"
    line = {"id": "e", "vars": {"x": [-9, 9]}, "expr": "x % -4", "semantics": "euclid"}
    batch.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert main(["simplify", "--batch", str(batch)]) == 0
    (record,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    got = quorem.parse(record["output"], box, "euclid")
    for x in range(-9, 10):
        assert quorem.evaluate(got, {"x": x}) == x % 4
