"""Class 1 of issue 15: comparisons against constants (index validity masks).

tinygrad folds these in every padded or gated kernel. Four forms, each under floor and
truncation, every sign of divisor, coefficient and constant, the constant on either
side, and the operators ``< <= > >= == !=`` (no ``and``/``or``/``not``, no ``x//4 == 3``
bands):

* a division by a constant compared with a constant: ``x//4 < 3`` => ``x < 12``;
* a scaled term: ``x*3 < 10`` => ``x < 4``, ``-2*x < 7`` => ``-4 < x``, ``x*6 == 13`` => 0;
* a sum whose coefficients share a factor, with the rest in ``[0, g)``
  (tinygrad's lt_folding): ``4*a + 8*b + r < 16`` => ``a + 2*b < 4``, and the edges where
  it must stop (the rest reaching ``g``, a threshold that depends on the rest);
* a remainder compared with a constant where ranges decide it or put it in one bucket:
  ``x % 8 < 3`` with ``x`` in ``[8, 15]`` => ``x < 11``;
* sums on both sides with a common factor: ``x*4 < y*8 + 3`` => ``x < y*2 + 1``,
  ``x*6 == y*3 + 4`` => ``0`` (the factor of one side divides the other's).

The expected forms are computed here, not by quorem: a comparison of one variable is the
half-line (or point) it holds on, found by evaluating it over the box; a sum with a
common factor is divided through by the arithmetic of the lt_folding rule, checked
against every value of the rest. Boxes are small, so the equality check is exhaustive.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from benchmarks.classes import ClassCase, class_case

FAMILY = "compare"
SEMANTICS = ("floor", "trunc")
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_HALF = ("<", "<=", ">", ">=")


def _div(a: int, d: int, semantics: str) -> int:
    if semantics == "floor":
        return a // d
    q = abs(a) // abs(d)
    return q if (a < 0) == (d < 0) else -q


def _mod(a: int, d: int, semantics: str) -> int:
    return a - d * _div(a, d, semantics)


def _one_variable(
    name: str, box: tuple[int, int], pred: Callable[[int], bool], op: str, *, fallback: str
) -> str:
    """The simplest comparison of ``name`` with a constant equal to ``pred`` on [lo, hi].

    ``<`` and ``>`` give a ``<`` form, ``<=`` and ``>=`` a ``<=`` form, ``==`` and ``!=``
    an equality with the one point where they differ from a constant; a predicate that
    is constant on the box is ``0`` or ``1``; anything else (a band, two buckets) keeps
    ``fallback``.
    """
    lo, hi = box
    values = [pred(v) for v in range(lo, hi + 1)]
    if all(values) or not any(values):
        return str(int(values[0]))
    points = range(lo, hi + 1)
    trues = [v for v, t in zip(points, values, strict=True) if t]
    falses = [v for v, t in zip(points, values, strict=True) if not t]
    if op in ("==", "!="):
        if op == "==" and len(trues) == 1:
            return f"{name} == {trues[0]}"
        if op == "!=" and len(falses) == 1:
            return f"{name} != {falses[0]}"
        return fallback
    if max(trues) < min(falses):  # true below a threshold
        return f"{name} < {min(falses)}" if op in ("<", ">") else f"{name} <= {max(trues)}"
    if max(falses) < min(trues):  # true above a threshold
        return f"{max(falses)} < {name}" if op in ("<", ">") else f"{min(trues)} <= {name}"
    return fallback


def _compare_text(lhs: str, op: str, c: int, constant_left: bool) -> str:
    """``lhs op c``, or the same comparison with the constant written first."""
    if not constant_left:
        return f"{lhs} {op} {c}"
    mirrored = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
    return f"{c} {mirrored} {lhs}"


# ------------------------------------------------------------------ the four forms
def _division_cases(
    rng: random.Random, count: int
) -> Iterator[tuple[str, dict[str, tuple[int, int]], dict[str, str], str]]:
    """``(x + b)//d OP c``: any sign of divisor and constant; the rules already shipped."""
    lo, hi = -60, 60
    for _ in range(count):
        d = rng.choice([-8, -5, -4, -3, -2, 2, 3, 4, 5, 8])
        c = rng.randint(-8, 8)
        b = rng.choice([0, 0, rng.randint(-20, 20)])
        op = rng.choice(_HALF)
        num = "x" if b == 0 else f"(x {'+' if b > 0 else '-'} {abs(b)})"
        left = rng.random() < 0.3
        text = _compare_text(f"{num}//{d}", op, c, left)
        want = {}
        for sem in SEMANTICS:
            pred = _pred(lambda v, sem=sem, b=b, d=d: _div(v + b, d, sem), op, c)
            want[sem] = _one_variable("x", (lo, hi), pred, op, fallback=text)
        yield text, {"x": (lo, hi)}, want, "division compared with a constant"


class _Side(Protocol):
    """One side of a comparison as a function of the variable.

    A protocol, not a ``Callable``: the cases pass lambdas that bind loop variables as
    defaults, and a ``Callable[[int], int]`` context does not type such a lambda.
    """

    def __call__(self, v: int, /) -> int: ...


def _pred(f: _Side, op: str, c: int) -> Callable[[int], bool]:
    """``f(v) op c`` (``_compare_text`` mirrors the operator with the sides: the same)."""
    cmp = _OPS[op]
    return lambda v: cmp(f(v), c)


def _scaled_cases(
    rng: random.Random, count: int
) -> Iterator[tuple[str, dict[str, tuple[int, int]], dict[str, str], str]]:
    """``k*x + b OP c``: any sign of coefficient and constant, every operator."""
    lo, hi = -40, 40
    for _ in range(count):
        k = rng.choice([-7, -6, -4, -3, -2, 2, 3, 4, 5, 6, 8])
        c = rng.randint(-30, 30)
        b = rng.choice([0, 0, 0, rng.randint(-9, 9)])
        op = rng.choice([*_HALF, *_HALF, "==", "!="])
        if op in ("==", "!=") and rng.random() < 0.5:
            c = k * rng.randint(-6, 6) + b  # divisible: a point, not always false
        lhs = f"x*{k}" if b == 0 else f"x*{k} {'+' if b > 0 else '-'} {abs(b)}"
        text = _compare_text(lhs, op, c, rng.random() < 0.4)
        pred = _pred(lambda v, k=k, b=b: k * v + b, op, c)
        want = _one_variable("x", (lo, hi), pred, op, fallback=text)
        yield (
            text,
            {"x": (lo, hi)},
            dict.fromkeys(SEMANTICS, want),
            "scaled term compared with a constant",
        )


def _sum_cases(
    rng: random.Random, count: int
) -> Iterator[tuple[str, dict[str, tuple[int, int]], dict[str, str], str]]:
    """``g*(m1*a + m2*b) + r OP c`` with ``r`` in ``[0, top]`` (tinygrad's lt_folding).

    ``top < g`` mostly (the rule applies when the rounding is the same for every ``r``);
    ``top == g`` sometimes, where it must stop.
    """
    box = {"a": (0, 3), "b": (0, 3)}
    for _ in range(count):
        g = rng.choice([2, 3, 4, 8])
        m1, m2 = rng.choice([(1, 2), (1, 1), (2, 3), (1, -1), (-1, -2), (3, 1), (1, 0), (-1, 0)])
        top = rng.choice([0, 0, g - 1, g - 1, rng.randint(1, g - 1), g])
        bounds = dict(box)
        parts = [f"a*{g * m1}"] + ([f"b*{g * m2}"] if m2 else [])
        if top:
            bounds["r"] = (0, top)
            parts.append("r")
        lhs = " + ".join(parts)
        op = rng.choice([*_HALF, *_HALF, "==", "!="])
        # a constant near the sum's range, so that the comparison is not decided by it;
        # a few tries for one the rule folds, but one in four keeps an edge where it stops
        smax = g * (3 * max(m1, 0) + 3 * max(m2, 0))
        smin = g * (3 * min(m1, 0) + 3 * min(m2, 0))
        left = rng.random() < 0.4
        for _ in range(4):
            c = rng.randint(smin + 1, smax + top)
            text = _compare_text(lhs, op, c, left)
            want = _sum_expected((g, m1, m2, top), op, c, bounds, fallback=text)
            if want not in (text, "0", "1") or rng.random() < 0.25:
                break
        yield text, bounds, dict.fromkeys(SEMANTICS, want), "sum with a common factor (lt_folding)"


def _sum_expected(
    shape: tuple[int, int, int, int],
    op: str,
    c: int,
    bounds: dict[str, tuple[int, int]],
    *,
    fallback: str,
) -> str:
    """The lt_folding result: ``s op' t`` for ``s = m1*a + m2*b`` (negated if every
    coefficient is negative), where the rest ``r`` in ``[0, top]`` does not matter.

    ``shape`` is ``(g, m1, m2, top)``.
    """
    g, m1, m2, top = shape
    text = fallback
    cmp = _OPS[op]
    names = sorted(bounds)
    points = [dict(zip(names, p, strict=True)) for p in _product([bounds[n] for n in names])]
    values = {cmp(g * (m1 * p["a"] + m2 * p["b"]) + p.get("r", 0), c) for p in points}
    if op in ("==", "!=") and top:
        # g*s + r == c with a rest r is decided only by r's residue; the shipped rules
        # divide == and != through only without a rest (see rules/45-compare.rules)
        return text
    if len(values) == 1:
        return str(int(values.pop()))
    if top >= g:
        return text  # the rest may reach g: nothing to divide
    sign = -1 if m1 < 0 and m2 <= 0 else 1
    s_lo, s_hi = -40, 40
    # s's truth for every r must agree, for every s (not only the box's)
    truth = []
    for s in range(s_lo, s_hi + 1):
        seen = {cmp(g * sign * s + r, c) for r in range(top + 1)}
        if len(seen) != 1:
            return text
        truth.append(seen.pop())
    terms = " + ".join(t for t in (_term(m1 * sign, "a"), _term(m2 * sign, "b")) if t)
    form = _one_variable("S", (s_lo, s_hi), lambda s: truth[s - s_lo], op, fallback=text)
    return text if form == text else form.replace("S", f"({terms})")


def _term(m: int, name: str) -> str:
    return "" if m == 0 else name if m == 1 else f"{name}*{m}"


def _product(ranges: Sequence[tuple[int, int]]) -> Iterator[tuple[int, ...]]:
    if not ranges:
        yield ()
        return
    lo, hi = ranges[0]
    for v in range(lo, hi + 1):
        for rest in _product(ranges[1:]):
            yield (v, *rest)


def _remainder_cases(
    rng: random.Random, count: int
) -> Iterator[tuple[str, dict[str, tuple[int, int]], dict[str, str], str]]:
    """``x % d OP c`` where the range of ``x`` decides it or keeps it in one bucket."""
    for i in range(count):
        d = rng.choice([4, 8, 16, -8])
        n = abs(d)
        kind = i % 4
        if kind == 0:  # one bucket: x % d is x minus a multiple of d
            q = rng.randint(-3, 3)
            lo, hi = q * n, q * n + n - 1
        elif kind == 1:  # the whole residue range: decided only at its ends
            lo, hi = -2 * n, 2 * n
        elif kind == 2:  # non-negative x: truncation agrees with floor
            lo, hi = 0, 3 * n
        else:  # a sub-range of one bucket, possibly negative
            q = rng.randint(-2, 1)
            lo = q * n + rng.randint(0, n // 2)
            hi = lo + rng.randint(1, n // 2 - 1)
        op = rng.choice([*_HALF, "==", "!="])
        if kind in (1, 2):
            c = rng.choice([-n, -n + 1, -1, 0, n - 1, n, rng.randint(-n, n)])
        else:
            c = rng.randint(-n, n)
        text = _compare_text(f"x % {d}", op, c, rng.random() < 0.3)
        want = {}
        for sem in SEMANTICS:
            pred = _pred(lambda v, sem=sem, d=d: _mod(v, d, sem), op, c)
            form = _one_variable("x", (lo, hi), pred, op, fallback=text)
            # Ranges decide it (a constant) or put x in one bucket (x % d is x minus a
            # multiple of d); across buckets the comparison stays as it is.
            one_bucket = _div(lo, d, sem) == _div(hi, d, sem)
            want[sem] = form if one_bucket or form in ("0", "1") else text
        yield text, {"x": (lo, hi)}, want, "remainder compared with a constant"
    for _ in range(count // 4):  # a multiple of d drops out of the remainder
        d = rng.choice([4, 8])
        c = rng.randint(-1, d)
        op = rng.choice(_HALF)
        text = _compare_text(f"(x*{d} + y) % {d}", op, c, False)
        bounds = {"x": (0, 5), "y": (0, d - 1)}
        pred = _pred(lambda v: v, op, c)
        same = _one_variable("y", (0, d - 1), pred, op, fallback=text)
        yield text, bounds, dict.fromkeys(SEMANTICS, same), "remainder compared with a constant"


def _both_sides_cases(
    rng: random.Random, count: int
) -> Iterator[tuple[str, dict[str, tuple[int, int]], dict[str, str], str]]:
    """``g*s OP g*u + k``: divided through by ``g`` with ``k/g`` rounded as ``OP`` needs."""
    for _ in range(count):
        g = rng.choice([2, 3, 4, 6])
        b = rng.choice([0, 1, 2, -1])
        c = rng.choice([1, 2, -1, 3])
        k = rng.randint(-12, 12)
        op = rng.choice(["<", "<=", "==", "!="])
        left = f"x*{g}" + (f" + z*{g * b}" if b else "")
        text = f"{left} {op} y*{g * c} + {k}"
        small = "x" + (f" + z*{b}" if b else "")
        if op == "<":
            want = f"{small} < y*{c} + {-(-k // g)}"
        elif op == "<=":
            want = f"{small} <= y*{c} + {k // g}"
        elif k % g:
            want = "0" if op == "==" else "1"
        else:
            want = f"{small} {op} y*{c} + {k // g}"
        box = {"x": (-8, 8), "y": (-8, 8), "z": (-4, 4)}
        yield text, box, dict.fromkeys(SEMANTICS, want), "sums on both sides with a common factor"


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """The comparison cases: every form, each under floor and truncation."""
    forms = [
        *_division_cases(rng, 22),
        *_scaled_cases(rng, 26),
        *_sum_cases(rng, 30),
        *_remainder_cases(rng, 16),
        *_both_sides_cases(rng, 16),
    ]
    for index, (text, bounds, want, source) in enumerate(forms):
        for sem in SEMANTICS:
            yield class_case(
                FAMILY,
                index,
                sem,
                expr=text,
                bounds=bounds,
                expected=want[sem],
                source=source,
            )


__all__ = ["cases"]
