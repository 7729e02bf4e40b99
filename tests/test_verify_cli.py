"""`quorem verify` as CI and rule authors meet it: a cache that is never stale, pipes,
Ctrl-C, exit codes, JUnit, and counterexamples that explain every name they show."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from support import REPO, run_verify  # noqa: E402

from quorem import proofdigest as digest  # noqa: E402  (where code_digest lives)
from quorem.cli import verify as cli  # noqa: E402
from quorem.cli.args import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED  # noqa: E402
from quorem.cli.verify import junit as verify_junit  # noqa: E402
from quorem.cli.verify import options as verify_options  # noqa: E402
from quorem.cli.verify import summary as verify_summary  # noqa: E402
from quorem.ruleset import default_ruleset  # noqa: E402
from quorem.verify import jobs  # noqa: E402
from quorem.verify.cache import ProofCache  # noqa: E402
from quorem.verify.prove import obligations_of  # noqa: E402

KNOWN_BUGS = REPO / "tests" / "known_bugs"
SEQ_RULE = """
rule mod-reduce-any-sign
  doc:       mod-reduce-coefficients without D > 0
  semantics: trunc
  pattern:   (sum(K*t) + C) % D
  guard:     D != 0 and (any(K % D != K) or C % D != C)
  rewrite:   (sum((K % D)*t) + C % D) % D
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A proof cache of this test's own."""
    path = tmp_path / "cache"
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(path))
    return path


RESULT_LINE = re.compile(r"^(proven\S*|unsound|unknown) +\S+ \[")


def _cached(out: str) -> list[bool]:
    """For each result line of a report, whether it came from the cache."""
    return ["(cached)" in ln for ln in out.splitlines() if RESULT_LINE.match(ln)]


# ---------------------------------------------------------------- the cache's digest
def test_proof_sources_cover_the_code_proofs_rely_on() -> None:
    """The digest reads the prover and the engine code a proof's meaning depends on."""
    names = set(digest.proof_modules())
    termination = [f"quorem.verify.termination.{m}" for m in ("measure", "symbolic", "decide")]
    for needed in (
        "quorem.verify.division",  # the division encodings
        "quorem.verify.encode",
        "quorem.verify.prove",
        "quorem.verify.replay",
        "quorem.verify.termination",
        *termination,
        "quorem.verify.termination.nested",
        "quorem.verify.intervals",
        "quorem.interval",  # the interval functions guards read
        "quorem.overflow",  # fits_int64
        "quorem.rulefile",  # the rule parser
        "quorem.rule",
        "quorem.compiler.dispatch",  # the rule compiler
        "quorem.arith",  # the concrete divisions the replay evaluates
    ):
        assert needed in names, needed
    # Code no proof reads does not invalidate the cache: the command line, the mutants,
    # the batch API, the emitters, and the root package (it only re-exports the API).
    assert not names & {
        "quorem",
        "quorem.cli.main",
        "quorem.cli.verify",
        "quorem.verify.mutate",
        "quorem.batch",
        "quorem.codegen",
    }


def test_changing_a_prover_file_misses_the_cache(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """A byte changed in any file of the digest proves again; restoring it hits again."""
    copies = {}
    for module, path in digest.proof_modules().items():
        copy = tmp_path / "src" / module / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        copies[module] = copy
    monkeypatch.setattr(digest, "proof_modules", lambda: copies)
    digest.code_digest.cache_clear()
    try:
        argv = ["--rule", "max-of-same", "--obligation", "equivalence"]
        assert run_verify(argv, capsys)[0] == cli.EXIT_PROVEN
        assert _cached(run_verify(argv, capsys)[1]) == [True]
        division = copies["quorem.verify.division"]
        original = division.read_bytes()
        division.write_bytes(original + b"\n# an edit\n")
        digest.code_digest.cache_clear()
        code, out = run_verify(argv, capsys)
        assert code == cli.EXIT_PROVEN and _cached(out) == [False], out
        division.write_bytes(original)
        digest.code_digest.cache_clear()
        assert _cached(run_verify(argv, capsys)[1]) == [True]
    finally:
        digest.code_digest.cache_clear()


def _package_copy(root: Path) -> Path:
    """The quorem package laid out as installed, under ``root`` (for PYTHONPATH)."""
    pkg = root / "quorem"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "engine", pkg, ignore=skip)
    shutil.copytree(REPO / "rules", pkg / "rules", ignore=skip)
    shutil.copytree(REPO / "verify", pkg / "verify", ignore=skip)
    return pkg


def test_a_wrong_encoding_fixed_does_not_leave_a_cached_proof(
    tmp_path: Path, cache_dir: Path
) -> None:
    """The issue's scenario, in a copy of the package: truncating division encoded as
    floor proves an unsound truncating rule; once the file is restored the rule is
    UNSOUND again, not ``proven (cached)``."""
    pkg = _package_copy(tmp_path / "site")
    division = pkg / "verify" / "division.py"
    text = division.read_text()
    wrong = "    if sem is Semantics.FLOOR:"
    assert wrong in text
    division.write_text(text.replace(wrong, f"{wrong[:-1]} or sem is Semantics.TRUNC:", 1))
    rules = str(KNOWN_BUGS / "trunc_split_without_sign.rules")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    argv = [sys.executable, "-m", "quorem", "verify", rules, "--obligation", "equivalence"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=120, check=False
        )

    broken = run()
    assert broken.returncode == cli.EXIT_PROVEN, broken.stdout + broken.stderr
    assert str(pkg) in run_module_file(env), "the copy, not the checkout, must be imported"
    again = run()
    assert again.returncode == cli.EXIT_PROVEN and _cached(again.stdout) == [True]
    division.write_text(text)
    fixed = run()
    assert fixed.returncode == cli.EXIT_UNSOUND, fixed.stdout + fixed.stderr
    assert "UNSOUND" in fixed.stdout and _cached(fixed.stdout) == [False]


def run_module_file(env: dict[str, str]) -> str:
    """Where the division encodings are imported from under ``env``."""
    code = "import quorem.verify.division as d; print(d.__file__)"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout


# ------------------------------------------------------------------- pipes and Ctrl-C
def test_piped_and_cached_each_line_once(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--rule", "max-of-same", "--rule", "divmod-recombine"]
    first = run_verify(argv, capsys)[1]
    code, second = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN
    lines = [ln for ln in second.splitlines() if "(cached)" in ln]
    assert lines and len(lines) == len(set(lines))
    assert len(lines) == len([ln for ln in first.splitlines() if " [" in ln])


def test_interrupt_keeps_the_proofs_done(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after two jobs: exit 130, no traceback, and those two jobs are cached."""
    real_run = jobs._run
    calls = []

    def interrupted_on_the_third(job: jobs.Job, rules: Any) -> Any:
        calls.append(job)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_run(job, rules)

    argv = ["--rule", "divmod-recombine", "--obligation", "equivalence"]
    argv += ["--obligation", "int64"]
    with monkeypatch.context() as m:
        m.setattr(jobs, "_run", interrupted_on_the_third)
        code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == EXIT_INTERRUPTED == 130
    assert "interrupted" in captured.err and "Traceback" not in captured.err
    done = sum(len(job.kinds) for job in calls[:2])
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN
    cached = _cached(out)
    assert cached.count(True) == done and cached.count(False) == len(cached) - done > 0


def test_ctrl_c_in_a_real_run(tmp_path: Path, cache_dir: Path) -> None:
    """SIGINT to a running `quorem verify --jobs 2` (as a terminal sends it to the whole
    process group): it stops within seconds, prints no traceback, and saves the cache."""
    argv = [sys.executable, "-m", "quorem", "verify", "--jobs", "2", "--obligation", "equivalence"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    first = proc.stdout.readline()  # a result has arrived: the run is under way
    assert first, proc.stderr.read() if proc.stderr else ""
    while not (cache_dir / "proofs.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the first save (results are saved as they arrive)
    os.killpg(proc.pid, signal.SIGINT)
    start = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 10
    if proc.returncode == cli.EXIT_PROVEN:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "interrupted" in err
    assert json.loads((cache_dir / "proofs.json").read_text())


def test_a_closed_pipe_ends_quietly(cache_dir: Path) -> None:
    """`quorem verify | head`: no BrokenPipeError traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "quorem", "verify", "--rule", "max-of-same"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# ----------------------------------------------------------------------- exit codes
def test_exit_codes_follow_the_convention() -> None:
    """0 proven, 1 a negative finding, 2 usage, 3 inconclusive: as every quorem command."""
    from quorem.cli import args

    assert (cli.EXIT_PROVEN, cli.EXIT_UNSOUND, cli.EXIT_USAGE, cli.EXIT_UNKNOWN) == (0, 1, 2, 3)
    assert args.EXIT_USAGE == cli.EXIT_USAGE


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["--jobs", "0"]) == 2
    assert cli.main(["--no-such-option"]) == 2
    bad = tmp_path / "bad.rules"
    bad.write_text("rule r\n  doc: d\n  pattern: x // \n  rewrite: x\n")
    assert cli.main([str(bad)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert cli.main(["--suggest-guard", "--guard-candidates", "0"]) == 2
    assert "--guard-candidates must be positive" in capsys.readouterr().err
    assert cli.main(["--suggest-guard", "--guard-rlimit", "-1"]) == 2
    assert "--guard-rlimit" in capsys.readouterr().err


def test_missing_z3_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from quorem.cli import main as main_cli

    monkeypatch.setitem(sys.modules, "quorem.cli.verify", None)  # import fails
    assert main_cli.main(["verify"]) == 2
    assert "z3-solver" in capsys.readouterr().err


def test_unknown_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rule not shown terminating is inconclusive: 3, or 0 with --allow-unknown."""
    rules = tmp_path / "loop.rules"
    rules.write_text(
        "rule mod-add-divisor\n  doc: d\n  semantics: floor\n  pattern: x % N\n"
        "  guard: N > 0\n  rewrite: (x + N) % N\n"
    )
    argv = [str(rules), "--no-cache", "--obligation", "termination"]
    assert run_verify(argv, capsys)[0] == 3
    assert run_verify([*argv, "--allow-unknown"], capsys)[0] == 0


# ---------------------------------------------------------------------------- JUnit
def _result(status: str, file: str) -> dict[str, Any]:
    return {
        "name": "r",
        "file": file,
        "line": 3,
        "semantics": "floor",
        "obligation": "equivalence",
        "status": status,
        "method": "grid",
        "seconds": 0.1,
    }


def test_junit_counts_as_the_summary_and_names_relative_paths(tmp_path: Path) -> None:
    results = [
        _result("proven", str(REPO / "rules" / "00-fold.rules")),
        _result("proven-on-grid(C in -3..4 but 0)", str(Path.cwd() / "my.rules")),
        _result("unknown", str(tmp_path / "elsewhere.rules")),
        _result("unsound", "/x/y.rules"),
    ]
    report = tmp_path / "junit.xml"
    verify_junit.write_junit(report, results, 1.0)
    suite = ET.parse(report).getroot()
    summary = verify_summary.summary(results, 1.0)
    assert int(suite.get("errors", "")) == summary["unknown"] == 2
    assert int(suite.get("failures", "")) == summary["unsound"] == 1
    cases = suite.findall("testcase")
    assert cases[1].find("error") is not None  # proven-on-grid does not pass
    classnames = [c.get("classname", "") for c in cases]
    assert classnames[0] == "rules/00-fold.rules:3"
    assert classnames[1] == "my.rules:3"
    assert not any(c.startswith("/") for c in classnames), classnames


# ------------------------------------------------------------------- counterexamples
@pytest.mark.slow
def test_counterexample_names_the_addends_of_a_sum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "seq.rules"
    rules.write_text(SEQ_RULE)
    argv = [str(rules), "--no-cache", "--obligation", "equivalence", "--arity", "2"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_UNSOUND
    assert "t_1 is t[1], the first addend of sum(K*t)" in out
    assert "t_2 is t[2], the second addend of sum(K*t)" in out


def test_overflow_is_called_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    """The int64 obligation assumes equal values: its counterexample is an overflow."""
    argv = [str(KNOWN_BUGS / "xla_nested_floordiv.rules"), "--no-cache", "--obligation", "int64"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_UNSOUND
    header = next(ln for ln in out.splitlines() if "(floor int64):" in ln)
    assert "OVERFLOW" in header and "UNSOUND" not in header
    assert "the values agree" in out


def test_vacuous_obligation_names_file_line_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "never.rules"
    rules.write_text(
        "\nrule never-fires\n  doc: d\n  semantics: floor\n  pattern: x // C\n"
        "  guard: C > 0 and C < 0\n  rewrite: x\n"
    )
    argv = [str(rules), "--no-cache", "--obligation", "equivalence"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_UNKNOWN
    assert f"{rules}:2: rule never-fires (floor equivalence): unknown (vacuous)" in out


# ----------------------------------------------------------------- CI conventions
def _fields(text: str) -> dict[str, str]:
    """``key: value`` pairs of a flat YAML mapping (the hook file has no nesting)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.strip().removeprefix("- ").partition(": ")
        if sep and not line.lstrip().startswith("#"):
            out[key] = value.strip()
    return out


def test_pre_commit_hook_runs_quorem_verify_on_rules_files() -> None:
    hook = _fields((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "quorem-verify"
    assert hook["entry"] == "quorem verify" and hook["language"] == "python"
    assert "z3-solver" in hook["additional_dependencies"]
    files = re.compile(hook["files"])
    assert files.search("rules/00-fold.rules") and not files.search("engine/cli/main.py")
    # The entry is a real command taking the files pre-commit passes.
    assert cli.main(["--help"]) == 0


def test_docs_ci_recipe_keeps_junit_and_the_cache() -> None:
    page = (REPO / "docs" / "proving.md").read_text()
    (workflow,) = re.findall(r"```yaml\n(# \.github/workflows/.*?)```", page, flags=re.S)
    assert "actions/cache/restore@" in workflow and "actions/cache/save@" in workflow
    assert "QUOREM_CACHE_DIR: ${{ github.workspace }}/.quorem-cache" in workflow
    assert workflow.count("path: .quorem-cache") == 2
    (command,) = re.findall(r"- run: (quorem verify .*)", workflow)
    argv = command.split()[2:]
    assert "--junit" in argv and "verify-junit.xml" in workflow.split(command)[1]
    # Its options are the command's own.
    known = {a for action in verify_options.parser()._actions for a in action.option_strings}
    assert {a for a in argv if a.startswith("-")} <= known


def test_the_cache_keeps_the_most_recently_used_entries(tmp_path: Path) -> None:
    """Old keys (a changed rule, an older prover) are pruned oldest-use first, on save."""
    path = tmp_path / "proofs.json"
    cache = ProofCache(path, max_entries=3)
    for i in range(5):
        cache.store(f"k{i}", {"status": "proven", "i": i})
        cache.used[f"k{i}"] = float(i)  # k0 the least recently used
    cache.used["k1"] = 10.0  # used again after the others
    cache.save()
    again = ProofCache(path, max_entries=3)
    assert sorted(again.entries) == ["k1", "k3", "k4"]
    assert again.lookup("k0") is None and again.lookup("k3") == {"status": "proven", "i": 3}


def test_a_cache_of_the_first_format_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "proofs.json"
    path.write_text(json.dumps({"abc": {"status": "proven"}}))
    cache = ProofCache(path)
    assert cache.lookup("abc") == {"status": "proven"}
    cache.save()
    assert json.loads(path.read_text())["entries"] == {"abc": {"status": "proven"}}


@pytest.mark.slow
def test_slowest_picks_the_rules_with_the_longest_cached_proofs(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CI's seed runs: --slowest N reads the times of the proofs the cache holds."""
    names = ["div-by-one", "mod-by-unit", "nested-div"]
    argv = [arg for n in names for arg in ("--rule", n)]
    code, _ = run_verify([*argv, "--obligation", "equivalence"], capsys)
    assert code == cli.EXIT_PROVEN
    cache = ProofCache()
    times = {
        n: max(float(cache.get(ob)["seconds"]) for ob in obligations_of(r) if cache.get(ob))  # type: ignore[index]
        for n in names
        for r in [default_ruleset().rule(n)]
    }
    slowest = max(times, key=lambda n: times[n])
    picked = cli.slowest_rules([default_ruleset().rule(n) for n in names], 1, cache, 2)
    assert [r.name for r in picked] == [slowest]
    code, out = run_verify([*argv, "--slowest", "1", "--seeds", "2", "--json"], capsys)
    assert code == cli.EXIT_PROVEN
    assert {r["name"] for r in json.loads(out)["rules"]} == {slowest}
    # --no-cache has no times to read: a usage error, not a run of nothing.
    assert cli.main(["--no-cache", "--slowest", "1"]) == cli.EXIT_USAGE
