"""Simplification under conditions: variable ranges narrowed by what is known to hold.

A condition is a term that is non-zero where it holds: a comparison, a conjunction of
them, or anything else (which is then only known to be non-zero). From conditions that
hold, :func:`narrow` derives tighter bounds for the variables by interval propagation
over linear bounds (``4*x + y < 30`` with ``y >= 0`` gives ``x <= 7``), through floor and
truncating division by a positive constant (``x // 8 == 3`` gives ``24 <= x <= 31``).
Every derived bound is implied by the conditions, so a term simplified with its
variables given the narrowed bounds equals the original term at every point where the
conditions hold. Bounds only ever narrow.

The rewriter uses this for the clauses of a conjunction (each clause simplified knowing
the others hold) and of a disjunction (knowing the others fail); ``quorem.simplify``
for its ``given`` conditions; the indexing maps for their constraints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Final

from .errors import TermError
from .ops import DIVISION_OPS, Op
from .term import Term, const, linear, var
from .walk import free_names, nodes, replace_subterms, substitute

__all__ = [
    "Bounds",
    "Knowledge",
    "in_context",
    "knowledge",
    "narrow",
    "narrowed_variables",
    "restore_variables",
    "safe_outside",
]

Bounds = dict[str, tuple[int | None, int | None]]
_Form = tuple[tuple[Term, ...], tuple[int, ...]]  # a linear form: atoms, coefficients

_ROUNDS: Final = 4  # propagation passes over the conditions: enough for chains a..b..c
_MAX_FACTS: Final = 2000  # atoms visited per pass: a bound on the work for huge conditions


class _ContradictionError(Exception):
    """The conditions cannot hold together (some variable's range became empty)."""


_QUOTIENTS: Final = frozenset({Op.FLOORDIV, Op.TRUNCDIV, Op.EUCLIDDIV})


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class _Narrowing:
    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        # The range of a linear form of several atoms (``4*x + y``), keyed by its atoms
        # and coefficients: a term holding that form can be bounded as a whole.
        self.sums: dict[_Form, tuple[int | None, int | None]] = {}
        self.changed = False
        self.work = 0

    def range_of(self, t: Term) -> tuple[int | None, int | None]:
        if t.op is Op.VAR:
            return self.bounds.get(t.arg[0], (t.arg[1], t.arg[2]))
        return t.vmin, t.vmax

    def tighten_var(self, t: Term, lo: int | None, hi: int | None) -> None:
        name = t.arg[0]
        old_lo, old_hi = self.bounds.get(name, (t.arg[1], t.arg[2]))
        new_lo = old_lo if lo is None or (old_lo is not None and old_lo >= lo) else lo
        new_hi = old_hi if hi is None or (old_hi is not None and old_hi <= hi) else hi
        if new_lo is not None and new_hi is not None and new_lo > new_hi:
            raise _ContradictionError
        if (new_lo, new_hi) != (old_lo, old_hi):
            self.bounds[name] = (new_lo, new_hi)
            self.changed = True

    def value_in(self, t: Term, lo: int | None, hi: int | None) -> None:
        """Record that the value of ``t`` lies in ``[lo, hi]`` (None: unbounded side)."""
        self.work += 1
        if self.work > _MAX_FACTS or (lo is None and hi is None):
            return
        op = t.op
        if op is Op.CONST:
            if (lo is not None and t.arg < lo) or (hi is not None and t.arg > hi):
                raise _ContradictionError
        elif op is Op.VAR:
            self.tighten_var(t, lo, hi)
        elif op is Op.ADD:
            self.sum_in(t, lo, hi)
        elif op in _QUOTIENTS and t.args[1].op is Op.CONST and t.args[1].arg > 0:
            # Euclidean division by a positive divisor is floor division.
            self.quotient_in(t.args[0], t.args[1].arg, op is not Op.TRUNCDIV, lo, hi)

    def sum_in(self, t: Term, lo: int | None, hi: int | None) -> None:
        """``sum(c_i*t_i) + k`` in ``[lo, hi]``: bound each addend by the others' extremes."""
        coefs, k = t.arg
        if len(t.args) > 1:
            key = (t.args, coefs)
            old_lo, old_hi = self.sums.get(key, (None, None))
            new_lo = None if lo is None else lo - k
            new_hi = None if hi is None else hi - k
            self.sums[key] = (
                new_lo if old_lo is None or (new_lo is not None and new_lo > old_lo) else old_lo,
                new_hi if old_hi is None or (new_hi is not None and new_hi < old_hi) else old_hi,
            )
        ranges = [self.range_of(a) for a in t.args]
        # Extremes of each c_i*t_i.
        lows: list[int | None] = []
        highs: list[int | None] = []
        for c, (a_lo, a_hi) in zip(coefs, ranges, strict=True):
            lo_i, hi_i = (a_lo, a_hi) if c > 0 else (a_hi, a_lo)
            lows.append(None if lo_i is None else c * lo_i)
            highs.append(None if hi_i is None else c * hi_i)
        unknown_low = sum(1 for v in lows if v is None)
        unknown_high = sum(1 for v in highs if v is None)
        total_low = k + sum(v for v in lows if v is not None)
        total_high = k + sum(v for v in highs if v is not None)
        for i, (atom, c) in enumerate(zip(t.args, coefs, strict=True)):
            # c*atom <= hi - (sum of the others' lows); >= lo - (the others' highs).
            upper: int | None = None
            if hi is not None and unknown_low - (lows[i] is None) == 0:
                others = total_low - (lows[i] or 0)
                upper = hi - others
            lower: int | None = None
            if lo is not None and unknown_high - (highs[i] is None) == 0:
                others = total_high - (highs[i] or 0)
                lower = lo - others
            if upper is None and lower is None:
                continue
            if c > 0:
                a_hi = None if upper is None else upper // c
                a_lo = None if lower is None else _ceil_div(lower, c)
            else:
                a_hi = None if lower is None else lower // c
                a_lo = None if upper is None else _ceil_div(upper, c)
            self.value_in(atom, a_lo, a_hi)

    def quotient_in(self, x: Term, d: int, floor: bool, lo: int | None, hi: int | None) -> None:
        """``x // d`` in ``[lo, hi]`` for ``d > 0``: the numerator's range."""
        if floor:
            x_lo = None if lo is None else lo * d
            x_hi = None if hi is None else hi * d + d - 1
        else:  # truncation rounds toward zero: the band of a quotient q <= 0 reaches up
            x_lo = None if lo is None else (lo * d if lo > 0 else lo * d - d + 1)
            x_hi = None if hi is None else (hi * d + d - 1 if hi >= 0 else hi * d)
        self.value_in(x, x_lo, x_hi)

    def condition(self, c: Term) -> None:
        """Record what ``c`` holding (being non-zero) says."""
        while c.op is Op.AND:  # a chain nested to the right: iterate, do not recurse
            self.clause(c.args[0])
            c = c.args[1]
        self.clause(c)

    def clause(self, c: Term) -> None:
        op = c.op
        if op is Op.AND:
            self.condition(c)
        elif op in (Op.LT, Op.LE, Op.EQ):
            a, b = c.args
            diff = linear([(a, 1), (b, -1)])
            if op is Op.EQ:
                self.value_in(diff, 0, 0)
            else:
                self.value_in(diff, None, -1 if op is Op.LT else 0)
        elif op is Op.NE:
            a, b = c.args
            diff = linear([(a, 1), (b, -1)])
            pairs, k = diff.addends()
            if len(pairs) == 1 and pairs[0][0].op is Op.VAR:
                x, coef = pairs[0]
                if k % coef == 0:  # coef*x + k != 0 excludes x = -k/coef: an endpoint?
                    self.exclude(x, -k // coef)
            elif not pairs and k == 0:
                raise _ContradictionError
        elif c.op is Op.CONST and c.arg == 0:
            raise _ContradictionError

    def exclude(self, x: Term, value: int) -> None:
        lo, hi = self.range_of(x)
        if lo == value:
            self.tighten_var(x, value + 1, None)
        elif hi == value:
            self.tighten_var(x, None, value - 1)


@dataclasses.dataclass(frozen=True, slots=True)
class Knowledge:
    """What conditions say: narrowed variable bounds, and ranges of linear forms.

    ``sums`` maps a linear form of several atoms, as ``(atoms, coefficients)`` of a
    canonical sum without its constant, to a range its value lies in where the
    conditions hold.
    """

    bounds: Bounds
    sums: Mapping[tuple[tuple[Term, ...], tuple[int, ...]], tuple[int | None, int | None]]


def narrow(
    conditions: Iterable[Term], bounds: Mapping[str, tuple[int | None, int | None]]
) -> Bounds | None:
    """Variable bounds narrowed by ``conditions``; None if they cannot hold together.

    ``bounds`` gives each variable's bounds to start from (a variable not in it starts
    from its own). The result has an entry for every variable whose bounds narrowed and
    for every name of ``bounds``; each is within the starting bounds and contains every
    value the variable takes at a point of the box where all conditions hold.
    """
    known = knowledge(conditions, bounds)
    return None if known is None else known.bounds


def knowledge(
    conditions: Iterable[Term], bounds: Mapping[str, tuple[int | None, int | None]]
) -> Knowledge | None:
    """:func:`narrow`'s bounds with the ranges of linear forms; None on contradiction."""
    state = _Narrowing(dict(bounds))
    conds = list(conditions)
    try:
        for _ in range(_ROUNDS):
            state.changed = False
            state.work = 0
            for c in conds:
                state.condition(c)
            if not state.changed:
                break
    except _ContradictionError:
        return None
    except RecursionError:  # a conjunction nested beyond the stack: no narrowing
        return Knowledge(dict(bounds), {})
    return Knowledge(state.bounds, state.sums)


def _bounded_forms(term: Term, known: Knowledge) -> tuple[Term, dict[str, Term]]:
    """``term`` with its sums of known narrower range as stand-ins, and the map back.

    A stand-in is a variable with the known range of the sum's linear form, plus the
    sum's constant.
    """
    if not known.sums:
        return term, {}
    found: dict[Term, Term] = {}
    back: dict[str, Term] = {}
    for t in nodes(term):
        if t.op in _DECIDABLE:
            decided = _decided_comparison(t, known)
            if decided is not None:
                found[t] = const(decided)
            continue
        if t.op is not Op.ADD or len(t.args) < 2:
            continue
        coefs, k = t.arg
        got = known.sums.get((t.args, coefs))
        if got is None:
            continue
        form = linear(zip(t.args, coefs, strict=True))
        lo = got[0] if got[0] is not None and (form.vmin is None or got[0] > form.vmin) else None
        hi = got[1] if got[1] is not None and (form.vmax is None or got[1] < form.vmax) else None
        if lo is None and hi is None:
            continue
        # A name no text can write (``ǂ``), so it cannot capture a user's variable.
        name = f"ǂform{len(back)}"
        stand_in = var(name, form.vmin if lo is None else lo, form.vmax if hi is None else hi)
        back[name] = form
        found[t] = linear([(stand_in, 1)], k)
    return (replace_subterms(term, found), back) if found else (term, {})


_DECIDABLE: Final = frozenset({Op.LT, Op.LE, Op.EQ, Op.NE})


def _decided_comparison(c: Term, known: Knowledge) -> int | None:
    """The value of the comparison ``c`` where the conditions hold, if they decide it.

    ``a OP b`` compares ``a - b`` with 0; a known range of that linear form (or of its
    negation) can decide it: under ``y < x``, ``x < y`` is 0 although neither side is a
    sum the conditions mention.
    """
    a, b = c.args
    diff = linear([(a, 1), (b, -1)])
    pairs, k = diff.addends()
    if len(pairs) < 2:  # one atom: its own narrowed bounds decide it
        return None
    atoms = tuple(t for t, _ in pairs)
    coefs = tuple(co for _, co in pairs)
    got = known.sums.get((atoms, coefs))
    lo: int | None
    hi: int | None
    if got is not None:
        lo, hi = got
    else:
        negated = known.sums.get((atoms, tuple(-co for co in coefs)))
        if negated is None:
            return None
        lo = None if negated[1] is None else -negated[1]
        hi = None if negated[0] is None else -negated[0]
    lo = None if lo is None else lo + k
    hi = None if hi is None else hi + k
    op = c.op
    if op is Op.LT:
        return 1 if hi is not None and hi < 0 else 0 if lo is not None and lo >= 0 else None
    if op is Op.LE:
        return 1 if hi is not None and hi <= 0 else 0 if lo is not None and lo > 0 else None
    outside = (lo is not None and lo > 0) or (hi is not None and hi < 0)
    if op is Op.EQ:
        return 1 if lo == 0 and hi == 0 else 0 if outside else None
    return 0 if lo == 0 and hi == 0 else 1 if outside else None


def in_context(term: Term, known: Knowledge) -> tuple[Term, dict[str, Term]]:
    """``term`` as it reads where the conditions hold, and the map back.

    Sums whose linear form the conditions bound become stand-in variables with that
    range (``(4*x + y) // 30`` under ``4*x + y < 30``), and variables get their narrowed
    bounds. :func:`restore_variables` with the map gives a term equal to the result at
    every point where the conditions hold.
    """
    names = free_names(term)
    term, back = _bounded_forms(term, known)
    narrowed, var_back = narrowed_variables(
        term, {n: b for n, b in known.bounds.items() if n in names}
    )
    back.update(var_back)
    return narrowed, back


def narrowed_variables(term: Term, bounds: Bounds) -> tuple[Term, dict[str, Term]]:
    """``term`` with its narrowed variables, and the map back (name -> original).

    Each variable of ``term`` named in ``bounds`` with other bounds than its own is
    replaced by the variable of that name with those bounds, or by the constant when
    they admit one value.
    """
    originals = {t.arg[0]: t for t in nodes(term) if t.op is Op.VAR}
    forward: dict[str, Term] = {}
    back: dict[str, Term] = {}
    for name, original in originals.items():
        if name not in bounds:
            continue
        lo, hi = bounds[name]
        if (lo, hi) != (original.arg[1], original.arg[2]):
            # A variable pinned to one value is that value (``y == 2`` puts 2 for y).
            forward[name] = const(lo) if lo is not None and lo == hi else var(name, lo, hi)
            back[name] = original
    try:
        return substitute(term, forward), back
    except TermError:  # a pinned value divides by zero: the term is undefined there
        return term, {}


def restore_variables(term: Term, back: Mapping[str, Term]) -> Term:
    """``term`` with the narrowed variables given their original bounds again."""
    return substitute(term, back)


def _divisors(t: Term) -> set[Term]:
    return {n.args[1] for n in nodes(t) if n.op in DIVISION_OPS}


def safe_outside(result: Term, original: Term) -> bool:
    """Whether ``result`` may replace ``original`` outside the conditions too.

    A term simplified under conditions is still computed where they fail (a clause of a
    conjunction is evaluated whatever the others are; a gated index is computed before
    the gate masks it), so it must be defined and fit int64 wherever ``original`` is
    and does: each of its divisors is non-zero over the whole box or is a divisor
    ``original`` computes too, and it fits int64 if ``original`` does.
    """
    if original.fits64 and not result.fits64:
        return False
    theirs = None
    for d in _divisors(result):
        lo, hi = d.vmin, d.vmax
        if (lo is not None and lo > 0) or (hi is not None and hi < 0):
            continue
        if theirs is None:
            theirs = _divisors(original)
        if d not in theirs:
            return False
    return True
