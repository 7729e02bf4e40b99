"""The helpers term.py offers the compiled rules, checked against what they stand for."""

from __future__ import annotations

import gc

import strategies
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from quorem.ops import Op
from quorem.term import (
    Term,
    atom_ops,
    binary,
    binary_range,
    const,
    linear,
    linear_update,
    lookup,
    op_block,
    sum_of,
    var,
)

SETTINGS = settings(max_examples=examples(200), deadline=None)
BINARY = [
    Op.FLOORDIV,
    Op.FLOORMOD,
    Op.TRUNCDIV,
    Op.TRUNCMOD,
    Op.MAX,
    Op.MIN,
    Op.LT,
    Op.LE,
    Op.EQ,
    Op.NE,
]


@st.composite
def sums(draw: st.DrawFn) -> Term:
    """A sum of many atoms with assorted operators, so that sums are long and mixed."""
    case = draw(strategies.random_cases(max_depth=2))
    parts = [case.term]
    for _ in range(draw(st.integers(0, 30))):
        parts.append(draw(strategies.expressions(case.box, case.semantics, max_depth=2)))
    return sum_of(parts)


@SETTINGS
@given(sums())
def test_op_block_and_atom_ops(t: Term) -> None:
    """A sum's atoms with one operator are contiguous, and found by bisection."""
    atoms = t.addends()[0]
    args = tuple(a for a, _ in atoms)
    assert atom_ops(args) == {a.op for a in args}
    for op in Op:
        i, j = op_block(args, op)
        assert [k for k, a in enumerate(args) if a.op is op] == list(range(i, j))


@SETTINGS
@given(sums(), st.data())
def test_linear_update_is_linear(t: Term, data: st.DataObject) -> None:
    pairs, k = t.addends()
    atoms = [a for a, _ in pairs]
    coefs = [c for _, c in pairs]
    drop = data.draw(st.lists(st.sampled_from(atoms), unique=True) if atoms else st.just([]))
    extra_terms = data.draw(st.lists(st.sampled_from([*atoms, t, const(3)]), max_size=3))
    extra = [(e, data.draw(st.integers(-3, 3))) for e in extra_terms]
    want = linear([(a, c) for a, c in pairs if a not in drop] + extra, k + 1)
    assert linear_update(atoms, coefs, drop, extra, k + 1) is want


@SETTINGS
@given(strategies.random_cases(allow_unbounded=True), st.data())
def test_binary_range_is_the_built_terms_range(case: strategies.Case, data: st.DataObject) -> None:
    box, sem = case.box, case.semantics
    a = case.term
    b = data.draw(strategies.expressions(box, sem, max_depth=2))
    for op in BINARY:
        if op in (Op.FLOORDIV, Op.FLOORMOD, Op.TRUNCDIV, Op.TRUNCMOD) and b is const(0):
            continue
        built = binary(op, a, b)
        assert binary_range(op, a, b) == (built.vmin, built.vmax), (op, a, b)


def test_lookup_finds_live_terms_only() -> None:
    x = var("x_lookup", 0, 99)
    eight = const(8)
    assert lookup(Op.FLOORDIV, (x, eight)) is None
    q = x // 8
    assert lookup(Op.FLOORDIV, (x, eight)) is q
    del q
    gc.collect()
    assert lookup(Op.FLOORDIV, (x, eight)) is None


@SETTINGS
@given(sums())
def test_sums_are_made_like_every_other_term(t: Term) -> None:
    """The dedicated sum constructor computes the generic range, hash and structural key."""
    from quorem import term as term_module

    if t.op is not Op.ADD:
        return
    assert (t.vmin, t.vmax) == term_module._range_of(Op.ADD, t.args, t.arg)
    assert t.h == term_module._structural_hash(Op.ADD, t.args, t.arg)
    assert t.skey == (2 + term_module._RANK[Op.ADD], t.h)
