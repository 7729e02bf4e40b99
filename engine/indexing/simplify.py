"""The indexing-map simplifier: results and constraints through quorem's proven rules.

Every rewrite of a term here is made by a rule of ``rules/``:

* results and constraint expressions by the shipped rules (:func:`quorem.simplify`),
  over the variables' boxes;
* a constraint ``e in [lo, hi]`` is the pair of comparisons ``lo <= e`` and
  ``e <= hi``, each rewritten by the shipped rules plus the constraint rules of
  ``rules/constraints/`` (move constants, constant factors and divisors into the
  bound; fold comparisons the box decides), and read back as a bound on what is left;
  a sum whose rest fits inside one step of a coefficient is rewritten with the rest
  standing in as a variable (:func:`_split_by_step`);
* the residue constraints ``x mod n_i in [r_i, r_i]`` on one ``x`` merge into one,
  ``x mod L in [R, R]`` with ``L`` the lcm of the moduli (coprime ones too) and ``R``
  the Chinese-remainder solution; the rule ``merge-residues-implied`` shows the merged
  constraint implies each one it replaces (the converse is the theorem, see
  :func:`crt`), and a variable's bounds snap to its residue class by
  ``snap-lower``/``snap-upper``, rewriting the conjunction written as a product of 0/1
  comparisons;
* results are simplified by the shipped rules; then digit pairs that simplification
  split apart are recombined (:func:`_recombined`): a remainder or a division is
  written over the other's numerator where the rules simplify the new writing back to
  the old atom, or two remainder digits become one remainder (``mod-pair-as-one-mod``),
  and the outcome is kept only when it has fewer divisions and remainders.

Not rewrites, and so not by rules: ``rescale_symbols`` substitutes ``c*s + r`` for a
range variable ``s`` (a bijection onto its residue class, XLA's ``RescaleSymbols``),
and unused variables are removed with their constraints where those can hold.

The constraint rules are proven sound like every rule (``quorem verify``); they are
applied here to terms built for the purpose, with a step budget, not by the fixed-point
rewriter to user expressions (so no termination order is claimed for them). The
simplifier's own loop ends: each pass either narrows a bound, removes a constraint or
a division, or stops, and passes are capped; recombination only ever lowers the count
of divisions and remainders.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Iterator, Sequence
from typing import Final

from ..context import (
    Knowledge,
    in_context,
    knowledge,
    restore_variables,
    safe_outside,
)
from ..evaluation import count_divmod, evaluate
from ..ops import Op, Semantics
from ..rewrite import rewrite_term
from ..ruleset import (
    RuleSet,
    constraint_ruleset,
    constraint_ruleset_for,
    default_ruleset,
)
from ..term import Term, compare, const, div, linear, mod, product, var
from ..walk import free_names, replace_subterms, substitute
from .compare import MapSolver, decide_empty, decide_equal
from .map import IndexingMap, IndexingMapError, Variable, internal_names
from .mapsyntax import print_map

__all__ = ["crt", "maps_equal", "rescale_symbols", "simplify_map"]

_MAX_PASSES: Final = 64
_CONSTRAINT_STEPS: Final = 10_000
_ENUMERATED: Final = 2**16  # points times constraints checked for unused variables
_RECOMBINE_TRIES: Final = 256  # remainder-division pairs tried per pass of _recombined
_DIGIT_PAIR_TRIES: Final = 32  # digit pairs made one remainder, per pass of _recombined


def _simplify(t: Term, rules: RuleSet) -> Term:
    return rewrite_term(t, rules)


def _comparison(t: Term, rules: RuleSet) -> Term:
    return rewrite_term(t, rules, max_steps=_CONSTRAINT_STEPS)


@dataclasses.dataclass
class _Bounds:
    """What one pass learns: bounds on expressions (a bare variable's go to the box)."""

    of: dict[Term, tuple[int, int]] = dataclasses.field(default_factory=dict)
    empty: bool = False

    def add(self, e: Term, lo: int, hi: int) -> None:
        if e.is_const:
            if not lo <= e.value <= hi:
                self.empty = True
            return
        plo, phi = self.of.get(e, (lo, hi))
        lo, hi = max(lo, plo), min(hi, phi)
        if lo > hi:
            self.empty = True
        self.of[e] = (lo, hi)


def _read_bound(r: Term, side: str, bounds: _Bounds, fallback: tuple[Term, int]) -> None:
    """Record what a rewritten comparison says; ``fallback`` when it is no simple bound."""
    if r.is_const:
        if r.value == 0:
            bounds.empty = True
        return  # 1: implied by the box
    if r.op is Op.LE:
        a, b = r.args
        if a.is_const and b.vmax is not None:
            bounds.add(b, a.value, max(b.vmax, a.value))
            return
        if b.is_const and a.vmin is not None:
            bounds.add(a, min(a.vmin, b.value), b.value)
            return
    e, k = fallback
    if side == "lo":
        bounds.add(e, k, max(k, e.vmax if e.vmax is not None else k))
    else:
        bounds.add(e, min(k, e.vmin if e.vmin is not None else k), k)


def _is_simple_bound(r: Term) -> bool:
    """Whether a rewritten comparison is a constant or bounds one variable by a constant."""
    if r.is_const:
        return True
    if r.op is not Op.LE:
        return False
    a, b = r.args
    return (a.is_const and b.op is Op.VAR) or (b.is_const and a.op is Op.VAR)


def _split_by_step(  # noqa: PLR0917  (one call site)
    e: Term, side: str, k: int, crules: RuleSet, fresh: Iterator[str], default: Term
) -> Term:
    """``k <= e`` (side ``lo``) or ``e <= k`` as a bound on the scaled part of ``e``.

    ``e`` is split into ``g*A + B``: ``A`` the addends whose coefficient ``g`` divides,
    ``B`` the rest. When ``B``'s range is narrower than one step ``g``, ``B`` stands in
    as a fresh variable ``r`` over ``[0, vmax(B) - vmin(B)]`` (the constant ``vmin(B)``
    moved to the bound) and the rules rewrite the comparison (``g*s + r <= c`` is ``s <=
    floor((c - r)/g)`` when the rounding is the same for every ``r``: the rules
    ``*-common-factor`` of ``rules/45-compare.rules``). A rewrite free of ``r`` holds
    for every value ``B`` takes, so it is the constraint. The steps are tried from the
    largest coefficient down; ``default`` when no split bounds one variable. The shipped
    rules split ``e`` only by the gcd of all its coefficients above 1, which misses
    ``d0*8 + s0*3 + s1`` with ``3*s0 + s1`` in ``[0, 5]``.
    """
    pairs, constant = e.addends()
    if len(pairs) < 2:
        return default
    for g in sorted({abs(c) for _, c in pairs if abs(c) > 1}, reverse=True):
        scaled = [(a, c) for a, c in pairs if c % g == 0]
        rest = linear([(a, c) for a, c in pairs if c % g], constant)
        if not scaled or rest.is_const or rest.vmin is None or rest.vmax is None:
            continue
        if rest.vmax - rest.vmin >= g:
            continue
        stand = var(next(fresh), 0, rest.vmax - rest.vmin)
        core = linear([*scaled, (stand, 1)])
        bound = const(k - rest.vmin)
        cmp = compare(Op.LE, bound, core) if side == "lo" else compare(Op.LE, core, bound)
        out = _comparison(cmp, crules)
        if _is_simple_bound(out) and stand.arg[0] not in free_names(out):
            return out
    return default


def _constraint_pass(m: IndexingMap, rules: RuleSet, crules: RuleSet) -> IndexingMap:
    """One pass over the constraints: simplify, move into bounds, fold into the box."""
    bounds = _Bounds()
    fresh = internal_names("r", (v.name for v in m.variables()))
    for expr, lo, hi in m.constraints:
        e = _simplify(expr, rules)
        low = _comparison(compare(Op.LE, const(lo), e), crules)
        if not _is_simple_bound(low):
            low = _split_by_step(e, "lo", lo, crules, fresh, low)
        _read_bound(low, "lo", bounds, (e, lo))
        high = _comparison(compare(Op.LE, e, const(hi)), crules)
        if not _is_simple_bound(high):
            high = _split_by_step(e, "hi", hi, crules, fresh, high)
        _read_bound(high, "hi", bounds, (e, hi))
        if bounds.empty:
            return IndexingMap.empty(m.n_dims, m.n_results)
    box = m.bounds()
    kept: list[tuple[Term, int, int]] = []
    for e, (lo, hi) in bounds.of.items():
        if e.op is Op.VAR:
            plo, phi = box[e.arg[0]]
            box[e.arg[0]] = (max(lo, plo), min(hi, phi))
        elif e.vmin is not None and e.vmax is not None and lo <= e.vmin and e.vmax <= hi:
            continue  # implied by the box
        else:
            kept.append((e, lo, hi))
    out = dataclasses.replace(m, constraints=tuple(kept))
    return out.with_bounds(box)


def _residues(m: IndexingMap) -> list[tuple[Term, int, int]]:
    """The constraints ``x mod n in [r, r]``: (x, n, r)."""
    out = []
    for e, lo, hi in m.constraints:
        if lo == hi and e.op is Op.FLOORMOD and e.args[1].is_const and e.args[1].value > 0:
            out.append((e.args[0], e.args[1].value, lo))
    return out


def _residue_pass(m: IndexingMap, crules: RuleSet) -> IndexingMap:
    """Merge residue constraints on one expression; snap variables to their class."""
    residues = _residues(m)
    if not residues:
        return m
    merged = _merge_residues(m, residues, crules)
    if merged is not m:
        return merged
    box = m.bounds()
    changed = False
    for x, n, r in residues:
        if x.op is not Op.VAR:
            continue
        name = x.arg[0]
        lo, hi = box[name]
        free = var(name)  # unbounded: the comparison is the whole question
        cls = compare(Op.EQ, mod(free, const(n), Semantics.FLOOR), const(r))
        low = _comparison(product([compare(Op.LE, const(lo), free), cls]), crules)
        high = _comparison(product([compare(Op.LE, free, const(hi)), cls]), crules)
        new_lo = _bound_in(low, name, "lo", lo)
        new_hi = _bound_in(high, name, "hi", hi)
        if (new_lo, new_hi) != (lo, hi):
            box[name] = (new_lo, new_hi)
            changed = True
    return m.with_bounds(box) if changed else m


def _merge_residues(
    m: IndexingMap, residues: list[tuple[Term, int, int]], crules: RuleSet
) -> IndexingMap:
    """The residue constraints on one expression as one, ``x mod lcm in [r, r]``.

    ``x mod n_i == r_i`` for every i holds exactly when ``x mod L == R``, for ``L`` the
    lcm of the ``n_i`` and ``R`` their Chinese-remainder solution (none: the map is
    empty). The single constraint implies each one it replaces: the rule
    ``merge-residues-implied`` is asked to rewrite ``x mod n_i == r_i and x mod L == R``
    to ``x mod L == R``, and nothing is merged unless it does for each. The converse,
    that the constraints together imply ``x mod L == R``, is the Chinese remainder
    theorem, which Z3 cannot prove for symbolic moduli; so each merge is checked for its
    own moduli instead: both sides depend on ``x`` only through ``x mod L`` (every
    ``n_i`` divides ``L``), so agreeing on one period ``0 <= x < L`` is a proof for every
    ``x`` (:func:`_same_on_one_period`). Above :data:`_PERIOD_CHECKED` nothing is merged.
    ``x mod n in [r, r]`` with ``r`` outside ``[0, n)`` is left to the range checks.
    """
    by_expr: dict[Term, list[tuple[int, int]]] = {}
    for x, n, r in residues:
        if 0 <= r < n:
            by_expr.setdefault(x, []).append((n, r))
    replaced: dict[Term, tuple[Term, int, int]] = {}
    for x, classes in by_expr.items():
        if len(classes) < 2:
            continue
        solution = crt(classes)
        if solution is None:
            return IndexingMap.empty(m.n_dims, m.n_results)
        big, rest = solution
        if big > _PERIOD_CHECKED or not _same_on_one_period(classes, big, rest):
            continue
        if all(_implies(x, solution, n, r, crules) for n, r in classes if n != big):
            for n, _ in classes:
                replaced[mod(x, const(n), Semantics.FLOOR)] = (x, big, rest)
    if not replaced:
        return m
    kept = [c for c in m.constraints if c[0] not in replaced]
    kept += [(mod(x, const(n), Semantics.FLOOR), r, r) for x, n, r in set(replaced.values())]
    return dataclasses.replace(m, constraints=tuple(kept)).normalized()


_PERIOD_CHECKED: Final = 1 << 16  # the largest merged modulus checked point by point


def _same_on_one_period(classes: Sequence[tuple[int, int]], big: int, rest: int) -> bool:
    """Whether the classes hold together exactly when ``x mod big == rest``.

    Checked at every ``x`` in ``[0, big)``; with ``big`` a multiple of every modulus both
    sides repeat with period ``big``, so that is every integer ``x``.
    """
    if any(big % n for n, _ in classes):
        return False
    return all(all(x % n == r for n, r in classes) == (x % big == rest) for x in range(big))


def crt(classes: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """``(L, R)``: ``x mod n == r`` for every ``(n, r)`` exactly when ``x mod L == R``.

    ``L`` is the lcm of the moduli (all positive) and ``0 <= R < L``; None when no
    integer has every residue (two classes disagree modulo the gcd of their moduli).
    """
    big, rest = 1, 0
    for n, r in classes:
        g = math.gcd(big, n)
        if (r - rest) % g:
            return None
        # rest + big*t == r (mod n): t == (r - rest)/g * inverse(big/g) (mod n/g).
        step = n // g
        t = ((r - rest) // g * pow(big // g, -1, step)) % step if step > 1 else 0
        rest, big = rest + big * t, big * step
        rest %= big
    return big, rest


def _implies(x: Term, merged: tuple[int, int], n: int, r: int, crules: RuleSet) -> bool:
    """Whether the rules rewrite ``x % n == r and x % big == rest`` to ``x % big == rest``."""
    big, rest = merged
    en, eb = mod(x, const(n), Semantics.FLOOR), mod(x, const(big), Semantics.FLOOR)
    both = product([compare(Op.EQ, en, const(r)), compare(Op.EQ, eb, const(rest))])
    return _comparison(both, crules) is compare(Op.EQ, eb, const(rest))


def _bound_in(t: Term, name: str, side: str, default: int) -> int:
    """The constant bound on variable ``name`` in a product of comparisons, or default."""
    factors = t.args if t.op is Op.MUL else (t,)
    for f in factors:
        if f.op is not Op.LE:
            continue
        a, b = f.args
        if side == "lo" and a.is_const and b.op is Op.VAR and b.arg[0] == name:
            return a.value
        if side == "hi" and b.is_const and a.op is Op.VAR and a.arg[0] == name:
            return b.value
    return default


def _point_variables(m: IndexingMap) -> IndexingMap:
    """Variables whose interval is one point become that constant in every term."""
    points = {v.name: const(v.lo) for v in m.variables() if v.lo == v.hi}
    if not points:
        return m
    return dataclasses.replace(
        m,
        results=tuple(substitute(t, points) for t in m.results),
        constraints=tuple((substitute(e, points), lo, hi) for e, lo, hi in m.constraints),
    ).normalized()


def _simplify_results(m: IndexingMap, rules: RuleSet) -> IndexingMap:
    """Simplify each result, where constraints bound a subterm using that bound too.

    A subterm equal to a constrained expression ``e in [lo, hi]`` is replaced by a fresh
    variable ranging over ``[lo, hi]`` (narrowed by ``e``'s own range) before
    simplifying and put back after: on the domain ``e`` lies in that interval, so what
    holds for every value of the variable holds for ``e``. The fresh names are ones no
    map can use (:func:`internal_names`), so a stand-in never captures a variable.
    """
    names = internal_names("c", (v.name for v in m.variables()))
    stand_in: dict[Term, Term] = {}
    back: dict[str, Term] = {}
    for e, c_lo, c_hi in m.constraints:
        if e.op is Op.VAR or e.vmin is None or e.vmax is None:
            continue
        lo, hi = max(c_lo, e.vmin), min(c_hi, e.vmax)
        if lo > hi:  # e cannot take a value its constraint allows
            return IndexingMap.empty(m.n_dims, m.n_results)
        name = next(names)
        stand_in[e] = var(name, lo, hi)
        back[name] = e
    conditions = [
        c
        for e, lo, hi in m.constraints
        for c in (compare(Op.LE, const(lo), e), compare(Op.LE, e, const(hi)))
    ]
    known = knowledge(conditions, {}) if conditions else None
    results = tuple(
        _recombined(_simplify_result(_under(t, rules, known), rules, stand_in, back), rules)
        for t in m.results
    )
    return dataclasses.replace(m, results=results)


def _under(t: Term, rules: RuleSet, known: Knowledge | None) -> Term:
    """``t`` simplified with its variables narrowed by the constraints (linear bounds).

    The same machinery as ``quorem.simplify(t, given=...)``: on the domain, where every
    constraint holds, the result equals ``t``; kept only if it fits int64 wherever ``t``
    does over the full box.
    """
    if known is None:
        return t
    narrowed, back = in_context(t, known)
    if not back:
        return t
    out = restore_variables(_simplify(narrowed, rules), back)
    return out if safe_outside(out, t) else t


def _simplify_result(
    t: Term, rules: RuleSet, stand_in: dict[Term, Term], back: dict[str, Term]
) -> Term:
    """``t`` simplified until its constrained subterms teach nothing more.

    Simplifying can bring out a constrained expression that was not there before
    (``(d0 + 8) mod 8`` becomes ``d0 mod 8``), so stand-ins go in again until the
    result stops changing: one call reaches what a second would.
    """
    u = t
    for _ in range(_MAX_PASSES):
        v = replace_subterms(u, stand_in) if stand_in else u
        w = _simplify(v, rules)
        if v is not u:
            w = _simplify(substitute(w, back), rules)
        if w is u:
            break
        u = w
    return u


def _subterms(t: Term) -> list[Term]:
    """Every distinct subterm of ``t``, each once, children before their parents."""
    seen: set[Term] = set()
    out: list[Term] = []
    stack: list[tuple[Term, bool]] = [(t, False)]
    while stack:
        u, ready = stack.pop()
        if ready:
            out.append(u)
            continue
        if u in seen:
            continue
        seen.add(u)
        stack.append((u, True))
        stack.extend((c, False) for c in u.args if c not in seen)
    return out


def _positive_const_operand(t: Term, op: Op) -> int | None:
    """The divisor of ``x // c`` or ``x % c`` (``op``) with ``c > 0``; else None."""
    if t.op is op and t.args[1].is_const and t.args[1].value > 0:
        return t.args[1].value
    return None


def _recombined(t: Term, rules: RuleSet) -> Term:
    """``t`` with digit pairs recombined across a merged nested division, when cheaper.

    The rules recombine ``((n // a) % c)*k`` with ``(n // (a*c))*e`` (the rule
    ``divmod-recombine-composed`` and its weighted form) only while the remainder is
    written over ``n // a``. Simplifying rewrites that numerator first (``(d1*128 + d0)
    // 64`` to ``d1*2 + d0 // 64``, then coefficients reduced modulo ``c``), and once
    ``(y // 64) // 3`` is merged into ``y // 192`` the two halves no longer meet. So
    both forms are tried: for a sum holding ``x % c`` and ``n // (a*c)``, where the rules
    simplify ``(n // a) % c`` to that very ``x % c`` (so the two are equal, by proven
    rewrites), the remainder is written back over ``n // a`` and the whole term
    simplified again; the new term is kept only if it has fewer divisions and
    remainders (``count_divmod``), so the loop ends.
    """
    for _ in range(_MAX_PASSES):
        better = _recombine_once(t, rules)
        if better is None:
            better = _digit_pair_once(t, rules)
        if better is None:
            return t
        t = better
    return t


def _digit_pair_once(t: Term, rules: RuleSet) -> Term | None:
    """``t`` with two remainder digits of a sum as one remainder, when that is cheaper.

    ``(x % c)*a + y % a`` is ``(x*a + y % a) % (a*c)`` (the rule ``mod-pair-as-one-mod``
    of ``rules/constraints/``): in a reshape chain the two digits may come from
    numerators simplified apart, and over ``x*a + y % a`` the rules can put them back
    together. One rewrite per sum, kept only if the simplified term has fewer divisions
    and remainders.
    """
    cost = count_divmod(t)
    if cost < 2:
        return None
    pair_rules = _digit_pair_rules()
    tries = _DIGIT_PAIR_TRIES
    for s in _subterms(t):
        if s.op is not Op.ADD:
            continue
        pairs, _ = s.addends()
        if sum(1 for a, _ in pairs if _positive_const_operand(a, Op.FLOORMOD)) < 2:
            continue
        one = rewrite_term(s, pair_rules, max_steps=1)
        if one is s:
            continue
        # Each rewrite that fired costs a simplification of the whole term: capped.
        tries -= 1
        if tries < 0:
            return None
        u = _simplify(replace_subterms(t, {s: one}), rules)
        if count_divmod(u) < cost:
            return u
    return None


@functools.lru_cache(maxsize=1)
def _digit_pair_rules() -> RuleSet:
    """The rules ``mod-pair-as-one-mod*`` of the constraint rules."""
    return RuleSet([r for r in constraint_ruleset() if r.name.startswith("mod-pair-as-one-mod")])


def _recombine_once(t: Term, rules: RuleSet) -> Term | None:
    """One cheaper form of ``t`` by one recombination, or None (see :func:`_recombined`)."""
    cost = count_divmod(t)
    if cost < 2:
        return None
    # Each try simplifies a term: capped, so that a sum of many remainders and
    # divisions (XLA warns at 100 pairs) costs a bounded number of simplifications.
    tries = _RECOMBINE_TRIES
    for s in _subterms(t):
        if s.op is not Op.ADD:
            continue
        pairs, constant = s.addends()
        mods = [(i, a) for i, (a, _) in enumerate(pairs) if _positive_const_operand(a, Op.FLOORMOD)]
        divs = [(i, a) for i, (a, _) in enumerate(pairs) if _positive_const_operand(a, Op.FLOORDIV)]
        for (i, m_atom), (j, d_atom) in itertools.product(mods, divs):
            for at, old, new in _rewritings(m_atom, d_atom, i, j):
                tries -= 1
                if tries < 0:
                    return None
                if new is old or _simplify(new, rules) is not old:
                    continue  # not provably the same term: no rewrite
                new_pairs = [(new if k == at else a, c) for k, (a, c) in enumerate(pairs)]
                u = replace_subterms(t, {s: linear(new_pairs, constant)})
                # The recombination rules alone first: the full set may rewrite the
                # candidate's nested division before the pair is seen.
                u = _simplify(_simplify(u, _recombination_rules(rules)), rules)
                if count_divmod(u) < cost:
                    return u
    return None


@functools.lru_cache(maxsize=4)
def _recombination_rules(rules: RuleSet) -> RuleSet:
    """The ``divmod-recombine*`` rules of ``rules`` (x % c and x // c back into x)."""
    return RuleSet([r for r in rules if r.name.startswith("divmod-recombine")])


def _rewritings(m_atom: Term, d_atom: Term, i: int, j: int) -> list[tuple[int, Term, Term]]:
    """Ways to write a remainder ``x % c`` and a division ``n // d`` over one numerator.

    ``(position, atom, candidate)``: the remainder as ``(n // (d/c)) % c`` when ``c``
    divides ``d``, and the division as ``x // c`` (``((n // 192) % 1024)`` beside
    ``d0 // 1536`` from ``(d0*128 + d1) // 196608``). A candidate replaces its atom only
    where the rules simplify it to that very atom.
    """
    c = m_atom.args[1].value
    d = d_atom.args[1].value
    out = []
    if d % c == 0:
        n = d_atom.args[0]
        over = div(n, const(d // c), Semantics.FLOOR) if d > c else n
        out.append((i, m_atom, mod(over, const(c), Semantics.FLOOR)))
    out.append((j, d_atom, div(m_atom.args[0], const(c), Semantics.FLOOR)))
    return out


def _remove_unused(m: IndexingMap, *, dims: bool = False) -> IndexingMap:
    """Drop range and runtime variables the results do not use (XLA's RemoveUnusedSymbols).

    With ``dims``, unused dimensions go too (XLA's RemoveUnusedVars); the map then has
    fewer dimensions, the kept ones renumbered in order.

    A constraint that mentions a used variable keeps every variable it mentions. The
    constraints left mention unused variables only; they go with their variables when
    together (per group of constraints sharing variables) they have a solution in the
    box: found by enumerating a small box, or a witness among a few candidate points.
    (XLA drops them unchecked, which can make an empty map non-empty.) A group shown
    to have no solution makes the map known empty; a group undecided keeps its
    variables and constraints.
    """
    used: set[str] = set().union(*(free_names(t) for t in m.results))
    if not dims:
        used |= {v.name for v in m.dims}
    cons = [(e, lo, hi, free_names(e)) for e, lo, hi in m.constraints]
    grew = True
    while grew:
        grew = False
        for _, _, _, names in cons:
            if names & used and not names <= used:
                used |= names
                grew = True
    box = m.bounds()
    for group, names in _groups([c for c in cons if not c[3] <= used]):
        verdict = _jointly_satisfiable(group, sorted(names), box)
        if verdict is False:
            return IndexingMap.empty(m.n_dims, m.n_results)
        if verdict is None:
            used |= names
    kept_dims = [v for v in m.dims if v.name in used]
    kept_range = [v for v in m.range_vars if v.name in used]
    kept_rt = [v for v in m.rt_vars if v.name in used]
    if len(kept_dims) + len(kept_range) + len(kept_rt) == len(list(m.variables())):
        return m
    kept = [(e, lo, hi) for e, lo, hi, names in cons if names <= used]
    new_dims = _renumber(kept_dims, "d", {v.name for v in kept_range + kept_rt})
    dim_names = {v.name for v in new_dims}
    range_vars = _renumber(kept_range, "s", dim_names | {v.name for v in kept_rt})
    rt_vars = _renumber(kept_rt, "rt", dim_names | {v.name for v in range_vars})
    # A simultaneous renaming: s2 -> s1 and s1 -> s0 do not chain.
    renames = {
        old.name: new.term()
        for old, new in zip(
            kept_dims + kept_range + kept_rt, new_dims + range_vars + rt_vars, strict=True
        )
        if old.name != new.name
    }
    return IndexingMap(
        tuple(new_dims),
        tuple(range_vars),
        tuple(rt_vars),
        tuple(substitute(t, renames) for t in m.results),
        tuple((substitute(e, renames), lo, hi) for e, lo, hi in kept),
    ).normalized()


_Group = list[tuple[Term, int, int]]


def _groups(
    cons: list[tuple[Term, int, int, set[str]]],
) -> list[tuple[_Group, set[str]]]:
    """The constraints in groups that share no variable, with each group's variables."""
    groups: list[tuple[_Group, set[str]]] = []
    for e, lo, hi, names in cons:
        joined: _Group = [(e, lo, hi)]
        joined_names = set(names)
        rest = []
        for group, group_names in groups:
            if group_names & joined_names:
                joined += group
                joined_names |= group_names
            else:
                rest.append((group, group_names))
        groups = [*rest, (joined, joined_names)]
    return groups


def _jointly_satisfiable(
    cons: _Group, names: list[str], box: dict[str, tuple[int, int]]
) -> bool | None:
    """Whether a point of the box over ``names`` satisfies every constraint (None: unknown).

    A box of at most ``_ENUMERATED`` checks is enumerated, which decides it; a larger
    one is searched for a witness among a few values per variable (its ends, their
    neighbours, its middle and 0), within about as much work, which can only show it
    satisfiable.
    """
    size = len(cons)
    for n in names:
        size *= box[n][1] - box[n][0] + 1
    candidates: list[Sequence[int]]
    if size <= _ENUMERATED:
        candidates = [range(box[n][0], box[n][1] + 1) for n in names]
        exhaustive, tries = True, size
    else:
        candidates = [_probe_values(*box[n]) for n in names]
        exhaustive, tries = False, max(1, _ENUMERATED // (len(cons) + len(names)))
    for p in itertools.islice(itertools.product(*candidates), tries):
        env = dict(zip(names, p, strict=True))
        if all(lo <= evaluate(e, env) <= hi for e, lo, hi in cons):
            return True
    return False if exhaustive else None


def _probe_values(lo: int, hi: int) -> list[int]:
    """A few values of ``[lo, hi]`` where a witness of a constraint is often found."""
    mid = lo + (hi - lo) // 2
    picks = {lo, lo + 1, mid, hi - 1, hi, min(max(0, lo), hi)}
    return sorted(x for x in picks if lo <= x <= hi)


def _renumber(vs: list[Variable], prefix: str, others: set[str]) -> list[Variable]:
    """Default-named variables (``s3``) renumbered from 0; custom names kept.

    Renumbered only when every name is ``prefix`` and a decimal number and no new name
    is one of ``others`` (a dimension may be called ``s0``): never to a taken name.
    """
    default = re.compile(rf"{prefix}(?:0|[1-9][0-9]*)")
    if not all(default.fullmatch(v.name) for v in vs):
        return vs
    renamed = [Variable(f"{prefix}{i}", v.lo, v.hi, v.source) for i, v in enumerate(vs)]
    if any(v.name in others for v in renamed):
        return vs
    return renamed


def simplify_map(
    m: IndexingMap,
    *,
    remove_unused: bool = True,
    remove_unused_dims: bool = False,
    rescale: bool = False,
    rules: RuleSet | None = None,
) -> IndexingMap:
    """Simplify ``m``: the same function on the same domain, written more simply.

    Constraints are simplified, moved into bounds, merged, dropped when the box implies
    them; the domain is shown empty when a constraint cannot hold (the map is then
    known empty); variables with a one-point interval become constants; results are
    simplified over the box and the constraints; with ``remove_unused``, range and
    runtime variables no result uses are removed (XLA's ``RemoveUnusedSymbols``).
    Idempotent: simplifying the result again changes nothing.

    Two options change what the variables mean, as XLA's separate entry points do; both
    keep, for every point of the dimensions, the set of results its symbols reach:

    * ``remove_unused_dims``: dimensions no result uses go too, with the constraints
      on them alone (XLA's ``RemoveUnusedVars``): the map has fewer dimensions. Off by
      default, as in XLA's ``Simplify``: a dimension is an index of the tensor.
    * ``rescale``: :func:`rescale_symbols` first (XLA's ``RescaleSymbols``).
    """
    if rescale:
        m = rescale_symbols(m, rules=rules)
    out = _simplified(m, remove_unused=remove_unused, rules=rules)
    if remove_unused_dims and not out.known_empty:
        out = _remove_unused(out, dims=True)
    return out


def rescale_symbols(m: IndexingMap, *, rules: RuleSet | None = None) -> IndexingMap:
    """``m`` with each range variable confined to a residue class counting its members.

    After simplifying (which merges the residue constraints on a variable into one and
    snaps its bounds into the class), a range variable ``s in [lo, hi]`` with the
    constraint ``s mod c in [r, r]`` (``c > 1``) is replaced by ``c*s + r`` everywhere,
    ``s`` now in ``[(lo - r) / c, (hi - r) / c]``, and the constraint dropped (XLA's
    ``RescaleSymbols``). The substitution is a bijection from the new interval onto the
    values of the old one in the class, so for every point of the dimensions the map
    reaches the same results, though the variable no longer takes the same values: the
    map is not the same function of its symbols. Runtime variables (values the program
    supplies) and dimensions are never rescaled; nor is a residue on an expression.
    The result is simplified (unused symbols kept: they are still enumerated).
    """
    m = _simplified(m, remove_unused=False, rules=rules)
    if m.known_empty:
        return m
    range_names = {v.name for v in m.range_vars}
    box = m.bounds()
    scaled: dict[str, Term] = {}
    dropped: set[Term] = set()
    for x, c, r in _residues(m):
        if x.op is not Op.VAR or x.arg[0] not in range_names or c < 2 or not 0 <= r < c:
            continue
        name = x.arg[0]
        if name in scaled:
            continue  # a second residue on one variable: not merged, left as it is
        lo, hi = box[name]
        new_lo, new_hi = -((r - lo) // c), (hi - r) // c  # ceil and floor
        if new_lo > new_hi:
            return IndexingMap.empty(m.n_dims, m.n_results)
        box[name] = (new_lo, new_hi)
        scaled[name] = var(name, new_lo, new_hi) * c + r
        dropped.add(mod(x, const(c), Semantics.FLOOR))
    if not scaled:
        return m
    rescaled = IndexingMap(
        m.dims,
        tuple(Variable(v.name, *box[v.name]) for v in m.range_vars),
        m.rt_vars,
        tuple(substitute(t, scaled) for t in m.results),
        tuple((substitute(e, scaled), lo, hi) for e, lo, hi in m.constraints if e not in dropped),
    )
    return _simplified(rescaled.normalized(), remove_unused=False, rules=rules)


def _simplified(m: IndexingMap, *, remove_unused: bool, rules: RuleSet | None) -> IndexingMap:
    # ``is None``, not ``or``: an empty rule set means no rule (see RuleSet.__bool__).
    rules = default_ruleset() if rules is None else rules
    crules = constraint_ruleset_for(rules)
    m = m.normalized()
    for _ in range(_MAX_PASSES):
        if m.known_empty:
            return m
        before = m
        m = _constraint_pass(m, rules, crules)
        if not m.known_empty:
            m = _residue_pass(m, crules)
        if not m.known_empty:
            m = _point_variables(m)
        if m == before:
            break
    if m.known_empty:
        return m
    m = _simplify_results(m, rules)
    if remove_unused:
        m = _remove_unused(m)
    return m.normalized()


def maps_equal(
    a: IndexingMap, b: IndexingMap, *, timeout: float = 10.0, solver: MapSolver | None = None
) -> bool:
    """Whether ``a`` and ``b`` are the same function on the same domain.

    Both are first simplified, unused range and runtime variables removed; then their
    variables correspond by position (dims, range and runtime variables). Decided by
    simplification when the simplified maps print equal; failing that by ``solver``
    (:func:`quorem.verify.maps.maps_equal` passes Z3's) or by enumerating a domain of at
    most 2**20 points. Raises :class:`~quorem.indexing.map.IndexingMapError` when undecided.
    """
    if (a.n_dims, a.n_results) != (b.n_dims, b.n_results):
        return False
    sa, sb = simplify_map(a), simplify_map(b)
    if sa.known_empty or sb.known_empty:
        empty: bool | None = True
        if not (sa.known_empty and sb.known_empty):
            empty = decide_empty(sb if sa.known_empty else sa, timeout=timeout, solver=solver)
        if empty is None:
            raise IndexingMapError("could not decide whether a map's domain is empty")
        return empty
    if (len(sa.range_vars), len(sa.rt_vars)) != (len(sb.range_vars), len(sb.rt_vars)):
        return False
    b_named = _rename_like(sb, sa)
    if print_map(sa) == print_map(b_named):
        return True
    verdict = decide_equal(sa, b_named, timeout=timeout, solver=solver)
    if verdict is None:
        raise IndexingMapError(
            "could not decide whether the maps are equal"
            " (quorem.verify.maps.maps_equal asks Z3; it needs z3-solver)"
        )
    return verdict


def _rename_like(m: IndexingMap, like: IndexingMap) -> IndexingMap:
    """``m`` with its variables renamed to ``like``'s, position by position."""
    pairs = list(zip(m.variables(), like.variables(), strict=True))
    renames = {v.name: var(w.name, v.lo, v.hi) for v, w in pairs if v.name != w.name}

    def rn(vs: tuple[Variable, ...], ws: tuple[Variable, ...]) -> tuple[Variable, ...]:
        return tuple(Variable(w.name, v.lo, v.hi, v.source) for v, w in zip(vs, ws, strict=True))

    return IndexingMap(
        rn(m.dims, like.dims),
        rn(m.range_vars, like.range_vars),
        rn(m.rt_vars, like.rt_vars),
        tuple(substitute(t, renames) for t in m.results),
        tuple((substitute(e, renames), lo, hi) for e, lo, hi in m.constraints),
        m.known_empty,
    ).normalized()
