"""``quorem coverage``: per-rule counts that add up, shadowing, residues, the three reports."""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import REPO

import quorem.coverage.collect as module
from quorem.api import parse
from quorem.cli.main import main
from quorem.coverage.collect import Case, coverage, residue_shape
from quorem.ops import Semantics
from quorem.rewrite import rewrite_given
from quorem.ruleset import RuleSet, default_ruleset

CORPORA = REPO / "benchmarks" / "corpora"
# Corpora with plain cases, ``given`` conditions, and/or clauses (the context pass),
# early-phase rules taking terms from later ones, and symbolic divisors.
SAMPLE = ["given.jsonl", "masks.jsonl", "halide.jsonl", "ladder_nest.jsonl", "symbolic_div.jsonl"]

EXAMPLE = REPO / "docs" / "examples" / "coverage"  # the documentation's example


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def bench() -> tuple[Path, Path]:
    """The documentation example's rules file and corpus."""
    return EXAMPLE / "mine.rules", EXAMPLE / "corpus.jsonl"


def _batch_lines(path: Path) -> list[dict[str, Any]]:
    status, out, _ = run("simplify", "--batch", str(path))
    assert status == 0
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.slow
def test_applications_add_up_to_the_batch_run() -> None:
    """Per rule, the cases it fired in are the batch lines naming it, and the
    applications sum to the steps of the same runs."""
    paths = [CORPORA / name for name in SAMPLE]
    status, out, err = run("coverage", *map(str, paths), "--json")
    assert status == 0, err
    report = json.loads(out)
    batch = [line for p in paths for line in _batch_lines(p)]
    assert report["cases"] == len(batch)
    lines_naming: Counter[str] = Counter(name for line in batch for name in line["rules"])
    by_rule = {r["name"]: r for r in report["rules"]}
    assert {n: r["cases"] for n, r in by_rule.items() if r["cases"]} == dict(lines_naming)
    assert sum(r["applications"] for r in report["rules"]) == report["steps"]
    if all(isinstance(line["rules"], dict) for line in batch):  # counts per rule per line
        counts: Counter[str] = Counter()
        for line in batch:
            counts.update(line["rules"])
        assert {n: r["applications"] for n, r in by_rule.items() if r["applications"]} == counts
    # The steps are those of the library's runs, case by case.
    ruleset = default_ruleset()
    steps = 0
    for p in paths:
        for text in p.read_text(encoding="utf-8").splitlines():
            record = json.loads(text)
            sem = Semantics(record["semantics"])
            bounds = {k: tuple(v) for k, v in record.get("vars", {}).items()}
            term = parse(record["expr"], bounds, sem)
            given = [parse(g, bounds, sem) for g in record.get("given", [])]
            result = rewrite_given(term, ruleset, given)
            assert result.steps == sum(result.counts.values()), record["id"]
            steps += result.steps
    assert report["steps"] == steps
    assert steps > len(batch)  # the sample exercises the rules


def test_shadowed_never_fired_and_residues(bench: tuple[Path, Path]) -> None:
    rules, corpus = bench
    status, out, err = run("coverage", str(corpus), "--rules", str(rules), "--only-rules", "--json")
    assert status == 0, err
    report = json.loads(out)
    by_rule = {r["name"]: r for r in report["rules"]}
    assert list(by_rule) == ["mine-mod-small", "mine-mod-small-wide", "mine-div-huge"]
    small = by_rule["mine-mod-small"]
    assert (small["applications"], small["cases"], small["mods_removed"]) == (2, 2, 2)
    assert small["first"] == {"case": "small8", "before": "x%8", "after": "x"}
    # The wide rule matched x % 8 on [0, 7] only, where the first rule took it.
    assert by_rule["mine-mod-small-wide"]["preempted_by"] == {"mine-mod-small": 1}
    assert report["shadowed"] == ["mine-mod-small-wide"]
    assert report["never_fired"] == ["mine-mod-small-wide", "mine-div-huge"]
    assert report["never_fired_count"] == 2
    # The answer first: totals, the fired rules, the residues; every rule last.
    keys = list(report)
    assert keys.index("fired") < keys.index("residues") < keys.index("never_fired")
    assert keys[-1] == "rules"
    assert report["fired"] == [r for r in report["rules"] if r["applications"]]
    assert [r["name"] for r in report["fired"]] == ["mine-mod-small"]
    assert not by_rule["mine-div-huge"]["shadowed"]
    assert report["cases_with_divisions"] == 2
    shapes = {g["shape"]: g for g in report["residues"]}
    assert set(shapes) == {"a%C", "a//C", "(a*C + b)//C"}
    assert shapes["a%C"]["examples"] == [{"case": "wide", "residue": "x%8", "result": "x//3 + x%8"}]
    # With the shipped rules too, the file's rules come first.
    status, out, _ = run("coverage", str(corpus), "--rules", str(rules), "--json")
    report = json.loads(out)
    assert status == 0
    assert [r["name"] for r in report["rules"][:3]] == list(by_rule)
    assert len(report["rules"]) == 3 + len(default_ruleset())


def test_residue_shape_abstracts_literals_and_names() -> None:
    a = parse("(x*4 + y) // 8", {"x": (0, 9), "y": (0, 3)})
    b = parse("(i*2 + j) // 3", {"i": (0, 99), "j": (0, 1)})
    c = parse("(i*2 + j) % 3", {"i": (0, 99), "j": (0, 1)})
    assert residue_shape(a, Semantics.FLOOR) == residue_shape(b, Semantics.FLOOR)
    assert residue_shape(a, Semantics.FLOOR) == "(a*C + b)//C"
    assert residue_shape(c, Semantics.FLOOR) == "(a*C + b)%C"
    assert residue_shape(c, Semantics.TRUNC) == "floormod(a*C + b, C)"


def test_library_counts_divisions_removed_per_step() -> None:
    bounds = {"x": (0, 100)}
    cases = [
        Case("recombine", parse("(x//3)*3 + x%3", bounds), Semantics.FLOOR),
        Case("left", parse("x % 7 + 1", bounds), Semantics.FLOOR),
    ]
    report = coverage(cases, default_ruleset())
    stats = {s.name: s for s in report.rules}
    assert (stats["divmod-recombine"].divs_removed, stats["divmod-recombine"].mods_removed) == (
        1,
        1,
    )
    assert report.ops_before == 3
    assert report.ops_after == 1
    assert [g.shape for g in report.residues] == ["a%C"]
    assert report.steps == sum(s.applications for s in report.rules) == 1
    assert coverage([], RuleSet([])).rules == []


def test_text_report_and_exit_codes(bench: tuple[Path, Path], tmp_path: Path) -> None:
    rules, corpus = bench
    status, out, _ = run("coverage", str(corpus), "--rules", str(rules), "--only-rules")
    assert status == 0
    assert out.startswith("quorem coverage: 4 cases, 2 rule applications")
    assert "mine-mod-small  mine.rules:3" in out
    assert "shadowed (1: " in out
    assert "mine-mod-small-wide (mine.rules:10): taken by mine-mod-small (1)" in out
    # The answer first: fired rules, residues, shadowed; the rules that never fired are
    # counted, with the option that lists them.
    order = [out.index(h) for h in ("rule  ", "residues (", "shadowed (", "never fired: ")]
    assert order == sorted(order)
    assert out.rstrip().endswith("never fired: 2 of 3 rules (list them with --never-fired)")
    assert "mine-div-huge" not in out
    status, listed, _ = run(
        "coverage", str(corpus), "--rules", str(rules), "--only-rules", "--never-fired"
    )
    assert status == 0
    assert listed.rstrip().endswith(
        "never fired (2 of 3 rules):\n  mine-mod-small-wide, mine-div-huge"
    )
    assert listed.startswith(out[: out.index("never fired: ")])
    # Nothing fired: said so, and every rule counted as never fired.
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    status, out, _ = run("coverage", str(empty), "--rules", str(rules), "--only-rules")
    assert status == 0
    assert "\nno rule fired (3 rules)\n" in out
    assert out.rstrip().endswith("never fired: 3 of 3 rules (list them with --never-fired)")
    # A bad line is reported with its file and line, the others still counted: exit 1.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"expr": "x %% 3"}\n{"expr": "x % 3", "vars": {"x": [0, 2]}}\n')
    status, out, err = run("coverage", str(bad), "--json")
    assert status == 1
    assert f"{bad}:1: expr at 1:" in err
    assert json.loads(out)["cases"] == 1
    # Usage and input errors: exit 2, no traceback.
    status, _, err = run("coverage", str(tmp_path / "missing.jsonl"))
    assert status == 2
    assert "cannot read" in err
    assert "Traceback" not in err
    status, _, err = run("coverage", str(corpus), "--only-rules")
    assert (status, "--only-rules needs" in err) == (2, True)
    broken = tmp_path / "broken.rules"
    broken.write_text("rule oops\n  pattern: x %\n")
    status, _, err = run("coverage", str(corpus), "--rules", str(broken))
    assert status == 2
    assert f"{broken}:" in err


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and not os.environ.get("QUOREM_REQUIRE_CHROMIUM"):
        pytest.skip("chromium is not installed (CI sets QUOREM_REQUIRE_CHROMIUM=1)")
    assert found is not None, "QUOREM_REQUIRE_CHROMIUM is set but chromium is missing"
    return found


def _dump_dom(chromium: str, page: Path, tmp_path: Path, *extra: str) -> str:
    """The DOM of ``page`` once loaded in headless Chromium (scripts run)."""
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            *extra,
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


# Appended to a copy of the page (the page itself has no script): its layout in the
# window, written into the DOM for --dump-dom.
_MEASURE = """<script>
const topOf = (id) => {
  const e = document.getElementById(id);
  return e === null ? null : e.getBoundingClientRect().top + window.scrollY;
};
let right = 0;
for (const e of document.body.querySelectorAll("*")) {
  right = Math.max(right, e.getBoundingClientRect().right + window.scrollX);
}
const layout = {
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  right: right,
  tops: Object.fromEntries(
    ["summary", "chart", "residues", "rules", "shadowed", "never-fired"]
      .map((id) => [id, topOf(id)])
  ),
};
document.body.setAttribute("data-layout", JSON.stringify(layout));
</script>"""


def test_html_fits_1280_px_and_answers_first(bench: tuple[Path, Path], tmp_path: Path) -> None:
    """In a 1280 px wide window nothing sticks out (long terms, names and ids wrap inside
    their cells), and the summary and chart come before the tables, the residues before
    the rules, the rules that never fired last."""
    chromium = _chromium()
    rules, corpus = bench
    wide = tmp_path / "wide.jsonl"
    long_name = "a_variable_name_long_enough_to_need_a_line_of_its_own_" * 2
    terms = " + ".join(f"({long_name}*{k} + {k})//{k + 1}" for k in range(1, 9))
    wide.write_text(
        corpus.read_text(encoding="utf-8")
        + json.dumps(
            {"id": "an-id-without-spaces-" * 8, "expr": terms, "vars": {long_name: [0, 99]}}
        )
        + "\n"
        + json.dumps({"id": "recombine", "expr": f"({terms})//7*7 + ({terms})%7"})
        + "\n",
        encoding="utf-8",
    )
    page = tmp_path / "coverage.html"
    status, _, err = run("coverage", str(wide), "--rules", str(rules), "--html", str(page))
    assert status == 0, err
    measured = tmp_path / "measured.html"
    text = page.read_text(encoding="utf-8")
    measured.write_text(text.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = _dump_dom(chromium, measured, tmp_path, "--window-size=1280,900", "--hide-scrollbars")
    found = re.search(r'data-layout="([^"]*)"', dom)
    assert found is not None, dom[:2000]
    layout = json.loads(html.unescape(found.group(1)))
    assert layout["innerWidth"] == 1280
    assert layout["scrollWidth"] <= 1280, layout
    assert layout["right"] <= 1280, layout
    tops = layout["tops"]
    order = ["summary", "chart", "residues", "rules", "shadowed", "never-fired"]
    assert None not in tops.values(), tops
    assert [tops[k] for k in order] == sorted(tops[k] for k in order), tops
    assert tops["chart"] < 900  # in the first screen
    # The rules that never fired are folded: in the page, not in the way.
    assert '<details id="never-fired">' in text
    assert '<details id="never-fired" open' not in text


def test_html_renders_in_headless_chromium(bench: tuple[Path, Path], tmp_path: Path) -> None:
    chromium = _chromium()
    rules, corpus = bench
    page = tmp_path / "coverage.html"
    argv = ["coverage", str(corpus), "--rules", str(rules)]
    status, _, err = run(*argv, "--html", str(page))
    assert status == 0, err
    report = json.loads(run(*argv, "--json")[1])
    text = page.read_text(encoding="utf-8")
    for remote in ("http://", "https://", "<script", "<link"):
        if remote == "http://":  # only the SVG namespace may name a URL
            text_without_ns = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
            assert remote not in text_without_ns
        else:
            assert remote not in text
    dom = _dump_dom(chromium, page, tmp_path)
    assert dom.count('<tr class="rule') == len(report["rules"]) == 3 + len(default_ruleset())
    # The shipped rules the file's rules take terms from are shadowed too.
    assert dom.count('<tr class="rule shadowed"') == len(report["shadowed"]) > 1
    assert '<tr class="rule shadowed"><td class="name"><code>mine-mod-small-wide<' in dom
    assert '<tr class="rule"><td class="name"><code>mine-mod-small</code></td>' in dom
    removing = [r for r in report["rules"] if r["ops_removed"]]
    assert dom.count('<rect class="bar"') == len(removing) > 0
    assert dom.count('<tr class="residue"') == len(report["residues"]) > 0


def test_steps_count_the_clauses_rewritten_in_context() -> None:
    """The and/or context pass's applications are steps of the run (they were counted per
    rule but not in ``steps``, so coverage's totals did not add up)."""
    term = parse("x % 4 == 3 and x // 4 == 5", {"x": (0, 32)})
    result = rewrite_given(term, default_ruleset(), [])
    # x // 4 == 5 gives x the range [20, 23], in which x % 4 is one bucket: made in the
    # context pass (a comparison of constants folds where it is built, by no rule).
    assert result.counts["mod-of-one-bucket"] == 1
    assert str(result.term) == "x == 23"
    assert result.steps == sum(result.counts.values()) == 2


def test_an_engine_error_is_reported_not_raised(
    bench: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case whose rewrite raises is named on stderr (exit 1); the others still count."""
    real = rewrite_given  # what quorem.coverage.collect calls

    def flaky(term: Any, *args: Any, **kwargs: Any) -> Any:
        if "//" in str(term):
            raise RuntimeError("boom")
        return real(term, *args, **kwargs)

    monkeypatch.setattr(module, "rewrite_given", flaky)
    rules, corpus = bench
    status, out, err = run("coverage", str(corpus), "--rules", str(rules), "--json")
    assert status == 1
    assert "quorem coverage: wide: internal error, please report it: RuntimeError: boom" in err
    report = json.loads(out)
    assert [f["case"] for f in report["failed"]] == ["wide", "wide2"]
    assert report["cases"] == 4
    assert report["steps"] == 2
