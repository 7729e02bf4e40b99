"""Random expression trees for the fuzzers: generation, text, terms and evaluation.

A tree is JSON data, so a failing case is stored and replayed as is:

* ``["c", value]``: an integer literal;
* ``["v", name]``: a variable (its bounds are the case's ``vars``);
* ``[op, a, b]`` for ``op`` in :data:`BINARY`, ``["neg", a]``, ``["not", a]``.

``//`` and ``%`` mean the division of the semantics the tree is built for; ``fd``,
``fm``, ``td``, ``tm``, ``ed``, ``em`` are the explicit ``floordiv``, ``floormod``,
``truncdiv``, ``truncmod``, ``eucliddiv`` and ``euclidmod``, and ``cd`` is ``ceildiv``.
The evaluator here is independent of the engine's (its own division functions), so that
a wrong canonical form at build time is caught as well as a wrong rewrite.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping
from typing import Any, Final

import quorem
from quorem import Semantics, Term

Tree = list[Any]
Bounds = dict[str, tuple[int | None, int | None]]

I31: Final = 2**31
I63: Final = 2**63

BINARY: Final = (
    "+", "-", "*", "//", "%", "fd", "fm", "td", "tm", "ed", "em", "cd",
    "max", "min", "<", "<=", ">", ">=", "==", "!=", "and", "or",
)  # fmt: skip
DIVISIONS: Final = frozenset({"//", "%", "fd", "fm", "td", "tm", "ed", "em", "cd"})
_FUNC_NAME: Final = {
    "fd": "floordiv",
    "fm": "floormod",
    "td": "truncdiv",
    "tm": "truncmod",
    "ed": "eucliddiv",
    "em": "euclidmod",
    "cd": "ceildiv",
}
_PREC: Final = {"<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1, "+": 2, "-": 2}
_PREC.update({"*": 3, "//": 3, "%": 3, "or": -2, "and": -1})
_CMP: Final = frozenset({"<", "<=", ">", ">=", "==", "!="})


class UndefinedError(Exception):
    """A division by zero at the point evaluated."""


# ------------------------------------------------------------------------ arithmetic
def floordiv(a: int, b: int) -> int:
    if b == 0:
        raise UndefinedError
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0) and q * abs(b) != abs(a):
        return -q - 1
    return -q if (a < 0) != (b < 0) else q


def truncdiv(a: int, b: int) -> int:
    if b == 0:
        raise UndefinedError
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def floormod(a: int, b: int) -> int:
    return a - b * floordiv(a, b)


def truncmod(a: int, b: int) -> int:
    return a - b * truncdiv(a, b)


def euclidmod(a: int, b: int) -> int:
    # The remainder of |b| rounding down is in [0, |b|), which defines Euclid's.
    return floormod(a, abs(b))


def eucliddiv(a: int, b: int) -> int:
    return (a - euclidmod(a, b)) // b  # exact


def ceildiv(a: int, b: int) -> int:
    return -floordiv(-a, b)


_ARITH: Final[dict[str, Callable[[int, int], int]]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "fd": floordiv,
    "fm": floormod,
    "td": truncdiv,
    "tm": truncmod,
    "ed": eucliddiv,
    "em": euclidmod,
    "cd": ceildiv,
    "max": max,
    "min": min,
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "and": lambda a, b: int(a != 0 and b != 0),
    "or": lambda a, b: int(a != 0 or b != 0),
}


_SPELLED: Final = {
    Semantics.FLOOR: ("fd", "fm"),
    Semantics.TRUNC: ("td", "tm"),
    Semantics.EUCLID: ("ed", "em"),
}


def _explicit(op: str, sem: Semantics) -> str:
    if op == "//":
        return _SPELLED[sem][0]
    if op == "%":
        return _SPELLED[sem][1]
    return op


def eval_tree(tree: Tree, env: Mapping[str, int], sem: Semantics) -> int:
    """The value of ``tree`` at ``env``; raises :class:`UndefinedError` on a division by zero."""
    memo: dict[int, int] = {}

    def go(t: Tree) -> int:
        key = id(t)
        if key in memo:
            return memo[key]
        kind = t[0]
        if kind == "c":
            v = int(t[1])
        elif kind == "v":
            v = env[t[1]]
        elif kind == "neg":
            v = -go(t[1])
        elif kind == "not":
            v = int(go(t[1]) == 0)
        else:
            v = _ARITH[_explicit(kind, sem)](go(t[1]), go(t[2]))
        memo[key] = v
        return v

    return go(tree)


# ------------------------------------------------------------------------ terms
_OP_VALUE: Final[dict[quorem.Op, Callable[[int, int], int]]] = {
    quorem.Op.FLOORDIV: floordiv,
    quorem.Op.FLOORMOD: floormod,
    quorem.Op.TRUNCDIV: truncdiv,
    quorem.Op.TRUNCMOD: truncmod,
    quorem.Op.EUCLIDDIV: eucliddiv,
    quorem.Op.EUCLIDMOD: euclidmod,
    quorem.Op.CEILDIV: ceildiv,
    quorem.Op.MAX: max,
    quorem.Op.MIN: min,
    quorem.Op.LT: lambda a, b: int(a < b),
    quorem.Op.LE: lambda a, b: int(a <= b),
    quorem.Op.EQ: lambda a, b: int(a == b),
    quorem.Op.NE: lambda a, b: int(a != b),
    quorem.Op.AND: lambda a, b: int(a != 0 and b != 0),
    quorem.Op.OR: lambda a, b: int(a != 0 or b != 0),
}


def eval_term_all(term: Term, env: Mapping[str, int]) -> dict[Term, int] | None:
    """Every subterm's value at ``env`` by this module's arithmetic; None if undefined."""
    values: dict[Term, int] = {}
    stack: list[tuple[Term, bool]] = [(term, False)]
    try:
        while stack:
            t, ready = stack.pop()
            if t in values:
                continue
            op = t.op
            if op is quorem.Op.CONST:
                values[t] = t.arg
            elif op is quorem.Op.VAR:
                values[t] = env[t.arg[0]]
            elif not ready:
                stack.append((t, True))
                stack.extend((c, False) for c in t.args if c not in values)
            elif op is quorem.Op.ADD:
                coefs, k = t.arg
                values[t] = k + sum(c * values[a] for c, a in zip(coefs, t.args, strict=True))
            elif op is quorem.Op.MUL:
                p = 1
                for a in t.args:
                    p *= values[a]
                values[t] = p
            else:
                values[t] = _OP_VALUE[op](values[t.args[0]], values[t.args[1]])
    except UndefinedError:
        return None
    return values


def range_violation(values: Mapping[Term, int]) -> str | None:
    """The first subterm whose value lies outside ``[vmin, vmax]``, described; else None."""
    for t, v in values.items():
        if (t.vmin is not None and v < t.vmin) or (t.vmax is not None and v > t.vmax):
            return f"{quorem.to_text(t, limit=300)} = {v} outside [{t.vmin}, {t.vmax}]"
    return None


_QUOTIENT_OF: Final = {names[0]: sem for sem, names in _SPELLED.items()}
_REMAINDER_OF: Final = {names[1]: sem for sem, names in _SPELLED.items()}


def _divide(
    make: Callable[[Term, Term, Semantics], Term], sem: Semantics, a: Term, b: Term
) -> Term:
    return make(a, b, sem)


_BUILD: Final[dict[str, Callable[[Term, Term], Term]]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    **{name: functools.partial(_divide, quorem.div, sem) for name, sem in _QUOTIENT_OF.items()},
    **{name: functools.partial(_divide, quorem.mod, sem) for name, sem in _REMAINDER_OF.items()},
    "cd": quorem.ceildiv,
    "max": quorem.maximum,
    "min": quorem.minimum,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "and": quorem.logical_and,
    "or": quorem.logical_or,
    "==": lambda a, b: quorem.compare(quorem.Op.EQ, a, b),
    "!=": lambda a, b: quorem.compare(quorem.Op.NE, a, b),
}


def build(tree: Tree, bounds: Mapping[str, tuple[int | None, int | None]], sem: Semantics) -> Term:
    """The quorem term of ``tree`` built with the API (raises TermError like the API)."""
    memo: dict[int, Term] = {}
    variables = {n: quorem.var(n, lo, hi) for n, (lo, hi) in bounds.items()}

    def go(t: Tree) -> Term:
        key = id(t)
        if key in memo:
            return memo[key]
        kind = t[0]
        r: Term
        if kind == "c":
            r = quorem.const(int(t[1]))
        elif kind == "v":
            r = variables[t[1]]
        elif kind == "neg":
            r = -go(t[1])
        elif kind == "not":
            r = quorem.logical_not(go(t[1]))
        else:
            r = _BUILD[_explicit(kind, sem)](go(t[1]), go(t[2]))
        memo[key] = r
        return r

    return go(tree)


def to_source(tree: Tree, rng: random.Random | None = None) -> str:
    """``tree`` in quorem's expression syntax (``//``, ``%`` for the parse's semantics).

    With ``rng``, spelling varies: extra parentheses and spaces, hex and ``_`` literals.
    """

    def lit(v: int) -> str:
        if rng is not None and v >= 0:
            pick = rng.random()
            if pick < 0.1:
                return hex(v)
            if pick < 0.15 and v >= 1000:
                return f"{v:_}"
        return str(v)

    def go(t: Tree, need: int) -> str:
        kind = t[0]
        if kind == "c":
            v = int(t[1])
            text = lit(v) if v >= 0 else "-" + lit(-v)
            prec = 4 if v < 0 else 5
        elif kind == "v":
            text, prec = str(t[1]), 5
        elif kind == "neg":
            text, prec = "-" + go(t[1], 4), 4
        elif kind == "not":
            text, prec = "not " + go(t[1], 0), 0
        elif kind in _FUNC_NAME or kind in ("max", "min"):
            name = _FUNC_NAME.get(kind, kind)
            text, prec = f"{name}({go(t[1], 0)}, {go(t[2], 0)})", 5
        else:
            prec = _PREC[kind]
            # Left-associative; comparisons do not chain, so both sides bind tighter.
            left = go(t[1], prec + 1 if kind in _CMP else prec)
            right = go(t[2], prec + 1)
            sp = " " if rng is None or rng.random() < 0.7 or kind in ("and", "or") else ""
            text = f"{left}{sp}{kind}{sp}{right}"
        if prec < need or (rng is not None and rng.random() < 0.05):
            return f"({text})"
        return text

    return go(tree, 0)


# ------------------------------------------------------------------------ generation
def random_const(rng: random.Random) -> int:
    """A constant biased to the interesting places: 0, powers of two, 2**31, 2**63, huge."""
    pick = rng.random()
    sign = -1 if rng.random() < 0.35 else 1
    if pick < 0.35:
        return rng.randint(-8, 8)
    if pick < 0.55:
        k = rng.randint(1, 12)
        return int(sign * (2**k + rng.choice((-1, 0, 0, 1))))
    if pick < 0.65:
        return sign * I31 + rng.randint(-2, 2)
    if pick < 0.75:
        return sign * I63 + rng.randint(-2, 2)
    if pick < 0.8:
        return int(sign * (2 ** rng.choice((32, 62, 64))) + rng.randint(-1, 1))
    if pick < 0.84:
        return sign * rng.getrandbits(rng.randint(65, 130))
    return rng.randint(-1000, 1000)


def random_bounds(rng: random.Random) -> tuple[int | None, int | None]:
    """An interval: small, negative, zero-crossing, one point, unbounded sides, at limits."""
    pick = rng.random()
    if pick < 0.25:
        return 0, rng.choice((1, 3, 7, 15, 31, 63, 100, 1023, rng.randint(0, 300)))
    if pick < 0.4:
        n = rng.randint(1, 200)
        return -n, rng.choice((n, rng.randint(-n, n)))
    if pick < 0.48:
        lo = rng.randint(-50, 50)
        return lo, lo + rng.randint(0, 3)
    if pick < 0.56:
        return rng.choice((0, 1, -5, rng.randint(-100, 100))), None
    if pick < 0.62:
        return None, rng.choice((0, -1, 7, rng.randint(-100, 100)))
    if pick < 0.7:
        return None, None
    if pick < 0.78:
        c = rng.choice((I31, -I31, I31 - 1))
        return c - rng.randint(0, 4), c + rng.randint(0, 4)
    if pick < 0.86:
        c = rng.choice((I63, -I63, I63 - 1))
        return c - rng.randint(0, 4), c + rng.randint(0, 4)
    if pick < 0.92:
        return rng.choice(((0, I31 - 1), (-I31, I31 - 1), (-I63, I63 - 1), (0, I63 - 1)))
    big = rng.getrandbits(80)
    return -big, big


NAMES: Final = ("x", "y", "z", "w", "i", "j")


class TreeGen:
    """Random trees over a few bounded variables, with shared subtrees."""

    def __init__(self, rng: random.Random, n_vars: int | None = None) -> None:
        self.rng = rng
        count = n_vars if n_vars is not None else rng.randint(1, 4)
        names = rng.sample(NAMES, count)
        self.bounds: Bounds = {n: random_bounds(rng) for n in names}
        self.pool: list[Tree] = []

    def leaf(self) -> Tree:
        if self.rng.random() < 0.6:
            return ["v", self.rng.choice(list(self.bounds))]
        return ["c", random_const(self.rng)]

    def divisor(self, depth: int) -> Tree:
        rng = self.rng
        pick = rng.random()
        if pick < 0.7:
            c = rng.choice((2, 3, 4, 8, 16, 5, 6, 7, 32, 64, 128, -2, -3, -4, -8, 1, -1))
            if rng.random() < 0.15:
                c = random_const(rng) or 3
            return ["c", c]
        return self.tree(depth - 1)

    def affine(self, d: int) -> Tree:
        """A sum of scaled variables and a constant, coefficients often multiples of ``d``."""
        rng = self.rng
        names = list(self.bounds)
        t: Tree = ["c", rng.choice((0, 0, 1, d - 1, d, -1, 3 * d + 1, random_const(rng)))]
        for name in rng.sample(names, rng.randint(1, len(names))):
            c = rng.choice(
                (d, 2 * d, d * rng.randint(1, 8), 1, rng.randint(-9, 9), -d, d - 1, d + 1)
            )
            term: Tree = ["v", name]
            if rng.random() < 0.2:
                term = ["//", term, ["c", rng.choice((2, 4, 8, 3))]]
            t = ["+", t, ["*", term, ["c", c]]]
        return t

    def index_tree(self) -> Tree:
        """The shapes tiling and reshapes leave: divisions of sums, nested, recombined."""
        rng = self.rng
        a, b = rng.choice((2, 3, 4, 8, 16, 5, -2, -4)), rng.choice((2, 3, 4, 8, 6, -3))
        e = self.affine(a) if rng.random() < 0.8 else self.tree(2)
        shape = rng.randrange(9)
        if shape == 8:
            # A symbolic divisor: a variable, times a constant or not.
            y: Tree = ["v", rng.choice(list(self.bounds))]
            if rng.random() < 0.5:
                y = ["*", y, ["c", a]]
            e = ["+", ["*", y, ["c", rng.choice((1, 2, b))]], self.leaf()]
            return (
                ["+", ["*", ["//", e, y], y], ["%", e, y]]
                if rng.random() < 0.5
                else [rng.choice(("//", "%")), e, y]
            )
        if shape == 0:
            return ["//", e, ["c", a]]
        if shape == 1:
            return ["%", e, ["c", a]]
        if shape == 2:
            return ["+", ["*", ["//", e, ["c", a]], ["c", a]], ["%", e, ["c", a]]]
        if shape == 3:
            return ["//", ["//", e, ["c", a]], ["c", b]]
        if shape == 4:
            return ["%", ["//", e, ["c", a]], ["c", b]]
        if shape == 5:
            return ["//", ["%", e, ["c", a * b]], ["c", b]]
        if shape == 6:
            return ["%", ["%", e, ["c", a * b]], ["c", a]]
        return ["+", ["*", ["%", e, ["c", a]], ["c", b]], ["*", ["//", e, ["c", a]], ["c", a * b]]]

    def tree(self, depth: int) -> Tree:
        rng = self.rng
        if self.pool and rng.random() < 0.12:
            return rng.choice(self.pool)
        if depth >= 2 and rng.random() < 0.2:
            shaped = self.index_tree()
            if rng.random() < 0.3:
                self.pool.append(shaped)
            return shaped
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf()
        pick = rng.random()
        t: Tree
        if pick < 0.3:
            op = rng.choice(("+", "+", "-"))
            t = [op, self.tree(depth - 1), self.tree(depth - 1)]
        elif pick < 0.42:
            # Scaled: a constant times a subtree, the shape index arithmetic has.
            t = ["*", self.tree(depth - 1), ["c", rng.choice((2, 3, 4, 8, 16, -1, -4, 7))]]
        elif pick < 0.47:
            t = ["*", self.tree(depth - 1), self.tree(depth - 1)]
        elif pick < 0.75:
            op = rng.choice(("//", "%", "//", "%", "fd", "fm", "td", "tm"))
            t = [op, self.tree(depth - 1), self.divisor(depth)]
        elif pick < 0.85:
            t = [rng.choice(("max", "min")), self.tree(depth - 1), self.tree(depth - 1)]
        elif pick < 0.9:
            t = [rng.choice(sorted(_CMP)), self.tree(depth - 1), self.tree(depth - 1)]
        elif pick < 0.94:
            # Masks: and/or over comparisons mostly, sometimes over any terms; or not.
            if rng.random() < 0.2:
                t = ["not", self.tree(depth - 1)]
            else:
                op = rng.choice(("and", "or"))
                t = [op, self.tree(depth - 1), self.tree(depth - 1)]
        else:
            t = ["neg", self.tree(depth - 1)]
        if rng.random() < 0.3:
            self.pool.append(t)
        return t


def uses_semantics(tree: Tree) -> bool:
    """Whether ``tree`` has a ``//`` or ``%`` whose meaning depends on the semantics."""
    seen: set[int] = set()
    stack = [tree]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t[0] in ("//", "%"):
            return True
        stack.extend(c for c in t[1:] if isinstance(c, list))
    return False


def _values(rng: random.Random, lo: int | None, hi: int | None) -> list[int]:
    """Candidate values of a variable: its ends, near them, 0, and far out where unbounded."""
    out: list[int] = []
    if lo is not None:
        out += [lo, lo + 1]
    if hi is not None:
        out += [hi, hi - 1]
    far = [I31, I31 - 1, I63 - 1, I63, 2**70, 1, 7, 100]
    if lo is None:
        out += [-v for v in far] + [-rng.getrandbits(rng.randint(1, 70))]
    if hi is None:
        out += [*far, rng.getrandbits(rng.randint(1, 70))]
    out.append(0)
    if lo is not None and hi is not None:
        out.append(rng.randint(lo, hi))
    elif lo is not None:
        out.append(lo + rng.getrandbits(rng.randint(1, 40)))
    elif hi is not None:
        out.append(hi - rng.getrandbits(rng.randint(1, 40)))
    return [v for v in out if (lo is None or v >= lo) and (hi is None or v <= hi)]


def random_points(rng: random.Random, bounds: Bounds, count: int) -> list[dict[str, int]]:
    """The box's lower and upper corner and ``count`` random points, inside the box."""
    names = sorted(bounds)
    cands = {n: _values(rng, *bounds[n]) for n in names}
    pts: list[dict[str, int]] = []
    for side in (0, 1):
        p = {}
        for n in names:
            lo, hi = bounds[n]
            end = lo if side == 0 else hi
            p[n] = end if end is not None else rng.choice(cands[n])
        pts.append(p)
    pts.extend({n: rng.choice(cands[n]) for n in names} for _ in range(count))
    return pts
