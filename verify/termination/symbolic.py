"""The symbolic measures of a rule's two sides (:func:`rule_measures`).

For one rule instance (rule x semantics x arity of its ``sum(K*t)``): the measure of the
matched term (exact or a lower bound) and of the built replacement (an upper bound, or
:class:`~quorem.verify.termination.values.Unbounded`), as Z3 integer expressions over the
rule's constants and unknowns for its term variables; the operator nodes and variable
occurrences of each side for the nested order; and the encoder's premises and the
axioms every measure satisfies (see the package docstring).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Final

import z3

from quorem.ops import Semantics
from quorem.rule import (
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Rule,
    Unary,
    sequence_names,
)

from ..encode import encode_rule
from .measure import CEILDIV_WEIGHT, OP_WEIGHT
from .values import (
    ZERO6,
    Base,
    Component,
    NestedNode,
    NodeRef,
    SumForm,
    Unbounded,
    VarRef,
    Vector,
    ZExpr,
    add_sums,
    constant_sum,
    int_literal,
    out_of_range,
    plus,
    scale_sum,
    sexpr,
    sum_of,
    unless_zero,
    vplus,
    z3_abs,
)

__all__ = ["RuleMeasures", "Unsupported", "rule_measures"]

_LINK_PREFIX: Final = "_m"  # names of the rewrite's constant sub-expressions (no rule name
# starts with '_', so they cannot clash)
_TERM_KINDS: Final = (NameKind.TERM, NameKind.SEQ_TERM)
_DIVISION_FUNCS: Final = frozenset(
    {"floordiv", "floormod", "truncdiv", "truncmod", "eucliddiv", "euclidmod", "ceildiv"}
)
_COMPARISON_PATTERNS: Final = frozenset({"lt", "le", "eq", "ne"})
_JUNCTION_PATTERNS: Final = frozenset({"and", "or"})
_LETTERS: Final = "JDVPNQ"  # the measure unknowns' names, one per component
_Unknowns = tuple[ZExpr, ZExpr, ZExpr, ZExpr, ZExpr, ZExpr]  # a term variable's J D V P N Q


class Unsupported(Exception):  # noqa: N818  (control flow, not an error)
    """The rule uses a construct the termination check does not model."""


@dataclasses.dataclass
class _VarInfo:
    """What the pattern says about a term variable (or one addend ``t[i]`` of a sequence).

    ``atom``: it matched an addend of a sum, so it is neither a sum nor a constant.
    ``const_zero``: its sum form has constant 0 (an atom, or the rest of a sum pattern
    whose constant is matched separately). ``groups``: the sum patterns it is a distinct
    member of: two variables sharing a group are distinct atoms (or an atom and a rest
    without it), so a sum of them is not combined by canonicalization. ``dropped``: the
    groups it occurs in twice (such a pattern never matches; nothing is claimed).
    """

    atom: bool = False
    const_zero: bool = False
    groups: set[int] = dataclasses.field(default_factory=set)
    dropped: set[int] = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class RuleMeasures:
    """The symbolic measures of one rule instance, with what Z3 may assume.

    ``pattern`` and ``rewrite`` are vectors of :data:`COMPONENTS` (Z3 integer
    expressions; a rewrite component may be :class:`Unbounded`); ``premises`` are the
    encoder's premises, ``axioms`` what every measure satisfies, ``plain`` the measures
    when every term variable is bound to a plain variable, ``term_values`` the values
    the encoder gives the term variables; ``pattern_uses``/``rewrite_uses`` count
    the occurrences of each term variable; ``symbols`` are the rule's named constants
    and the measure unknowns (for counterexamples).
    """

    pattern: Vector
    rewrite: Vector
    premises: list[ZExpr]
    axioms: list[ZExpr]
    plain: list[tuple[ZExpr, ZExpr]]
    term_values: list[ZExpr]
    pattern_uses: Counter[str]
    rewrite_uses: Counter[str]
    symbols: dict[str, ZExpr]
    pattern_nodes: list[NestedNode] = dataclasses.field(default_factory=list)
    rewrite_nodes: list[NestedNode] = dataclasses.field(default_factory=list)
    pattern_occurrences: list[tuple[str, int, ZExpr]] = dataclasses.field(default_factory=list)
    rewrite_occurrences: list[tuple[str, int, ZExpr]] = dataclasses.field(default_factory=list)


class _Measurer:
    """Builds the symbolic measures of one rule instance (see :func:`rule_measures`)."""

    def __init__(self, rule: Rule, semantics: Semantics | None, arity: int) -> None:
        self.rule = rule
        self.arity = arity
        self.lets = dict(rule.lets)
        self.sem = semantics or Semantics.FLOOR  # what // and % of the rule mean
        self.links: dict[tuple[Expr, bool], str] = {}
        self.vars: dict[str, _VarInfo] = {}
        self.groups = 0
        self.axioms: list[ZExpr] = []
        self.measure_syms: dict[str, _Unknowns] = {}  # J, D, V, P, N, Q
        self.w_syms: dict[str, ZExpr] = {}
        self.mu_funcs: dict[str, ZExpr] = {}
        self.mu_apps: dict[str, ZExpr] = {}
        self.quotient_names: dict[str, str] = {}
        self.k_syms: dict[str, ZExpr] = {}
        self.a_syms: dict[str, ZExpr] = {}
        self.uses: Counter[str] = Counter()
        # The nested order (see _decide_nested): the operator nodes met and the term
        # variables' occurrences, each with its depth; swapped between the two sides.
        self.nodes: list[NestedNode] = []
        self.occurrences: list[tuple[str, int, ZExpr]] = []
        self.scan(rule.pattern)
        self.collect_links(rule.rewrite, in_sum=False)
        enc = encode_rule(self.linked_rule(), semantics, arity)
        self.premises: list[ZExpr] = list(enc.premises)
        self.sym = enc.symbols

    # ------------------------------------------------------------ pattern facts
    def info(self, name: str) -> _VarInfo:
        return self.vars.setdefault(name, _VarInfo())

    def member(self, name: str, group: int, *, atom: bool, const_zero: bool) -> None:
        v = self.info(name)
        v.atom |= atom
        v.const_zero |= const_zero or atom
        if group in v.groups:
            v.dropped.add(group)  # twice in one sum: never matches; claim nothing
        v.groups.add(group)

    def scan(self, p: Pattern) -> None:
        if isinstance(p, PTerm):
            self.info(p.name)
        elif isinstance(p, POp):
            for c in p.children:
                self.scan(c)
        elif isinstance(p, PSum):
            self.groups += 1
            g = self.groups
            for add in p.addends:
                if isinstance(add.pattern, PTerm):
                    self.member(add.pattern.name, g, atom=True, const_zero=True)
                else:
                    self.scan(add.pattern)
            if p.rest is not None:
                self.member(p.rest, g, atom=False, const_zero=p.const is not None)
            if p.seq is not None:
                for i in range(self.arity):
                    self.member(f"{p.seq.term}[{i + 1}]", g, atom=True, const_zero=True)

    def distinct(self, bases: Sequence[Base]) -> bool:
        """Whether these rewrite addends are surely distinct atoms (or rests) at run time."""
        refs = [b for b in bases if isinstance(b, VarRef)]
        if len(refs) != len(bases):
            return len(bases) <= 1
        groups = [self.info(r.name).groups - self.info(r.name).dropped for r in refs]
        return all(groups[i] & groups[j] for i in range(len(refs)) for j in range(i + 1, len(refs)))

    # ------------------------------------------------------------ links to the encoder
    def is_term(self, e: Expr) -> bool:
        """Whether ``e`` evaluates to a term (else to a constant of the match)."""
        if isinstance(e, Name):
            return e.kind in _TERM_KINDS
        if isinstance(e, Unary):
            return e.op != "not" and self.is_term(e.operand)
        if isinstance(e, Binary):
            # ``a and b`` of two terms is a term (of a rewrite); of conditions, a condition.
            return self.is_term(e.left) or self.is_term(e.right)
        if isinstance(e, Call):
            if e.func in ("vmin", "vmax", "all", "any", "gcd", "abs", "divides", "tdivides"):
                return False
            return any(self.is_term(a) for a in e.args)
        return False

    def direct(self, e: Expr) -> bool:
        """Whether the constant ``e`` is read straight from the match (no link needed)."""
        if isinstance(e, Lit):
            return True
        if isinstance(e, Name):
            return e.name not in self.lets
        return isinstance(e, Unary) and e.op == "-" and self.direct(e.operand)

    def collect_links(self, e: Expr, *, in_sum: bool) -> None:
        if not self.is_term(e):
            if self.direct(e):
                return  # the same Z3 value on both sides, so equal parts cancel
            key = (e, in_sum and bool(sequence_names(e)))
            self.links.setdefault(key, f"{_LINK_PREFIX}{len(self.links) + 1}")
            return
        if isinstance(e, Name):
            if e.name in self.lets:
                self.collect_links(self.lets[e.name], in_sum=in_sum)
        elif isinstance(e, Unary):
            self.collect_links(e.operand, in_sum=in_sum)
        elif isinstance(e, Binary):
            self.collect_links(e.left, in_sum=in_sum)
            self.collect_links(e.right, in_sum=in_sum)
        elif isinstance(e, Call):
            for a in e.args:
                self.collect_links(a, in_sum=in_sum or e.func == "sum")

    def linked_rule(self) -> Rule:
        """The rule with guard ``guard and _m1 == e1 and ...`` over fresh names.

        Encoding it makes ``_m1`` the encoder's own value of the rewrite's constant
        sub-expression ``e1`` (same lets, gcds and divisions); the guard's meaning is
        unchanged since the names are otherwise unconstrained.
        """
        names = dict(self.rule.names)
        guard = self.rule.guard
        for (e, per_addend), name in self.links.items():
            if per_addend:
                names[name] = NameKind.SEQ_CONST
                link: Expr = Call("all", (Binary("==", Name(name, NameKind.SEQ_CONST), e),))
            else:
                names[name] = NameKind.CONST
                link = Binary("==", Name(name, NameKind.CONST), e)
            guard = link if guard is None else Binary("and", guard, link)
        return dataclasses.replace(self.rule, names=names, guard=guard)

    def link_value(self, e: Expr, index: int | None) -> ZExpr:
        if self.direct(e):
            return self.const_value(e, index)
        per_addend = index is not None and bool(sequence_names(e))
        name = self.links[(e, per_addend)]
        return self.sym[f"{name}[{index + 1}]" if per_addend and index is not None else name]

    # ------------------------------------------------------------ measure unknowns
    def var_measure(self, name: str) -> _Unknowns:
        found = self.measure_syms.get(name)
        if found is not None:
            return found
        j, d, v, p, n, q = (z3.Int(f"{c}({name})") for c in _LETTERS)
        info = self.info(name)
        self.axioms += [j >= 0, d >= 0, p >= 0, v >= 0, q >= 0, n >= 1 if info.atom else n >= 0]
        value = self.sym.get(name)
        # N(t) == 0 only for the constant 0 (every other term has a variable, an operator
        # or a non-zero constant), which measures 0 throughout.
        zero = z3.And(j == 0, d == 0, p == 0, v == 0, q == 0)
        self.axioms.append(z3.Implies(n == 0, zero if value is None else z3.And(zero, value == 0)))
        self.measure_syms[name] = (j, d, v, p, n, q)
        return self.measure_syms[name]

    def w(self, name: str) -> ZExpr:
        """The weight of the variable's sum form: its coefficients' and constant's ``|.|``.

        1 for an atom (``1*t + 0``); ``|x|`` when ``x`` is a constant; else at least 1,
        since a sum that is not a constant has a non-zero coefficient.
        """
        found = self.w_syms.get(name)
        if found is None:
            found = self.w_syms[name] = z3.Int(f"w({name})")
            info = self.info(name)
            self.axioms.append(found == 1 if info.atom else found >= 0)
            value = self.sym.get(name)
            if value is not None and not info.atom:
                self.axioms.append(z3.Or(found >= 1, found == z3_abs(value)))
        return found

    def k(self, name: str) -> ZExpr:
        """The constant of the variable's sum form (0 for an atom or a rest matched apart)."""
        found = self.k_syms.get(name)
        if found is None:
            found = self.k_syms[name] = z3.Int(f"k({name})")
            n_x = self.var_measure(name)[4]
            # A non-zero constant weighs 1 in the node count.
            self.axioms.append(n_x >= z3.If(found != 0, 1, 0))
            if self.info(name).const_zero:
                self.axioms.append(found == 0)
        return found

    def a(self, name: str) -> ZExpr:
        """The number of atoms of the variable's sum form (1 for an atom)."""
        found = self.a_syms.get(name)
        if found is None:
            found = self.a_syms[name] = z3.Int(f"a({name})")
            self.axioms.append(found == 1 if self.info(name).atom else found >= 0)
        return found

    def entries(self, name: str) -> ZExpr:
        """The non-zero entries (atoms and constant) of the variable's sum form."""
        return self.a(name) + z3.If(self.k(name) != 0, 1, 0)

    def mu(self, name: str, n: ZExpr) -> ZExpr:
        """The misplaced coefficients of ``name``'s sum form relative to the magnitude ``n``."""
        f = self.mu_funcs.get(name)
        if f is None:
            f = self.mu_funcs[name] = z3.Function(f"mu({name})", z3.IntSort(), z3.IntSort())
        app = f(n)
        key = f"{name}@{sexpr(n)}"
        if key not in self.mu_apps:
            self.mu_apps[key] = app
            n_x = self.var_measure(name)[4]
            self.axioms += [app >= 0, z3.Implies(n_x == 0, app == 0)]
        return app

    def plain(self) -> list[tuple[ZExpr, ZExpr]]:
        """The measure unknowns' values when every term variable is a plain variable ``v``.

        ``v`` is the sum ``1*v + 0``: its one coefficient is misplaced under ``n`` iff ``n <= 1``.
        """
        out = [
            (s, z3.IntVal(1 if c == "N" else 0))
            for syms in self.measure_syms.values()
            for c, s in zip(_LETTERS, syms, strict=True)
        ]
        out += [(w, z3.IntVal(1)) for w in self.w_syms.values()]
        out += [(k, z3.IntVal(0)) for k in self.k_syms.values()]
        out += [(a, z3.IntVal(1)) for a in self.a_syms.values()]
        out += [(app, z3.If(app.arg(0) <= 1, 1, 0)) for app in self.mu_apps.values()]
        return out

    # ------------------------------------------------------------ constants of patterns
    def const_value(self, e: Expr, index: int | None = None) -> ZExpr:
        """A pattern coefficient or constant: a literal, a (negated) name, a product."""
        if isinstance(e, Lit):
            return z3.IntVal(e.value)
        if isinstance(e, Name):
            if e.kind is NameKind.SEQ_CONST:
                assert index is not None
                return self.sym[f"{e.name}[{index + 1}]"]
            return self.sym[e.name]
        if isinstance(e, Unary) and e.op == "-":
            return -self.const_value(e.operand, index)
        if isinstance(e, Binary) and e.op == "*":
            return self.const_value(e.left, index) * self.const_value(e.right, index)
        raise AssertionError(f"unexpected pattern constant {e!r}")

    # ------------------------------------------------------------ the pattern's measure
    def pattern(self, p: Pattern, depth: int = 0) -> Vector:
        """The measure of the term ``p`` matched (exact, or a lower bound).

        ``depth`` is the number of operator nodes above ``p`` in the pattern; the operator
        nodes and variable occurrences met are recorded with theirs (the nested order).
        """
        if isinstance(p, PTerm):
            self.uses[p.name] += 1
            self.occurrences.append((p.name, depth, z3.BoolVal(True)))
            return self.var_measure(p.name)
        if isinstance(p, PConst):
            return (0, 0, 0, 0, z3.If(self.sym[p.name] != 0, 1, 0), 0)
        if isinstance(p, PLit):
            return (0, 0, 0, 0, int(p.value != 0), 0)
        if isinstance(p, POp):
            kids = vplus(*(self.pattern(c, depth + 1) for c in p.children))
            if p.op in ("div", "mod") or p.op in _DIVISION_FUNCS:
                num, den = p.children
                mag = self.pattern_divisor(den)
                if mag is not None:
                    misplaced = self.pattern_misplaced(num, mag)
                elif _surely_not_constant(den):
                    misplaced = self.pattern_entries(num)
                else:
                    misplaced = 0  # a lower bound: the divisor may be a constant
                weight = self.pattern_weight(den)
                nested = _nested_weight(p.op, weight)
                self.nodes.append(
                    NestedNode(f"{p.op}", depth, nested, misplaced, self.pattern_entries(num))
                )
                d = CEILDIV_WEIGHT if p.op == "ceildiv" else 1
                return vplus(kids, (0, d, weight, misplaced, OP_WEIGHT, 0))
            if p.op in _COMPARISON_PATTERNS:
                compared = plus(
                    *(plus(self.pattern_weight(c), self.pattern_mixed(c)) for c in p.children)
                )
                self.nodes.append(NestedNode(p.op, depth, 0, 0, 0, compared))
                return vplus(kids, (0, 0, 0, 0, OP_WEIGHT, compared))
            self.nodes.append(NestedNode(p.op, depth, 0, 0, 0))
            junction = int(p.op in _JUNCTION_PATTERNS)
            return vplus(kids, (junction, 0, 0, 0, OP_WEIGHT, 0))
        parts: list[Vector] = [self.pattern(add.pattern, depth) for add in p.addends]
        if p.seq is not None:
            for i in range(self.arity):
                name = f"{p.seq.term}[{i + 1}]"
                self.uses[name] += 1
                self.occurrences.append((name, depth, z3.BoolVal(True)))
                parts.append(self.var_measure(name))
        if p.rest is not None:
            self.uses[p.rest] += 1
            self.occurrences.append((p.rest, depth, z3.BoolVal(True)))
            parts.append(self.var_measure(p.rest))
        if p.const is not None:
            parts.append((0, 0, 0, 0, z3.If(self.const_value(p.const) != 0, 1, 0), 0))
        return vplus(ZERO6, *parts)

    def pattern_entries(self, num: Pattern) -> ZExpr:
        """The non-zero entries (coefficients and constant) of the numerator ``num`` matched.

        Exact: the addends of a sum pattern are distinct atoms with non-zero coefficients.
        """
        if isinstance(num, PTerm):
            return self.entries(num.name)
        if isinstance(num, PConst):
            return z3.If(self.sym[num.name] != 0, 1, 0)
        if isinstance(num, PLit):
            return z3.IntVal(int(num.value != 0))
        if isinstance(num, POp):
            return z3.IntVal(1)
        total: ZExpr = z3.IntVal(len(num.addends) + (self.arity if num.seq is not None else 0))
        if num.rest is not None:
            total = total + self.a(num.rest)
        if num.const is not None:
            total = total + z3.If(self.const_value(num.const) != 0, 1, 0)
        elif num.rest is not None:
            total = total + z3.If(self.k(num.rest) != 0, 1, 0)
        return total

    def pattern_mixed(self, side: Pattern) -> ZExpr:
        """1 if the comparison operand ``side`` matched has an atom and a non-zero constant.

        Exact where the pattern says; a lower bound (0) where it does not.
        """
        if isinstance(side, PTerm):
            return z3.If(z3.And(self.k(side.name) != 0, self.a(side.name) >= 1), 1, 0)
        if not isinstance(side, PSum):
            return z3.IntVal(0)  # a constant, or one atom with coefficient 1
        constant: ZExpr = z3.IntVal(0)
        if side.const is not None:
            constant = self.const_value(side.const)
        elif side.rest is not None:
            constant = self.k(side.rest)
        if side.addends or side.seq is not None:
            return z3.If(constant != 0, 1, 0)
        if side.rest is None:
            return z3.IntVal(0)
        return z3.If(z3.And(constant != 0, self.a(side.rest) >= 1), 1, 0)

    def pattern_divisor(self, den: Pattern) -> ZExpr | None:
        """``|d|`` of a constant divisor pattern, None for any other divisor."""
        if isinstance(den, PConst):
            return z3_abs(self.sym[den.name])
        if isinstance(den, PLit):
            return z3.IntVal(abs(den.value))
        return None

    def pattern_weight(self, den: Pattern) -> ZExpr:
        """The weight of the divisor ``den`` matched (exact)."""
        if isinstance(den, PTerm):
            return self.w(den.name)
        if isinstance(den, (PConst, PLit)):
            mag = self.pattern_divisor(den)
            assert mag is not None
            return mag
        if isinstance(den, POp):
            return z3.IntVal(1)  # one atom, coefficient 1
        # The addends of a sum pattern are distinct atoms, the rest holds the others.
        total: ZExpr = z3.IntVal(0)
        for add in den.addends:
            total = total + z3_abs(self.const_value(add.coef))
        if den.seq is not None:
            for i in range(self.arity):
                total = total + z3_abs(self.sym[f"{den.seq.coef}[{i + 1}]"])
        if den.rest is not None:
            total = total + self.w(den.rest)
        if den.const is not None:
            total = total + z3_abs(self.const_value(den.const))
        return total

    def pattern_misplaced(self, num: Pattern, n: ZExpr) -> ZExpr:
        """The misplaced entries of the numerator ``num`` matched, relative to ``n``."""
        if isinstance(num, PTerm):
            return self.mu(num.name, n) + out_of_range(self.k(num.name), n)
        if isinstance(num, PConst):
            return out_of_range(self.sym[num.name], n)
        if isinstance(num, PLit):
            return out_of_range(z3.IntVal(num.value), n)
        if isinstance(num, POp):
            return out_of_range(z3.IntVal(1), n)  # one atom, coefficient 1
        total: ZExpr = z3.IntVal(0)
        for add in num.addends:
            total = total + out_of_range(self.const_value(add.coef), n)
        if num.seq is not None:
            for i in range(self.arity):
                total = total + out_of_range(self.sym[f"{num.seq.coef}[{i + 1}]"], n)
        constant: ZExpr = z3.IntVal(0)
        if num.rest is not None:
            total = total + self.mu(num.rest, n)
            constant = self.k(num.rest)  # 0 when the constant is matched apart
        if num.const is not None:
            constant = constant + self.const_value(num.const)
        return total + out_of_range(constant, n)

    # ------------------------------------------------------------ the rewrite's value
    def rewrite_value(self, e: Expr, index: int | None = None) -> SumForm | ZExpr:
        """The rewrite template ``e`` in sum form (a Z3 int if it is a constant)."""
        if not self.is_term(e):
            return self.link_value(e, index)
        if isinstance(e, Name):
            if e.name in self.lets:
                return self.rewrite_value(self.lets[e.name], index)
            if e.kind is NameKind.SEQ_TERM:
                assert index is not None
                name = f"{e.name}[{index + 1}]"
            else:
                name = e.name
            return sum_of(VarRef(name, f"v:{name}"))
        if isinstance(e, Unary):
            return scale_sum(self.as_sum(self.rewrite_value(e.operand, index)), -1)
        if isinstance(e, Binary):
            a = self.rewrite_value(e.left, index)
            b = self.rewrite_value(e.right, index)
            if e.op in ("+", "-"):
                return add_sums(self.as_sum(a), self.as_sum(b), 1 if e.op == "+" else -1)
            if e.op == "*" and not isinstance(a, SumForm):
                return scale_sum(self.as_sum(b), a)
            if e.op == "*" and not isinstance(b, SumForm):
                return scale_sum(a, b)
            if e.op in ("//", "%"):
                op = "div" if e.op == "//" else "mod"
                return self.node(op, a, b, f"{op}:{self.sem.value}")
            if e.op in _JUNCTION_PATTERNS:
                return self.node(e.op, a, b, e.op)
            return self.node("mul" if e.op == "*" else "cmp", a, b, e.op)
        assert isinstance(e, Call)
        if e.func == "tquotient":
            return self.quotient(e, index)
        if e.func not in (*_DIVISION_FUNCS, "sum", "min", "max"):
            raise Unsupported(f"the rewrite uses {e.func}(), which the measure does not model")
        if e.func == "sum":
            total = constant_sum(z3.IntVal(0))
            for i in range(self.arity):
                total = add_sums(total, self.as_sum(self.rewrite_value(e.args[0], i)))
            return total
        vals = [self.rewrite_value(a, index) for a in e.args]
        if e.func in ("min", "max"):
            acc = vals[0]
            for v in vals[1:]:
                acc = self.node(e.func, acc, v, e.func)
            return acc
        op = "ceildiv" if e.func == "ceildiv" else ("div" if e.func.endswith("div") else "mod")
        return self.node(op, vals[0], vals[1], e.func)

    def quotient(self, e: Call, index: int | None) -> SumForm:
        """``tquotient(x, u)`` of a term variable ``x`` (possibly scaled): a fresh variable.

        The quotient's atoms are ``x``'s with some factors of their products removed
        (quorem.monomial): its nodes are a subset of ``x``'s, none deeper, plus
        products of remaining factors (where ``x`` had one), so each of its components
        is at most ``x``'s, and its nodes in the nested order are below ``x``'s at the
        same depth. Its sum form (coefficients, constant, atoms) is not known, but for a
        constant divisor ``g``: ``x``'s divided through by ``g``.
        """
        num = e.args[0]
        if isinstance(num, Binary) and num.op == "*":
            terms = [a for a in (num.left, num.right) if self.is_term(a)]
            num = terms[0] if len(terms) == 1 else num
        if not (isinstance(num, Name) and num.kind in _TERM_KINDS and num.name not in self.lets):
            raise Unsupported("tquotient() of something other than a (scaled) term variable")
        of = num.name if num.kind is NameKind.TERM else f"{num.name}[{(index or 0) + 1}]"
        divisor = self.as_sum(self.rewrite_value(e.args[1], index))
        key = f"tquotient({of},{divisor.key})"
        name = self.quotient_names.setdefault(key, f"q{len(self.quotient_names) + 1}({of})")
        mine, theirs = self.var_measure(name), self.var_measure(of)
        self.axioms += [q <= x for q, x in zip(mine, theirs, strict=True)]
        if not divisor.entries:
            # A constant divisor g divides every coefficient and the constant: the
            # quotient's sum form is x's divided through by g, atom for atom.
            g = divisor.const
            self.axioms += [
                self.w(name) * z3_abs(g) == self.w(of),
                self.k(name) * g == self.k(of),
                self.a(name) == self.a(of),
            ]
        return sum_of(VarRef(name, f"v:{name}", of))

    def as_sum(self, v: SumForm | ZExpr) -> SumForm:
        return v if isinstance(v, SumForm) else constant_sum(v)

    def node(self, op: str, a: SumForm | ZExpr, b: SumForm | ZExpr, exact_op: str) -> SumForm:
        """A node built by the rewrite; ``exact_op`` names its operator exactly.

        Nodes with equal keys are the same term (and combine in a sum), so the key holds
        the exact operator (``<`` and ``==`` differ, and so do floor and truncating).
        """
        kids = (self.as_sum(a), self.as_sum(b))
        key = f"{exact_op}({kids[0].key},{kids[1].key})"
        return sum_of(NodeRef(op, kids, key))

    # ------------------------------------------------------------ the rewrite's measure
    def sum_measure(self, s: SumForm, depth: int = 0) -> Vector:
        """An upper bound of the measure of the canonical term ``s`` builds.

        ``depth`` is the number of operator nodes above ``s``; the nodes built and the
        variable occurrences are recorded with theirs (the nested order).
        """
        parts: list[Vector] = [(0, 0, 0, 0, z3.If(s.const != 0, 1, 0), 0)]
        for base, coef in s.entries:
            first = len(self.occurrences)
            parts.append(tuple(unless_zero(coef, c) for c in self.base_measure(base, depth)))
            if int_literal(coef) is None:
                # An addend whose coefficient is 0 vanishes, and the variables in it.
                self.occurrences[first:] = [
                    (name, d, z3.And(cond, coef != 0)) for name, d, cond in self.occurrences[first:]
                ]
            elif int_literal(coef) == 0:
                del self.occurrences[first:]
        return vplus(ZERO6, *parts)

    def base_measure(self, base: Base, depth: int = 0) -> Vector:
        if isinstance(base, VarRef):
            used = base.of or base.name  # a quotient is an occurrence of its variable
            self.uses[used] += 1
            self.occurrences.append((used, depth, z3.BoolVal(True)))
            return self.var_measure(base.name)
        kids = vplus(*(self.sum_measure(k, depth + 1) for k in base.kids))
        if base.op == "cmp":
            compared = plus(
                *(
                    plus(
                        self.rewrite_divisor(k, "an operand of a comparison"),
                        self.rewrite_mixed(k),
                    )
                    for k in base.kids
                )
            )
            self.nodes.append(NestedNode(base.op, depth, 0, 0, 0, compared))
            return vplus(kids, (0, 0, 0, 0, OP_WEIGHT, compared))
        if base.op not in ("div", "mod", "ceildiv"):
            self.nodes.append(NestedNode(base.op, depth, 0, 0, 0))
            junction = int(base.op in _JUNCTION_PATTERNS)
            return vplus(kids, (junction, 0, 0, 0, OP_WEIGHT, 0))
        num, den = base.kids
        weight = self.rewrite_divisor(den)
        misplaced = self.rewrite_misplaced(num, den)
        nested = _nested_weight(base.op, weight)
        self.nodes.append(NestedNode(base.op, depth, nested, misplaced, self.rewrite_entries(num)))
        d = CEILDIV_WEIGHT if base.op == "ceildiv" else 1
        return vplus(kids, (0, d, weight, misplaced, OP_WEIGHT, 0))

    def rewrite_entries(self, num: SumForm) -> ZExpr:
        """An upper bound of the non-zero entries of the canonical numerator ``num`` builds.

        Combining like atoms and folding a product only lower the count.
        """
        total: ZExpr = z3.IntVal(0)
        constant = num.const
        for base, coef in num.entries:
            present = z3.If(coef != 0, 1, 0)
            if isinstance(base, VarRef) and not self.info(base.name).atom:
                total = total + z3.If(coef != 0, self.a(base.name), 0)
                constant = constant + coef * self.k(base.name)
            else:
                total = total + present
        return total + z3.If(constant != 0, 1, 0)

    def rewrite_mixed(self, side: SumForm) -> ZExpr:
        """An upper bound of :meth:`pattern_mixed` for the built comparison operand ``side``.

        0 for a constant; otherwise 1 unless its constant (with the constants of the
        variables it adds up) is surely 0.
        """
        if not side.entries:
            return z3.IntVal(0)
        constant = side.const
        atoms: list[ZExpr] = []  # whether some entry brings an atom
        for base, coef in side.entries:
            if isinstance(base, VarRef) and not self.info(base.name).atom:
                constant = constant + coef * self.k(base.name)
                atoms.append(z3.And(coef != 0, self.a(base.name) > 0))
            else:
                atoms.append(coef != 0)
        return z3.If(z3.And(constant != 0, z3.Or(*atoms)), 1, 0)

    def atom_like(self, base: Base) -> bool:
        """Whether ``base`` is surely one atom (a product may fold into a scaled atom)."""
        if isinstance(base, VarRef):
            return self.info(base.name).atom
        return base.op != "mul"

    def divisor_kind(self, den: SumForm) -> ZExpr | Unbounded | None:
        """``|d|`` if the built divisor is the constant ``d``; None if surely not constant."""
        if not den.entries:
            return z3_abs(den.const)
        if len(den.entries) == 1:
            base, coef = den.entries[0]
            lit = int_literal(coef)
            # A symbolic coefficient is non-zero where the rule fires: 0 would make the
            # divisor the constant 0, and the rewrite is not built (a TermError).
            if self.atom_like(base) and lit != 0:
                return None
        return Unbounded("a divisor of the rewrite may or may not be a constant")

    def rewrite_divisor(self, den: SumForm, what: str = "a divisor of the rewrite") -> Component:
        """An upper bound of the built divisor's (or comparison operand's) weight.

        Canonicalization only merges addends and folds constants, which never raises the
        weight (triangle inequality), so the weights of the entries add up to a bound.
        """
        total: ZExpr = z3_abs(den.const)
        for base, coef in den.entries:
            if isinstance(base, VarRef) and not self.info(base.name).atom:
                total = total + z3_abs(coef) * self.w(base.name)
            elif self.atom_like(base):
                total = total + z3_abs(coef)
            else:
                return Unbounded(f"{what} has a product, which may lift out a constant factor")
        return total

    def rewrite_misplaced(self, num: SumForm, den: SumForm) -> Component:
        n = self.divisor_kind(den)
        if n is None:
            return self.rewrite_entries(num)
        if isinstance(n, Unbounded):
            return Unbounded(
                "a divisor of the rewrite may be a constant: its misplaced count is not known"
            )
        bases = [b for b, _ in num.entries]
        if not self.distinct(bases):
            return Unbounded(
                "a numerator of the rewrite adds terms that may combine, changing its coefficients"
            )
        total: ZExpr = z3.IntVal(0)
        constant = num.const
        for base, coef in num.entries:
            if self.atom_like(base):
                total = total + out_of_range(coef, n)
                continue
            if isinstance(base, NodeRef):
                return Unbounded(
                    "a numerator of the rewrite has a product, which may lift out a constant factor"
                )
            if int_literal(coef) != 1:
                return Unbounded(
                    f"a numerator of the rewrite scales {base.name}, whose coefficients"
                    " are not known"
                )
            total = total + self.mu(base.name, n)
            constant = constant + self.k(base.name)
        return total + out_of_range(constant, n)

    def rewrite(self) -> Vector:
        """An upper bound of the measure of the replacement the rewrite builds."""
        return self.sum_measure(self.as_sum(self.rewrite_value(self.rule.rewrite)))


def _nested_weight(op: str, weight: Component) -> Component:
    """A division node's weight in the nested order: twice the divisor's for a ceildiv."""
    if op != "ceildiv" or isinstance(weight, Unbounded):
        return weight
    return CEILDIV_WEIGHT * weight


def _surely_not_constant(den: Pattern) -> bool:
    """Whether every term the divisor pattern ``den`` matches is not a constant.

    An operator node is not; nor is a sum pattern with an addend or a sequence (distinct
    atoms with non-zero coefficients stay in the matched canonical sum).
    """
    if isinstance(den, POp):
        return True
    return isinstance(den, PSum) and (bool(den.addends) or den.seq is not None)


def rule_measures(rule: Rule, semantics: Semantics | None, arity: int = 0) -> RuleMeasures:
    """The symbolic measures of ``rule`` instantiated for ``semantics`` and ``arity``.

    The pattern's vector is exact or a lower bound of the matched term's measure; the
    rewrite's is an upper bound of the built replacement's (or :class:`Unbounded`),
    whenever the premises hold.
    """
    m = _Measurer(rule, semantics, arity)
    lhs = _as_z3(m.pattern(rule.pattern))
    lhs_uses, m.uses = m.uses, Counter()
    lhs_nodes, m.nodes = m.nodes, []
    lhs_occurrences, m.occurrences = m.occurrences, []
    rhs = _as_z3(m.rewrite())
    symbols: dict[str, ZExpr] = {
        k: v
        for k, v in m.sym.items()
        if rule.names.get(k.split("[")[0]) in (NameKind.CONST, NameKind.SEQ_CONST)
        and k.split("[")[0] not in m.lets
    }
    for name, syms in m.measure_syms.items():
        symbols.update({f"{c}({name})": s for c, s in zip(_LETTERS, syms, strict=True)})
    symbols.update({f"k({name})": k for name, k in m.k_syms.items()})
    symbols.update({f"a({name})": a for name, a in m.a_syms.items()})
    values = [
        v
        for k, v in m.sym.items()
        if rule.names.get(k.split("[")[0]) in _TERM_KINDS and k.split("[")[0] not in m.lets
    ]
    return RuleMeasures(
        lhs,
        rhs,
        m.premises,
        m.axioms,
        m.plain(),
        values,
        lhs_uses,
        m.uses,
        symbols,
        lhs_nodes,
        m.nodes,
        lhs_occurrences,
        m.occurrences,
    )


def _as_z3(vector: Vector) -> Vector:
    """``vector`` with Python int components as Z3 integers."""
    return tuple(z3.IntVal(c) if isinstance(c, int) else c for c in vector)
