"""The compiled rules and the fast rewriter agree with the reference, term for term.

``CompiledRule.apply`` runs a rule compiled to a specialised Python function
(quorem.compiler.dispatch); ``CompiledRule.reference_apply`` runs the generic matcher and
interpreter it is compiled from. On every term both must give the same answer: the rule
fires or not, and when it fires the result is the same (interned) term. The rewriter's
inner loop is checked the same way against the original algorithm, kept here as a
reference: same result, stop reason, step count, per-rule counts and trace.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable

import pytest
import strategies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import SEED_CASES, examples, has_junction

import quorem
from quorem.batch import one_at_a_time
from quorem.compiler.dispatch import compile_rule
from quorem.errors import TermError
from quorem.rewrite import RewriteResult, Step, StopReason, rewrite
from quorem.rule import Call, Name, NameKind, POp, PTerm, Rule
from quorem.ruleset import RuleSet, default_ruleset
from quorem.term import Term, rebuild
from quorem.walk import pin_point_variables

SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Rules exercising what the shipped ones do not: lets (one unbounded), any(), sums and
# min/max over sequences, abs, a rest used in a guard and in a non-linear rewrite,
# comparisons and products as patterns, commutative sums, term lets, negated coefficient
# names, literal addends, explicit division functions, per-element bounds.
EXTRA_RULES = """
rule x-let-ext
  doc: a let with an unbounded vmax is undetermined there
  semantics: floor, trunc
  pattern: (a*M + y) // N
  let: H = vmax(y) - vmin(y); G = gcd(M, N)
  guard: H < N and G > 1 and vmin(y) >= 0
  rewrite: a*(M // N) + y // N

rule x-any-mod
  doc: any() and sums of numbers
  semantics: floor
  pattern: (sum(K*t) + C) % D
  guard: D > 0 and any(K % D == 0) and sum(K) + C > abs(D) - 100
    and min(K) > -50 and max(K, C) < 1000
  rewrite: (sum((K % D)*t) + C % D) % D

rule x-rest-guard
  doc: a rest used in a guard
  semantics: floor, trunc
  pattern: x % N + y
  guard: vmin(y) >= 0 and vmax(y) < 1000000 and vmin(x % N + y) >= vmin(y)
  rewrite: y + x % N

rule x-cmp
  doc: a comparison pattern
  semantics: any
  pattern: x > y
  guard: vmin(x) > vmax(y) - 1 or vmin(x - y) > 0
  rewrite: 1

rule x-mul
  doc: a product pattern in a sum
  semantics: any
  pattern: x * y + z
  guard: vmin(x) >= 0 and vmin(y) >= 0 and vmax(x * y) < 100
  rewrite: z + y * x

rule x-max-sum
  doc: max of a sum
  semantics: any
  pattern: max(x + C, y)
  guard: C > 0 and vmin(x + C) >= vmax(y)
  rewrite: x + C

rule x-nested-bound
  doc: a name bound in two addends
  semantics: floor, trunc
  pattern: (x // N) % M + (x % N) * 2 + y
  guard: N > 0 and M > 0
  rewrite: y + (x // N) % M + (x % N) * 2 + 0

rule x-ext-arith
  doc: extended arithmetic on bounds
  semantics: floor, trunc
  pattern: x // N
  let: B = floordiv(N, 2)
  guard: N > 1 and vmax(x) * 2 - vmin(x) * 3 + 7 > vmax(x) // N
    and -vmin(x) > -vmax(x) - N and vmax(x) % N == 5
  rewrite: x // N

rule x-trunc-fn
  doc: explicit division functions in a rewrite
  semantics: trunc
  pattern: truncdiv(x, N)
  guard: N > 1 and vmin(x) >= 0 and vmax(x) < N * 1000
  rewrite: floordiv(x, N) + 0 * truncmod(x, N)

rule x-neg-coef
  doc: a negated coefficient name
  semantics: floor
  pattern: x*K - (x // N) * M + y
  guard: K == M and N == 1
  rewrite: y

rule x-const-sum-lit
  doc: literal coefficient and constant
  semantics: any
  pattern: 2*x + 3
  rewrite: x + x + 3

rule x-let-term
  doc: a term let
  semantics: floor
  pattern: (x + C) % D
  let: s = x + C % D; Q = C // D
  guard: D > 0 and vmin(s) >= 0 and vmax(s) < D and Q != 0
  rewrite: s

rule x-minmax-terms
  doc: min and max of the same operands
  semantics: any
  pattern: min(x, y) + max(x, y) + z
  rewrite: x + y + z

rule x-eq
  doc: equality of a sum
  semantics: any
  pattern: x + C == y
  guard: vmax(x + C) < vmin(y) or vmin(x) + C > vmax(y)
  rewrite: 0

rule x-gcd-seq
  doc: gcd and divides over a sequence
  semantics: floor, trunc
  pattern: (sum(K*t) + C) // D
  let: G = gcd(K, C, D); A = abs(G)
  guard: G > 1 and divides(G, D) and all(divides(G, K)) and not (A == 1)
  rewrite: (sum((K // G)*t) + C // G) // (D // G)

rule x-seq-vmin
  doc: per-element bounds
  semantics: floor
  pattern: (sum(K*t) + C) % D
  guard: D > 0 and all(vmin(t) >= 0) and sum(K*vmax(t)) + C < D and C >= 0 and all(K >= 0)
  rewrite: sum(K*t) + C
"""


def _extra() -> RuleSet:
    return RuleSet.from_text(EXTRA_RULES, "<extra>", allow_unproven=True)


def _seed_terms() -> list[Term]:
    out = []
    for line in SEED_CASES.read_text().splitlines():
        if line.strip():
            case = json.loads(line)
            bounds = {k: (v[0], v[1]) for k, v in case["vars"].items()}
            out.append(quorem.parse(case["expr"], bounds, case.get("semantics", "floor")))
    return out


def _subterms(roots: Iterable[Term]) -> set[Term]:
    seen: set[Term] = set()
    stack = list(roots)
    while stack:
        t = stack.pop()
        if t not in seen:
            seen.add(t)
            stack.extend(t.args)
    return seen


def _terms_met(term: Term, rules: RuleSet) -> set[Term]:
    """The term's subterms and every term its rewriting goes through."""
    roots = [term]
    r = quorem.explain(term, rules, max_steps=300)
    roots.append(r.term)
    for s in r.trace:
        roots += [s.before, s.after]
    return _subterms(roots)


def _assert_agree(terms: Iterable[Term], rules: RuleSet) -> None:
    for u in terms:
        for c in rules.compiled:
            want = c.reference_apply(u)
            got = c.apply(u)
            assert got is want, f"{c.name} ({c.semantics}) on {u}: {got} != {want}"


def test_every_shipped_rule_is_compiled() -> None:
    """No shipped rule instance falls back to the reference interpreter, but those whose
    pattern picks clauses out of a chain (any two of them, which the compiler does not
    generate code for)."""
    fallbacks = 0
    for c in default_ruleset().compiled:
        if has_junction(c.rule.pattern):
            assert c.code is None, c.name
            fallbacks += 1
            continue
        assert c.code is not None, c.name
        assert c.fn is c.code.fn
    assert fallbacks > 0


def test_extra_rules_are_compiled() -> None:
    for c in _extra().compiled:
        assert c.code is not None, c.name


def test_seed_cases_agree() -> None:
    """Every rule instance agrees with the reference on the seed corpus and its rewrites."""
    rules = default_ruleset()
    terms: set[Term] = set()
    for t in _seed_terms():
        terms |= _terms_met(t, rules)
    _assert_agree(terms, rules)
    _assert_agree(terms, _extra())


@SETTINGS
@given(strategies.cases(allow_unbounded=True))
def test_random_terms_agree(case: strategies.Case) -> None:
    """Random terms, unbounded variables included: same decision, same result term."""
    rules = default_ruleset()
    _assert_agree(_terms_met(case.term, rules), rules)


@pytest.mark.slow
@SETTINGS
@given(st.one_of(strategies.random_cases(allow_unbounded=True), strategies.tensor_cases()))
def test_random_terms_agree_extra_rules(case: strategies.Case) -> None:
    extra = _extra()
    both = RuleSet([*default_ruleset().rules, *extra.rules], allow_unproven=True)
    _assert_agree(_terms_met(case.term, rules=both) | _terms_met(case.term, extra), extra)
    _assert_same_run(case.term, both, 1000)  # the rules inlined in the dispatchers, too


def test_unsupported_rule_falls_back_to_reference() -> None:
    """A rule outside what the compiler handles (a nested aggregate) runs on the reference."""
    names = {"x": NameKind.TERM, "y": NameKind.TERM}
    plain = Rule(
        name="plain",
        doc="hand-built",
        semantics=(),
        pattern=POp("max", (PTerm("x"), PTerm("y"))),
        lets=(),
        guard=None,
        rewrite=Name("x", NameKind.TERM),
        names=names,
    )
    assert compile_rule(plain, None) is not None
    nested = Call("sum", (Call("sum", (Name("K", NameKind.SEQ_CONST),)),))
    odd = dataclasses.replace(plain, name="odd", lets=(("Z", nested),))
    assert compile_rule(odd, None) is None
    (c,) = RuleSet([odd], allow_unproven=True).compiled
    assert c.code is None
    x, y = quorem.var("x", 0, 3), quorem.var("y", 0, 3)
    t = quorem.maximum(x, y)
    assert c.apply(t) is c.reference_apply(t) is x


# ------------------------------------------------------------------ the rewriter loop


class _ReferenceRewriter:
    """The rewriter's algorithm as first written: frame by frame, rule by rule."""

    def __init__(self, rules: RuleSet, max_steps: int, trace: bool, *, early: bool) -> None:
        self.rules = rules
        self.early = early  # only the phase: early rules
        self.max_steps = max_steps
        self.trace = trace
        self.memo: dict[Term, Term] = {}
        self.active: set[Term] = set()
        self.counts: Counter[str] = Counter()
        self.steps: list[Step] = []
        self.n_steps = 0
        self.reason = StopReason.FIXED_POINT
        self.stack: list[tuple[Term, int, Term | None]] = []

    def run(self, term: Term) -> RewriteResult:
        memo, stack = self.memo, self.stack
        stack.append((term, 0, None))
        while stack:
            t, kind, target = stack.pop()
            if kind == 2:
                assert target is not None
                memo[t] = memo[target]
                self.active.discard(t)
            elif t in memo:
                continue
            elif kind == 0:
                self.visit(t)
            else:
                self.reduce(t)
        return RewriteResult(memo[term], self.reason, self.n_steps, self.counts, self.steps)

    def visit(self, t: Term) -> None:
        if t in self.active:
            self.reason = StopReason.CYCLE
            self.memo[t] = t
            return
        self.active.add(t)
        self.stack.append((t, 1, None))
        self.stack.extend((c, 0, None) for c in t.args if c not in self.memo)

    def reduce(self, t: Term) -> None:
        memo = self.memo
        new_args = [memo[c] for c in t.args]
        u = t
        if any(a is not b for a, b in zip(new_args, t.args, strict=True)):
            try:
                u = rebuild(t, new_args)
            except TermError:
                memo[t] = t
                self.active.discard(t)
                return
            if u in memo:
                memo[t] = memo[u]
                self.active.discard(t)
                return
        out = self.apply_first(u)
        if out is None:
            memo[u] = u
            memo[t] = u
            self.active.discard(t)
            return
        if u is not t:
            self.active.add(u)
            self.stack.append((t, 2, u))
        self.stack.append((u, 2, out))
        self.stack.append((out, 0, None))

    def apply_first(self, u: Term) -> Term | None:
        rules = self.rules.rules_for(u.op)
        if self.early:
            rules = tuple(r for r in rules if r.rule.early)
        if self.n_steps >= self.max_steps:
            if self.reason is StopReason.FIXED_POINT and any(
                r.reference_apply(u) is not None for r in rules
            ):
                self.reason = StopReason.STEP_LIMIT
            return None
        for r in rules:
            out = r.reference_apply(u)
            if out is not None:
                self.n_steps += 1
                self.counts[r.name] += 1
                if self.trace:
                    self.steps.append(Step(r.name, u, out))
                return out
        return None


def _reference_rewrite(term: Term, rules: RuleSet, max_steps: int) -> RewriteResult:
    """The early phase (if any rule is early), then every rule, on a shared step budget.

    First, as the rewriter does, one-value variables are replaced by their value.
    """
    term = pin_point_variables(term)
    if not any(r.early for r in rules):
        return _ReferenceRewriter(rules, max_steps, trace=True, early=False).run(term)
    first = _ReferenceRewriter(rules, max_steps, trace=True, early=True).run(term)
    if first.reason is StopReason.STEP_LIMIT:
        return first
    second = _ReferenceRewriter(rules, max_steps - first.steps, trace=True, early=False)
    last = second.run(first.term)
    reason = first.reason if last.reason is StopReason.FIXED_POINT else last.reason
    return RewriteResult(
        last.term,
        reason,
        first.steps + last.steps,
        first.counts + last.counts,
        first.trace + last.trace,
    )


def _assert_same_run(term: Term, rules: RuleSet, max_steps: int) -> None:
    want = _reference_rewrite(term, rules, max_steps)
    got = rewrite(term, rules, max_steps=max_steps, trace=True)
    assert got.term is want.term
    assert got.reason is want.reason
    assert got.steps == want.steps
    assert got.counts == want.counts
    assert list(got.counts) == list(want.counts)
    assert [(s.rule, s.before, s.after) for s in got.trace] == [
        (s.rule, s.before, s.after) for s in want.trace
    ]


@SETTINGS
@given(strategies.cases(allow_unbounded=True), st.sampled_from([1, 2, 3, 5, 1000]))
def test_rewriter_matches_reference_algorithm(case: strategies.Case, max_steps: int) -> None:
    """Same result, stop reason, steps, counts and trace, step limits included."""
    _assert_same_run(case.term, default_ruleset(), max_steps)


def test_rewriter_matches_reference_on_seeds_and_cycles() -> None:
    for t in _seed_terms():
        for max_steps in (1, 2, 1000):
            _assert_same_run(t, default_ruleset(), max_steps)
    looping = RuleSet.from_text(
        """
rule swap-forward
  doc: deliberately cyclic with swap-back
  semantics: any
  pattern: max(x, y) + 1
  rewrite: min(x, y) + 1

rule swap-back
  doc: the inverse of swap-forward
  semantics: any
  pattern: min(x, y) + 1
  rewrite: max(x, y) + 1
""",
        allow_unproven=True,
    )
    for text in ("max(a, b) + 1", "max(max(a, b) + 1, c) + 1", "min(a, b) + max(a, b) + 1"):
        _assert_same_run(quorem.parse(text), looping, 100)


@pytest.mark.parametrize("compiled", [True, False])
def test_ruleset_compiled_flag(compiled: bool) -> None:
    """``RuleSet(..., compiled=False)`` runs the reference; both simplify alike."""
    rules = RuleSet(default_ruleset().rules, compiled=compiled)
    for c in rules.compiled:
        assert (c.code is not None) is (compiled and not has_junction(c.rule.pattern)), c.name
    for t in _seed_terms():
        assert quorem.simplify(t, rules) is quorem.simplify(t)


@pytest.mark.slow
def test_long_sums_agree() -> None:
    """Sums longer than the compiler's short-sum paths: operator blocks found by bisection,
    atoms by dictionary after a few scans, the rest rebuilt from the sum's own pairs."""
    xs = [quorem.var(f"x{i}", 0, 100 + i) for i in range(40)]
    y = quorem.var("y", -5, 5)
    lone = [x // 8 for x in xs]  # live, but not all of them in the sums below
    pairs = [x % 8 + (x // 8) * 8 for x in xs[:30]]
    wrong = [x % 8 + (x // 8) * 7 for x in xs[30:]]  # partner with the wrong coefficient
    trunc = [
        quorem.mod(x, quorem.const(4), quorem.Semantics.TRUNC)
        + quorem.div(x, quorem.const(4), quorem.Semantics.TRUNC) * 4
        for x in xs[:10]
    ]
    sums = [
        quorem.sum_of([*pairs, *wrong, y]),
        quorem.sum_of([*wrong, *pairs[::-1], 3]),
        quorem.sum_of([x % 8 for x in xs] + [y * 2]),
        quorem.sum_of([*trunc, *pairs[:5], y]),
    ]
    terms: set[Term] = set()
    for s in sums:
        terms |= _terms_met(s, default_ruleset())
        with one_at_a_time():  # the reference applies one match per step
            _assert_same_run(s, default_ruleset(), 10_000)
            _assert_same_run(s, default_ruleset(), 7)
        # Batched (quorem.batch): fewer steps, the same normal form.
        batched = rewrite(s, default_ruleset(), max_steps=10_000)
        assert batched.term is _reference_rewrite(s, default_ruleset(), 10_000).term
    _assert_agree(terms, default_ruleset())
    _assert_agree(terms, _extra())
    assert len(lone) == 40


def test_rule_names_never_become_code() -> None:
    """Generated code names rules only in comments and strings, safely quoted."""
    rule = Rule(
        name="evil\nraise SystemExit('injected')",
        doc="a hand-built rule with a hostile name",
        semantics=(),
        pattern=POp("max", (PTerm("x"), PTerm("y"))),
        lets=(),
        guard=None,
        rewrite=Name("y", NameKind.TERM),
        names={"x": NameKind.TERM, "y": NameKind.TERM},
    )
    rules = RuleSet([rule], allow_unproven=True)
    x, y = quorem.var("x", 0, 3), quorem.var("y", 5, 9)
    r = quorem.explain(quorem.maximum(x, y), rules)
    assert r.rules == [rule.name]
