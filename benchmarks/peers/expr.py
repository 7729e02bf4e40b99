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

from collections.abc import Callable, Mapping
from typing import Any, Final

from quorem.engine.ops import Op, Semantics
from quorem.engine.syntax import Binary, Call, Name, Num, Unary, parse_syntax
from quorem.engine.term import (
    Term,
    compare,
    const,
    div,
    linear,
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
    """
    memo: dict[int, Node] = {}

    def walk(t: Term) -> Node:
        found = memo.get(id(t))
        if found is not None:
            return found
        node = _from_term_node(t, walk)
        memo[id(t)] = node
        return node

    return walk(term)


def _scaled(atom: Node, c: int) -> Node:
    return atom if c == 1 else Node("mul", (atom, _const(c)))


def _from_term_node(t: Term, walk: Callable[[Term], Node]) -> Node:
    op = t.op
    if op is Op.CONST:
        return _const(t.arg)
    if op is Op.VAR:
        return Node("var", value=t.arg[0])
    if op is Op.ADD:
        coefs, k = t.arg
        pairs = [(walk(a), c) for a, c in zip(t.args, coefs, strict=True)]
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
    args = tuple(walk(a) for a in t.args)
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

    def walk(n: Any) -> Node:
        cls = n.__class__
        if cls is Num:
            return _const(n.value)
        if cls is Name:
            return names.setdefault(n.id, Node("var", value=n.id))
        if cls is Unary:
            inner = walk(n.operand)
            if n.op == "+":
                return inner
            if n.op == "-":
                return Node("neg", (inner,))
            raise Unsupported(f"operator {n.op!r} is not an integer operator")
        if cls is Binary:
            left, right = walk(n.left), walk(n.right)
            if n.op == "//":
                return Node(div_op, (left, right))
            if n.op == "%":
                return Node(mod_op, (left, right))
            if n.op in _SYNTAX_BINARY:
                return Node(_SYNTAX_BINARY[n.op], (left, right))
            raise Unsupported(f"operator {n.op!r} is not an integer operator")
        assert cls is Call
        args = tuple(walk(a) for a in n.args)
        if n.func in ("max", "min") and len(args) >= 2:
            return Node(n.func, args)
        if n.func in DIVISIONS and len(args) == 2:
            return Node(n.func, args)
        raise Unsupported(f"function {n.func}() with {len(args)} arguments")

    return walk(parse_syntax(text))


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
    """The quorem term of a tree, each variable with its bounds (unbounded if absent)."""
    memo: dict[int, Term] = {}
    for n in _postorder(node):
        memo[id(n)] = _to_term_node(n, [memo[id(a)] for a in n.args], bounds)
    return memo[id(node)]


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


def to_text(root: Node) -> str:
    """Python-like text (``//``, ``%`` floor; ``truncdiv(a, b)`` for C division)."""
    text: dict[int, tuple[str, int]] = {}  # node -> (text, precedence)
    ops = {id(n): n.op for n in _postorder(root)}
    for n in _postorder(root):
        op = n.op
        if op == "const":
            v = n.value
            text[id(n)] = (str(int(v)), 12 if int(v) >= 0 else 11)
            continue
        if op == "var":
            text[id(n)] = (str(n.value), 12)
            continue
        parts = [text[id(a)] for a in n.args]
        prec = _PREC.get(op)
        if op in _INFIX and prec is not None:
            out = []
            for i, ((s, p), a) in enumerate(zip(parts, n.args, strict=True)):
                # Left-associative: the right operand needs parentheses at equal precedence,
                # except an associative + or * under the same operator.
                same = op in ("add", "mul") and ops[id(a)] == op
                tight = p < prec or (i > 0 and p == prec and not same)
                out.append(f"({s})" if tight else s)
            text[id(n)] = (_INFIX[op].join(out), prec)
        elif op in ("neg", "not"):
            s, p = parts[0]
            inner = f"({s})" if p < (prec or 0) or (op == "neg" and p == 11) else s
            text[id(n)] = (("-" if op == "neg" else "not ") + inner, prec or 11)
        elif op == "select":
            (c, _), (a, _), (b, _) = parts
            text[id(n)] = (f"select({c}, {a}, {b})", 12)
        else:  # truncdiv, truncmod, max, min, cast
            text[id(n)] = (f"{op}({', '.join(s for s, _ in parts)})", 12)
    return text[id(root)][0]


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _truncmod(a: int, b: int) -> int:
    return a - b * _truncdiv(a, b)


def _nary(f: Callable[[int, int], int]) -> Callable[[list[int]], int]:
    def run(xs: list[int]) -> int:
        acc = xs[0]
        for x in xs[1:]:
            acc = f(acc, x)
        return acc

    return run


_BINARY: Final[dict[str, Callable[[int, int], int]]] = {
    "sub": lambda a, b: a - b,
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "truncdiv": _truncdiv,
    "truncmod": _truncmod,
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b),
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "and": lambda a, b: int(bool(a) and bool(b)),
    "or": lambda a, b: int(bool(a) or bool(b)),
    "xor": lambda a, b: a ^ b,
    "bitand": lambda a, b: a & b,
    "bitor": lambda a, b: a | b,
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
}
_NARY: Final[dict[str, Callable[[list[int]], int]]] = {
    "add": sum,
    "mul": _nary(lambda a, b: a * b),
    "max": max,
    "min": min,
}

Evaluator = Callable[[Mapping[str, int]], int]


def compile_eval(root: Node) -> Evaluator:
    """A function computing the tree's value at a point (a mapping of variable values).

    Raises ZeroDivisionError where a division by zero occurs, KeyError for a variable the
    point lacks, and :class:`Unsupported` (when compiling) for an unknown operator.
    """
    fns: dict[int, Evaluator] = {}
    for n in _postorder(root):
        fns[id(n)] = _compile_node(n, [fns[id(a)] for a in n.args])
    return fns[id(root)]


def _compile_node(n: Node, fs: list[Evaluator]) -> Evaluator:
    op = n.op
    if op == "const":
        v = int(n.value)
        return lambda env: v
    if op == "var":
        name = n.value
        return lambda env: env[name]
    if op == "cast":
        (f,) = fs
        return lambda env: int(f(env))
    if op == "neg":
        (f,) = fs
        return lambda env: -f(env)
    if op == "not":
        (f,) = fs
        return lambda env: int(not f(env))
    if op == "select":
        c, a, b = fs
        return lambda env: a(env) if c(env) else b(env)
    if op in _BINARY and len(fs) == 2:
        g = _BINARY[op]
        fa, fb = fs
        return lambda env: g(fa(env), fb(env))
    if op in _NARY:
        h = _NARY[op]
        if len(fs) == 2 and op == "add":
            fa, fb = fs
            return lambda env: fa(env) + fb(env)
        if len(fs) == 2 and op == "mul":
            fa, fb = fs
            return lambda env: fa(env) * fb(env)
        return lambda env: h([f(env) for f in fs])
    raise Unsupported(f"cannot evaluate operator {op!r} with {len(fs)} operands")
