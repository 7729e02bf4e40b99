"""Value ranges: sound interval transfer functions for every operator.

A range is a pair ``(lo, hi)`` of inclusive bounds where ``None`` stands for an
unbounded side (``lo=None`` is minus infinity, ``hi=None`` plus infinity). Every
function here promises soundness: if the operands lie in their ranges, the result of
the operation lies in the returned range. Division by zero has no value, so divisor
values 0 are excluded; a divisor range that is exactly ``{0}`` gives the full range.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "Range",
    "add_range",
    "ceildiv_range",
    "compare_range",
    "eucliddiv_range",
    "euclidmod_range",
    "floordiv_range",
    "floormod_range",
    "logic_range",
    "max_range",
    "min_range",
    "mul_range",
    "truncdiv_range",
    "truncmod_range",
]

Range = tuple[int | None, int | None]
_FULL: Range = (None, None)


def _neg(r: Range) -> Range:
    lo, hi = r
    return (None if hi is None else -hi, None if lo is None else -lo)


def _union(parts: Sequence[Range]) -> Range:
    if not parts:
        return _FULL
    lows = [p[0] for p in parts]
    highs = [p[1] for p in parts]
    lo = None if any(v is None for v in lows) else min(v for v in lows if v is not None)
    hi = None if any(v is None for v in highs) else max(v for v in highs if v is not None)
    return (lo, hi)


def add_range(terms: Sequence[tuple[int, Range]], const: int) -> Range:
    """Range of ``const + sum(c * t)`` for pairs ``(c, range of t)``."""
    lo: int | None = const
    hi: int | None = const
    for coeff, trange in terms:
        # A negative coefficient swaps which bound of t gives the sum's low end.
        tlo, thi = trange if coeff > 0 else _neg(trange)
        k = abs(coeff)
        lo = None if lo is None or tlo is None else lo + k * tlo
        hi = None if hi is None or thi is None else hi + k * thi
    return (lo, hi)


# Extended integers for corner products: (kind, value) with kind -1 = -inf, 0 = finite, 1 = +inf.
_Ext = tuple[int, int]


def _sign(e: _Ext) -> int:
    kind, value = e
    return kind if kind else (value > 0) - (value < 0)


def _emul(a: _Ext, b: _Ext) -> _Ext:
    if a[0] == 0 and b[0] == 0:
        return (0, a[1] * b[1])
    sign = _sign(a) * _sign(b)
    # An unbounded side times an exact zero is zero: values are always finite.
    return (sign, 0) if sign else (0, 0)


def mul_range(a: Range, b: Range) -> Range:
    """Range of ``a * b``."""
    lo_a: _Ext = (-1, 0) if a[0] is None else (0, a[0])
    hi_a: _Ext = (1, 0) if a[1] is None else (0, a[1])
    lo_b: _Ext = (-1, 0) if b[0] is None else (0, b[0])
    hi_b: _Ext = (1, 0) if b[1] is None else (0, b[1])
    corners = [_emul(x, y) for x in (lo_a, hi_a) for y in (lo_b, hi_b)]
    lo = min(corners)
    hi = max(corners)
    return (None if lo[0] else lo[1], None if hi[0] else hi[1])


def _divisor_parts(b: Range) -> tuple[Range | None, Range | None]:
    """Split a divisor range into its positive and negative parts, dropping zero."""
    lo, hi = b
    pos = None
    neg = None
    if hi is None or hi >= 1:
        pos = (1 if lo is None or lo < 1 else lo, hi)
    if lo is None or lo <= -1:
        neg = (lo, -1 if hi is None or hi > -1 else hi)
    return pos, neg


def _floordiv_pos(a: Range, p: int, q: int | None) -> Range:
    al, ah = a
    if al is None:
        lo = None
    elif al >= 0:
        lo = 0 if q is None else al // q
    else:
        lo = al // p
    if ah is None:
        hi = None
    elif ah >= 0:
        hi = ah // p
    else:
        hi = -1 if q is None else ah // q
    return (lo, hi)


def floordiv_range(a: Range, b: Range) -> Range:
    """Range of ``a // b`` (floor) over the non-zero values of ``b``."""
    pos, neg = _divisor_parts(b)
    parts = []
    if pos is not None:
        parts.append(_floordiv_pos(a, pos[0] or 1, pos[1]))
    if neg is not None:
        # a // b == (-a) // (-b) under floor division.
        npos = _neg(neg)
        parts.append(_floordiv_pos(_neg(a), npos[0] or 1, npos[1]))
    return _union(parts)


def _truncdiv_pos(a: Range, p: int, q: int | None) -> Range:
    al, ah = a
    if al is None:
        lo = None
    elif al >= 0:
        lo = 0 if q is None else al // q
    else:
        lo = -((-al) // p)
    if ah is None:
        hi = None
    elif ah >= 0:
        hi = ah // p
    else:
        hi = 0 if q is None else -((-ah) // q)
    return (lo, hi)


def truncdiv_range(a: Range, b: Range) -> Range:
    """Range of ``truncdiv(a, b)`` over the non-zero values of ``b``."""
    pos, neg = _divisor_parts(b)
    parts = []
    if pos is not None:
        parts.append(_truncdiv_pos(a, pos[0] or 1, pos[1]))
    if neg is not None:
        # truncdiv(a, b) == -truncdiv(a, -b).
        npos = _neg(neg)
        parts.append(_neg(_truncdiv_pos(a, npos[0] or 1, npos[1])))
    return _union(parts)


def _floormod_pos(a: Range, p: int, q: int | None) -> Range:
    al, ah = a
    if al is not None and ah is not None:
        if p == q and al // p == ah // p:
            k = al // p
            return (al - k * p, ah - k * p)
        if al >= 0 and ah < p:
            return (al, ah)
    hi = None if q is None else q - 1
    if al is not None and al >= 0 and ah is not None:
        hi = ah if hi is None else min(hi, ah)
    return (0, hi)


def floormod_range(a: Range, b: Range) -> Range:
    """Range of ``a % b`` (floor) over the non-zero values of ``b``."""
    pos, neg = _divisor_parts(b)
    parts = []
    if pos is not None:
        parts.append(_floormod_pos(a, pos[0] or 1, pos[1]))
    if neg is not None:
        # a % b == -((-a) % (-b)) under floor division.
        npos = _neg(neg)
        parts.append(_neg(_floormod_pos(_neg(a), npos[0] or 1, npos[1])))
    return _union(parts)


def _truncmod_nonneg(a: Range, m: int, big: int | None) -> Range:
    """``truncmod`` for ``a >= 0`` and ``m <= |b| <= big``."""
    al, ah = a
    assert al is not None and al >= 0
    if ah is not None:
        if m == big and al // m == ah // m:
            k = al // m
            return (al - k * m, ah - k * m)
        if ah < m:
            return (al, ah)
    hi = None if big is None else big - 1
    if ah is not None:
        hi = ah if hi is None else min(hi, ah)
    return (0, hi)


def truncmod_range(a: Range, b: Range) -> Range:
    """Range of ``truncmod(a, b)`` over the non-zero values of ``b``."""
    pos, neg = _divisor_parts(b)
    if pos is None and neg is None:
        return _FULL
    # The remainder depends on |b| only; gather the range of |b|.
    mags = [p for p in (pos, _neg(neg) if neg is not None else None) if p is not None]
    m = min(p[0] or 1 for p in mags)
    big = None if any(p[1] is None for p in mags) else max(p[1] or 1 for p in mags)
    al, ah = a
    if al is not None and al >= 0:
        return _truncmod_nonneg(a, m, big)
    if ah is not None and ah <= 0:
        return _neg(_truncmod_nonneg(_neg(a), m, big))
    lim = None if big is None else big - 1
    lo = al if lim is None else (-lim if al is None else max(al, -lim))
    hi = ah if lim is None else (lim if ah is None else min(ah, lim))
    return (lo, hi)


def _magnitudes(b: Range) -> tuple[int, int | None] | None:
    """The least and greatest ``|b|`` over the non-zero values of ``b`` (None: unbounded)."""
    pos, neg = _divisor_parts(b)
    mags = [p for p in (pos, _neg(neg) if neg is not None else None) if p is not None]
    if not mags:
        return None
    m = min(p[0] or 1 for p in mags)
    big = None if any(p[1] is None for p in mags) else max(p[1] or 1 for p in mags)
    return m, big


def eucliddiv_range(a: Range, b: Range) -> Range:
    """Range of ``eucliddiv(a, b)`` over the non-zero values of ``b``."""
    pos, neg = _divisor_parts(b)
    parts = []
    if pos is not None:  # a positive divisor rounds down, as floor division does
        parts.append(_floordiv_pos(a, pos[0] or 1, pos[1]))
    if neg is not None:
        # eucliddiv(a, b) == -eucliddiv(a, -b): the remainder depends on |b| only.
        npos = _neg(neg)
        parts.append(_neg(_floordiv_pos(a, npos[0] or 1, npos[1])))
    return _union(parts)


def euclidmod_range(a: Range, b: Range) -> Range:
    """Range of ``euclidmod(a, b)`` over the non-zero values of ``b``: within ``[0, |b|)``."""
    mags = _magnitudes(b)
    if mags is None:
        return _FULL
    # The Euclidean remainder is the floor remainder by |b|.
    return _floormod_pos(a, mags[0], mags[1])


def ceildiv_range(a: Range, b: Range) -> Range:
    """Range of ``ceildiv(a, b)``, the quotient rounded up, over the non-zero values of ``b``."""
    # ceil(a / b) == -floor(-a / b).
    return _neg(floordiv_range(_neg(a), b))


def _lt(x: int | None, y: int | None) -> bool:
    """``x < y`` where ``x`` is an upper bound and ``y`` a lower bound (None = infinite)."""
    return x is not None and y is not None and x < y


def max_range(a: Range, b: Range) -> Range:
    """Range of ``max(a, b)``."""
    lo = a[0] if b[0] is None else (b[0] if a[0] is None else max(a[0], b[0]))
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
    return (lo, hi)


def min_range(a: Range, b: Range) -> Range:
    """Range of ``min(a, b)``."""
    lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
    hi = a[1] if b[1] is None else (b[1] if a[1] is None else min(a[1], b[1]))
    return (lo, hi)


def compare_range(strict: bool, a: Range, b: Range) -> Range:
    """Range of ``a < b`` (``strict``) or ``a <= b`` as 0/1."""
    always = _lt(a[1], b[0]) or (not strict and a[1] is not None and a[1] == b[0])
    never = (b[1] is not None and a[0] is not None) and (a[0] >= b[1] if strict else a[0] > b[1])
    if always:
        return (1, 1)
    if never:
        return (0, 0)
    return (0, 1)


def equality_range(equal: bool, a: Range, b: Range) -> Range:
    """Range of ``a == b`` (``equal``) or ``a != b`` as 0/1."""
    disjoint = _lt(a[1], b[0]) or _lt(b[1], a[0])
    same_point = a[0] is not None and a[0] == a[1] == b[0] == b[1]
    if disjoint:
        return (0, 0) if equal else (1, 1)
    if same_point:
        return (1, 1) if equal else (0, 0)
    return (0, 1)


def _known_true(a: Range) -> bool:
    return (a[0] is not None and a[0] > 0) or (a[1] is not None and a[1] < 0)


def logic_range(conjunction: bool, a: Range, b: Range) -> Range:
    """Range of ``a and b`` (``conjunction``) or ``a or b`` as 0/1 (non-zero is true)."""
    a_false = a[0] == 0 and a[1] == 0
    b_false = b[0] == 0 and b[1] == 0
    if conjunction:
        if a_false or b_false:
            return (0, 0)
        if _known_true(a) and _known_true(b):
            return (1, 1)
    else:
        if _known_true(a) or _known_true(b):
            return (1, 1)
        if a_false and b_false:
            return (0, 0)
    return (0, 1)
