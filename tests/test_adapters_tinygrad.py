"""quorem.adapters.tinygrad: UOps to terms and back keep every value."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem.ops import Op
from quorem.walk import nodes

pytest.importorskip("tinygrad")

from tinygrad.dtype import Invalid, dtypes
from tinygrad.uop.ops import Ops, UOp, python_alu

from quorem.adapters.tinygrad import TinygradError, from_term, simplify, to_term

X = UOp.variable("x", -8, 8)
Y = UOp.variable("y", 0, 20)
R = UOp.range(6, 0)
S = UOp.special(4, "lidx0")
LEAVES = (X, Y, R, S)


def _c(v: int) -> UOp:
    return UOp.const(v, dtypes.weakint)


def evaluate(u: UOp, env: dict[UOp, int]) -> int:
    """The value of ``u`` with its leaves set by ``env``, by tinygrad's own ALU functions."""
    values: dict[UOp, Any] = {}
    for n in u.toposort():
        if n in env:
            values[n] = env[n]
        elif n.op is Ops.CONST:
            values[n] = n.arg
        elif n.op is Ops.CAST:
            v = values[n.src[0]]
            values[n] = bool(v) if n.dtype == dtypes.bool else int(v)
        elif n.op in python_alu:
            values[n] = python_alu[n.op](*(values[s] for s in n.src))
        elif n.op in (Ops.STACK, Ops.NOOP) or n.dtype == dtypes.void:
            values[n] = None  # a variable's shape source, a range's placeholder
        else:
            raise AssertionError(f"cannot evaluate {n.op}")
    return int(values[u])


def _points(draw: st.DrawFn) -> dict[UOp, int]:
    return {leaf: draw(st.integers(int(leaf.vmin), int(leaf.vmax))) for leaf in LEAVES}


def _divisor() -> st.SearchStrategy[UOp]:
    """A divisor never zero at any point: a non-zero constant, or a positive index."""
    return st.one_of(
        st.integers(-5, 5).filter(lambda v: v != 0).map(_c),
        st.sampled_from([S + 1, R + 2, Y + 1]),
    )


_BINARY: list[Callable[[UOp, UOp], UOp]] = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a.maximum(b),
    lambda a, b: a.minimum(b),
    lambda a, b: (a < b).cast(dtypes.weakint),
    lambda a, b: a.ne(b).where(a, b),
    lambda a, b: ((a < b) & a.ne(0)).where(b, a + 1),
    lambda a, b: ((a < b) | b.eq(3)).where(a, _c(2)),
]
_DIVIDE: list[Callable[[UOp, UOp], UOp]] = [
    lambda a, d: a // d,
    lambda a, d: a % d,
    lambda a, d: a.alu(Ops.CDIV, d),
    lambda a, d: a.alu(Ops.CMOD, d),
]


def _expressions() -> st.SearchStrategy[UOp]:
    leaf = st.one_of(st.sampled_from(LEAVES), st.integers(-10, 10).map(_c))

    def extend(inner: st.SearchStrategy[UOp]) -> st.SearchStrategy[UOp]:
        return st.one_of(
            st.builds(lambda f, a, b: f(a, b), st.sampled_from(_BINARY), inner, inner),
            st.builds(lambda f, a, d: f(a, d), st.sampled_from(_DIVIDE), inner, _divisor()),
        )

    return st.recursive(leaf, extend, max_leaves=8)


_SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_SETTINGS
@given(_expressions(), st.data())
def test_round_trip_keeps_values(u: UOp, data: st.DataObject) -> None:
    leaves: dict[str, Any] = {}
    term = to_term(u, leaves)
    back = from_term(term, leaves)
    for _ in range(4):
        env = data.draw(st.composite(_points)())
        want = evaluate(u, env)
        by_name = {name: env[leaf] for name, leaf in leaves.items() if leaf in env}
        assert quorem.evaluate(term, by_name) == want
        assert evaluate(back, env) == want


@_SETTINGS
@given(_expressions(), st.data())
def test_simplify_keeps_values(u: UOp, data: st.DataObject) -> None:
    out = simplify(u)
    assert len(out.toposort()) <= len(u.toposort())
    for _ in range(4):
        env = data.draw(st.composite(_points)())
        assert evaluate(out, env) == evaluate(u, env)


def test_truncating_and_floor_division_on_negative_operands() -> None:
    """CDIV/CMOD round toward zero and FLOORDIV/FLOORMOD down, in tinygrad and in quorem."""
    expect = {
        Ops.CDIV: (Op.TRUNCDIV, -3),
        Ops.CMOD: (Op.TRUNCMOD, -1),
        Ops.FLOORDIV: (Op.FLOORDIV, -4),
        Ops.FLOORMOD: (Op.FLOORMOD, 1),
    }
    for top, (qop, value) in expect.items():
        folded = _c(-7).alu(top, _c(2)).simplify()  # tinygrad's constant folding
        assert folded.op is Ops.CONST and folded.arg == value
        u = X.alu(top, _c(2))
        leaves: dict[str, Any] = {}
        term = to_term(u, leaves)
        assert term.op is qop
        assert quorem.evaluate(term, {"x": -7}) == value
        assert from_term(term, leaves).op is top
    # `//` and `%` on UOps are the floor ones.
    assert (X // 2).op is Ops.FLOORDIV and (X % 2).op is Ops.FLOORMOD


def test_opaque_subterm_kept_with_its_bounds() -> None:
    masked = Y.bitwise_and(7)  # bitwise on ints: not an index operation quorem has
    shifted = Y.alu(Ops.SHL, _c(1))
    u = (masked + shifted * 3) // 4
    leaves: dict[str, Any] = {}
    term = to_term(u, leaves)
    opaque = {n.name: n for n in nodes(term) if n.op is Op.VAR}
    assert {leaves[name] for name in opaque} == {masked, shifted}
    for name, v in opaque.items():
        assert (v.arg[1], v.arg[2]) == (leaves[name].vmin, leaves[name].vmax)
    back = from_term(term, leaves)
    assert masked in back.toposort() and shifted in back.toposort()
    assert simplify(masked * 4 // 4) is masked


def test_invalid_gate_kept_and_index_inside_simplified() -> None:
    r4 = UOp.range(4, 1)
    idx = (S * 4 + r4) // 4 % 8
    gated = (S < 3).where(idx, UOp.const(Invalid, dtypes.weakint))
    out = simplify(gated)
    assert out.op is Ops.WHERE and out.src[2].arg is Invalid
    assert out.src[1] is S  # (lidx0*4 + r1)//4 % 8 is lidx0 for lidx0, r1 in [0, 3]
    assert out.src[0] is gated.src[0]


def test_shared_subterms_stay_shared() -> None:
    shared = (X * 3 + R) // 4
    opaque = Y.bitwise_and(3)
    u = shared * shared + shared % 5 + opaque * opaque + opaque
    leaves: dict[str, Any] = {}
    term = to_term(u, leaves)
    quotients = [n for n in nodes(term) if n.op is Op.FLOORDIV]
    assert len(quotients) == 1  # one term for the one UOp
    assert [leaf for leaf in leaves.values() if leaf is opaque] == [opaque]
    back = from_term(term, leaves)
    assert sum(n.op is Ops.FLOORDIV for n in back.toposort()) == 1
    assert sum(n is opaque for n in back.toposort()) == 1


def test_same_name_two_variables() -> None:
    a, b = UOp.variable("n", 0, 3), UOp.variable("n", 0, 9)
    leaves: dict[str, Any] = {}
    term = to_term(a + b, leaves)
    assert len(leaves) == 2 and {id(u) for u in leaves.values()} == {id(a), id(b)}
    quorem.simplify(term)  # no VariableClashError: one name per variable


def test_realistic_gpu_index() -> None:
    gidx = UOp.special(16, "gidx0")
    lidx = UOp.special(4, "lidx0")
    u = ((gidx * 4 + lidx) // 4) % 8
    out = simplify(u)

    def divmods(v: UOp) -> int:
        return sum(n.op in (Ops.FLOORDIV, Ops.FLOORMOD) for n in v.toposort())

    assert divmods(u) == 2 and divmods(out) == 1
    assert out.op is Ops.FLOORMOD and out.src[0] is gidx
    for g in range(16):
        for lv in range(4):
            env = {gidx: g, lidx: lv}
            assert evaluate(out, env) == evaluate(u, env)


def test_from_term_of_every_division() -> None:
    """ceildiv and Euclidean divisions, which tinygrad lacks, are written with floor ones."""
    bounds = {"x": (-9, 9), "y": (-3, 3), "p": (1, 4), "n": (-4, -1)}
    text = (
        "eucliddiv(x, y) + euclidmod(x, y) + eucliddiv(x, p) + euclidmod(x, n)"
        " + eucliddiv(x, n) + ceildiv(x, y) + truncdiv(x, p) - truncmod(x, n)"
    )
    term = quorem.parse(text, bounds)
    leaves: dict[str, Any] = {}
    u = from_term(term, leaves)
    for x in range(-9, 10):
        for y in (-3, -2, -1, 1, 2, 3):
            for p, n in ((1, -1), (3, -4), (4, -2)):
                env = {"x": x, "y": y, "p": p, "n": n}
                assert evaluate(u, {leaves[k]: v for k, v in env.items()}) == quorem.evaluate(
                    term, env
                )


def test_condition_and_dtype() -> None:
    cond = (X < 3) & Y.ne(0)
    assert simplify(cond).dtype == dtypes.bool
    out = from_term(to_term(X < 3), dtype=dtypes.bool)
    assert out.dtype == dtypes.bool
    with pytest.raises(TinygradError):
        to_term(UOp.const(1.5, dtypes.float))


def test_import_quorem_imports_no_tinygrad(tmp_path: object) -> None:
    code = (
        "import sys, quorem, quorem.adapters\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tinygrad', 'tvm')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_constant_the_dtype_cannot_hold_is_refused() -> None:
    """quorem folds x*2**20*2**20 exactly; 2**40 is no int32: from_term says so (UOp.const
    would keep it, and the kernel wrap it), and simplify keeps the expression."""
    x = UOp.variable("x", 0, 3, dtypes.int32)
    e = x * UOp.const(2**20, dtypes.int32) * UOp.const(2**20, dtypes.int32) + 1
    leaves: dict[str, Any] = {}
    term = quorem.simplify(to_term(e, leaves))
    with pytest.raises(TinygradError, match="does not fit"):
        from_term(term, leaves, dtype=dtypes.int32)
    assert simplify(e) is e
    # In weakint the same constant is fine.
    w = UOp.variable("w", 0, 3, dtypes.weakint)
    big = from_term(quorem.simplify(to_term(w * _c(2**20) * _c(2**20), {})), dtype=dtypes.weakint)
    assert big.dtype == dtypes.weakint
