"""The prover: shipped rules proven, known-bad rules caught with replayed counterexamples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

z3 = pytest.importorskip("z3")

from support import run_verify  # noqa: E402

import quorem  # noqa: E402
from quorem.cli import verify as cli  # noqa: E402
from quorem.cli.verify import summary as verify_summary  # noqa: E402
from quorem.ops import Semantics  # noqa: E402
from quorem.rulefile import parse_rules  # noqa: E402
from quorem.verify.prove import Obligation, obligations_of, prove, result_json  # noqa: E402

KNOWN_BUGS = sorted((Path(__file__).parent / "known_bugs").glob("*.rules"))


@pytest.mark.parametrize("path", KNOWN_BUGS, ids=[p.stem for p in KNOWN_BUGS])
def test_known_bugs_are_caught(path: Path) -> None:
    """Each historical bug, written as a rule, is UNSOUND with an engine-confirmed example."""
    (rule,) = parse_rules(path.read_text(), str(path))
    results = [prove(ob, timeout=20) for ob in obligations_of(rule, 2)]
    unsound = [r for r in results if r.status == "unsound"]
    assert unsound, [(r.obligation.label, r.status, r.report) for r in results]
    r = unsound[0]
    assert r.counterexample is not None
    assert "UNSOUND" in r.report
    assert f"{path}:{rule.line}" in r.report
    assert "confirmed by the engine" in r.report or "divides by zero" in r.report
    assert all(abs(v) <= 2**20 for v in r.counterexample.values()), r.counterexample


@pytest.mark.parametrize(
    "name",
    [
        "divmod-recombine",
        "nested-div",
        "mod-of-small-range",
        "div-split-multiple",
        "exact-quotient",
    ],
)
def test_shipped_rule_sample_proven(name: str) -> None:
    """A sample of shipped rules is proven equivalent (CI proves them all)."""
    rule = quorem.default_ruleset().rule(name)
    for ob in obligations_of(rule, 2):
        if ob.kind == "equivalence":
            r = prove(ob, timeout=30)
            assert r.status == "proven", r.report


def test_floor_proof_does_not_carry_to_trunc() -> None:
    """The same text is proven under floor and refuted under truncation."""
    (rule,) = parse_rules(
        "rule split\n  doc: d\n  semantics: floor, trunc\n  pattern: (x*M + b) // N\n"
        "  guard: M == N\n  rewrite: x + b // N\n"
    )
    floor = prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence"))
    trunc = prove(Obligation(rule, Semantics.TRUNC, 0, "equivalence"))
    assert floor.status == "proven"
    assert trunc.status == "unsound"


# congruence-div without its bucket check: wrong wherever the residue sum spans buckets.
CONGRUENCE_WITHOUT_BUCKET = """\
rule congruence-div-unchecked
  doc: the bucket conjunct dropped
  semantics: floor
  pattern: (sum(K*t) + C) // D
  let: Q = (2*K + D) // (2*D)
       B = vmin(sum((K - Q*D)*t) + C) // D
  guard: D > 1
  rewrite: sum(Q*t) + B
"""


def test_counterexample_over_a_sequence_is_replayed() -> None:
    """A sum rule's counterexample is confirmed by the engine with ranges on the addends.

    Z3 picks the bounds of the residue sum freely; the engine needs a range of ``t[1]``
    that puts them across a bucket boundary (an addend fixed to one value never does).
    """
    (rule,) = parse_rules(CONGRUENCE_WITHOUT_BUCKET)
    r = prove(Obligation(rule, Semantics.FLOOR, 1, "equivalence"))
    assert r.status == "unsound", r.report
    assert r.counterexample is not None and r.counterexample["D"] > 1


def test_unknown_is_never_proven() -> None:
    """A timeout is reported as unknown, not as proven."""
    rule = quorem.default_ruleset().rule("div-by-common-factor")
    ob = Obligation(rule, Semantics.TRUNC, 4, "equivalence")
    r = prove(ob, timeout=0.001)
    assert r.status == "unknown"
    assert not r.ok


def test_rewrite_dividing_by_zero_is_unsound() -> None:
    """A rewrite that may divide by zero where the input did not is caught."""
    (rule,) = parse_rules(
        "rule bad\n  doc: d\n  semantics: floor\n  pattern: x % y\n"
        "  rewrite: x % y + (x // (y - 1)) % 1\n"
    )
    r = prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence"))
    assert r.status == "unsound", r.report


def test_cli_json_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json has the documented shape; exit 1 for unsound, 0 for proven, 2 for bad input."""
    monkeypatch.setenv("QUOREM_CACHE_DIR", str(tmp_path / "cache"))
    bad = str(KNOWN_BUGS[0])
    code, out = run_verify([bad, "--json", "--no-cache"], capsys)
    assert code == cli.EXIT_UNSOUND
    data = json.loads(out)
    summary = data["summary"]
    assert set(summary) == {"proven", "unsound", "wrong_value", "overflow", "unknown", "seconds"}
    assert summary["wrong_value"] + summary["overflow"] <= summary["unsound"]
    entry = data["rules"][0]
    assert set(entry) == {
        "name",
        "file",
        "line",
        "semantics",
        "obligation",
        "status",
        "method",
        "seconds",
        "counterexample",
    }
    assert any(e["status"] == "unsound" and e["counterexample"] for e in data["rules"])

    code, _ = run_verify(["--rule", "divmod-recombine", "--json"], capsys)
    assert code == cli.EXIT_PROVEN
    code, out = run_verify(["--rule", "divmod-recombine"], capsys)
    assert code == cli.EXIT_PROVEN and "(cached)" in out

    broken = tmp_path / "broken.rules"
    broken.write_text("rule x\n  doc: d\n")
    code, _ = run_verify([str(broken)], capsys)
    assert code == cli.EXIT_USAGE
    code, _ = run_verify(["--rule", "no-such-rule"], capsys)
    assert code == cli.EXIT_USAGE


def test_cli_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--junit writes one test case per obligation, failures for unsound ones."""
    report = tmp_path / "junit.xml"
    code, _ = run_verify(
        [str(KNOWN_BUGS[0]), "--no-cache", "--no-record", "--junit", str(report)], capsys
    )
    assert code == cli.EXIT_UNSOUND
    text = report.read_text()
    assert "<testsuite" in text and "<failure" in text and "UNSOUND" in text


def test_quorem_verify_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    """`quorem verify` is reachable from the main command line."""
    from quorem.cli.main import main

    code = main(["verify", "--rule", "max-of-same", "--no-cache"])
    assert code == 0
    assert "proven" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.catalogue
def test_interval_transfer_functions_proven() -> None:
    """Symbolic execution of the engine's interval code proves a sample of operators sound."""
    from quorem.verify.intervals import _prove_add, _prove_binary

    for op in ("floordiv", "truncmod", "max", "lt"):
        r = _prove_binary(op)
        assert r.status == "proven", (op, r.counterexample)
        assert r.paths > 1
    assert _prove_add(1).status == "proven"


def test_a_wrong_transfer_function_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interval for % that is one too tight is shown unsound, with a point."""
    from quorem import interval as iv
    from quorem.verify import intervals

    def too_tight(a: iv.Range, b: iv.Range) -> iv.Range:
        lo, hi = iv.floormod_range(a, b)
        return lo, None if hi is None else hi - 1

    entry = intervals._BINARY["floormod"]
    monkeypatch.setitem(intervals._BINARY, "floormod", (too_tight, entry[1], entry[2]))
    r = intervals._prove_binary("floormod")
    assert r.status == "unsound"
    assert r.counterexample


_SCALED = (
    "rule scaled\n  doc: d\n  semantics: floor\n  pattern: (x % C1)*C2 + (x // C1)*C3 + y\n"
    "  guard: C1*C2 == C3{extra}\n  rewrite: x*C2 + y\n"
)


def test_overflow_is_caught_and_named() -> None:
    """x*C2 may overflow where the input's values all fit: the int64 obligation says so."""
    (rule,) = parse_rules(_SCALED.format(extra=""))
    assert prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence")).status == "proven"
    r = prove(Obligation(rule, Semantics.FLOOR, 0, "int64"))
    assert r.status == "unsound", r.report
    assert "outside int64 where the input does not: x*" in r.report


def test_fits_int64_guard_proves_int64_and_leaves_equivalence_alone() -> None:
    (rule,) = parse_rules(_SCALED.format(extra=" and fits_int64(x*C2)"))
    assert prove(Obligation(rule, Semantics.FLOOR, 0, "int64")).status == "proven-int64"
    # The equivalence proof treats the guard as an arbitrary answer: it still proves,
    # and a rule that is only true because of fits_int64 is not.
    assert prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence")).status == "proven"
    (wrong,) = parse_rules(
        "rule wrong\n  doc: d\n  semantics: floor\n  pattern: x // N\n"
        "  guard: N > 0 and fits_int64(x)\n  rewrite: x\n"
    )
    assert prove(Obligation(wrong, Semantics.FLOOR, 0, "equivalence")).status == "unsound"


def _fail_steps(monkeypatch: pytest.MonkeyPatch, methods: set[str]) -> None:
    """Make the portfolio steps whose method is in ``methods`` answer unknown."""
    from quorem.verify import prove as prove_module

    real = prove_module._Query.attempt

    def attempt(self: Any, extra: Any, timeout: float, method: str, *rest: Any) -> Any:
        if method in methods:
            return prove_module.ProofResult(self.ob, "unknown", method, 0.0, None, "forced")
        return real(self, extra, timeout, method, *rest)

    monkeypatch.setattr(prove_module._Query, "attempt", attempt)


_SPLIT = (
    "rule split\n  doc: d\n  semantics: floor\n  pattern: (x*M + b) // N\n"
    "  guard: M == N and N > 0\n  rewrite: x + b // N\n"
)


def test_portfolio_falls_back_to_int64_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unknown over unbounded integers, proven with every value in int64: shown as such."""
    _fail_steps(monkeypatch, {"IntAux"})
    (rule,) = parse_rules(_SPLIT)
    r = prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence"))
    assert r.status == "proven-int64" and r.method == "IntAux, values in int64", r


def test_portfolio_grid_is_weaker_than_a_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_steps(monkeypatch, {"IntAux", "IntAux, values in int64"})
    (rule,) = parse_rules(_SPLIT)
    r = prove(Obligation(rule, Semantics.FLOOR, 0, "equivalence"))
    assert r.status == "proven-on-grid(M, N in -3..4 but 0)", r
    assert not r.ok
    assert verify_summary.summary([result_json(r)], 0.0)["unknown"] == 1  # so quorem verify exits 3
    # A wrong rule is still refuted on the grid, with a replayed counterexample.
    (trunc,) = parse_rules(_SPLIT.replace("floor", "trunc"))
    refuted = prove(Obligation(trunc, Semantics.TRUNC, 0, "equivalence"))
    assert refuted.status == "unsound" and refuted.method == "grid", refuted


@given(
    st.integers(-50, 50),
    st.integers(-50, 50).filter(bool),
    st.integers(-9, 9).filter(bool),
    st.integers(-9, 9).filter(bool),
)
def test_proportional_quotient_lemma_holds(a: int, b: int, m: int, n: int) -> None:
    """The encoder's lemma: equal ratios a1/b1 == a2/b2 have equal floor and trunc quotients."""
    # (a*m)/(b*m) and (a*n)/(b*n) are every pair of equal ratios, scaled both ways.
    a1, b1, a2, b2 = a * m, b * m, a * n, b * n
    assert a1 * b2 == a2 * b1
    assert a1 // b1 == a2 // b2
    assert int(a1 / b1) == int(a2 / b2)


def test_explorer_runs_every_feasible_path_once() -> None:
    """Branches are explored depth-first: each feasible path once, infeasible ones never."""
    from quorem.verify.intervals import _Explorer, _Sym

    a, b = z3.Int("a"), z3.Int("b")
    ex = _Explorer([a >= 0, b >= 0])
    seen = []
    while True:
        ex.start()
        x, y = _Sym(a, ex), _Sym(b, ex)
        # x < 0 is infeasible; the other branches give three paths.
        seen.append(("neg",) if x < 0 else ("big",) if x > 5 else ("small", bool(y > x)))
        if not ex.next_run():
            break
    assert sorted(seen, key=str) == sorted([("big",), ("small", True), ("small", False)], key=str)


def test_vacuity_reuses_a_witness_but_never_for_unsatisfiable_premises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quorem.verify import prove as prove_module

    monkeypatch.setattr(prove_module, "_WITNESSES", type(prove_module._WITNESSES)(maxlen=4))
    x = z3.Int("x")
    assert prove_module._satisfiable([x > 3, x < 10], [x], 5.0) == z3.sat
    assert len(prove_module._WITNESSES) == 1

    def no_solver(timeout: float) -> Any:
        raise AssertionError("a recent model satisfies these premises: no Z3 search needed")

    with monkeypatch.context() as m:
        m.setattr(prove_module, "_solver", no_solver)
        assert prove_module._satisfiable([x > 3, x < 10, x != 100], [x], 5.0) == z3.sat
    assert prove_module._satisfiable([x > 3, x < 3], [x], 5.0) == z3.unsat


def test_jobs_in_a_pool_report_in_order_like_one_process() -> None:
    """Two workers, longest jobs first, give the results one process gives, in order."""
    from quorem.verify.jobs import Job, load_rules, run_jobs

    rules = [r for r in load_rules([]) if r.name in ("max-of-same", "mod-of-small-range")]
    obs = [ob for r in rules for ob in obligations_of(r, 2)]
    jobs = [Job.of([ob], 10.0) for ob in obs] + [Job(("interval",), "max")]

    def run(workers: int) -> list[tuple[str, str, str]]:
        got: dict[int, list[dict[str, Any]]] = {}
        run_jobs(jobs, rules, [], workers, got.setdefault)
        assert list(got) == list(range(len(jobs)))
        return [(r["name"], r["obligation"], r["status"]) for i in got for r in got[i]]

    serial = run(1)
    assert serial == run(2)
    assert [s for *_, s in serial] == ["proven", "proven-int64"] * (len(obs) // 2) + ["proven"]


def test_a_query_the_first_strategy_gives_up_on_is_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Restarts with other strategies and seeds decide what the first run leaves unknown."""
    from quorem.verify import prove as prove_module

    rule = quorem.default_ruleset().rule("divmod-recombine-composed")
    ob = Obligation(rule, Semantics.FLOOR, 0, "equivalence")
    # A 1 ms first run cannot prove it; the second strategy must.
    monkeypatch.setattr(prove_module, "_SCHEDULE", (("default", 0, 1e-6), ("expand", 0, 1.0)))
    assert prove(ob, 20.0).status == "proven"
    monkeypatch.setattr(prove_module, "_SCHEDULE", (("default", 0, 1e-6),))
    assert prove(ob, 20.0).status != "proven"


def test_shipped_catalog_includes_the_constraint_rules() -> None:
    from quorem.verify.jobs import load_rules
    from quorem.verify.termination import termination_obligations

    rules = {r.name: r for r in load_rules([])}
    assert rules["merge-residues"].constraint
    assert not rules["divmod-recombine"].constraint
    assert rules["floordiv-to-trunc"].phase == "lowering" and rules["floordiv-to-trunc"].by_own_pass
    # Applied with a step budget to built terms: no termination order is asked of them.
    results = cli.verify_rules(
        [rules["le-floordiv-upper-negative"]], [], kinds=("equivalence", "termination")
    )
    assert [r["obligation"] for r in results] == ["equivalence"]
    assert results[0]["status"] == "proven"
    assert termination_obligations(rules["le-floordiv-upper-negative"], 1)


def test_a_rule_proven_after_others_in_one_worker_is_still_proven() -> None:
    # merge-residues timed out after three fold rules in a shared Z3 context (it takes
    # 0.6 s alone): its job gets a fresh context (see quorem.verify.jobs._run).
    from quorem.verify.jobs import Job, _run, load_rules

    rules = {r.name: r for r in load_rules([])}
    for name in ("fold-div-by-range", "fold-mod-by-range", "fold-max-by-range"):
        _run(
            Job(
                ("equivalence",), name, "floor" if "div" in name or "mod" in name else None, 1, 5.0
            ),
            rules,
        )
    (r,) = _run(Job(("equivalence",), "merge-residues", "floor", 1, 20.0), rules)
    assert r["status"] == "proven", r
