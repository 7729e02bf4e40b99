"""benchmarks/confirm.py summarizes a `quorem verify --confirm cvc5 --json` report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import confirm as bench


def _row(name: str, kind: str, verdict: str | None, seconds: float = 1.0) -> dict[str, object]:
    row: dict[str, object] = {
        "name": name,
        "file": f"/x/rules/{name.split('-', maxsplit=1)[0]}.rules",
        "semantics": "floor",
        "obligation": kind,
        "status": "proven",
        "seconds": seconds,
    }
    if verdict is not None:
        row["confirmation"] = {
            "verdict": verdict,
            "answer": "unsat" if verdict == "z3+cvc5" else "unknown",
            "seconds": 2.0,
            "reason": "timeout" if verdict == "z3 only" else "",
        }
    return row


def test_report_is_summarized_per_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        _row("fold-a", "equivalence", "z3+cvc5"),
        _row("fold-a", "termination k=1", "no query"),
        _row("nest-b", "equivalence", "z3 only"),
        _row("nest-b", "int64", None),
    ]
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"rules": rows, "summary": {}}))
    assert bench.main(["--report", str(report)]) in (0, None)
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines() if ln.strip()}
    # verdict columns: z3+cvc5, z3 only, disagree, no query, not checked
    assert lines["fold"][:5] == ["1", "0", "0", "1", "0"]
    assert lines["nest"][:5] == ["0", "1", "0", "0", "1"]
    assert lines["total"][:5] == ["1", "1", "0", "1", "1"]
    assert "z3 only nest-b [floor equivalence]" in " ".join(out.split())


def test_a_bad_report_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.json"
    assert bench.main(["--report", str(missing)]) == 2
    assert "--report" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    assert bench.main(["--report", str(other)]) == 2
    assert "not a quorem verify --json report" in capsys.readouterr().err


def test_an_empty_report_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No results (``--rule`` with only interval proofs asked): said, not a traceback."""
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"rules": [], "summary": {}}))
    assert bench.main(["--report", str(empty)]) == 2
    assert "no results" in capsys.readouterr().err


def test_every_rule_runs_without_rule_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--rule`` quorem verify gets no rule filter, so the interval proofs run."""
    seen: list[list[str]] = []

    class Done:
        returncode = 0
        stdout = json.dumps({"rules": [_row("fold-a", "interval", "z3+cvc5")], "summary": {}})
        stderr = ""

    def run(argv: list[str], **_: object) -> Done:
        seen.append(argv)
        return Done()

    monkeypatch.setattr("benchmarks.confirm.subprocess.run", run)
    assert bench.main(["--obligation", "interval"]) in (0, None)
    assert seen and "--rule" not in seen[0]
    assert bench.main(["--obligation", "interval", "--rule", "fold-*"]) in (0, None)
    assert "--rule" in seen[-1]
