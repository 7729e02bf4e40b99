"""Queries as standard SMT-LIB: the text of exactly the query Z3 is given."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

import quorem  # noqa: E402
from quorem.verify.prove import obligation_query, obligations_of, prove  # noqa: E402
from quorem.verify.smtlib import UnsupportedTermError, obligation_script, to_smtlib  # noqa: E402

HAS_CVC5 = importlib.util.find_spec("cvc5") is not None
needs_cvc5 = pytest.mark.skipif(not HAS_CVC5, reason="cvc5 is not installed")

# Rules Z3 proves at once from the text as well: the test asks it for the expected answer.
QUICK = ["max-of-same", "divmod-recombine", "mod-of-small-range", "exact-quotient"]


def _cvc5_parse(text: str) -> int:
    """Run every command of ``text`` but check-sat in cvc5; the number of assertions."""
    import cvc5

    solver = cvc5.Solver(cvc5.TermManager())
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "test.smt2")
    symbols = parser.getSymbolManager()
    asserts = 0
    while True:
        command = parser.nextCommand()
        if command.isNull():
            return asserts
        name = command.getCommandName()
        asserts += name == "assert"
        if name != "check-sat":
            command.invoke(solver, symbols)


# ------------------------------------------------------------------------ the writer
def test_writer_prints_only_standard_text() -> None:
    """What Z3's own printer gets wrong: one-argument sums, empty conjunctions, quoting."""
    x, t = z3.Int("x"), z3.Int("t[1]")
    odd = z3.Int("vmin(a|b)")
    assertions = [
        z3.Sum(t) > 0,  # Z3 prints (+ |t[1]|)
        z3.And(),  # Z3 prints a bare and
        x == -5,
        z3.Or(odd < x),
        z3.Int("abs") == x * 2,  # a theory symbol as a name
    ]
    assert "(+ |t[1]|)" in z3.Sum(t).sexpr()  # why the writer exists
    script = to_smtlib(assertions, comments=["two\nlines"])
    text = script.text
    assert "(assert (> |t[1]| 0))" in text
    assert "(assert true)" in text
    assert "(assert (= x (- 5)))" in text
    assert "\\" not in text and "|vmin(a_b)|" in text
    assert "(declare-fun abs_2 () Int)" in text
    assert script.symbols["abs"] == "abs_2"
    assert text.startswith("; two lines\n")
    assert script.logic == "QF_LIA"
    assert to_smtlib([x * x > 0]).logic == "QF_NIA"
    assert text.rstrip().endswith("(check-sat)")
    if HAS_CVC5:
        assert _cvc5_parse(text) == len(assertions)
    parsed = z3.parse_smt2_string(text)
    assert len(parsed) == len(assertions)


def test_writer_refuses_what_smtlib_ints_cannot_state() -> None:
    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    with pytest.raises(UnsupportedTermError):
        to_smtlib([f(z3.Int("x")) > 0])
    with pytest.raises(UnsupportedTermError):
        to_smtlib([z3.Real("r") > 0])
    with pytest.raises(UnsupportedTermError):
        to_smtlib([z3.Int("x") % 3 == z3.Int("x") ** 2])


@pytest.mark.parametrize("name", QUICK)
def test_text_is_the_statement_z3_is_given(name: str) -> None:
    """Parsed back, the text is the query itself: Z3 shows the two conjunctions equal."""
    rule = quorem.default_ruleset().rule(name)
    for ob in obligations_of(rule, 2):
        query = obligation_query(ob)
        parsed = z3.parse_smt2_string(obligation_script(ob).text)
        s = z3.Solver()
        s.set("timeout", 10_000)
        s.add(z3.And(*query) != z3.And(*parsed))
        assert s.check() == z3.unsat, ob.label


def test_text_is_the_query_prove_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The very assertions prove() hands Z3 first print to the text written for them."""
    from quorem.verify import prove as prove_module

    sent: list[list[Any]] = []
    real = prove_module._check

    def spy(premises: list[Any], timeout: float, seed: int = 0) -> Any:
        sent.append(list(premises))
        return real(premises, timeout, seed)

    monkeypatch.setattr(prove_module, "_check", spy)
    for name in QUICK:
        for ob in obligations_of(quorem.default_ruleset().rule(name), 2):
            sent.clear()
            assert prove(ob, 10).ok
            assert to_smtlib(sent[0]).text == to_smtlib(obligation_query(ob)).text, ob.label
