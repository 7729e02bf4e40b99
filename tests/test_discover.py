"""Rule discovery (``quorem discover``): residues, candidates, proofs, and the loop closed.

The end-to-end cases remove one shipped family (the div-mod identities of
``rules/20-divmod-identity.rules``) and check that discovery proposes proven rules that
bring a corpus of tiling, transpose and reshape indices back to within 90% of what the
shipped rules did.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Case as StrategyCase
from strategies import points, random_cases, tensor_cases

pytest.importorskip("z3")

from support import examples

import quorem
from quorem.cli.coverage import read_cases
from quorem.coverage.collect import Case
from quorem.rulefile import parse_rules
from quorem.rules import rule_files
from quorem.ruleset import RuleSet
from quorem.verify.discover import Discovery, Settings, corpus_ops, discover, rules_text
from quorem.verify.discover.candidates import candidates_for
from quorem.verify.discover.prove import PROVEN, prove_candidate
from quorem.verify.discover.residues import collect_residues, generalise

CORPUS = Path(__file__).parent / "data" / "discover_corpus.jsonl"
FAMILY = "20-divmod-identity.rules"


def _without_family() -> list[str]:
    return [str(p) for p in rule_files() if p.name != FAMILY]


def _cases() -> list[Case]:
    import io

    cases, bad = read_cases([str(CORPUS)], quorem.Semantics.FLOOR, io.StringIO())
    assert bad == 0
    return cases


def test_generalise_shares_subterms_and_literals() -> None:
    x = quorem.var("x", 0, 63)
    y = quorem.var("y", 0, 3)
    t = (x // 8) * 8 + (x % 8) * 2 + y
    found = generalise(t, quorem.Semantics.FLOOR)
    assert found is not None
    pattern, terms, consts = found
    # One term variable for x (shared), the literal 8 shared, the rest of the sum as y.
    assert pattern.text.count("(a)") == 2 and pattern.rest == "y"
    assert terms["a"] is x and terms["y"] is y
    assert sorted(consts.values()) == [2, 8]
    assert pattern.divisions == 2


def test_generalise_refuses_division_free_terms() -> None:
    x = quorem.var("x", 0, 63)
    assert generalise(x * 4 + 1, quorem.Semantics.FLOOR) is None


def test_candidate_search_finds_the_recombination_and_ranks_it_first() -> None:
    ruleset = RuleSet.from_files(_without_family(), allow_unproven=True)
    residues = collect_residues(_cases(), ruleset)
    same = [
        g for g in residues.groups if g.pattern.text == "((a) // (C0))*C0 + ((a) % (C0))*C1 + y"
    ]
    assert same, [g.pattern.text for g in residues.groups[:8]]
    best = candidates_for(same[0])[0]
    assert best.holds == 1.0 and best.divisions == 1
    assert best.explains == best.checked


def test_a_wrong_candidate_is_not_proven() -> None:
    text = (
        "rule wrong\n  doc: x\n  semantics: floor\n"
        "  pattern: (a // C0)*C0 + (b % C0)*C1 + y\n  rewrite: a + y\n"
    )
    out = prove_candidate(text, guard_candidates=4)
    assert out["status"] != PROVEN


@pytest.fixture(scope="module")
def found() -> Discovery:
    """One discovery run on the corpus with the div-mod identities removed (about 15 s)."""
    return discover(
        _cases(),
        RuleSet.from_files(_without_family(), allow_unproven=True),
        settings=Settings(patterns=1, per_pattern=1, rounds=2),
    )


@pytest.fixture(scope="module")
def with_discovered(found: Discovery) -> RuleSet:
    """The shipped rules without the family, the discovered rules first."""
    kept = parse_rules(rules_text(found), "<discovered>")
    return RuleSet.from_files(_without_family(), allow_unproven=True).extend(kept, first=True)


@pytest.mark.slow
def test_discovery_recovers_a_removed_family(found: Discovery) -> None:
    cases = _cases()
    without = RuleSet.from_files(_without_family(), allow_unproven=True)
    shipped_ops, _ = corpus_ops(cases, RuleSet.shipped())
    assert found.ops_before > shipped_ops  # removing the family costs something here
    assert found.kept, rules_text(found)
    for p in found.kept:
        assert p.status == PROVEN and p.removes > 0
    recovered = (found.ops_before - found.ops_after) / (found.ops_before - shipped_ops)
    assert recovered >= 0.9, (found.ops_before, found.ops_after, shipped_ops)
    # The rules file parses, and with it the corpus has what discovery measured.
    kept = parse_rules(rules_text(found), "<discovered>")
    assert [r.name for r in kept] == [p.name for p in found.kept]
    ops, looping = corpus_ops(cases, without.extend(kept, first=True), {r.name for r in kept})
    assert ops == found.ops_after and not looping


@pytest.mark.slow  # the discovery run (the module's fixture) takes a minute
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(tensor_cases(), random_cases()), data=st.data())
def test_discovered_rules_keep_every_value(
    with_discovered: RuleSet, case: StrategyCase, data: st.DataObject
) -> None:
    """With the discovered rules first, simplify(e) equals e wherever e is defined."""
    out = quorem.simplify(case.term, with_discovered)
    for _ in range(8):
        env = data.draw(points(case.box))
        try:
            before = quorem.evaluate(case.term, env)
        except quorem.EvaluationError:
            continue
        assert quorem.evaluate(out, env) == before, (str(case.term), str(out), env)


@pytest.mark.slow
def test_command_line_writes_rules_that_verify(tmp_path: Path) -> None:
    from quorem.cli.main import main
    from quorem.cli.verify import main as verify_main

    out = tmp_path / "found.rules"
    args = ["discover", str(CORPUS), "--only-rules", "--patterns", "1", "--rounds", "1"]
    for f in _without_family():
        args += ["--rules", f]
    assert main([*args, "--out", str(out), "--apply"]) == 0
    assert parse_rules(out.read_text(), str(out))
    assert verify_main([str(out), "--no-cache"]) == 0


def test_command_line_json_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quorem.cli.main import main

    assert main(["discover", str(tmp_path / "missing.jsonl")]) == 2
    assert "quorem discover: error" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert main(["discover", str(bad)]) == 2
    assert main(["discover", str(CORPUS), "--patterns", "0"]) == 2
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"id": "a", "vars": {"x": [0, 7]}, "expr": "x + 1"}) + "\n")
    assert main(["discover", str(one), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kept"] == [] and report["ops_after"] == 0


@pytest.mark.parametrize(
    ("command", "module"),
    [("verify", "quorem.cli.verify"), ("discover", "quorem.cli.discover")],
)
def test_a_proving_command_without_z3_names_the_extra(
    command: str, module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from quorem.cli.main import main

    monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    assert main([command, "x.rules"]) == 2
    err = capsys.readouterr().err
    assert (
        f"quorem {command}: error: needs z3-solver" in err and 'pip install "quorem[verify]"' in err
    )


def test_a_long_sum_gives_pairs_of_related_divisions_only_and_boundedly() -> None:
    from quorem.evaluation import division_counts
    from quorem.verify.discover.residues import _MAX_PAIRS, _units

    xs = [quorem.var(f"x{i}", 0, 9) for i in range(300)]
    unrelated = quorem.sum_of((x * 3 + 1) % 7 for x in xs)
    units = list(_units(unrelated, division_counts(unrelated)))
    assert all(u.op is not quorem.Op.ADD for u in units)  # no two remainders share a variable
    x = xs[0]
    related = quorem.sum_of(((x + i) % 7) * (i + 2) for i in range(300))
    sums = [u for u in _units(related, division_counts(related)) if u.op is quorem.Op.ADD]
    assert 0 < len(sums) <= _MAX_PAIRS
