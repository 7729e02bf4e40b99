"""The SymPy comparison benchmark measures what it says (one small case)."""

from __future__ import annotations

import random

import pytest

sympy = pytest.importorskip("sympy")

from benchmarks.sympy_compare import measure, sympy_divisions  # noqa: E402


def test_sympy_divisions_counts_floor_and_mod_as_a_tree() -> None:
    x = sympy.Symbol("x", integer=True)
    e = sympy.floor(x / 4) + sympy.Mod(sympy.floor(x / 4), 3)
    assert sympy_divisions(e) == 3


def test_measure_one_case() -> None:
    case = {"id": "t", "vars": {"x": [0, 31]}, "expr": "(x // 4)*4 + x % 4", "semantics": "floor"}
    row = measure("seeds", case, timeout=20.0, rng=random.Random(0))
    assert row["ops_before"] == 2 and row["quorem_ops"] == 0
    assert row["sympy_status"] == "ok"
    assert row["sympy_ops_before"] == 2 and row["sympy_ops"] >= 0
    assert row["quorem_us"] > 0 and row["sympy_us"] > 0
