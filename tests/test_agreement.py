"""The engine runs what was proven: concrete guards and rewrites agree with the encoding.

A proof is about the Z3 meaning of a rule (``quorem.verify.encode``); the engine runs the
concrete meaning (``quorem.interpret`` and the compiled matchers). For random
instances of every shipped rule, wherever the engine's guard says yes, the symbolic
premises (guard, lets, definedness, ranges) must be satisfiable with every name pinned
to what the engine matched -- values, and ranges as the engine computed them -- and the
value the engine's rewrite computes must be one the symbolic rewrite can take there.
With the proof (every symbolic rewrite value equals the pattern's), that makes every
rewrite the engine performs correct at the point.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import examples

z3 = pytest.importorskip("z3")

import quorem  # noqa: E402
from quorem.errors import QuoremError  # noqa: E402
from quorem.rule import NameKind, Rule  # noqa: E402
from quorem.ruleset import RuleSet  # noqa: E402
from quorem.verify.encode import encode_rule, has_sequence  # noqa: E402
from quorem.verify.replay import _bindings, _build  # noqa: E402

INSTANCES = [
    (r, sem, k)
    for r in quorem.default_ruleset().rules
    for sem in r.semantics or (None,)
    for k in ((1, 2) if has_sequence(r) else (0,))
]


def _draw_values(data: st.DataObject, rule: Rule, arity: int) -> dict[str, int]:
    lets = {n for n, _ in rule.lets}
    values: dict[str, int] = {}
    small = st.integers(-12, 12)
    for name, kind in rule.names.items():
        if name in lets:
            continue
        if kind is NameKind.CONST:
            values[name] = data.draw(small)
        elif kind is NameKind.TERM:
            v = data.draw(st.integers(-30, 30))
            values[name] = v
            values[f"vmin({name})"] = v - data.draw(st.integers(0, 6))
            values[f"vmax({name})"] = v + data.draw(st.integers(0, 6))
        elif kind is NameKind.SEQ_CONST:
            for i in range(arity):
                values[f"{name}[{i + 1}]"] = data.draw(small.filter(bool))
        else:
            for i in range(arity):
                values[f"{name}[{i + 1}]"] = data.draw(st.integers(-30, 30))
    return values


def _pin(enc: Any, rule: Rule, env: dict[str, Any], point: dict[str, int]) -> list[Any]:
    """Z3 constraints fixing every matched name (and its range) to the engine's values."""
    lets = {n for n, _ in rule.lets}
    pins = []
    for name, value in env.items():
        if name in lets:
            continue
        if isinstance(value, list):
            for i, v in enumerate(value):
                sym = enc.symbols[f"{name}[{i + 1}]"]
                pins.append(sym == (v if isinstance(v, int) else quorem.evaluate(v, point)))
            continue
        sym = enc.symbols[name]
        if isinstance(value, int):
            pins.append(sym == value)
            continue
        pins.append(sym == quorem.evaluate(value, point))
        if name in enc.bounds:
            lo, hi = enc.bounds[name]
            if value.vmin is not None:
                pins.append(lo == value.vmin)
            if value.vmax is not None:
                pins.append(hi == value.vmax)
    return pins


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(data=st.data())
def test_engine_runs_what_was_proven(data: st.DataObject) -> None:
    rule, sem, arity = data.draw(st.sampled_from(INSTANCES))
    values = _draw_values(data, rule, arity)
    b, point = _bindings(rule, arity, values)
    try:
        lhs = _build(rule.pattern, b, sem)
    except (QuoremError, KeyError, AssertionError):
        assume(False)
    (instance,) = [c for c in RuleSet([rule], allow_unproven=True).compiled if c.semantics is sem]
    fired = instance.reference_fire(lhs)
    assume(fired is not None)
    assert fired is not None
    env, out = fired
    try:
        want = quorem.evaluate(lhs, point)
    except quorem.EvaluationError:
        assume(False)
    got = quorem.evaluate(out, point)
    assert got == want, (rule.name, str(lhs), str(out), point)
    # A filtered sequence (sum(K*t, cond)) can take more addends than were drawn for it
    # (the rest's own addends, when they pass the condition): encode the arity matched.
    matched = {len(v) for v in env.values() if isinstance(v, list)}
    enc = encode_rule(rule, sem, matched.pop() if matched else arity)
    s = z3.Solver()
    s.set("timeout", 20000)
    s.add(*enc.premises, *_pin(enc, rule, env, point))
    s.add(enc.lhs == want, enc.rhs == got)
    answer = s.check()
    assert answer != z3.unsat, (rule.name, sem, str(lhs), str(out), point)


def test_every_rule_instance_is_sampled() -> None:
    """The instances the property draws from cover every shipped rule."""
    assert {r.name for r, _, _ in INSTANCES} == {r.name for r in quorem.default_ruleset().rules}
