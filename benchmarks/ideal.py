"""How many ``//`` and ``%`` an index expression needs, proven on its box.

The *ideal* of an expression is the least number of ``//`` and ``%`` among the
quasi-affine expressions equal to it at every point of its (finite) box: integer
constants and variables combined by ``+``, ``-``, multiplication by integer constants,
and ``//``/``%`` by non-zero integer constants, in the case's semantics. The language
matters: with comparisons, ``max`` or ``min`` every function on a finite box can be
written without a division, so the count only means something among the expressions
index arithmetic is written in.

A value is claimed only where a lower bound meets an upper bound, both checked on every
point of the box (so boxes are kept small, at most :data:`MAX_POINTS` points):

* **Lower bounds.** 0 if the value table is affine (then it *is* an affine expression with
  integer coefficients: integer values at unit steps give integer slopes), else at least 1,
  since an expression without ``//`` and ``%`` is affine. More from *carries*: fix a
  displacement ``d`` and look at the change ``e(v + d) - e(v)`` over the box. For one
  floor division ``floor(N / n)`` the change is ``floor(b / n)`` or one more when ``N``
  changes by ``b``, so the change of an expression with ``k`` divisions is a function of
  ``k`` bits and takes at most ``2**k`` values (``%`` is ``N - n*floor(N / n)``: the same
  bit). Truncation has one step twice as wide (around 0), which allows a third value per
  operation: at most ``3**k``. Seeing ``D`` distinct changes along some ``d`` proves
  ``k >= ceil(log2 D)`` for floor, ``ceil(log3 D)`` for truncation; and for truncation,
  a sharper test of whether one division can do (:func:`_one_trunc_cannot`).
* **Upper bounds.** The expression's own count; or a *witness*
  ``A + c1*floor(B1 / n1) + ... + ck*floor(Bk / nk)``, ``A`` and the ``Bi`` affine with
  integer coefficients, equal to the expression on every point: ``k`` divisions. The
  candidate ``floor(Bi / ni)`` come from the expression itself: each ``N // n`` or ``N % n``
  whose numerator ``N`` is affine on the box gives ``floor(N / n)``, and ``(N // s) % n``
  also ``floor(N / (s*n))``. A witness holds for truncation too: adding a multiple of
  ``ni`` to ``Bi`` (and subtracting it from ``A``) makes every numerator non-negative on the
  box, where truncation and floor agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import quorem
from benchmarks.layouts import Bounds, affine_form

MAX_POINTS = 4096
Point = tuple[int, ...]

_DIV_OPS = (quorem.Op.FLOORDIV, quorem.Op.TRUNCDIV)
_DIVISION_OPS = (*_DIV_OPS, quorem.Op.FLOORMOD, quorem.Op.TRUNCMOD)


@dataclass(frozen=True)
class Table:
    """A term's value at every point of its box, points in a fixed (row-major) order."""

    bounds: Bounds
    names: tuple[str, ...]
    points: tuple[Point, ...]
    values: tuple[int, ...]

    def by_point(self) -> dict[Point, int]:
        """The table as a mapping, the form :func:`affine_form` reads."""
        return dict(zip(self.points, self.values, strict=True))


def box_size(bounds: Mapping[str, tuple[int, int]]) -> int:
    """Number of points of the box: what an exhaustive check costs."""
    return math.prod(hi - lo + 1 for lo, hi in bounds.values())


def tabulate(term: quorem.Term, bounds: Bounds) -> Table:
    """Evaluate ``term`` at every point of ``bounds`` with quorem's own evaluator."""
    names = tuple(sorted(bounds))
    points = tuple(itertools.product(*(range(bounds[n][0], bounds[n][1] + 1) for n in names)))
    values = tuple(quorem.evaluate(term, dict(zip(names, p, strict=True))) for p in points)
    return Table(bounds, names, points, values)


def is_affine(table: Table) -> bool:
    """Whether the table is an affine function of the variables (no ``//`` or ``%`` needed)."""
    return affine_form(table.by_point(), table.bounds)


def _displacements(width: int) -> Iterator[Point]:
    """Unit steps, double steps and sums and differences of two unit steps: small
    displacements along which carries show (any displacement is sound)."""
    units = [tuple(int(k == j) for k in range(width)) for j in range(width)]
    yield from units
    yield from (tuple(2 * c for c in u) for u in units)
    for a, b in itertools.combinations(units, 2):
        yield tuple(x + y for x, y in zip(a, b, strict=True))
        yield tuple(x - y for x, y in zip(a, b, strict=True))


def _changes_by_line(table: Table, d: Point) -> list[list[int]]:
    """The changes ``e(v + d) - e(v)`` along each line ``v0 + t*d`` of the box, in order."""
    at = table.by_point()
    lines = []
    for start in table.points:
        if tuple(x - y for x, y in zip(start, d, strict=True)) in at:
            continue  # not the first point of its line
        line, p = [], start
        while (q := tuple(x + y for x, y in zip(p, d, strict=True))) in at:
            line.append(at[q] - at[p])
            p = q
        lines.append(line)
    return lines


def distinct_changes(table: Table) -> int:
    """The most distinct values ``e(v + d) - e(v)`` takes over the box, for one of a few
    small displacements ``d``: the quantity the carry lower bound counts."""
    best = 1
    for d in _displacements(len(table.names)):
        best = max(best, len({c for line in _changes_by_line(table, d) for c in line}))
    return best


def _one_trunc_cannot(table: Table) -> bool:
    """Whether no expression with a single truncating division equals the table.

    Such an expression is ``A + c*trunc(B / n)`` with ``A`` and ``B`` affine (a remainder is
    ``B - n*trunc(B / n)``). Along ``d``, ``B`` changes by a constant ``b``, and
    ``trunc(B / n)`` by ``q`` or ``q + 1`` (``q = floor(b / n)``, for ``b >= 0``; mirrored
    for ``b < 0``) except where the step crosses zero, where truncation's wide step allows
    the third value ``q - 1``; ``B`` is monotone along a line, so that happens at most once
    per line. Three changes along ``d`` must then be equally spaced, and the extreme one that
    is the exception cannot occur twice on one line.
    """
    for d in _displacements(len(table.names)):
        lines = _changes_by_line(table, d)
        values = sorted({c for line in lines for c in line})
        if len(values) < 3:
            continue
        lo, mid, hi = values[0], values[1], values[-1]
        if len(values) > 3 or hi - mid != mid - lo:
            return True
        repeated = {c for line in lines for c in set(line) if line.count(c) >= 2}
        if lo in repeated and hi in repeated:
            return True
    return False


def lower_bound(table: Table, semantics: str) -> int:
    """Divisions any quasi-affine expression equal to the table needs (module docstring)."""
    if is_affine(table):
        return 0
    base = 2 if semantics == "floor" else 3
    changes = distinct_changes(table)
    # The least k with base**k >= changes, computed exactly (no floating-point log).
    k = 0
    while base**k < changes:
        k += 1
    if semantics != "floor" and k <= 1 and _one_trunc_cannot(table):
        k = 2
    return max(1, k)


def _numerator_features(term: quorem.Term, table: Table) -> list[tuple[int, ...]]:
    """Candidate ``floor(B / n)`` tables from the numerators of ``term`` that are affine on
    the box, without duplicates and without affine ones (they add nothing)."""
    cache: dict[quorem.Term, Table] = {}

    def affine_table(t: quorem.Term) -> Table | None:
        if t not in cache:
            cache[t] = tabulate(t, table.bounds)
        return cache[t] if is_affine(cache[t]) else None

    candidates: list[tuple[Table, int]] = []
    seen_nodes: set[quorem.Term] = set()
    stack = [term]
    while stack:
        t = stack.pop()
        if t in seen_nodes:
            continue
        seen_nodes.add(t)
        stack.extend(t.args)
        if t.op not in _DIVISION_OPS or t.args[1].op is not quorem.Op.CONST:
            continue
        numerator, n = t.args[0], t.args[1].arg
        if n == 0:
            continue
        if (num := affine_table(numerator)) is not None:
            candidates.append((num, n))
        inner = numerator
        if (
            inner.op in _DIV_OPS
            and inner.args[1].op is quorem.Op.CONST
            and inner.args[1].arg
            and (num := affine_table(inner.args[0])) is not None
        ):
            candidates.append((num, n * inner.args[1].arg))
    features: dict[tuple[int, ...], None] = {}
    for num, n in candidates:
        feature = tuple(v // n for v in num.values)
        floor_table = Table(table.bounds, table.names, table.points, feature)
        if not is_affine(floor_table):
            features[feature] = None
    return list(features)


def fits(table: Table, columns: Sequence[Sequence[int]]) -> bool:
    """Whether ``table == a0 + sum(a_j * x_j) + sum(c_i * columns[i])`` on every point for
    *integers* ``a0, a_j, c_i``. Conservative: where the solution is not unique and the one
    found is not integral, answers False (a claim is lost, never made wrongly)."""
    moving = [k for k, n in enumerate(table.names) if table.bounds[n][0] < table.bounds[n][1]]
    width = 1 + len(moving) + len(columns)

    def row_at(r: int) -> list[Fraction]:
        # A fixed variable's column would repeat the constant's: it is left out.
        p = table.points[r]
        return [Fraction(1), *(Fraction(p[k]) for k in moving), *(Fraction(c[r]) for c in columns)]

    pivots: list[tuple[int, list[Fraction], Fraction]] = []  # (column, row, target)
    for r, target in enumerate(table.values):
        row, rest = row_at(r), Fraction(target)
        for col, prow, ptarget in pivots:
            if row[col]:
                f = row[col]
                row = [a - f * b for a, b in zip(row, prow, strict=True)]
                rest -= f * ptarget
        lead = next((j for j, a in enumerate(row) if a), None)
        if lead is None:
            if rest:
                return False
            continue
        f = row[lead]
        row, rest = [a / f for a in row], rest / f
        # Keep earlier pivot rows reduced in the new pivot column (Gauss-Jordan).
        pivots = [
            (c, [a - pr[lead] * b for a, b in zip(pr, row, strict=True)], pt - pr[lead] * rest)
            if pr[lead]
            else (c, pr, pt)
            for c, pr, pt in pivots
        ]
        pivots.append((lead, row, rest))
        if len(pivots) == width:
            break
    solution = [Fraction(0)] * width  # free unknowns (if any) are 0
    for col, _, value in pivots:
        solution[col] = value
    if any(s.denominator != 1 for s in solution):
        return False
    coef = [int(s) for s in solution]
    slopes, scales = coef[1 : 1 + len(moving)], coef[1 + len(moving) :]
    for r, (p, v) in enumerate(zip(table.points, table.values, strict=True)):
        got = coef[0] + sum(a * p[k] for a, k in zip(slopes, moving, strict=True))
        got += sum(c * col[r] for c, col in zip(scales, columns, strict=True))
        if got != v:
            return False
    return True


def has_witness(term: quorem.Term, table: Table, ops: int) -> bool:
    """Whether some ``ops`` of the candidate floors, plus an affine part, equal the table:
    an expression with ``ops`` divisions, in either semantics (module docstring)."""
    features = _numerator_features(term, table)
    return any(fits(table, chosen) for chosen in itertools.combinations(features, ops))


def ideal_ops(term: quorem.Term, bounds: Bounds, semantics: str) -> int | None:
    """The least number of ``//``/``%`` an expression equal to ``term`` on its box needs,
    or None where the bounds this module can prove do not meet (or the box is too big)."""
    if box_size(bounds) > MAX_POINTS:
        return None
    table = tabulate(term, bounds)
    lower = lower_bound(table, semantics)
    own = quorem.count_divmod(term)
    if lower > own:  # the lower-bound argument would be wrong: never claim on it
        raise AssertionError(f"{term}: lower bound {lower} above its own count {own}")
    if lower == own or has_witness(term, table, lower):
        return lower
    return None
