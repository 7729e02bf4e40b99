"""quorem.adapters.tvm: PrimExprs to terms and back keep every value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem.arith import floordiv, floormod, truncdiv, truncmod
from quorem.ops import Op
from quorem.walk import nodes

pytest.importorskip("tvm")

from tvm import sym, tirx
from tvm.ir import Range

from quorem.adapters.tvm import TVMError, expr_cost, from_term, simplify, to_term

X = tirx.Var("x", "int64")
Y = tirx.Var("y", "int64")
Z = tirx.Var("z", "int64")
BOUNDS = {"x": (-8, 8), "y": (0, 20), "z": (0, 3)}


def _i(v: int) -> Any:
    return tirx.IntImm("int64", v)


def _analyzer() -> Any:
    a = sym.Analyzer()
    for v in (X, Y, Z):
        lo, hi = BOUNDS[v.name]
        a.bind(v, Range.from_min_extent(_i(lo), _i(hi - lo + 1)))
    return a


_EVAL: dict[Any, Callable[..., Any]] = {
    tirx.Add: lambda a, b: a + b,
    tirx.Sub: lambda a, b: a - b,
    tirx.Mul: lambda a, b: a * b,
    tirx.FloorDiv: floordiv,
    tirx.FloorMod: floormod,
    tirx.Div: truncdiv,
    tirx.Mod: truncmod,
    tirx.Min: min,
    tirx.Max: max,
    tirx.LT: lambda a, b: a < b,
    tirx.LE: lambda a, b: a <= b,
    tirx.GT: lambda a, b: a > b,
    tirx.GE: lambda a, b: a >= b,
    tirx.EQ: lambda a, b: a == b,
    tirx.NE: lambda a, b: a != b,
    tirx.And: lambda a, b: a and b,
    tirx.Or: lambda a, b: a or b,
}


def evaluate(e: Any, env: dict[str, int]) -> int:
    """The value of ``e`` with each Var set by name (TVM's documented node semantics)."""
    kind = type(e)
    if kind is tirx.IntImm:
        return int(e.value)
    if kind is tirx.Var:
        return env[e.name]
    if kind in _EVAL:
        return int(_EVAL[kind](evaluate(e.a, env), evaluate(e.b, env)))
    if kind is tirx.Not:
        return int(not evaluate(e.a, env))
    if kind is tirx.Select:
        chosen = e.true_value if evaluate(e.condition, env) else e.false_value
        return evaluate(chosen, env)
    if kind is tirx.Cast:
        v = evaluate(e.value, env)
        return int(bool(v)) if str(e.ty.dtype) == "bool" else v
    if kind is tirx.BitwiseAnd:
        return evaluate(e.a, env) & evaluate(e.b, env)
    raise AssertionError(f"cannot evaluate {kind.__name__}")


def _divisor() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(-5, 5).filter(lambda v: v != 0).map(_i),
        st.sampled_from([Z + 1, Y + 1]),
    )


_BINARY: list[Callable[[Any, Any], Any]] = [
    tirx.Add,
    tirx.Sub,
    tirx.Mul,
    tirx.Min,
    tirx.Max,
    lambda a, b: tirx.Cast("int64", tirx.LT(a, b)),
    lambda a, b: tirx.Select(tirx.GE(a, b), a, b),
    lambda a, b: tirx.Select(tirx.And(tirx.LE(a, b), tirx.NE(a, _i(0))), b, a),
    lambda a, b: tirx.Select(tirx.Or(tirx.GT(a, b), tirx.Not(tirx.EQ(b, _i(3)))), a, _i(2)),
]
_DIVIDE: list[Callable[[Any, Any], Any]] = [tirx.FloorDiv, tirx.FloorMod, tirx.Div, tirx.Mod]


def _expressions() -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.sampled_from([X, Y, Z]), st.integers(-10, 10).map(_i))

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(lambda f, a, b: f(a, b), st.sampled_from(_BINARY), inner, inner),
            st.builds(lambda f, a, d: f(a, d), st.sampled_from(_DIVIDE), inner, _divisor()),
        )

    return st.recursive(leaf, extend, max_leaves=8)


def _point() -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries({k: st.integers(lo, hi) for k, (lo, hi) in BOUNDS.items()})


_SETTINGS = settings(
    max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_SETTINGS
@given(_expressions(), st.booleans(), st.lists(_point(), min_size=1, max_size=4))
def test_round_trip_keeps_values(e: Any, by_analyzer: bool, points: list[dict[str, int]]) -> None:
    leaves: dict[str, Any] = {}
    term = to_term(e, _analyzer() if by_analyzer else BOUNDS, leaves)
    back = from_term(term, leaves)
    for env in points:
        want = evaluate(e, env)
        assert quorem.evaluate(term, env) == want
        assert evaluate(back, env) == want


@_SETTINGS
@given(_expressions(), st.lists(_point(), min_size=1, max_size=4))
def test_simplify_keeps_values(e: Any, points: list[dict[str, int]]) -> None:
    out = simplify(e, _analyzer())
    for env in points:
        assert evaluate(out, env) == evaluate(e, env)
    assert out.same_as(e) or expr_cost(out) < expr_cost(e)  # never worse


def test_simplify_returns_the_expression_when_nothing_is_gained() -> None:
    """An expression quorem cannot improve comes back as the same node."""
    e = tirx.FloorDiv(X, _i(4)) + Z
    assert simplify(e, _analyzer()).same_as(e)
    assert expr_cost(tirx.FloorMod(tirx.FloorDiv(X, _i(4)), _i(8))) == (2, 5)


def test_truncating_and_floor_division_on_negative_operands() -> None:
    """Div/Mod round toward zero and FloorDiv/FloorMod down, in TVM and in quorem."""
    expect = {
        tirx.Div: (Op.TRUNCDIV, -3),
        tirx.Mod: (Op.TRUNCMOD, -1),
        tirx.FloorDiv: (Op.FLOORDIV, -4),
        tirx.FloorMod: (Op.FLOORMOD, 1),
    }
    analyzer = sym.Analyzer()
    for kind, (qop, value) in expect.items():
        assert int(analyzer.simplify(kind(_i(-7), _i(2))).value) == value  # TVM's folding
        leaves: dict[str, Any] = {}
        term = to_term(kind(X, _i(2)), BOUNDS, leaves)
        assert term.op is qop
        assert quorem.evaluate(term, {"x": -7}) == value
        assert type(from_term(term, leaves)) is kind


def test_opaque_subterm_kept_with_its_bounds() -> None:
    masked = tirx.BitwiseAnd(Y, _i(7))
    e = tirx.FloorDiv(masked * 4 + Z, _i(4))
    leaves: dict[str, Any] = {}
    term = to_term(e, _analyzer(), leaves)
    (name,) = [n for n in leaves if leaves[n].same_as(masked)]
    (v,) = [n for n in nodes(term) if n.op is Op.VAR and n.name == name]
    assert (v.arg[1], v.arg[2]) == (0, 7)  # the analyzer's bound of y & 7
    out = simplify(e, _analyzer())
    assert out.same_as(masked)  # (m*4 + z)//4 is m for z in [0, 3]
    for y in range(21):
        assert evaluate(out, {"y": y, "z": 2}) == evaluate(e, {"y": y, "z": 2})


def test_shared_subterms_stay_shared() -> None:
    shared = tirx.FloorDiv(X * 3 + Z, _i(4))
    e = shared * shared + tirx.FloorMod(shared, _i(5))
    term = to_term(e, BOUNDS)
    assert sum(n.op is Op.FLOORDIV for n in nodes(term)) == 1
    back = from_term(term)
    seen: list[Any] = []

    def walk(n: Any) -> None:
        if type(n) is tirx.FloorDiv:
            seen.append(n)
        for attr in ("a", "b"):
            if hasattr(n, attr) and not isinstance(n, tirx.Var):
                walk(getattr(n, attr))

    walk(back)
    assert len(seen) >= 2 and all(s.same_as(seen[0]) for s in seen)  # one node, used twice


def test_same_name_two_variables() -> None:
    a, b = tirx.Var("n", "int64"), tirx.Var("n", "int64")
    leaves: dict[str, Any] = {}
    term = to_term(a - b, {a: (0, 3), b: (0, 9)}, leaves)
    assert len(leaves) == 2 and term.op is Op.ADD  # not n - n = 0


def test_realistic_gpu_index() -> None:
    e = tirx.FloorMod(tirx.FloorDiv(X * 4 + Z, _i(4)), _i(8))
    out = simplify(e, {"x": (0, 15), "z": (0, 3)})
    assert type(out) is tirx.FloorMod and out.a.same_as(X)
    for x in range(16):
        for z in range(4):
            assert evaluate(out, {"x": x, "z": z}) == evaluate(e, {"x": x, "z": z})


def test_from_term_of_every_division() -> None:
    bounds = {"x": (-9, 9), "y": (-3, 3), "p": (1, 4), "n": (-4, -1)}
    text = (
        "eucliddiv(x, y) + euclidmod(x, y) + eucliddiv(x, p) + euclidmod(x, n)"
        " + eucliddiv(x, n) + ceildiv(x, y) + truncdiv(x, p) - truncmod(x, n)"
    )
    term = quorem.parse(text, bounds)
    e = from_term(term)
    for x in range(-9, 10):
        for y in (-3, -2, -1, 1, 2, 3):
            for p, n in ((1, -1), (3, -4), (4, -2)):
                env = {"x": x, "y": y, "p": p, "n": n}
                assert evaluate(e, env) == quorem.evaluate(term, env)


def test_conditions_and_errors() -> None:
    cond = tirx.And(tirx.LT(X, _i(3)), tirx.NE(Y, _i(0)))
    out = simplify(cond, BOUNDS)
    assert str(out.ty.dtype) == "bool"
    assert str(from_term(to_term(cond, BOUNDS), dtype="bool").ty.dtype) == "bool"
    with pytest.raises(TVMError):
        to_term(tirx.FloatImm("float32", 1.5))


def test_a_constant_the_dtype_cannot_hold_is_a_clear_error() -> None:
    """quorem folds x*2**62*4 exactly; 2**64 is no int64: from_term says so, simplify keeps
    the expression (never a traceback from TVM's constructor)."""
    e = X * (2**62) * 4
    leaves: dict[str, Any] = {}
    term = quorem.simplify(to_term(e, BOUNDS, leaves))
    with pytest.raises(TVMError, match="does not fit int"):
        from_term(term, leaves, dtype="int64")
    assert simplify(e, BOUNDS).same_as(e)
