"""Queries as standard SMT-LIB (``quorem verify --smt2``), checked by a second solver
(``--confirm cvc5``), and proofs re-run under other Z3 seeds (``--seeds``)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from support import REPO, run_verify  # noqa: E402

import quorem  # noqa: E402
from quorem.cli import verify as cli  # noqa: E402
from quorem.cli.verify import run as verify_run  # noqa: E402
from quorem.verify import confirm, digest, jobs  # noqa: E402
from quorem.verify.prove import obligation_query, obligations_of, prove  # noqa: E402
from quorem.verify.smtlib import (  # noqa: E402
    UnsupportedTermError,
    file_name,
    obligation_script,
    to_smtlib,
)

HAS_CVC5 = importlib.util.find_spec("cvc5") is not None
needs_cvc5 = pytest.mark.skipif(not HAS_CVC5, reason="cvc5 is not installed")

# Rules Z3 proves at once from the text as well: the test asks it for the expected answer.
QUICK = ["max-of-same", "divmod-recombine", "mod-of-small-range", "exact-quotient"]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A proof cache of this test's own."""
    path = tmp_path / "cache"
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(path))
    return path


def _cvc5_parse(text: str) -> int:
    """Run every command of ``text`` but check-sat in cvc5; the number of assertions."""
    import cvc5

    terms = cvc5.TermManager()
    solver = cvc5.Solver(terms)
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
    real = prove_module.check_query

    def spy(premises: list[Any], timeout: float, seed: int = 0, rlimit: int | None = None) -> Any:
        sent.append(list(premises))
        return real(premises, timeout, seed, rlimit)

    monkeypatch.setattr(prove_module, "check_query", spy)
    for name in QUICK:
        for ob in obligations_of(quorem.default_ruleset().rule(name), 2):
            sent.clear()
            assert prove(ob, 10).ok
            assert to_smtlib(sent[0]).text == to_smtlib(obligation_query(ob)).text, ob.label


# --------------------------------------------------------------------------- --smt2
def test_smt2_files_parse_in_z3_and_cvc5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "smt2"
    argv = ["--smt2", str(folder), "--arity", "2"] + [a for n in QUICK for a in ("--rule", n)]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN, out
    rules = [quorem.default_ruleset().rule(n) for n in QUICK]
    expected = {file_name(ob) for r in rules for ob in obligations_of(r, 2)}
    files = sorted(folder.iterdir())
    assert {f.name for f in files} == expected
    assert f"wrote {len(expected)} SMT-LIB 2.6 files" in out
    assert "not written: termination obligations" in out
    for path in files:
        text = path.read_text()
        comments = [ln[2:] for ln in text.splitlines() if ln.startswith("; ")]
        header = dict(c.split(": ", 1) for c in comments[1:])
        assert header["expected"].startswith("unsat")
        assert header["rule"] in QUICK and header["obligation"] in ("equivalence", "int64")
        assert header["semantics"] in path.name and f".k{header['arity'][0]}." in path.name
        assert re.fullmatch(r"rules/\S+\.rules:\d+", header["location"]), header
        assert re.fullmatch(r"[A-Za-z0-9_.-]+\.smt2", path.name)
        s = z3.Solver()
        s.set("timeout", 20_000)
        s.add(z3.parse_smt2_file(str(path)))
        assert str(s.check()) == "unsat", path.name
        if HAS_CVC5:
            assert _cvc5_parse(text) > 0, path.name


@pytest.mark.slow
def test_smt2_writes_every_shipped_obligation_in_the_ints_theory(tmp_path: Path) -> None:
    """No shipped rule needs an operator outside the Ints theory (none is skipped)."""
    rules = jobs.load_rules([])
    obs = [ob for r in rules for ob in obligations_of(r, 1)]
    for ob in obs:
        assert obligation_script(ob).text.count("(check-sat)") == 1


# ---------------------------------------------------------------------- --confirm
def _results(out: str) -> list[dict[str, Any]]:
    return list(json.loads(out)["rules"])


@pytest.mark.slow
@needs_cvc5
def test_confirm_cvc5_reports_json_junit_and_caches(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--rule", "max-of-same", "--rule", "divmod-recombine", "--obligation", "equivalence"]
    argv += ["--obligation", "int64", "--confirm", "cvc5"]
    report = tmp_path / "junit.xml"
    # With worker processes: the confirmation runs in the job that proved the obligation.
    code, out = run_verify([*argv, "--jobs", "2", "--junit", str(report)], capsys)
    assert code == cli.EXIT_PROVEN, out
    lines = [ln for ln in out.splitlines() if " [" in ln]
    assert len(lines) == 8
    assert all(re.match(r"proven(-int64)? \(z3\+cvc5\) ", ln) for ln in lines), lines
    assert "cvc5: 8 confirmed (z3+cvc5), 0 z3 only, 0 disagree" in out
    props = [
        {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(report).getroot().iter("testcase")
    ]
    assert all(p["confirmation"] == "z3+cvc5" and p["cvc5 answer"] == "unsat" for p in props)
    code, out = run_verify([*argv, "--json"], capsys)
    assert code == cli.EXIT_PROVEN
    results = _results(out)
    assert all(r["confirmation"]["cached"] for r in results)
    assert {r["confirmation"]["verdict"] for r in results} == {"z3+cvc5"}
    summary = json.loads(out)["summary"]["confirmation"]
    assert summary["z3+cvc5"] == 8 and summary["solver"] == "cvc5"


@pytest.mark.slow
@needs_cvc5
def test_confirm_checks_a_counterexample_too(capsys: pytest.CaptureFixture[str]) -> None:
    """A refuted obligation's query is sat for cvc5 as well."""
    rules = str(REPO / "tests" / "known_bugs" / "trunc_split_without_sign.rules")
    argv = [rules, "--no-cache", "--obligation", "equivalence", "--confirm", "cvc5"]
    # cvc5 finds this model in 20-25 s here: the quotient gap lemmas (two divisions by N)
    # slow its search for a model (0.0 s without them); the default 20 s is too close.
    argv += ["--confirm-timeout", "90"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_UNSOUND
    assert "unsound (z3+cvc5) split-multiple-trunc-no-sign" in out


@needs_cvc5
def test_cvc5_unknown_is_proven_z3_only_and_not_cached(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def timeout(script: Any, seconds: float) -> tuple[str, str, dict[str, int]]:
        calls.append(seconds)
        return "unknown", "timeout", {}

    monkeypatch.setattr(confirm, "_run_cvc5", timeout)
    argv = ["--rule", "max-of-same", "--obligation", "equivalence", "--confirm", "cvc5"]
    argv += ["--confirm-timeout", "3"]
    for _ in range(2):
        code, out = run_verify(argv, capsys)
        assert code == cli.EXIT_PROVEN
        assert "proven (z3 only) max-of-same" in out and "cvc5 unknown" in out
    assert calls == [3.0, 3.0]  # asked again: an unknown is never cached


@needs_cvc5
def test_disagreement_fails_the_run_with_both_answers_and_the_model_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cvc5 that answers sat on a query Z3 refutes: its "model" is no counterexample.
    model = {"x": 7, "N": 3, "q!1": 2, "r!2": 1, "fits_int64!1": True}
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: ("sat", "", model))
    report = tmp_path / "junit.xml"
    argv = ["--rule", "divmod-recombine", "--obligation", "equivalence", "--no-cache"]
    argv += ["--confirm", "cvc5", "--junit", str(report)]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_UNSOUND
    assert "DISAGREE      divmod-recombine [floor equivalence]" in out
    assert "rule divmod-recombine (floor equivalence): DISAGREE" in out
    assert "  z3 " in out and ": unsat: proven (IntAux)" in out
    assert re.search(r"  cvc5 \S+: sat", out)
    assert "cvc5's model, replayed through the engine: the engine does not confirm it" in out
    assert "input:" in out and "the engine's values agree" in out
    assert "3 DISAGREE" in out
    failures = [f.get("message") for f in ET.parse(report).getroot().iter("failure")]
    assert failures == ["DISAGREE"] * 3
    code, out = run_verify([*argv, "--json"], capsys)
    first = _results(out)[0]
    assert first["status"] == "disagree" and first["z3_status"] == "proven"
    assert first["confirmation"]["model"] == {"x": 7, "N": 3}
    assert json.loads(out)["summary"]["disagree"] == 3


def test_confirm_without_cvc5_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cvc5", None)  # the import fails
    confirm.confirmer_version.cache_clear()
    try:
        code = cli.main(["--rule", "max-of-same", "--confirm", "cvc5"])
    finally:
        confirm.confirmer_version.cache_clear()
    assert code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert 'pip install "quorem[confirm]"' in err and "Traceback" not in err


def test_confirmation_code_is_part_of_the_cache_digest() -> None:
    """A confirmation's cache key holds the proof's, whose digest covers the writer."""
    assert {"quorem.verify.smtlib", "quorem.verify.confirm"} <= set(digest.proof_modules())


# -------------------------------------------------------------------------- --seeds
def test_seeds_prove_each_obligation_under_each_seed(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--rule", "max-of-same", "--obligation", "equivalence", "--seeds", "3", "--json"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN
    (r,) = _results(out)
    assert [s["seed"] for s in r["seeds"]] == [0, 1, 2]
    assert {s["status"] for s in r["seeds"]} == {"proven"}
    code, out = run_verify(argv, capsys)
    (r,) = _results(out)
    assert all(s.get("cached") for s in r["seeds"][1:])


def test_a_seed_dependent_proof_is_unknown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def flaky(ob: Any, timeout: float, seed: int = 0) -> Any:
        r = prove(ob, timeout, seed)
        if seed == 2:
            r.status, r.method = "unknown", "IntAux"
        return r

    monkeypatch.setattr(jobs, "prove", flaky)
    # Run "alone" in this process, so that the flaky prover is the one asked again.
    monkeypatch.setattr(jobs, "_in_new_process", lambda fn, *args: fn(*args))
    argv = ["--rule", "max-of-same", "--obligation", "equivalence", "--no-cache"]
    code, out = run_verify([*argv, "--seeds", "3"], capsys)
    assert code == cli.EXIT_UNKNOWN
    assert "seed-dependent max-of-same [any equivalence]" in out
    assert "seed 2: unknown (IntAux" in out and "seed 1: proven (IntAux" in out
    assert run_verify([*argv, "--seeds", "3", "--allow-unknown"], capsys)[0] == 0
    assert run_verify([*argv, "--seeds", "2"], capsys)[0] == cli.EXIT_PROVEN


def test_a_proof_of_another_strength_under_a_seed_is_still_a_proof(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """proven under seed 0, proven-int64 under seed 1: the verdict does not depend on it."""

    def weaker(ob: Any, timeout: float, seed: int = 0) -> Any:
        r = prove(ob, timeout, seed)
        if seed == 1:
            r.status = "proven-int64"
        return r

    monkeypatch.setattr(jobs, "prove", weaker)
    monkeypatch.setattr(jobs, "_in_new_process", lambda fn, *args: fn(*args))
    argv = ["--rule", "max-of-same", "--obligation", "equivalence", "--no-cache", "--json"]
    code, out = run_verify([*argv, "--seeds", "2"], capsys)
    assert code == cli.EXIT_PROVEN
    (r,) = _results(out)
    assert r["status"] == "proven"
    assert [s["status"] for s in r["seeds"]] == ["proven", "proven-int64"]


def test_seed_moves_every_solver_of_the_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed n runs the whole restart schedule with seeds of its own."""
    from quorem.verify import prove as prove_module

    seen: list[int] = []
    original = prove_module._solver

    def spy(
        timeout: float, strategy: str = "default", seed: int = 0, rlimit: int | None = None
    ) -> Any:
        seen.append(seed)
        return original(timeout, strategy, seed, rlimit)

    monkeypatch.setattr(prove_module, "_solver", spy)
    ob = obligations_of(quorem.default_ruleset().rule("max-of-same"), 1)[0]
    assert prove(ob, 5, seed=0).ok
    zero = set(seen)
    seen.clear()
    assert prove(ob, 5, seed=1).ok
    assert seen and not zero & set(seen)


@needs_cvc5
def test_a_proof_by_sign_cases_is_confirmed_case_by_case(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--encoding native-split: cvc5 gets each sign case Z3 refuted, and must refute all."""
    argv = ["--rule", "nested-div", "--obligation", "equivalence", "--no-cache"]
    argv += ["--encoding", "native-split", "--confirm", "cvc5", "--json"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN, out
    [r] = _results(out)
    assert "native-split (" in r["method"]
    assert r["confirmation"]["verdict"] == "z3+cvc5", r["confirmation"]

    # One case cvc5 cannot decide (in any of its statements) leaves the proof to Z3
    # alone, and names the case.
    def one_case_unknown(script: Any, seconds: float) -> tuple[str, str, dict[str, int]]:
        return ("unknown" if "sign case: B >0, C <0" in script.text else "unsat", "timeout", {})

    monkeypatch.setattr(confirm, "_run_cvc5", one_case_unknown)
    code, out = run_verify(argv, capsys)
    [r] = _results(out)
    assert r["confirmation"]["verdict"] == "z3 only"
    assert "sign case B >0, C <0: unknown timeout" in r["confirmation"]["reason"]


@pytest.mark.slow
@needs_cvc5
def test_a_purified_proof_is_confirmed_through_its_sign_cases(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A symbolic divisor: Z3 proved the purified text; both solvers then refute each sign
    case (read from one text), and the confirmation names the restatement."""
    argv = ["--rule", "congruence-div-lone-down", "--obligation", "equivalence"]
    argv += ["--no-cache", "--confirm", "cvc5", "--json"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN, out
    results = _results(out)
    assert results and all(r["method"] == "IntAux" for r in results)
    for r in results:
        assert r["confirmation"]["verdict"] == "z3+cvc5", r["confirmation"]
        assert r["confirmation"]["method"] == "IntAux; restated: native-split"
    # cvc5 leaving a case (and then the purified text) leaves the proof to Z3 alone, and
    # the reason names the case.
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: ("unknown", "timeout", {}))
    code, out = run_verify(argv, capsys)
    for r in _results(out):
        assert r["confirmation"]["verdict"] == "z3 only"
        assert r["confirmation"]["method"] == "IntAux"
        assert "restated, sign case D >0: unknown timeout" in r["confirmation"]["reason"]
    # A Z3 that does not refute a case: no restatement (cvc5 gets the purified text).
    monkeypatch.setattr(confirm, "check_query", lambda assertions, seconds: (z3.unknown, None))
    code, out = run_verify(argv, capsys)
    for r in _results(out):
        assert "z3 unknown" in r["confirmation"]["reason"]


# ------------------------------------------------------- searches: termination, intervals
def test_recording_keeps_the_refuted_queries_only() -> None:
    from quorem.verify.record import decided, recording

    x = z3.Int("x")
    refuted, satisfied = z3.Solver(), z3.Solver()
    refuted.add(x > 0, x < 0)
    satisfied.add(x > 0)
    assert decided(refuted) == z3.unsat  # not recording: nothing kept, nothing fails
    with recording() as outer:
        with recording() as inner:
            assert decided(refuted) == z3.unsat
        assert decided(satisfied) == z3.sat
        assert decided(refuted) == z3.unsat
    assert [str(q) for q in inner] == ["[x > 0, x < 0]"]
    assert len(outer) == 1


@needs_cvc5
def test_a_search_is_confirmed_query_by_query(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Termination: cvc5 refutes each query the measure's proof rested on; the nested
    order of a rule it decides by computing rests on none. Cached like proofs."""
    argv = ["--rule", "max-of-same", "--obligation", "termination"]
    argv += ["--obligation", "termination-context", "--confirm", "cvc5", "--json"]
    code, out = run_verify(argv, capsys)
    assert code == cli.EXIT_PROVEN, out
    by_kind = {r["obligation"]: r["confirmation"] for r in _results(out)}
    assert by_kind["termination"]["verdict"] == "z3+cvc5"
    assert re.search(r": [1-9]\d* queries$", by_kind["termination"]["method"])
    assert by_kind["termination-context"]["verdict"] == "no query"
    summary = json.loads(out)["summary"]["confirmation"]
    assert (summary["z3+cvc5"], summary["no query"], summary["not checked"]) == (1, 1, 0)
    # Cached: not proven again, confirmations kept.
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: 1 / 0)
    code, out = run_verify(argv, capsys)
    assert all(r["confirmation"]["cached"] for r in _results(out))  # no cvc5 call
    # A query cvc5 satisfies: DISAGREE, the run fails, the query is shown.
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: ("sat", "", {"x": 1}))
    code, out = run_verify([*argv, "--no-cache"], capsys)
    assert code == cli.EXIT_UNSOUND, out
    [r] = [r for r in _results(out) if r["obligation"] == "termination"]
    assert r["status"] == "disagree"
    code, out = run_verify([*argv[:-1], "--no-cache"], capsys)
    assert "DISAGREE" in out and "cvc5 satisfies a query Z3 refuted" in out, out


@needs_cvc5
def test_an_interval_proof_is_confirmed_query_by_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quorem.verify import jobs as jobs_module

    seen: list[str] = []

    def spy(script: Any, seconds: float) -> tuple[str, str, dict[str, int]]:
        seen.append(script.text)
        return "unsat", "", {}

    monkeypatch.setattr(confirm, "_run_cvc5", spy)
    job = jobs_module.Job(("interval",), "max", checks=jobs_module.Checks(confirm="cvc5"))
    [r] = jobs_module._run(job, {})
    assert r["status"] == "proven" and r["confirmation"]["verdict"] == "z3+cvc5"
    assert seen and len(seen) == len(set(seen))  # each distinct query once


def _floordiv_path() -> list[Any]:
    """A path of floor division's transfer function: numerator <= 0, divisor < 0.

    The quotient ``div(-x, -y)`` lies between the quotients of the ranges' corners.
    """
    lo_a, x, hi_a, lo_b, y, hi_b = z3.Ints("lo_a x hi_a lo_b y hi_b")
    low, high = (-hi_a) / (-lo_b), (-lo_a) / (-hi_b)
    quotient = (-x) / (-y)
    within = z3.And(low <= quotient, quotient <= high)
    return [lo_a <= x, x <= hi_a, lo_b <= y, y <= hi_b, hi_b <= -1, hi_a <= 0, z3.Not(within)]


# A path query of Euclidean division's transfer function as quorem verify records it
# (the divisor negative, the numerator of either sign).
_EUCLIDDIV_PATH = """
(declare-fun lo_a () Int)
(declare-fun x () Int)
(declare-fun hi_a () Int)
(declare-fun lo_b () Int)
(declare-fun y () Int)
(declare-fun hi_b () Int)
(assert (<= lo_a x))
(assert (<= x hi_a))
(assert (<= lo_b y))
(assert (<= y hi_b))
(assert (distinct y 0))
(assert (not (>= hi_b 1)))
(assert (<= lo_b (- 1)))
(assert (not (> hi_b (- 1))))
(assert (distinct (- hi_b) 0))
(assert (not (>= lo_a 0)))
(assert (>= hi_a 0))
(assert (not (and
  (>= (div x y) (- (ite (> (- hi_b) 0) (div hi_a (- hi_b)) (div (- hi_a) (- (- hi_b))))))
  (<= (div x y) (- (ite (> (- hi_b) 0) (div lo_a (- hi_b)) (div (- lo_a) (- (- hi_b)))))))))
"""


def _eucliddiv_path() -> list[Any]:
    """``div(x, y)`` by the negative ``y`` between ``-div(hi_a, -hi_b)`` and
    ``-div(lo_a, -hi_b)``: the quotient by ``-y`` is what relates them."""
    return list(z3.parse_smt2_string(_EUCLIDDIV_PATH))


@pytest.mark.slow
@needs_cvc5
@pytest.mark.parametrize("path", [_floordiv_path, _eucliddiv_path])
def test_a_path_query_cvc5_leaves_is_restated_with_lemma_instances(
    path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cvc5 leaves the plain query unknown; with the ``monotone``, ``divisor-monotone``
    and ``negated-divisor`` instances relating its quotients, Z3 and cvc5 both refute
    it."""
    c = confirm.confirm_queries([path()], "symbolic execution", "cvc5", 2.0)
    assert c["verdict"] == "z3+cvc5", c
    monkeypatch.setattr(confirm, "path_instances", lambda formulas: [])
    c = confirm.confirm_queries([path()], "symbolic execution", "cvc5", 2.0)
    assert c["verdict"] == "z3 only", c
    assert "with lemma instances" in c["reason"]


@needs_cvc5
def test_cached_interval_confirmations_show_only_when_asked(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interval proofs are cached as one entry, confirmations included: a run without
    --confirm shows none of them; one with it gets them from the cache."""
    # Looked up where the proofs are run from.
    monkeypatch.setattr(verify_run, "interval_obligations", lambda: ["max", "min"])
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: ("unsat", "", {}))
    argv = ["--obligation", "interval", "--json"]
    code, out = run_verify([*argv, "--confirm", "cvc5"], capsys)
    assert code == cli.EXIT_PROVEN, out
    assert all(r["confirmation"]["verdict"] == "z3+cvc5" for r in _results(out))
    code, out = run_verify(argv, capsys)
    assert [r.get("confirmation") for r in _results(out)] == [None, None]
    monkeypatch.setattr(confirm, "_run_cvc5", lambda script, seconds: 1 / 0)
    code, out = run_verify([*argv, "--confirm", "cvc5"], capsys)
    assert all(r["confirmation"]["verdict"] == "z3+cvc5" for r in _results(out))
