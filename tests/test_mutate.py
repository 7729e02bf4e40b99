"""Mutation testing of the prover: the mutant generator, and the prover killing mutants."""

from __future__ import annotations

import pickle

import pytest

z3 = pytest.importorskip("z3")

import quorem  # noqa: E402
from quorem.ops import Semantics  # noqa: E402
from quorem.rule import Lit, PLit, Rule  # noqa: E402
from quorem.rulefile import parse_rules  # noqa: E402
from quorem.verify import mutate  # noqa: E402
from quorem.verify.mutate import (  # noqa: E402
    KILLED,
    NEVER_FIRES,
    SURVIVED,
    UNKNOWN,
    Mutant,
    classify,
    conjuncts,
    map_tree,
    mutants,
    render_expr,
    render_pattern,
    run_mutation_test,
    walk_tree,
)
from quorem.verify.prove import obligations_of, prove  # noqa: E402

RULES = quorem.default_ruleset().rules
FIELDS = ("pattern", "lets", "guard", "rewrite")


def rule(name: str) -> Rule:
    return quorem.default_ruleset().rule(name)


def by_kind(r: Rule, kind: str) -> list[Mutant]:
    return [m for m in mutants(r) if m.kind == kind]


def literals(r: Rule, field: str) -> list[int]:
    return [x.value for x in walk_tree(getattr(r, field)) if isinstance(x, Lit | PLit)]


def find(ms: list[Mutant], text: str) -> Mutant:
    (m,) = [m for m in ms if text in m.description]
    return m


# ---------------------------------------------------------------------------- generator
def test_map_tree_identity_keeps_the_tree() -> None:
    for r in RULES:
        for field in FIELDS:
            tree = getattr(r, field)
            assert map_tree(tree, lambda x: x) is tree


def test_drops_each_conjunct() -> None:
    r = rule("nested-div-offset-nonneg")
    assert r.guard is not None
    parts = conjuncts(r.guard)
    assert len(parts) == 5
    ms = by_kind(r, "guard")
    assert len(ms) == 5
    for dropped, m in zip(parts, ms, strict=True):
        assert m.rule.guard is not None
        left = conjuncts(m.rule.guard)
        assert left == [p for p in parts if p is not dropped]
        assert render_expr(dropped) in m.description


def test_single_conjunct_guard_is_dropped_whole() -> None:
    (m,) = by_kind(rule("nested-div-trunc"), "guard")
    assert m.rule.guard is None
    assert "fits_int64(B * C)" in m.description
    # `or` is one conjunct: the whole guard goes.
    (m,) = by_kind(rule("mod-by-unit"), "guard")
    assert m.rule.guard is None


def test_no_guard_no_guard_mutants() -> None:
    assert by_kind(rule("div-by-one"), "guard") == []


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_shifts_each_literal_once(r: Rule) -> None:
    ms = by_kind(r, "literal")
    total = sum(len(literals(r, f)) for f in FIELDS)
    assert len(ms) == 2 * total
    shifted = set()
    for m in ms:
        diffs = [
            (f, i, new - old)
            for f in FIELDS
            for i, (old, new) in enumerate(zip(literals(r, f), literals(m.rule, f), strict=True))
            if old != new
        ]
        assert len(diffs) == 1, (m.description, diffs)
        f, i, delta = diffs[0]
        assert delta in (1, -1)
        shifted.add((f, i, delta))
        assert m.rule.semantics == r.semantics
    assert len(shifted) == len(ms)  # every occurrence, both directions, once each


def test_pattern_literals_are_shifted() -> None:
    ms = by_kind(rule("div-by-one"), "literal")
    assert [render_pattern(m.rule.pattern) for m in ms] == ["x // 2", "x // 0"]


def test_semantics_switch() -> None:
    (m,) = by_kind(rule("div-split-offset"), "semantics")
    assert m.rule.semantics == (Semantics.TRUNC,)
    ms = by_kind(rule("nested-div-trunc"), "semantics")
    assert [m.rule.semantics for m in ms] == [(Semantics.FLOOR,), (Semantics.EUCLID,)]
    assert by_kind(rule("mod-of-small-range"), "semantics") == []  # floor, trunc and euclid
    assert by_kind(rule("fold-max-by-range"), "semantics") == []  # any


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_mutants_differ_from_the_original_and_each_other(r: Rule) -> None:
    ms = mutants(r)
    core = [
        (m.rule.semantics, m.rule.pattern, m.rule.lets, m.rule.guard, m.rule.rewrite) for m in ms
    ]
    assert (r.semantics, r.pattern, r.lets, r.guard, r.rewrite) not in core
    assert len(set(core)) == len(core)
    for m in ms:
        assert m.rule != r
        assert m.rule.name == r.name and m.rule.location == r.location
        assert "# mutant: " in m.rule.text and m.rule.text != r.text
        assert pickle.loads(pickle.dumps(m)) == m  # sent to worker processes as is


def _literals(e: object) -> list[int]:
    """The integer literals of a rule expression."""
    if isinstance(e, Lit):
        return [e.value]
    kids = [getattr(e, f) for f in ("operand", "left", "right") if hasattr(e, f)]
    kids += list(getattr(e, "args", []))
    return [v for k in kids for v in _literals(k)]


def test_every_shipped_rule_is_mutated_but_the_bare_identities() -> None:
    """Only rules with no guard, no literal and semantics 'any' have nothing to mutate."""
    unmutated = [r for r in RULES if not mutants(r)]
    assert {"max-of-same", "min-of-same", "min-of-shifted", "min-lt-same-operand", "lt-or-gt"} <= {
        r.name for r in unmutated
    }
    for r in unmutated:
        assert r.guard is None and not r.lets and not r.semantics, r.name
        assert not _literals(r.rewrite), r.name


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_rendering_parses_back(r: Rule) -> None:
    """The descriptions show rule text that means what the mutant's IR means."""
    sem = ", ".join(s.value for s in r.semantics) or "any"
    defs = "; ".join(f"{n} = {render_expr(e)}" for n, e in r.lets)
    lets = f"  let: {defs}\n" if r.lets else ""
    guard = f"  guard: {render_expr(r.guard)}\n" if r.guard is not None else ""
    text = (
        f"rule {r.name}\n  doc: d\n  semantics: {sem}\n  pattern: {render_pattern(r.pattern)}\n"
        f"{lets}{guard}  rewrite: {render_expr(r.rewrite)}\n"
    )
    (q,) = parse_rules(text)
    assert (q.pattern, q.lets, q.guard, q.rewrite) == (r.pattern, r.lets, r.guard, r.rewrite)


# ----------------------------------------------------------------------------- prover
def test_dropping_the_lower_bound_is_killed() -> None:
    m = find(mutants(rule("mod-of-small-range")), "drop guard conjunct `vmin(x) >= 0`")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == KILLED, res
    assert "refuted" in res.note


def test_div_split_offset_under_trunc_is_killed() -> None:
    (m,) = by_kind(rule("div-split-offset"), "semantics")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == KILLED, res
    assert res.obligations == (("trunc equivalence", "unsound"),)


def test_a_stronger_guard_survives_proven() -> None:
    m = find(mutants(rule("mod-of-small-range")), "guard literal 0 -> 1")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == SURVIVED, res
    assert [s for _, s in res.obligations] == ["proven", "proven-int64"] * 3  # 3 semantics


def test_a_mutant_that_never_fires_is_sound() -> None:
    """Z3 shows ``x // 0`` can never match: the mutant is sound, but not a proof of anything."""
    m = find(mutants(rule("div-by-minus-one")), "-1 -> 0")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == SURVIVED
    assert all(s == NEVER_FIRES for _, s in res.obligations)
    assert "can never fire" in res.note
    # prove() itself never calls it proven: a shipped rule that cannot fire is a bug.
    (ob, *_) = obligations_of(m.rule, 2)
    r = prove(ob, 10)
    assert (r.status, r.method) == ("unknown", "vacuous")


def test_a_compound_range_counterexample_is_found_by_widening() -> None:
    """Z3 picks vmin(x < y) freely; replay finds variable ranges that reproduce it."""
    m = find(mutants(rule("fold-lt-by-range")), "drop the guard")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == KILLED, res


def test_an_overflowing_partial_sum_is_replayed_as_two_addends() -> None:
    """Dropping fits_int64 from mod-drop-multiple: y % N computes the rest y on its own."""
    m = find(mutants(rule("mod-drop-multiple")), "drop guard conjunct `fits_int64")
    res = classify(m, arity=2, timeout=10)
    assert res.verdict == KILLED, res
    assert ("floor int64", "unsound") in res.obligations


def test_run_mutation_test_end_to_end() -> None:
    rules = [rule("mod-of-small-range"), rule("div-split-offset"), rule("nested-div")]
    report = run_mutation_test(rules, arity=2, timeout=10.0, jobs=2)
    assert len(report.results) == sum(len(mutants(r)) for r in rules)
    assert [(r.rule, r.description) for r in report.results] == [
        (r.name, m.description) for r in rules for m in mutants(r)
    ]
    verdict = {(r.rule, r.description): r.verdict for r in report.results}
    assert verdict["nested-div", "drop guard conjunct `C > 0` (guard: fits_int64(B * C))"] == KILLED
    # truncdiv(truncdiv(a, B), C) == truncdiv(a, B*C) for any non-zero B, C: still sound.
    assert verdict["nested-div", "semantics floor -> trunc"] == SURVIVED
    assert verdict["nested-div", "semantics floor -> euclid"] == KILLED  # a negative divisor
    assert verdict["div-split-offset", "semantics floor, euclid -> trunc"] == KILLED
    counts = [report.count(v) for v in (KILLED, SURVIVED, UNKNOWN)]
    assert sum(counts) == len(report.results)
    assert report.kill_rate == counts[0] / len(report.results)
    text = report.summary()
    assert "kill rate" in text and f"{len(report.results)} mutants" in text
    for r in report.results:
        if r.verdict != KILLED:
            assert r.description in text  # every survivor and unknown is listed


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert mutate.main(["--rule", "mod-of-small-range"]) == 0
    out = capsys.readouterr()
    assert "4 mutants: 3 killed, 1 survived" in out.out
    assert "KILLED" in out.err  # one progress line per mutant
    assert mutate.main(["--rule", "no-such-rule"]) == 2
    assert mutate.main(["--jobs", "0"]) == 2


def test_a_crashing_proof_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("encoder rejected it")

    monkeypatch.setattr(mutate, "prove", boom)
    m = mutants(rule("nested-div"))[0]
    res = classify(m)
    assert res.verdict == UNKNOWN
    assert "encoder rejected it" in res.note
