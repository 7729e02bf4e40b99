"""The rule author's bench on the command line (issue 18): --rules, --only-rules, JSON
outputs, batch reports, rules that cycle, every error of a rules file."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import quorem
from quorem.cli.main import main
from quorem.cli.rules_options import RulesUsageError, add_rules_options, ruleset_from_args
from quorem.errors import RuleError, RuleErrors
from quorem.indexing.mapsyntax import parse_map, print_map
from quorem.indexing.simplify import simplify_map
from quorem.rewrite import StopReason, rewrite
from quorem.rulefile import parse_rules
from quorem.ruleset import default_ruleset

# Two rules undoing each other: rewriting with both must stop and name them.
CYCLE_RULES = """\
rule mod-out
  doc: x % N as x - (x // N)*N
  semantics: floor
  pattern: x % N
  guard: N > 0
  rewrite: x - (x // N)*N

rule mod-back
  doc: x - (x // N)*N as x % N
  semantics: floor
  pattern: x - (x // N)*N
  guard: N > 0
  rewrite: x % N
"""

# Fires on every division by a positive constant and never ends: each step makes a
# new numerator.
GROWING_RULES = """\
rule shift-forever
  doc: (x + N) // N - 1 == x // N, applied without end
  semantics: floor
  pattern: x // N
  guard: N > 0
  rewrite: (x + N) // N - 1
"""

# Unsound on purpose (x // 4 is not x): shows the user's rule runs before the shipped.
FIRST_RULES = """\
rule div-four-is-x
  doc: a deliberately wrong rule, to see which rule runs first
  semantics: floor
  pattern: x // 4
  rewrite: x
"""

BAD_RULES = """\
rule Bad-Name
  doc: x
rule cube-div
  doc: never matches
  semantics: floor
  pattern: (x * x * x) // N
  rewrite: x
rule fine
  doc: fine
  semantics: floor
  pattern: x // 1
  rewrite: x
rule no-rewrite
  doc: d
  semantics: floor
  pattern: x % 1
  bogus: 3
  rewrite: 0
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------ Python API
def test_empty_ruleset_applies_no_rule() -> None:
    """RuleSet([]) is a rule set of no rule, not "the default" (it is falsy by length)."""
    t = quorem.parse("(x*4 + y)//4", {"x": (0, 10), "y": (0, 3)})
    assert quorem.simplify(t) is quorem.parse("x", {"x": (0, 10)})
    assert quorem.simplify(t, quorem.RuleSet([])) is t
    r = quorem.explain(t, quorem.RuleSet([]))
    assert (r.steps, r.reason) == (0, StopReason.FIXED_POINT)
    assert quorem.RuleSet([])


def test_empty_ruleset_on_maps_applies_no_term_rule() -> None:
    """The map simplifier takes RuleSet([]) as no rule for results, not the shipped set."""
    m = parse_map("(d0) -> ((d0 * 4 + 3) floordiv 4), domain: d0 in [0, 63]")
    shipped = print_map(simplify_map(m))
    bare = print_map(simplify_map(m, rules=quorem.RuleSet([])))
    assert shipped == "(d0) -> (d0), domain: d0 in [0, 63]"
    assert "floordiv" in bare or "/" in bare, bare


def test_shipped_extend_and_from_files(tmp_path: Path) -> None:
    """extend makes a new set (the shipped one unchanged); from_files puts the files first."""
    shipped = quorem.RuleSet.shipped()
    assert shipped is default_ruleset()
    n = len(shipped)
    user = parse_rules(FIRST_RULES, "first.rules")
    before = shipped.extend(user, first=True, allow_unproven=True)
    after = shipped.extend(user, allow_unproven=True)
    assert len(shipped) == n
    assert before.rules[0].name == "div-four-is-x"
    assert after.rules[-1].name == "div-four-is-x"
    t = quorem.parse("x // 4", {"x": (0, 3)})
    assert quorem.to_text(quorem.simplify(t, before)) == "x"
    assert quorem.to_text(quorem.simplify(t, after)) == "0"  # a shipped rule took it first
    path = write(tmp_path, "first.rules", FIRST_RULES)
    loaded = quorem.RuleSet.from_files([path], with_shipped=True, allow_unproven=True)
    assert [r.name for r in loaded.rules[:2]] == ["div-four-is-x", shipped.rules[0].name]
    assert len(quorem.RuleSet.from_files([path], allow_unproven=True)) == 1


def test_extend_refuses_a_taken_name_at_the_new_rule() -> None:
    text = FIRST_RULES.replace("div-four-is-x", default_ruleset().rules[3].name)
    with pytest.raises(RuleError) as info:
        default_ruleset().extend(parse_rules(text, "clash.rules"))
    assert str(info.value).startswith("clash.rules:1:1: rule name ")


# ------------------------------------------------------------------ cycles and limits
def test_cycle_names_its_rules() -> None:
    rules = quorem.RuleSet.from_text(CYCLE_RULES, allow_unproven=True)
    t = quorem.parse("(x + y) % 4", {"x": (0, 100)})
    for trace in (True, False):
        r = rewrite(t, rules, trace=trace)
        assert r.reason is StopReason.CYCLE
        assert r.culprits == ("mod-out", "mod-back")
        assert len(r.trace) == (2 if trace else 0)  # untraced runs stay untraced
    fine = quorem.explain(quorem.parse("x // 1"))
    assert fine.culprits == ()


def test_step_limit_names_the_busiest_rule() -> None:
    rules = quorem.RuleSet.from_text(GROWING_RULES, allow_unproven=True)
    r = quorem.explain(quorem.parse("x // 3", {"x": (0, 100)}), rules, max_steps=50)
    assert r.reason in {StopReason.STEP_LIMIT, StopReason.SIZE_LIMIT}
    assert r.culprits == ("shift-forever",)


# --------------------------------------------------------------------------- the CLI
def test_rules_option_runs_user_rules_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "first.rules", FIRST_RULES)
    assert run(capsys, "simplify", "x // 4", "--var", "x=0:100")[:2] == (0, "x//4\n")
    unproven = ("--rules", path, "--allow-unproven")  # a toy rule, not proven
    status, out, _ = run(capsys, "simplify", "x // 4", "--var", "x=0:100", *unproven)
    assert (status, out) == (0, "x\n")
    status, out, _ = run(capsys, "emit", "x // 4", "--var", "x=0:100", *unproven)
    assert status == 0
    assert "return x;" in out


def test_only_rules_drops_the_shipped_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "first.rules", FIRST_RULES)
    expr = "(x*8 + y) % 8"
    bounds = ("--var", "x=0:3", "--var", "y=0:7")
    assert run(capsys, "simplify", expr, *bounds)[1] == "y\n"
    status, out, _ = run(
        capsys, "simplify", expr, *bounds, "--rules", path, "--only-rules", "--allow-unproven"
    )
    assert (status, out) == (0, "(x*8 + y)%8\n")
    status, _, err = run(capsys, "simplify", expr, "--only-rules")
    assert status == 2
    assert "--only-rules needs" in err


def test_ruleset_from_args_is_the_shared_helper(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_rules_options(parser)
    assert ruleset_from_args(parser.parse_args([])) is default_ruleset()
    path = write(tmp_path, "a.rules", FIRST_RULES)
    assert len(ruleset_from_args(parser.parse_args(["--rules", path, "--only-rules"]))) == 1
    with pytest.raises(RulesUsageError):
        ruleset_from_args(parser.parse_args(["--only-rules"]))


def test_every_error_of_a_rules_file_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "bad.rules", BAD_RULES)
    status, out, err = run(capsys, "simplify", "x", "--rules", path)
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert [line.removeprefix("quorem simplify: error: ").split(": ")[0] for line in lines] == [
        f"{path}:1:6",
        f"{path}:6:15",
        f"{path}:17:3",
    ]
    assert all(line.startswith("quorem simplify: error: ") for line in lines)
    assert "never matches" in lines[1]
    with pytest.raises(RuleErrors) as info:
        parse_rules(BAD_RULES, "bad.rules")
    assert len(info.value.errors) == 3
    assert (info.value.line, info.value.col) == (1, 6)


def test_errors_of_several_files_are_all_reported(tmp_path: Path) -> None:
    a = write(tmp_path, "a.rules", "rule x-y\n  doc: d\n  semantics: floor\n")
    b = write(tmp_path, "b.rules", "junk\n")
    with pytest.raises(RuleErrors) as info:
        quorem.RuleSet.from_files([a, b], allow_unproven=True)
    assert [(e.source, e.line) for e in info.value.errors] == [(a, 1), (b, 1)]


@pytest.mark.parametrize(
    "pattern",
    ["(x * x * x) // N", "(x * (y * z)) % N", "x * y * z", "(x*y)*(z*w) // N"],
)
def test_a_product_of_products_is_refused_at_load(pattern: str) -> None:
    text = f"rule p-q\n  doc: d\n  semantics: floor\n  pattern: {pattern}\n  rewrite: x\n"
    with pytest.raises(RuleError, match="never matches") as info:
        parse_rules(text, "p.rules")
    assert info.value.line == 4


def test_a_product_of_two_still_matches() -> None:
    """The refusal is exact: a product of two factors is matched as before."""
    text = (
        "rule prod-mod\n  doc: d\n  semantics: floor\n  pattern: (x * y) % N\n"
        "  guard: vmin(x*y) >= 0 and vmax(x*y) < N\n  rewrite: x * y\n"
    )
    rules = quorem.RuleSet.from_text(text, allow_unproven=True)
    t = quorem.parse("(a*b) % 100", {"a": (0, 9), "b": (0, 9)})
    assert quorem.to_text(quorem.simplify(t, rules)) == "a*b"


def test_batch_reports_counts_stop_reason_and_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = {"id": "a", "expr": "((x*4 + y)//4)*4 + (x*4+y)%4", "vars": {"x": [0, 9], "y": [0, 3]}}
    batch = write(tmp_path, "in.jsonl", json.dumps(line) + "\n")
    status, out, _ = run(capsys, "simplify", "--batch", batch)
    plain: dict[str, Any] = json.loads(out)
    assert status == 0
    assert plain["stop_reason"] == "fixed point"
    assert plain["culprits"] == []
    assert sum(plain["counts"].values()) == plain["steps"] > 0
    assert list(plain["counts"]) == plain["rules"]
    assert "trace" not in plain
    status, out, _ = run(capsys, "simplify", "--batch", batch, "--explain")
    traced = json.loads(out)
    assert Counter(s["rule"] for s in traced["trace"]) == Counter(traced["counts"])
    assert len(traced["trace"]) == traced["steps"] == plain["steps"]
    first = traced["trace"][0]
    assert set(first) == {"rule", "before", "after"}
    assert first["before"] != first["after"]
    assert traced["output"] == plain["output"] == "x*4 + y"


def test_batch_and_explain_name_a_cycle(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rules = write(tmp_path, "cycle.rules", CYCLE_RULES)
    batch = write(tmp_path, "in.jsonl", json.dumps({"id": "c", "expr": "(x + y) % 4"}) + "\n")
    status, out, err = run(
        capsys, "simplify", "--batch", batch, "--rules", rules, "--allow-unproven"
    )
    obj = json.loads(out)
    assert status == 0
    assert (obj["stop_reason"], obj["culprits"]) == ("cycle", ["mod-out", "mod-back"])
    assert "rules: mod-out, mod-back" in err
    status, out, _ = run(
        capsys, "simplify", "(x + y) % 4", "--rules", rules, "--allow-unproven", "--explain"
    )
    assert "rules in the cycle: mod-out, mod-back" in out


def test_rules_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "cycle.rules", CYCLE_RULES)
    status, out, _ = run(capsys, "rules", path, "--json")
    obj = json.loads(out)
    assert status == 0
    assert obj["count"] == 2
    first = obj["rules"][0]
    assert first["name"] == "mod-out"
    assert first["semantics"] == ["floor"]
    assert first["location"] == f"{path}:1"
    assert first["phase"] == "main"
    assert first["status"] == "unproven (floor)"  # no proof record beside the file
    status, out, _ = run(capsys, "rules", "--json")
    assert json.loads(out)["count"] == len(default_ruleset())
    status, out, _ = run(capsys, "rules", "--json", "--rules", path)
    names = [r["name"] for r in json.loads(out)["rules"]]
    assert names[:2] == ["mod-out", "mod-back"]
    assert len(names) == len(default_ruleset()) + 2
    assert run(capsys, "rules", path, "--rules", path)[0] == 2


def test_map_simplify_json_and_rules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "(d0) -> (d0 floordiv 4), domain: d0 in [0, 63]"
    status, out, _ = run(capsys, "map", "simplify", "--json", text)
    obj = json.loads(out)
    assert status == 0
    assert obj == {"input": text, "output": obj["output"], "known_empty": False}
    assert run(capsys, "map", "simplify", text)[1] == obj["output"] + "\n"
    path = write(tmp_path, "first.rules", FIRST_RULES)
    status, out, _ = run(capsys, "map", "simplify", "--rules", path, "--allow-unproven", text)
    assert (status, out) == (0, "(d0) -> (d0), domain: d0 in [0, 63]\n")
    batch = write(tmp_path, "maps.jsonl", json.dumps({"id": "m", "map": text}) + "\n")
    assert run(capsys, "map", "simplify", "--json", "--batch", batch)[0] == 2
    status, out, _ = run(
        capsys, "map", "simplify", "--batch", batch, "--rules", path, "--allow-unproven"
    )
    assert json.loads(out)["output"] == "(d0) -> (d0), domain: d0 in [0, 63]"
    bad = write(tmp_path, "bad.rules", BAD_RULES)
    status, _, err = run(capsys, "map", "simplify", "--rules", bad, text)
    assert status == 2
    assert err.count("quorem map simplify: error: ") == 3
