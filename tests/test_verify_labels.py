"""``quorem verify`` explains every label it prints, and counts wrong values and overflows apart.

Every status, method and obligation the prover can report (found in its source, and in
a real run's results) is explained in ``quorem verify --help``; the summary counts the
unsound equivalence obligations (wrong values) apart from the unsound int64 ones
(overflows), in the text and in the JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("z3")

from support import REPO

from quorem.cli import verify as cli
from quorem.verify.confirm import DISAGREE, NO_QUERY, Z3_ONLY
from quorem.verify.prove import _BOUNDED_METHOD, PROVEN_STATUSES, SPLIT_METHOD

HELP = cli.LABELS_EPILOG

MIXED = """\
rule bad-add-mod
  doc:       (x + C)%C == x%C, wrong for trunc
  semantics: trunc
  pattern:   (x + C) % C
  rewrite:   x % C

rule good-add-mod
  doc:       (x + C)%C == x%C
  semantics: floor
  pattern:   (x + C) % C
  rewrite:   x % C

rule never
  doc:       never fires
  semantics: floor
  pattern:   x // C
  guard:     C > 0 and C < 0
  rewrite:   x
"""


def _method_heads(method: str) -> list[str]:
    """The labels a method is made of: ``IntAux, native-split (3 cases...)`` -> its parts."""
    heads = []
    for part in method.split(", "):
        head = re.split(r" \(|: ", part)[0].strip()
        heads.append(head if head != "measure" or ":" not in part else "measure:")
    return heads


def _explained(label: str) -> bool:
    pattern = rf"(^|[\s,\"]){re.escape(label)}($|[\s(:\",])"
    return re.search(pattern, HELP, re.MULTILINE) is not None


def test_the_labels_of_the_prover_source_are_explained() -> None:
    """Each status and method literal of the prover's source appears in the help."""
    sources = [REPO / "verify" / f for f in ("prove.py", "jobs.py")]
    sources += sorted((REPO / "verify" / "termination").glob("*.py"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    literal = re.findall(r'ProofResult\(\s*\w+(?:\.ob)?,\s*"([^"]+)",\s*"([^"]+)"', text)
    methods = {m for _, m in literal}
    statuses = {s for s, _ in literal}
    methods |= set(re.findall(r'return f?"((?:measure|nested order): [^"{]*)', text))
    methods |= set(re.findall(r'"method": f?"([^"{(]+)', text))
    assert methods and statuses
    for status in statuses | set(PROVEN_STATUSES) | {"unsound", "unknown", "proven-on-grid"}:
        assert _explained(status), status
    for method in methods:
        for head in _method_heads(method):
            assert _explained(head) or _explained(method), method
    for label in ("IntAux", "IntAux64", "native", SPLIT_METHOD, _BOUNDED_METHOD.strip(", ")):
        assert label in HELP, label
    for label in (DISAGREE.upper(), Z3_ONLY, NO_QUERY, "z3+cvc5", "seed-dependent", "(cached)"):
        assert label in HELP, label
    for kind in cli.OBLIGATIONS_ALL:
        assert _explained(kind), kind


def test_help_prints_the_labels(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "statuses:" in out and "methods (how the status was reached):" in out
    assert "  IntAux64 " in out  # laid out as written, not re-wrapped


@pytest.mark.parametrize("encoding", ["purify", "native", "native-split"])
def test_a_runs_labels_are_explained_and_failures_counted_apart(
    encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each result of a real run has explained labels; wrong values, overflows apart."""
    path = tmp_path / "mixed.rules"
    path.write_text(MIXED, encoding="utf-8")
    argv = [str(path), "--no-cache", "--encoding", encoding]
    assert cli.main([*argv, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    results, summary = report["rules"], report["summary"]
    for r in results:
        assert _explained(re.split(r"\(", r["status"])[0]), r["status"]
        for head in _method_heads(r["method"]):
            assert _explained(head), r["method"]
    unsound = [r for r in results if r["status"] == "unsound"]
    by_kind = [r["obligation"].split()[0] for r in unsound]
    assert summary["unsound"] == len(unsound) == summary["wrong_value"] + summary["overflow"]
    assert summary["wrong_value"] == by_kind.count("equivalence") >= 1
    assert summary["overflow"] == by_kind.count("int64") >= 1
    assert {"proven", "unsound", "unknown", "seconds"} <= set(summary)  # the keys kept
    assert cli.main(argv) == 1
    text = capsys.readouterr().out
    last = text.strip().splitlines()[-1]
    value, overflow = summary["wrong_value"], summary["overflow"]
    assert (
        f"{summary['unsound']} unsound ({value} wrong value{'' if value == 1 else 's'}, "
        f"{overflow} int64 overflow{'' if overflow == 1 else 's'})"
    ) in last


def test_no_failure_no_breakdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.rules"
    path.write_text(MIXED.split("\n\n")[1] + "\n", encoding="utf-8")
    assert cli.main([str(path), "--no-cache", "--obligation", "equivalence"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("1 proven, 0 unsound, 0 unknown")
