"""Apache TVM's arithmetic analyzer as a benchmark system (apache-tvm 0.27).

In the 0.27 wheel the analyzer is ``tvm.sym.Analyzer`` and the expression nodes are in
``tvm.tirx`` (``tvm.ir.prim.expr``). Floor division is ``FloorDiv``/``FloorMod`` and
truncating division ``Div``/``Mod``; both are checked on constants when the system loads.
Expressions are ``int64``; a case whose constants do not fit is unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
from tvm import sym, tirx
from tvm.ir import Range

from benchmarks.peers.expr import Node, Unsupported, _postorder

__all__ = ["TVMSystem"]

_DTYPE = "int64"
_I64 = (-(2**63), 2**63 - 1)
_DIV_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "floordiv": tirx.FloorDiv,
    "floormod": tirx.FloorMod,
    "truncdiv": tirx.Div,
    "truncmod": tirx.Mod,
}


def _imm(v: int) -> Any:
    if not _I64[0] <= v <= _I64[1]:
        raise Unsupported(f"constant {v} does not fit in int64")
    return tirx.IntImm(_DTYPE, v)


def _check_divisions() -> frozenset[str]:
    expect = {
        "floordiv": lambda a, b: a // b,
        "floormod": lambda a, b: a % b,
        "truncdiv": lambda a, b: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
        "truncmod": lambda a, b: a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)),
    }
    analyzer = sym.Analyzer()
    ok = set()
    for name, make in _DIV_OPS.items():
        pairs = ((-7, 2), (7, -2), (-7, -2), (7, 2))
        if all(
            int(analyzer.simplify(make(_imm(a), _imm(b))).value) == expect[name](a, b)
            for a, b in pairs
        ):
            ok.add(name)
    return frozenset(ok)


class TVMSystem:
    """``tvm.sym.Analyzer().simplify(expr)`` on a fresh analyzer per call."""

    name = "tvm"

    def __init__(self) -> None:
        self.version = str(tvm.__version__)
        self.division_ops = _check_divisions()
        self.method = (
            "build: fresh tirx expressions (int64 Var and IntImm nodes) and a fresh "
            "tvm.sym.Analyzer with each variable's range bound: analyzer.bind(var, "
            "Range.from_min_extent(lo, hi - lo + 1)) for a bounded variable, "
            "analyzer.update(var, ConstIntBound(lo, hi)) with TVM's infinities for an "
            "unbounded side; timed: analyzer.simplify(expr) (default steps=2: rewrite then "
            "canonical simplification), including the FFI call. TVM expressions are not "
            "hash-consed and every call has its own analyzer, so no analysis state (bound "
            "maps, canonical-form caches) survives a call."
        )

    def build(self, tree: Node, bounds: Any) -> tuple[Any, Any]:
        variables: dict[str, Any] = {}
        built: dict[int, Any] = {}
        for n in _postorder(tree):
            built[id(n)] = self._build_node(n, [built[id(a)] for a in n.args], variables)
        analyzer = sym.Analyzer()
        for name, v in variables.items():
            lo, hi = bounds.get(name, (None, None))
            if lo is not None and hi is not None:
                analyzer.bind(v, Range.from_min_extent(_imm(lo), _imm(hi - lo + 1)))
            elif lo is not None or hi is not None:
                info = sym.ConstIntBound(
                    sym.ConstIntBound.NEG_INF if lo is None else lo,
                    sym.ConstIntBound.POS_INF if hi is None else hi,
                )
                analyzer.update(v, info)
        return analyzer, built[id(tree)]

    def _build_node(self, n: Node, a: list[Any], variables: dict[str, Any]) -> Any:
        op = n.op
        if op == "const":
            return _imm(n.value)
        if op == "var":
            found = variables.get(n.value)
            if found is None:
                found = variables[n.value] = tirx.Var(n.value, _DTYPE)
            return found
        if op in _DIV_OPS:
            if op not in self.division_ops:
                raise Unsupported(f"TVM has no {op}")
            return _DIV_OPS[op](a[0], a[1])
        make = _BUILD.get(op)
        if make is not None:
            acc = a[0]
            for b in a[1:]:
                acc = make(acc, b)
            return acc
        if op == "neg":
            return -a[0]
        cmp = _COMPARE.get(op)
        if cmp is not None:
            return tirx.Cast(_DTYPE, cmp(a[0], a[1]))
        if op in ("and", "or", "not"):
            # Logical over 0/1 integers: each operand as a bool (x != 0), then back.
            truth = [tirx.NE(x, _imm(0)) for x in a]
            if op == "not":
                return tirx.Cast(_DTYPE, tirx.Not(truth[0]))
            acc = truth[0]
            for t in truth[1:]:
                acc = tirx.And(acc, t) if op == "and" else tirx.Or(acc, t)
            return tirx.Cast(_DTYPE, acc)
        raise Unsupported(f"no TVM translation for {op!r}")

    def simplify(self, built: tuple[Any, Any]) -> Any:
        analyzer, expr = built
        return analyzer.simplify(expr)

    def release(self) -> None:
        """Nothing to drop: each call has its own analyzer."""

    def to_tree(self, result: Any) -> Node:
        # The FFI makes a new Python wrapper on each attribute access, so each node's
        # children are read once and carried on the stack (the result is read as a tree).
        out: list[Node] = []
        stack: list[tuple[Any, list[Any] | None]] = [(result, None)]
        while stack:
            e, children = stack.pop()
            if children is None:
                children = _children(e)
                stack.append((e, children))
                stack.extend((c, None) for c in reversed(children))
                continue
            n = len(children)
            args = out[len(out) - n :] if n else []
            del out[len(out) - n :]
            out.append(_read(e, args))
        return out[0]

    def live_nodes(self) -> int | None:
        return None


_BUILD: dict[str, Callable[[Any, Any], Any]] = {
    "add": tirx.Add,
    "sub": tirx.Sub,
    "mul": tirx.Mul,
    "max": tirx.Max,
    "min": tirx.Min,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "lt": tirx.LT,
    "le": tirx.LE,
    "gt": tirx.GT,
    "ge": tirx.GE,
    "eq": tirx.EQ,
    "ne": tirx.NE,
}
_READ: dict[type, str] = {
    tirx.Add: "add",
    tirx.Sub: "sub",
    tirx.Mul: "mul",
    tirx.FloorDiv: "floordiv",
    tirx.FloorMod: "floormod",
    tirx.Div: "truncdiv",
    tirx.Mod: "truncmod",
    tirx.Max: "max",
    tirx.Min: "min",
    tirx.LT: "lt",
    tirx.LE: "le",
    tirx.GT: "gt",
    tirx.GE: "ge",
    tirx.EQ: "eq",
    tirx.NE: "ne",
    tirx.And: "and",
    tirx.Or: "or",
    tirx.Not: "not",
    tirx.Select: "select",
    tirx.Cast: "cast",
}


def _children(e: Any) -> list[Any]:
    cls = type(e)
    if cls is tirx.Select:
        return [e.condition, e.true_value, e.false_value]
    if cls is tirx.Cast:
        return [e.value]
    if cls is tirx.Not:
        return [e.a]
    if cls in _READ:
        return [e.a, e.b]
    return []


def _read(e: Any, args: list[Node]) -> Node:
    cls = type(e)
    if cls is tirx.IntImm:
        return Node("const", value=int(e.value))
    if isinstance(e, tvm.ir.expr.Var):
        return Node("var", value=str(e.name))
    name = _READ.get(cls)
    if name is None:
        raise Unsupported(f"cannot read TVM node {cls.__name__}: {e}")
    return Node(name, tuple(args))
