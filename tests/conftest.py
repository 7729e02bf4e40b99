"""Pytest configuration: make the shared Hypothesis strategies importable as ``strategies``.

The project runs pytest with ``--import-mode=importlib``, which does not put the test
directory on ``sys.path``; the test modules import ``strategies`` from here.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# tinygrad reads its settings once, when first imported, and several test modules import
# it: its device is chosen here, before any of them. Its CPU device compiles with clang;
# without clang the kernels run on its PYTHON device (same code generation, emulated).
_CLANG = next((c for c in ("clang", "clang-14", "clang-15") if shutil.which(c)), None)
os.environ.setdefault("DEV", "CPU" if _CLANG else "PYTHON")
if _CLANG:
    os.environ.setdefault("CC", _CLANG)


_REPO = Path(__file__).resolve().parent.parent


def _records() -> dict[Path, bytes]:
    folders = ("rules", "docs", "tests", "benchmarks", "engine", "verify", "adapters")
    return {p: p.read_bytes() for d in folders for p in (_REPO / d).rglob("*.proof.json")}


@pytest.fixture(scope="session", autouse=True)
def _proof_records_untouched() -> Iterator[None]:
    """No test writes a proof record into the repository or changes one (they are proofs)."""
    before = _records()
    yield
    after = _records()
    assert after == before, sorted(str(p) for p in after.keys() ^ before.keys()) or [
        str(p) for p in after if after[p] != before.get(p)
    ]
