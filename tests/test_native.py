"""The native (Cython-compiled) engine and the interpreted one give the same results.

A build compiles the modules of ``quorem._native.NATIVE_MODULES`` when it can; these tests
check which engine a process runs, that ``QUOREM_PURE_PYTHON=1`` and a stale extension
both give the interpreted one, and that both engines (and the dispatchers generated at
build time, ``quorem.compiler.prebuilt``) simplify every corpus case to the same term with the
same rules. Set ``QUOREM_REQUIRE_NATIVE=1`` (CI does) to fail instead of skipping when the
checkout has no native build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

from quorem import _native
from quorem.compiler.dispatch import DispatchEntry
from quorem.compiler.prebuilt import GENERATED_MODULE, entries_digest, generate_source
from quorem.ops import Op
from quorem.ruleset import RuleSet, default_ruleset

ENGINE = REPO / "engine"
# Where the build put its products: the installed package (a strict editable install's
# link tree, or site-packages), never the source folder.
INSTALLED = Path(_native.__file__).parent
REQUIRED = os.environ.get("QUOREM_REQUIRE_NATIVE") == "1"


def _has_native_build() -> bool:
    return (INSTALLED / _native.RECORD).is_file() and any(INSTALLED.glob("term.*.so"))


needs_native = pytest.mark.skipif(
    not REQUIRED and not _has_native_build(),
    reason="no native build here (no C compiler at install, or QUOREM_PURE_PYTHON=1)",
)


def _python(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("QUOREM_")}
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


_REPORT = (
    "import json, quorem, quorem._native as n\n"
    "from quorem.ruleset import default_ruleset\n"
    "from quorem.ops import Op\n"
    "quorem.simplify(quorem.parse('(x*4 + y)//4', {'x': (0, 9), 'y': (0, 3)}))\n"
    "d = default_ruleset().dispatchers()[Op.FLOORDIV]\n"
    "print(json.dumps([n.compiled_modules(), d.__module__]))\n"
)


@needs_native
def test_a_native_build_runs_compiled() -> None:
    compiled, _ = json.loads(_python(_REPORT))
    assert set(compiled) == set(_native.NATIVE_MODULES)
    assert all(compiled.values()), compiled


def test_pure_python_switch_runs_interpreted() -> None:
    compiled, _ = json.loads(_python(_REPORT, QUOREM_PURE_PYTHON="1"))
    assert set(compiled) == set(_native.NATIVE_MODULES)
    assert not any(compiled.values()), compiled


def test_built_dispatchers_are_taken_unless_turned_off() -> None:
    if not (INSTALLED / "compiler" / "_prebuilt_dispatch.py").is_file():
        pytest.skip("no generated dispatchers (the package was not built here)")
    _, module = json.loads(_python(_REPORT))
    assert module == GENERATED_MODULE
    _, module = json.loads(_python(_REPORT, QUOREM_PREBUILT="0"))
    assert module != GENERATED_MODULE


# ----------------------------------------------------------- the finder, on its own


def _finder_spec(folder: Path, record: str | None) -> object:
    (folder / "term.py").write_text("X = 1\n", encoding="utf-8")
    if record is not None:
        (folder / _native.RECORD).write_text(record, encoding="utf-8")
    return _native._SourceFirst().find_spec("quorem.term", [str(folder)])


def test_an_extension_built_from_this_source_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUOREM_PURE_PYTHON", raising=False)  # CI runs this file both ways
    digest = hashlib.sha256(b"X = 1\n").hexdigest()
    # None: the usual finders then load the extension beside the source.
    assert _finder_spec(tmp_path, f"quorem.term {digest}\n") is None


@pytest.mark.parametrize(
    "record",
    [None, "", "quorem.term 0000\n", "quorem.interval x\n"],
    ids=["no-record", "empty", "other-source", "other-module"],
)
def test_a_stale_or_unrecorded_extension_is_not_used(tmp_path: Path, record: str | None) -> None:
    spec = _finder_spec(tmp_path, record)
    assert spec is not None
    assert str(spec.origin).endswith("term.py")  # type: ignore[attr-defined]


def test_the_finder_leaves_other_modules_alone(tmp_path: Path) -> None:
    (tmp_path / "api.py").write_text("", encoding="utf-8")
    assert _native._SourceFirst().find_spec("quorem.api", [str(tmp_path)]) is None


# ------------------------------------------------------- dispatchers made at build time


def test_entries_digest_names_the_code() -> None:
    rules = default_ruleset()
    entries = rules.dispatch_entries(early=False)[Op.FLOORDIV]
    same = rules.dispatch_entries(early=False)[Op.FLOORDIV]
    assert entries_digest(Op.FLOORDIV, entries) == entries_digest(Op.FLOORDIV, same)
    assert entries_digest(Op.FLOORDIV, entries) != entries_digest(Op.FLOORMOD, entries)
    assert entries_digest(Op.FLOORDIV, entries) != entries_digest(Op.FLOORDIV, entries[1:])
    renamed = [DispatchEntry(e.fn, e.name + "-x", e.needs, e.rule, e.semantics) for e in entries]
    assert entries_digest(Op.FLOORDIV, entries) != entries_digest(Op.FLOORDIV, renamed)


def test_a_rule_of_the_same_name_but_other_body_gets_its_own_dispatcher() -> None:
    shipped = RuleSet.from_text(
        "rule divmod-recombine\n  doc: d\n  semantics: floor\n  pattern: x % C + (x // C)*C\n"
        "  guard: C > 0\n  rewrite: x\n",
        allow_unproven=True,
    )
    other = RuleSet.from_text(
        "rule divmod-recombine\n  doc: d\n  semantics: floor\n  pattern: x % C + (x // C)*C\n"
        "  guard: C > 1\n  rewrite: x\n",
        allow_unproven=True,
    )
    a = shipped.dispatch_entries(early=False)[Op.ADD]
    b = other.dispatch_entries(early=False)[Op.ADD]
    assert entries_digest(Op.ADD, a) != entries_digest(Op.ADD, b)


def test_generated_source_compiles_and_names_every_dispatcher() -> None:
    rules = RuleSet.from_text(
        "rule recombine\n  doc: d\n  semantics: floor\n  pattern: x % C + (x // C)*C\n"
        "  guard: C > 0\n  rewrite: x\n",
        allow_unproven=True,
    )
    text = generate_source([rules])
    namespace: dict[str, object] = {}
    exec(compile(text, "<generated>", "exec"), namespace)  # our own generated text
    table = namespace["TABLE"]
    assert isinstance(table, dict)
    entries = rules.dispatch_entries(early=False)[Op.ADD]
    assert entries_digest(Op.ADD, entries) in table


# ---------------------------------------------------------- both engines, every case


def _simplify_corpora(tmp_path: Path, **env: str) -> list[dict[str, object]]:
    cases = tmp_path / "all.jsonl"
    if not cases.exists():
        lines = []
        for corpus in sorted((REPO / "benchmarks" / "corpora").glob("*.jsonl")):
            lines += corpus.read_text(encoding="utf-8").splitlines()
        cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("QUOREM_")}
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-m", "quorem", "simplify", "--batch", str(cases)],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = []
    for line in done.stdout.splitlines():
        row = json.loads(line)
        row.pop("seconds", None)  # the one field that may differ
        out.append(row)
    return out


@pytest.mark.slow
@needs_native
def test_native_and_interpreted_engines_agree_on_every_corpus_case(tmp_path: Path) -> None:
    native = _simplify_corpora(tmp_path)
    pure = _simplify_corpora(tmp_path, QUOREM_PURE_PYTHON="1", QUOREM_PREBUILT="0")
    assert len(native) == len(pure) > 2000
    for a, b in zip(native, pure, strict=True):
        assert a == b, (a, b)


def test_the_installed_engine_has_the_digest_of_the_tree_it_was_built_from(
    tmp_path: Path,
) -> None:
    # An installed quorem is engine/ plus build products (the generated dispatchers, left
    # out of the digest they record): the digest must match the installation.
    from quorem.compiler.cache import _engine_digest

    installed = tmp_path / "engine"
    shutil.copytree(ENGINE, installed, ignore=shutil.ignore_patterns("__pycache__"))
    (installed / "compiler" / "_prebuilt_dispatch.py").write_text("# generated\n", "utf-8")
    assert _engine_digest(installed) == _engine_digest(ENGINE)
    (installed / "term.py").write_text("# edited\n", encoding="utf-8")
    assert _engine_digest(installed) != _engine_digest(ENGINE)
