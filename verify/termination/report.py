"""The report of a rule instance not shown decreasing."""

from __future__ import annotations

from ..prove import Obligation
from .measure import COMPONENTS

__all__ = ["failure_report", "times"]


def times(n: int) -> str:
    """``n`` as a count of occurrences: once, twice, 3 times."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def failure_report(
    ob: Obligation, failure: str, values: dict[str, int] | None, order: str = ""
) -> str:
    """The report of ``ob``'s instance not shown decreasing, ``failure`` saying why.

    ``values`` is a counterexample (named values), ``order`` the order it was to decrease
    in (by default the per-rule measure).
    """
    rule = ob.rule
    lines = [
        f"{rule.location}: rule {rule.name} ({ob.label}): not shown decreasing",
        f"  doc: {rule.doc}",
        f"  {failure}",
        f"  measure: {order or '(' + ', '.join(COMPONENTS) + '), compared lexicographically'}",
    ]
    if values:
        width = max(len(k) for k in values)
        lines += ["  example:"] + [f"    {k:<{width}} = {v}" for k, v in values.items()]
    return "\n".join(lines)
