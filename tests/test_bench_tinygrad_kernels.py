"""benchmarks/tinygrad_kernels.py: a workload compiled with and without the quorem hook.

Needs tinygrad (the ``[tinygrad]`` extra) and clang (tinygrad's CPU device compiles C
with it); skipped without them.
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("tinygrad")
if not any(shutil.which(c) for c in ("clang", "clang-14", "clang-15")):
    pytest.skip("tinygrad's CPU device needs clang", allow_module_level=True)

from benchmarks import tinygrad_kernels as bench


def test_the_reshape_chain_loses_a_division_and_keeps_its_values() -> None:
    """Outputs bit-identical; the hook removes a division the kernel computed."""
    (row,) = bench.run(["reshape_chain"], runs=1)
    assert row["identical"]
    assert row["on"]["divmods"] < row["off"]["divmods"]
    assert row["on"]["hook"]["operands_rewritten"] >= 1
    assert row["off"]["hook"]["operands_rewritten"] == 0
