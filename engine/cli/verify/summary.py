"""The summary of a run: how many results are proven, unsound and unknown, and the checks'."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from quorem.verify.confirm import DISAGREE, NO_QUERY, Z3_ONLY
from quorem.verify.jobs import Checks
from quorem.verify.prove import PROVEN_STATUSES, obligation_kind

from .outcome import SEED_DEPENDENT

__all__ = ["FAILED", "summary"]

# The statuses that fail a run (exit 1); neither these nor a proof is unknown.
FAILED: Final = ("unsound", DISAGREE)


def summary(
    results: Sequence[dict[str, Any]], seconds: float, checks: Checks | None = None
) -> dict[str, Any]:
    """The counts of ``results`` as the summary line and ``--json`` show them.

    Proven, unsound (and of those, wrong values and overflows), unknown, the run's
    ``seconds``; with ``checks`` asking for them, the seed-dependent, the disagreeing
    and the confirming solver's counts too.
    """
    unsound = [r for r in results if r["status"] == "unsound"]
    out: dict[str, Any] = {
        "proven": sum(r["status"] in PROVEN_STATUSES for r in results),
        "unsound": len(unsound),
        # Apart: a wrong value (equivalence) is a bug at any width, an overflow (int64)
        # only in machine code.
        "wrong_value": sum(obligation_kind(r) == "equivalence" for r in unsound),
        "overflow": sum(obligation_kind(r) == "int64" for r in unsound),
        # unknown, vacuous, seed-dependent and proven-on-grid (weaker than a proof)
        "unknown": sum(r["status"] not in {*PROVEN_STATUSES, *FAILED} for r in results),
        "seconds": round(seconds, 3),
    }
    # The counts of the checks asked for only: a plain run's summary keeps its fields.
    if checks is not None and checks.seeds > 1:
        out["seed_dependent"] = sum(r["status"] == SEED_DEPENDENT for r in results)
    if checks is not None and checks.confirm:
        out["disagree"] = sum(r["status"] == DISAGREE for r in results)
        found = [r["confirmation"] for r in results if r.get("confirmation")]
        verdicts = [c["verdict"] for c in found]
        out["confirmation"] = {
            "solver": checks.confirm,
            **{v: verdicts.count(v) for v in (f"z3+{checks.confirm}", Z3_ONLY, DISAGREE)},
            NO_QUERY: verdicts.count(NO_QUERY),
            # Decided by Z3 but not by one query (on the grid, termination, intervals).
            "not checked": sum(
                r["status"] in {*PROVEN_STATUSES, "unsound"} and not r.get("confirmation")
                for r in results
            ),
            "seconds": round(sum(c["seconds"] for c in found), 3),
            "z3 seconds": round(sum(r["seconds"] for r in results if r.get("confirmation")), 3),
        }
    return out
