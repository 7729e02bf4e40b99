"""Encode a rule's proof obligation in Z3: the symbolic meaning of the rule language.

This is the second interpreter of the rule language (the first, the concrete one, is
:mod:`quorem.interpret`). For a rule instantiated for one semantics and, when it
has a ``sum(K*t)`` pattern, one arity, it builds:

* the value of the pattern (the left-hand side) and of the rewrite;
* **premises**: the left-hand side is defined (no divisor is zero at the point); every
  value the engine computes while matching (lets, guard, constants folded into the
  rewrite) is defined (otherwise the engine does not fire); the guard holds;
  ``vmin(e) <= e <= vmax(e)`` for every range the rule reads; coefficients matched in a
  canonical sum are non-zero;
* **obligations**: every division the rewrite performs at run time has a non-zero
  divisor, and the two sides are equal.

Division is *purified*: each distinct ``a / b`` becomes fresh ``q, r`` constrained by
``b != 0 -> a == b*q + r`` and the remainder's range under the semantics (Z3's own
``div``/``mod`` are Euclidean, neither floor nor truncating). ``gcd`` is encoded as an
arbitrary non-negative common divisor that is zero only when all arguments are: an
over-approximation, so a proof under it covers the engine's actual gcd. Value ranges of
terms are fresh bounds ``lo <= value <= hi``: the proof holds for every sound range
analysis, which is exactly what the rewriter relies on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

import z3

from quorem.ops import DIVISION_FUNCTIONS, Semantics
from quorem.rule import (
    AGGREGATES,
    TERM_FUNCS,
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

from .division import (
    RELATIONS,
    Quotient,
    division_axioms,
    monomial_shift_lemmas,
    native_division,
    proportional_quotient_lemmas,
    quotient_gap_lemmas,
    relation_condition,
    sign_set,
)

__all__ = [
    "ENCODINGS",
    "GCD_PREFIX",
    "INT64_MAX",
    "INT64_MIN",
    "Encoding",
    "encode_rule",
    "has_sequence",
]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
_CMP: Final = {"<", "<=", ">", ">=", "==", "!="}
# How a division reaches the solver: "purify" (fresh quotient and remainder constrained by
# the division axioms) or "native" (SMT-LIB div/mod terms; quorem.verify.division).
ENCODINGS: Final = ("purify", "native")
# The names of a native encoding's gcds, which a sign split may take (``gcd#1 > 0``).
GCD_PREFIX: Final = "gcd#"

# z3 has no type information, so its expressions are Any to mypy.
Value = Any


@dataclasses.dataclass
class Encoding:
    """A rule's proof obligation, ready for a solver.

    Attributes:
        lhs: value of the pattern.
        rhs: value of the rewrite.
        premises: what may be assumed (definedness, guard, ranges, division axioms).
        obligations: what must follow besides ``lhs == rhs`` (run-time divisors non-zero).
        lhs_nodes: every intermediate value of the left-hand side (for int64 checks).
        rhs_nodes: every intermediate value the rewritten code computes.
        symbols: the rule's names (and range bounds) to read a counterexample from:
            name -> Z3 constant; sequences appear as ``K[1]``, ``K[2]``, ...

    """

    lhs: z3.ArithRef
    rhs: z3.ArithRef
    premises: list[z3.BoolRef]
    obligations: list[z3.BoolRef]
    lhs_nodes: list[z3.ArithRef]
    rhs_nodes: list[z3.ArithRef]
    symbols: dict[str, z3.ArithRef]
    bounds: dict[str, tuple[z3.ArithRef, z3.ArithRef]]
    divisions: list[tuple[Semantics, z3.ArithRef, z3.ArithRef]] = dataclasses.field(
        default_factory=list
    )  # semantics, numerator, divisor of each division (before purification)


def has_sequence(rule: Rule) -> bool:
    """Whether the rule matches ``sum(K*t)`` and so must be proven per arity."""
    return any(k in (NameKind.SEQ_CONST, NameKind.SEQ_TERM) for k in rule.names.values())


def _and(conds: Sequence[z3.BoolRef]) -> z3.BoolRef:
    if not conds:
        return z3.BoolVal(True)
    return conds[0] if len(conds) == 1 else z3.And(*conds)


@dataclasses.dataclass
class _Val:
    """An encoded expression, with the conditions for it to be defined.

    ``built``: computing it when the rule fires is defined (a premise: otherwise the
    rule does not fire); ``runtime``: the code it becomes is defined (an obligation).
    """

    value: Value
    built: list[z3.BoolRef]
    runtime: list[z3.BoolRef]
    is_term: bool


class _Encoder:
    def __init__(
        self,
        rule: Rule,
        semantics: Semantics | None,
        arity: int,
        int64: bool,
        encoding: str = "purify",
    ) -> None:
        self.int64 = int64
        self.encoding = encoding
        self.signs: dict[int, frozenset[int]] = {}  # z3 id of a name -> its case's signs
        self.rule = rule
        self.sem = semantics or Semantics.FLOOR
        self.arity = arity
        self.symbols: dict[str, z3.ArithRef] = {}
        self.seqs: dict[str, list[z3.ArithRef]] = {}
        self.lets: dict[str, _Val] = {}
        self.axioms: list[z3.BoolRef] = []
        self.divisions: dict[tuple[Semantics, int, int], tuple[z3.ArithRef, z3.ArithRef]] = {}
        self.quotients: list[Quotient] = []
        self.divisions_made: list[tuple[Semantics, z3.ArithRef, z3.ArithRef]] = []
        self.ranges: dict[tuple[str, int], z3.ArithRef] = {}
        self.bounds: dict[str, tuple[z3.ArithRef, z3.ArithRef]] = {}
        self.nodes: list[z3.ArithRef] = []
        self.partial: set[int] = set()
        self.exact: dict[tuple[int, int], z3.ArithRef] = {}
        self.monomials: dict[tuple[int, int], tuple[z3.BoolRef, z3.ArithRef]] = {}
        self.multiples: list[tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]] = []  # flag, u, q
        self.collect: list[z3.ArithRef] | None = None  # inside fits_int64(...): every value
        self.fresh = 0
        # A native encoding names its gcds by their own count (``gcd#1``), so a sign case
        # (which writes fewer division branches before them) names them the same.
        self.gcd_count = 0
        self.gcd_relations: dict[str, str] = {}  # gcd name -> the sign case's relation
        for name, kind in rule.names.items():
            if kind in (NameKind.SEQ_CONST, NameKind.SEQ_TERM):
                self.seqs[name] = [z3.Int(f"{name}[{i + 1}]") for i in range(arity)]
            else:
                self.symbols[name] = z3.Int(name)

    def new(self, prefix: str) -> z3.ArithRef:
        self.fresh += 1
        return z3.Int(f"{prefix}!{self.fresh}")

    # ------------------------------------------------------------------ division
    def divide(
        self, a: z3.ArithRef, b: z3.ArithRef, sem: Semantics
    ) -> tuple[z3.ArithRef, z3.ArithRef]:
        key = (sem, a.get_id(), b.get_id())
        found = self.divisions.get(key)
        if found is not None:
            return found
        exact = self.exact.get((a.get_id(), b.get_id()))
        if exact is not None:
            # a == b*k by construction (a gcd): the quotient is k and the remainder 0 in
            # every semantics, which Z3 would otherwise have to rediscover non-linearly.
            found = (exact, z3.IntVal(0))
            self.divisions[key] = found
            return found
        if self.encoding == "native":
            q, r = self.native_divide(a, b, sem)
        else:
            q = self.new("q")
            r = self.new("r")
            self.axioms += division_axioms(a, b, q, r, sem)
        self.divisions[key] = (q, r)
        self.divisions_made.append((sem, a, b))
        self.quotients.append((sem, a, b, q))
        return q, r

    def native_divide(
        self, a: z3.ArithRef, b: z3.ArithRef, sem: Semantics
    ) -> tuple[z3.ArithRef, z3.ArithRef]:
        """``a / b`` as SMT-LIB ``div``/``mod`` terms, exactly as purification states it.

        Purification leaves the quotient and remainder free where ``b == 0``; SMT-LIB makes
        them a function of ``a`` there. So a divisor not known non-zero (by the sign a
        split assumed for it) gets ``ite(b == 0, fresh, ...)``: the same statement.
        """
        b_signs = sign_set(b, self.signs)
        if b_signs == {0}:
            return self.new("q"), self.new("r")
        q, r = native_division(a, b, sem, b_signs, sign_set(a, self.signs))
        if 0 in b_signs:
            q = z3.If(b == 0, self.new("q"), q)
            r = z3.If(b == 0, self.new("r"), r)
        return q, r

    def ceil_quotient(self, a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
        """``ceil(a / b)``, stated as ``-floor(-a / b)`` (one purified floor division)."""
        q, _ = self.divide(-a, b, Semantics.FLOOR)
        return -q

    # ------------------------------------------------------------------- pattern
    def pattern(self, p: Pattern, defined: list[z3.BoolRef]) -> z3.ArithRef:
        if isinstance(p, PTerm | PConst):
            v = self.symbols[p.name]
        elif isinstance(p, PLit):
            v = z3.IntVal(p.value)
        elif isinstance(p, POp):
            v = self.pattern_op(p, defined)
        else:
            v = self.pattern_sum(p, defined)
        self.nodes.append(v)
        return v

    def pattern_op(self, p: POp, defined: list[z3.BoolRef]) -> z3.ArithRef:
        a, b = (self.pattern(c, defined) for c in p.children)
        op = p.op
        if op in ("div", "mod") or op in DIVISION_FUNCTIONS:
            is_div, sem = (
                (op == "div", self.sem) if op in ("div", "mod") else DIVISION_FUNCTIONS[op]
            )
            defined.append(b != 0)
            q, r = self.divide(a, b, sem)
            return q if is_div else r
        if op == "ceildiv":
            defined.append(b != 0)
            return self.ceil_quotient(a, b)
        if op == "mul":
            return a * b
        if op == "max":
            return z3.If(a >= b, a, b)
        if op == "min":
            return z3.If(a <= b, a, b)
        if op in ("and", "or"):
            cond = z3.And(a != 0, b != 0) if op == "and" else z3.Or(a != 0, b != 0)
        else:
            cond = {"lt": a < b, "le": a <= b, "eq": a == b, "ne": a != b}[op]
        return z3.If(cond, z3.IntVal(1), z3.IntVal(0))

    def pattern_sum(self, p: PSum, defined: list[z3.BoolRef]) -> z3.ArithRef:
        # A sum's intermediates are its addends (each c*t) and its total: partial sums
        # are not, since some order of adding in-range addends to an in-range total
        # never leaves the range.
        total: z3.ArithRef = z3.IntVal(0)
        for add in p.addends:
            coef = self.expr(add.coef, None)
            self.require_nonzero_coefficient(add.coef, coef)
            self.nodes.append(coef.value)  # the coefficient is a constant the code holds
            scaled = coef.value * self.pattern(add.pattern, defined)
            self.nodes.append(scaled)
            total = total + scaled
        if p.const is not None:
            k = self.expr(p.const, None).value
            self.nodes.append(k)
            total = total + k
        if p.rest is not None:
            # The rest is a partial sum of the matched sum, which the code need not
            # compute on its own: not an intermediate (its addends are).
            total = total + self.symbols[p.rest]
        if p.seq is not None:
            ks = self.seqs[p.seq.coef]
            ts = self.seqs[p.seq.term]
            for k, t in zip(ks, ts, strict=True):
                # The matcher binds only the non-zero coefficients of a canonical sum.
                self.axioms.append(k != 0)
                self.nodes += [k, t, k * t]
                total = total + k * t
            if p.seq.where is not None:
                self.seq_condition(p.seq.where, len(ks))
        return total

    def seq_condition(self, cond: Expr, n: int) -> None:
        """``sum(K*t, cond)``: each addend the sequence binds satisfies ``cond`` (defined).

        Premises only: the matcher puts an addend in the sequence when its condition
        evaluates to true. The rest is left arbitrary (not assumed to fail ``cond``), a
        weaker premise. The condition is the engine's, not the input's computation: its
        values are no intermediates of the input (``nodes`` is kept as it was).
        """
        nodes = self.nodes
        self.nodes = []
        for i in range(n):
            v = self.expr(cond, i)
            self.axioms.extend(v.built)
            self.axioms.append(v.value)
        self.nodes = nodes

    def require_nonzero_coefficient(self, e: Expr, v: _Val) -> None:
        # Canonical sums have no zero coefficients: a pattern asking for one never matches
        # (a literal 0 makes the premises unsatisfiable, so the proof is reported vacuous).
        del e
        self.axioms.append(v.value != 0)

    # ---------------------------------------------------------------- expressions
    def expr(self, e: Expr, index: int | None) -> _Val:
        v = self._expr(e, index)
        if self.collect is not None and z3.is_int(v.value):
            self.collect.append(v.value)
        return v

    def _expr(self, e: Expr, index: int | None) -> _Val:
        if isinstance(e, Lit):
            return _Val(z3.IntVal(e.value), [], [], False)
        if isinstance(e, Name):
            return self.name(e, index)
        if isinstance(e, Unary):
            v = self.expr(e.operand, index)
            if e.op == "not":
                return _Val(z3.Not(v.value), v.built, v.runtime, False)
            return _Val(-v.value, v.built, v.runtime, v.is_term)
        if isinstance(e, Binary):
            return self.binary(e, index)
        return self.call(e, index)

    def name(self, e: Name, index: int | None) -> _Val:
        if e.name in self.lets:
            return self.lets[e.name]
        is_term = e.kind in (NameKind.TERM, NameKind.SEQ_TERM)
        if e.kind in (NameKind.SEQ_CONST, NameKind.SEQ_TERM):
            assert index is not None, f"sequence name {e.name} outside an aggregate"
            return _Val(self.seqs[e.name][index], [], [], is_term)
        return _Val(self.symbols[e.name], [], [], is_term)

    def binary(self, e: Binary, index: int | None) -> _Val:
        a = self.expr(e.left, index)
        b = self.expr(e.right, index)
        if e.op in ("and", "or") and (a.is_term or b.is_term):
            # The term ``a and b`` of a rewrite: 0/1, an operand true where non-zero.
            both = (a.value != 0, b.value != 0)
            cond = z3.And(*both) if e.op == "and" else z3.Or(*both)
            self.operands(True, (a, b))
            indicator = z3.If(cond, z3.IntVal(1), z3.IntVal(0))
            return self.node(_Val(indicator, a.built + b.built, a.runtime + b.runtime, True))
        if e.op in ("and", "or"):
            # Short-circuit: the right side is only evaluated when the left does not decide.
            guard_b = a.value if e.op == "and" else z3.Not(a.value)
            built = [*a.built, z3.Implies(guard_b, _and(b.built))]
            op = z3.And if e.op == "and" else z3.Or
            return _Val(op(a.value, b.value), built, [], False)
        built = a.built + b.built
        runtime = a.runtime + b.runtime
        is_term = a.is_term or b.is_term
        x, y = a.value, b.value
        if e.op in _CMP:
            cond = {
                "<": x < y,
                "<=": x <= y,
                ">": x > y,
                ">=": x >= y,
                "==": x == y,
                "!=": x != y,
            }[e.op]
            value: Value = z3.If(cond, z3.IntVal(1), z3.IntVal(0)) if is_term else cond
            self.operands(is_term, (a, b))
            return self.node(_Val(value, built, runtime, is_term))
        if e.op in ("//", "%"):
            self.operands(is_term, (a, b))
            q, r = self.divide(x, y, self.sem)
            self.divisor_condition(y != 0, b, built, runtime, is_term)
            return self.node(_Val(q if e.op == "//" else r, built, runtime, is_term))
        value = {"+": x + y, "-": x - y, "*": x * y}[e.op]
        if e.op == "*" and a.is_term and b.is_term:
            self.operands(is_term, (a, b))  # a product of terms computes both factors
        else:
            # A sum is built flat and a constant factor distributed over it: only the
            # constants (coefficients, offsets) are values of their own.
            self.operands(is_term, [v for v in (a, b) if not v.is_term])
        if e.op in ("+", "-"):
            # Operands that are sums themselves are partial sums, not intermediates.
            for operand, v in ((e.left, a), (e.right, b)):
                if _is_sum(operand):
                    self.partial.add(v.value.get_id())
        return self.node(_Val(value, built, runtime, is_term))

    def divisor_condition(
        self,
        cond: z3.BoolRef,
        divisor: _Val,
        built: list[z3.BoolRef],
        runtime: list[z3.BoolRef],
        is_term: bool,
    ) -> None:
        # A constant divisor is computed when the rule fires: zero means it does not fire
        # (Undetermined, or a TermError building the term). A term divisor is divided by at
        # run time: the rewrite must not divide by zero where the input did not.
        if is_term and divisor.is_term:
            runtime.append(cond)
        else:
            built.append(cond)

    def operands(self, is_term: bool, operands: Sequence[_Val]) -> None:
        # The operands of an operator the built term keeps (a division, a comparison, a
        # min/max) are values the rewritten code computes, so int64 intermediates: a
        # term operand may be a rest -- a partial sum the input never computed alone --
        # and a constant one is a divisor or bound the code holds.
        if is_term:
            self.nodes.extend(v.value for v in operands)

    def node(self, v: _Val) -> _Val:
        if v.is_term:
            self.nodes.append(v.value)
        return v

    def each(self, body: Expr) -> list[_Val]:
        return [self.expr(body, i) for i in range(self.arity)]

    def args(self, args: Sequence[Expr], index: int | None) -> list[_Val]:
        out: list[_Val] = []
        for a in args:
            if index is None and sequence_names(a):
                out.extend(self.each(a))
            else:
                out.append(self.expr(a, index))
        return out

    def call(self, e: Call, index: int | None) -> _Val:
        f = e.func
        if f in AGGREGATES:
            vals = self.each(e.args[0])
            built = [c for v in vals for c in v.built]
            runtime = [c for v in vals for c in v.runtime]
            if f == "all":
                return _Val(_and([v.value for v in vals]), built, runtime, False)
            if f == "any":
                return _Val(z3.Or(*[v.value for v in vals]), built, runtime, False)
            is_term = any(v.is_term for v in vals)
            total = z3.Sum(*[v.value for v in vals]) if vals else z3.IntVal(0)
            return self.node(_Val(total, built, runtime, is_term))
        if f in ("vmin", "vmax"):
            return self.value_range(f, e.args[0], index)
        if f == "fits_int64":
            return self.fits_int64(e.args[0], index)
        if f in TERM_FUNCS:
            return self.monomial(f, e.args, index)
        vals = self.args(e.args, index)
        built = [c for v in vals for c in v.built]
        runtime = [c for v in vals for c in v.runtime]
        is_term = any(v.is_term for v in vals)
        xs = [v.value for v in vals]
        if f == "abs":
            x = xs[0]
            return _Val(z3.If(x >= 0, x, -x), built, runtime, False)
        if f in ("min", "max"):
            self.operands(is_term, vals)
            acc = xs[0]
            for x in xs[1:]:
                pick = acc <= x if f == "min" else acc >= x
                acc = z3.If(pick, acc, x)
            return self.node(_Val(acc, built, runtime, is_term))
        if f == "gcd":
            return _Val(self.gcd(xs), built, runtime, False)
        if f == "divides":
            d, n = xs
            _, r = self.divide(n, d, Semantics.FLOOR)
            holds = z3.If(d == 0, n == 0, r == 0)
            return _Val(holds, built, runtime, False)
        if f == "ceildiv":
            self.operands(is_term, vals)
            q = self.ceil_quotient(xs[0], xs[1])
            self.divisor_condition(xs[1] != 0, vals[1], built, runtime, is_term)
            return self.node(_Val(q, built, runtime, is_term))
        is_div, sem = DIVISION_FUNCTIONS[f]
        self.operands(is_term, vals)
        q, r = self.divide(xs[0], xs[1], sem)
        self.divisor_condition(xs[1] != 0, vals[1], built, runtime, is_term)
        return self.node(_Val(q if is_div else r, built, runtime, is_term))

    def fits_int64(self, arg: Expr, index: int | None) -> _Val:
        # A fresh flag covers every answer the engine gives, in a negated guard too; it
        # never raises. Equality of the two sides does not depend on overflow, so the
        # equivalence obligation leaves the flag free: the rule is proven whatever the
        # guard answers. For the int64 obligation: the engine answers true only when the
        # range of every value of the template lies in int64 -- where a matched term the
        # input computes counts as in int64, which the obligation assumes of the input's
        # values (quorem.overflow) -- so every value is in int64.
        outer = self.collect
        self.collect = []
        self.expr(arg, index)
        values = self.collect
        self.collect = outer
        if outer is not None:
            outer.extend(values)
        self.fresh += 1
        flag = z3.Bool(f"fits_int64!{self.fresh}")
        if self.int64:
            inside = [z3.And(x >= INT64_MIN, x <= INT64_MAX) for x in values]
            self.axioms.append(z3.Implies(flag, _and(inside)))
        return _Val(flag, [], [], False)

    def monomial(self, f: str, args: Sequence[Expr], index: int | None) -> _Val:
        """``tdivides(u, t)`` and ``tquotient(t, u)`` (quorem.monomial).

        The engine answers ``tdivides`` true only when ``t == q*u`` for its quotient ``q``
        (``u`` a non-zero monomial), so ``tdivides`` is a fresh flag implying that
        equation for a fresh ``q``, and ``tquotient`` is that ``q``, built only where the
        flag holds. ``|q| <= |t|`` follows (``u`` is a non-zero integer) and is stated,
        for the int64 obligation, with its sign. The pair ``(t, u)`` shares one flag and one ``q``.
        """
        a, b = (self.expr(x, index) for x in args)
        t, u = (b, a) if f == "tdivides" else (a, b)
        key = (t.value.get_id(), u.value.get_id())
        found = self.monomials.get(key)
        if found is None:
            self.fresh += 1
            flag = z3.Bool(f"tdivides!{self.fresh}")
            q = self.new("tquotient")
            x, m = t.value, u.value
            # q lies between 0 and x for m > 0, between 0 and -x for m < 0: |q| <= |x|.
            between = z3.If(
                m > 0,
                z3.If(x >= 0, z3.And(q >= 0, q <= x), z3.And(q >= x, q <= 0)),
                z3.If(x >= 0, z3.And(q >= -x, q <= 0), z3.And(q >= 0, q <= -x)),
            )
            self.axioms.append(z3.Implies(flag, z3.And(x == q * m, m != 0, between)))
            found = self.monomials[key] = (flag, q)
            self.multiples.append((flag, m, q))
        flag, q = found
        built = a.built + b.built
        runtime = a.runtime + b.runtime
        if f == "tdivides":
            return _Val(flag, built, runtime, False)
        return self.node(_Val(q, [*built, flag], runtime, True))

    def gcd(self, xs: Sequence[z3.ArithRef]) -> z3.ArithRef:
        if self.encoding == "native":
            self.gcd_count += 1
            g = z3.Int(f"{GCD_PREFIX}{self.gcd_count}")
            relation = self.gcd_relations.get(g.decl().name())
            if relation is not None:
                # A split on the gcd's sign (it is never negative): its case is a premise.
                self.signs[g.get_id()] = RELATIONS[relation]
                self.axioms.append(relation_condition(g, relation))
        else:
            g = self.new("gcd")
        all_zero = _and([x == 0 for x in xs])
        self.axioms.append(g >= 0)
        self.axioms.append((g == 0) == all_zero)
        for x in xs:
            k = self.new("k")
            self.axioms.append(x == g * k)
            self.exact[(x.get_id(), g.get_id())] = k
        return g

    def value_range(self, f: str, arg: Expr, index: int | None) -> _Val:
        t = self.expr(arg, index)
        value = t.value
        key_id = value.get_id()
        lo = self.ranges.get(("lo", key_id))
        if lo is None:
            label = _label(arg)
            lo = z3.Int(f"vmin({label})")
            hi = z3.Int(f"vmax({label})")
            self.ranges[("lo", key_id)] = lo
            self.ranges[("hi", key_id)] = hi
            self.axioms.append(lo <= value)
            self.axioms.append(value <= hi)
            self.bounds[label] = (lo, hi)
        bound = lo if f == "vmin" else self.ranges[("hi", key_id)]
        # Building the term may fail (a constant zero divisor): then the rule does not fire.
        return _Val(bound, t.built, [], False)


def _is_sum(e: Expr) -> bool:
    if isinstance(e, Binary):
        return e.op in ("+", "-")
    return isinstance(e, Call) and e.func == "sum"


def _label(e: Expr) -> str:
    """Readable text of a rule expression, for counterexample reports."""
    if isinstance(e, Lit):
        return str(e.value)
    if isinstance(e, Name):
        return e.name
    if isinstance(e, Unary):
        return f"{e.op} {_label(e.operand)}" if e.op == "not" else f"-{_label(e.operand)}"
    if isinstance(e, Binary):
        return f"({_label(e.left)} {e.op} {_label(e.right)})"
    return f"{e.func}({', '.join(_label(a) for a in e.args)})"


def _assume_signs(enc: _Encoder, signs: Mapping[str, str]) -> list[z3.BoolRef]:
    """Set up one sign case in ``enc``; the conditions it states as premises."""
    case: list[z3.BoolRef] = []
    for name, relation in signs.items():
        if name.startswith(GCD_PREFIX):
            enc.gcd_relations[name] = relation  # the gcd is named when it is encoded
            continue
        # Each case is stated by a change of variables, so that every divisor a solver
        # sees is a name or its negation: ``=0`` substitutes 0, ``<0`` substitutes
        # ``-neg!name`` with ``neg!name > 0`` (Z3 timed out relating ``b*q`` and
        # ``(-b)*q``), ``>0`` and ``>=0`` keep the name and state its sign.
        value: z3.ArithRef
        if relation == "=0":
            value = z3.IntVal(0)
        elif relation == "<0":
            positive = z3.Int(f"neg!{name}")
            enc.signs[positive.get_id()] = RELATIONS[">0"]
            case.append(positive > 0)
            value = -positive
        else:
            value = z3.Int(name)  # the constant the encoder gives the name (C, K[2])
            enc.signs[value.get_id()] = RELATIONS[relation]
            case.append(relation_condition(value, relation))
        base, _, index = name.partition("[")
        if index:
            enc.seqs[base][int(index.rstrip("]")) - 1] = value
        else:
            enc.symbols[name] = value
    return case


def encode_rule(
    rule: Rule,
    semantics: Semantics | None,
    arity: int = 0,
    *,
    int64: bool = False,
    encoding: str = "purify",
    signs: Mapping[str, str] | None = None,
    lemmas: bool = True,
) -> Encoding:
    """Encode ``rule`` for ``semantics`` (and ``arity`` addends in its ``sum(K*t)``).

    ``int64``: for the int64 obligation (what ``fits_int64(...)`` guards promise differs).
    ``encoding``: one of :data:`ENCODINGS`. ``signs``: one case of a sign split
    (:mod:`quorem.verify.split`), name -> relation to 0 (``>0``, ``<0``, ``=0``, ``>=0``,
    :data:`quorem.verify.division.RELATIONS`); the case's sign conditions
    are premises, and the native encoding writes only the branch of a division the signs
    select. ``lemmas``: add the quotient lemmas of :mod:`quorem.verify.division` (true
    facts that speed Z3 up; off, the query is the bare statement).
    """
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r} (one of {', '.join(ENCODINGS)})")
    enc = _Encoder(rule, semantics, arity, int64, encoding)
    case = _assume_signs(enc, signs or {})
    lhs_defined: list[z3.BoolRef] = list(case)
    lhs = enc.pattern(rule.pattern, lhs_defined)
    lhs_nodes = list(enc.nodes)
    premises: list[z3.BoolRef] = list(lhs_defined)
    for name, e in rule.lets:
        v = enc.expr(e, None)
        premises.extend(v.built)
        enc.lets[name] = v
    if rule.guard is not None:
        g = enc.expr(rule.guard, None)
        premises.extend(g.built)
        premises.append(g.value)
    enc.nodes = []
    r = enc.expr(rule.rewrite, None)
    premises.extend(r.built)
    rhs_nodes = [v for v in enc.nodes if v.get_id() not in enc.partial]
    if not r.is_term:
        rhs_nodes.append(r.value)
    premises.extend(enc.axioms)
    if lemmas:
        premises.extend(proportional_quotient_lemmas(enc.quotients))
        premises.extend(quotient_gap_lemmas(enc.quotients))
    if lemmas and enc.monomials:
        divisions = [
            (sem, a, b, q, enc.divisions[(sem, a.get_id(), b.get_id())][1])
            for sem, a, b, q in enc.quotients
        ]
        premises.extend(monomial_shift_lemmas(divisions, enc.multiples))
    symbols = dict(enc.symbols)
    for name, vs in enc.seqs.items():
        for i, v in enumerate(vs):
            symbols[f"{name}[{i + 1}]"] = v
    return Encoding(
        lhs=lhs,
        rhs=r.value,
        premises=premises,
        obligations=list(r.runtime),
        lhs_nodes=lhs_nodes,
        rhs_nodes=rhs_nodes,
        symbols=symbols,
        bounds=enc.bounds,
        divisions=list(enc.divisions_made),
    )
