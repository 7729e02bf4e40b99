"""The command line's own text: ``--var NAME=LO:HI`` and batch JSON lines (issue 14).

Integers are read as expression literals are (``_`` between digits, decimal capped at
``MAX_DIGITS`` digits, hex unlimited), names as expression names (ASCII, not a Python
keyword); every refusal says what is wrong and where, and no integer of any size makes a
message or the output raise.
"""

from __future__ import annotations

import argparse
import io
import json

import pytest

from quorem.cli.batch import batch_record
from quorem.cli.expressions import parse_var
from quorem.cli.main import main
from quorem.ops import Semantics
from quorem.syntax import MAX_DIGITS

TOO_LONG = "9" * (MAX_DIGITS + 1)
HUGE_HEX = "0x" + "f" * 5000


def _var_error(spec: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse_var(spec)
    return str(info.value)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("x=0:1_", "'_' in an integer must stand between two digits"),
        ("x=1__0:2", "'_' in an integer must stand between two digits"),
        ("x=-0x:2", "not an integer"),
        (f"x=0:{TOO_LONG}", f"the limit is {MAX_DIGITS}"),
        ("True=0:1", "'True' is not a variable name"),
        ("if=0:1", "'if' is not a variable name"),
        ("and=0:1", "'and' is not a variable name"),
        ("\u00e9=0:1", "is not a variable name"),
        ("x=0:\u0661", "not an integer"),
    ],
)
def test_bad_var_says_why(spec: str, why: str) -> None:
    message = _var_error(spec)
    assert why in message
    assert len(message) < 400  # long values are quoted shortened


def test_var_bounds_of_any_size_are_read_or_refused_clearly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A hex bound of any length is an integer, and the expression over it simplifies."""
    assert parse_var(f"x=-{HUGE_HEX}:0") == ("x", -(16**5000 - 1), 0)
    assert "empty range" in _var_error(f"x={HUGE_HEX}:0")
    status = main(["simplify", "x + 1", "--var", f"x=0:{HUGE_HEX}"])
    captured = capsys.readouterr()
    assert status == 0
    assert captured.out == "x + 1\n"
    assert "Traceback" not in captured.err


def _batch(line: str) -> dict[str, object]:
    return batch_record(line, 1, Semantics.FLOOR, 1000, io.StringIO())


def test_batch_integer_too_long_names_its_column() -> None:
    """json.loads would raise Python's digit-limit ValueError; the line says where instead."""
    line = json.dumps({"expr": TOO_LONG, "vars": {"x": [0, 1]}}).replace("1]", TOO_LONG + "]")
    result = _batch(line)
    error = str(result["error"])
    assert error.startswith("line 1: invalid JSON: an integer of")
    assert f"column {line.index(', ' + TOO_LONG) + 3}" in error  # not the one in "expr"


def test_batch_long_but_allowed_bounds_and_keywords() -> None:
    bound = "9" * MAX_DIGITS
    ok = _batch(f'{{"expr": "x // 2", "vars": {{"x": [0, {bound}]}}}}')
    assert "output" in ok, ok
    bad = _batch('{"expr": "x + 1", "vars": {"None": [0, 1]}}')
    assert bad["error"] == 'line 1: vars: "None" is not a variable name'
    kw = _batch('{"expr": "x + lambda"}')
    assert kw["error"] == "line 1: expr at 1:5: 'lambda' is a Python keyword, not a name"
