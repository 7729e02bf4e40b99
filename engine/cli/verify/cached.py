"""The proof cache as ``quorem verify`` uses it: what a run takes from it, what it keeps.

Proofs are cached under their obligation's key, the checks of a proof (a seed run, a
confirmation) each under a key of their own, and the interval proofs as one entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import z3

from quorem.verify.cache import ProofCache, cache_key
from quorem.verify.confirm import DEFINITE_ANSWERS, confirm_key, expected_answer
from quorem.verify.digest import code_digest
from quorem.verify.jobs import Checks
from quorem.verify.prove import OBLIGATIONS, PROVEN_STATUSES, Obligation
from quorem.verify.termination import NESTED_OBLIGATION, termination_cache_key

from .outcome import outcome

__all__ = [
    "TERMINATION_KINDS",
    "cache_key_of",
    "cached_intervals",
    "from_cache",
    "remember",
    "remember_intervals",
]

# The obligations proven by the termination code, cached under keys of their own.
TERMINATION_KINDS: Final = ("termination", NESTED_OBLIGATION)
# What a worker adds to a proof's result: cached under keys of their own.
_CHECK_FIELDS: Final = ("seeds", "confirmation")


def cache_key_of(ob: Obligation, digest: str) -> str:
    """The key ``ob``'s proof is cached under (``digest``: the termination code's)."""
    if ob.kind in TERMINATION_KINDS:
        return termination_cache_key(ob, digest)
    return cache_key(ob)


def from_cache(
    obs: Sequence[Obligation],
    keys: Sequence[str],
    cache: ProofCache | None,
    checks: Checks,
    version: str,
) -> tuple[list[dict[str, Any] | None], list[dict[str, Any] | None]]:
    """Per obligation, its result if the cache has all of it, else None.

    And per obligation, the part the cache has when a check is still to run (the job
    then runs only that check), else None.
    """
    results: list[dict[str, Any] | None] = []
    given: list[dict[str, Any] | None] = []
    for ob, key in zip(obs, keys, strict=True):
        hit = cache.lookup(key) if cache is not None else None
        known = None
        if cache is not None and hit is not None:
            known = {**hit, "file": ob.rule.file, "line": ob.rule.line, "cached": True}
            _cached_checks(cache, key, known, checks, version)
            if not _lacks_checks(ob, known, checks):
                results.append(outcome(known, checks))
                given.append(None)
                continue
        results.append(None)
        given.append(known)
    return results, given


def _seed_key(key: str, seed: int) -> str:
    """The cache key of a proof under Z3 seed ``seed`` (``key``: the proof's own)."""
    return f"seed:{seed}:{key}"


def _confirm_key(key: str, r: dict[str, Any], checks: Checks, version: str) -> str | None:
    expected = expected_answer(r)
    if expected is None:
        return None
    return confirm_key(key, str(r["method"]), expected, checks.confirm, version)


def _cached_checks(
    cache: ProofCache, key: str, r: dict[str, Any], checks: Checks, version: str
) -> None:
    """Add to the cached result ``r`` its cached seed runs and confirmation."""
    for seed in range(1, checks.seeds):
        hit = cache.lookup(_seed_key(key, seed))
        if hit is not None:
            r.setdefault("seeds", {})[str(seed)] = {**hit, "cached": True}
    ckey = _confirm_key(key, r, checks, version) if checks.confirm else None
    hit = cache.lookup(ckey) if ckey else None
    if hit is not None:
        r["confirmation"] = {**hit, "cached": True}


def _lacks_checks(ob: Obligation, r: dict[str, Any], checks: Checks) -> bool:
    """Whether the cached result ``r`` still needs a seed run or a confirmation."""
    seeds = r.get("seeds", {})
    if ob.kind in OBLIGATIONS and any(str(seed) not in seeds for seed in range(1, checks.seeds)):
        return True
    return bool(checks.confirm) and expected_answer(r) is not None and "confirmation" not in r


def _remember_checks(
    cache: ProofCache, key: str, r: dict[str, Any], checks: Checks, version: str
) -> None:
    """Cache the definite seed runs and confirmations of ``r``, as proofs are cached."""
    for seed, run in r.get("seeds", {}).items():
        if not run.get("cached") and run["status"] in {*PROVEN_STATUSES, "unsound"}:
            cache.store(_seed_key(key, int(seed)), run)
    c = r.get("confirmation")
    ckey = _confirm_key(key, r, checks, version) if c and checks.confirm else None
    # Unknown (``z3 only``) is not cached: a longer limit may confirm it.
    if c and ckey and not c.get("cached") and c["answer"] in DEFINITE_ANSWERS:
        cache.store(ckey, c)


def remember(
    cache: ProofCache, ob: Obligation, key: str, r: dict[str, Any], *, checks: Checks, version: str
) -> None:
    """Cache a definite result (a proof, a confirmed counterexample; never an unknown).

    And its definite checks, each under its own key (:func:`_remember_checks`).
    """
    _remember_checks(cache, key, r, checks, version)
    if r.get("cached"):
        return
    entry = {k: v for k, v in r.items() if k not in ("file", "line", *_CHECK_FIELDS)}
    if ob.kind not in TERMINATION_KINDS:
        cache.put(ob, entry)  # keyed by cache_key(ob), as ``key`` is
    elif entry.get("status") == "proven":
        cache.store(key, entry)


def remember_intervals(cache: ProofCache, results: Sequence[dict[str, Any] | None]) -> None:
    """Cache the interval proofs once all of them are in and proven (one entry)."""
    if results and all(r is not None and r["status"] == "proven" for r in results):
        cache.store(_interval_key(), {"results": list(results)})


def _interval_key() -> str:
    # The interval proofs run the engine's own code: they hold for this code digest.
    return f"interval:{code_digest()}:{z3.get_version_string()}"


def cached_intervals(cache: ProofCache | None, checks: Checks) -> list[dict[str, Any]] | None:
    """The interval results cached, as shown; None when they are to be proven (again).

    They are cached as one entry with the confirmations of the run that made them:
    shown only when a confirmation is asked, and proven again (recording the queries to
    confirm) when one is asked and some proven result lacks a definite one.
    """
    hit = cache.lookup(_interval_key()) if cache is not None else None
    if hit is None:
        return None
    results: list[dict[str, Any]] = hit["results"]
    if checks.confirm and not all(
        r.get("confirmation", {}).get("answer") in DEFINITE_ANSWERS
        for r in results
        if r["status"] == "proven"
    ):
        return None
    if not checks.confirm:
        results = [{k: v for k, v in r.items() if k != "confirmation"} for r in results]
    return [{**r, "cached": True} for r in results]
