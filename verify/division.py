"""Division for Z3, shared by the rule prover and the step validator.

Z3's own ``div`` and ``mod`` are Euclidean (neither floor nor truncating), so each
division ``a / b`` is *purified*: fresh ``q, r`` with ``b != 0 -> a == b*q + r`` and the
remainder's range under the semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import z3
from quorem.engine.ops import Semantics

__all__ = [
    "Quotient",
    "division_axioms",
    "monomial_shift_lemmas",
    "proportional_quotient_lemmas",
    "quotient_gap_lemmas",
]

# z3 has no type information, so its expressions are Any to mypy.
Quotient = tuple[Semantics, Any, Any, Any]  # semantics, numerator, divisor, quotient


def division_axioms(a: Any, b: Any, q: Any, r: Any, sem: Semantics) -> list[Any]:
    """Constraints making ``q, r`` the quotient and remainder of ``a / b`` under ``sem``."""
    if sem is Semantics.FLOOR:
        rng = z3.If(b > 0, z3.And(r >= 0, r < b), z3.And(r <= 0, r > b))
        return [z3.Implies(b != 0, z3.And(a == b * q + r, rng))]
    if sem is Semantics.EUCLID:
        # The remainder is in [0, |b|) whatever the signs (Z3's own div and mod; stated
        # by purification all the same, so every semantics reaches the solver one way).
        # One bound through an If-term for |b|: stated as an implication per sign of b,
        # merge-residues (x % a == r, x % b == r with a | b) timed out at 240 s; this
        # way Z3 proves it in 0.2 s.
        return [z3.Implies(b != 0, z3.And(a == b * q + r, r >= 0, r < z3.If(b > 0, b, -b)))]
    # The remainder takes the numerator's sign and is smaller than |b|: one implication
    # per sign case. The same constraint as nested If-terms, but Z3 proves with it in a
    # fraction of a second what it timed out on with those.
    return [
        z3.Implies(b != 0, a == b * q + r),
        z3.Implies(z3.And(a >= 0, b > 0), z3.And(r >= 0, r < b)),
        z3.Implies(z3.And(a >= 0, b < 0), z3.And(r >= 0, r < -b)),
        z3.Implies(z3.And(a < 0, b > 0), z3.And(r <= 0, r > -b)),
        z3.Implies(z3.And(a < 0, b < 0), z3.And(r <= 0, r > b)),
    ]


def proportional_quotient_lemmas(quotients: Sequence[Quotient]) -> list[Any]:
    """Lemmas: two divisions of one semantics with equal ratios ``a/b`` have one quotient.

    True for floor and truncation alike (the quotient depends on the rational ``a/b``
    only), and for Euclidean division when the divisors have one sign (it rounds ``a/b``
    down or up by the divisor's sign), so adding them never changes what is provable,
    only how fast. Z3 rarely finds
    the fact alone when ``a`` and ``b`` are non-linear sums, as in
    ``(g*x) % (g*y) == g*(x % y)``; stated, the ratio test is ring normalization.
    """
    lemmas = []
    for i, (sem1, a1, b1, q1) in enumerate(quotients):
        for sem2, a2, b2, q2 in quotients[i + 1 :]:
            if sem1 is sem2:
                same_ratio = z3.And(b1 != 0, b2 != 0, a1 * b2 == a2 * b1)
                if sem1 is Semantics.EUCLID:
                    same_ratio = z3.And(same_ratio, (b1 > 0) == (b2 > 0))
                lemmas.append(z3.Implies(same_ratio, q1 == q2))
    return lemmas


def quotient_gap_lemmas(quotients: Sequence[Quotient]) -> list[Any]:
    """Lemmas: two multiples ``b*q1``, ``b*q2`` of one divisor differ by ``|b|`` at least.

    For two divisions by the same ``b`` (any semantics), ``q1 > q2`` gives
    ``b*q1 >= b*q2 + b`` when ``b > 0`` and ``b*q1 <= b*q2 + b`` when ``b < 0``: true of
    all integers (``q1 - q2 >= 1``), so adding them never changes what is provable, only
    how fast. They state, over the products the division axioms already name, that no
    multiple of ``b`` lies strictly between two consecutive ones: ``snap-upper``'s proof
    (``x % m == r`` and ``h - floormod(h - r, m)`` are congruent, so ``x <= h`` moves to
    the lower one) needs exactly that, and Z3 found it under some random seeds only.
    """
    by_divisor: dict[int, list[tuple[Any, Any]]] = {}
    for _, _, b, q in quotients:
        by_divisor.setdefault(z3.simplify(b).get_id(), []).append((b, q))
    lemmas = []
    for same in by_divisor.values():
        if len(same) > _MAX_GAP_QUOTIENTS:
            continue
        for i, (b1, q1) in enumerate(same):
            for _, q2 in same[i + 1 :]:
                lemmas += _gap(b1, q1, q2)
    return lemmas


# Up to this many divisions by one divisor get the gap lemmas (pairwise: 3 pairs). With
# more, the lemmas slow Z3 down more than they help: div-split-multiples-any (euclid,
# k=4: five divisions by D) went from 1.3 s to unknown at 48 s.
_MAX_GAP_QUOTIENTS: Final = 3


def _gap(b: Any, q1: Any, q2: Any) -> list[Any]:
    """``q1 > q2`` puts ``b*q1`` at least ``|b|`` beyond ``b*q2``, and the other way round."""
    lemmas = []
    for hi, lo in ((q1, q2), (q2, q1)):
        lemmas.append(
            z3.Implies(
                hi > lo,
                z3.And(
                    z3.Implies(b > 0, b * hi >= b * lo + b),
                    z3.Implies(b < 0, b * hi <= b * lo + b),
                ),
            )
        )
    return lemmas


def monomial_shift_lemmas(
    divisions: Sequence[tuple[Semantics, Any, Any, Any, Any]],
    multiples: Sequence[tuple[Any, Any, Any]],
) -> list[Any]:
    """Lemmas: numerators differing by ``b*k`` have quotients differing by ``k``.

    ``divisions`` are ``(semantics, a, b, q, r)``; ``multiples`` are ``(flag, b, k)``:
    where ``flag`` holds, ``k`` is an exact quotient by ``b`` (``tquotient``). For two
    divisions by ``b`` of one semantics and ``K`` the sum of those ``k`` whose flags hold,
    ``a0 == a1 + b*K`` gives ``q0 == q1 + K`` and ``r0 == r1`` under floor and Euclidean
    division, and
    under truncation where ``a0`` and ``a1`` have one sign: true facts of integers, so
    adding them never changes what is provable, only how fast (Z3 did not find
    ``(b*k + y) % b == y % b`` alone in minutes).
    """
    lemmas = []
    by_divisor: dict[int, list[tuple[Any, Any]]] = {}
    for flag, b, k in multiples:
        by_divisor.setdefault(z3.simplify(b).get_id(), []).append((flag, k))
    for i, (sem0, a0, b0, q0, r0) in enumerate(divisions):
        found = by_divisor.get(z3.simplify(b0).get_id())
        if found is None:
            continue
        flags = [f for f, _ in found]
        total = z3.Sum(*[k for _, k in found])
        for sem1, a1, b1, q1, r1 in divisions[i + 1 :]:
            if sem1 is not sem0 or z3.simplify(b1).get_id() != z3.simplify(b0).get_id():
                continue
            for (x0, p0, m0), (x1, p1, m1) in (
                ((a0, q0, r0), (a1, q1, r1)),
                ((a1, q1, r1), (a0, q0, r0)),
            ):
                shifted = z3.And(*flags, b0 != 0, x0 == x1 + b0 * total)
                same = z3.And(p0 == p1 + total, m0 == m1)
                if sem0 is Semantics.TRUNC:
                    one_sign = z3.Or(z3.And(x0 >= 0, x1 >= 0), z3.And(x0 <= 0, x1 <= 0))
                    shifted = z3.And(shifted, one_sign)
                lemmas.append(z3.Implies(shifted, same))
    return lemmas
