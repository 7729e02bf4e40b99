"""Division for Z3, shared by the rule prover and the step validator.

Z3's own ``div`` and ``mod`` are Euclidean (neither floor nor truncating), so each
division ``a / b`` is *purified*: fresh ``q, r`` with ``b != 0 -> a == b*q + r`` and the
remainder's range under the semantics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import z3

from quorem.ops import Semantics

__all__ = [
    "RELATIONS",
    "Quotient",
    "division_axioms",
    "monomial_shift_lemmas",
    "native_division",
    "proportional_quotient_lemmas",
    "quotient_gap_lemmas",
    "relation_condition",
    "sign_set",
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


# The sign relations a split case may assume of a name, as the set of signs they allow.
RELATIONS: Final[dict[str, frozenset[int]]] = {
    ">0": frozenset({1}),
    "<0": frozenset({-1}),
    "=0": frozenset({0}),
    ">=0": frozenset({0, 1}),
}
_ANY: Final = frozenset({-1, 0, 1})


def relation_condition(v: Any, relation: str) -> Any:
    """The premise ``v > 0``, ``v < 0``, ``v == 0`` or ``v >= 0``."""
    return {">0": v > 0, "<0": v < 0, "=0": v == 0, ">=0": v >= 0}[relation]


def sign_set(e: Any, known: Mapping[int, frozenset[int]]) -> frozenset[int]:
    """The signs ``e`` may have, given the signs ``known`` of some terms (by Z3 id).

    Syntactic and sound: literals, known terms, products, negation, sums, and SMT-LIB
    ``div``/``mod`` (Euclidean: the remainder is never negative; the quotient of a
    non-negative numerator has the divisor's sign or is 0).
    """
    if z3.is_int_value(e):
        v = e.as_long()
        return frozenset({(v > 0) - (v < 0)})
    found = known.get(e.get_id())
    if found is not None:
        return found
    if z3.is_mul(e):
        out = frozenset({1})
        for c in e.children():
            s = sign_set(c, known)
            out = frozenset(x * y for x in out for y in s)
        return out
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        return frozenset(-x for x in sign_set(e.arg(0), known))
    if z3.is_add(e) or z3.is_sub(e):
        parts = [sign_set(c, known) for c in e.children()]
        if z3.is_sub(e):
            parts[1:] = [frozenset(-x for x in p) for p in parts[1:]]
        for side in (1, -1):
            if all(p <= {0, side} for p in parts):
                strict = any(p == {side} for p in parts)
                return frozenset({side}) if strict else frozenset({0, side})
        return _ANY
    if z3.is_app_of(e, z3.Z3_OP_MOD):
        return frozenset({0, 1})
    if z3.is_app_of(e, z3.Z3_OP_IDIV):
        a, b = (sign_set(c, known) for c in e.children())
        if 0 in b:
            return _ANY  # div by 0 is any value
        quotient_signs: set[int] = set()
        for sb in b:
            if a & {0, 1}:
                quotient_signs |= {0, sb}
            if -1 in a:
                quotient_signs |= {-sb}  # a < 0: rounded away from 0 (a = b*q + r, r >= 0)
        return frozenset(quotient_signs)
    if z3.is_app_of(e, z3.Z3_OP_ITE):
        return sign_set(e.arg(1), known) | sign_set(e.arg(2), known)
    return _ANY


def native_division(
    a: Any,
    b: Any,
    sem: Semantics,
    b_signs: frozenset[int] = _ANY,
    a_signs: frozenset[int] = _ANY,
) -> tuple[Any, Any]:
    """Quotient and remainder of ``a / b`` under ``sem`` as SMT-LIB ``div``/``mod`` terms.

    SMT-LIB's ``div`` and ``mod`` are Euclidean (``0 <= mod(a, b) < |b|``); floor and
    truncating division are stated through them by sign:
    ``floor(a, b) = div(a, b)`` for ``b > 0`` and ``div(-a, -b)`` for ``b < 0``;
    ``trunc(a, b) = div(a, b)`` for ``a >= 0`` and ``-div(-a, b)`` for ``a < 0``. Where
    the sign the choice depends on is known (``b_signs``, ``a_signs``: the signs the values
    may have, from a sign split whose case premises state them; see :func:`sign_set`),
    only that branch is written.

    Both solvers read the terms natively (their own division lemmas, no fresh variables
    to purify), which is what lets cvc5 decide queries it times out on with purification.
    For ``b == 0`` the value is SMT-LIB's: an unspecified function of ``a`` -- a
    division whose value matters has its divisor non-zero by the encoding's premises
    and obligations, so that value is never read; callers that cannot rule ``b == 0``
    out wrap it (see ``quorem.verify.encode``).
    """
    neg_b = b_signs == {-1}
    if neg_b and sem is not Semantics.FLOOR:
        # A divisor known negative is negated: every division a lemma instance sees
        # (quorem.verify.lemmas) then has a positive divisor. Euclidean division:
        # div(a, -b) == -div(a, b) and mod(a, -b) == mod(a, b); truncation likewise.
        q, r = native_division(a, _neg(b), sem, frozenset({1}), a_signs)
        return _neg(q), r
    if sem is Semantics.EUCLID:
        return a / b, a % b
    if sem is Semantics.FLOOR:
        pos = (a / b, a % b)
        neg = (_neg(a) / _neg(b), _neg(_neg(a) % _neg(b)))
        if b_signs == {1}:
            return pos
        if neg_b:
            return neg
        return z3.If(b > 0, pos[0], neg[0]), z3.If(b > 0, pos[1], neg[1])
    nonneg = (a / b, a % b)
    negative = (_neg(_neg(a) / b), _neg(_neg(a) % b))
    if a_signs <= {0, 1}:
        return nonneg
    if a_signs <= {-1, 0}:
        return negative
    return (
        z3.If(a >= 0, nonneg[0], negative[0]),
        z3.If(a >= 0, nonneg[1], negative[1]),
    )


def _neg(e: Any) -> Any:
    """``-e``, without a double negation (lemma instances match terms syntactically)."""
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        return e.arg(0)
    if z3.is_int_value(e):
        return z3.IntVal(-e.as_long())
    if z3.is_mul(e):
        factors = e.children()
        for i, f in enumerate(factors):
            if z3.is_app_of(f, z3.Z3_OP_UMINUS) or (z3.is_int_value(f) and f.as_long() < 0):
                return z3.Product(*factors[:i], _neg(f), *factors[i + 1 :])
    return -e


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


# Up to this many divisions by one divisor get the gap lemmas (pairwise: 3 pairs). With
# more, the lemmas slow Z3 down more than they help: div-split-multiples-any (euclid,
# k=4: five divisions by D) went from 1.3 s to unknown at 48 s.
_MAX_GAP_QUOTIENTS: Final = 3


def _divisor_key(b: Any) -> int:
    """One key for divisors that are the same term once simplified (``N*2``, ``2*N``)."""
    return int(z3.simplify(b).get_id())


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
        by_divisor.setdefault(_divisor_key(b), []).append((b, q))
    lemmas = []
    for same in by_divisor.values():
        if len(same) > _MAX_GAP_QUOTIENTS:
            continue
        for i, (b1, q1) in enumerate(same):
            for _, q2 in same[i + 1 :]:
                lemmas += _gap(b1, q1, q2)
    return lemmas


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
        by_divisor.setdefault(_divisor_key(b), []).append((flag, k))
    for i, (sem0, a0, b0, q0, r0) in enumerate(divisions):
        found = by_divisor.get(_divisor_key(b0))
        if found is None:
            continue
        flags = [f for f, _ in found]
        total = z3.Sum(*[k for _, k in found])
        for sem1, a1, b1, q1, r1 in divisions[i + 1 :]:
            if sem1 is not sem0 or _divisor_key(b1) != _divisor_key(b0):
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
