"""A plain expression tree shared by the benchmark's systems.

Every system's input is built from this tree and every system's output is read back
into it, so one evaluator, one op counter and one printer serve quorem, tinygrad and TVM
alike. The evaluator is written here from the definitions of the operators (it does not
call quorem's), so checking a quorem output with it is an independent check.

Operators (``Node.op``) and their meaning on Python integers (comparisons give 0 or 1):

==============================  ================================================
``const`` / ``var``             ``value`` is the integer / the variable's name
``add`` ``mul`` (n-ary)         sum, product
``sub`` ``neg``                 ``a - b``, ``-a``
``floordiv`` ``floormod``       rounding toward negative infinity (Python)
``truncdiv`` ``truncmod``       rounding toward zero (C)
``max`` ``min`` (n-ary)
``lt`` ``le`` ``gt`` ``ge``
``eq`` ``ne``
``not`` ``and`` ``or``          logical, on 0/1 values
``select``                      ``b if a else c``
``cast``                        an integer view of its operand (booleans as 0/1)
``xor`` ``bitand`` ``bitor``    bitwise, on two's complement integers
``shl`` ``shr``                 shifts (arithmetic right shift)
==============================  ================================================
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

try:  # optional: evaluates large trees on many points fast (the bench extra has it)
    np: Any = importlib.import_module("numpy")
except ImportError:  # pragma: no cover
    np = None

from quorem.arith import truncdiv, truncmod
from quorem.ops import Op, Semantics
from quorem.syntax import Binary, Call, Name, Num, Unary, parse_syntax
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
    minimum,
    mod,
    product,
    var,
)

__all__ = [
    "DIVISIONS",
    "Node",
    "Unsupported",
    "compile_eval",
    "count_divmod",
    "division_ops",
    "evaluate_points",
    "from_term",
    "from_text",
    "lower_divisions",
    "node_count",
    "to_term",
    "to_text",
]

DIVISIONS: Final = frozenset({"floordiv", "floormod", "truncdiv", "truncmod"})
_OTHER_SEMANTICS: Final = {
    "floordiv": "truncdiv",
    "floormod": "truncmod",
    "truncdiv": "floordiv",
    "truncmod": "floormod",
}


class Unsupported(Exception):  # noqa: N818  (a verdict, not an error)
    """A system cannot express a case exactly; the message says why."""


class Node:
    """One node of an expression tree (see the module docstring for the operators).

    ``nonneg`` is set on division nodes whose numerator and divisor are non-negative on
    the case's box (from quorem's value ranges), where floor and truncating division
    agree.
    """

    __slots__ = ("args", "nonneg", "op", "value")

    def __init__(
        self, op: str, args: tuple[Node, ...] = (), value: Any = None, nonneg: bool = False
    ) -> None:
        self.op = op
        self.args = args
        self.value = value
        self.nonneg = nonneg

    def __repr__(self) -> str:
        return f"Node({to_text(self)!r})"


def _const(v: int) -> Node:
    return Node("const", value=v)


# ---------------------------------------------------------------------------------------
# From quorem: a canonical term, or the syntax tree of a text as written.


def from_term(term: Term) -> Node:
    """The tree of a quorem term; a shared subterm becomes one shared node.

    A sum ``c1*t1 + ... + k`` is written with ``+`` and ``-`` (a negative coefficient is
    a subtraction, as one writes it), each ``c*t`` as a product with a constant.
    Iterative: any depth.
    """
    memo: dict[int, Node] = {}
    stack: list[tuple[Term, bool]] = [(term, False)]
    while stack:
        t, done = stack.pop()
        if id(t) in memo:
            continue
        if done or not t.args:
            memo[id(t)] = _from_term_node(t, memo)
            continue
        stack.append((t, True))
        stack.extend((a, False) for a in t.args if id(a) not in memo)
    return memo[id(term)]


def _scaled(atom: Node, c: int) -> Node:
    return atom if c == 1 else Node("mul", (atom, _const(c)))


def _from_term_node(t: Term, memo: Mapping[int, Node]) -> Node:
    op = t.op
    if op is Op.CONST:
        return _const(t.arg)
    if op is Op.VAR:
        return Node("var", value=t.arg[0])
    if op is Op.ADD:
        coefs, k = t.arg
        pairs = [(memo[id(a)], c) for a, c in zip(t.args, coefs, strict=True)]
        plus = [_scaled(a, c) for a, c in pairs if c > 0]
        minus = [_scaled(a, -c) for a, c in pairs if c < 0]
        if k > 0:
            plus.append(_const(k))
        elif k < 0:
            minus.append(_const(-k))
        acc = plus[0] if plus else Node("neg", (minus.pop(0),))
        for p in plus[1:]:
            acc = Node("add", (acc, p))
        for m in minus:
            acc = Node("sub", (acc, m))
        return acc
    args = tuple(memo[id(a)] for a in t.args)
    name = _TERM_OPS[op]
    if name in DIVISIONS:
        a, b = t.args
        nonneg = a.vmin is not None and a.vmin >= 0 and b.vmin is not None and b.vmin >= 0
        return Node(name, args, nonneg=nonneg)
    return Node(name, args)


_TERM_OPS: Final = {
    Op.MUL: "mul",
    Op.MAX: "max",
    Op.MIN: "min",
    Op.FLOORDIV: "floordiv",
    Op.FLOORMOD: "floormod",
    Op.TRUNCDIV: "truncdiv",
    Op.TRUNCMOD: "truncmod",
    Op.LT: "lt",
    Op.LE: "le",
    Op.EQ: "eq",
    Op.NE: "ne",
    Op.AND: "and",
    Op.OR: "or",
}

_SYNTAX_BINARY: Final = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
    "==": "eq",
    "!=": "ne",
    "and": "and",
    "or": "or",
}


def from_text(text: str, semantics: str = "floor") -> Node:
    """The tree of ``text`` as written (quorem's parser, no canonical form).

    ``//`` and ``%`` take the case's ``semantics``; a name used twice is one shared node.
    Division nodes get ``nonneg`` from :func:`annotate_nonneg` only.
    """
    sem = Semantics(semantics)
    div_op, mod_op = (
        ("floordiv", "floormod") if sem is Semantics.FLOOR else ("truncdiv", "truncmod")
    )
    names: dict[str, Node] = {}
    built: dict[int, Node] = {}
    root = parse_syntax(text)
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        n, done = stack.pop()
        children = _syntax_children(n)
        if done or not children:
            args = tuple(built[id(c)] for c in children)
            built[id(n)] = _from_syntax_node(n, args, names, div_op, mod_op)
        else:
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(children))
    return built[id(root)]


def _syntax_children(n: Any) -> list[Any]:
    cls = n.__class__
    if cls is Unary:
        return [n.operand]
    if cls is Binary:
        return [n.left, n.right]
    if cls is Call:
        return list(n.args)
    return []


def _from_syntax_node(
    n: Any, args: tuple[Node, ...], names: dict[str, Node], div_op: str, mod_op: str
) -> Node:
    cls = n.__class__
    if cls is Num:
        return _const(n.value)
    if cls is Name:
        return names.setdefault(n.id, Node("var", value=n.id))
    if cls is Unary:
        if n.op == "+":
            return args[0]
        if n.op == "-":
            return Node("neg", args)
        if n.op == "not":
            return Node("not", args)
        raise Unsupported(f"operator {n.op!r} is not an integer operator")
    if cls is Binary:
        if n.op == "//":
            return Node(div_op, args)
        if n.op == "%":
            return Node(mod_op, args)
        if n.op in _SYNTAX_BINARY:
            return Node(_SYNTAX_BINARY[n.op], args)
        raise Unsupported(f"operator {n.op!r} is not an integer operator")
    assert cls is Call
    if n.func in ("max", "min") and len(args) >= 2:
        return Node(n.func, args)
    if n.func in DIVISIONS and len(args) == 2:
        return Node(n.func, args)
    raise Unsupported(f"function {n.func}() with {len(args)} arguments")


def annotate_nonneg(node: Node, bounds: Mapping[str, tuple[int | None, int | None]]) -> None:
    """Set ``nonneg`` on the division nodes of a tree from quorem's value ranges."""
    for n in _postorder(node):
        if n.op in DIVISIONS:
            a, b = (to_term(x, bounds) for x in n.args)
            n.nonneg = a.vmin is not None and a.vmin >= 0 and b.vmin is not None and b.vmin >= 0


# ---------------------------------------------------------------------------------------
# To quorem: build the canonical term with quorem's constructors.

_CMP_OPS: Final = {"lt": Op.LT, "le": Op.LE, "eq": Op.EQ, "ne": Op.NE}


def to_term(node: Node, bounds: Mapping[str, tuple[int | None, int | None]]) -> Term:
    """The quorem term of a tree, each variable with its bounds (unbounded if absent).

    A chain of ``+``, ``-``, unary ``-`` and products by a constant is built as one sum
    (like quorem's parser does), not one sum per ``+``: linear in the chain's length.
    """
    order = _postorder(node)
    needed = {id(node)}  # nodes whose term is built; the rest are inside a larger sum
    for n in order:
        lin = _is_linear(n)
        for a in n.args:
            if not (lin and _is_linear(a)):
                needed.add(id(a))
    memo: dict[int, Term] = {}
    for n in order:
        if id(n) not in needed:
            continue
        if _is_linear(n):
            memo[id(n)] = _linear_term(n, memo)
        else:
            memo[id(n)] = _to_term_node(n, [memo[id(a)] for a in n.args], bounds)
    return memo[id(node)]


def _scale_of(n: Node) -> tuple[Node, int] | None:
    """``(x, c)`` for a product ``x*c`` or ``c*x`` by a constant ``c``."""
    if n.op == "mul" and len(n.args) == 2:
        a, b = n.args
        if b.op == "const":
            return a, int(b.value)
        if a.op == "const":
            return b, int(a.value)
    return None


def _is_linear(n: Node) -> bool:
    return n.op in ("add", "sub", "neg") or _scale_of(n) is not None


def _linear_term(root: Node, memo: Mapping[int, Term]) -> Term:
    pairs: list[tuple[Term, int]] = []
    constant = 0
    stack = [(root, 1)]
    while stack:
        n, c = stack.pop()
        scaled = _scale_of(n)
        if n.op == "add":
            stack.extend((a, c) for a in n.args)
        elif n.op == "sub":
            stack.append((n.args[0], c))
            stack.extend((a, -c) for a in n.args[1:])
        elif n.op == "neg":
            stack.append((n.args[0], -c))
        elif scaled is not None:
            stack.append((scaled[0], c * scaled[1]))
        elif n.op == "const":
            constant += c * int(n.value)
        else:
            pairs.append((memo[id(n)], c))
    return linear(pairs, constant)


def _to_term_node(
    n: Node, args: list[Term], bounds: Mapping[str, tuple[int | None, int | None]]
) -> Term:
    op = n.op
    if op == "const":
        return const(n.value)
    if op == "var":
        lo, hi = bounds.get(n.value, (None, None))
        return var(n.value, lo, hi)
    if op == "add":
        return linear([(a, 1) for a in args])
    if op == "sub":
        return linear([(args[0], 1), (args[1], -1)])
    if op == "neg":
        return linear([(args[0], -1)])
    if op == "mul":
        return product(args)
    if op in ("floordiv", "truncdiv"):
        return div(args[0], args[1], Semantics.FLOOR if op == "floordiv" else Semantics.TRUNC)
    if op in ("floormod", "truncmod"):
        return mod(args[0], args[1], Semantics.FLOOR if op == "floormod" else Semantics.TRUNC)
    if op in ("max", "min"):
        fold = maximum if op == "max" else minimum
        acc = args[0]
        for a in args[1:]:
            acc = fold(acc, a)
        return acc
    if op in _CMP_OPS:
        return compare(_CMP_OPS[op], args[0], args[1])
    if op == "gt":
        return compare(Op.LT, args[1], args[0])
    if op == "ge":
        return compare(Op.LE, args[1], args[0])
    if op in ("and", "or"):
        fold = logical_and if op == "and" else logical_or
        acc = args[0]
        for a in args[1:]:
            acc = fold(acc, a)
        return acc
    if op == "not":
        return logical_not(args[0])
    raise Unsupported(f"quorem has no operator {op!r}")


# ---------------------------------------------------------------------------------------
# Walking, counting, printing, evaluating.


def _postorder(root: Node) -> list[Node]:
    """Every distinct node once, children before parents (iterative: any depth)."""
    seen: set[int] = set()
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.append((n, True))
        stack.extend((a, False) for a in reversed(n.args) if id(a) not in seen)
    return order


def _tree_total(root: Node, own: Callable[[Node], int]) -> int:
    """Sum of ``own`` over the tree written out (a shared node counts once per use)."""
    totals: dict[int, int] = {}
    for n in _postorder(root):
        totals[id(n)] = own(n) + sum(totals[id(a)] for a in n.args)
    return totals[id(root)]


def count_divmod(root: Node) -> int:
    """Number of ``//`` and ``%`` (either semantics) in the tree written out."""
    return _tree_total(root, lambda n: 1 if n.op in DIVISIONS else 0)


def node_count(root: Node) -> int:
    """Number of nodes of the tree written out: operators, variables and constants."""
    return _tree_total(root, lambda n: 1)


def division_ops(root: Node) -> set[str]:
    """The division operators the tree uses."""
    return {n.op for n in _postorder(root) if n.op in DIVISIONS}


def lower_divisions(root: Node, available: frozenset[str] | set[str]) -> Node:
    """The tree with each division a system lacks replaced by the other semantics' one.

    Allowed only where the node is ``nonneg`` (floor and truncating division agree);
    anywhere else the system cannot express the case exactly.

    Raises:
        Unsupported: a division the system lacks, on operands that may be negative.

    """
    missing = division_ops(root) - set(available)
    if not missing:
        return root
    new: dict[int, Node] = {}
    for n in _postorder(root):
        args = tuple(new[id(a)] for a in n.args)
        op = n.op
        if op in missing:
            other = _OTHER_SEMANTICS[op]
            if not n.nonneg or other not in available:
                raise Unsupported(
                    f"{op} on operands that may be negative, and the system has no {op}"
                )
            op = other
        new[id(n)] = Node(op, args, n.value, n.nonneg)
    return new[id(root)]


_PREC: Final = {
    "or": 1,
    "and": 2,
    "not": 3,
    "lt": 4,
    "le": 4,
    "gt": 4,
    "ge": 4,
    "eq": 4,
    "ne": 4,
    "bitor": 5,
    "xor": 6,
    "bitand": 7,
    "shl": 8,
    "shr": 8,
    "add": 9,
    "sub": 9,
    "mul": 10,
    "floordiv": 10,
    "floormod": 10,
    "neg": 11,
}
_INFIX: Final = {
    "add": " + ",
    "sub": " - ",
    "mul": "*",
    "lt": " < ",
    "le": " <= ",
    "gt": " > ",
    "ge": " >= ",
    "eq": " == ",
    "ne": " != ",
    "and": " and ",
    "or": " or ",
    "xor": " ^ ",
    "bitand": " & ",
    "bitor": " | ",
    "shl": " << ",
    "shr": " >> ",
    "floordiv": "//",
    "floormod": "%",
}


def _prec(n: Node) -> int:
    if n.op == "const":
        return 12 if int(n.value) >= 0 else 11
    return _PREC.get(n.op, 12)


def to_text(root: Node) -> str:
    """Python-like text (``//``, ``%`` floor; ``truncdiv(a, b)`` for C division).

    Written token by token with an explicit stack: linear in the output, any depth.
    """
    out: list[str] = []
    stack: list[str | tuple[Node, bool]] = [(root, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        n, parens = item
        op = n.op
        if op == "const":
            out.append(f"({int(n.value)})" if parens else str(int(n.value)))
            continue
        if op == "var":
            out.append(str(n.value))
            continue
        todo: list[str | tuple[Node, bool]] = ["("] if parens else []
        prec = _PREC.get(op)
        if op in _INFIX and prec is not None:
            for i, a in enumerate(n.args):
                if i:
                    todo.append(_INFIX[op])
                # Left-associative: the right operand needs parentheses at equal
                # precedence, except an associative + or * under the same operator.
                p = _prec(a)
                same = op in ("add", "mul") and a.op == op
                todo.append((a, p < prec or (i > 0 and p == prec and not same)))
        elif op in ("neg", "not"):
            a = n.args[0]
            p = _prec(a)
            todo.append("-" if op == "neg" else "not ")
            todo.append((a, p < (prec or 0) or (op == "neg" and p == 11)))
        else:  # truncdiv, truncmod, max, min, cast, select
            todo.append(f"{op}(")
            for i, a in enumerate(n.args):
                if i:
                    todo.append(", ")
                todo.append((a, False))
            todo.append(")")
        if parens:
            todo.append(")")
        stack.extend(reversed(todo))
    return "".join(out)


_BINARY: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "max": max,
    "min": min,
    "floordiv": operator.floordiv,
    "floormod": operator.mod,
    "truncdiv": truncdiv,
    "truncmod": truncmod,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
    "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
    "xor": operator.xor,
    "bitand": operator.and_,
    "bitor": operator.or_,
    "shl": operator.lshift,
    "shr": operator.rshift,
}
_NARY: Final = frozenset({"add", "mul", "max", "min"})
_UNARY: Final[dict[str, Callable[[Any], Any]]] = {
    "neg": operator.neg,
    "not": operator.not_,
    "cast": int,
}
_UNDEFINED: Final = (ZeroDivisionError, ValueError)  # x // 0, x % 0, x << -1

Vector = list[Any]  # one value per point; None where the expression is undefined


def evaluate_points(root: Node, points: Sequence[Mapping[str, int]]) -> list[int | None]:
    """The tree's value at each point (None where it divides by zero).

    Evaluated node by node over all points at once (a node's vector is freed once its
    last parent is computed), so any depth and size costs nodes x points C-level steps.
    ``select`` takes each point's value from the branch its condition picks only.

    Raises:
        Unsupported: an operator the evaluator does not know.
        KeyError: a variable that a point lacks.

    """
    order = _postorder(root)
    if np is not None and len(points) >= 32:
        fast = _evaluate_numpy(order, points)
        if fast is not None:
            return fast
    uses = _uses(order)
    vectors: dict[int, Vector] = {}
    for n in order:
        args = [vectors[id(a)] for a in n.args]
        vectors[id(n)] = _evaluate_node(n, args, points)
        for a in n.args:
            uses[id(a)] -= 1
            if uses[id(a)] == 0:
                del vectors[id(a)]
    return [None if v is None else int(v) for v in vectors[id(root)]]


def _uses(order: list[Node]) -> dict[int, int]:
    uses: dict[int, int] = {}
    for n in order:
        for a in n.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    return uses


# The numpy path computes in int64; it is taken only where interval bounds of every node
# (over the points' actual variable values) stay within +-2**62, else the exact Python
# path runs. Values at undefined points (division by zero) are computed with divisor 1
# and masked.
_NP_LIMIT: Final = 1 << 62
_NP_COMPARE: Final = {
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "eq": "equal",
    "ne": "not_equal",
}

NpValue = tuple[Any, Any, int, int]  # values, undefined mask or None, lower, upper bound


def _evaluate_numpy(order: list[Node], points: Sequence[Mapping[str, int]]) -> list[Any] | None:
    uses = _uses(order)
    values: dict[int, NpValue] = {}
    for n in order:
        r = _numpy_node(n, [values[id(a)] for a in n.args], points)
        if r is None or r[2] < -_NP_LIMIT or r[3] > _NP_LIMIT:
            return None
        values[id(n)] = r
        for a in n.args:
            uses[id(a)] -= 1
            if uses[id(a)] == 0:
                del values[id(a)]
    v, undefined, _, _ = values[id(order[-1])]
    out: list[Any] = v.tolist()
    if undefined is not None:
        for i in np.flatnonzero(undefined).tolist():
            out[i] = None
    return out


def _mask(*masks: Any) -> Any:
    found = [m for m in masks if m is not None]
    if not found:
        return None
    out = found[0]
    for m in found[1:]:
        out = out | m
    return out


def _numpy_node(
    n: Node, args: list[NpValue], points: Sequence[Mapping[str, int]]
) -> NpValue | None:
    op = n.op
    if op == "const":
        v = int(n.value)
        return np.full(len(points), v if abs(v) <= _NP_LIMIT else 0, dtype=np.int64), None, v, v
    if op == "var":
        raw = [p[n.value] for p in points]
        lo, hi = min(raw), max(raw)
        if lo < -_NP_LIMIT or hi > _NP_LIMIT:
            return None
        return np.array(raw, dtype=np.int64), None, lo, hi
    if op in ("neg", "cast", "not"):
        a, ua, lo, hi = args[0]
        if op == "neg":
            return -a, ua, -hi, -lo
        if op == "cast":
            return a, ua, lo, hi
        return (a == 0).astype(np.int64), ua, 0, 1
    if op == "select":
        (c, uc, _, _), (a, ua, alo, ahi), (b, ub, blo, bhi) = args
        pick = c != 0
        undefined = None
        if ua is not None or ub is not None:
            za = ua if ua is not None else np.zeros(len(points), dtype=bool)
            zb = ub if ub is not None else np.zeros(len(points), dtype=bool)
            undefined = np.where(pick, za, zb)
        return np.where(pick, a, b), _mask(uc, undefined), min(alo, blo), max(ahi, bhi)
    if op in ("add", "mul", "max", "min") and len(args) >= 2:
        acc = args[0]
        for b in args[1:]:
            acc = _numpy_binary(op, acc, b)
        return acc
    if len(args) == 2 and (op in _NP_COMPARE or op in DIVISIONS or op in ("sub", "and", "or")):
        return _numpy_binary(op, args[0], args[1])
    return None  # bitwise operators and anything else: the exact path


def _numpy_binary(op: str, x: NpValue, y: NpValue) -> NpValue:
    a, ua, alo, ahi = x
    b, ub, blo, bhi = y
    undefined = _mask(ua, ub)
    if op == "add":
        return a + b, undefined, alo + blo, ahi + bhi
    if op == "sub":
        return a - b, undefined, alo - bhi, ahi - blo
    if op == "mul":
        corners = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return a * b, undefined, min(corners), max(corners)
    if op == "max":
        return np.maximum(a, b), undefined, max(alo, blo), max(ahi, bhi)
    if op == "min":
        return np.minimum(a, b), undefined, min(alo, blo), min(ahi, bhi)
    if op in _NP_COMPARE:
        return getattr(np, _NP_COMPARE[op])(a, b).astype(np.int64), undefined, 0, 1
    if op in ("and", "or"):
        f = np.logical_and if op == "and" else np.logical_or
        return f(a != 0, b != 0).astype(np.int64), undefined, 0, 1
    zero = b == 0
    undefined = _mask(undefined, zero if zero.any() else None)
    safe = np.where(zero, 1, b)
    m_a = max(abs(alo), abs(ahi))
    m_b = max(abs(blo), abs(bhi))
    if op == "floordiv":
        return np.floor_divide(a, safe), undefined, -m_a, m_a
    if op == "floormod":
        return np.mod(a, safe), undefined, -m_b, m_b
    q = np.abs(a) // np.abs(safe)
    q = np.where((a < 0) != (safe < 0), -q, q)
    if op == "truncdiv":
        return q, undefined, -m_a, m_a
    return a - safe * q, undefined, -m_b, m_b


def _evaluate_node(n: Node, args: list[Vector], points: Sequence[Mapping[str, int]]) -> Vector:
    op = n.op
    if op == "const":
        return [int(n.value)] * len(points)
    if op == "var":
        name = n.value
        return [p[name] for p in points]
    if op == "select":
        c, a, b = args
        return [None if k is None else (x if k else y) for k, x, y in zip(c, a, b, strict=True)]
    if op in _UNARY and len(args) == 1:
        f1 = _UNARY[op]
        (a,) = args
        if None not in a:
            return list(map(f1, a))
        return [None if x is None else f1(x) for x in a]
    f2 = _BINARY.get(op)
    if f2 is None or not (len(args) == 2 or (op in _NARY and len(args) > 2)):
        raise Unsupported(f"cannot evaluate operator {op!r} with {len(args)} operands")
    acc = args[0]
    for b in args[1:]:
        acc = _binary_vector(f2, acc, b)
    return acc


def _binary_vector(f: Callable[[Any, Any], Any], a: Vector, b: Vector) -> Vector:
    if None not in a and None not in b:
        try:
            return list(map(f, a, b))
        except _UNDEFINED:
            pass  # some point is undefined: value by value below
    out: Vector = []
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            out.append(None)
            continue
        try:
            out.append(f(x, y))
        except _UNDEFINED:
            out.append(None)
    return out


Evaluator = Callable[[Mapping[str, int]], int]


def compile_eval(root: Node) -> Evaluator:
    """A function computing the tree's value at one point.

    It raises ZeroDivisionError where the tree divides by zero, KeyError for a variable
    the point lacks; compiling raises :class:`Unsupported` for an unknown operator.
    """
    known = {"const", "var", "select"} | set(_UNARY) | set(_BINARY)
    for n in _postorder(root):
        if n.op not in known:
            raise Unsupported(f"cannot evaluate operator {n.op!r}")

    def run(env: Mapping[str, int]) -> int:
        value = evaluate_points(root, [env])[0]
        if value is None:
            raise ZeroDivisionError("the expression divides by zero at this point")
        return value

    return run
