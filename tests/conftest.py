"""Pytest configuration: make the shared Hypothesis strategies importable as ``strategies``.

The project runs pytest with ``--import-mode=importlib``, which does not put the test
directory on ``sys.path``; the test modules import ``strategies`` from here.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
