"""Turn a syntax tree into a canonical term (the back end of :func:`quorem.parse`)."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Final

from .errors import (
    DivisionByZeroError,
    ParseError,
    TermError,
    ZeroDivisorParseError,
)
from .ops import DIVISION_FUNCTIONS, Op, Semantics
from .printer import brief
from .syntax import Binary, Call, Name, Node, Num, Unary, parse_syntax
from .term import (
    Term,
    ceildiv,
    compare,
    conjunction,
    const,
    disjunction,
    div,
    linear,
    logical_not,
    maximum,
    minimum,
    mod,
    product,
    var,
)

__all__ = ["Bounds", "build_term", "parse_term"]

Bounds = Mapping[str, tuple[int | None, int | None]]

_CMP: Final = {"<": Op.LT, "<=": Op.LE, "==": Op.EQ, "!=": Op.NE}
_CONST, _ADD, _LT, _LE = Op.CONST, Op.ADD, Op.LT, Op.LE  # Enum attribute access is slow


class _Linear:
    """A sum under construction: mutable, so nested sums merge in linear total time.

    The coefficient of atom ``t`` is ``coeffs[t] * mult``: scaling by a constant only
    changes ``mult``, so negating or scaling a long sum again and again (``-(-(...))``,
    ``a - (b - (c - ...))``) does not touch every coefficient each time.
    """

    __slots__ = ("coeffs", "const", "mult")

    def __init__(self, coeffs: dict[Term, int], constant: int) -> None:
        self.coeffs = coeffs
        self.const = constant
        self.mult = 1

    @staticmethod
    def of(value: Value) -> _Linear:
        if isinstance(value, _Linear):
            return value
        if isinstance(value, _Product | _Clauses):
            value = value.term()
        if value.op is _CONST:
            return _Linear({}, value.arg)
        if value.op is _ADD:
            return _Linear(dict(zip(value.args, value.arg[0], strict=True)), value.arg[1])
        return _Linear({value: 1}, 0)

    def scale(self, k: int) -> _Linear:
        if k == 0:
            self.coeffs.clear()
            self.mult = 1
        elif self.coeffs:
            self.mult *= k
        self.const *= k
        return self

    def settle(self) -> None:
        """Fold ``mult`` into the coefficients (one pass), leaving ``mult`` 1."""
        m = self.mult
        if m != 1:
            coeffs = self.coeffs
            for t in coeffs:
                coeffs[t] *= m
            self.mult = 1

    def merge(self, other: _Linear, sign: int) -> _Linear:
        big, small, small_sign = self, other, sign
        if len(other.coeffs) > len(self.coeffs):
            # Add the smaller dictionary into the larger: every atom moves O(log n) times.
            big, small, small_sign = other, self, 1
            if sign < 0:
                big.scale(-1)
        if small.coeffs:
            if big.mult not in (1, -1):
                big.settle()  # an exact stored coefficient needs mult to be a unit
            k = small_sign * small.mult * big.mult  # big.mult is its own inverse
            coeffs = big.coeffs
            for t, c in small.coeffs.items():
                coeffs[t] = coeffs.get(t, 0) + k * c
        big.const += small_sign * small.const
        return big

    def single(self) -> tuple[int, Term] | None:
        """``(c, t)`` when the sum is ``c*t`` (one atom, no constant), else None."""
        if len(self.coeffs) != 1 or self.const != 0:
            return None
        ((t, c),) = self.coeffs.items()
        return c * self.mult, t

    def term(self) -> Term:
        m = self.mult
        if m == 1:
            return linear(self.coeffs.items(), self.const)
        return linear(((t, c * m) for t, c in self.coeffs.items()), self.const)


class _Product:
    """A product under construction: its factors are collected and multiplied out once.

    Building ``x1*x2*...*xn`` (in any association, parenthesised or not) one ``*`` at a
    time would re-flatten and re-sort the growing product at each step: quadratic.
    """

    __slots__ = ("factors", "scale")

    def __init__(self, scale: int, factors: list[Term]) -> None:
        self.scale = scale
        self.factors = factors

    @staticmethod
    def of(value: Value) -> _Product:
        if isinstance(value, _Product):
            return value
        if isinstance(value, _Linear):
            single = value.single()
            if single is not None:
                return _Product(single[0], [single[1]])
            value = value.term()
        return _Product(1, [_as_term(value)])

    def times(self, other: _Product) -> _Product:
        big, small = (self, other) if len(self.factors) >= len(other.factors) else (other, self)
        big.factors.extend(small.factors)
        big.scale *= small.scale
        return big

    def term(self) -> Term:
        if self.scale == 0:
            return const(0)
        core = product(self.factors)
        return core if self.scale == 1 else linear([(core, self.scale)])


class _Clauses:
    """A chain of ``and`` (or ``or``) under construction: its clauses, not yet built.

    Built into one canonical junction when used, so a chain of n clauses builds in
    n log n, not n**2 (each binary ``and`` would flatten and sort the chain so far again).
    """

    __slots__ = ("items", "op")

    def __init__(self, op: str, items: list[Term]) -> None:
        self.op = op
        self.items = items

    def extended(self, value: Value) -> _Clauses:
        """The chain with ``value``'s clauses (a chain of the same operator) added."""
        if isinstance(value, _Clauses) and value.op == self.op:
            big, small = (self, value) if len(self.items) >= len(value.items) else (value, self)
            big.items.extend(small.items)
            return big
        self.items.append(_as_term(value))
        return self

    def term(self) -> Term:
        return (conjunction if self.op == "and" else disjunction)(self.items)


Value = Term | _Linear | _Product | _Clauses


def _as_term(v: Value) -> Term:
    return v if isinstance(v, Term) else v.term()


def _scaled(v: Value, k: int) -> Value:
    """``k * v``; a product under construction stays one (its factors are not built yet)."""
    if isinstance(v, _Product):
        v.scale *= k
        return v
    return _Linear.of(v).scale(k)


def _const_value(v: Value) -> int | None:
    if isinstance(v, _Linear):
        return None if v.coeffs else v.const
    if isinstance(v, _Product | _Clauses):
        return None
    return v.arg if v.op is _CONST else None


class _Builder:
    def __init__(self, bounds: Bounds, semantics: Semantics, source: str) -> None:
        self.bounds = bounds
        self.semantics = semantics
        self.source = source
        self.variables: dict[str, Term] = {}  # each name is checked and built once

    def error(self, reason: str, node: Node) -> ParseError:
        return ParseError(reason, node.line, node.col, self.source)

    def variable(self, node: Name) -> Term:
        found = self.variables.get(node.id)
        if found is not None:
            return found
        lo, hi = self.bounds.get(node.id, (None, None))
        try:
            term = var(node.id, lo, hi)
        except TermError as exc:
            raise self.error(str(exc), node) from None
        self.variables[node.id] = term
        return term

    def build(self, root: Node) -> Term:
        """Post-order over the tree with an explicit stack (no recursion)."""
        values: list[Value] = []
        stack: list[tuple[Node, bool]] = [(root, False)]
        push, pop = stack.append, stack.pop
        while stack:
            node, done = pop()
            cls = node.__class__
            if cls is Num:
                values.append(_Linear({}, node.value))  # type: ignore[union-attr]
            elif cls is Name:
                values.append(self.variable(node))  # type: ignore[arg-type]
            elif not done:
                push((node, True))
                if cls is Binary:
                    push((node.right, False))  # type: ignore[union-attr]
                    push((node.left, False))  # type: ignore[union-attr]
                else:
                    stack.extend((c, False) for c in reversed(_children(node)))
            elif cls is Binary:
                right = values.pop()
                values[-1] = self.combine(node, [values[-1], right])
            else:
                n = len(_children(node))
                args = values[len(values) - n :]
                del values[len(values) - n :]
                values.append(self.combine(node, args))
        return _as_term(values[0])

    def combine(self, node: Node, args: list[Value]) -> Value:
        try:
            if isinstance(node, Unary):
                return self.unary(node, args[0])
            if isinstance(node, Binary):
                return self.binary(node, args[0], args[1])
            assert isinstance(node, Call)
            return self.call(node, [_as_term(a) for a in args])
        except ZeroDivisorParseError:
            raise
        except DivisionByZeroError as exc:
            raise ZeroDivisorParseError(str(exc), node.line, node.col, self.source) from None
        except TermError as exc:
            raise self.error(str(exc), node) from None

    def unary(self, node: Unary, operand: Value) -> Value:
        if node.op == "not":
            return logical_not(_as_term(operand))
        if node.op == "+":
            return operand
        return _scaled(operand, -1)

    def binary(self, node: Binary, left: Value, right: Value) -> Value:
        op = node.op
        if op in {"+", "-"}:
            return _Linear.of(left).merge(_Linear.of(right), 1 if op == "+" else -1)
        if op == "*":
            k = _const_value(left)
            if k is not None:
                return _scaled(right, k)
            k = _const_value(right)
            if k is not None:
                return _scaled(left, k)
            return _Product.of(left).times(_Product.of(right))
        if op in ("and", "or"):
            if isinstance(left, _Clauses) and left.op == op:
                return left.extended(right)
            return _Clauses(op, [_as_term(left)]).extended(right)
        a, b = _as_term(left), _as_term(right)
        if op in ("//", "%"):
            self.check_divisor(node, a, b, op)
            return (div if op == "//" else mod)(a, b, self.semantics)
        if op in _CMP:
            return compare(_CMP[op], a, b)
        if op == ">":
            return compare(_LT, b, a)
        if op == ">=":
            return compare(_LE, b, a)
        raise self.error(f"{op!r} is not an integer operator", node)

    def check_divisor(self, node: Node, a: Term, b: Term, op: str) -> None:
        """Raise ParseError for a divisor that is the constant 0, quoting ``a`` briefly.

        (div and mod refuse it too, but quote the whole numerator, which may be huge.)
        """
        if b.op is _CONST and b.arg == 0:
            shown = f"({brief(a, self.semantics)}) {op} 0" if op in ("//", "%") else ""
            shown = shown or f"{op}({brief(a, self.semantics)}, 0)"
            raise ZeroDivisorParseError(
                f"division by zero in {shown}", node.line, node.col, self.source
            )

    def call(self, node: Call, args: list[Term]) -> Term:
        name = node.func
        if name in ("max", "min"):
            if len(args) < 2:
                raise self.error(f"{name}() takes at least 2 arguments", node)
            fold = maximum if name == "max" else minimum
            acc = args[0]
            for a in args[1:]:
                acc = fold(acc, a)
            return acc
        if name in DIVISION_FUNCTIONS:
            if len(args) != 2:
                raise self.error(f"{name}() takes exactly 2 arguments", node)
            is_div, sem = DIVISION_FUNCTIONS[name]
            self.check_divisor(node, args[0], args[1], name)
            return (div if is_div else mod)(args[0], args[1], sem)
        if name == "ceildiv":
            if len(args) != 2:
                raise self.error("ceildiv() takes exactly 2 arguments", node)
            self.check_divisor(node, args[0], args[1], name)
            return ceildiv(args[0], args[1])
        known = ", ".join(["max", "min", *DIVISION_FUNCTIONS, "ceildiv"])
        raise self.error(f"unknown function {name!r} (known: {known})", node)


def _children(node: Node) -> list[Node]:
    if isinstance(node, Unary):
        return [node.operand]
    if isinstance(node, Binary):
        return [node.left, node.right]
    if isinstance(node, Call):
        return node.args
    return []


def build_term(
    node: Node, bounds: Bounds, semantics: Semantics = Semantics.FLOOR, source: str = "<expr>"
) -> Term:
    """Build the canonical term of a syntax tree; names become variables with ``bounds``."""
    return _Builder(bounds, semantics, source).build(node)


def parse_term(
    text: str,
    bounds: Bounds | None = None,
    semantics: Semantics = Semantics.FLOOR,
    source: str = "<expr>",
) -> Term:
    """Parse ``text`` into a canonical term. Raises ParseError with line and column."""
    if not isinstance(text, str):
        raise TypeError(f"expected expression text, not {type(text).__name__}")
    if len(text) < _LONG_TEXT:
        return build_term(parse_syntax(text, source), bounds or {}, semantics, source)
    # A long text makes millions of objects, none in a reference cycle: the cyclic garbage
    # collector would only scan them again and again (a third of the time). Pause it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return build_term(parse_syntax(text, source), bounds or {}, semantics, source)
    finally:
        if collecting:
            gc.enable()


_LONG_TEXT: Final = 100_000  # characters
