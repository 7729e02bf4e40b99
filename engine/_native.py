"""Which engine modules run compiled, and the switch back to interpreted Python.

A native build (``setup.py``) compiles the modules in :data:`NATIVE_MODULES` -- the same
``.py`` files -- to C extension modules placed beside them, and records in
``_native_build.txt`` the digest of each ``.py`` it compiled. :func:`install` puts a
finder first on ``sys.meta_path`` that loads the ``.py`` instead of the extension when

* ``QUOREM_PURE_PYTHON=1`` is set (the interpreted engine, same results), or
* the extension was not built from the ``.py`` now beside it (a checkout edited after
  ``pip install -e .``): compiled code never runs stale.

Everything else imports as usual. This module imports nothing of quorem's.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

__all__ = ["NATIVE_MODULES", "compiled_modules", "install", "pure_python"]

NATIVE_MODULES: Final = (
    "quorem.term",
    "quorem.interval",
    "quorem.overflow",
    "quorem.monomial",
    "quorem.compiler.expr",
    "quorem.rewrite",
)

RECORD: Final = "_native_build.txt"


def pure_python() -> bool:
    """Whether ``QUOREM_PURE_PYTHON=1`` asks for the interpreted engine."""
    return os.environ.get("QUOREM_PURE_PYTHON") == "1"


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds a native module's ``.py`` when its extension must not be used."""

    def __init__(self) -> None:
        self._records: dict[Path, dict[str, str]] = {}
        self._lock = threading.Lock()

    def _built_from(self, folder: Path) -> dict[str, str]:
        with self._lock:
            if folder not in self._records:
                record: dict[str, str] = {}
                try:
                    text = (folder / RECORD).read_text(encoding="utf-8")
                except OSError:
                    text = ""
                for line in text.splitlines():
                    name, _, digest = line.partition(" ")
                    record[name] = digest
                self._records[folder] = record
            return self._records[folder]

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """The ``.py``'s spec when the extension must not load; else None (as usual)."""
        if fullname not in NATIVE_MODULES or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path:
            source = Path(entry) / f"{leaf}.py"
            if not source.is_file():
                continue
            if not pure_python():
                built = self._built_from(source.parent).get(fullname)
                if built is not None and built == hashlib.sha256(source.read_bytes()).hexdigest():
                    return None  # the extension beside it was built from this very source
            return importlib.util.spec_from_file_location(fullname, source)
        return None


_FINDER: Final = _SourceFirst()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def compiled_modules() -> dict[str, bool]:
    """For each module of :data:`NATIVE_MODULES` imported so far, whether it is compiled."""
    out = {}
    for name in NATIVE_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            out[name] = not str(getattr(module, "__file__", "")).endswith(".py")
    return out
