"""A result as shown, with its checks: Z3's other seeds and a confirming solver's answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from quorem.verify.confirm import DISAGREE
from quorem.verify.jobs import Checks
from quorem.verify.prove import verdict

__all__ = ["SEED_DEPENDENT", "outcome"]

SEED_DEPENDENT: Final = "seed-dependent"


def outcome(r: dict[str, Any], checks: Checks) -> dict[str, Any]:
    """The result shown for ``r``, a result with its checks (seeds, a confirmation).

    Z3's answers under every seed become the list ``seeds`` (seed 0 is ``r`` itself);
    differing statuses make the status ``seed-dependent``, and a confirming solver's
    opposite answer makes it ``disagree`` (Z3's own then in ``z3_status``).
    """
    out = dict(r)
    runs = r.get("seeds")
    if runs is not None and checks.seeds > 1:
        first = {"seed": 0, **{k: r[k] for k in ("status", "method", "seconds")}}
        listed = [first] + [{"seed": int(k), **v} for k, v in sorted(runs.items(), key=_num)]
        out["seeds"] = listed
        # The verdict must not depend on the seed; the method may (proven under one seed,
        # proven-int64 under another are both proofs, as the exit status counts them).
        if len({verdict(run["status"]) for run in listed}) > 1:
            out["z3_status"] = r["status"]
            out["status"] = SEED_DEPENDENT
            out["report"] = _seed_report(r, listed)
    c = r.get("confirmation")
    if c is not None and c["verdict"] == DISAGREE:
        out["z3_status"] = r["status"]
        out["status"] = DISAGREE
        out["report"] = c.get("report", "")
    return out


def _num(item: tuple[str, Any]) -> int:
    return int(item[0])


def _seed_report(r: dict[str, Any], runs: Sequence[dict[str, Any]]) -> str:
    head = f"{r['file']}:{r['line']}: rule {r['name']} "
    head += f"({r['semantics']} {r['obligation']}): seed-dependent"
    lines = [head, "  the status depends on Z3's random seed (each seed run alone):"]
    lines += [
        f"    seed {run['seed']}: {run['status']} ({run['method']}, {run['seconds']:.2f}s)"
        for run in runs
    ]
    return "\n".join(lines)
