"""Terms pickle: unpickled, a term is the interned term itself, bounds and all (issue 36).

``quorem simplify --batch --jobs N`` and ``quorem coverage --jobs N`` send work to other
processes; a term sent there must be the very term that process would build (hash
consing: equal terms are one object), with its variables' bounds, in the interpreted
engine and in the native (Cython) build alike.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import Case, cases
from support import examples

from quorem.ops import Op, Semantics
from quorem.printer import to_text
from quorem.term import (
    Term,
    compare,
    const,
    div,
    linear,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    var,
)
from quorem.walk import nodes

PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)


def _with_logic(case: Case, k: int) -> Term:
    """``case``'s term inside ``and``/``or``/``not`` clauses (interned apart from it)."""
    t = case.term
    low = compare(Op.LE, const(-k), t)
    return logical_or(logical_and(compare(Op.LT, t, const(k)), low), logical_not(low))


def _attributes(t: Term) -> list[tuple[Any, ...]]:
    """Every node's operator, data, range, int64 flag, hash and sort key, in order."""
    return [(n.op.value, n.arg, n.vmin, n.vmax, n.fits64, n.h, n.skey) for n in nodes(t)]


@settings(max_examples=examples(150), deadline=None)
@given(
    case=cases(allow_unbounded=True),
    k=st.integers(-50, 50),
    protocol=st.sampled_from(PROTOCOLS),
)
def test_a_term_unpickles_as_itself(case: Case, k: int, protocol: int) -> None:
    """pickle.loads(pickle.dumps(t)) is t, for random terms with their bounds (unbounded
    sides, huge bounds), under every semantics, with and/or clauses, every protocol."""
    for t in (case.term, _with_logic(case, k)):
        data = pickle.dumps(t, protocol)
        assert pickle.loads(data) is t
    # Terms inside other objects: one pickle, shared terms written once.
    both = pickle.loads(pickle.dumps([case.term, case.term, {"t": case.term}], protocol))
    assert both[0] is both[1] is both[2]["t"] is case.term


def test_a_deep_term_pickles_without_recursion() -> None:
    """A term nested 20000 deep (past the interpreter's recursion limit) round-trips."""
    x = var("x", 0, 1000)
    t = x
    for _ in range(20_000):
        t = div(linear([(t, 1)], 1), const(2), Semantics.FLOOR)
    assert pickle.loads(pickle.dumps(t)) is t


def test_a_shared_subterm_is_written_once() -> None:
    """``max(s, s + 1)`` nested 60 times: 2**60 nodes as a tree, 120 distinct ones; the
    pickle is as small as the distinct nodes (a tree copy would never finish)."""
    s = var("x", -5, 5)
    for _ in range(60):
        s = maximum(s, linear([(s, 1)], 1))
    data = pickle.dumps(s)
    assert len(data) < 20 * len(list(nodes(s))) + 200
    assert pickle.loads(data) is s


_CHILD = """
import pickle, sys
from quorem._native import compiled_modules
from quorem import term
from quorem.ops import Semantics
from quorem.walk import nodes
before = (term.point_variables_built(), term.logic_built())
terms, checks = pickle.loads(sys.stdin.buffer.read())
after = (term.point_variables_built(), term.logic_built())
from quorem import parse
same = []
for t, (text, box, sem, attributes) in zip(terms, checks, strict=True):
    mine = [(n.op.value, n.arg, n.vmin, n.vmax, n.fits64, n.h, n.skey) for n in nodes(t)]
    same.append((parse(text, box, Semantics(sem)) is t, mine == attributes))
out = (same, before, after, compiled_modules().get("quorem.term", False))
sys.stdout.buffer.write(pickle.dumps(out))
"""


def _in_fresh_process(payload: bytes, *, pure: bool) -> Any:
    env = dict(os.environ)
    if pure:
        env["QUOREM_PURE_PYTHON"] = "1"
    else:
        env.pop("QUOREM_PURE_PYTHON", None)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=payload,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return pickle.loads(done.stdout)


@pytest.mark.parametrize("pure", [True, False], ids=["interpreted", "native"])
@settings(max_examples=examples(3), deadline=None)
@given(batch=st.lists(cases(allow_unbounded=True), min_size=1, max_size=25))
def test_another_process_gets_the_term_it_would_build(batch: list[Case], pure: bool) -> None:
    """Unpickled in a fresh process (interpreted or native engine: the pickle is the
    same), each term is the term that process parses from the term's text: the same
    object, every node with the same bounds, range, hash and sort key."""
    terms = [c.term for c in batch]
    checks = [
        (to_text(c.term, c.semantics), c.box, c.semantics.value, _attributes(c.term)) for c in batch
    ]
    same, _, _, compiled = _in_fresh_process(pickle.dumps((terms, checks)), pure=pure)
    assert same == [(True, True)] * len(batch)
    if pure:
        assert not compiled
    elif os.environ.get("QUOREM_REQUIRE_NATIVE"):  # CI built it: it must be the one tested
        assert compiled


def test_unpickling_records_what_the_rewriter_asks() -> None:
    """A process that only unpickled a one-value variable and an ``and`` knows it built
    them (the rewriter skips its passes for them otherwise, and would not simplify
    ``x*2 + y`` with ``x`` in ``[3, 3]`` or an and/or the same as the sender)."""
    x, y = var("x", 3, 3), var("y", 0, 9)
    t = logical_and(compare(Op.LT, linear([(x, 2), (y, 1)]), const(9)), compare(Op.LT, y, x))
    text = to_text(t)
    checks = [(text, {"x": (3, 3), "y": (0, 9)}, "floor", _attributes(t))]
    same, before, after, _ = _in_fresh_process(pickle.dumps(([t], checks)), pure=True)
    assert before == (False, False)
    assert after == (True, True)
    assert same == [(True, True)]
