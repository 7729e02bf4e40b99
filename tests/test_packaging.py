"""Packaging: every module imports as quorem.*, from outside the checkout, without Z3."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from support import REPO


def _modules() -> list[str]:
    """Every module of the source folders, named through pyproject.toml's package-dir."""
    with (REPO / "pyproject.toml").open("rb") as f:
        mapping = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    out = set()
    for package, folder in mapping.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if "__main__" not in parts:
                out.add(".".join([package, *parts]))
    return sorted(out)


MODULES = _modules()


def _run(code: str, tmp_path: object) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_every_module_imports_from_outside(tmp_path: object) -> None:
    """Each module of engine/, rules/ and verify/ imports under the quorem namespace anywhere."""
    assert {"quorem.term", "quorem.cli.main", "quorem.verify.prove", "quorem.rules"} <= set(MODULES)
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in MODULES)
    _run(code, tmp_path)


def test_import_quorem_needs_no_z3(tmp_path: object) -> None:
    """`import quorem` and a simplification load neither z3 nor quorem.verify."""
    out = _run(
        "import sys, quorem\n"
        "quorem.simplify(quorem.parse('x%4 + (x//4)*4'))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('z3', 'quorem.verify', 'sympy'))))\n",
        tmp_path,
    )
    assert out.strip() == "[]"


def test_public_api(tmp_path: object) -> None:
    """The main API is reachable from the top-level package."""
    out = _run(
        "import quorem\n"
        "print(all(hasattr(quorem, n) for n in ['parse', 'simplify', 'var', 'explain']))\n"
        "print(sorted(quorem.__all__) == sorted(set(quorem.__all__)))\n",
        tmp_path,
    )
    assert out.split() == ["True", "True"]


def test_rule_files_are_package_data(tmp_path: object) -> None:
    """The shipped .rules files are found through the installed package."""
    out = _run(
        "from quorem.rules import constraint_rule_files, lowering_rule_files, rule_files\n"
        "print(len(rule_files()), len(constraint_rule_files()), len(lowering_rule_files()))\n"
        "import quorem\n"
        "print(len(quorem.RuleSet.shipped().unproven))\n",
        tmp_path,
    )
    shipped, constraints, lowering, unproven = map(int, out.split())
    assert shipped >= 4 and constraints >= 1 and lowering >= 2
    assert unproven == 0  # the proof records are package data too


def test_typed_markers() -> None:
    """Each package ships a py.typed marker."""
    for folder in ("engine", "rules", "verify"):
        assert (REPO / folder / "py.typed").exists()


_NOT_SOURCES = {".venv", ".git", "build", "dist", "__pycache__", "fuzz-failures"}
_SOURCE_SUFFIXES = (".py", ".md", ".toml", ".rules", ".cfg", ".txt")


def test_nothing_outside_the_repository_is_read_or_cited() -> None:
    """A fresh clone has nothing beside it: no source, test or document points there.

    Walks the files rather than asking git: CI runs the tests in a copy without ``.git``.
    """
    offenders = []
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        parts = rel.parts
        if any(part in _NOT_SOURCES or (part.startswith(".") and part != ".ci") for part in parts):
            continue
        if any(part.endswith(".egg-info") for part in parts) or not path.is_file():
            continue
        name = rel.as_posix()
        if not name.endswith(_SOURCE_SUFFIXES) and not name.startswith(".ci/"):
            continue
        if name.startswith(("docs/research/", "benchmarks/results/")):
            continue  # copied notes; recorded runs name the paths they ran on
        if name in (".ci/run", "tests/test_packaging.py"):
            continue  # they name the folder to make sure it is not there
        text = path.read_text(encoding="utf-8", errors="replace")
        if "../shared" in text or '"shared" /' in text or 'parent / "shared"' in text:
            offenders.append(name)
    assert offenders == [], offenders


def test_no_submodule_shadows_the_api() -> None:
    """Importing a submodule sets it as an attribute of ``quorem``: none may share a name
    with a function of the API (``quorem.emit`` the function, not a package)."""
    import pkgutil

    import quorem

    submodules = {m.name for m in pkgutil.iter_modules(quorem.__path__)}
    assert set(quorem.__all__) & submodules == set()


def test_the_installed_package_is_a_plain_folder_tree(tmp_path: object) -> None:
    """Editors, mypy and import-graph tools read the installed package as folders.

    The package folders are mapped (engine/ is quorem), which a default editable install
    serves through an import hook those tools cannot follow; setup.py makes it a strict
    one, a tree of links. Installed or editable, ``quorem.rules`` and ``quorem.verify``
    are then folders inside ``quorem``'s, and no finder of setuptools' is on the path.
    """
    out = _run(
        "import sys, pathlib, quorem, quorem.rules, quorem.verify\n"
        "root = pathlib.Path(quorem.__file__).parent\n"
        "print(pathlib.Path(quorem.rules.__file__).parent == root / 'rules')\n"
        "print(pathlib.Path(quorem.verify.__file__).parent == root / 'verify')\n"
        "print((root / 'verify' / 'prove.py').is_file(), (root / 'cli' / 'main.py').is_file())\n"
        "print(any('editable' in type(f).__module__ for f in sys.meta_path))\n",
        tmp_path,
    )
    assert out.split() == ["True", "True", "True", "True", "False"]
