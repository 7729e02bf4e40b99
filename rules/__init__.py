"""The shipped rule files of quorem (data only): see :func:`rule_files`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["rule_files"]


def rule_files() -> list[Path]:
    """The shipped ``*.rules`` files, in priority order (their numeric name prefix)."""
    root = resources.files(__name__)
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".rules"))
