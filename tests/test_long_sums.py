"""Long sums (issue 14): filtered sequence patterns, batched local rules, lazy rests.

* ``sum(K*t, cond) + y`` patterns: parsing and its errors, the reference matcher and the
  compiled one agree, and the rule does not apply where no addend passes the filter;
* batched application of local sum rules (quorem.batch) gives the normal form
  applying one match per step gives, and the rules it batches are exactly the local ones;
* the simplified long sums equal their inputs by evaluation, under both semantics.

Times are measured by ``python -m benchmarks.long_sums``, not here.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem import Semantics
from quorem.batch import BATCH_ATOMS, batch_rules, local_rule, one_at_a_time
from quorem.compiler.dispatch import compile_rule
from quorem.errors import RuleError
from quorem.ops import Op
from quorem.rule import PSum
from quorem.ruleset import RuleSet, default_ruleset
from quorem.term import Term, linear, var

SETTINGS = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FLOOR, TRUNC = Semantics.FLOOR, Semantics.TRUNC

FILTER_RULES = """
rule f-split
  doc: the shipped div-split-multiples-any, both semantics, no guard
  semantics: floor, trunc
  pattern: (sum(K*t, divides(D, K)) + y) // D
  guard: vmin(y) >= 0 and vmin(sum(K*t) + y) >= 0
  rewrite: sum((K // D)*t) + y // D

rule f-odd
  doc: a filter on the coefficient's sign and a bound of the atom
  semantics: floor
  pattern: (sum(K*t, K > 0 and vmax(t) < D) + y) % D
  guard: D > 0
  rewrite: (sum(K*t) + y) % D

rule f-addend
  doc: a filter after a matched addend
  semantics: floor
  pattern: (a*M + sum(K*t, K == M) + y) // N
  guard: N > 0 and divides(N, M) and vmin(y) >= 0 and vmin(a*M + sum(K*t) + y) >= 0
  rewrite: a*(M // N) + sum((K // N)*t) + y // N
"""


def _filter_rules() -> RuleSet:
    return RuleSet.from_text(FILTER_RULES, "<filter>", allow_unproven=True)


# ------------------------------------------------------------------------ the syntax
def test_filter_is_parsed() -> None:
    rule = _filter_rules().rule("f-split")
    assert isinstance(rule.pattern.children[0], PSum)  # type: ignore[union-attr]
    p = rule.pattern.children[0]  # type: ignore[union-attr]
    assert p.rest == "y"
    assert p.seq is not None and p.seq.where is not None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(sum(K*t, divides(D, K)) + C) // D", "needs a rest"),
        ("(sum(K*t, K + 1) + y) // D", "must be a condition"),
        ("(sum(K*t, vmin(y) > 0) + y) // D", "constant names"),
        ("(sum(K*t, divides(D, K), 1) + y) // D", "takes one argument"),
        ("(sum(K*t) + y) // D", "at most one rest"),
    ],
)
def test_filter_errors(pattern: str, message: str) -> None:
    text = f"rule bad\n  doc: x\n  semantics: floor\n  pattern: {pattern}\n  rewrite: y\n"
    with pytest.raises(RuleError, match=message):
        RuleSet.from_text(text, "<bad>", allow_unproven=True)


# ------------------------------------------------------------- matching, both engines
def _sums(rng: random.Random, n: int) -> list[Term]:
    xs = [var(f"x{i}", rng.choice([0, -3]), rng.choice([9, 40])) for i in range(n)]
    out = []
    for _ in range(30):
        k = rng.randint(1, n)
        atoms = rng.sample(xs, k)
        coefs = [rng.choice([1, 2, 3, 6, 7, 12, 14, -7, -6, 21, 9]) for _ in atoms]
        out.append(linear(zip(atoms, coefs, strict=True), rng.choice([0, 0, 5, -4, 13])))
    return out


@pytest.mark.parametrize("n", [3, 40])
def test_filter_compiled_agrees_with_reference(n: int) -> None:
    rng = random.Random(n)
    ds = default_ruleset()
    shipped = [ds.rule("div-split-multiples-any"), ds.rule("div-split-multiples-any-nonneg")]
    rules = RuleSet([*_filter_rules().rules, *shipped], allow_unproven=True)
    for c in rules.compiled:
        assert c.code is not None, c.name
    for s in _sums(rng, n):
        for d in (7, 3, -7, 1):
            for sem in (FLOOR, TRUNC):
                for t in (quorem.div(s, quorem.const(d), sem), quorem.mod(s, quorem.const(d), sem)):
                    for c in rules.rules_for(t.op):
                        assert c.apply(t) is c.reference_apply(t), (c.name, t)


def test_filter_needs_one_addend() -> None:
    """No addend passes the filter: no match (the rest alone is not a match)."""
    rules = _filter_rules()
    x, y = var("x", 0, 9), var("y", 0, 9)
    for t in (
        (x * 2 + y * 3) // 7,
        (x * 2 + y * 3 + 14) // 7,  # the constant is no addend of the sequence
        quorem.const(14) // quorem.const(7),
    ):
        for c in rules.rules_for(Op.FLOORDIV):
            if c.name == "f-split":
                assert c.apply(t) is None
                assert c.reference_apply(t) is None


def test_filter_splits_exactly() -> None:
    rules = _filter_rules()
    x, y, z = var("x", 0, 9), var("y", 0, 9), var("z", 0, 9)
    t = (x * 14 + y * 3 + z * -7 + 5) // 7
    (c,) = [c for c in rules.rules_for(Op.FLOORDIV) if c.name == "f-split"]
    # vmin(sum + y) < 0 (-7*z): the guard refuses.
    assert c.apply(t) is None
    t = (x * 14 + y * 3 + z * 21 + 5) // 7
    assert c.apply(t) is c.reference_apply(t) is x * 2 + z * 3 + (y * 3 + 5) // 7


def test_filtered_rule_is_compiled() -> None:
    ds = default_ruleset()
    for name, sem in [
        ("div-split-multiples-any", FLOOR),
        ("div-split-multiples-any-nonneg", TRUNC),
    ]:
        assert compile_rule(ds.rule(name), sem) is not None


# --------------------------------------------------------------------------- batching
def test_local_rules() -> None:
    ds = default_ruleset()
    assert local_rule(ds.rule("divmod-recombine-in-sum")) is None
    assert local_rule(ds.rule("divmod-recombine")) is not None  # no rest
    assert local_rule(ds.rule("div-split-multiple")) is not None  # not a sum
    text = """
rule reads-rest
  doc: the guard reads the rest
  semantics: floor
  pattern: x % N + (x // N)*N + y
  guard: vmin(y) >= 0
  rewrite: x + y

rule scales-rest
  doc: the rewrite scales the rest
  semantics: floor
  pattern: x % N + (x // N)*N + y
  rewrite: x + 2*y - y
"""
    rs = RuleSet.from_text(text, "<t>", allow_unproven=True)
    assert local_rule(rs.rule("reads-rest")) == "the guard reads the rest"
    assert local_rule(rs.rule("scales-rest")) is not None
    assert batch_rules(rs, early=False) == {}
    with one_at_a_time():
        assert batch_rules(ds, early=True) == {}
    assert "divmod-recombine-in-sum" in batch_rules(ds, early=True)


def _pair(x: Term, n: int, sem: Semantics, scale: int = 1) -> Term:
    d = quorem.const(n)
    return quorem.mod(x, d, sem) * scale + quorem.div(x, d, sem) * (n * scale)


@st.composite
def long_sums(draw: st.DrawFn) -> tuple[Term, dict[str, tuple[int, int]]]:
    """Sums of more than BATCH_ATOMS atoms: pairs that recombine, near misses, noise."""
    n = draw(st.integers(BATCH_ATOMS // 2 + 2, BATCH_ATOMS + 12))
    bounds: dict[str, tuple[int, int]] = {}
    parts: list[Term] = []
    for i in range(n):
        lo = draw(st.sampled_from([0, -20]))
        bounds[f"v{i}"] = (lo, lo + draw(st.integers(0, 60)))
        x = var(f"v{i}", *bounds[f"v{i}"])
        sem = draw(st.sampled_from([FLOOR, TRUNC]))
        d = draw(st.sampled_from([2, 4, 8]))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            parts.append(_pair(x, d, sem))
        elif kind == 1:
            parts.append(_pair(x, d, sem, draw(st.sampled_from([2, -3]))))
        elif kind == 2:  # wrong partner coefficient
            parts.append(
                quorem.mod(x, quorem.const(d), sem) + quorem.div(x, quorem.const(d), sem) * (d + 1)
            )
        elif kind == 3:  # a pair of a pair's quotient: the rewrite adds to a consumed atom
            q = quorem.div(x, quorem.const(d), sem)
            parts.append(_pair(x, d, sem) + _pair(q, 2, sem))
        elif kind == 4:
            parts.append(quorem.mod(x, quorem.const(d), sem) * draw(st.integers(-3, 3)))
        else:
            parts.append(x * draw(st.integers(-5, 5)))
    parts.append(quorem.const(draw(st.integers(-10, 10))))
    return quorem.sum_of(parts), bounds


def _points(bounds: dict[str, tuple[int, int]], k: int, seed: int) -> list[dict[str, int]]:
    rng = random.Random(seed)
    corners = [{v: lo for v, (lo, _) in bounds.items()}, {v: hi for v, (_, hi) in bounds.items()}]
    return corners + [{v: rng.randint(lo, hi) for v, (lo, hi) in bounds.items()} for _ in range(k)]


@SETTINGS
@given(long_sums())
def test_batched_equals_one_at_a_time(case: tuple[Term, dict[str, tuple[int, int]]]) -> None:
    t, bounds = case
    ds = default_ruleset()
    batched = quorem.explain(t, ds)
    with one_at_a_time():
        single = quorem.explain(t, ds)
    assert batched.term is single.term
    assert batched.reason is single.reason
    assert batched.steps <= single.steps
    assert quorem.count_divmod(batched.term) <= quorem.count_divmod(t)
    for env in _points(bounds, 20, len(bounds)):
        assert quorem.evaluate(batched.term, env) == quorem.evaluate(t, env)


@SETTINGS
@given(
    st.integers(BATCH_ATOMS, 120),
    st.sampled_from([FLOOR, TRUNC]),
    st.sampled_from([2, 3, 7, -7]),
    st.booleans(),
    st.integers(0, 2**32),
)
def test_long_division_sums_keep_value(
    n: int, sem: Semantics, d: int, bounded: bool, seed: int
) -> None:
    """``(sum k_i*x_i + c) // d`` and ``% d``: multiples leave in one step, values kept."""
    rng = random.Random(seed)
    bounds = {f"x{i}": (rng.choice([0, -9]), rng.choice([9, 30])) for i in range(n)}
    xs = [var(v, *b) if bounded else var(v) for v, b in bounds.items()]
    coefs = [rng.choice([1, 2, 3, 7, 14, -7, 21, 5]) for _ in xs]
    s = linear(zip(xs, coefs, strict=True), rng.randint(-20, 20))
    for t in (quorem.div(s, quorem.const(d), sem), quorem.mod(s, quorem.const(d), sem)):
        out = quorem.explain(t)
        assert quorem.count_divmod(out.term) <= quorem.count_divmod(t)
        for env in _points(bounds, 10, seed):
            assert quorem.evaluate(out.term, env, check_bounds=False) == quorem.evaluate(
                t, env, check_bounds=False
            )


def test_split_takes_every_multiple_in_one_step() -> None:
    xs = [var(f"x{i}", 0, 9) for i in range(1, 200)]
    t = linear((x, i) for i, x in enumerate(xs, 1)) // 7
    out = quorem.explain(t)
    assert out.counts == {"div-split-multiples-any": 1}
    inner = [u for u in out.term.args if u.op is Op.FLOORDIV]
    assert len(inner) == 1
    assert all(c % 7 != 0 for c in inner[0].args[0].arg[0])


def test_unbounded_split_stays() -> None:
    """Nothing may fire on an unbounded sum; the lazy rests are never built per multiple."""
    xs = [var(f"x{i}") for i in range(1, 200)]
    t = linear((x, i) for i, x in enumerate(xs, 1)) // 7
    out = quorem.explain(t)
    assert out.term is t and out.steps == 0


def test_pairs_recombine_in_one_step() -> None:
    xs = [var(f"x{i}", 0, 99) for i in range(100)]
    t = linear([(x // 4, 4) for x in xs] + [(x % 4, 1) for x in xs])
    out = quorem.explain(t)
    assert out.term is quorem.sum_of(xs)
    assert out.counts == {"divmod-recombine-in-sum": 1}
    with one_at_a_time():
        assert quorem.explain(t).counts == {"divmod-recombine-in-sum": 100}


@pytest.mark.parametrize("n", [3, 30])
def test_unbounded_rests_agree_with_reference(n: int) -> None:
    """The compiled guards skip building a rest with an unbounded atom: same answers."""
    rng = random.Random(n + 1)
    ds = default_ruleset()
    for _ in range(20):
        xs = [var(f"u{i}") if rng.random() < 0.3 else var(f"u{i}", -5, 9) for i in range(n)]
        atoms = rng.sample(xs, rng.randint(1, n))
        coefs = [rng.choice([1, 7, 14, -7, 3, 21]) for _ in atoms]
        s = linear(zip(atoms, coefs, strict=True), rng.choice([0, 3, 7]))
        for sem in (FLOOR, TRUNC):
            for t in (quorem.div(s, quorem.const(7), sem), quorem.mod(s, quorem.const(7), sem)):
                for c in ds.rules_for(t.op):
                    assert c.apply(t) is c.reference_apply(t), (c.name, t)
