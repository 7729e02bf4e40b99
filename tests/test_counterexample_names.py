"""Counterexamples are written over the rule's own names.

A term variable whose value is outside int64 (the prover's partial sum) is replayed as
two in-range variables ``x_1 + x_2``; the report shows the terms with ``x`` in their
place, and says once, in terms of ``x``, how it was split.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from quorem.ops import Semantics
from quorem.rulefile import parse_rules

pytest.importorskip("z3")

from quorem.verify.encode import INT64_MAX, INT64_MIN
from quorem.verify.replay import replay

# Unsound or overflowing rules over a term variable x and a constant C, each a pattern
# in which x is an addend (the prover's x may then be a partial sum).
RULES = {
    "add-mod": ("(x + C) % C", "x % C"),
    "add-div": ("(x + C) // C", "x // C + 1"),
    "scaled-add-mod": ("(x*2 + C) % C", "(x*2) % C"),
    "scaled-add-div": ("(x*3 + C) // C", "(x*3) // C + 1"),
    "sum-of-divs": ("(x + C) // C + x % C", "x // C + 1 + x % C"),
}


def _rule(name: str, sem: Semantics) -> object:
    pattern, rewrite = RULES[name]
    text = (
        f"rule {name}\n  doc: {pattern} == {rewrite}\n  semantics: {sem.value}\n"
        f"  pattern: {pattern}\n  rewrite: {rewrite}\n"
    )
    (rule,) = parse_rules(text, "t.rules")
    return rule


_SPLIT = re.compile(r"\bx_[12]\b")


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(sorted(RULES)),
    st.sampled_from([Semantics.FLOOR, Semantics.TRUNC]),
    st.one_of(st.integers(INT64_MAX + 1, 2 * INT64_MAX), st.integers(2 * INT64_MIN, INT64_MIN - 1)),
    st.one_of(st.integers(2, 100), st.integers(-100, -2), st.integers(2**62, INT64_MAX)),
)
def test_terms_are_shown_over_the_rules_names(name: str, sem: Semantics, x: int, c: int) -> None:
    """x outside int64: no x_1, x_2 in the terms shown; the note splits x in terms of x."""
    rule = _rule(name, sem)
    rep = replay(rule, sem, 0, {"x": x, "C": c}, int64=True)  # type: ignore[arg-type]
    notes = [ln for ln in rep.lines if ln.startswith("where:")]
    assert len(notes) == 1
    assert notes[0].startswith(f"where:    x = {x} is outside int64")
    assert "replayed as x = x_1 + x_2 with x_1 = " in notes[0]
    half = x // 2
    assert f"x_1 = {half}, x_2 = {x - half}" in notes[0]
    shown = [ln for ln in rep.lines if not ln.startswith("where:")]
    assert shown[0].startswith("input:    ")
    assert not [ln for ln in shown if _SPLIT.search(ln)], rep.lines


def test_the_split_stays_named_where_it_cannot_be_joined() -> None:
    """x_1 and x_2 apart (here in different sums' coefficients): shown, and explained."""
    from quorem.term import var
    from quorem.verify.replay import _Shown

    rule = _rule("add-mod", Semantics.FLOOR)
    x = INT64_MAX * 2
    show = _Shown(rule, {"x": x, "C": 3})  # type: ignore[arg-type]
    one, two = var("x_1", 0, INT64_MAX), var("x_2", 0, INT64_MAX)
    apart = one * 2 + two
    assert show(apart) == str(apart)
    together = (one + two) * 3 + 1
    assert _SPLIT.search(show(together)) is None
    assert "x" in show(together)


@pytest.mark.slow
def test_verify_reports_the_unsound_rule_over_its_names(tmp_path: Path) -> None:
    """The reproducer: (x + C)%C -> x%C for trunc, both obligations, names x and C only."""
    path = tmp_path / "bad.rules"
    path.write_text(
        "rule bad-add-mod\n  doc: (x + C)%C == x%C\n  semantics: trunc\n"
        "  pattern: (x + C) % C\n  rewrite: x % C\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "quorem", "verify", str(path), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if not ln.lstrip().startswith("where:")]
    assert not [ln for ln in lines if _SPLIT.search(ln)], proc.stdout
    assert "UNSOUND" in proc.stdout
