"""Build steps ``pyproject.toml`` cannot state: generated dispatchers and the native engine.

1. The shipped rules' dispatchers are generated into ``engine/_prebuilt_dispatch.py``
   (:mod:`quorem.engine.prebuilt`), importing the engine from this source tree.
2. The engine's hot modules -- the same ``.py`` files -- and that generated module are
   compiled to C extension modules by Cython (pure-Python mode: the sources stay plain
   Python). Each extension is optional: without a C compiler, or when Cython is missing,
   the build still succeeds and the package runs interpreted. ``QUOREM_PURE_PYTHON=1``
   at build time builds no extension at all.

Which modules are compiled is :data:`quorem._native.NATIVE_MODULES`; at run time
``quorem._native`` loads an extension only if it was built from the ``.py`` beside it
(a digest recorded here), so an edited checkout never runs stale compiled code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# Read before _source_tree sets it for its own imports.
PURE_PYTHON = os.environ.get("QUOREM_PURE_PYTHON") == "1"
# Import name -> source folder: the same mapping as pyproject.toml's package-dir.
RECORD = "_native_build.txt"  # quorem._native.RECORD
PACKAGES = {
    "quorem": ROOT / "engine" / "_root",
    "quorem.engine": ROOT / "engine",
    "quorem.rules": ROOT / "rules",
}


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
    """``quorem._native`` of this tree, with ``quorem.engine``/``quorem.rules`` importable."""
    os.environ["QUOREM_RULE_CACHE"] = "0"  # write nothing into the tree but the module
    os.environ["QUOREM_PREBUILT"] = "0"  # never read an old generated module
    os.environ["QUOREM_PURE_PYTHON"] = "1"  # never load an old extension
    quorem = ModuleType("quorem")
    quorem.__path__ = [str(PACKAGES["quorem"])]
    sys.modules["quorem"] = quorem  # without running __init__ (it imports the API)
    for name in ("quorem.engine", "quorem.rules"):
        _load_package(name, PACKAGES[name])
    spec = importlib.util.spec_from_file_location(
        "quorem._native", PACKAGES["quorem"] / "_native.py"
    )
    assert spec is not None and spec.loader is not None
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    native.install()  # extensions an earlier build left in the tree are not imported
    return native


def _generate() -> None:
    # Only importable once _source_tree has mapped the packages.
    from quorem.engine.prebuilt import main  # type: ignore[import-not-found]  # noqa: PLC0415

    main([str(PACKAGES["quorem.engine"])])


def _source_of(module: str) -> Path:
    package, _, leaf = module.rpartition(".")
    return PACKAGES[package] / f"{leaf}.py"


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
            nthreads=os.cpu_count() or 1,
        )
    )


class BuildNative(build_ext):
    """build_ext that records which sources each extension was built from."""

    def finalize_options(self) -> None:
        """Compile the extensions in parallel, one per core (install time)."""
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

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


# Commands that only describe the package (pip asks for metadata before it builds): the
# generated module is not needed for those.
_METADATA_ONLY = {"egg_info", "dist_info", "--name", "--version"}
NATIVE = _source_tree()
if not set(sys.argv[1:]) <= _METADATA_ONLY | {a for a in sys.argv[1:] if a.startswith("-")}:
    _generate()
setup(ext_modules=_extensions(NATIVE), cmdclass={"build_ext": BuildNative})
