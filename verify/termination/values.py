"""The symbolic values a rule's measure is computed with.

A measure component is a Z3 integer expression, a Python int, or :class:`Unbounded` (the
rewrite's component cannot be bounded, and why); :func:`plus` and :func:`vplus` add them,
unbounded if any part is. A rewrite's value is a :class:`SumForm` over
:class:`VarRef` and :class:`NodeRef` bases, combined like the canonical builder combines
like atoms; :class:`NestedNode` is an operator node as an element of the nested order.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

import z3

__all__ = [
    "ZERO6",
    "Base",
    "Component",
    "NestedNode",
    "NodeRef",
    "SumForm",
    "Unbounded",
    "VarRef",
    "Vector",
    "ZExpr",
    "add_sums",
    "constant_sum",
    "int_literal",
    "out_of_range",
    "plus",
    "scale_sum",
    "sexpr",
    "sum_of",
    "unless_zero",
    "vplus",
    "z3_abs",
]

# z3 has no type information, so its expressions are Any to mypy.
ZExpr = Any


@dataclasses.dataclass(frozen=True)
class Unbounded:
    """A component of the rewrite's measure that cannot be bounded, and why."""

    reason: str


Component = ZExpr | Unbounded
Vector = tuple[Component, ...]


@dataclasses.dataclass(eq=False)
class VarRef:
    """A term variable of the rewrite; with ``of``, the quotient ``tquotient(of, u)``.

    A quotient has measure unknowns of its own, each at most the variable's, and counts
    as an occurrence of the variable ``of`` (see :meth:`_Measurer.quotient`).
    """

    name: str
    key: str
    of: str | None = None


@dataclasses.dataclass(eq=False)
class NodeRef:
    """An operator node the rewrite builds: ``div mod mul max min cmp``."""

    op: str
    kids: tuple[SumForm, ...]
    key: str


Base = VarRef | NodeRef


@dataclasses.dataclass(frozen=True)
class NestedNode:
    """An operator node of a pattern or rewrite, as an element of the nested order.

    ``depth`` counts the operator nodes above it (within the rule's template); ``weight``,
    ``misplaced`` and ``entries`` are its local components (0 unless a division): exact
    or a lower bound for the pattern, an upper bound (or :class:`Unbounded`) for the
    rewrite.
    """

    op: str
    depth: int
    weight: Component
    misplaced: Component
    entries: Component
    compared: Component = 0

    def local(self) -> tuple[Component, Component, Component, Component]:
        """The components compared after the depth."""
        return (self.weight, self.misplaced, self.entries, self.compared)


@dataclasses.dataclass(eq=False)
class SumForm:
    """A rewrite value in sum form: ``sum(coef * base) + const`` (coefs are Z3 ints).

    Entries with the same key are combined, as canonicalization would; entries with
    different keys may still be the same term at run time (see ``_Measurer.distinct``).
    """

    entries: tuple[tuple[Base, ZExpr], ...]
    const: ZExpr

    @property
    def key(self) -> str:
        """The value's identity: equal keys are the same term (and combine)."""
        parts = [f"{sexpr(c)}*{b.key}" for b, c in self.entries]
        return "+".join([*parts, sexpr(self.const)])


def sexpr(v: ZExpr) -> str:
    """``v`` simplified, as SMT-LIB text (a key part)."""
    return str(z3.simplify(v).sexpr())


def int_literal(v: ZExpr) -> int | None:
    """The value of ``v`` if it simplifies to an integer literal."""
    if isinstance(v, int):
        return v
    s = v if z3.is_int_value(v) else z3.simplify(v)
    return int(s.as_long()) if z3.is_int_value(s) else None


def add_sums(a: SumForm, b: SumForm, scale_b: ZExpr = 1) -> SumForm:
    """``a + scale_b * b``, entries with equal keys combined."""
    entries: dict[str, tuple[Base, ZExpr]] = {b0.key: (b0, c) for b0, c in a.entries}
    for base, c in b.entries:
        scaled = c * scale_b
        if base.key in entries:
            entries[base.key] = (base, entries[base.key][1] + scaled)
        else:
            entries[base.key] = (base, scaled)
    return SumForm(tuple(entries.values()), a.const + b.const * scale_b)


def scale_sum(a: SumForm, k: ZExpr) -> SumForm:
    """``k * a``."""
    return SumForm(tuple((b, c * k) for b, c in a.entries), a.const * k)


def sum_of(base: Base) -> SumForm:
    """The sum ``1*base + 0``."""
    return SumForm(((base, z3.IntVal(1)),), z3.IntVal(0))


def constant_sum(v: ZExpr) -> SumForm:
    """The sum with no entries and constant ``v``."""
    return SumForm((), v)


def z3_abs(v: ZExpr) -> ZExpr:
    """``|v|`` as a Z3 expression."""
    return z3.If(v >= 0, v, -v)


def out_of_range(c: ZExpr, n: ZExpr) -> ZExpr:
    """1 if ``c`` lies outside ``[0, n)``, else 0."""
    return z3.If(z3.Or(c < 0, c >= n), 1, 0)


def unless_zero(cond_coef: ZExpr, v: Component) -> Component:
    """``v`` for an addend with coefficient ``cond_coef``, 0 when that is 0 (it vanishes)."""
    if isinstance(v, Unbounded):
        return v
    lit = int_literal(cond_coef)
    if lit is not None:
        return v if lit != 0 else z3.IntVal(0)
    return z3.If(cond_coef != 0, v, 0)


def plus(*parts: Component) -> Component:
    """The sum of ``parts`` (Python ints or Z3 ints), unbounded if any part is."""
    constant = 0
    terms: list[ZExpr] = []
    for p in parts:
        if isinstance(p, Unbounded):
            return p
        if isinstance(p, int):
            constant += p
        else:
            terms.append(p)
    if not terms:
        return constant
    total = terms[0] if len(terms) == 1 else z3.Sum(*terms)
    return total + constant if constant else total


def vplus(*vectors: Vector) -> Vector:
    """The component-wise sum of ``vectors`` (see :func:`plus`)."""
    return tuple(plus(*col) for col in zip(*vectors, strict=True))


ZERO6: Final = (0, 0, 0, 0, 0, 0)
