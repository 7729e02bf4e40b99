"""Divisibility of terms by monomials: the algebra behind ``tdivides`` and ``tquotient``.

A canonical term is a polynomial over its atoms: a sum ``c_1*m_1 + ... + c_n*m_n + k``
whose atoms ``m_i`` are products (a ``MUL`` node: a sorted multiset of factors) or single
factors (any other non-constant node). A *monomial* is ``c * f_1*...*f_j``: one addend
with no constant (``2*d``, ``d1*d2``, ``d``) or a non-zero constant (``j == 0``).

The monomial ``u = c*F`` divides the term ``t`` when it divides every addend of ``t`` as
polynomials over the atoms: ``c`` divides each coefficient, the multiset ``F`` is
contained in each addend's factors, and the constant is 0 or (``F`` empty) a multiple of
``c``. The quotient then satisfies ``t == quotient(t, u) * u`` at every point where the
atoms are defined, whatever the atoms are (the identity is one of the commutative ring),
which is all the prover assumes of these functions (``quorem.verify.encode``).
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from .ops import Op
from .term import Term, const, linear, product

__all__ = ["monomial", "monomial_divides", "monomial_quotient"]

_MUL: Final = Op.MUL
_ADD: Final = Op.ADD
_CONST: Final = Op.CONST


def _factors(atom: Term) -> tuple[Term, ...]:
    """The factors of a sum's atom: a product's operands, or the atom itself."""
    return atom.args if atom.op is _MUL else (atom,)


def monomial(u: Term) -> tuple[int, tuple[Term, ...]] | None:
    """``u`` as ``(c, factors)`` with ``u == c * prod(factors)`` and ``c != 0``, or None.

    None when ``u`` is 0 or not a single monomial (several addends, or an addend and a
    constant).
    """
    if u.op is _CONST:
        return (u.arg, ()) if u.arg != 0 else None
    if u.op is _ADD:
        coefs, k = u.arg
        if len(coefs) != 1 or k != 0:
            return None
        return coefs[0], _factors(u.args[0])
    return 1, _factors(u)


def _contains(big: tuple[Term, ...], small: Counter[Term]) -> Counter[Term] | None:
    """``big - small`` as multisets, or None if ``small`` is not contained in ``big``."""
    left = Counter(big)
    for f, n in small.items():
        if left[f] < n:
            return None
        left[f] -= n
    return left


_Pieces = tuple[list[tuple[Counter[Term], int]], int]


def _split(t: Term, u: Term) -> _Pieces | None:
    """The pieces of ``t / u``, or None if ``u`` is not a monomial or does not divide ``t``.

    The pieces are each addend's remaining factors with its quotient coefficient, and
    the quotient of the constant.
    """
    m = monomial(u)
    if m is None:
        return None
    c, fs = m
    wanted = Counter(fs)
    pairs, k = t.addends()
    if k % c != 0 or (k != 0 and wanted):
        return None
    parts: list[tuple[Counter[Term], int]] = []
    for atom, coef in pairs:
        if coef % c != 0:
            return None
        left = _contains(_factors(atom), wanted)
        if left is None:
            return None
        parts.append((left, coef // c))
    return parts, k // c


def monomial_divides(u: Term, t: Term) -> bool:
    """Whether the monomial ``u`` divides ``t`` as a polynomial over its atoms.

    False when ``u`` is 0 or not a monomial. True promises ``t == monomial_quotient(t, u) * u``
    wherever ``t``'s atoms are defined.
    """
    return _split(t, u) is not None


def monomial_quotient(t: Term, u: Term) -> Term | None:
    """The polynomial quotient ``t / u`` for a monomial ``u`` dividing ``t``, else None.

    The result ``q`` satisfies ``t == q * u`` wherever ``t``'s atoms are defined, and
    ``|q| <= |t|`` there (``|u| >= 1`` at every point where ``t != 0``, being a non-zero
    integer factor of it).
    """
    found = _split(t, u)
    if found is None:
        return None
    parts, k = found
    if not parts:
        return const(k)
    pairs = [(product(list(left.elements())) if left else const(1), q) for left, q in parts]
    return linear(pairs, k)
