"""``--jobs N``: batches and coverage in worker processes, the same output as in one (issue 36)."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO, examples

import quorem.cli.batch as jobs_module
from quorem.cli.coverage import read_cases
from quorem.cli.main import main
from quorem.coverage.collect import Case, coverage
from quorem.coverage.render import to_html, to_json, to_text
from quorem.jobs import RulesSpec, chunks
from quorem.ops import Semantics
from quorem.ruleset import RuleSet, default_ruleset

CORPORA = REPO / "benchmarks" / "corpora"
EXAMPLE = REPO / "docs" / "examples" / "coverage"
# Plain cases, ``given`` conditions (the engine's stand-in variables in traces), and/or
# clauses, early-phase rules, symbolic divisors: every kind of step and residue.
# (The first lines of each: the last of ladder_nest take 10000 steps each.)
SAMPLE = {
    "given.jsonl": 48,
    "masks.jsonl": 40,
    "halide.jsonl": 60,
    "ladder_nest.jsonl": 20,
    "symbolic_div.jsonl": 50,
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _without_seconds(out: str) -> list[dict[str, Any]]:
    """The batch output lines, without the time each rewrite took (it varies per run)."""
    lines = [json.loads(line) for line in out.splitlines()]
    for line in lines:
        line.pop("seconds", None)
    return lines


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first lines of the SAMPLE corpora, in one file."""
    lines = [
        line
        for name, n in SAMPLE.items()
        for line in (CORPORA / name).read_text(encoding="utf-8").splitlines()[:n]
    ]
    path = tmp_path_factory.mktemp("sample") / "sample.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def mixed_batch(tmp_path: Path) -> Path:
    """Several corpora's lines with every kind of bad line among them."""
    good = [
        line
        for name in ("given.jsonl", "masks.jsonl", "symbolic_div.jsonl")
        for line in (CORPORA / name).read_bytes().splitlines()[:15]
    ]
    bad = [
        b'{"expr": "x %% 3"}',  # a parse error
        b"",  # blank: skipped, not numbered out of the output
        b"\xff\xfe not UTF-8",
        b"[1, 2]",  # not an object
        b'{"id": "no-expr"}',
        b'{"expr": "x // 0", "id": "zero"}',
        b"{not json",
    ]
    mixed: list[bytes] = []
    for i, line in enumerate(good):
        mixed.append(line)
        if i % 6 == 0:
            mixed.append(bad[(i // 6) % len(bad)])
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(mixed) + b"\n")
    return path


@pytest.mark.parametrize("chunk", [1, 4, 16])
@pytest.mark.parametrize(
    "extra",
    [[], ["--explain"], ["--max-steps", "1"], ["--semantics", "trunc"]],
    ids=["plain", "explain", "step-limit", "trunc"],
)
def test_batch_in_workers_writes_what_one_process_writes(
    mixed_batch: Path, extra: list[str], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 2 gives the lines --jobs 1 gives, in input order, errors and warnings
    (stderr, in the same order) included, whatever the chunk size."""
    monkeypatch.setattr(jobs_module, "BATCH_CHUNK", chunk)
    one = run("simplify", "--batch", str(mixed_batch), *extra)
    two = run("simplify", "--batch", str(mixed_batch), "--jobs", "2", *extra)
    assert one[0] == two[0] == 1  # some lines are errors
    assert _without_seconds(two[1]) == _without_seconds(one[1])
    assert two[2] == one[2]
    errors = [line for line in _without_seconds(one[1]) if "error" in line]
    assert len(errors) >= 5
    if extra == ["--max-steps", "1"]:
        assert "rewriting stopped" in one[2]  # warnings are compared too


def test_batch_in_workers_reads_stdin_and_uses_the_rules_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--rules FILE (the files' rules before the shipped ones) and --only-rules reach the
    workers; standard input is read as a file is."""
    rules = EXAMPLE / "mine.rules"
    data = (EXAMPLE / "corpus.jsonl").read_bytes()

    def from_stdin(*argv: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        return run("simplify", "--batch", "-", *argv)

    for options in (["--rules", str(rules)], ["--rules", str(rules), "--only-rules"]):
        one = from_stdin(*options)
        two = from_stdin("--jobs", "3", *options)
        assert one[0] == two[0] == 0
        assert _without_seconds(two[1]) == _without_seconds(one[1])
        assert any("mine-mod-small" in line["rules"] for line in _without_seconds(two[1]))


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", ""])
def test_jobs_must_be_a_positive_integer(value: str, mixed_batch: Path) -> None:
    for command in (["simplify", "--batch", str(mixed_batch)], ["coverage", str(mixed_batch)]):
        status, out, err = run(*command, "--jobs", value)
        assert status == 2
        assert f"argument --jobs: expected a positive integer, got {value!r}" in err or (
            f"argument --jobs: expected a positive integer, got {value}" in err
        )
        assert out == ""
        assert "Traceback" not in err


def test_jobs_without_batch_is_a_usage_error() -> None:
    status, out, err = run("simplify", "x//2", "--var", "x=0:1", "--jobs", "2")
    assert (status, out) == (2, "")
    assert "--jobs applies to --batch" in err


def _die(chunk: object) -> object:  # a worker that is killed
    os._exit(3)


def test_a_dead_worker_is_an_error_not_a_hang(
    mixed_batch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker process that dies ends the command with a message (exit 2)."""
    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the dying worker is patched in here: workers must be forked")
    # Sent by reference under the real function's name (workers are forked from here).
    _die.__module__, _die.__qualname__ = jobs_module.__name__, "_batch_chunk"
    monkeypatch.setattr(jobs_module, "_batch_chunk", _die)
    status, _, err = run("simplify", "--batch", str(mixed_batch), "--jobs", "2")
    assert status == 2
    assert "quorem simplify: error: a worker process ended before finishing its work" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------- coverage
@pytest.mark.slow
def test_coverage_in_workers_reports_what_one_process_reports(
    sample: Path, mixed_batch: Path, tmp_path: Path
) -> None:
    """Text, JSON (every count, example and tie order) and HTML are the same with --jobs N;
    unreadable lines are reported the same."""
    paths = [str(sample), str(mixed_batch)]
    pages = [tmp_path / "one.html", tmp_path / "two.html"]
    one = run("coverage", *paths, "--json", "--html", str(pages[0]))
    two = run("coverage", *paths, "--json", "--html", str(pages[1]), "--jobs", "2")
    assert one[0] == two[0] == 1  # the mixed batch's bad lines
    assert two[1:] == one[1:]
    assert pages[1].read_text() == pages[0].read_text()
    report = json.loads(one[1])
    assert report["cases"] > 250
    assert report["shadowed"]
    assert report["residues"]
    one = run("coverage", *paths, "--never-fired")
    three = run("coverage", *paths, "--never-fired", "--jobs", "3")
    assert three == one


def _report_texts(cases: list[Case], ruleset: RuleSet, **kwargs: Any) -> tuple[str, str, str]:
    report = coverage(cases, ruleset, **kwargs)
    return json.dumps(to_json(report)), to_text(report, never_fired=True), to_html(report)


@pytest.fixture(scope="module")
def sample_cases(sample: Path) -> list[Case]:
    cases, bad = read_cases([str(sample)], Semantics.FLOOR, io.StringIO())
    assert not bad
    return cases


@settings(max_examples=examples(15), deadline=None)
@given(data=st.data())
def test_tallies_of_consecutive_chunks_add_up_to_one_run(
    sample_cases: list[Case], data: st.DataObject
) -> None:
    """Any cut of the cases into consecutive chunks, tallied apart and merged in order,
    gives the one-run report: counts, first applications (plain steps preferred to
    those under ``given``), residue examples, tie orders."""
    from quorem.coverage import collect as module

    ruleset = default_ruleset()
    picked = data.draw(
        st.lists(st.sampled_from(sample_cases), min_size=1, max_size=40), label="cases"
    )
    cuts = sorted(data.draw(st.sets(st.integers(1, len(picked)), max_size=6), label="cuts"))
    bounds = [0, *cuts, len(picked)]
    tally = module._Tally()
    for start, end in itertools.pairwise(bounds):
        collector = module._Collector(ruleset)
        for case in picked[start:end]:
            collector.add(case, None)
        tally.merge(pickle.loads(pickle.dumps(collector.tally)))  # as sent from a worker
    merged = module._report(tally, ruleset)
    one = coverage(picked, ruleset)
    assert json.dumps(to_json(merged)) == json.dumps(to_json(one))
    assert to_text(merged, never_fired=True) == to_text(one, never_fired=True)


def test_library_coverage_in_workers(sample_cases: list[Case]) -> None:
    """coverage(cases, ruleset, jobs=2) is coverage(cases, ruleset), also for rule sets
    built in Python (their rules sent to the workers) and a step budget."""
    cases = sample_cases[::3]
    mine = RuleSet.from_files([EXAMPLE / "mine.rules"])
    both = RuleSet.from_files([EXAMPLE / "mine.rules"], with_shipped=True)
    for ruleset, max_steps in ((default_ruleset(), 2), (mine, None), (both, None)):
        one = _report_texts(cases, ruleset, max_steps=max_steps)
        assert _report_texts(cases, ruleset, max_steps=max_steps, jobs=2) == one
    with pytest.raises(ValueError, match="positive integer"):
        coverage(cases, mine, jobs=0)


def test_rules_spec_pickles_and_loads_the_same_rules() -> None:
    """A worker started by spawn (not fork) gets the spec pickled: the same rules come
    back, in the same order, the shipped ones named rather than copied."""
    shipped = default_ruleset()
    mine = RuleSet.from_files([EXAMPLE / "mine.rules"])
    both = RuleSet.from_files([EXAMPLE / "mine.rules"], with_shipped=True)
    reference = RuleSet(shipped.rules, compiled=False)
    for ruleset, with_shipped in ((shipped, True), (mine, False), (both, True), (reference, False)):
        spec = RulesSpec.of(ruleset)
        assert spec.with_shipped == with_shipped
        loaded = pickle.loads(pickle.dumps(spec)).load()
        assert [r.name for r in loaded.rules] == [r.name for r in ruleset.rules]
        assert loaded.rules == ruleset.rules
        assert loaded.is_compiled == ruleset.is_compiled
    assert RulesSpec.of(shipped).load() is shipped
    assert RulesSpec.of(RuleSet([])).load().rules == ()


def test_chunks_are_consecutive_and_complete() -> None:
    assert list(chunks(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunks([], 3)) == []
    assert list(chunks("ab", 5)) == [["a", "b"]]


def test_the_benchmark_batch_is_reproducible_and_valid(tmp_path: Path) -> None:
    """benchmarks/batch_jobs.py's generated batch: the same for a seed, every line simplified
    (none is an error), divisions removed."""
    from benchmarks.batch_jobs import write_batch

    first, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_batch(first, 150, 7)
    write_batch(again, 150, 7)
    assert first.read_text() == again.read_text()
    status, out, _ = run("simplify", "--batch", str(first))
    assert status == 0
    lines = _without_seconds(out)
    assert len(lines) == 150
    assert sum(line["ops_after"] for line in lines) < sum(line["ops_before"] for line in lines)


def test_commands_without_jobs_do_not_import_multiprocessing() -> None:
    """The pool's modules load only for --jobs: every command's start-up is timed."""
    code = (
        "import sys, quorem.cli.main; "
        "print(sorted({'multiprocessing', 'concurrent'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_workers_started_by_spawn_give_the_same_output(
    mixed_batch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that do not inherit this process (spawn: the default on macOS and Windows,
    forkserver from Python 3.14 on Linux) rebuild the rules from the pickled spec and
    receive pickled chunks: the output is the same."""
    import multiprocessing  # concurrent.futures.process asks multiprocessing.get_context

    real = multiprocessing.get_context
    asked: list[str | None] = []

    def spawning(method: str | None = None) -> Any:
        asked.append(method)
        return real(method or "spawn")

    monkeypatch.setattr(multiprocessing, "get_context", spawning)
    rules = str(EXAMPLE / "mine.rules")
    one = run("simplify", "--batch", str(mixed_batch), "--rules", rules)
    two = run("simplify", "--batch", str(mixed_batch), "--rules", rules, "--jobs", "2")
    assert _without_seconds(two[1]) == _without_seconds(one[1])
    assert two[0] == one[0] == 1
    assert two[2] == one[2]
    assert asked == [None]  # the pool took the default context: spawn, here
