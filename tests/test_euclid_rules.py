"""Euclidean division and the shipped rules (issue 17).

Every shipped rule that is true under Euclidean division is stated for it (``quorem
verify`` proves those instances). This file covers the others: each shipped rule of the
simplifier and of the constraint pass whose semantics leave out ``euclid`` is restated
for ``euclid`` and must be refuted, with a counterexample the engine reproduces on a
concrete term. The list is computed from the rule files, so a rule added later without
``euclid`` is checked too: either it is false there (and this shows why) or it should
say ``euclid``.

The lowering rules (``rules/lowering/``) translate between semantics and are stated per
semantics on purpose; they are not covered here.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

z3 = pytest.importorskip("z3")

from quorem import arith  # noqa: E402
from quorem.ops import Semantics  # noqa: E402
from quorem.rule import Rule  # noqa: E402
from quorem.rulefile import load_rule_files  # noqa: E402
from quorem.rules import constraint_rule_files, rule_files  # noqa: E402
from quorem.verify.executor import in_new_process  # noqa: E402
from quorem.verify.prove import (  # noqa: E402
    ProofResult,
    fresh_z3_context,
    obligations_of,
    prove,
)
from quorem.verify.replay import replay  # noqa: E402

TIMEOUT = 20.0


@functools.cache
def shipped() -> tuple[Rule, ...]:
    """The rules of the simplifier and of the constraint pass."""
    files = [str(p) for p in (*rule_files(), *constraint_rule_files())]
    return tuple(load_rule_files(files))


def not_euclid() -> list[Rule]:
    """Shipped rules stated for some semantics (they use // or %), but not for euclid."""
    return [r for r in shipped() if r.semantics and Semantics.EUCLID not in r.semantics]


def euclid_restatement(r: Rule) -> Rule:
    """``r`` with its ``//`` and ``%`` read as Euclidean division."""
    return dataclasses.replace(r, semantics=(Semantics.EUCLID,))


def refutation(r: Rule) -> ProofResult | None:
    """The first ``unsound`` equivalence obligation of ``r``'s euclid restatement, if any."""
    for ob in obligations_of(euclid_restatement(r), 2):
        if ob.kind == "equivalence":
            res = prove(ob, TIMEOUT)
            if res.status == "unsound":
                return res
    return None


NOT_EUCLID = not_euclid()


def test_the_rules_left_without_euclid_are_the_expected_ones() -> None:
    names = {r.name for r in NOT_EUCLID}
    assert NOT_EUCLID
    # False under euclid: negative divisors (floor) or negative numerators (trunc).
    for name in (
        "nested-div",
        "nested-div-trunc",
        "mod-of-small-magnitude",
        "div-lt-const-floor-neg",
        "mixed-radix-recombine",
        "divmod-recombine-composed",
        "le-floordiv-lower-negative",
    ):
        assert name in names
    # True under euclid, so stated for it and not in the list.
    for name in ("mod-of-small-range", "div-split-offset", "merge-residues", "nested-div-offset"):
        assert name not in names
        (r,) = [r for r in shipped() if r.name == name]
        assert Semantics.EUCLID in r.semantics
    assert len(NOT_EUCLID) < len([r for r in shipped() if r.semantics])


@pytest.mark.parametrize("r", NOT_EUCLID, ids=[r.name for r in NOT_EUCLID])
def test_a_rule_without_euclid_is_false_under_euclid(r: Rule) -> None:
    """The prover refutes the euclid restatement, and the engine reproduces it concretely."""
    res = refutation(r)
    assert res is not None, f"{r.name} may hold under euclid: state it for euclid"
    assert res.counterexample is not None
    ob = res.obligation
    # Replayed again here: the rule applied to the term its pattern describes at the
    # counterexample, both sides evaluated.
    rep = replay(ob.rule, ob.semantics, ob.arity, res.counterexample, int64=False)
    assert rep.confirmed, rep.note
    assert any("MISMATCH" in line or "divides by zero" in line for line in rep.lines), rep.lines


# ------------------------------------------------------------- counterexamples by hand
def test_nested_div_by_hand() -> None:
    """(a // b) // c == a // (b*c) for c > 0 (nested-div): floor yes, euclid no (b < 0)."""
    a, b, c = -1, -2, 2
    assert arith.floordiv(arith.floordiv(a, b), c) == arith.floordiv(a, b * c)
    # eucliddiv(-1, -2) == 1 (remainder 1), eucliddiv(1, 2) == 0; eucliddiv(-1, -4) == 1.
    assert arith.eucliddiv(arith.eucliddiv(a, b), c) == 0
    assert arith.eucliddiv(a, b * c) == 1


def test_mod_of_small_magnitude_by_hand() -> None:
    """truncmod(x, n) == x when |x| < |n|; the Euclidean remainder is never negative."""
    x, n = -1, 2
    assert arith.truncmod(x, n) == x
    assert arith.euclidmod(x, n) == 1


def test_divmod_recombine_composed_by_hand() -> None:
    """((x // a) % c)*m + (x // b)*(c*m) == (x // a)*m for a*c == b: euclid needs a > 0."""
    x, a, c, m = 1, -1, 2, 1
    b = a * c
    for div, mod in ((arith.floordiv, arith.floormod), (arith.truncdiv, arith.truncmod)):
        assert mod(div(x, a), c) * m + div(x, b) * (c * m) == div(x, a) * m
    # x // a == -1, (-1) % 2 == 1 and x // -2 == 0 (1 == -2*0 + 1): 1 on the left, -1 on
    # the right.
    div, mod = arith.eucliddiv, arith.euclidmod
    assert mod(div(x, a), c) * m + div(x, b) * (c * m) == 1
    assert div(x, a) * m == -1


# ------------------------------------------------------------------- proofs that need help
@pytest.mark.parametrize("name", ["merge-residues", "merge-residues-implied"])
def test_merge_residues_is_proven_for_euclid(name: str) -> None:
    """x % a == r and x % b == r with a | b: true for every sign of b under euclid.

    Z3 timed out on it (240 s) with the Euclidean remainder bounded by one implication
    per sign of the divisor; with |b| as one If-term it is proven at once, in a fresh Z3
    context as ``quorem verify`` proves constraint rules (after other proofs in one
    context it times out: quorem.verify.jobs).
    """
    # In a new process, as quorem verify proves it: Z3's answer depends on its history
    # (after the split and termination tests in one process it timed out).
    results = in_new_process(_euclid_proofs, name)
    assert results
    for label, ok in results:
        assert ok, label


def _euclid_proofs(name: str) -> list[tuple[str, bool]]:
    """``(label, proven)`` for each Euclidean obligation of the shipped rule ``name``."""
    (r,) = [r for r in shipped() if r.name == name]
    assert Semantics.EUCLID in r.semantics
    out = []
    for ob in obligations_of(r, 2):
        if ob.semantics is Semantics.EUCLID:
            fresh_z3_context()
            out.append((ob.label, prove(ob, TIMEOUT).ok))
    return out
