"""Pytest configuration: test tiers, Hypothesis profiles, shared helpers on ``sys.path``.

* **Tiers.** ``python -m pytest`` (the README's command) runs the fast tier: every test
  module, tests marked ``slow`` deselected, property tests at their ``fast`` budget.
  ``--tier slow`` runs the slow tests and the property tests (CI runs it with the ``ci``
  profile: each property at its full budget), ``--tier all`` everything. Tests marked
  ``catalogue`` prove the whole shipped catalogue, which CI's ``quorem verify`` already
  does: CI's slow tier leaves them out (nothing is proven twice in one CI run).
* **Hypothesis profiles** (``--hypothesis-profile NAME`` or ``HYPOTHESIS_PROFILE``):
  ``fast`` (default: at most 20 examples a test, derandomized, so a run is repeatable),
  ``ci`` (each test's full budget, random), ``thorough`` (ten times the budget, for
  nights). A test states its full budget with ``support.examples(N)``.
* The project runs pytest with ``--import-mode=importlib``, which does not put the test
  directory on ``sys.path``; the test modules import ``support`` and ``strategies`` from
  here.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import pytest
from hypothesis import HealthCheck, settings

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from support import FAST_EXAMPLES, THOROUGH_EXAMPLES  # noqa: E402  (found through the path above)

# tinygrad reads its settings once, when first imported, and several test modules import
# it: its device is chosen here, before any of them. Its CPU device compiles with clang;
# without clang the kernels run on its PYTHON device (same code generation, emulated).
_CLANG = next((c for c in ("clang", "clang-14", "clang-15") if shutil.which(c)), None)
os.environ.setdefault("DEV", "CPU" if _CLANG else "PYTHON")
if _CLANG:
    os.environ.setdefault("CC", _CLANG)


_REPO = Path(__file__).resolve().parent.parent


class _Common(TypedDict):
    """The settings every profile shares (a TypedDict: mypy checks them by name)."""

    deadline: None
    suppress_health_check: list[HealthCheck]


# Slow examples are the point of some properties (whole rule sets, long sums): no deadline.
_COMMON: _Common = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("fast", max_examples=FAST_EXAMPLES, derandomize=True, **_COMMON)
settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("thorough", max_examples=THOROUGH_EXAMPLES, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

_TIERS = ("fast", "slow", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--tier``: which tests run (see the module docstring)."""
    parser.addoption(
        "--tier",
        choices=_TIERS,
        default=os.environ.get("QUOREM_TEST_TIER", "fast"),
        help="fast (default: slow tests left out), slow (only those), all",
    )


def _in_tier(item: pytest.Item, tier: str) -> bool:
    slow = item.get_closest_marker("slow") is not None
    if tier == "fast":
        return not slow
    # The slow tier: the slow tests, and the property tests again at the profile's budget.
    return slow or bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests of the chosen tier; the others are deselected (and counted)."""
    tier = config.getoption("--tier")
    if tier == "all":
        return
    keep = [i for i in items if _in_tier(i, tier)]
    dropped = [i for i in items if i not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


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
