"""The text report: a line per result as it comes, then the reports and the summary lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quorem.verify.confirm import DISAGREE, NO_QUERY, Z3_ONLY
from quorem.verify.prove import PROVEN_STATUSES

__all__ = ["Progress", "print_reports"]


class Progress:
    """Per-obligation output: plain lines in CI and pipes, a counting line on a terminal.

    On a terminal the proofs overwrite one line as they come; anything not proven is
    printed in full.
    """

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.count = 0

    def __call__(self, r: dict[str, Any]) -> None:
        """Show the result ``r`` as it arrives."""
        self.count += 1
        if not self.tty:
            print(_line(r), flush=True)
        elif r["status"] in PROVEN_STATUSES:
            print(f"\r\033[K[{self.count}] {_line(r)}", end="", flush=True)
        else:
            print(f"\r\033[K{_line(r)}", flush=True)

    def close(self) -> None:
        """Clear the counting line (a terminal only)."""
        if self.tty and self.count:
            print("\r\033[K", end="", flush=True)


def _status_label(r: dict[str, Any]) -> str:
    """``r``'s status as shown: ``proven (z3+cvc5)``, ``proven (z3 only)``, ``DISAGREE``."""
    if r["status"] == DISAGREE:
        return "DISAGREE"
    c = r.get("confirmation")
    if c and r["status"] in {*PROVEN_STATUSES, "unsound"}:
        return f"{r['status']} ({c['verdict']})"
    return str(r["status"])


def _line(r: dict[str, Any]) -> str:
    cached = " (cached)" if r.get("cached") else ""
    c = r.get("confirmation")
    second = ""
    if c:
        why = f", {c['reason']}" if c.get("reason") else ""
        second = f", {c['solver']} {c['answer']} {c['seconds']:.2f}s{why}"
        second += " (cached)" if c.get("cached") else ""
    return (
        f"{_status_label(r):<13} {r['name']} [{r['semantics']} {r['obligation']}] "
        f"{r['method']} {r['seconds']:.2f}s{cached}{second}"
    )


def print_reports(results: Sequence[dict[str, Any]], summary: dict[str, Any]) -> None:
    """The reports of the results not proven, and the summary lines."""
    # Every result was printed as it arrived (Progress); only the reports follow.
    for r in results:
        if r["status"] not in PROVEN_STATUSES and r.get("report"):
            print("\n" + r["report"])
    disagree = f"{summary['disagree']} DISAGREE, " if summary.get("disagree") else ""
    print(
        f"\n{summary['proven']} proven, {summary['unsound']} unsound{_unsound_kinds(summary)}, "
        f"{disagree}{summary['unknown']} unknown, in {summary['seconds']:.1f} s"
    )
    if "confirmation" in summary:
        print(_confirmation_line(summary["confirmation"]))


def _unsound_kinds(summary: dict[str, Any]) -> str:
    """`` (1 wrong value, 1 int64 overflow)``: the unsound results by kind; "" for none."""
    if not summary["unsound"]:
        return ""
    value, overflow = summary.get("wrong_value", 0), summary.get("overflow", 0)
    parts = [_counted(value, "wrong value"), _counted(overflow, "int64 overflow")]
    other = summary["unsound"] - value - overflow
    if other:
        parts.append(f"{other} other (interval)")
    return f" ({', '.join(parts)})"


def _counted(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _confirmation_line(c: dict[str, Any]) -> str:
    solver = c["solver"]
    return (
        f"{solver}: {c[f'z3+{solver}']} confirmed (z3+{solver}), {c[Z3_ONLY]} z3 only, "
        f"{c[DISAGREE]} disagree, {c[NO_QUERY]} decided without a query, "
        f"{c['not checked']} not checked; "
        f"{solver} {c['seconds']:.1f} s for Z3's {c['z3 seconds']:.1f} s"
    )
