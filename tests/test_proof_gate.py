"""Only proven rules are applied: proof records, the gate at use, the opt-in (issue 36).

The records read here are written by the tests themselves, to exercise every way a record
can fail to vouch for a rule (missing, malformed, another prover, a changed rule); the
records ``quorem verify`` writes are tested at the end, with real proofs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import expressions
from support import examples

import quorem
import quorem.rules
from quorem.errors import UnprovenRuleError, UnprovenRuleWarning
from quorem.ops import Semantics
from quorem.proofdigest import code_digest
from quorem.proofrecord import record_path, rule_digest
from quorem.rulefile import load_rule_files, parse_rules
from quorem.ruleset import RuleSet, default_ruleset, instance_problem

# (x + C) % C is x % C under floor division, and wrong under truncation (x = -1, C = 8:
# truncmod(7, 8) = 7, truncmod(-1, 8) = -1): the review's example.
OFFSET = """\
rule mod-drop-offset
  doc:       (x + C) % C is x % C
  semantics: {sem}
  pattern:   (x + C) % C
  guard:     fits_int64(x)
  rewrite:   x % C
"""
# Sound for floor and truncation alike: an unrelated rule, proven, beside it.
DOUBLE = """\
rule double-mod
  doc:       x % C % C is x % C
  semantics: floor, trunc
  pattern:   x % C % C
  rewrite:   x % C
"""

I = {"i": (-10, 10)}  # noqa: E741  (the variable i)


def _record(file: Path, statuses: dict[str, dict[str, str]], **extra: object) -> None:
    """Write the record a proof run would write for ``file`` with these statuses."""
    rules = parse_rules(file.read_text(), str(file))
    body = {
        "format": 1,
        "prover": code_digest(),
        "file_sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
        "rules": [
            {"name": r.name, "sha256": rule_digest(r), "statuses": statuses[r.name]}
            for r in rules
            if r.name in statuses
        ],
        **extra,
    }
    record_path(file).write_text(json.dumps(body))


@pytest.fixture
def offset(tmp_path: Path) -> Path:
    file = tmp_path / "my.rules"
    file.write_text(OFFSET.format(sem="trunc"))
    return file


def _trunc() -> quorem.Term:
    return quorem.parse("(i + 8) % 8", I, "trunc")


# ------------------------------------------------------------------ shipped rules
def test_every_shipped_rule_is_proven_for_every_semantics_it_states() -> None:
    files = [
        *quorem.rules.rule_files(),
        *quorem.rules.constraint_rule_files(),
        *quorem.rules.lowering_rule_files(),
    ]
    rules = load_rule_files(files)
    problems = [p for r in rules for s in r.semantics or (None,) if (p := instance_problem(r, s))]
    assert problems == []
    assert default_ruleset().unproven == ()


def test_every_shipped_rules_file_has_a_record_of_its_own_bytes() -> None:
    root = Path(quorem.rules.__file__).parent
    files = sorted(root.rglob("*.rules"))
    assert files
    for file in files:
        record = json.loads(record_path(file).read_text())
        assert record["file_sha256"] == hashlib.sha256(file.read_bytes()).hexdigest(), file
    # No record without its rules file.
    for record in root.rglob("*.proof.json"):
        assert Path(str(record).removesuffix(".proof.json")).is_file(), record


def test_a_subset_of_the_shipped_rules_stays_proven() -> None:
    subset = RuleSet([r for r in default_ruleset().rules if "mod" in r.name])
    assert subset.unproven == ()
    t = quorem.parse("(x // 4)*4 + x % 4", {"x": (0, 99)})
    assert str(quorem.simplify(t, subset)) == "x"


# -------------------------------------------------------------------- the gate
def test_a_rule_without_a_record_is_refused_where_it_is_used(offset: Path) -> None:
    rules = RuleSet.from_files([offset])
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.simplify(_trunc(), rules)
    (u,) = caught.value.rules
    assert (u.name, u.semantics, u.status) == ("mod-drop-offset", "trunc", "unproven")
    message = str(caught.value)
    assert f"{offset}:1: rule mod-drop-offset [trunc]: unproven" in message
    assert f"quorem verify {offset}" in message
    assert "--allow-unproven" in message


@pytest.mark.parametrize("status", ["unsound", "unknown"])
def test_a_rule_its_record_does_not_prove_is_refused(offset: Path, status: str) -> None:
    _record(offset, {"mod-drop-offset": {"trunc": status}})
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.explain(_trunc(), RuleSet.from_files([offset]))
    assert caught.value.rules[0].status == status
    assert str(record_path(offset)) in str(caught.value)


def test_a_proven_rule_is_applied(offset: Path) -> None:
    _record(offset, {"mod-drop-offset": {"trunc": "proven"}})
    assert str(quorem.simplify(_trunc(), RuleSet.from_files([offset]))) == "truncmod(i, 8)"


def test_a_record_of_another_prover_is_stale(offset: Path) -> None:
    _record(offset, {"mod-drop-offset": {"trunc": "proven"}})
    data = json.loads(record_path(offset).read_text())
    data["prover"] = "0" * 64
    record_path(offset).write_text(json.dumps(data))
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.simplify(_trunc(), RuleSet.from_files([offset]))
    assert caught.value.rules[0].status == "stale"
    assert "another version of quorem's prover" in str(caught.value)
    assert f"quorem verify {offset}" in str(caught.value)


def test_a_rule_changed_since_its_proof_is_unproven(offset: Path) -> None:
    _record(offset, {"mod-drop-offset": {"trunc": "proven"}})
    offset.write_text(offset.read_text().replace("fits_int64(x)", "fits_int64(x + 0)"))
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.simplify(_trunc(), RuleSet.from_files([offset]))
    assert "changed since it was proven" in str(caught.value)


def test_moving_or_commenting_a_proven_rule_keeps_its_proof(offset: Path) -> None:
    _record(offset, {"mod-drop-offset": {"trunc": "proven"}})
    offset.write_text("# a comment\n\n" + offset.read_text().replace("  doc:", "    doc:"))
    assert str(quorem.simplify(_trunc(), RuleSet.from_files([offset]))) == "truncmod(i, 8)"


@pytest.mark.parametrize(
    "body", ["", "not json", "[]", '{"format": 99, "prover": "x", "rules": []}', "{" * 5000]
)
def test_a_malformed_record_proves_nothing(offset: Path, body: str) -> None:
    record_path(offset).write_text(body)
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.simplify(_trunc(), RuleSet.from_files([offset]))
    assert caught.value.rules[0].status == "unproven"
    assert str(record_path(offset)) in str(caught.value)


def test_only_the_semantics_in_use_must_be_proven(tmp_path: Path) -> None:
    file = tmp_path / "both.rules"
    file.write_text(OFFSET.format(sem="floor, trunc"))
    _record(file, {"mod-drop-offset": {"floor": "proven", "trunc": "unsound"}})
    rules = RuleSet.from_files([file])
    floor = quorem.parse("(i + 8) % 8", I, "floor")
    assert str(quorem.simplify(floor, rules)) == "i%8"
    with pytest.raises(UnprovenRuleError) as caught:
        quorem.simplify(_trunc(), rules)
    assert [(u.semantics, u.status) for u in caught.value.rules] == [("trunc", "unsound")]
    # A term without division uses no division rule.
    assert str(quorem.simplify(quorem.parse("i + 1", I, "trunc"), rules)) == "i + 1"


def test_the_opt_in_applies_and_says_so(offset: Path) -> None:
    rules = RuleSet.from_files([offset], allow_unproven=True)
    result = quorem.explain(_trunc(), rules)
    assert result.unproven_rules == ("mod-drop-offset",)
    with pytest.warns(UnprovenRuleWarning, match="mod-drop-offset") as caught:
        out = quorem.simplify(_trunc(), rules)
    assert str(out) == "truncmod(i, 8)"
    assert caught[0].message.rules == ("mod-drop-offset",)  # type: ignore[union-attr]
    # A result it did not touch says nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quorem.simplify(quorem.parse("i // 3", I, "trunc"), rules)
    assert quorem.explain(quorem.parse("i // 3", I, "trunc"), rules).unproven_rules == ()


def test_rules_from_text_are_gated_and_a_record_vouches_for_them(offset: Path) -> None:
    text = offset.read_text()
    with pytest.raises(UnprovenRuleError):
        quorem.simplify(_trunc(), RuleSet.from_text(text))
    _record(offset, {"mod-drop-offset": {"trunc": "proven"}})
    proven = RuleSet.from_text(text, proofs=record_path(offset))
    assert str(quorem.simplify(_trunc(), proven)) == "truncmod(i, 8)"
    allowed = RuleSet.from_text(text, allow_unproven=True)
    assert allowed.unproven_names == {"mod-drop-offset"}


def test_extending_keeps_the_opt_in_and_the_gate(offset: Path) -> None:
    (rule,) = parse_rules(offset.read_text(), str(offset))
    gated = default_ruleset().extend([rule], first=True)
    with pytest.raises(UnprovenRuleError):
        quorem.simplify(_trunc(), gated)
    allowed = default_ruleset().extend([rule], first=True, allow_unproven=True)
    assert allowed.extend([]).allow_unproven


def test_the_given_path_is_gated_too(offset: Path) -> None:
    rules = RuleSet.from_files([offset], with_shipped=True)
    with pytest.raises(UnprovenRuleError):
        quorem.simplify(_trunc(), rules, given=[quorem.parse("i < 5", I, "trunc")])


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> RuleSet:
    file = tmp_path_factory.mktemp("refused") / "my.rules"
    file.write_text(OFFSET.format(sem="trunc"))
    _record(file, {"mod-drop-offset": {"trunc": "unsound"}})
    return RuleSet.from_files([file], with_shipped=True)


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_refused_rules_never_change_a_result(refused: RuleSet, data: st.DataObject) -> None:
    """Where a refused rule is not in use, the result is the shipped rules' own."""
    rules = refused
    sem = data.draw(st.sampled_from([Semantics.FLOOR, Semantics.EUCLID, Semantics.TRUNC]))
    term = data.draw(expressions({"x": (-20, 20), "y": (0, 9)}, sem, max_depth=3))
    try:
        got = quorem.simplify(term, rules)
    except UnprovenRuleError as exc:
        assert sem is Semantics.TRUNC  # the refused rule's semantics was in use
        assert [u.name for u in exc.rules] == ["mod-drop-offset"]
        return
    assert got is quorem.simplify(term)


def test_the_tvm_adapter_refuses_an_unproven_rule(offset: Path) -> None:
    pytest.importorskip("tvm")
    from tvm import tirx

    from quorem.adapters.tvm import simplify as tvm_simplify

    i = tirx.Var("i", "int64")
    eight = tirx.IntImm("int64", 8)
    e = tirx.Mod(i + eight, eight)  # TVM's Mod truncates
    with pytest.raises(UnprovenRuleError, match="mod-drop-offset"):
        tvm_simplify(e, {"i": (-10, 10)}, RuleSet.from_files([offset], with_shipped=True))
    assert tvm_simplify(e, {"i": (-10, 10)}).same_as(e)  # the shipped rules keep it


def test_the_tinygrad_adapter_refuses_an_unproven_rule(offset: Path) -> None:
    pytest.importorskip("tinygrad")
    from tinygrad.uop.ops import Ops, UOp

    from quorem.adapters.tinygrad import simplify as tinygrad_simplify

    i = UOp.variable("i", -10, 10)
    u = (i + 8).alu(Ops.CMOD, i.const_like(8))  # CMOD truncates
    with pytest.raises(UnprovenRuleError, match="mod-drop-offset"):
        tinygrad_simplify(u, RuleSet.from_files([offset], with_shipped=True))


# ---------------------------------------------------------------- command line
def _quorem(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quorem", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "command",
    [
        ["simplify", "(i + 8)%8", "--var", "i=-10:10", "--semantics", "trunc"],
        ["emit", "(i + 8)%8", "--var", "i=-10:10", "--semantics", "trunc"],
    ],
)
def test_commands_refuse_an_unproven_rule_with_exit_1(offset: Path, command: list[str]) -> None:
    done = _quorem(*command, "--rules", str(offset))
    assert done.returncode == 1, done.stderr
    assert f"quorem {command[0]}: error: 1 rule not proven" in done.stderr
    assert "rule mod-drop-offset [trunc]: unproven" in done.stderr
    assert f"quorem verify {offset}" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    opted = _quorem(*command, "--rules", str(offset), "--allow-unproven")
    assert opted.returncode == 0, opted.stderr
    assert "not proven (--allow-unproven): mod-drop-offset" in opted.stderr


@pytest.mark.slow
def test_a_batch_with_an_unproven_rule_fails_and_the_opt_in_marks_each_result(
    offset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "cases.jsonl"
    lines = [
        {"id": "a", "expr": "(i + 8)%8", "vars": {"i": [-10, 10]}, "semantics": "trunc"},
        {"id": "b", "expr": "i // 4", "vars": {"i": [0, 10]}, "semantics": "trunc"},
    ]
    batch.write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = _quorem("simplify", "--batch", str(batch), "--rules", str(offset))
    assert done.returncode == 1
    assert "mod-drop-offset" in done.stderr
    opted = _quorem("simplify", "--batch", str(batch), "--rules", str(offset), "--allow-unproven")
    assert opted.returncode == 0, opted.stderr
    first, second = (json.loads(x) for x in opted.stdout.splitlines())
    assert first["unproven_rules"] == ["mod-drop-offset"]
    assert "unproven_rules" not in second
    assert "line 1 (id 'a'): rewritten by rules that are not proven" in opted.stderr
    # Worker processes gate and mark the results as one process does.
    assert (
        _quorem("simplify", "--batch", str(batch), "--rules", str(offset), "--jobs", "2").returncode
        == 1
    )
    parallel = _quorem(
        "simplify", "--batch", str(batch), "--rules", str(offset), "--allow-unproven", "--jobs", "2"
    )
    assert parallel.returncode == 0, parallel.stderr
    assert [json.loads(x)["output"] for x in parallel.stdout.splitlines()] == [
        json.loads(x)["output"] for x in opted.stdout.splitlines()
    ]
    assert json.loads(parallel.stdout.splitlines()[0])["unproven_rules"] == ["mod-drop-offset"]
    coverage = _quorem("coverage", str(batch), "--rules", str(offset))
    assert coverage.returncode == 1, coverage.stderr
    assert "rule mod-drop-offset [trunc]: unproven" in coverage.stderr


def test_rules_lists_the_status_the_gate_uses(offset: Path, tmp_path: Path) -> None:
    both = tmp_path / "both.rules"
    both.write_text(OFFSET.format(sem="floor, trunc") + "\n" + DOUBLE)
    _record(both, {"mod-drop-offset": {"floor": "proven", "trunc": "unsound"}})
    done = _quorem("rules", str(both), "--json")
    assert done.returncode == 0, done.stderr
    status = {r["name"]: r["status"] for r in json.loads(done.stdout)["rules"]}
    assert status == {"mod-drop-offset": "unsound (trunc)", "double-mod": "unproven (floor)"}


# ------------------------------------------------------ records that verify writes
z3 = pytest.importorskip("z3")


def test_verify_writes_the_record_the_gate_reads(tmp_path: Path) -> None:
    file = tmp_path / "mine.rules"
    file.write_text(OFFSET.format(sem="floor, trunc") + "\n" + DOUBLE)
    done = _quorem("verify", str(file), "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stdout  # the trunc instance is unsound
    assert "proof record: mine.rules.proof.json" in done.stdout
    record = json.loads(record_path(file).read_text())
    assert record["prover"] == code_digest()
    assert {e["name"]: e["statuses"] for e in record["rules"]} == {
        "mod-drop-offset": {"floor": "proven", "trunc": "unsound"},
        "double-mod": {"floor": "proven", "trunc": "proven"},
    }
    rules = RuleSet.from_files([file])
    assert str(quorem.simplify(quorem.parse("(i + 8) % 8 % 8", I), rules)) == "i%8"
    with pytest.raises(UnprovenRuleError, match="unsound"):
        quorem.simplify(_trunc(), rules)
    # The record matches a fresh proof; a hand-edited one does not.
    again = _quorem("verify", str(file), "--check-records", cwd=tmp_path)
    assert "record mismatch" not in again.stderr
    assert not record_path(file).with_name("mine.rules.proof.json.tmp").exists()
    checked = _quorem("verify", str(file), "--check-records", "--rule", "double-mod")
    assert checked.returncode == 0, checked.stderr
    record["rules"][0]["statuses"]["trunc"] = "proven"
    record_path(file).write_text(json.dumps(record))
    forged = _quorem("verify", str(file), "--check-records", "--rule", "mod-drop-offset")
    assert forged.returncode == 1
    assert "record mismatch" in forged.stderr and "mod-drop-offset" in forged.stderr


def test_a_partial_run_writes_no_record(tmp_path: Path) -> None:
    file = tmp_path / "mine.rules"
    file.write_text(DOUBLE)
    done = _quorem("verify", str(file), "--obligation", "equivalence", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "no proof record written (--obligation" in done.stderr
    assert not record_path(file).exists()


@pytest.mark.slow
def test_the_reviews_unsound_example_is_refused_everywhere(tmp_path: Path) -> None:
    """``(x + C)%C -> x%C`` stated for trunc: shown unsound, then refused at every use."""
    file = tmp_path / "my.rules"
    file.write_text(
        "rule mod-offset\n  doc: (x + C)%C is x%C\n  semantics: trunc\n"
        "  pattern: (x + C)%C\n  rewrite: x%C\n"
    )
    proven = _quorem("verify", str(file), "--no-cache", cwd=tmp_path)
    assert proven.returncode == 1
    assert "MISMATCH, confirmed by the engine" in proven.stdout
    record = json.loads(record_path(file).read_text())
    assert record["rules"][0]["statuses"] == {"trunc": "unsound"}
    args = ["(i + 8)%8", "--var", "i=-10:10", "--semantics", "trunc", "--rules", str(file)]
    for command in ("simplify", "emit"):
        done = _quorem(command, *args)
        assert done.returncode == 1, done.stderr
        assert f"rule mod-offset [trunc]: unsound (says {record_path(file)})" in done.stderr
        assert f"prove it with: quorem verify {file}" in done.stderr
    with pytest.raises(UnprovenRuleError, match="unsound"):
        quorem.simplify(_trunc(), RuleSet.from_files([file], with_shipped=True))
    # The opt-in applies it, says so, and the emitted code is then wrong at i = -1
    # (truncmod(7, 8) is 7): what the gate keeps from happening silently.
    opted = _quorem("emit", *args, "--lang", "python", "--allow-unproven")
    assert opted.returncode == 0 and "mod-offset" in opted.stderr
    path = tmp_path / "emitted.py"
    path.write_text(opted.stdout)
    spec = importlib.util.spec_from_file_location("emitted_unsound", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.quorem_index(-1) == -1 != quorem.evaluate(_trunc(), {"i": -1}) == 7


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.one_of(
        st.text(max_size=200),
        _JSON.map(json.dumps),
        # A record of the right shape with wrong field types in places.
        st.fixed_dictionaries(
            {"format": st.sampled_from([1, 2, "1"]), "prover": _JSON, "rules": _JSON}
        ).map(json.dumps),
    )
)
def test_no_record_text_makes_loading_fail_or_prove(
    tmp_path_factory: pytest.TempPathFactory, body: str
) -> None:
    """Whatever a record holds, loading succeeds and a record that is not one proves nothing."""
    file = tmp_path_factory.mktemp("hostile") / "my.rules"
    file.write_text(OFFSET.format(sem="trunc"))
    record_path(file).write_text(body)
    rules = RuleSet.from_files([file])
    assert [u.status for u in rules.unproven] in (["unproven"], ["stale"])


def test_mutants_shown_unsound_are_refused_at_use(tmp_path: Path) -> None:
    """A few mutants of the shipped rules, end to end as benchmarks/unsound_gate.py runs 90."""
    from benchmarks.unsound_gate import run, summary

    rows = run(6, 1, tmp_path)
    totals = summary(rows)
    assert totals["shown unsound"] >= 4, rows
    for key in ("refused by the API", "refused by the CLI (exit 1)"):
        assert totals[key] == totals["shown unsound"], rows
    assert totals["applied with the opt-in, and said so"] == totals["shown unsound"], rows


@pytest.mark.slow
def test_map_simplify_refuses_and_the_opt_in_marks_the_map(tmp_path: Path) -> None:
    file = tmp_path / "floor.rules"
    file.write_text(OFFSET.format(sem="floor"))
    text = "(d0) -> ((d0 + 8) mod 8), domain: d0 in [-9, 9]"
    done = _quorem("map", "simplify", "--rules", str(file), "--json", text)
    assert done.returncode == 1, done.stderr
    assert "rule mod-drop-offset [floor]: unproven" in done.stderr
    opted = _quorem("map", "simplify", "--rules", str(file), "--json", "--allow-unproven", text)
    assert opted.returncode == 0, opted.stderr
    assert json.loads(opted.stdout)["unproven_rules"] == ["mod-drop-offset"]
    assert "not proven (--allow-unproven): mod-drop-offset" in opted.stderr


def test_a_record_goes_beside_the_rules_file_a_link_points_to(tmp_path: Path) -> None:
    """An editable install reaches the shipped files through links: the record is written
    beside the real file, never in place of the link (where the tree would not see it)."""
    real = tmp_path / "tree" / "mine.rules"
    real.parent.mkdir()
    real.write_text(DOUBLE)
    link = tmp_path / "installed" / "mine.rules"
    link.parent.mkdir()
    link.symlink_to(real)
    done = _quorem("verify", str(link), "--no-cache", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert record_path(real).is_file()
    assert not record_path(link).exists()
