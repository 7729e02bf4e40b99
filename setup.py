"""Build steps ``pyproject.toml`` cannot state: generated dispatchers and the native engine.

1. The shipped rules' dispatchers are generated into ``quorem/compiler/_prebuilt_dispatch.py``
   of the build folder (:mod:`quorem.compiler.prebuilt`), importing the engine from this
   source tree: generated code never enters the source tree.
2. The engine's hot modules -- the same ``.py`` files -- are compiled to C extension modules
   by Cython (pure-Python mode: the sources stay plain Python); the C files go to
   ``build/cython``. Each extension is optional: without a C compiler, or when Cython is
   missing, the build still succeeds and the package runs interpreted.
   ``QUOREM_PURE_PYTHON=1`` at build time builds no extension at all.
3. An editable install (``pip install -e .``) is always a *strict* one: a tree of links in
   ``build/`` that editors, type checkers and import-graph tools follow like any package
   folder, holding the generated module and the extensions beside links to the sources.
   A module added or removed needs the install to be run again.

Which modules are compiled is :data:`quorem._native.NATIVE_MODULES`; at run time
``quorem._native`` loads an extension only if it was built from the ``.py`` beside it
(a digest recorded here), so an edited checkout never runs stale compiled code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

ROOT = Path(__file__).resolve().parent
# Read before _source_tree sets it for its own imports.
PURE_PYTHON = os.environ.get("QUOREM_PURE_PYTHON") == "1"
RECORD = "_native_build.txt"  # quorem._native.RECORD
# Import name -> source folder, as pyproject.toml's package-dir states it (stated once).
with (ROOT / "pyproject.toml").open("rb") as _f:
    _MAPPING = tomllib.load(_f)["tool"]["setuptools"]["package-dir"]
PACKAGES = {name: ROOT / folder for name, folder in _MAPPING.items()}
# The generated module, inside the build folder only (quorem.compiler.prebuilt).
GENERATED = Path("quorem", "compiler", "_prebuilt_dispatch.py")


def _load_package(name: str, folder: Path) -> ModuleType:
    """Import the package ``name`` from ``folder`` (the tree is not installed yet)."""
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    parent, _, leaf = name.rpartition(".")
    setattr(sys.modules[parent], leaf, module)
    spec.loader.exec_module(module)
    return module


def _source_tree() -> ModuleType:
    """``quorem._native`` of this tree, with ``quorem``/``quorem.rules`` importable."""
    os.environ["QUOREM_RULE_CACHE"] = "0"  # write nothing into the tree but the module
    os.environ["QUOREM_PREBUILT"] = "0"  # never read an old generated module
    os.environ["QUOREM_PURE_PYTHON"] = "1"  # never load an old extension
    quorem = ModuleType("quorem")
    quorem.__path__ = [str(PACKAGES["quorem"])]
    sys.modules["quorem"] = quorem  # without running __init__ (it imports the API)
    _load_package("quorem.rules", PACKAGES["quorem.rules"])
    spec = importlib.util.spec_from_file_location(
        "quorem._native", PACKAGES["quorem"] / "_native.py"
    )
    assert spec is not None and spec.loader is not None
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    native.install()  # extensions an earlier build left in the tree are not imported
    return native


def _generate(build_lib: Path) -> Path:
    """Write the generated dispatcher module into ``build_lib``; its path."""
    # Only importable once _source_tree has mapped the packages.
    from quorem.compiler.prebuilt import write_module  # type: ignore[import-not-found]  # noqa: PLC0415
    from quorem.ruleset import constraint_ruleset, default_ruleset  # type: ignore[import-not-found]  # noqa: PLC0415

    folder = build_lib / GENERATED.parent
    folder.mkdir(parents=True, exist_ok=True)
    path: Path = write_module([default_ruleset(), constraint_ruleset()], folder)
    return path


def _source_of(module: str) -> Path:
    """The source file of the quorem module ``module`` (longest package-dir prefix)."""
    parts = module.split(".")
    for i in range(len(parts) - 1, 0, -1):
        package = ".".join(parts[:i])
        if package in PACKAGES:
            return PACKAGES[package].joinpath(*parts[i:-1], f"{parts[-1]}.py")
    raise KeyError(module)


def _extensions(native: ModuleType) -> list[Extension]:
    if PURE_PYTHON:
        return []
    try:
        from Cython.Build import cythonize  # noqa: PLC0415  (optional: the build may lack it)
    except ImportError:
        print("quorem: Cython is not installed; the engine runs interpreted", file=sys.stderr)
        return []
    modules = list(native.NATIVE_MODULES)
    extensions = [
        Extension(
            name,
            [str(_source_of(name).relative_to(ROOT))],
            optional=True,  # no C compiler: a warning, and the module stays Python
            # -O1: the same instruction count as -O2 on the corpora (callgrind, within
            # 0.5%), in about half the compile time (install-time budget: 2 minutes).
            extra_compile_args=["-O1"],
        )
        for name in modules
    ]
    return list(
        cythonize(
            extensions,
            compiler_directives={
                "language_level": 3,
                # Annotations are for mypy: compiled code must accept what the
                # interpreted code accepts (subclasses, duck types).
                "annotation_typing": False,
                "binding": True,
                "embedsignature": False,
            },
            quiet=True,
            # The C files are build products: out of the source tree.
            build_dir=str(Path("build", "cython")),
            nthreads=os.cpu_count() or 1,
        )
    )


class BuildNative(build_ext):
    """build_ext that records which sources each extension was built from."""

    def finalize_options(self) -> None:
        """Compile the extensions in parallel, one per core (install time).

        An editable install builds them into its build folder, never into the sources.
        """
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1
        self.inplace = False

    def get_outputs(self) -> list[str]:
        """The extensions and each folder's build record (linked by an editable install)."""
        records = {
            str(Path(self.get_ext_fullpath(e.name)).parent / RECORD) for e in self.extensions
        }
        return [*super().get_outputs(), *sorted(records)]

    def run(self) -> None:
        """Build the extensions, then record those built in ``_native_build.txt``.

        The record is written anew: an extension left by an earlier build, or one whose
        compilation failed now, is not in it, so it is never loaded.
        """
        self._built: list[str] = []
        folders = {Path(self.get_ext_fullpath(e.name)).parent for e in self.extensions}
        for folder in folders:
            (folder / RECORD).unlink(missing_ok=True)
        super().run()
        lines = []
        for name in sorted(self._built):
            digest = hashlib.sha256(_source_of(name).read_bytes()).hexdigest()
            lines.append(f"{name} {digest}")
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / RECORD).write_text("".join(f"{line}\n" for line in lines), "utf-8")

    def build_extensions(self) -> None:
        """Build every extension, then keep only those that built.

        What comes after (copying into the tree for an editable install, the wheel's
        file list) must not look for the others.
        """
        super().build_extensions()
        self.extensions = [e for e in self.extensions if e.name in self._built]

    def build_extension(self, ext: Extension) -> None:
        """Build one extension, or warn and leave that module interpreted if it fails.

        Every extension is optional: a machine without a working C compiler still
        installs quorem. Only an extension that built is recorded.
        """
        try:
            super().build_extension(ext)
        except Exception as exc:  # any compiler or linker failure: stay interpreted
            print(f"quorem: {ext.name} not compiled ({exc}); it runs interpreted", file=sys.stderr)
            return
        self._built.append(ext.name)  # list.append: safe from the parallel build's threads


class BuildPy(build_py):
    """build_py that also writes the generated dispatcher module into the build folder."""

    def run(self) -> None:
        """Copy the sources (not in an editable install), then generate the module."""
        super().run()
        _generate(Path(self.build_lib))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        """The package's files and the generated module."""
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / GENERATED)]


class StrictEditable(editable_wheel):
    """``pip install -e .`` as a strict editable install unless a mode is asked for.

    The package folders are mapped (``engine/`` is ``quorem``), which the default editable
    install serves through an import hook that editors, mypy and import-graph tools cannot
    follow; the strict mode's tree of links they read as plain folders.
    """

    def finalize_options(self) -> None:
        """Default the mode to ``strict``."""
        if self.mode is None:
            self.mode = "strict"
        super().finalize_options()


NATIVE = _source_tree()
setup(
    ext_modules=_extensions(NATIVE),
    cmdclass={"build_ext": BuildNative, "build_py": BuildPy, "editable_wheel": StrictEditable},
)
