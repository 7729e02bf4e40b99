"""Failures the fuzzers once found, kept as data and replayed: each must stay fixed.

A case worth keeping is copied from the fuzzer's output folder (``fuzz-failures/``, not
tracked) to ``tests/data/fuzz-regressions/TARGET/``; this test replays every one with its
target and expects it to pass, where it once failed with the recorded ``kind``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fuzz import TARGETS
from benchmarks.fuzz.harness import replay

DATA = Path(__file__).resolve().parent / "data" / "fuzz-regressions"
CASES = sorted(DATA.glob("*/*.json"))


def test_there_are_regression_cases() -> None:
    assert CASES, f"no cases under {DATA}"


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_a_recorded_failure_stays_fixed(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["target"] == path.parent.name, "a case lives under its target's folder"
    assert record["kind"] is not None, "a recorded case is a failure"
    out = replay(TARGETS[record["target"]](), record["case"], 20.0)
    assert out.kind is None, (out.key, out.message)
