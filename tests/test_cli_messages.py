"""Every command's messages say what to do: named by the command, with the option to give.

Each subcommand of ``quorem --help`` is run with bad input of each kind it can get (a
usage error, an unreadable file, a bad or empty rules file, an unreadable corpus line):
every message line names the command (``quorem simplify: error: ...``, ``quorem map
simplify: error: ...``), never another one or none, and the status is 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from quorem.cli.main import build_parser, main

RULE = """\
rule tiny
  doc:       x + 0 == x
  semantics: floor
  pattern:   x + 0
  rewrite:   x
"""
EMPTY_RULES = {"empty": "", "comments": "# only a comment\n\n   \n# another\n", "bom": "\ufeff\n"}
MAP = "(d0) -> (d0 floordiv 4), domain: d0 in [0, 15]"


def _commands() -> set[str]:
    """The subcommands ``quorem --help`` lists."""
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    raise AssertionError("quorem has no subcommands")


def _bad_runs(tmp: Path) -> dict[str, list[list[str]]]:
    """For each command, invocations that must fail with status 2."""
    missing = str(tmp / "missing.file")
    bad_rules = tmp / "bad.rules"
    bad_rules.write_text("rule broken\n  pattern: x +\n", encoding="utf-8")
    empty = tmp / "empty.rules"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    corpus = tmp / "corpus.jsonl"
    corpus.write_text('{"expr": "x//4", "vars": {"x": [0, 9]}}\nnot json\n', encoding="utf-8")
    rules_opts = [["--rules", missing], ["--rules", str(bad_rules)], ["--rules", str(empty)]]
    return {
        "simplify": [["simplify", "("], ["simplify", "x", "--bogus"], ["simplify"]]
        + [["simplify", "x", *o] for o in rules_opts]
        + [["simplify", "--batch", missing]],
        "emit": [["emit", "x//4"], ["emit", "("], ["emit", "x", "--var", "x=0:1", "--name", "int"]]
        + [["emit", "x", "--var", "x=0:1", *o] for o in rules_opts],
        "demo": [["demo", "--bogus"]],
        "rules": [["rules", missing], ["rules", str(bad_rules)], ["rules", str(empty)]]
        + [["rules", *o] for o in rules_opts],
        "map": [["map", "simplify", "nonsense"], ["map", "simplify", "--batch", missing]]
        + [["map", "simplify", MAP, *o] for o in rules_opts],
        "hlo": [["hlo", missing]],
        "coverage": [["coverage", missing]] + [["coverage", str(corpus), *o] for o in rules_opts],
        "verify": [
            ["verify", missing],
            ["verify", str(bad_rules)],
            ["verify", str(empty)],
            ["verify", "--arity", "0"],
        ],
        "discover": [["discover", missing], ["discover", str(corpus)]]
        + [["discover", str(corpus), *o] for o in rules_opts],
    }


def _prefix(argv: list[str]) -> str:
    return "quorem map simplify" if argv[0] == "map" else f"quorem {argv[0]}"


def test_every_command_has_bad_inputs_here(tmp_path: Path) -> None:
    assert set(_bad_runs(tmp_path)) == _commands()


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_message_names_its_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every line of every error report begins with the command run (continuations aside)."""
    for argv in _bad_runs(tmp_path)[command]:
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 2, (argv, err)
        # Argparse's usage lines and indented continuations (a caret) are not messages.
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith((" ", "usage:"))]
        assert lines, argv
        prefix = _prefix(argv)
        assert all(ln.startswith(f"{prefix}: ") for ln in lines), (argv, err)
        assert any(ln.startswith(f"{prefix}: error: ") for ln in lines), (argv, err)


@pytest.mark.parametrize("command", ["simplify", "rules", "coverage", "verify", "map"])
@pytest.mark.parametrize("kind", sorted(EMPTY_RULES))
def test_a_rules_file_without_rules_is_an_input_error_everywhere(
    command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No rule in a rules file (empty, comments, a byte-order mark): exit 2, file named."""
    empty = tmp_path / f"{kind}.rules"
    empty.write_text(EMPTY_RULES[kind], encoding="utf-8")
    good = tmp_path / "good.rules"
    good.write_text(RULE, encoding="utf-8")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"expr": "x"}\n', encoding="utf-8")
    argv = {
        "simplify": ["simplify", "x", "--rules", str(good), "--rules", str(empty)],
        "rules": ["rules", str(empty), str(good)],
        "coverage": ["coverage", str(corpus), "--rules", str(empty)],
        "verify": ["verify", str(good), str(empty), "--no-cache"],
        "map": ["map", "simplify", MAP, "--rules", str(empty)],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{empty}:1:1: no rules: the file " in err
    assert ("is empty" if kind != "comments" else "holds only comments") in err


@pytest.mark.parametrize(
    ("expr", "given", "wanted"),
    [
        ("x//4", [], ["x"]),
        ("x//4 + y%3", ["--var", "y=0:2"], ["x"]),
        ("x*z + y", [], ["x", "y", "z"]),
    ],
)
def test_emit_shows_the_var_option_to_add(
    expr: str, given: list[str], wanted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A variable of EXPR without --var: the message shows each --var NAME=LO:HI to add."""
    assert main(["emit", expr, *given]) == 2
    err = capsys.readouterr().err
    assert err.startswith("quorem emit: error: ")
    assert "add " + " ".join(f"--var {n}=LO:HI" for n in wanted) in err
    # With those options the command succeeds.
    options = [a for n in wanted for a in ("--var", f"{n}=0:7")]
    assert main(["emit", expr, *given, *options]) == 0
    capsys.readouterr()


def test_emit_needs_no_var_for_a_variable_simplified_away(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["emit", "x - x + y", "--var", "y=0:3"]) == 0
    assert "int64_t y" in capsys.readouterr().out


# ------------------------------------------------------------------------------ discover
def _discovery(**fields: Any) -> Any:
    from quorem.verify.discover import Discovery

    base: dict[str, Any] = {
        "cases": 4,
        "ops_input": 8,
        "ops_before": 6,
        "ops_after": 6,
        "patterns": 3,
        "proposals": [],
        "stuck_before": [],
        "frequent": 2,
    }
    return Discovery(**{**base, **fields})


def _proposal(status: str, kept: bool = False) -> Any:
    return SimpleNamespace(status=status, kept=kept)


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"ops_before": 0, "patterns": 0, "frequent": 0}, "the rules leave no // or %"),
        ({"patterns": 0, "frequent": 0}, "the 6 // and % left generalise to no residue pattern"),
        ({"frequent": 0}, "none of the 3 residue patterns occurs in 5 or more cases"),
        ({}, "no candidate rewrite with fewer // and % was found for the 2 residue patterns"),
        ({"proposals": [_proposal("unproven")] * 2}, "none of the 2 candidates was proven"),
        ({"proposals": [_proposal("no-gain")]}, "the 1 proven candidates remove no // or %"),
        ({"proposals": [_proposal("proven", kept=True)]}, ""),
    ],
)
def test_discover_says_why_it_proposes_no_rule(fields: dict[str, Any], why: str) -> None:
    """Each way of ending with no rule has its reason; a rule kept has none."""
    pytest.importorskip("z3")
    from quorem.cli.discover import why_no_rule
    from quorem.verify.discover import Settings

    found = why_no_rule(_discovery(**fields), Settings(min_cases=5))
    assert found.startswith(why) if why else found == ""


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"expr": "x//4*4 + x%4", "vars": {"x": [0, 9]}}', "the rules leave no // or %"),
        ('{"expr": "(x*3 + 1)//7", "vars": {"x": [0, 99]}}', "none of the 1 residue patterns"),
    ],
)
def test_discover_prints_the_reason(
    line: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--apply, --json and the progress on stderr all give the reason."""
    pytest.importorskip("z3")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(line + "\n", encoding="utf-8")
    assert main(["discover", str(corpus), "--apply"]) == 0
    out, err = capsys.readouterr()
    assert f"0 of 0 candidates proven; no rule proposed: {why}" in out
    assert f"quorem discover: no rule proposed: {why}" in err
    assert main(["discover", str(corpus), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["why_no_rule"].startswith(why)


def test_the_api_emit_shows_the_params_to_give() -> None:
    """quorem.emit with a variable missing from params: the params list to give."""
    import quorem
    from quorem.codegen import EmitError

    t = quorem.parse("x*y + z", {"x": (0, 3), "y": (0, 3), "z": (0, 1)})
    with pytest.raises(EmitError, match=r"params=\['y', 'x', 'z'\]"):
        quorem.emit(t, ["y"])


def test_warnings_name_the_command_too(capsys: pytest.CaptureFixture[str]) -> None:
    """simplify's warnings (an unused --var, conditions that never hold) name it as well."""
    argv = ["simplify", "x", "--var", "x=0:9", "--var", "X=0:1", "--given", "x > 20"]
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert all(ln.startswith("quorem simplify: warning: ") for ln in lines), lines
