"""Tests of the ``quorem`` command line (quorem.cli)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import quorem
from quorem.cli.demo import DEMO_EXPR
from quorem.cli.expressions import parse_var
from quorem.cli.main import main

SEED_VARS = ["--var", "R3=0:3", "--var", "R4=0:1", "--var", "R2=0:3"]
SEED_RESULT = "R2 + R3*8 + R4*4"
SEED_LINE = {
    "id": "seed",
    "vars": {"R3": [0, 3], "R4": [0, 1], "R2": [0, 3]},
    "expr": DEMO_EXPR,
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run main in-process; return (status, stdout, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def batch_lines(out: str) -> list[dict[str, Any]]:
    """Decode the JSON lines a batch wrote."""
    return [json.loads(line) for line in out.splitlines()]


def write_batch(tmp_path: Path, lines: list[str]) -> str:
    """Write batch input lines to a file and return its path."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------- simplify
def test_simplify_with_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    """A bounded expression is simplified and printed alone on stdout."""
    status, out, err = run(capsys, "simplify", "(x*8 + y) % 8", "--var", "x=0:3", "--var", "y=0:7")
    assert (status, out, err) == (0, "y\n", "")


def test_simplify_seed_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's worked example simplifies to its known normal form."""
    status, out, _ = run(capsys, "simplify", DEMO_EXPR, *SEED_VARS)
    assert status == 0
    assert out == SEED_RESULT + "\n"


def test_simplify_unbounded_keeps_divisions(capsys: pytest.CaptureFixture[str]) -> None:
    """Without bounds the range rules cannot fire, so x % 8 stays."""
    status, out, _ = run(capsys, "simplify", "x % 8")
    assert (status, out) == (0, "x%8\n")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("x=0:31", ("x", 0, 31)),
        ("x=-5:5", ("x", -5, 5)),
        ("x=:10", ("x", None, 10)),
        ("x=0:", ("x", 0, None)),
        ("x=:", ("x", None, None)),
        (" n_1 = -0x10 : 1_000 ", ("n_1", -16, 1000)),
    ],
)
def test_parse_var_accepts(spec: str, expected: tuple[str, int | None, int | None]) -> None:
    """--var accepts NAME=LO:HI with empty, negative, hex and underscored bounds."""
    assert parse_var(spec) == expected


def test_half_open_bounds_are_used(capsys: pytest.CaptureFixture[str]) -> None:
    """A lower bound alone is enough for a rule that needs a non-negative numerator."""
    status, out, _ = run(capsys, "simplify", "(x*4 + 3)//4", "--var", "x=0:")
    assert (status, out) == (0, "x\n")


@pytest.mark.parametrize(
    "spec", ["x", "x=1", "=0:1", "1x=0:1", "x=a:3", "x=0:1:2", "x=5:1", "x=1.5:2", "x=08:9"]
)
def test_bad_var_is_usage_error(capsys: pytest.CaptureFixture[str], spec: str) -> None:
    """Bad --var syntax exits 2 naming the option, without a traceback."""
    status, out, err = run(capsys, "simplify", "x", "--var", spec)
    assert status == 2
    assert out == ""
    assert "argument --var" in err
    assert "Traceback" not in err


def test_var_given_twice(capsys: pytest.CaptureFixture[str]) -> None:
    """The same variable bounded twice is an error, not a silent override."""
    status, _, err = run(capsys, "simplify", "x", "--var", "x=0:1", "--var", "x=0:2")
    assert status == 2
    assert "quorem simplify: error: argument --var: variable x is given twice" in err


def test_unused_var_warns(capsys: pytest.CaptureFixture[str]) -> None:
    """A --var naming no variable of the expression is warned about (a likely typo)."""
    status, out, err = run(capsys, "simplify", "x % 4", "--var", "X=0:3")
    assert (status, out) == (0, "x%4\n")
    assert "warning: --var X" in err


def test_trunc_semantics_prints_operators(capsys: pytest.CaptureFixture[str]) -> None:
    """Under trunc, x//4 with a signed x is kept and printed with //, not truncdiv."""
    status, out, _ = run(capsys, "simplify", "x//4", "--var", "x=-8:8", "--semantics", "trunc")
    assert (status, out) == (0, "x//4\n")


def test_trunc_output_reparses(capsys: pytest.CaptureFixture[str]) -> None:
    """Output under trunc parses back, under trunc, to the simplified term."""
    expr, bounds = "(x*8 + y)//8 + x % 4", {"x": (-3, 3), "y": (0, 7)}
    status, out, _ = run(
        capsys, "simplify", expr, "--var", "x=-3:3", "--var", "y=0:7", "--semantics", "trunc"
    )
    assert status == 0
    expected = quorem.simplify(quorem.parse(expr, bounds, "trunc"))
    assert quorem.parse(out.strip(), bounds, "trunc") is expected


def test_floor_division_in_trunc_mode_is_a_function(capsys: pytest.CaptureFixture[str]) -> None:
    """A floor division kept under --semantics trunc prints as floordiv(...)."""
    status, out, _ = run(capsys, "simplify", "floordiv(x, 4)", "--semantics", "trunc")
    assert (status, out) == (0, "floordiv(x, 4)\n")


# The worked example's row in a buffer whose rows are 32 wide, and its column modulo 4: no
# identity applies, the row and the column simplify separately.
PITCHED_EXPR = "((R3*8 + R4*4 + R2)//8)*32 + (R3*8 + R4*4 + R2)%4"


def test_explain_lists_rules_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    """--explain prints the result, each rule application, counts, ops and stop reason."""
    status, out, err = run(capsys, "simplify", PITCHED_EXPR, *SEED_VARS, "--explain")
    assert status == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "R2 + R3*32"
    assert "  1. mod-reduce-coefficients: (R2 + R3*8 + R4*4)%4 -> R2%4" in lines
    order = [
        "mod-reduce-coefficients",
        "mod-of-small-range",
        "div-split-multiples",
        "fold-div-by-range",
    ]
    positions = [out.index(f". {name}:") for name in order]
    assert positions == sorted(positions)
    assert "rule counts:" in lines
    assert "ops: 2 -> 0  (//, % and division functions)" in lines
    assert lines[-1] == "stop reason: fixed point after 4 steps"


def test_explain_prints_trunc_terms(capsys: pytest.CaptureFixture[str]) -> None:
    """--explain prints trace terms in the chosen semantics."""
    status, out, _ = run(
        capsys,
        "simplify",
        "(x*8 + y)//8",
        "--var",
        "x=0:3",
        "--var",
        "y=0:7",
        "--semantics",
        "trunc",
        "--explain",
    )
    assert status == 0
    assert "div-split-multiples-nonneg: (x*8 + y)//8 -> x + y//8" in out
    assert "truncdiv" not in out


def test_explain_with_no_rules(capsys: pytest.CaptureFixture[str]) -> None:
    """--explain on a normal form says no rule applied."""
    status, out, _ = run(capsys, "simplify", "x + 1", "--explain")
    assert status == 0
    assert "rules applied: none" in out
    assert "stop reason: fixed point after 0 steps" in out


def test_step_limit_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """A run cut short by --max-steps prints its (sound) result and warns on stderr."""
    status, out, err = run(capsys, "simplify", PITCHED_EXPR, *SEED_VARS, "--max-steps", "1")
    assert status == 0
    assert out.strip() != "R2 + R3*32"
    assert "quorem simplify: warning:" in err
    assert "step limit" in err


@pytest.mark.parametrize(
    ("expr", "where"),
    [("x +", "1:4"), ("x // 0", "1:3"), ("x % (y - y)", "1:3"), ("x / 2", "1:3"), ("", "1:1")],
)
def test_bad_expression_is_input_error(
    capsys: pytest.CaptureFixture[str], expr: str, where: str
) -> None:
    """Parse errors and division by constant zero exit 2 with line:col and a caret."""
    status, out, err = run(capsys, "simplify", expr)
    assert status == 2
    assert out == ""
    assert err.startswith(f"quorem simplify: error: <expr>:{where}: ")
    assert err.rstrip().endswith("^")
    assert "Traceback" not in err


def test_expression_starting_with_minus(capsys: pytest.CaptureFixture[str]) -> None:
    """An EXPR starting with '-' works after '--', and without it the error says so."""
    status, out, _ = run(capsys, "simplify", "--", "-x//4")
    assert (status, out) == (0, "(-x)//4\n")
    status, _, err = run(capsys, "simplify", "-x//4")
    assert status == 2
    assert "goes after '--'" in err


def test_deep_expression(capsys: pytest.CaptureFixture[str]) -> None:
    """Deeply nested input is handled without recursion errors."""
    depth = 20_000
    status, out, _ = run(capsys, "simplify", "(" * depth + "x % 4" + ")" * depth, "--var", "x=0:3")
    assert (status, out) == (0, "x\n")


def test_simplify_without_expression(capsys: pytest.CaptureFixture[str]) -> None:
    """simplify with neither EXPR nor --batch is a usage error pointing at the demo."""
    status, _, err = run(capsys, "simplify")
    assert status == 2
    assert "quorem demo" in err


def test_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    """Bare `quorem` prints help on stderr and exits 2."""
    status, out, err = run(capsys)
    assert (status, out) == (2, "")
    assert "simplify" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the installed version."""
    from importlib import metadata

    status, out, _ = run(capsys, "--version")
    assert (status, out) == (0, f"quorem {metadata.version('quorem')}\n")


def test_help_documents_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    """simplify --help exits 0 and documents the batch exit statuses."""
    status, out, _ = run(capsys, "simplify", "--help")
    assert status == 0
    assert "exit status:" in out
    assert "some lines had errors" in out


# -------------------------------------------------------------------------------- batch
def test_batch_good_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Good lines give id, output, op counts, rules and timing; other keys are ignored."""
    lines = [
        json.dumps(SEED_LINE),
        json.dumps(
            {"id": "t", "vars": {"x": [-8, 8]}, "expr": "x//4", "semantics": "trunc", "x": 1}
        ),
    ]
    status, out, err = run(capsys, "simplify", "--batch", write_batch(tmp_path, lines))
    assert (status, err) == (0, "")
    seed, trunc = batch_lines(out)
    assert set(seed) == {
        "id",
        "output",
        "ops_before",
        "ops_after",
        "rules",
        "counts",
        "steps",
        "stop_reason",
        "culprits",
        "seconds",
    }
    assert seed["id"] == "seed"
    assert seed["output"] == SEED_RESULT
    assert (seed["ops_before"], seed["ops_after"]) == (2, 0)
    assert seed["rules"] == ["divmod-recombine"]
    assert isinstance(seed["seconds"], float)
    assert seed["seconds"] >= 0
    assert trunc["output"] == "x//4"
    assert (trunc["ops_before"], trunc["ops_after"], trunc["rules"]) == (1, 1, [])


def test_batch_null_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """null bounds are unbounded sides; a null pair is an unbounded variable."""
    lines = [
        json.dumps({"id": "lo", "vars": {"x": [0, None]}, "expr": "max(x, 0)"}),
        json.dumps({"id": "hi", "vars": {"x": [None, 7]}, "expr": "min(x, 7)"}),
        json.dumps({"id": "none", "vars": {"x": [None, None]}, "expr": "max(x, 0)"}),
        json.dumps({"id": "null", "vars": {"x": None}, "expr": "x % 4"}),
        json.dumps({"id": "novars", "vars": None, "expr": "x % 4"}),
    ]
    status, out, _ = run(capsys, "simplify", "--batch", write_batch(tmp_path, lines))
    assert status == 0
    outputs = {r["id"]: r["output"] for r in batch_lines(out)}
    assert outputs == {"lo": "x", "hi": "x", "none": "max(0, x)", "null": "x%4", "novars": "x%4"}


def test_batch_bad_lines_do_not_stop_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad JSON, parse errors and division by zero give error lines; the batch goes on."""
    lines = [
        '{"id": "broken", ',
        json.dumps({"id": "parse", "expr": "x +"}),
        json.dumps({"id": "zero", "expr": "x // 0"}),
        "",
        "   ",
        json.dumps({"id": "ok", "vars": {"x": [0, 3]}, "expr": "x % 4"}),
    ]
    status, out, err = run(capsys, "simplify", "--batch", write_batch(tmp_path, lines))
    assert status == 1
    assert "Traceback" not in err
    broken, parse, zero, ok = batch_lines(out)
    assert broken == {"id": None, "error": broken["error"]}
    assert broken["error"].startswith("line 1: invalid JSON")
    assert parse["id"] == "parse"
    assert parse["error"] == "line 2: expr at 1:4: unexpected end of expression"
    assert zero["id"] == "zero"
    assert zero["error"].startswith("line 3: expr at 1:3: division by zero")
    assert ok == {**ok, "id": "ok", "output": "x"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a"}', "missing key 'expr'"),
        ('{"id": "a", "expr": 3}', "expr must be a string"),
        ('{"id": 7, "expr": "x"}', "id must be a string"),
        ('{"id": "a", "expr": "x", "semantics": "ceil"}', "semantics must be"),
        # Not a name at all (an unhashable JSON value raised a TypeError before; fuzzing).
        ('{"id": "a", "expr": "x", "semantics": ["floor"]}', "semantics must be"),
        ('{"id": "a", "expr": "x", "semantics": {"floor": 1}}', "semantics must be"),
        ('{"id": "a", "expr": "x", "vars": {"x": [3, 1]}}', "empty range"),
        ('{"id": "a", "expr": "x", "vars": {"x": [0]}}', "expected [lo, hi]"),
        ('{"id": "a", "expr": "x", "vars": {"x": [0, 1.5]}}', "not an integer or null"),
        ('{"id": "a", "expr": "x", "vars": {"x": [false, 1]}}', "not an integer or null"),
        ('{"id": "a", "expr": "x", "vars": {"x y": [0, 1]}}', "not a variable name"),
        ('{"id": "a", "expr": "x", "vars": [[0, 1]]}', "vars must be an object"),
        ("[1, 2]", "expected a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "invalid JSON"),
    ],
)
def test_batch_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    """Each kind of bad line gets an error naming its line number and why."""
    path = write_batch(tmp_path, [json.dumps({"id": "first", "expr": "x"}), line])
    status, out, _ = run(capsys, "simplify", "--batch", path)
    assert status == 1
    first, bad = batch_lines(out)
    assert first["output"] == "x"
    assert bad["error"].startswith("line 2: ")
    assert message in bad["error"]
    assert bad["id"] == ("a" if '"id": "a"' in line else None)


def test_batch_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--batch - reads standard input."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(SEED_LINE) + "\n"))
    status, out, _ = run(capsys, "simplify", "--batch", "-")
    assert status == 0
    (record,) = batch_lines(out)
    assert (record["output"], record["ops_before"], record["ops_after"]) == (SEED_RESULT, 2, 0)


def test_batch_binary_stdin_with_bad_utf8(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line that is not UTF-8 is an error line; the lines around it are processed."""
    data = b'{"id": "a", "expr": "x"}\n{"id": "\xff", "expr": "x"}\n{"id": "b", "expr": "y"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    status, out, _ = run(capsys, "simplify", "--batch", "-")
    assert status == 1
    a, bad, b = batch_lines(out)
    assert (a["output"], b["output"]) == ("x", "y")
    assert bad == {"id": None, "error": "line 2: not valid UTF-8"}


def test_batch_semantics_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Lines without semantics use floor, or --semantics when it is given."""
    path = write_batch(tmp_path, [json.dumps({"id": "a", "expr": "x//4"})])
    _, floor_out, _ = run(capsys, "simplify", "--batch", path)
    _, trunc_out, _ = run(capsys, "simplify", "--batch", path, "--semantics", "trunc")
    assert batch_lines(floor_out)[0]["output"] == "x//4"
    assert quorem.parse(batch_lines(trunc_out)[0]["output"], None, "trunc") is quorem.parse(
        "truncdiv(x, 4)"
    )


def test_batch_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable batch file is an input error (exit 2)."""
    status, out, err = run(capsys, "simplify", "--batch", str(tmp_path / "nope.jsonl"))
    assert (status, out) == (2, "")
    assert err.startswith("quorem simplify: error: cannot read ")


def test_batch_rejects_single_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--batch with an EXPR or --var is a usage error (those belong to the lines)."""
    path = write_batch(tmp_path, [json.dumps({"expr": "x"})])
    assert run(capsys, "simplify", "x", "--batch", path)[0] == 2
    assert run(capsys, "simplify", "--batch", path, "--var", "x=0:1")[0] == 2


# ------------------------------------------------------------------------- demo, rules
def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo simplifies the worked example and shows the trace and op counts."""
    status, out, err = run(capsys, "demo")
    assert (status, err) == (0, "")
    assert DEMO_EXPR in out
    assert f"result:    {SEED_RESULT}" in out
    assert "ops:       2 -> 0" in out
    assert "1. divmod-recombine:" in out
    assert "stop reason: fixed point" in out


def test_rules_lists_shipped_rules(capsys: pytest.CaptureFixture[str]) -> None:
    """`quorem rules` lists each rule with its location, semantics and doc."""
    status, out, _ = run(capsys, "rules")
    assert status == 0
    rules = quorem.default_ruleset().rules
    for rule in rules:
        assert rule.name in out
        assert rule.location in out
        assert rule.doc in out
    assert any(line.split()[1:2] == ["any"] for line in out.splitlines())
    assert f"{len(rules)} rules (proof status" in out


def test_rules_show_proof_status(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`quorem rules` shows each rule's proof status from the proof cache."""
    pytest.importorskip("z3")
    from quorem.cli.verify import main as verify_main

    monkeypatch.setenv("QUOREM_CACHE_DIR", str(tmp_path))
    assert run(capsys, "rules")[0] == 0
    assert verify_main(["--rule", "max-of-same", "--obligation", "equivalence"]) == 0
    capsys.readouterr()
    _, out, _ = run(capsys, "rules")
    line = next(x for x in out.splitlines() if x.startswith("max-of-same"))
    assert "proven" in line.split()


# --------------------------------------------------------------------------- processes
@pytest.mark.slow
def test_console_script_demo() -> None:
    """The installed `quorem` console script runs the demo."""
    script = Path(sys.executable).with_name("quorem")
    if not script.exists():
        pytest.skip("quorem console script not installed next to this interpreter")
    proc = subprocess.run(
        [str(script), "demo"], capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert SEED_RESULT in proc.stdout


@pytest.mark.slow
def test_python_m_batch_stdin() -> None:
    """`python -m quorem simplify --batch -` reads stdin and flushes JSON lines."""
    data = json.dumps(SEED_LINE) + "\n" + "not json\n"
    proc = subprocess.run(
        [sys.executable, "-m", "quorem", "simplify", "--batch", "-"],
        input=data,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1
    good, bad = batch_lines(proc.stdout)
    assert (good["output"], good["ops_before"], good["ops_after"]) == (SEED_RESULT, 2, 0)
    assert bad["error"].startswith("line 2: invalid JSON")
    assert "Traceback" not in proc.stderr


def test_python_m_bad_var_no_traceback() -> None:
    """A bad --var in a real process exits 2 with a message and no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "quorem", "simplify", "x", "--var", "x=zero:1"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "argument --var" in proc.stderr
    assert "Traceback" not in proc.stderr
