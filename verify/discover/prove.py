"""Prove one discovered rule: equivalence and int64 (a guard synthesised if need be), termination.

:func:`prove_candidate` is the unit of work ``quorem discover`` sends to its executor
(a local process pool or a Dask cluster): it takes and returns plain data (rule text in,
a JSON-able dict out), so it runs in any worker process.

1. The candidate is proven as it stands, then (if it is sound but may overflow) with
   the shipped rules' usual guard ``fits_int64(rewrite)``. Failing both, it goes to
   the guard search of ``quorem verify
   --suggest-guard`` (:func:`quorem.verify.guards.suggest_guard`): proven as it stands,
   or the weakest guard of its grammar (signs, divisibility, products of constants,
   ranges, ``fits_int64``) under which every equivalence and int64 obligation is proven.
2. The guarded rule's termination obligations (the shipped order, and the nested order)
   must be proven too. A rule that fails any of them is returned with its status and
   why, never as proven.
"""

from __future__ import annotations

import time
from typing import Any, Final

from quorem.rule import Call, Rule
from quorem.rulefile import parse_rules

from ..guards import rule_text_with_guard, suggest_guard
from ..mutate import render_expr
from ..prove import obligations_of, private_z3_context, prove
from ..termination import (
    check_nested,
    check_termination,
    nested_obligations,
    termination_obligations,
)

__all__ = ["PROVEN", "prove_candidate"]

PROVEN: Final = "proven"
# The guard search's budget per candidate: discovery proves hundreds of candidates, so
# each gets fewer guard candidates than `quorem verify --suggest-guard` (120) allows.
_GUARD_CANDIDATES: Final = 24
_GUARD_SECONDS: Final = 30.0
_TERMINATION_TIMEOUT: Final = 10.0
_QUERY_TIMEOUT: Final = 10.0


def prove_candidate(text: str, guard_candidates: int = _GUARD_CANDIDATES) -> dict[str, Any]:
    """Prove the one rule of ``text``; the outcome as a JSON-able dict.

    ``status`` is ``proven`` (``text`` is then the proven rule, guard included, and
    ``guard`` the guard's text, "" for none), ``unproven`` (no guard of the grammar makes
    it sound: ``why`` says what failed, ``counterexample`` one the prover confirmed) or
    ``not-terminating`` (sound, but its termination obligation is not proven: ``why``).
    """
    (rule,) = parse_rules(text, "<discovered>")
    start = time.perf_counter()
    with private_z3_context():
        plain = _proven(rule)
        if plain == "equivalence":
            # Sound but not free of new overflow: the shipped rules' usual guard.
            bounded = rule_text_with_guard(rule, Call("fits_int64", (rule.rewrite,)))
            if _proven(parse_rules(bounded, "<discovered>")[0]) == "all":
                return _terminating(bounded, start)
    if plain == "all":
        return _terminating(text, start)
    suggestion = suggest_guard(rule, max_candidates=guard_candidates, time_limit=_GUARD_SECONDS)
    out: dict[str, Any] = {"name": rule.name, "seconds": round(time.perf_counter() - start, 3)}
    if suggestion.status == "already-proven":
        proven_text = text
    elif suggestion.status == "found":
        proven_text = suggestion.text
    else:
        cex = suggestion.counterexamples[0].short() if suggestion.counterexamples else ""
        return {
            **out,
            "status": "unproven",
            "text": text,
            "why": suggestion.note,
            "counterexample": cex,
        }
    return _terminating(proven_text, start)


def _proven(rule: Rule) -> str:
    """How much of ``rule`` is proven: ``all``, ``equivalence`` (not int64) or ``none``."""
    obs = obligations_of(rule)
    results = {ob: prove(ob, _QUERY_TIMEOUT) for ob in obs}
    if all(r.ok for r in results.values()):
        return "all"
    if all(r.ok for ob, r in results.items() if ob.kind == "equivalence"):
        return "equivalence"
    return "none"


def _terminating(text: str, start: float) -> dict[str, Any]:
    """The outcome for ``text``, a rule proven sound: proven if it also terminates."""
    (rule,) = parse_rules(text, "<discovered>")
    guard = render_expr(rule.guard) if rule.guard is not None else ""
    out: dict[str, Any] = {"name": rule.name, "text": text, "guard": guard}
    with private_z3_context():
        for ob in [*termination_obligations(rule), *nested_obligations(rule)]:
            check = check_termination if ob.kind == "termination" else check_nested
            r = check(ob, _TERMINATION_TIMEOUT)
            if not r.ok:
                why = r.report.splitlines()[0] if r.report else r.status
                seconds = round(time.perf_counter() - start, 3)
                return {**out, "status": "not-terminating", "why": why, "seconds": seconds}
    return {**out, "status": PROVEN, "seconds": round(time.perf_counter() - start, 3)}
