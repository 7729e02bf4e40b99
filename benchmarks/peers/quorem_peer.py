"""quorem as a benchmark system."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import quorem
from benchmarks.peers.expr import DIVISIONS, Node, from_term, to_term
from quorem import term as term_module

__all__ = ["QuoremSystem"]


class QuoremSystem:
    """``quorem.simplify`` with the shipped rules (compiled once, before timing)."""

    name = "quorem"
    division_ops = DIVISIONS
    method = (
        "build: the term from the tree with quorem's constructors (canonical form and value "
        "ranges are computed here); timed: quorem.simplify(term) with the default rule set. "
        "Terms are interned in a weak table and simplify keeps no memo between calls; after "
        "each call every term of the case is dropped and the runner checks that the intern "
        "table is back to its size before the build."
    )

    def __init__(self) -> None:
        try:
            self.version = importlib.metadata.version("quorem")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            self.version = "source"
        self.rules = quorem.default_ruleset()

    def build(self, tree: Node, bounds: Any) -> quorem.Term:
        return to_term(tree, bounds)

    def simplify(self, built: quorem.Term) -> quorem.Term:
        return quorem.simplify(built, self.rules)

    def release(self) -> None:
        """Nothing to drop: quorem caches nothing between calls."""

    def to_tree(self, result: quorem.Term) -> Node:
        return from_term(result)

    def live_nodes(self) -> int | None:
        return len(term_module._TABLE)
