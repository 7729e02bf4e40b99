"""Every lemma quorem.verify.lemmas instantiates is valid: proven by Z3 and by cvc5.

A lemma is a universally quantified fact about SMT-LIB's (Euclidean) div and mod; its
negation over fresh constants is refuted by both solvers, from one SMT-LIB text. Its
instances are then valid premises for any query.
"""

from __future__ import annotations

from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from test_split import _both_refute  # noqa: E402

from quorem.verify.lemmas import LEMMAS, STEPS, instances, multiplier  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LEMMAS))
def test_lemma_is_valid(name: str) -> None:
    """The negation of the lemma, over fresh constants, is refuted by both solvers.

    Or, for a lemma with proof steps (STEPS), each step and then the conclusion.
    """
    arity, body = LEMMAS[name]
    xs = z3.Ints(" ".join(f"v{i}" for i in range(arity)))
    lemma = body(*xs)
    if name not in STEPS:
        _both_refute([z3.Not(lemma)])
        return
    # premises -> each claim; premises and claims -> conclusion. A claim (other, args)
    # is an instance of another lemma, proven on its own.
    premises, conclusion = lemma.arg(0).children(), lemma.arg(1)
    facts = []
    for claim in STEPS[name](*xs):
        if isinstance(claim, tuple):
            other, args = claim
            assert other != name and other not in STEPS, other  # no cycles
            facts.append(LEMMAS[other][1](*args))
            continue
        _both_refute([*premises, z3.Not(claim)])
        facts.append(claim)
    _both_refute([*premises, *facts, z3.Not(conclusion)])


def test_multiplier() -> None:
    x, y, d, k, t = z3.Ints("x y d k t")
    # (x*d*k + y) - y == d*(x*k)
    found = multiplier(x * d * k + y, y, d)
    assert found is not None
    assert z3.simplify(found[0] - x * k) == 0
    assert found[1] == []
    # k*t + y vs mod(k, d)*t + y: k*t - mod(k, d)*t == d*div(k, d)*t
    found = multiplier(k * t + y, (k % d) * t + y, d)
    assert found is not None
    assert z3.simplify(found[0] - (k / d) * t) == 0
    assert multiplier(x + 1, x, d) is None
    # k*t + y vs y, where the query divides k by d: d*div(k, d)*t, read exactly.
    assert multiplier(k * t + y, y, d) is None
    found = multiplier(k * t + y, y, d, {k.get_id(): (k, 1)})
    assert found is not None
    assert z3.simplify(found[0] - (k / d) * t) == 0
    assert [(a.eq(k), f.eq(t)) for a, f in found[1]] == [(True, True)]
    # ... or divides -k by d (a negative divisor's branch): -d*div(-k, d)*t.
    found = multiplier(k * t + y, y, d, {k.get_id(): (-k, -1)})
    assert found is not None
    assert z3.simplify(found[0] + ((-k) / d) * t) == 0


def test_instances_of_nested_division() -> None:
    x, a, c = z3.Ints("x a c")
    facts = instances([(x / a) / c == x / (a * c)])
    assert any("x/a/c == x/(a*c)" in str(f).replace("(x/a)", "x/a") for f in facts), facts


def test_bounds_of_a_divided_numerator_give_monotone_instances() -> None:
    """``lo <= s <= hi`` with ``div(lo, d)`` and ``div(hi, d)`` in the query: the instances
    relate them to ``div(s, d)`` (new to the query); unrelated bounds give none."""
    lo, s, hi, d, y = z3.Ints("lo s hi d y")
    facts = instances([lo <= s, s <= hi, lo / d == hi / d, y >= 3])
    texts = {str(f) for f in facts}
    assert str(z3.Implies(z3.And(d > 0, lo <= s), lo / d <= s / d)) in texts
    assert str(z3.Implies(z3.And(d > 0, s <= hi), s / d <= hi / d)) in texts
    assert not any("y" in t for t in texts)
    # A numerator -lo (a negative divisor's branch): the bound is mirrored.
    facts = instances([lo <= s, (-lo) / d == 0])
    assert str(z3.Implies(z3.And(d > 0, -s <= -lo), (-s) / d <= (-lo) / d)) in {
        str(f) for f in facts
    }
    # Without the bound, the lemma is not instantiated.
    assert not any("s" in str(f) for f in instances([lo / d == hi / d]))


def test_instances_of_nested_mod() -> None:
    """``mod(x, a)`` and ``mod(x, b)`` with ``a*k == b`` stated: the remainder by the factor,
    and a remainder by ``b`` below ``a`` being its own; no factorization, no instance."""
    x, a, b, k, r = z3.Ints("x a b k r")
    facts = {str(f) for f in instances([x % a == r, x % b == r, a * k == b])}
    assert str(z3.Implies(z3.And(a > 0, k != 0, b == a * k), (x % b) % a == x % a)) in facts
    assert (
        str(
            z3.Implies(
                z3.And(a > 0, x % b >= 0, x % b < a), z3.And((x % b) / a == 0, (x % b) % a == x % b)
            )
        )
        in facts
    )
    assert not any("k" in f for f in {str(f) for f in instances([x % a == r, x % b == r])})


def _thresholds(facts: list[Any], quotient: Any) -> list[Any]:
    """The ``x`` of each ``quotient-bound`` instance ``d > 0 -> (x <= quotient) == ...``."""
    out = []
    for f in facts:
        if z3.is_implies(f) and z3.is_eq(f.arg(1)) and z3.is_le(f.arg(1).arg(0)):
            x, q = f.arg(1).arg(0).children()
            if q.eq(quotient):
                out.append(x)
    return out


def _same(x: Any, y: Any) -> bool:
    return bool(z3.simplify(x - y).eq(z3.IntVal(0)))


def test_comparisons_with_a_quotient_give_quotient_bound_instances() -> None:
    """``a < div(m, d) + r`` is ``a - r + 1 <= div(m, d)``: stated for every quotient by
    ``d`` (here both), with ``scaled-factor`` for the products of a factored coefficient;
    a comparison without a quotient gives none."""
    a, r, m1, m2, d, x, g, k, t = z3.Ints("a r m1 m2 d x g k t")
    facts = instances([a < m1 / d + r, m1 / d == m2 / d, x == g * k, x * t < 9])
    for m in (m1, m2):
        assert [_same(th, a - r + 1) for th in _thresholds(facts, m / d)] == [True]
    assert str(z3.Implies(x == g * k, x * t == g * (k * t))) in {str(f) for f in facts}
    # A negated quotient: a <= -div(m, d) is not (-a + 1 <= div(m, d)).
    facts = instances([a <= -(m1 / d)])
    assert [_same(th, -a + 1) for th in _thresholds(facts, m1 / d)] == [True]
    # The lemma's instances hold: each is valid.
    for f in facts:
        s = z3.Solver()
        s.add(z3.Not(f))
        assert s.check() == z3.unsat
    assert not instances([a < r, x == g * k, x * t < 9])


def test_an_equation_makes_a_numerator_a_multiple() -> None:
    """``b + x*t == c`` with ``x == g*k`` and ``mod(c - b, g)`` in the query: the instance's
    premise ``c - b == 0 + g*k'`` follows from the query (``k' = k*t``); without the
    factorization, no instance."""
    b, c, x, t, g, k = z3.Ints("b c x t g k")
    query = [x == g * k, (c - b) % g != 0, b + x * t == c]
    shifts = [f for f in instances(query) if z3.is_implies(f) and "c - b ==" in str(f.arg(0))]
    assert len(shifts) == 1
    s = z3.Solver()
    s.add(*query, g > 0, z3.Not(shifts[0].arg(0)))
    assert s.check() == z3.unsat
    assert not [f for f in instances(query[1:]) if "c - b ==" in str(f)]
