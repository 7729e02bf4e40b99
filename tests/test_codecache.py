"""The rule caches: shipped rules' parse and compiled code kept for the next process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from quorem.compiler import cache as codecache
from quorem.compiler import dispatch as compiled
from quorem.rulefile import load_rule_files, parse_rules
from quorem.rules import rule_files
from quorem.ruleset import RuleSet, constraint_ruleset, default_ruleset


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, empty cache in ``tmp_path`` (and the process's own restored after)."""
    monkeypatch.setattr(codecache, "_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(codecache, "_CACHE", [])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    yield tmp_path


def _files(where: Path) -> list[str]:
    return sorted(p.name.split(".")[0] for p in where.iterdir())


def test_a_second_load_reads_back_what_the_first_stored(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = rule_files()[:3]
    first = RuleSet(load_rule_files(paths))
    assert _files(cache_dir) == ["quorem-rulefiles", "quorem-rules"]
    # A new process: nothing in memory; neither the parser nor the compiler may run.
    monkeypatch.setattr(codecache, "_CACHE", [])

    def no_parse(*args: object) -> None:
        raise AssertionError("parsed again")

    def no_compile(*args: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr("quorem.rulefile.parse_rules", no_parse)
    monkeypatch.setattr(compiled, "_RuleCompiler", no_compile)
    second = RuleSet(load_rule_files(paths))
    assert second.rules == first.rules
    assert [c.code.source if c.code else None for c in second.compiled] == [
        c.code.source if c.code else None for c in first.compiled
    ]


def test_an_unreadable_cache_is_a_miss(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = rule_files()[:2]
    expected = RuleSet(load_rule_files(paths))
    for p in cache_dir.iterdir():
        p.write_bytes(b"\x00garbage")
    monkeypatch.setattr(codecache, "_CACHE", [])
    again = RuleSet(load_rule_files(paths))
    assert again.rules == expected.rules
    assert [c.name for c in again.compiled] == [c.name for c in expected.compiled]


def test_rules_quorem_does_not_ship_are_not_cached(cache_dir: Path, tmp_path: Path) -> None:
    own = tmp_path / "mine.rules"
    own.write_text(rule_files()[0].read_text())
    RuleSet(load_rule_files([own]), allow_unproven=True)
    text = "rule mine-max\n  doc: mine\n  semantics: any\n  pattern: max(x, x)\n  rewrite: x\n"
    RuleSet(parse_rules(text, "<text>"), allow_unproven=True)
    assert not [p for p in cache_dir.iterdir() if p.name.startswith("quorem-")]


def test_nothing_is_written_when_python_writes_no_byte_code(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    RuleSet(load_rule_files(rule_files()[:2]))
    assert not list(cache_dir.iterdir())


def test_quorem_rule_cache_0_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUOREM_RULE_CACHE", "0")
    assert codecache._cache_dir() is None


def test_the_constraint_rules_reuse_the_default_rules_instances() -> None:
    default, constraint = default_ruleset(), constraint_ruleset()
    by_name = {c.name: c for c in default.compiled}
    shared = [c for c in constraint.compiled if c.name in by_name]
    assert shared
    assert all(c is by_name[c.name] or c.semantics != by_name[c.name].semantics for c in shared)


_SIMPLIFY_SEEDS = """
import json, sys
from pathlib import Path
import quorem
from quorem.compiler import dispatch as compiled

made = []
real = compiled._RuleCompiler
def counting(*args):
    made.append(1)
    return real(*args)
compiled._RuleCompiler = counting
from quorem.compiler import expr as compiled_expr
from quorem.ruleset import default_ruleset
from quorem.walk import nodes

if sys.argv[2] == "shift":  # numbering fits_int64 checks unlike the cache's writer
    compiled_expr._FITS_CHECKS.append(lambda env: False)

rules = default_ruleset()
fits = [c for c in rules.compiled if c.code and "_FITS_CHECKS" in c.code.source]
out, checked = [], 0
for line in Path(sys.argv[1]).read_text().splitlines():
    case = json.loads(line)
    bounds = {k: tuple(v) for k, v in case["vars"].items()}
    t = quorem.parse(case["expr"], bounds, case["semantics"])
    out.append(str(quorem.simplify(t)))
    r = quorem.explain(t, rules, max_steps=300)
    met = {u for root in [t, r.term, *(x for s in r.trace for x in (s.before, s.after))]
           for u in nodes(root)}
    for u in met:
        for c in fits:
            if c.root is u.op:
                assert c.fn(u) == c.reference_apply(u), (c.name, str(u))
                checked += 1
print(json.dumps({"made": len(made), "out": out, "checked": checked}))
"""


@pytest.mark.slow
def test_another_process_runs_the_cached_code_alike(tmp_path: Path) -> None:
    """Written by one process, read by the next: the same simplifications, nothing compiled.

    The code calls its fits_int64 checks by the writing process's indices; the reading
    process has its own (this corpus meets rules with such checks).
    """
    seeds = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "seed_cases.jsonl"

    def run(setting: str, shift: str = "") -> dict[str, object]:
        env = {**os.environ, "QUOREM_RULE_CACHE": setting}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # which also stops the caches' writes
        done = subprocess.run(
            [sys.executable, "-c", _SIMPLIFY_SEEDS, str(seeds), shift],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, object] = json.loads(done.stdout)
        return result

    fresh = run("0")
    writer = run(str(tmp_path))
    reader = run(str(tmp_path), "shift")
    assert fresh["out"] == writer["out"] == reader["out"]
    assert writer["made"] == fresh["made"]
    # Only the per-operator dispatchers are generated in the reading process.
    made_reading, made_writing = reader["made"], writer["made"]
    assert isinstance(made_reading, int) and isinstance(made_writing, int)
    assert made_reading < made_writing
    # Rule code calling fits_int64 checks ran, and agreed with the reference matcher.
    assert isinstance(reader["checked"], int)
    assert reader["checked"] > 0
