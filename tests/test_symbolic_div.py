"""Division by symbolic monomials (issue 15 class 2): ``tdivides``/``tquotient`` and the rules
of ``rules/60-symbolic-div.rules``.

The issue's examples, the edges where the rules must stop, the monomial algebra against
evaluation, the compiled matcher against the reference, the rule-language checks, and a
property test of equivalence by evaluation under both semantics.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import assert_equivalent, examples

import quorem
from quorem.errors import RuleError
from quorem.monomial import monomial, monomial_divides, monomial_quotient
from quorem.ops import Semantics
from quorem.ruleset import RuleSet, default_ruleset
from quorem.term import Term, const, linear, product, var

FLOOR, TRUNC = Semantics.FLOOR, Semantics.TRUNC
BOX = {
    "a": (0, 9),
    "b": (0, 9),
    "c": (-5, 5),
    "d": (1, 12),
    "d1": (1, 6),
    "d2": (1, 6),
    "n": (-3, 4),
}
RULES = (
    "div-exact-monomial",
    "mod-exact-monomial",
    "div-split-monomial-multiples",
    "div-split-monomial-multiples-signed",
    "mod-drop-monomial-multiples",
    "mod-drop-monomial-multiples-signed",
)


def _simplify(text: str, semantics: str, box: dict[str, tuple[int, int]] = BOX) -> str:
    term = quorem.parse(text, box, semantics)
    with warnings.catch_warnings():
        warnings.simplefilter("error", quorem.IncompleteRewriteWarning)
        out = quorem.simplify(term)
    assert_equivalent(term, out, {n: box[n] for n in box if n in text})
    return quorem.to_text(out, Semantics(semantics))


def _same(text: str, want: str, semantics: str, box: dict[str, tuple[int, int]] = BOX) -> None:
    got = quorem.parse(_simplify(text, semantics, box), box, semantics)
    assert got is quorem.parse(want, box, semantics), (text, semantics, quorem.to_text(got))


# ------------------------------------------------------------------ the issue's examples
@pytest.mark.parametrize("semantics", ["floor", "trunc"])
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("(a*d + b) % d", "b % d"),
        ("(a*d + b) // d", "a + b // d"),
        ("(a*d1 + b*d1) // d1", "a + b"),
        ("(a*b*d1*d1) // d1", "a*b*d1"),
        ("(a*d1*d2*b*d1) // (d1*d2)", "a*b*d1"),
        ("(6*a*d + 4*b*d) // (2*d)", "3*a + 2*b"),
        ("(a*d) % d", "0"),
        # products in any order, repeated factors, sums sharing a monomial factor
        ("(d2*b*d1*a*d1) // (d2*d1)", "a*b*d1"),
        ("(a*d1*d1 + b) // (d1*d1)", "a + b // (d1*d1)"),
        ("(a*d + d + b) // d", "a + 1 + b // d"),
        ("(a*d1*d2 + b) % (d2*d1)", "b % (d1*d2)"),
        ("(4*a*d + b) % (2*d)", "b % (2*d)"),
        ("(a*d + b*d + 3) % d", "3 % d"),
    ],
)
def test_issue_examples(text: str, want: str, semantics: str) -> None:
    _same(text, want, semantics)


def test_floor_takes_multiples_out_for_any_sign() -> None:
    """Floor: (q*u + y) // u == q + y // u for every non-zero u and any signs."""
    _same("(c*d + b) // d", "c + b // d", "floor")
    _same("(a*n + b) // n", "a + b // n", "floor")  # n in [-3, 4]: no value at 0
    _same("(a*n + c) % n", "c % n", "floor")
    _same("(b - 2*a*d) // d", "b // d - 2*a", "floor")


# ---------------------------------------------------------------------- where they stop
@pytest.mark.parametrize(
    ("text", "semantics"),
    [
        ("(a*d1 + b) // d2", "floor"),  # the monomial does not divide
        ("(a*d1 + b) % d2", "trunc"),
        ("(a*d + b) % (2*d)", "floor"),  # the coefficient does not divide
        ("(3*a*d + b) // (2*d)", "trunc"),
        ("(c*d + b) // d", "trunc"),  # the numerator may change sign
        ("(b - 2*a*d) // d", "trunc"),
        ("(a*n + b) // n", "trunc"),  # a negative divisor flips it
        ("(a*d + c) % d", "trunc"),  # the rest changes sign
    ],
)
def test_does_not_apply(text: str, semantics: str) -> None:
    term = quorem.parse(text, BOX, semantics)
    assert quorem.simplify(term) is term, quorem.to_text(quorem.simplify(term))


def test_trunc_split_is_false_across_zero() -> None:
    """The counterexample behind the trunc sign condition: the split changes the value."""
    c, d, b = var("c", -5, 5), var("d", 1, 12), var("b", 0, 9)
    term = quorem.div(c * d + b, d, TRUNC)
    split = c + quorem.div(b, d, TRUNC)
    point = {"c": -1, "d": 2, "b": 1}
    assert quorem.evaluate(term, point) == 0  # truncdiv(-1, 2)
    assert quorem.evaluate(split, point) == -1
    assert quorem.simplify(term) is term


def test_quotient_overflow_stops_the_split() -> None:
    """-2**63 // -1 has no int64 value: with a negative divisor the split checks its quotient."""
    a = var("a", -(2**62), 0)
    n = var("n", -2, -1)
    b = var("b", 0, 3)
    term = quorem.div(a * n * 2 + b, n, FLOOR)  # a*n*2 reaches 2**63: the input overflows
    assert not term.fits64
    ok = quorem.div(a * n + b, n, FLOOR)  # a*n in [0, 2**63 - 2]: quotient a fits
    assert quorem.simplify(ok) is quorem.simplify(a + quorem.div(b, n, FLOOR))


# ------------------------------------------------------------------- the monomial algebra
_ATOMS = [var("x", -4, 4), var("y", 0, 5), var("z", 1, 3), var("w", -2, 2)]


def _pick(rng: random.Random, options: Sequence[Term | int]) -> Term | int:
    """``rng.choice`` over terms and constants (typed: a list of both is a list of objects)."""
    return rng.choice(options)


def _monomial(rng: random.Random) -> tuple[int, list[Term]]:
    return rng.choice([1, 1, 2, -3, 6]), [rng.choice(_ATOMS) for _ in range(rng.randint(0, 3))]


def _poly(rng: random.Random) -> Term:
    pairs = []
    for _ in range(rng.randint(1, 4)):
        c, fs = _monomial(rng)
        pairs.append((product(fs) if fs else const(1), c))
    return linear(pairs, rng.choice([0, 0, 6, -4]))


def test_monomial_forms() -> None:
    x, y = _ATOMS[0], _ATOMS[1]
    assert monomial(const(0)) is None
    assert monomial(const(-4)) == (-4, ())
    assert monomial(x * y * 3) == (3, (x * y).args)
    assert monomial(x + y) is None
    assert monomial(x * 2 + 1) is None


@pytest.mark.parametrize("seed", range(20))
def test_quotient_times_divisor_is_the_term(seed: int) -> None:
    """Where tdivides holds, t == tquotient(t, u) * u at every point (what the prover assumes)."""
    rng = random.Random(seed)
    for _ in range(40):
        c, fs = _monomial(rng)
        u = product([const(c), *fs])
        extra = _poly(rng)
        t = rng.choice([extra * u, extra * u + _pick(rng, [0, 1, _ATOMS[0]]), extra])
        q = monomial_quotient(t, u)
        assert (q is not None) == monomial_divides(u, t)
        if q is None:
            continue
        for i in range(9):
            env = {"x": i - 4, "y": i % 6, "z": 1 + i % 3, "w": i % 5 - 2}
            tv, qv, uv = (quorem.evaluate(e, env) for e in (t, q, u))
            assert tv == qv * uv
            assert abs(qv) <= abs(tv) or uv == 0


# ------------------------------------------------------- compiled code and the reference
def test_rules_are_compiled_and_agree_with_the_reference() -> None:
    ds = default_ruleset()
    rules = RuleSet([ds.rule(name) for name in RULES])
    for c in rules.compiled:
        assert c.code is not None, c.name
    rng = random.Random(7)
    for _ in range(300):
        u = product([const(rng.choice([1, 2, -2, 3])), *rng.sample(_ATOMS, rng.randint(1, 2))])
        num = _poly(rng) * u + _pick(rng, [0, _poly(rng)])
        for sem in (FLOOR, TRUNC):
            for t in (quorem.div(num, u, sem), quorem.mod(num, u, sem)):
                for c in rules.rules_for(t.op):
                    assert c.apply(t) is c.reference_apply(t), (c.name, t)


# -------------------------------------------------------------- the rule language
def _rule(body: str) -> str:
    return f"rule r\n  doc: x\n  semantics: floor\n{body}"


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("  pattern: x // y\n  guard: tdivides(y)\n  rewrite: x\n", "exactly 2 arguments", 5),
        ("  pattern: x // y\n  guard: tdivides(2, 4)\n  rewrite: x\n", "use divides", 5),
        (
            "  pattern: x // y\n  guard: tdivides(y, vmin(x) > 0)\n  rewrite: x\n",
            "takes terms",
            5,
        ),
        ("  pattern: x // y\n  rewrite: tdivides(y, x)\n", "not a condition", 5),
        ("  pattern: x // y\n  guard: tquotient(x, y)\n  rewrite: x\n", "must be a condition", 5),
        (
            "  pattern: (sum(K*t, tdivides(y, K*t)) + y) // D\n  rewrite: y\n",
            "not 'y'",
            4,
        ),
        ("  pattern: x // y\n  guard: tdivide(y, x)\n  rewrite: x\n", "tquotient", 5),
    ],
)
def test_rule_language_errors(body: str, message: str, line: int) -> None:
    """Misuse is a RuleError at file:line:col (the field's line: 4 pattern, 5 the next)."""
    with pytest.raises(RuleError, match=message) as info:
        RuleSet.from_text(_rule(body), "my.rules", allow_unproven=True)
    assert str(info.value).startswith(f"my.rules:{line}:"), str(info.value)


def test_rule_language_functions() -> None:
    """A user rule with tdivides/tquotient: the quotient as a rewrite, the test as a guard."""
    text = _rule(
        "  pattern: x // y\n  guard: tdivides(y, x) and vmin(y) > 0\n  rewrite: tquotient(x, y)\n"
    )
    rules = RuleSet.from_text(text, "my.rules", allow_unproven=True)
    d1, d2, a = var("d1", 1, 4), var("d2", 1, 4), var("a", 0, 3)
    t = (a * d1 * d2 * 6 + d2 * 3) // (d2 * 3)  # a sum over a monomial divisor
    assert quorem.simplify(t, rules) is a * d1 * 2 + 1
    assert quorem.simplify((a + d1) // d1, rules) is (a + d1) // d1  # a does not divide


# ------------------------------------------------------------------------ property test
_SHAPES = [var("s", 1, 5), var("m", 1, 3), var("n", -2, 3)]
_INDEX = [var("i", -3, 4), var("j", 0, 4)]


@st.composite
def _symbolic_divisions(draw: st.DrawFn) -> tuple[Term, Semantics]:
    sem = draw(st.sampled_from([FLOOR, TRUNC]))
    factors = draw(st.lists(st.sampled_from(_SHAPES), min_size=1, max_size=2))
    u = product([const(draw(st.sampled_from([1, 1, 2, -1, 3]))), *factors])
    pairs = []
    for _ in range(draw(st.integers(1, 3))):
        extra = draw(st.lists(st.sampled_from(_SHAPES + _INDEX), max_size=2))
        k = draw(st.integers(-4, 4))
        pairs.append((product([u, *extra]) if draw(st.booleans()) else product(extra), k))
    num = linear(pairs, draw(st.integers(-6, 6)))
    is_div = draw(st.booleans())
    return (quorem.div(num, u, sem) if is_div else quorem.mod(num, u, sem)), sem


@settings(max_examples=examples(150), deadline=None)
@given(_symbolic_divisions())
def test_symbolic_division_keeps_its_value(case: tuple[Term, Semantics]) -> None:
    term, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", quorem.IncompleteRewriteWarning)
        out = quorem.simplify(term)
    box = {"s": (1, 5), "m": (1, 3), "n": (-2, 3), "i": (-3, 4), "j": (0, 4)}
    assert_equivalent(term, out, box)


# ------------------------------------------------------------------------------ the prover
_UNSOUND_TRUNC = """
rule trunc-monomial-split-without-sign
  doc:       the truncating split of monomial multiples without its sign condition
  semantics: trunc
  pattern:   (sum(K*t, tdivides(E*d, K*t)) + y) // (E*d)
  guard:     fits_int64(y // (E*d)) and vmin(E*d) > 0
  rewrite:   sum(tquotient(K*t, E*d)) + y // (E*d)
"""


@pytest.mark.slow
def test_prover_proves_the_monomial_rules() -> None:
    pytest.importorskip("z3")
    from quorem.verify.prove import obligations_of, prove
    from quorem.verify.termination import (
        check_nested,
        check_termination,
        nested_obligations,
        termination_obligations,
    )

    ds = default_ruleset()
    for name in (
        "div-exact-monomial",
        "div-split-monomial-multiples",
        "mod-drop-monomial-multiples",
    ):
        rule = ds.rule(name)
        for ob in obligations_of(rule, 2):
            assert prove(ob, timeout=60).status in ("proven", "proven-int64"), ob.label
        for ob in termination_obligations(rule, 2):
            assert check_termination(ob).status == "proven", ob.label
        for ob in nested_obligations(rule, 2):
            assert check_nested(ob).status == "proven", ob.label


@pytest.mark.slow
def test_prover_does_not_prove_the_trunc_split_without_its_sign_condition() -> None:
    """Z3 finds a model (the engine cannot replay it: its t is no product with d)."""
    pytest.importorskip("z3")
    from quorem.verify.prove import obligations_of, prove

    (rule,) = RuleSet.from_text(_UNSOUND_TRUNC, "bug.rules", allow_unproven=True).rules
    results = [prove(ob, timeout=20) for ob in obligations_of(rule, 1) if ob.kind == "equivalence"]
    assert results and all(r.status not in ("proven", "proven-int64") for r in results)
    assert all(r.counterexample for r in results), [r.report for r in results]
