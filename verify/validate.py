"""Translation validation: check with Z3 every rewrite step the engine actually took.

The rule proofs cover the rules; this covers the glue around them (matching, the
canonical form, the concrete guard evaluation). Each step ``before -> after`` of a
rewrite trace is checked with its constants concrete and its variables symbolic within
their ranges: wherever ``before`` is defined, ``after`` must be defined and equal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import z3

from quorem.ops import DIVISION_OPS, QUOTIENT_OPS, SEMANTICS_OF, Op, Semantics
from quorem.rewrite import Step
from quorem.term import Term
from quorem.walk import nodes

from .division import Quotient, division_axioms, proportional_quotient_lemmas

__all__ = ["StepCheck", "TermTranslator", "check_step", "validate_trace"]


@dataclasses.dataclass
class StepCheck:
    """The verdict on one rewrite step: ``valid``, ``invalid`` (with a point) or ``unknown``."""

    step: Step
    verdict: str
    counterexample: dict[str, int] | None = None


class _Translator:
    """Terms to Z3 integers, divisions purified, sharing one encoding of common atoms."""

    def __init__(self) -> None:
        self.values: dict[Term, Any] = {}
        self.axioms: list[Any] = []
        self.bounds: list[Any] = []
        self.variables: dict[str, Any] = {}
        self.quotients: list[Quotient] = []
        self.fresh = 0

    def variable(self, t: Term) -> Any:
        name, lo, hi = t.arg
        v = self.variables.get(name)
        if v is None:
            v = z3.Int(name)
            self.variables[name] = v
        if lo is not None:
            self.bounds.append(v >= lo)
        if hi is not None:
            self.bounds.append(v <= hi)
        return v

    def divide(self, a: Any, b: Any, sem: Semantics) -> tuple[Any, Any]:
        self.fresh += 1
        q = z3.Int(f"q!{self.fresh}")
        r = z3.Int(f"r!{self.fresh}")
        self.axioms += division_axioms(a, b, q, r, sem)
        self.quotients.append((sem, a, b, q))
        return q, r

    def translate(self, root: Term, defined: list[Any]) -> Any:
        """The Z3 value of ``root``; appends its divisors' non-zero conditions to ``defined``."""
        stack = [(root, False)]
        while stack:
            t, ready = stack.pop()
            if t in self.values and not ready:
                continue
            if not ready and t.args:
                stack.append((t, True))
                stack.extend((c, False) for c in t.args)
                continue
            self.values[t] = self.node(t, defined)
        self.collect_divisors(root, defined)
        return self.values[root]

    def collect_divisors(self, root: Term, defined: list[Any]) -> None:
        for t in nodes(root):
            if t.op in DIVISION_OPS or t.op is Op.CEILDIV:
                defined.append(self.values[t.args[1]] != 0)

    def node(self, t: Term, defined: list[Any]) -> Any:
        op = t.op
        if op is Op.CONST:
            return z3.IntVal(t.arg)
        if op is Op.VAR:
            return self.variable(t)
        args = [self.values[c] for c in t.args]
        if op is Op.ADD:
            return z3.Sum(
                *[c * a for c, a in zip(t.arg[0], args, strict=True)], z3.IntVal(t.arg[1])
            )
        if op is Op.MUL:
            return z3.Product(*args)
        a, b = args
        if op in DIVISION_OPS:
            q, r = self.divide(a, b, SEMANTICS_OF[op])
            return q if op in QUOTIENT_OPS else r
        if op is Op.CEILDIV:  # ceil(a / b) == -floor(-a / b)
            q, _ = self.divide(-a, b, Semantics.FLOOR)
            return -q
        if op is Op.MAX:
            return z3.If(a >= b, a, b)
        if op is Op.MIN:
            return z3.If(a <= b, a, b)
        if op is Op.AND or op is Op.OR:
            both = (a != 0, b != 0)
            cond = z3.And(*both) if op is Op.AND else z3.Or(*both)
        else:
            cond = {Op.LT: a < b, Op.LE: a <= b, Op.EQ: a == b, Op.NE: a != b}[op]
        return z3.If(cond, z3.IntVal(1), z3.IntVal(0))


TermTranslator = _Translator  # public name: the indexing maps' equality check uses it


def check_step(step: Step, timeout: float = 10.0) -> StepCheck:
    """Check one rewrite step with Z3 over its variables' ranges."""
    tr = _Translator()
    before_defined: list[Any] = []
    after_defined: list[Any] = []
    before = tr.translate(step.before, before_defined)
    after = tr.translate(step.after, after_defined)
    s = z3.Solver()
    s.set("timeout", max(1, int(timeout * 1000)))
    s.add(*tr.bounds, *tr.axioms, *proportional_quotient_lemmas(tr.quotients), *before_defined)
    s.add(z3.Not(z3.And(*after_defined, before == after)))
    answer = s.check()
    if answer == z3.unsat:
        return StepCheck(step, "valid")
    if answer == z3.unknown:
        return StepCheck(step, "unknown")
    model = s.model()
    point = {
        name: model.eval(v, model_completion=True).as_long() for name, v in tr.variables.items()
    }
    return StepCheck(step, "invalid", point)


def validate_trace(steps: Sequence[Step], timeout: float = 10.0) -> list[StepCheck]:
    """Check every step in order, stopping at the first that is not valid."""
    out: list[StepCheck] = []
    for step in steps:
        check = check_step(step, timeout)
        out.append(check)
        if check.verdict != "valid":
            break
    return out
