"""The tinygrad hook: off by default, reversible, output-preserving, and safe when quorem fails.

Kernels run on tinygrad's CPU device when clang is there, else on its PYTHON device (the
same kernel generation, an emulator running the kernels). Compilation stays in this
process (``PARALLEL=0``) so the hook's counters see it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("tinygrad")

_CLANG = next((c for c in ("clang", "clang-14", "clang-15") if shutil.which(c)), None)
os.environ.setdefault("DEV", "CPU" if _CLANG else "PYTHON")
if _CLANG:
    os.environ.setdefault("CC", _CLANG)
os.environ.setdefault("CACHELEVEL", "0")
os.environ.setdefault("PARALLEL", "0")

import numpy as np  # noqa: E402
from tinygrad import Tensor, codegen  # noqa: E402
from tinygrad.engine import realize  # noqa: E402

import quorem.adapters._tinygrad_hook as hook_module  # noqa: E402
import quorem.adapters._tinygrad_terms as terms_module  # noqa: E402
import quorem.adapters.tinygrad as adapter  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test generates its kernels anew (no program cached by another) and ends unhooked."""
    codegen.to_program_cache.clear()
    monkeypatch.setattr(hook_module, "_memo", type(hook_module._memo)())
    yield
    adapter.uninstall()


def _chain() -> np.ndarray:
    """A split, permute and merge of odd extents: tinygrad leaves 5 divisions, quorem 4."""
    x = Tensor(np.arange(6 * 10 * 12, dtype=np.int32).reshape(6, 10, 12))
    y = x.reshape(3, 2, 10, 12).permute(3, 1, 0, 2).reshape(12, 60).transpose()
    out: np.ndarray = (y.reshape(5, 12, 12) + 1).numpy()
    return out


def _conv() -> np.ndarray:
    """A padded strided convolution over integers: every sum is exact in float32."""
    x = Tensor(np.arange(2 * 3 * 11 * 11, dtype=np.float32).reshape(2, 3, 11, 11) % 7)
    w = Tensor(np.arange(4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3) % 5 - 2)
    out: np.ndarray = x.conv2d(w, stride=2, padding=1).numpy()
    return out


def test_off_by_default() -> None:
    code = (
        "import os; os.environ.pop('QUOREM_TINYGRAD', None)\n"
        "import tinygrad.codegen as c, quorem.adapters.tinygrad as a\n"
        "from tinygrad.uop.ops import graph_rewrite\n"
        "print(a.installed(), c.graph_rewrite is graph_rewrite)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "QUOREM_TINYGRAD"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_environment_variable_installs() -> None:
    code = "import quorem.adapters.tinygrad as a; print(a.installed())"
    env = {**os.environ, "QUOREM_TINYGRAD": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]


def test_install_uninstall_restores_tinygrad() -> None:
    originals = (codegen.graph_rewrite, codegen.to_program_key, realize._compile_kernel)
    assert not adapter.installed()
    adapter.install()
    adapter.install()  # idempotent
    assert adapter.installed() and codegen.graph_rewrite is not originals[0]
    adapter.uninstall()
    adapter.uninstall()
    assert not adapter.installed()
    assert (codegen.graph_rewrite, codegen.to_program_key, realize._compile_kernel) == originals
    with adapter.hook():
        assert adapter.installed()
    assert not adapter.installed()


@pytest.mark.slow
def test_same_output_fewer_divisions() -> None:
    want_chain, want_conv = _chain(), _conv()
    adapter.hook_stats(reset=True)
    with adapter.hook():
        got_chain, got_conv = _chain(), _conv()
    stats = adapter.hook_stats()
    assert np.array_equal(got_chain, want_chain)
    assert np.array_equal(got_conv, want_conv)
    assert stats.errors == 0
    assert stats.operands_rewritten >= 1 and stats.divmods_removed >= 1
    # Off again: tinygrad's own kernels, whose result is the same.
    adapter.hook_stats(reset=True)
    assert np.array_equal(_chain(), want_chain)
    assert adapter.hook_stats().operands_seen == 0


def test_quorem_error_falls_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    want = _chain()

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("quorem broke")

    monkeypatch.setattr(terms_module, "simplify", broken)  # the hook looks it up there
    monkeypatch.setattr(hook_module._state, "logged_error", False)
    adapter.hook_stats(reset=True)
    with adapter.hook():
        got = _chain()
    assert np.array_equal(got, want)
    stats = adapter.hook_stats()
    assert stats.errors >= 1 and stats.operands_rewritten == 0
    logged = [r for r in caplog.records if r.name == "quorem.adapters.tinygrad"]
    assert len(logged) == 1  # once, however many expressions failed
