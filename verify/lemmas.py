"""Lemma instances for native division: small integer facts, each proven once by Z3 and cvc5.

A query stated with SMT-LIB ``div``/``mod`` (:func:`quorem.verify.division.native_division`)
is non-linear wherever a divisor is symbolic; cvc5 then times out where one fact about
division would close the proof. Each lemma here is a universally quantified statement
about Euclidean ``div``/``mod`` (:data:`LEMMAS`: its variables and its body), proven
valid by both solvers in ``tests/test_lemmas.py``; a query gets *instances* of it, the
variables replaced by terms of the query, as premises. A valid fact added as a premise
changes no answer, and the text with the instances is what every solver reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import z3

__all__ = [
    "LEMMAS",
    "STEPS",
    "divisor_monotone",
    "instances",
    "monotone",
    "multiplier",
    "negated_divisor",
    "nested_division",
    "nested_mod",
    "path_instances",
    "quotient_bound",
    "scaled_exact",
    "scaled_factor",
    "shift_multiple",
    "small_numerator",
    "small_offset",
]


def nested_division(n: Any, a: Any, c: Any, b: Any) -> Any:
    """``a > 0, c > 0, b == a*c  ->  div(div(n, a), c) == div(n, b)``.

    Division by a product, one factor at a time. (It holds for ``c < 0`` too, but cvc5
    does not prove that case in 20 s; the inner divisor must be positive:
    ``div(div(-3, -1), 2) == 1`` but ``div(-3, -2) == 2``.) The split encodings make
    divisors positive, so instances are stated for them.
    """
    return z3.Implies(z3.And(a > 0, c > 0, b == a * c), (n / a) / c == n / b)


def shift_multiple(n: Any, m: Any, d: Any, k: Any) -> Any:
    """``d > 0, n == m + d*k  ->  div(n, d) == div(m, d) + k, mod(n, d) == mod(m, d)``.

    Numerators differing by a multiple of the divisor have quotients differing by the
    multiplier and equal remainders (``m = 0``: an exact quotient). Valid for ``d < 0``
    too; stated for the positive divisors of the split encodings.
    """
    return z3.Implies(
        z3.And(d > 0, n == m + d * k),
        z3.And(n / d == m / d + k, n % d == m % d),
    )


def monotone(n1: Any, n2: Any, d: Any) -> Any:
    """``d > 0, n1 <= n2  ->  div(n1, d) <= div(n2, d)``: division is monotone in the numerator.

    With the bound of a value's range (``vmin(s) <= s``) it carries a guard about the
    bounds' quotients (``vmin(s) // D == vmax(s) // D``) to the value's own quotient: the
    bucket argument of the congruence rules.
    """
    return z3.Implies(z3.And(d > 0, n1 <= n2), n1 / d <= n2 / d)


def divisor_monotone(n: Any, d1: Any, d2: Any) -> Any:
    """``0 < d1 <= d2  ->  div(n, d2) <= div(n, d1)`` for ``n >= 0``, the reverse for ``n < 0``.

    A larger positive divisor moves the quotient toward 0 (from below for a negative
    numerator, whose Euclidean quotient rounds down): with ``monotone`` it bounds a
    quotient between those of a range's corners, the transfer function of division.
    """
    return z3.Implies(
        z3.And(d1 > 0, d1 <= d2),
        z3.And(z3.Implies(n >= 0, n / d2 <= n / d1), z3.Implies(n < 0, n / d1 <= n / d2)),
    )


def negated_divisor(n: Any, d: Any) -> Any:
    """``d < 0  ->  div(n, -d) == -div(n, d), mod(n, -d) == mod(n, d)``.

    Euclidean division depends on the divisor's magnitude only, up to the quotient's
    sign: a quotient by a negative name is one by a positive term. (It holds for
    ``d > 0`` too, which cvc5 does not prove in 20 s; a positive divisor needs no
    restating.)
    """
    return z3.Implies(d < 0, z3.And(n / (-d) == -(n / d), n % (-d) == n % d))


def nested_mod(x: Any, a: Any, b: Any, k: Any) -> Any:
    """``a > 0, k != 0, b == a*k  ->  mod(mod(x, b), a) == mod(x, a)``.

    A remainder by a multiple keeps the remainder by the factor (``x - mod(x, b)`` is a
    multiple of ``b``, so of ``a``): the residue classes of ``merge-residues``.
    """
    return z3.Implies(z3.And(a > 0, k != 0, b == a * k), (x % b) % a == x % a)


def quotient_bound(x: Any, m: Any, d: Any) -> Any:
    """``d > 0  ->  (x <= div(m, d)  ==  d*x <= m)``: floor division's defining bound.

    A comparison with a quotient, restated without the division: with ``d*x`` read
    through a factorization (``scaled-factor``) it is linear in the query's products.
    """
    return z3.Implies(d > 0, (x <= m / d) == (d * x <= m))


def small_numerator(n: Any, d: Any) -> Any:
    """``d > 0, 0 <= n < d  ->  div(n, d) == 0, mod(n, d) == n``."""
    return z3.Implies(z3.And(d > 0, n >= 0, n < d), z3.And(n / d == 0, n % d == n))


def scaled_exact(x: Any, d: Any, f: Any) -> Any:
    """``d > 0, mod(x, d) == 0  ->  x*f == d*(div(x, d)*f)``: an exact quotient, scaled.

    What a shift by a multiple needs when the multiple is ``x*f`` for a coefficient
    ``x`` that ``d`` divides (``divides(D, K)`` in a guard): the solver then reads the
    product as ``d`` times a term, linearly.
    """
    return z3.Implies(z3.And(d > 0, x % d == 0), x * f == d * ((x / d) * f))


def scaled_factor(x: Any, g: Any, k: Any, f: Any) -> Any:
    """``x == g*k  ->  x*f == g*(k*f)``: a factorization, multiplied out."""
    return z3.Implies(x == g * k, x * f == g * (k * f))


def small_offset(n1: Any, n2: Any, c: Any, g: Any, e: Any, m: Any, d: Any) -> Any:  # noqa: PLR0917
    """``g, e > 0, 0 <= c < g, d == g*e, n2 == g*m, n1 == n2 + c -> div(n1, d) == div(n2, d)``.

    An offset smaller than a common factor ``g`` of the numerator and the divisor
    never reaches the next multiple of the divisor.
    """
    return z3.Implies(
        z3.And(g > 0, e > 0, c >= 0, c < g, d == g * e, n2 == g * m, n1 == n2 + c),
        n1 / d == n2 / d,
    )


def small_offset_steps(n1: Any, n2: Any, c: Any, g: Any, e: Any, m: Any, d: Any) -> list[Any]:  # noqa: PLR0917
    """Under ``small-offset``'s premises both quotients are ``div(m, e)``.

    cvc5 does not prove the lemma in 20 s at once, but proves each step.
    """
    del c, g
    return [n2 / d == m / e, n1 / d == m / e]


def nested_mod_steps(x: Any, a: Any, b: Any, k: Any) -> list[Any]:
    """``x`` is its remainder by ``b`` plus ``a*(k*div(x, b))``: a shift by a multiple."""
    return [
        x == x % b + a * (k * (x / b)),
        ("shift-multiple", (x, x % b, a, k * (x / b))),
    ]


# Lemmas proven through intermediate claims: each claim follows from the lemma's
# premises, and the lemma's conclusion from the premises and the claims. A claim
# ``(name, args)`` is an instance of another lemma (valid: that lemma is proven on its
# own).
STEPS: Final[dict[str, Callable[..., list[Any]]]] = {
    "small-offset": small_offset_steps,
    "nested-mod": nested_mod_steps,
}


# name -> (number of variables, body): each proven valid by both solvers in a test.
LEMMAS: Final[dict[str, tuple[int, Callable[..., Any]]]] = {
    "nested-division": (4, nested_division),
    "shift-multiple": (4, shift_multiple),
    "monotone": (3, monotone),
    "divisor-monotone": (3, divisor_monotone),
    "negated-divisor": (2, negated_divisor),
    "nested-mod": (4, nested_mod),
    "small-numerator": (2, small_numerator),
    "quotient-bound": (3, quotient_bound),
    "scaled-exact": (3, scaled_exact),
    "scaled-factor": (4, scaled_factor),
    "small-offset": (7, small_offset),
}


def _divisions(formulas: Sequence[Any]) -> Iterator[Any]:
    """Every ``div`` and ``mod`` application in ``formulas`` (each once)."""
    seen: set[int] = set()
    todo = list(formulas)
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_app_of(e, z3.Z3_OP_IDIV) or z3.is_app_of(e, z3.Z3_OP_MOD):
            yield e
        todo.extend(e.children())


def instances(formulas: Sequence[Any], bounds: bool = True) -> list[Any]:
    """Instances of :data:`LEMMAS` over the divisions in ``formulas``.

    * ``nested-division``: for each ``div(div(n, a), c)`` (or ``mod`` outside) and each
      other ``div(n, b)`` or ``mod(n, b)`` of the same numerator ``n``;
    * ``shift-multiple``: for each two divisions by one divisor ``d`` (and each division
      and 0) whose numerators differ by ``d*k`` for a term ``k`` (:func:`multiplier`);
    * ``scaled-exact``: for each ``x*f`` that :func:`multiplier` read as ``d*div(x, d)*f``
      because the query divides the coefficient ``x`` by ``d``;
    * ``small-offset`` (and ``scaled-factor`` for its products): for two divisions by
      ``d`` whose numerators differ by one name or number ``c``, where the query factors
      ``d == g*e`` and each coefficient of the smaller numerator ``x == g*k`` (a gcd);
    * ``monotone`` (with ``bounds``): for each asserted bound ``lo <= hi`` of a numerator
      the query divides, relating the quotients of both sides (:func:`_bound_instances`);
    * ``quotient-bound`` (and ``scaled-factor``): for each comparison of a term with a
      quotient, which it restates without the division (:func:`_quotient_bound_instances`);
    * ``shift-multiple`` from 0: for a numerator an equation of the query makes a multiple
      of the divisor (:func:`_equation_instances`).
    """
    divs = list(_divisions(formulas))
    # The bound instances add the quotients they introduce to divs.
    monotone_facts = _bound_instances(formulas, divs) if bounds else []
    by_numerator, by_divisor = _grouped(divs)
    out: list[Any] = list(monotone_facts)
    seen: set[int] = {f.get_id() for f in out}

    def add(fact: Any) -> None:
        if fact.get_id() not in seen:
            seen.add(fact.get_id())
            out.append(fact)

    for e in divs:
        inner, c = e.children()
        if not z3.is_app_of(inner, z3.Z3_OP_IDIV):
            continue
        n, a = inner.children()
        for other in by_numerator.get(n.get_id(), []):
            b = other.arg(1)
            if not b.eq(a):
                add(nested_division(n, a, c, b))
    for fact in _nested_mod_instances(formulas, by_numerator):
        add(fact)
    for fact in _quotient_bound_instances(formulas, by_divisor):
        add(fact)
    for fact in _equation_instances(formulas, by_divisor):
        add(fact)
    zero = z3.IntVal(0)
    for group in by_divisor.values():
        d = group[0].arg(1)
        numerators = [x.arg(0) for x in group]
        # Coefficients the query divides by d: their products may be multiples of d.
        exact: dict[int, tuple[Any, int]] = {}
        for x in numerators:
            if _is_atom(x):
                exact[x.get_id()] = (x, 1)
            elif z3.is_app_of(x, z3.Z3_OP_UMINUS) and _is_atom(x.arg(0)):
                exact[x.arg(0).get_id()] = (x, -1)  # -K, as a negative divisor writes it
        for i, x in enumerate(numerators):
            for y in [*numerators[i + 1 :], zero]:
                if _coefficient(x) and (y is zero or _coefficient(y)):
                    # Two coefficients (K % D, C // D) differ by a multiple only when
                    # both are: instances about them only burden the solver.
                    continue
                found = multiplier(x, y, d, exact)
                if found is not None:
                    k, scaled = found
                    for coefficient, f in scaled:
                        add(scaled_exact(coefficient, d, f))
                    add(shift_multiple(x, y, d, k))
    factors = _factorizations(formulas)
    for group in by_divisor.values():
        d = group[0].arg(1)
        if d.get_id() not in factors:
            continue
        g, e = factors[d.get_id()]
        numerators = [x.arg(0) for x in group]
        for n1 in numerators:
            for n2 in numerators:
                if n1.eq(n2):
                    continue
                common = _common_factor(n1, n2, g, factors)
                if common is not None:
                    c, m, products = common
                    for x, k, f in products:
                        add(scaled_factor(x, g, k, f))
                    add(small_offset(n1, n2, c, g, e, m, d))
    return out


# At most this many quotients are related pairwise (4 instances per ordered pair).
MAX_PATH_QUOTIENTS: Final = 10


def path_instances(formulas: Sequence[Any]) -> list[Any]:
    """:func:`instances`, and instances relating each two quotients of ``formulas``.

    For each quotient ``div(n, d)`` by a name or a sum, ``negated-divisor`` (which adds
    ``div(n, -d)``); then for each two quotients ``div(n1, d1)``, ``div(n2, d2)`` (the
    first :data:`MAX_PATH_QUOTIENTS` and their negated-divisor forms): ``monotone`` of
    the numerators under each divisor and ``divisor-monotone`` of the divisors for each
    numerator.

    For a path of an interval transfer function (a quotient bounded by the quotients of
    its range's corners): the chain through ``div(n2, d1)``, which the query does not
    state, is what cvc5 lacks. Premises that do not hold make an instance useless,
    never wrong.
    """
    out = instances(formulas)
    seen = {f.get_id() for f in out}
    quotients = [e for e in _divisions(formulas) if z3.is_app_of(e, z3.Z3_OP_IDIV)]
    quotients = quotients[:MAX_PATH_QUOTIENTS]
    for e in list(quotients):
        n, d = e.children()
        if not (z3.is_app_of(d, z3.Z3_OP_UMINUS) or z3.is_int_value(d)):
            # The quotient by -d, positive where d is negative, is what the others relate.
            out.append(negated_divisor(n, d))
            quotients.append(n / (-d))
    for a, b in itertools.permutations(quotients, 2):
        (n1, d1), (n2, d2) = a.children(), b.children()
        for fact in (
            monotone(n1, n2, d1),
            monotone(n1, n2, d2),
            divisor_monotone(n1, d1, d2),
            divisor_monotone(n2, d1, d2),
        ):
            if fact.get_id() not in seen:
                seen.add(fact.get_id())
                out.append(fact)
    return out


def _nested_mod_instances(
    formulas: Sequence[Any], by_numerator: dict[int, list[Any]]
) -> Iterator[Any]:
    """``nested-mod`` for ``mod(x, a)`` and ``mod(x, b)`` where the query states ``b == a*k``.

    With ``small-numerator`` on the new ``mod(mod(x, b), a)``: a remainder by ``b``
    known below ``a`` is its own remainder by ``a``.
    """
    products = _products(formulas)
    for group in by_numerator.values():
        mods = [e for e in group if z3.is_app_of(e, z3.Z3_OP_MOD)]
        for outer in mods:
            for inner in mods:
                x, b = inner.children()
                a = outer.arg(1)
                for k in products.get(b.get_id(), {}).get(a.get_id(), []):
                    yield nested_mod(x, a, b, k)
                    yield small_numerator(inner, a)


def _quotient_bound_instances(
    formulas: Sequence[Any], by_divisor: dict[int, list[Any]]
) -> Iterator[Any]:
    """``quotient-bound`` for each comparison of a term with a quotient ``div(m, d)``.

    Stated for every quotient by ``d`` (a guard may equate two of them, one of which the
    comparison uses), with ``x`` the threshold the comparison reads as ``x <= div(m, d)``
    (``a < q`` is ``a + 1 <= q``). And ``scaled-factor`` for each product ``x*f`` of a
    factored coefficient ``x == g*k``, so that ``d*x`` meets the query's products.
    """
    thresholds: list[tuple[Any, Any]] = []
    for f in _subterms(formulas):
        if not (z3.is_le(f) or z3.is_lt(f) or z3.is_ge(f) or z3.is_gt(f)):
            continue
        lo, hi = f.children() if z3.is_le(f) or z3.is_lt(f) else reversed(f.children())
        strict = z3.is_lt(f) or z3.is_gt(f)
        # The comparison is 0 <= s*q + r (0 < s*q + r when strict), for each quotient
        # q that is an addend of either side.
        readings = [(q, sign, _minus(rest, lo)) for q, sign, rest in _quotient_addends(hi)]
        readings += [(q, -sign, _minus(hi, rest)) for q, sign, rest in _quotient_addends(lo)]
        for q, sign, r in readings:
            # 0 <= q + r is -r <= q; 0 <= -q + r is not r + 1 <= q (strict: one less).
            x = (-r + 1 if strict else -r) if sign > 0 else (r if strict else r + 1)
            thresholds.append((x, q.arg(1)))
    for x, d in thresholds:
        for e in by_divisor.get(d.get_id(), []):
            if z3.is_app_of(e, z3.Z3_OP_IDIV):
                yield quotient_bound(x, e.arg(0), d)
    if thresholds:
        factors = _factorizations(formulas)
        for p in _subterms(formulas):
            if z3.is_mul(p) and p.num_args() == 2:
                x, f = p.children()
                if x.get_id() in factors:
                    g, k = factors[x.get_id()]
                    yield scaled_factor(x, g, k, f)


def _equation_instances(formulas: Sequence[Any], by_divisor: dict[int, list[Any]]) -> Iterator[Any]:
    """``shift-multiple`` from 0 for a numerator that an equation makes a multiple.

    Where the query states (anywhere) an equation ``p == 0`` (read from ``a == b`` or
    ``a != b``) such that ``n + p`` or ``n - p``, for a numerator ``n`` it divides by
    ``d``, is a multiple of ``d`` read through ``d`` and the stated products
    ``x == d*k``: ``n == d*k`` for that ``k`` wherever the equation holds,
    so ``div(n, d) == k`` and ``mod(n, d) == 0`` (an equation that forces a remainder the
    guard rules out). The instance states ``n == 0 + d*k`` as its premise.
    """
    equations = [
        f
        for f in _subterms(formulas)
        if (z3.is_eq(f) or (z3.is_distinct(f) and f.num_args() == 2))
        and f.arg(0).sort() == z3.IntSort()
    ]
    if not equations:
        return
    facts = _stated_products(formulas)
    zero = z3.IntVal(0)
    for group in by_divisor.values():
        d = group[0].arg(1)
        if not _is_atom(d):
            continue
        numerators = [e.arg(0) for e in group]
        for f in equations:
            atoms: dict[int, Any] = {}
            p = _poly(f.arg(0) - f.arg(1), atoms)
            if p is None or _MOD_EXPANDED in atoms:
                continue
            for n in numerators:
                pn = _poly(n, atoms)
                if pn is None or _MOD_EXPANDED in atoms:
                    continue
                # p == 0, so n == n + c*p; the sign that cancels n's own terms.
                for c in (-1, 1):
                    shifted = dict(pn)
                    for m, v in p.items():
                        shifted[m] = shifted.get(m, 0) + c * v
                    rest = {m: v for m, v in shifted.items() if v}
                    k = _divided_out(rest, atoms, d, facts)
                    if k is not None:
                        yield shift_multiple(n, zero, d, k)
                        break


def _stated_products(formulas: Sequence[Any]) -> dict[int, list[tuple[Any, Any]]]:
    """Every ``x == a*b`` stated anywhere in ``formulas``: id of ``x`` -> ``[(a, b), (b, a)]``."""
    out: dict[int, list[tuple[Any, Any]]] = {}
    for f in _subterms(formulas):
        if not (z3.is_eq(f) and f.arg(0).sort() == z3.IntSort()):
            continue
        for x, p in (f.children(), reversed(f.children())):
            if _is_atom(x) and z3.is_mul(p) and p.num_args() == 2:
                a, b = p.children()
                out.setdefault(x.get_id(), []).extend([(a, b), (b, a)])
    return out


def _divided_out(
    p: Poly, atoms: dict[int, Any], d: Any, facts: dict[int, list[tuple[Any, Any]]]
) -> Any | None:
    """A term ``k`` with ``p == d*k``; None if some monomial is not read as a multiple.

    Each monomial is read through ``d`` or a stated product ``x == d*k_x`` of one of
    its atoms.
    """
    terms = []
    for mono, coef in p.items():
        rest = list(mono)
        if d.get_id() in rest:
            rest.remove(d.get_id())
            factors = [atoms[a] for a in rest]
        else:
            found = next(
                ((a, k) for a in rest for g, k in facts.get(a, []) if g.eq(d)),
                None,
            )
            if found is None:
                return None
            a, k = found
            rest.remove(a)
            factors = [k, *[atoms[b] for b in rest]]
        term = z3.IntVal(coef)
        terms.append(term * z3.Product(*factors) if factors else term)
    if not terms:
        return None
    return z3.Sum(*terms) if len(terms) > 1 else terms[0]


def _quotient_addends(e: Any) -> Iterator[tuple[Any, int, Any]]:
    """``(q, s, rest)`` with ``e == s*q + rest``, for each quotient addend ``q`` of ``e``.

    ``s`` is 1 or -1 (``-q``); ``rest`` is None where ``e`` is ``s*q`` alone.
    """
    addends = e.children() if z3.is_add(e) else [e]
    for i, addend in enumerate(addends):
        a, sign = addend, 1
        if z3.is_app_of(addend, z3.Z3_OP_UMINUS):
            a, sign = addend.arg(0), -1
        elif z3.is_mul(addend) and addend.num_args() == 2 and _is_minus_one(addend.arg(0)):
            a, sign = addend.arg(1), -1
        if z3.is_app_of(a, z3.Z3_OP_IDIV):
            others = addends[:i] + addends[i + 1 :]
            rest = None if not others else others[0] if len(others) == 1 else z3.Sum(*others)
            yield a, sign, rest


def _is_minus_one(e: Any) -> bool:
    return bool(z3.is_int_value(e) and e.as_long() == -1)


def _minus(a: Any, b: Any) -> Any:
    """``a - b``, where None is 0."""
    if b is None:
        return a if a is not None else z3.IntVal(0)
    return -b if a is None else a - b


def _subterms(formulas: Sequence[Any]) -> Iterator[Any]:
    """Every subterm of ``formulas``, each once."""
    seen: set[int] = set()
    todo = list(formulas)
    while todo:
        e = todo.pop()
        if e.get_id() not in seen:
            seen.add(e.get_id())
            yield e
            todo.extend(e.children())


def _products(formulas: Sequence[Any]) -> dict[int, dict[int, list[Any]]]:
    """The stated products ``b == a*k``: id of ``b`` -> id of ``a`` -> the ``k``s.

    Either side, either factor order, in ``formulas`` and their conjunctions.
    """
    out: dict[int, dict[int, list[Any]]] = {}
    for f in _conjuncts(formulas):
        if not z3.is_eq(f):
            continue
        for b, p in (f.children(), reversed(f.children())):
            if z3.is_mul(p) and p.num_args() == 2 and not z3.is_mul(b):
                u, v = p.children()
                out.setdefault(b.get_id(), {}).setdefault(u.get_id(), []).append(v)
                out.setdefault(b.get_id(), {}).setdefault(v.get_id(), []).append(u)
    return out


def _grouped(divs: Sequence[Any]) -> tuple[dict[int, list[Any]], dict[int, list[Any]]]:
    """The divisions by numerator and by divisor (ids), one per divisor or numerator."""
    by_numerator: dict[int, list[Any]] = {}
    by_divisor: dict[int, list[Any]] = {}
    for e in divs:
        n, d = e.children()
        if not any(x.arg(1).eq(d) for x in by_numerator.get(n.get_id(), [])):
            by_numerator.setdefault(n.get_id(), []).append(e)
        if not any(x.arg(0).eq(n) for x in by_divisor.get(d.get_id(), [])):
            by_divisor.setdefault(d.get_id(), []).append(e)
    return by_numerator, by_divisor


def _conjuncts(formulas: Sequence[Any]) -> Iterator[Any]:
    """The asserted facts of ``formulas``: each one, conjunctions opened."""
    todo = list(formulas)
    while todo:
        f = todo.pop()
        if z3.is_and(f):
            todo.extend(f.children())
        else:
            yield f


def _comparisons(formulas: Sequence[Any]) -> Iterator[tuple[Any, Any]]:
    """``(lo, hi)`` per asserted ``lo <= hi`` (or ``<``, ``>=``, ``>``), in conjunctions too."""
    for f in _conjuncts(formulas):
        if z3.is_le(f) or z3.is_lt(f):
            yield f.arg(0), f.arg(1)
        elif z3.is_ge(f) or z3.is_gt(f):
            yield f.arg(1), f.arg(0)


def _bound_instances(formulas: Sequence[Any], divs: list[Any]) -> list[Any]:
    """``monotone`` for each asserted bound ``lo <= hi`` of a numerator the query divides.

    ``div(lo, d)`` in the query gives ``div(lo, d) <= div(hi, d)`` (``div(-hi, d) <=
    div(-lo, d)`` for a numerator ``-lo``, as a negative divisor's branch writes it), and
    the same for ``hi``: the other side's quotient may be new to the query, which is the
    point (the quotient of the value a range bounds). Such quotients are appended to
    ``divs``, for the other lemmas to relate.
    """
    out: list[Any] = []
    seen: set[int] = set()
    for lo, hi in _comparisons(formulas):
        for e in divs:
            if not z3.is_app_of(e, z3.Z3_OP_IDIV):
                continue
            n, d = e.children()
            negated = z3.is_app_of(n, z3.Z3_OP_UMINUS)
            inner = n.arg(0) if negated else n
            if not (inner.eq(lo) or inner.eq(hi)):
                continue
            fact = monotone(-hi, -lo, d) if negated else monotone(lo, hi, d)
            if fact.get_id() not in seen:
                seen.add(fact.get_id())
                out.append(fact)
    for fact in out:
        for quotient in fact.arg(1).children():
            if not any(x.eq(quotient) for x in divs):
                divs.append(quotient)
    return out


def _factorizations(formulas: Sequence[Any]) -> dict[int, tuple[Any, Any]]:
    """``x == g*k`` facts among ``formulas`` (names only): id of ``x`` -> ``(g, k)``."""
    out: dict[int, tuple[Any, Any]] = {}
    for f in formulas:
        if not z3.is_eq(f):
            continue
        x, rhs = f.children()
        if _is_atom(x) and z3.is_mul(rhs) and rhs.num_args() == 2:
            g, k = rhs.children()
            if _is_atom(g) and _is_atom(k):
                out[x.get_id()] = (g, k)
    return out


def _common_factor(
    n1: Any, n2: Any, g: Any, factors: dict[int, tuple[Any, Any]]
) -> tuple[Any, Any, list[tuple[Any, Any, Any]]] | None:
    """``(c, m, products)`` with ``n1 == n2 + c`` and ``n2 == g*m``, or None.

    ``c`` is one name or number; ``m`` is read through the factorizations of ``n2``'s
    coefficients.
    """
    atoms: dict[int, Any] = {}
    diff = _poly(n1 - n2, atoms)
    p2 = _poly(n2, atoms)
    if diff is None or p2 is None or _MOD_EXPANDED in atoms or len(diff) != 1 or not p2:
        return None
    ((mono, coef),) = diff.items()
    if len(mono) > 1 or coef != 1:
        return None
    c = atoms[mono[0]] if mono else z3.IntVal(coef)
    terms = []
    scaled = []
    for mono2, coef2 in p2.items():
        x = next((a for a in mono2 if a in factors and factors[a][0].eq(g)), None)
        if x is None:
            return None
        rest = list(mono2)
        rest.remove(x)
        k = factors[x][1]
        fs = [atoms[a] for a in rest]
        f = fs[0] if len(fs) == 1 else z3.Product(*fs) if fs else z3.IntVal(1)
        scaled.append((atoms[x], k, f))
        terms.append(z3.IntVal(coef2) * k * f)
    m = z3.Sum(*terms) if len(terms) > 1 else terms[0]
    return c, m, scaled


def _coefficient(e: Any) -> bool:
    """A name or its negation: a rule's coefficient or constant, as a divisions reads it."""
    return _is_atom(e) or (z3.is_app_of(e, z3.Z3_OP_UMINUS) and _is_atom(e.arg(0)))


def _is_atom(e: Any) -> bool:
    return bool(z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED)


# A polynomial: monomial (sorted Z3 ids of its atoms, with repetition) -> coefficient.
Poly = dict[tuple[int, ...], int]
_MAX_MONOMIALS: Final = 256
_MOD_EXPANDED: Final = -1  # key in the atoms map: some mod(x, d) was expanded


def _poly(e: Any, atoms: dict[int, Any]) -> Poly | None:
    """``e`` expanded into monomials over its non-arithmetic atoms (None: too large).

    ``mod(x, d)`` is expanded as ``x - d*div(x, d)``: a heuristic only (it fails for
    ``d == 0``), used to find a multiplier that the lemma's premise then states.
    """
    if z3.is_int_value(e):
        v = e.as_long()
        return {(): v} if v else {}
    if z3.is_add(e) or z3.is_sub(e):
        out: Poly = {}
        for i, c in enumerate(e.children()):
            p = _poly(c, atoms)
            if p is None:
                return None
            sign = -1 if z3.is_sub(e) and i > 0 else 1
            for mono, coef in p.items():
                out[mono] = out.get(mono, 0) + sign * coef
        return _trim(out)
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        p = _poly(e.arg(0), atoms)
        return None if p is None else {m: -c for m, c in p.items()}
    if z3.is_mul(e):
        acc: Poly | None = {(): 1}
        for c in e.children():
            p = _poly(c, atoms)
            if p is None or acc is None:
                return None
            acc = _times(acc, p)
        return acc
    if z3.is_app_of(e, z3.Z3_OP_MOD):
        x, d = e.children()
        atoms[_MOD_EXPANDED] = e
        return _poly(x - d * (x / d), atoms)
    atoms[e.get_id()] = e
    return {(e.get_id(),): 1}


def _trim(p: Poly) -> Poly | None:
    p = {m: c for m, c in p.items() if c}
    return p if len(p) <= _MAX_MONOMIALS else None


def _times(p: Poly, q: Poly) -> Poly | None:
    out: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
    return _trim(out)


def multiplier(
    n: Any, m: Any, d: Any, exact: dict[int, tuple[Any, int]] | None = None
) -> tuple[Any, list[tuple[Any, Any]]] | None:
    """A term ``k`` with ``n - m == d*k`` as polynomials, or None; and the exact reads.

    ``d`` must expand to one monomial; ``k`` is ``n - m`` with it divided out of each
    monomial. A monomial ``a*f`` without ``d``, where the query divides ``x = s*a`` by
    ``d`` (``exact``: the atom's id -> ``(x, s)``, ``s`` = +-1; ``d`` one atom), is read
    as ``s*d*div(x, d)*f``: each such ``(x, f)`` is returned, for its ``scaled-exact``
    instance. The lemma instances state
    ``n == m + d*k`` as a premise, so a wrong ``k`` only makes them useless, never wrong.
    """
    atoms: dict[int, Any] = {}
    pd = _poly(d, atoms)
    diff = _poly(n - m, atoms)
    if pd is None or diff is None or len(pd) != 1 or not diff:
        return None
    ((dmono, dcoef),) = pd.items()
    terms = []
    scaled: list[tuple[Any, Any]] = []
    for mono, coef in diff.items():
        rest = list(mono)
        if all(a in rest for a in dmono) and not coef % dcoef:
            for a in dmono:
                rest.remove(a)
            factors = [atoms[a] for a in rest]
            quotient = coef // dcoef
        else:
            # x*f with d dividing x: d*div(x, d)*f.
            found = next((a for a in rest if exact and a in exact), None)
            if found is None or exact is None or len(dmono) != 1 or dcoef != 1:
                return None
            a = found
            if _MOD_EXPANDED in atoms and not any(
                z3.is_app_of(atoms[b], z3.Z3_OP_IDIV) for b in rest if b != a
            ):
                # Remainders expanded and a plain coefficient read exactly: the two
                # readings cancel into an instance whose premise holds only for exact
                # multiples (mod-reduce-coefficients). A monomial of the expansion
                # itself (K*M*div(a, M) with N | M: remove-nested-mod) is read.
                return None
            rest.remove(a)
            x, sign = exact[a]
            fs = [atoms[b] for b in rest]
            f = fs[0] if len(fs) == 1 else z3.Product(*fs) if fs else z3.IntVal(1)
            scaled.append((x, f))
            factors = [x / d, *[atoms[b] for b in rest]]
            quotient = coef * sign
        term = z3.IntVal(quotient)
        terms.append(term * z3.Product(*factors) if factors else term)
    k = z3.Sum(*terms) if len(terms) > 1 else terms[0]
    return k, scaled
