"""``quorem demo``: the worked example, simplified and explained."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any, Final, TextIO

from ..api import Semantics, count_divmod, default_ruleset, parse, to_text
from ..rewrite import rewrite
from .args import EXIT_OK
from .explain import explain_lines
from .expressions import Bounds

__all__ = ["DEMO_EXPECTED", "DEMO_EXPR", "DEMO_VARS", "add_parser", "run"]

DEMO_EXPR: Final = "((R3*8 + R4*4 + R2)//8)*8 + (R3*8 + R4*4 + R2)%8"
DEMO_VARS: Final[Mapping[str, tuple[int, int]]] = {"R3": (0, 3), "R4": (0, 1), "R2": (0, 3)}
DEMO_EXPECTED: Final = "R2 + R3*8 + R4*4"


def add_parser(subs: Any) -> None:
    """Register ``quorem demo`` on a subparsers object (its handler is :func:`run`)."""
    demo = subs.add_parser("demo", help="simplify and explain a worked example")
    demo.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem demo``: simplify and explain the worked example; 1 if the result is off."""
    bounds: Bounds = dict(DEMO_VARS)
    semantics = Semantics.FLOOR
    term = parse(DEMO_EXPR, bounds, semantics)
    result = rewrite(term, default_ruleset(), trace=True)
    text = to_text(result.term, semantics)
    ranges = ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in DEMO_VARS.items())
    var_opts = " ".join(f"--var {n}={lo}:{hi}" for n, (lo, hi) in DEMO_VARS.items())
    lines = [
        "quorem demo: the worked example (floor semantics)",
        "",
        f"variables: {ranges}",
        f"input:     {DEMO_EXPR}",
        f"result:    {text}",
        f"ops:       {count_divmod(term)} -> {count_divmod(result.term)}"
        "  (//, % and division functions)",
        "",
        *explain_lines(result, semantics),
        "",
        "The same with quorem simplify:",
        f"  quorem simplify '{DEMO_EXPR}' {var_opts} --explain",
    ]
    out.write("\n".join(lines) + "\n")
    if text != DEMO_EXPECTED:
        err.write(f"quorem demo: error: expected {DEMO_EXPECTED}, got {text}\n")
        return 1
    return EXIT_OK
