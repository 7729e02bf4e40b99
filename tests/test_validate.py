"""Translation validation: every rewrite step the engine takes is checked with Z3."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("z3")

from support import SEED_CASES
from test_goals import GOALS

import quorem
from quorem.rewrite import Step
from quorem.ruleset import RuleSet
from quorem.verify.validate import check_step, validate_trace


def _cases() -> list[tuple[str, dict[str, tuple[int, int]], str]]:
    cases = [(g[1], g[2], "floor") for g in GOALS]
    for line in SEED_CASES.read_text().splitlines():
        c = json.loads(line)
        bounds = {k: (v[0], v[1]) for k, v in c["vars"].items()}
        cases.append((c["expr"], bounds, c.get("semantics", "floor")))
    return cases


@pytest.mark.slow
def test_every_step_on_the_example_corpora_is_valid() -> None:
    """All rewrite steps taken on the goal table and the seed corpus are proven by Z3."""
    steps = 0
    for text, bounds, sem in _cases():
        for trunc in (False, True):
            semantics = "trunc" if trunc else sem
            r = quorem.explain(quorem.parse(text, bounds, semantics))
            checks = validate_trace(r.trace)
            bad = [c for c in checks if c.verdict != "valid"]
            assert not bad, (text, semantics, bad[0].step, bad[0].counterexample)
            steps += len(checks)
    assert steps > 50


def test_a_wrong_step_is_caught_with_a_point() -> None:
    """A step whose result differs somewhere in the box is invalid, with that point."""
    x = quorem.var("x", -8, 8)
    step = Step("made-up", x % 4, x)
    check = check_step(step)
    assert check.verdict == "invalid"
    assert check.counterexample is not None
    xv = check.counterexample["x"]
    assert quorem.evaluate(x % 4, {"x": xv}) != xv


def test_an_unsound_rule_is_stopped_by_validation() -> None:
    """Simplifying with an unsound rule (no 0 <= x guard) fails validation."""
    rules = RuleSet.from_text(
        "rule bad\n  doc: d\n  semantics: floor\n  pattern: x % N\n  guard: vmax(x) < N\n"
        "  rewrite: x\n",
        allow_unproven=True,
    )
    r = quorem.explain(quorem.parse("y % 4", {"y": (-3, 3)}), rules)
    assert r.steps == 1
    (check,) = validate_trace(r.trace)
    assert check.verdict == "invalid"


def test_cli_validate(capsys: pytest.CaptureFixture[str]) -> None:
    """quorem simplify --validate reports the steps it checked."""
    from quorem.cli.main import main

    code = main(["simplify", "(x*4 + 3)//8 + x%4", "--var", "x=0:100", "--validate"])
    assert code == 0
    assert "all valid" in capsys.readouterr().out
