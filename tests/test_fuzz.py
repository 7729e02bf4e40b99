"""The fuzz harness (``python -m benchmarks.fuzz``) works: every target runs, and planted
failures of each kind (wrong result, traceback, hang in Python, hang out of reach of the
alarm) are found, recorded and replayed."""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path
from typing import ClassVar

import pytest

import quorem
from benchmarks.fuzz import TARGETS
from benchmarks.fuzz.__main__ import main
from benchmarks.fuzz.expr import ExprSoundness
from benchmarks.fuzz.harness import Case, Recorder, Target, replay, run_case, run_target, shrink


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_target_runs(name: str, tmp_path: Path) -> None:
    stats = run_target(
        name, TARGETS[name], seconds=0.7, seed=7, jobs=1, limit=20.0, recorder=Recorder(tmp_path)
    )
    assert stats.tried > 0
    assert stats.tried > stats.rejected  # most inputs get past the parser
    assert stats.expressions > 0


@pytest.mark.slow
def test_cases_are_json_and_reproducible() -> None:
    for name, factory in TARGETS.items():
        target = factory()
        for i in range(20):
            a = target.generate(random.Random(i))
            b = target.generate(random.Random(i))
            assert json.dumps(a) == json.dumps(b), name


def _off_by_one(t: quorem.Term) -> quorem.Term:
    return quorem.simplify(t) + 1


def test_planted_wrong_simplify_is_found() -> None:
    target = ExprSoundness(simplify=_off_by_one)
    kinds = [run_case(target, target.generate(random.Random(i)), 5.0).kind for i in range(50)]
    assert kinds.count("wrong") > 40  # all but the cases rejected or never defined


def test_a_known_wrong_rewrite_is_found() -> None:
    # A "simplifier" that rewrites x//4*4 to x, as a rule without its guard would.
    def drop(t: quorem.Term) -> quorem.Term:
        return quorem.var("x", 0, 9) if t is (quorem.var("x", 0, 9) // 4) * 4 else t

    case: Case = {"tree": ["*", ["//", ["v", "x"], ["c", 4]], ["c", 4]],
                  "vars": {"x": [0, 9]}, "points": [{"x": 5}], "via": "term"}  # fmt: skip
    out = run_case(ExprSoundness(simplify=drop), case, 5.0)
    assert out.kind == "wrong"
    assert "simplify changed the value" in out.key
    assert run_case(ExprSoundness(), case, 5.0).kind is None


class _Planted(Target):
    """Case ``mode``: pass, raise the documented error, crash, loop, or block the alarm."""

    name: ClassVar[str] = "planted"

    def generate(self, rng: random.Random) -> Case:
        return {"mode": rng.choice(("ok", "ok", "ok", "documented", "crash", "loop"))}

    def check(self, case: Case) -> int:
        mode = case["mode"]
        if mode == "documented":
            raise quorem.ParseError("bad", 1, 1)
        if mode == "crash":
            return 1 // 0
        if mode == "loop":
            while True:
                pass
        if mode == "stuck":  # beyond the reach of SIGALRM, as C code would be
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(60)
        return 1

    def warm(self) -> None:
        pass


class _Stuck(_Planted):
    def generate(self, rng: random.Random) -> Case:
        return {"mode": "stuck" if rng.random() < 0.5 else "ok"}


def test_failures_are_classified_and_recorded(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    stats = run_target("planted", _Planted, seconds=2.0, seed=1, jobs=2, limit=0.2,
                       recorder=recorder)  # fmt: skip
    assert stats.tried > 3
    assert stats.rejected > 0
    assert stats.failures["traceback"] > 0
    assert stats.failures["hang"] > 0
    assert stats.failures["wrong"] == 0
    keys = set(stats.by_key)
    assert any(k.startswith("ZeroDivisionError@") and "test_fuzz.py" in k for k in keys)
    assert any(k.startswith("hang@") for k in keys)
    files = sorted((tmp_path / "planted").glob("*.json"))
    assert files
    record = json.loads(files[0].read_text())
    out = replay(_Planted(), record["case"], 0.2)
    assert out.kind == record["kind"]


def test_the_watchdog_kills_a_stuck_worker(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    stats = run_target("planted", _Stuck, seconds=3.0, seed=3, jobs=1, limit=0.2,
                       recorder=recorder, grace=0.5)  # fmt: skip
    assert stats.by_key.get("hang@killed by the watchdog (stuck outside Python)", 0) >= 1
    assert stats.tried >= 2  # a new worker went on after the kill


def test_shrink_keeps_the_failure() -> None:
    target = ExprSoundness(simplify=_off_by_one)
    case = target.generate(random.Random(3))
    out = run_case(target, case, 5.0)
    assert out.kind == "wrong"
    small = shrink(target, case, out.key, 5.0, budget=5.0)
    assert len(json.dumps(small)) <= len(json.dumps(case))
    assert run_case(target, small, 5.0).key == out.key


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "fuzz.json"
    main(["--target", "expr-soundness", "--seconds", "1", "--out", str(summary),
          "--failures", str(tmp_path / "failures")])  # fmt: skip
    printed = capsys.readouterr().out
    assert "expr-soundness" in printed
    data = json.loads(summary.read_text())
    (row,) = data["targets"]
    assert row["inputs"] > 0
    assert set(row["failures"]) == {"traceback", "hang", "wrong"}
