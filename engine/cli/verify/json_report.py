"""The JSON report (``--json``): one object on standard output."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["write_json"]


def _json(r: dict[str, Any]) -> dict[str, Any]:
    """A result as ``--json`` writes it: no report text (the text output's), no cache flag."""
    out = {k: v for k, v in r.items() if k not in ("report", "cached")}
    if "confirmation" in out:
        out["confirmation"] = {k: v for k, v in out["confirmation"].items() if k != "report"}
    return out


def write_json(
    results: Sequence[dict[str, Any]],
    summary: dict[str, Any],
    suggestions: list[dict[str, Any]] | None,
) -> None:
    """Write the results, the summary and the guards suggested (if sought) as one line."""
    out = [_json(r) for r in results]
    extra = {} if suggestions is None else {"suggestions": suggestions}
    json.dump({"rules": out, "summary": summary, **extra}, sys.stdout)
    print()
