"""The systems the benchmark runs side by side: quorem and, when installed, its peers.

Each system turns a plain expression tree (:mod:`benchmarks.peers.expr`) into its own
expression (``build``), simplifies it (``simplify``, the timed call), drops whatever it
caches between calls (``release``) and reads its result back into a tree (``to_tree``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from benchmarks.peers.expr import Node, Unsupported

__all__ = ["PEER_NAMES", "System", "Unsupported", "load_system"]

Bounds = Mapping[str, tuple[int | None, int | None]]

# Every system the runner knows, in report order; `tinygrad-sym` and `tinygrad-floor`
# are opt-in.
PEER_NAMES = ("quorem", "tinygrad", "tvm", "tinygrad-sym", "tinygrad-floor")
DEFAULT_SYSTEMS = ("quorem", "tinygrad", "tvm")


class System(Protocol):
    """What the runner needs from a simplifier."""

    name: str
    version: str
    # The division operators the system can express exactly (expr.DIVISIONS names).
    division_ops: frozenset[str]
    # What a `simplify` call times and how caches are defeated, for the report.
    method: str

    def build(self, tree: Node, bounds: Bounds) -> Any:
        """The system's own expression (and state) for ``tree``: fresh objects."""

    def simplify(self, built: Any) -> Any:
        """Simplify what ``build`` returned: the only timed call."""

    def release(self) -> None:
        """Drop caches the system keeps between calls (after each call, not timed)."""

    def to_tree(self, result: Any) -> Node:
        """Read a result back (raises Unsupported for an operator it cannot read)."""

    def live_nodes(self) -> int | None:
        """How many interned expression nodes are alive (None: the system interns none)."""


def load_system(name: str) -> System:
    """The named system.

    Raises:
        ImportError: the system's package is not installed.
        ValueError: no such system.

    """
    if name == "quorem":
        from benchmarks.peers.quorem_peer import QuoremSystem  # noqa: PLC0415  (optional peers)

        return QuoremSystem()
    if name in ("tinygrad", "tinygrad-sym", "tinygrad-floor"):
        from benchmarks.peers.tinygrad_peer import TinygradSystem  # noqa: PLC0415  (optional peers)

        return TinygradSystem(use_sym=name == "tinygrad-sym", floor_only=name == "tinygrad-floor")
    if name == "tvm":
        from benchmarks.peers.tvm_peer import TVMSystem  # noqa: PLC0415  (optional peers)

        return TVMSystem()
    raise ValueError(f"unknown system {name!r}: one of {', '.join(PEER_NAMES)}")
