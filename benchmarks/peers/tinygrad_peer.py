"""tinygrad's symbolic rewriter as a benchmark system (tinygrad 0.14).

Index expressions are ``UOp`` graphs of dtype ``weakint`` over ``UOp.variable(name, lo,
hi)``; ``UOp.simplify()`` rewrites them with tinygrad's ``symbolic`` pattern matcher.
In 0.14 ``//`` and ``%`` on index UOps build ``Ops.FLOORDIV``/``Ops.FLOORMOD`` (floor,
Python semantics); truncating division is ``Ops.CDIV``/``Ops.CMOD``. Both are checked on
constants when the system loads, so each of quorem's four division operators maps to one
tinygrad op of the same meaning.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

from tinygrad.dtype import dtypes
from tinygrad.uop.divandmod import fold_divmod_general
from tinygrad.uop.ops import Ops as TOps
from tinygrad.uop.ops import UOp, UOpMetaClass, graph_rewrite

from benchmarks.peers.expr import Node, Unsupported, _postorder

__all__ = ["TinygradSystem"]

_DIV_OPS = {
    "floordiv": TOps.FLOORDIV,
    "floormod": TOps.FLOORMOD,
    "truncdiv": TOps.CDIV,
    "truncmod": TOps.CMOD,
}


def _const(v: int) -> UOp:
    return UOp.const(v, dtypes.weakint)


def _check_divisions() -> frozenset[str]:
    """The division ops whose constant folding has the meaning their name says."""
    expect = {
        "floordiv": lambda a, b: a // b,
        "floormod": lambda a, b: a % b,
        "truncdiv": lambda a, b: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
        "truncmod": lambda a, b: a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)),
    }
    ok = set()
    for name, op in _DIV_OPS.items():
        good = True
        for a, b in ((-7, 2), (7, -2), (-7, -2), (7, 2)):
            folded = _const(a).alu(op, _const(b)).simplify()
            if folded.op is not TOps.CONST or folded.arg != expect[name](a, b):
                good = False
        if good:
            ok.add(name)
    x = UOp.variable("x", -5, 5)
    if (x // 2).op is not TOps.FLOORDIV or (x % 2).op is not TOps.FLOORMOD:
        raise RuntimeError("this tinygrad's // and % on index UOps are not FLOORDIV/FLOORMOD")
    return frozenset(ok)


class TinygradSystem:
    """``UOp.simplify()`` (or, as ``tinygrad-sym``, ``graph_rewrite(u, sym)``)."""

    def __init__(self, use_sym: bool = False, floor_only: bool = False) -> None:
        self.name = "tinygrad-sym" if use_sym else "tinygrad-floor" if floor_only else "tinygrad"
        self.version = importlib.metadata.version("tinygrad")
        self.division_ops = _check_divisions()
        if floor_only:
            # tinygrad's div/mod rules are written for FLOORDIV/FLOORMOD; on CDIV/CMOD it
            # rewrites almost nothing. Index code uses floor ops on non-negative operands,
            # where the two agree: the runner gives a truncating division it can show
            # non-negative as the floor one (expr.lower_divisions), and others not at all.
            self.division_ops = self.division_ops & {"floordiv", "floormod"}
        self.use_sym = use_sym
        if use_sym:
            from tinygrad.uop.symbolic import sym  # noqa: PLC0415

            self._sym = sym
        lowered = (
            "truncating // and % on operands quorem's ranges show non-negative are built as "
            "FLOORDIV/FLOORMOD, which agree there; "
            if floor_only
            else ""
        )
        self.method = lowered + (
            "build: a fresh UOp graph from the tree (UOp.variable(name, lo, hi) of dtype "
            "weakint, an unbounded side given weakint's own limit); timed: "
            + ("graph_rewrite(u, sym) (the matcher codegen uses)" if use_sym else "u.simplify()")
            + ". UOps are hash-consed in a table of weak references and carry cached "
            "properties (_min_max, _src_ops); the one cache keyed on UOps that holds them "
            "strongly, fold_divmod_general's functools.cache, is cleared after every call, "
            "and the runner checks that the UOp table is back to its size before the build "
            "(so no UOp, and none of its cached properties, outlives its call). The pattern "
            "matchers' compiled code (upat_compile, functools.cache per pattern) is kept: "
            "it is per rule, not per expression, like quorem's compiled rules."
        )

    def build(self, tree: Node, bounds: Any) -> UOp:
        built: dict[int, UOp] = {}
        for n in _postorder(tree):
            built[id(n)] = self._build_node(n, [built[id(a)] for a in n.args], bounds)
        return built[id(tree)]

    def _build_node(self, n: Node, a: list[UOp], bounds: Any) -> UOp:
        op = n.op
        if op == "const":
            return _const(n.value)
        if op == "var":
            lo, hi = bounds.get(n.value, (None, None))
            lo = dtypes.weakint.min if lo is None else lo
            hi = dtypes.weakint.max if hi is None else hi
            return UOp.variable(n.value, lo, hi)
        if op in _DIV_OPS:
            if op not in self.division_ops:
                raise Unsupported(f"tinygrad has no {op}")
            return a[0].alu(_DIV_OPS[op], a[1])
        fold = _FOLDS.get(op)
        if fold is not None:
            acc = a[0]
            for b in a[1:]:
                acc = fold(acc, b)
            return acc
        if op == "neg":
            return -a[0]
        cmp = _COMPARE.get(op)
        if cmp is not None:
            return cmp(a[0], a[1]).cast(dtypes.weakint)
        if op in ("and", "or", "not"):
            # Logical over 0/1 integers: each operand as a bool (x != 0), then back.
            truth = [x.ne(0) for x in a]
            if op == "not":
                return truth[0].logical_not().cast(dtypes.weakint)
            acc = truth[0]
            for t in truth[1:]:
                acc = (acc & t) if op == "and" else (acc | t)
            return acc.cast(dtypes.weakint)
        raise Unsupported(f"no tinygrad translation for {op!r}")

    def simplify(self, built: UOp) -> UOp:
        if self.use_sym:
            return graph_rewrite(built, self._sym, name="sym")
        return built.simplify()

    def release(self) -> None:
        fold_divmod_general.cache_clear()

    def to_tree(self, result: UOp) -> Node:
        nodes: dict[int, Node] = {}
        stack: list[tuple[UOp, bool]] = [(result, False)]
        while stack:
            u, done = stack.pop()
            if id(u) in nodes:
                continue
            if _is_variable(u) or u.op is TOps.CONST:
                nodes[id(u)] = _read(u, [])
            elif done:
                nodes[id(u)] = _read(u, [nodes[id(s)] for s in u.src])
            else:
                stack.append((u, True))
                stack.extend((s, False) for s in u.src if id(s) not in nodes)
        return nodes[id(result)]

    def live_nodes(self) -> int | None:
        return len(UOpMetaClass.ucache)


_FOLDS: dict[str, Callable[[UOp, UOp], UOp]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "max": lambda x, y: x.maximum(y),
    "min": lambda x, y: x.minimum(y),
}
_COMPARE: dict[str, Callable[[UOp, UOp], UOp]] = {
    "lt": lambda x, y: x < y,
    "gt": lambda x, y: x > y,
    "le": lambda x, y: x <= y,
    "ge": lambda x, y: x >= y,
    "eq": lambda x, y: x.eq(y),
    "ne": lambda x, y: x.ne(y),
}
_READ = {
    TOps.ADD: "add",
    TOps.SUB: "sub",
    TOps.MUL: "mul",
    TOps.NEG: "neg",
    TOps.FLOORDIV: "floordiv",
    TOps.FLOORMOD: "floormod",
    TOps.CDIV: "truncdiv",
    TOps.CMOD: "truncmod",
    TOps.MAX: "max",
    TOps.CMPLT: "lt",
    TOps.CMPNE: "ne",
    TOps.CMPEQ: "eq",
    TOps.WHERE: "select",
    TOps.CAST: "cast",
    TOps.XOR: "xor",
    TOps.AND: "bitand",
    TOps.OR: "bitor",
    TOps.SHL: "shl",
    TOps.SHR: "shr",
}


def _is_variable(u: UOp) -> bool:
    return u.op in (TOps.BUFFER, TOps.PARAM) and getattr(u.arg, "name", None) is not None


def _read(u: UOp, src: list[Node]) -> Node:
    if u.op is TOps.CONST:
        return Node("const", value=int(u.arg))
    if _is_variable(u):
        return Node("var", value=u.arg.name)
    name = _READ.get(u.op)
    if name is None:
        raise Unsupported(f"cannot read tinygrad op {u.op}")
    if name == "cast" and not (u.dtype == dtypes.weakint or dtypes.is_int(u.dtype)):
        raise Unsupported(f"cast to {u.dtype}")
    return Node(name, tuple(src))
