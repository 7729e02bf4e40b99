"""``--suggest-guard``: the weakest guards found for the rules not proven."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from quorem.verify.guards import suggest_for_results, suggestion_json

from ...rule import Rule

__all__ = ["suggest"]


def suggest(
    rules: Sequence[Rule], results: Sequence[dict[str, Any]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """The guards suggested for the rules of ``results`` not proven, as JSON with their text."""
    found = suggest_for_results(
        rules,
        results,
        arity=min(args.arity, 2),
        max_candidates=args.guard_candidates,
        rlimit=args.guard_rlimit or None,
    )
    return [{**suggestion_json(s), "rendered": s.render()} for s in found]
