"""The native encoding and sign splits (issue 24): same statement, both solvers decide it.

Every fact the encodings rely on is proven here by Z3 and, when installed, by cvc5,
from one SMT-LIB text: SMT-LIB ``div``/``mod`` stated by sign are exactly the floor,
truncating and Euclidean quotient and remainder the purified encoding constrains, and
the sign cases of a split cover every assignment.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

import quorem  # noqa: E402
from benchmarks.nonlinear import VARIANTS, queries, smt2_text  # noqa: E402
from quorem.ops import Semantics  # noqa: E402
from quorem.rulefile import parse_rules  # noqa: E402
from quorem.verify.division import division_axioms, native_division, sign_set  # noqa: E402
from quorem.verify.encode import encode_rule  # noqa: E402
from quorem.verify.prove import (  # noqa: E402
    Obligation,
    check_query,
    obligations_of,
    prove,
    split_queries,
)
from quorem.verify.split import (  # noqa: E402
    DIVISOR_RELATIONS,
    GCD_RELATIONS,
    NUMERATOR_RELATIONS,
    Split,
    exhaustive,
    sign_cases,
    split_plan,
)

SEMANTICS = (Semantics.FLOOR, Semantics.TRUNC, Semantics.EUCLID)


def _unsat_z3(assertions: list[object]) -> bool:
    """Z3's answer on the text, with quorem verify's restart schedule (prove.check_query)."""
    parsed = list(z3.parse_smt2_string(smt2_text(assertions)))
    answer, _ = check_query(parsed, 20.0)
    return bool(answer == z3.unsat)


def _unsat_cvc5(assertions: list[object]) -> bool:
    cvc5 = pytest.importorskip("cvc5")
    tm = cvc5.TermManager()
    slv = cvc5.Solver(tm)
    slv.setOption("tlimit-per", "20000")
    parser = cvc5.InputParser(slv)
    text = smt2_text(assertions).replace("(check-sat)", "")
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "test")
    sm = parser.getSymbolManager()
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        cmd.invoke(slv, sm)
    return bool(slv.checkSat().isUnsat())


def _both_refute(assertions: list[object]) -> None:
    assert _unsat_z3(assertions), "z3"
    assert _unsat_cvc5(assertions), "cvc5"


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


@pytest.mark.parametrize("sem", SEMANTICS, ids=[s.value for s in SEMANTICS])
@pytest.mark.parametrize("known", ["none", "divisor", "numerator", "both"])
def test_native_division_is_the_purified_division(sem: Semantics, known: str) -> None:
    """For b != 0 the native terms satisfy the division axioms, whose solution is unique.

    So a query stated natively is the purified query with the quotient and remainder
    substituted: the same statement. Proven per sign of ``a`` and ``b`` (the four cases
    cover ``b != 0``), for the terms written when the divisor's sign, the numerator's,
    both or neither are known; the ``If``-terms written when neither is (``none``) are
    shown equal to those of ``both``.
    """
    if known == "numerator" and sem is not Semantics.TRUNC:
        pytest.skip("the numerator's sign selects a branch of truncating division only")
    q, r, p, m = z3.Ints("q r p m")
    every = frozenset({-1, 0, 1})
    for sa, sb in itertools.product((1, -1), repeat=2):
        b_known = frozenset({sb})
        a_known = frozenset({0, 1} if sa > 0 else {-1})
        b_signs = b_known if known in ("divisor", "both") else every
        a_signs = a_known if known in ("numerator", "both") else every
        # A sign split states its cases by a change of variables (quorem.verify.encode):
        # b > 0, or b == -p for p > 0; a >= 0, or a == -m for m > 0. A sign not split
        # on is only a premise here: b is p with p > 0 or p < 0.
        b = -p if sb < 0 and b_signs == b_known else p
        a = -m if sa < 0 and a_signs == a_known else m
        case = [
            p > 0 if b_signs == b_known or sb > 0 else p < 0,
            m >= 0 if sa > 0 else m > 0 if a_signs == a_known else m < 0,
        ]
        nq, nr = native_division(a, b, sem, b_signs, a_signs)
        if known == "none" and sem is not Semantics.EUCLID:
            # The If-terms select the branch the signs select (Euclidean: no If-term).
            kq, kr = native_division(a, b, sem, b_known, a_known)
            _both_refute([*case, z3.Not(z3.And(nq == kq, nr == kr))])
            continue

        # In the case, the axioms are a == b*q + r and one range of r (cvc5 times out
        # with the axioms' If-terms, which this step removes) ...
        size = p if b_signs == b_known or sb > 0 else -p  # |b|
        sign = sb if sem is Semantics.FLOOR else 1 if sem is Semantics.EUCLID else sa

        # Z3's values are Any to the type checker (z3-solver ships no types).
        def plain(q: Any, r: Any, a: Any = a, b: Any = b) -> Any:
            rng = z3.And(r >= 0, r < size) if sign > 0 else z3.And(r <= 0, r > -size)  # noqa: B023
            return z3.And(a == b * q + r, rng)

        axioms = z3.And(*division_axioms(a, b, q, r, sem))
        _both_refute([*case, axioms != plain(q, r)])
        # ... the native pair satisfies them ...
        _both_refute([*case, z3.Not(plain(nq, nr))])
        # ... and they have one solution at most.
        q2, r2 = z3.Ints("q2 r2")
        _both_refute([*case, plain(q, r), plain(q2, r2), z3.Or(q != q2, r != r2)])


def test_native_division_agrees_with_the_engine_on_a_grid() -> None:
    """Concrete check against Python's floor, truncating and Euclidean division."""
    for a, b in itertools.product(range(-7, 8), [-3, -2, -1, 1, 2, 3]):
        want = {
            Semantics.FLOOR: (a // b, a % b),
            Semantics.TRUNC: (
                _sign(a) * _sign(b) * (abs(a) // abs(b)),
                _sign(a) * (abs(a) % abs(b)),
            ),
            Semantics.EUCLID: ((a - a % abs(b)) // b, a % abs(b)),
        }
        for sem, (wq, wr) in want.items():
            nq, nr = native_division(z3.IntVal(a), z3.IntVal(b), sem)
            got = (z3.simplify(nq).as_long(), z3.simplify(nr).as_long())
            assert got == (wq, wr), (sem, a, b)


@pytest.mark.slow
def test_sign_cases_are_exhaustive() -> None:
    """The cases of a split cover every assignment; one case fewer does not."""
    for n in range(4):
        plan: Split = [(f"N{i}", DIVISOR_RELATIONS) for i in range(n)]
        plan += [("x", NUMERATOR_RELATIONS)]
        cases = sign_cases(plan)
        assert len(cases) == 3**n * 2
        assert exhaustive(cases)
        for i in range(len(cases)):
            assert not exhaustive(cases[:i] + cases[i + 1 :])


def test_split_plan() -> None:
    """Split on the divisors' names; under truncation also on a numerator name."""
    rules = quorem.default_ruleset()
    div = DIVISOR_RELATIONS
    assert split_plan(rules.rule("nested-div"), Semantics.FLOOR, 0) == [("B", div), ("C", div)]
    assert split_plan(rules.rule("nested-div-trunc"), Semantics.TRUNC, 0) == [
        ("B", div),
        ("C", div),
        ("a", NUMERATOR_RELATIONS),
    ]
    assert split_plan(rules.rule("exact-quotient"), Semantics.FLOOR, 2) == [("D", div)]


def test_sign_set() -> None:
    x, y = z3.Ints("x y")
    known = {x.get_id(): frozenset({0, 1}), y.get_id(): frozenset({-1})}
    assert sign_set(x * y, known) == {0, -1}
    assert sign_set(x - y, known) == {1}
    assert sign_set(x / y, known) == {0, -1}
    assert sign_set(y / y, known) == {1}
    assert sign_set(y % y, known) == {0, 1}
    assert sign_set(x + z3.Int("z"), known) == {-1, 0, 1}


def test_sign_set_is_sound() -> None:
    """Each rule of sign_set, checked on a grid of values."""
    x, y = z3.Ints("x y")
    exprs = [x * y, x - y, x + y, x / y, y / x, x % y, -x, z3.If(x > y, x, y)]
    for vx, vy in itertools.product(range(-4, 5), repeat=2):
        known = {
            x.get_id(): frozenset({_sign(vx)}),
            y.get_id(): frozenset({_sign(vy)}),
        }
        for e in exprs:
            if (vy == 0 and e.eq(x / y)) or (vx == 0 and e.eq(y / x)):
                continue
            if vy == 0 and e.eq(x % y):
                continue
            value = z3.simplify(z3.substitute(e, (x, z3.IntVal(vx)), (y, z3.IntVal(vy))))
            assert _sign(value.as_long()) in sign_set(e, known), (e, vx, vy)


def test_a_sign_case_is_a_premise() -> None:
    rule = quorem.default_ruleset().rule("nested-div")
    enc = encode_rule(rule, Semantics.FLOOR, 0, encoding="native", signs={"B": "<0", "C": ">0"})
    text = " ".join(str(p) for p in enc.premises)
    # B < 0 is a change of variables, B = -neg!B with neg!B > 0; C > 0 a premise.
    assert "neg!B > 0" in text and "C > 0" in text
    assert "B" not in text.replace("neg!B", "")
    # The divisors' signs are known: only the branch they select is written, with
    # positive divisors: (-a / neg!B) / C and -a / (neg!B*C).
    assert "If(" not in str(enc.lhs) and "If(" not in str(enc.rhs)
    assert str(enc.rhs) == "-a/(neg!B*C)"
    zero = encode_rule(rule, Semantics.FLOOR, 0, encoding="native", signs={"B": "=0"})
    assert any(z3.is_false(z3.simplify(p)) for p in zero.premises)


def test_split_queries_cover_the_cases() -> None:
    rule = quorem.default_ruleset().rule("nested-div")
    (ob,) = [o for o in obligations_of(rule, 2) if o.kind == "equivalence"]
    cases = [case for case, _ in split_queries(ob)]
    assert cases == sign_cases([("B", DIVISOR_RELATIONS), ("C", DIVISOR_RELATIONS)])


def test_nested_div_native_split_both_solvers() -> None:
    """The motivating rule: every case refuted by Z3 and by cvc5."""
    rule = quorem.default_ruleset().rule("nested-div")
    (ob,) = [o for o in obligations_of(rule, 2) if o.kind == "equivalence"]
    for _, assertions in queries(ob, VARIANTS["native-split"]):
        _both_refute(list(assertions))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["congruence-div-lone-down", "congruence-mod"])
def test_congruence_native_split_both_solvers(name: str) -> None:
    """The bucket argument (``vmin(s) // D == vmax(s) // D``): every case refuted by both
    solvers, through the ``monotone`` instances on the range's bounds."""
    rule = quorem.default_ruleset().rule(name)
    obs = [o for o in obligations_of(rule, 2) if o.kind == "equivalence"]
    assert obs
    for ob in obs:
        for _, assertions in queries(ob, VARIANTS["native-split"]):
            _both_refute(list(assertions))


def test_split_plan_takes_a_gcd() -> None:
    """A rule dividing by ``gcd(K)`` splits on it, ``> 0`` or ``== 0`` (never negative),
    and the case is a premise of the native encoding."""
    rule = quorem.default_ruleset().rule("sum-lt-const-common-factor")
    plan = split_plan(rule, Semantics.FLOOR, 2)
    assert plan == [("gcd#1", GCD_RELATIONS)]
    cases = sign_cases(plan)
    assert exhaustive(cases)
    assert not exhaustive(cases[:1])
    enc = encode_rule(rule, Semantics.FLOOR, 2, encoding="native", signs={"gcd#1": ">0"})
    assert "gcd#1 > 0" in " ".join(str(p) for p in enc.premises)


@pytest.mark.parametrize(
    "name",
    [
        "sum-lt-const-common-factor-neg",
        "sums-le-common-factor-right",
        "sums-eq-common-factor-never",
        "sum-eq-const-never",
    ],
)
def test_common_factor_native_split_both_solvers(name: str) -> None:
    """Comparisons divided through by a gcd: every case refuted by both solvers, through
    the ``quotient-bound`` and equation instances (arity 2)."""
    rule = quorem.default_ruleset().rule(name)
    obs = [o for o in obligations_of(rule, 2) if o.kind == "equivalence" and o.arity == 2]
    assert obs
    for ob in obs[:1]:
        for _, assertions in queries(ob, VARIANTS["native-split"]):
            _both_refute(list(assertions))


@pytest.mark.parametrize("encoding", ["native", "native-split"])
def test_prove_with_encoding(encoding: str) -> None:
    rule = quorem.default_ruleset().rule("nested-div")
    (ob,) = obligations_of(rule, 2, encoding)[:1]
    r = prove(ob, timeout=20)
    assert r.status == "proven", r.report
    assert encoding in r.method


BAD = """
rule nested-div-no-sign
  doc:       (a // b) // c == a // (b*c) without c > 0: wrong under floor division
  semantics: floor
  pattern:   (a // B) // C
  guard:     fits_int64(B*C)
  rewrite:   a // (B*C)
"""


@pytest.mark.parametrize("encoding", ["native", "native-split"])
def test_unsound_rule_still_caught(encoding: str) -> None:
    """A failed case falls back to the default query: a replayed counterexample."""
    (rule,) = parse_rules(BAD, "bad.rules")
    ob = Obligation(rule, Semantics.FLOOR, 0, "equivalence", encoding)
    r = prove(ob, timeout=20)
    assert r.status == "unsound", (r.status, r.report)


def test_smt2_text_is_standard() -> None:
    x = z3.Int("x")
    text = smt2_text([z3.Sum(x) > 0, z3.And(*[]) if False else z3.BoolVal(True)])
    assert "(+ x)" not in text
    assert text.rstrip().endswith("(check-sat)")


KNOWN_BUGS = sorted((Path(__file__).parent / "known_bugs").glob("*.rules"))


@pytest.mark.parametrize("path", KNOWN_BUGS, ids=[p.stem for p in KNOWN_BUGS])
def test_split_of_an_unsound_rule_has_a_satisfiable_case(path: Path) -> None:
    """The split itself refutes nothing true: some case of a wrong rule has a model.

    (The fallback to the unsplit query would report the counterexample anyway; this
    checks that the cases, as the change of variables states them, still contain it.)
    """
    (rule,) = parse_rules(path.read_text(), str(path))
    for ob in obligations_of(rule, 2, "native-split"):
        if ob.kind != "equivalence":
            continue
        answers = [check_query(assertions, 20.0)[0] for _, assertions in split_queries(ob)]
        assert z3.sat in answers, answers
