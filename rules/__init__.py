"""The shipped rule files of quorem (data only): see :func:`rule_files`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["constraint_rule_files", "lowering_rule_files", "rule_files"]


def rule_files() -> list[Path]:
    """The shipped ``*.rules`` files, in priority order (their numeric name prefix)."""
    root = resources.files(__name__)
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".rules"))


def constraint_rule_files() -> list[Path]:
    """The ``constraints/*.rules`` files, in priority order.

    Rules the indexing-map simplifier applies to constraints (written as comparisons),
    proven like every rule but not part of the default simplifier.
    """
    root = resources.files(__name__) / "constraints"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".rules"))


def lowering_rule_files() -> list[Path]:
    """The ``lowering/*.rules`` files: between floor, truncating and Euclidean division.

    And ceiling division to each of them, for emission and SymPy. Proven like every
    rule; applied by the emitter's lowering pass (which picks, for a target semantics,
    the rules whose rewrite writes only its divisions), not by the default simplifier.
    """
    root = resources.files(__name__) / "lowering"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".rules"))
