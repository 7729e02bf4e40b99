"""The shipped rule files of quorem (data only): see :func:`rule_files`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["constraint_rule_files", "lowering_rule_files", "rule_files"]


def _rules_in(folder: Traversable) -> list[Path]:
    """The ``*.rules`` files of ``folder``, sorted, each as the file itself.

    Resolved: an editable install reaches them through links, and messages, reports and
    proof records name the file in the source tree, not the link.
    """
    return sorted(Path(str(p)).resolve() for p in folder.iterdir() if p.name.endswith(".rules"))


def rule_files() -> list[Path]:
    """The shipped ``*.rules`` files, in priority order (their numeric name prefix)."""
    return _rules_in(resources.files(__name__))


def constraint_rule_files() -> list[Path]:
    """The ``constraints/*.rules`` files, in priority order.

    Rules the indexing-map simplifier applies to constraints (written as comparisons),
    proven like every rule but not part of the default simplifier.
    """
    return _rules_in(resources.files(__name__) / "constraints")


def lowering_rule_files() -> list[Path]:
    """The ``lowering/*.rules`` files: between floor, truncating and Euclidean division.

    And ceiling division to each of them, for emission and SymPy. Proven like every
    rule; applied by the emitter's lowering pass (which picks, for a target semantics,
    the rules whose rewrite writes only its divisions), not by the default simplifier.
    """
    return _rules_in(resources.files(__name__) / "lowering")
