"""The int64 obligation is never shown by assuming the names fit in int64.

A rest of a sum pattern or a range bound is a value the input need not compute, so
bounding it to int64 assumes what the obligation must show. The guard search found a
rule that way ``proven`` at 2 s that a longer run refutes with a replayed overflow.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from quorem.rulefile import parse_rules
from quorem.verify import prove as prove_module
from quorem.verify.prove import ProofResult, obligations_of, prove

RULE = """
rule split-multiple-trunc-guarded
  doc:       (x*m + b) // n => x + b // n, guarded as a guard search once proposed
  semantics: trunc
  pattern:   (x*M + b) // N
  guard:     M == N and vmax(b) < N and M < 0 and vmin(x) >= 0
  rewrite:   x + b // N
"""


def _first_attempt_gives_up(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """Make the unbounded query answer unknown; record the extra premises of each query."""
    calls: list[list[Any]] = []
    original = prove_module._Query.attempt

    def attempt(self: Any, extra: list[Any], timeout: float, method: str, *rest: Any) -> Any:
        calls.append(extra)
        if not extra:
            return ProofResult(self.ob, "unknown", method, 0.0, None, "Z3 answered unknown")
        return original(self, extra, timeout, method, *rest)

    monkeypatch.setattr(prove_module._Query, "attempt", attempt)
    return calls


def test_int64_obligation_is_not_proven_with_names_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (rule,) = parse_rules(RULE)
    ob = next(o for o in obligations_of(rule, 2) if o.kind == "int64" and o.arity == 0)
    calls = _first_attempt_gives_up(monkeypatch)
    result = prove(ob, timeout=5)
    assert result.status not in ("proven", "proven-int64"), result
    assert "values in int64" not in result.method
    assert calls and not calls[0]  # the unbounded query was asked first


def test_equivalence_may_still_be_shown_for_machine_integers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (rule,) = parse_rules(RULE)
    ob = next(o for o in obligations_of(rule, 2) if o.kind == "equivalence")
    calls = _first_attempt_gives_up(monkeypatch)
    result = prove(ob, timeout=5)
    assert any(extra for extra in calls)  # the bounded query was asked
    assert dataclasses.asdict(result)["status"] in ("proven-int64", "unsound", "unknown")
