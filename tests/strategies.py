"""Hypothesis strategies for quorem terms, variable boxes and evaluation points.

The strategies build random index arithmetic the way tensor compilers produce it:
linear combinations of bounded index variables, divided and reduced by constants (mostly
positive, sometimes negative), sometimes by variable terms, mixed with ``max``, ``min``,
comparisons and ``ceildiv``, under floor, truncating or Euclidean semantics. A *box* maps
each variable name to its inclusive bounds ``(lo, hi)``; every term drawn for a box uses
exactly those bounds, so ``quorem.parse(text, box, semantics)`` rebuilds the same variables.

Unbounded sides (``None``) are only produced when asked for; points are then drawn from
a finite window next to the bounded side (or around zero), so terms can still be
evaluated.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from quorem import arith
from quorem.ops import Op, Semantics
from quorem.term import (
    Term,
    ceildiv,
    compare,
    const,
    div,
    linear,
    maximum,
    minimum,
    mod,
    mul,
    var,
)

__all__ = [
    "BIG",
    "NAMES",
    "Box",
    "Case",
    "SyntaxCase",
    "bounds",
    "boxes",
    "cases",
    "constant_divisors",
    "expressions",
    "intervals",
    "point_values",
    "points",
    "random_cases",
    "semantics",
    "syntax_cases",
    "tensor_cases",
]

NAMES: tuple[str, ...] = ("a", "b", "c", "i", "j", "k")
"""The pool of variable names used by random expressions."""

BIG = 2**40
"""Magnitude of the occasional large bound."""

SMALL = 24
"""Magnitude of the usual small bound."""

UNBOUNDED_WINDOW = 2**40
"""How far from its bounded side (or from zero) a point of an unbounded variable may lie."""

Box = dict[str, tuple[int | None, int | None]]
"""Inclusive bounds per variable name; ``None`` is an unbounded side."""


@dataclasses.dataclass(frozen=True)
class Case:
    """A random term together with the box of its variables and its division semantics."""

    box: Box
    semantics: Semantics
    term: Term

    def variables(self) -> list[Term]:
        """The variable terms of the box (each with the box's bounds)."""
        return [var(name, lo, hi) for name, (lo, hi) in self.box.items()]


def semantics() -> st.SearchStrategy[Semantics]:
    """Floor, truncating or Euclidean division semantics."""
    return st.sampled_from(list(Semantics))


@st.composite
def bounds(
    draw: st.DrawFn, *, allow_unbounded: bool = False, allow_big: bool = True
) -> tuple[int | None, int | None]:
    """Inclusive bounds ``(lo, hi)`` of one variable.

    Mostly small (possibly negative) ranges, often index-like ``[0, n)``, sometimes wide
    (up to ``±BIG``); with ``allow_unbounded`` a side may be ``None``.
    """
    magnitude = draw(st.sampled_from([SMALL, SMALL, SMALL, 300, BIG] if allow_big else [SMALL]))
    index_like = draw(st.integers(0, 2)) == 0  # an index variable: [0, n)
    lo = 0 if index_like else draw(st.integers(-magnitude, magnitude))
    width = draw(st.one_of(st.integers(0, 2 * SMALL), st.integers(0, 2 * magnitude)))
    hi = lo + width
    low: int | None = lo
    high: int | None = hi
    if allow_unbounded:
        side = draw(st.integers(0, 5))
        if side == 0:
            low = None
        elif side == 1:
            high = None
        elif side == 2:
            low = high = None
    return (low, high)


@st.composite
def boxes(
    draw: st.DrawFn,
    *,
    min_vars: int = 1,
    max_vars: int = 3,
    allow_unbounded: bool = False,
    allow_big: bool = True,
    names: Sequence[str] = NAMES,
) -> Box:
    """A box: between ``min_vars`` and ``max_vars`` distinct names, each with its bounds."""
    chosen = draw(
        st.lists(st.sampled_from(list(names)), min_size=min_vars, max_size=max_vars, unique=True)
    )
    return {
        name: draw(bounds(allow_unbounded=allow_unbounded, allow_big=allow_big)) for name in chosen
    }


def point_values(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    """Values in ``[lo, hi]``, biased to the ends and zero; unbounded sides use a finite window."""
    if lo is None and hi is None:
        lo, hi = -UNBOUNDED_WINDOW, UNBOUNDED_WINDOW
    elif lo is None:
        assert hi is not None
        lo = hi - UNBOUNDED_WINDOW
    elif hi is None:
        hi = lo + UNBOUNDED_WINDOW
    special = sorted({v for v in (lo, lo + 1, hi - 1, hi, 0, -1, 1) if lo <= v <= hi})
    return st.one_of(st.sampled_from(special), st.integers(lo, hi))


def points(box: Mapping[str, tuple[int | None, int | None]]) -> st.SearchStrategy[dict[str, int]]:
    """An evaluation point: a value inside its bounds for every variable of ``box``."""
    return st.fixed_dictionaries({name: point_values(lo, hi) for name, (lo, hi) in box.items()})


def constant_divisors() -> st.SearchStrategy[int]:
    """Non-zero constant divisors: mostly small positive tile sizes, sometimes negative."""
    return st.one_of(
        st.sampled_from([2, 3, 4, 8, 16, 32, 5, 6, 7, 12]),
        st.sampled_from([1, -1, -2, -3, -4, -8]),
        st.integers(1, 64),
        st.integers(-64, -1),
    )


def _constants() -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(-8, 8),
        st.sampled_from([16, 32, 64, 128, -16, -64]),
        st.integers(-(2**45), 2**45),
    )


def _nonzero(t: Term) -> Term:
    """``t``, or the constant 1 if ``t`` is the constant 0 (a term may not divide by it)."""
    return const(1) if t.op is Op.CONST and t.arg == 0 else t


_KINDS: tuple[str, ...] = (
    "add", "add", "sub", "scale", "scale", "mul",
    "div", "div", "div", "mod", "mod", "mod", "div_term", "mod_term",
    "max", "min", "cmp", "neg", "split", "split_term", "offset", "ceildiv",
)  # fmt: skip
_CMP_OPS: tuple[Op, ...] = (Op.LT, Op.LE, Op.EQ, Op.NE)


def _expression(
    draw: st.DrawFn, variables: Sequence[Term], sem: Semantics, depth: int, term_divisors: bool
) -> Term:
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return const(draw(_constants()))
        return draw(st.sampled_from(list(variables)))

    def sub(d: int = depth - 1) -> Term:
        return _expression(draw, variables, sem, d, term_divisors)

    kinds = _KINDS if term_divisors else tuple(k for k in _KINDS if not k.endswith("_term"))
    kind = draw(st.sampled_from(kinds))
    if kind == "add":
        return sub() + sub()
    if kind == "sub":
        return sub() - sub()
    if kind == "neg":
        return -sub()
    if kind == "scale":
        return sub() * draw(st.one_of(st.integers(-8, 16), st.sampled_from([32, 64, 128, 1024])))
    if kind == "mul":
        return mul(draw(st.sampled_from(list(variables))), sub())
    if kind == "div":
        return div(sub(), const(draw(constant_divisors())), sem)
    if kind == "mod":
        return mod(sub(), const(draw(constant_divisors())), sem)
    if kind == "div_term":
        return div(sub(), _nonzero(sub(1)), sem)
    if kind == "mod_term":
        return mod(sub(), _nonzero(sub(1)), sem)
    if kind == "ceildiv":
        return ceildiv(sub(), const(draw(constant_divisors())))
    if kind == "max":
        return maximum(sub(), sub())
    if kind == "min":
        return minimum(sub(), sub())
    if kind in ("split", "split_term"):
        # x == (x // d)*d + x % d, written out (possibly with another addend).
        x = sub()
        d = _nonzero(sub(1)) if kind == "split_term" else const(draw(constant_divisors()))
        rest = sub(0) if draw(st.booleans()) else const(0)
        return div(x, d, sem) * d + mod(x, d, sem) + rest
    if kind == "offset":
        # (g*x + c) // (g*n): a multiple of g plus a small offset, as in vectorised loads.
        g = draw(st.sampled_from([2, 4, 8]))
        n = draw(st.sampled_from([1, 2, 3, 4, -2]))
        c = draw(st.integers(-g, 2 * g))
        op = div if draw(st.booleans()) else mod
        return op(sub() * g + c, const(g * n), sem)
    return compare(draw(st.sampled_from(_CMP_OPS)), sub(), sub())


@st.composite
def expressions(
    draw: st.DrawFn,
    box: Mapping[str, tuple[int | None, int | None]],
    sem: Semantics,
    *,
    max_depth: int = 4,
    term_divisors: bool = True,
) -> Term:
    """A random term over the variables of ``box`` under semantics ``sem``.

    Built from ``+ - *`` (by constants mostly, sometimes variable times term), ``//`` and
    ``%`` by constants (positive and negative) and, with ``term_divisors``, by variable
    terms that may be zero at some points, ``max``, ``min`` and comparisons; also the
    div-mod identity written out (``(x // d)*d + x % d``, ``d`` constant or a term) and
    multiples with small offsets (``(g*x + c) // (g*n)``) so the rewrite rules fire.
    """
    variables = [var(name, lo, hi) for name, (lo, hi) in box.items()]
    return _expression(draw, variables, sem, max_depth, term_divisors)


@st.composite
def random_cases(
    draw: st.DrawFn,
    *,
    allow_unbounded: bool = False,
    allow_big: bool = True,
    term_divisors: bool = True,
    max_depth: int = 4,
) -> Case:
    """A random expression with its box and semantics (see :func:`expressions`)."""
    box = draw(boxes(allow_unbounded=allow_unbounded, allow_big=allow_big))
    sem = draw(semantics())
    term = draw(expressions(box, sem, max_depth=max_depth, term_divisors=term_divisors))
    return Case(box, sem, term)


_DIMS: tuple[int, ...] = (1, 2, 3, 4, 4, 6, 8, 8, 16, 32, 5, 7)


def _prod(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _row_major_strides(dims: Sequence[int]) -> list[int]:
    return [_prod(dims[i + 1 :]) for i in range(len(dims))]


def _refactor(draw: st.DrawFn, total: int) -> list[int]:
    """A random factorisation of ``total`` into 1 to 3 dimensions (a reshape target)."""
    dims = []
    rest = total
    for _ in range(draw(st.integers(0, 2))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        dims.append(d)
        rest //= d
    dims.append(rest)
    return dims


@st.composite
def tensor_cases(draw: st.DrawFn, *, allow_negative_offset: bool = True) -> Case:
    """Tensor-like index arithmetic: a flat index split into tiles and recombined.

    Index variables ``i0, i1, ...`` range over ``[0, d)`` of random dimensions; their
    row-major flat index ``f = i0*S0 + i1*S1 + ...`` (plus, sometimes, an offset) is then
    viewed through a reshape: coordinates ``(f // T) % E`` of a new shape, recombined
    with the new (possibly permuted, i.e. transposed) strides, or one of the classic
    patterns ``f // s * s + f % s``, ``(f // a) % c + (f // (a*c))*c``,
    ``(f % c1)*c2 + (f // c1)*(c1*c2)``, ``(f // s1) // s2``, ``(f // s1 + y) // s2``.
    """
    sem = draw(semantics())
    dims = draw(st.lists(st.sampled_from(_DIMS), min_size=1, max_size=3))
    box: Box = {f"i{n}": (0, d - 1) for n, d in enumerate(dims)}
    idx = [var(f"i{n}", 0, d - 1) for n, d in enumerate(dims)]
    offset = 0
    if draw(st.integers(0, 3)) == 0:
        low = -8 if allow_negative_offset else 0
        offset = draw(st.integers(low, 8))
    flat = linear(zip(idx, _row_major_strides(dims), strict=True), offset)
    total = _prod(dims)

    def dv(a: Term, b: int) -> Term:
        return div(a, const(b), sem)

    def md(a: Term, b: int) -> Term:
        return mod(a, const(b), sem)

    tile = draw(st.sampled_from([1, 2, 3, 4, 8, 16, 5, 6]))
    tile2 = draw(st.sampled_from([1, 2, 3, 4, 8, 16]))
    shape = draw(st.integers(0, 7))
    if shape == 0:
        term = dv(flat, tile) * tile + md(flat, tile)
    elif shape == 1:
        term = md(dv(flat, tile), tile2) + dv(flat, tile * tile2) * tile2
    elif shape == 2:
        scale = draw(st.sampled_from([1, 2, 4, 3]))
        term = md(flat, tile) * scale + dv(flat, tile) * (tile * scale)
    elif shape == 3:
        term = dv(dv(flat, tile), tile2)
    elif shape == 4:
        extra = draw(st.sampled_from(idx))
        term = dv(dv(flat, tile) + extra, tile2)
    elif shape == 7:
        vec = draw(st.sampled_from([2, 4, 8]))
        lane = draw(st.integers(0, vec - 1))
        vflat = flat * vec + lane
        term = draw(
            st.sampled_from(
                [dv(vflat, vec * tile), md(vflat, vec * tile), md(dv(vflat, vec), tile)]
            )
        )
    elif shape == 5:
        term = draw(st.sampled_from([dv(flat, tile), md(flat, tile), md(dv(flat, tile), tile2)]))
    else:
        new = _refactor(draw, max(total, 1))
        strides = _row_major_strides(new)
        coords = []
        for n, (d, s) in enumerate(zip(new, strides, strict=True)):
            q = dv(flat, s) if s != 1 else flat
            coords.append(q if n == 0 and not offset else md(q, d))
        order = draw(st.permutations(list(range(len(new)))))
        permuted = [new[o] for o in order]
        out_strides = _row_major_strides(permuted)
        if draw(st.booleans()):
            term = coords[draw(st.integers(0, len(coords) - 1))]
        else:
            term = linear((coords[o], s) for o, s in zip(order, out_strides, strict=True))
    return Case(box, sem, term)


def cases(*, allow_unbounded: bool = False) -> st.SearchStrategy[Case]:
    """Random expressions and tensor-like index expressions, mixed."""
    return st.one_of(random_cases(allow_unbounded=allow_unbounded), tensor_cases())


# ---------------------------------------------------------------- expression text


@dataclasses.dataclass(frozen=True)
class SyntaxCase:
    """Expression text built from a Python syntax tree, with its box and semantics.

    ``value(env)`` evaluates the tree directly (``//`` and ``%`` per ``semantics``),
    independently of quorem; it raises ZeroDivisionError where the expression is undefined.
    """

    text: str
    box: Box
    semantics: Semantics
    tree: ast.expr

    def value(self, env: Mapping[str, int]) -> int:
        """The value of the syntax tree at ``env``, computed without quorem."""
        return _eval_ast(self.tree, env, self.semantics)


def _euclid_mod(a: int, b: int) -> int:
    """The Euclidean remainder, from its definition: the floor remainder by ``|b|``."""
    return a % abs(b)


def _euclid_div(a: int, b: int) -> int:
    """The Euclidean quotient: ``(a - r) / b`` is exact."""
    quotient, rest = divmod(a - _euclid_mod(a, b), b)
    assert rest == 0
    return quotient


def _ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` from its definition: the least ``q`` with ``q*b >= a`` (``b > 0``)."""
    if b < 0:
        a, b = -a, -b
    return (a + b - 1) // b


_DIVIDE: dict[Semantics, tuple[Callable[[int, int], int], Callable[[int, int], int]]] = {
    Semantics.FLOOR: (arith.floordiv, arith.floormod),
    Semantics.TRUNC: (arith.truncdiv, arith.truncmod),
    Semantics.EUCLID: (_euclid_div, _euclid_mod),
}
_BIN_EVAL: dict[type, Callable[[int, int, Semantics], int]] = {
    ast.Add: lambda a, b, s: a + b,
    ast.Sub: lambda a, b, s: a - b,
    ast.Mult: lambda a, b, s: a * b,
    ast.FloorDiv: lambda a, b, s: _DIVIDE[s][0](a, b),
    ast.Mod: lambda a, b, s: _DIVIDE[s][1](a, b),
}
_CMP_EVAL: dict[type, Callable[[int, int], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}
_CALL_EVAL: dict[str, Callable[..., int]] = {
    "max": max,
    "min": min,
    "floordiv": arith.floordiv,
    "floormod": arith.floormod,
    "truncdiv": arith.truncdiv,
    "truncmod": arith.truncmod,
    "eucliddiv": _euclid_div,
    "euclidmod": _euclid_mod,
    "ceildiv": _ceil_div,
}


def _eval_ast(node: ast.expr, env: Mapping[str, int], sem: Semantics) -> int:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int)  # _syntax_tree writes integer constants only
        return int(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _eval_ast(node.operand, env, sem)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a = _eval_ast(node.left, env, sem)
        b = _eval_ast(node.right, env, sem)
        return _BIN_EVAL[type(node.op)](a, b, sem)
    if isinstance(node, ast.Compare):
        a = _eval_ast(node.left, env, sem)
        b = _eval_ast(node.comparators[0], env, sem)
        return int(_CMP_EVAL[type(node.ops[0])](a, b))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    args = [_eval_ast(a, env, sem) for a in node.args]
    return _CALL_EVAL[node.func.id](*args)


def _syntax_tree(draw: st.DrawFn, names: Sequence[str], depth: int) -> ast.expr:
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 2)) == 0:
            return ast.Constant(draw(st.integers(0, 40)))
        return ast.Name(draw(st.sampled_from(list(names))))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return ast.UnaryOp(
            draw(st.sampled_from([ast.USub(), ast.UAdd()])), _syntax_tree(draw, names, depth - 1)
        )
    if kind <= 2:
        op: Any = draw(
            st.sampled_from([ast.Add(), ast.Sub(), ast.Mult(), ast.FloorDiv(), ast.Mod()])
        )
        return ast.BinOp(
            _syntax_tree(draw, names, depth - 1), op, _syntax_tree(draw, names, depth - 1)
        )
    if kind == 3:
        cmp: Any = draw(
            st.sampled_from([ast.Lt(), ast.LtE(), ast.Gt(), ast.GtE(), ast.Eq(), ast.NotEq()])
        )
        return ast.Compare(
            _syntax_tree(draw, names, depth - 1), [cmp], [_syntax_tree(draw, names, depth - 1)]
        )
    func = draw(st.sampled_from(sorted(_CALL_EVAL)))
    n_args = draw(st.integers(2, 3)) if func in ("max", "min") else 2
    return ast.Call(
        ast.Name(func), [_syntax_tree(draw, names, depth - 1) for _ in range(n_args)], []
    )


@st.composite
def syntax_cases(draw: st.DrawFn, *, max_depth: int = 4) -> SyntaxCase:
    """Random expression *text* (printed by :func:`ast.unparse`, minimal parentheses).

    Uses unary ``+``/``-``, ``+ - * // %``, all six comparisons (never chained), ``max``,
    ``min`` with two or three arguments and the explicit division functions (``floordiv``,
    ``floormod``, ``truncdiv``, ``truncmod``, ``eucliddiv``, ``euclidmod``, ``ceildiv``).
    """
    box = draw(boxes(max_vars=3, allow_big=False))
    sem = draw(semantics())
    tree = _syntax_tree(draw, list(box), max_depth)
    return SyntaxCase(ast.unparse(tree), box, sem, tree)


@st.composite
def intervals(
    draw: st.DrawFn, *, magnitude: int = 2**64, allow_unbounded: bool = True
) -> tuple[int | None, int | None]:
    """An inclusive interval ``(lo, hi)`` with large endpoints; ``None`` is unbounded."""
    a = draw(st.integers(-magnitude, magnitude))
    b = draw(st.one_of(st.integers(-magnitude, magnitude), st.integers(a - 20, a + 20)))
    lo, hi = min(a, b), max(a, b)
    if allow_unbounded:
        side = draw(st.integers(0, 7))
        if side == 0:
            return (None, hi)
        if side == 1:
            return (lo, None)
        if side == 2:
            return (None, None)
    return (lo, hi)
