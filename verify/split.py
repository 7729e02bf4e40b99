"""Sign splits: one obligation stated as sub-obligations a second solver can decide.

A rule's equivalence obligation with a symbolic divisor ``B`` is non-linear (``B*q``);
cvc5 times out on many that Z3 proves. Split by the sign of each symbolic name the rule
divides by: one sub-obligation per combination of ``name > 0``, ``name < 0`` and
``name == 0``, the case's conditions added as premises; a name that is a whole numerator
of a truncating division is split by ``>= 0`` and ``< 0``, and a gcd the rule divides by
(``gcd#1``, never negative) by ``> 0`` and ``== 0``. The cases cover every integer
assignment (:func:`exhaustive` checks it), so the obligation holds if and only if every
case does; each case is one query, the same text for every solver. Within a case the
native encoding (:func:`quorem.verify.division.native_division`) writes only the branch
of a floor or truncating division the signs select, which is what makes it decidable.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final

import z3

from quorem.ops import Semantics
from quorem.rule import NameKind, Rule

from .division import relation_condition
from .encode import GCD_PREFIX, encode_rule

__all__ = [
    "DIVISOR_RELATIONS",
    "GCD_RELATIONS",
    "MAX_DIVISOR_NAMES",
    "NUMERATOR_RELATIONS",
    "Split",
    "case_condition",
    "exhaustive",
    "sign_cases",
    "split_plan",
]

# At most 3**3 * 2 = 54 cases per obligation.
MAX_DIVISOR_NAMES: Final = 3
MAX_NUMERATOR_NAMES: Final = 1
DIVISOR_RELATIONS: Final = (">0", "<0", "=0")
GCD_RELATIONS: Final = (">0", "=0")  # a gcd is never negative
NUMERATOR_RELATIONS: Final = (">=0", "<0")

# A split: each name with the relations to 0 its cases take (together, every integer).
Split = list[tuple[str, tuple[str, ...]]]


def split_plan(rule: Rule, semantics: Semantics | None, arity: int) -> Split:
    """The names to split ``rule``'s obligation on, each with its relations.

    The names (constants first) in a divisor, at most :data:`MAX_DIVISOR_NAMES`; then
    the term names that are a whole numerator of a truncating division (the branch of
    ``trunc`` depends on the numerator's sign), at most :data:`MAX_NUMERATOR_NAMES`.
    Read from the native encoding's divisions, so a divisor the rule computes
    (``B*C``, ``D // G``) contributes its names too; a gcd (``gcd#1``) counts as a
    constant's name, split by :data:`GCD_RELATIONS`.
    """
    enc = encode_rule(rule, semantics, arity, encoding="native")
    kinds = rule.names
    divisor_names: list[str] = []
    for _, _, b in enc.divisions:
        for name in _names_in(b):
            splittable = name in enc.symbols or name.startswith(GCD_PREFIX)
            if splittable and name not in divisor_names:
                divisor_names.append(name)

    def rank(name: str) -> int:
        kind = kinds.get(name.split("[", maxsplit=1)[0])
        return 0 if kind in (NameKind.CONST, NameKind.SEQ_CONST) else 1

    divisor_names = sorted(divisor_names, key=rank)[:MAX_DIVISOR_NAMES]
    numerator_names: list[str] = []
    for sem, a, _ in enc.divisions:
        if sem is not Semantics.TRUNC or not _is_name(a):
            continue
        name = a.decl().name()
        if name in enc.symbols and name not in divisor_names + numerator_names:
            numerator_names.append(name)
    plan: Split = [
        (n, GCD_RELATIONS if n.startswith(GCD_PREFIX) else DIVISOR_RELATIONS) for n in divisor_names
    ]
    plan += [(n, NUMERATOR_RELATIONS) for n in numerator_names[:MAX_NUMERATOR_NAMES]]
    return plan


def _is_name(e: z3.ExprRef) -> bool:
    return bool(z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED)


def _names_in(e: z3.ExprRef) -> list[str]:
    out: list[str] = []
    todo = [e]
    seen: set[int] = set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if _is_name(x):
            out.append(x.decl().name())
        else:
            todo.extend(x.children())
    return sorted(out)


def sign_cases(plan: Split) -> list[dict[str, str]]:
    """Every combination of the plan's relations: one case (name -> relation) each."""
    names = [n for n, _ in plan]
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*[relations for _, relations in plan])
    ]


def case_condition(case: dict[str, str]) -> z3.BoolRef:
    """The premise a case adds: each name's relation to 0."""
    conds = [relation_condition(z3.Int(n), rel) for n, rel in case.items()]
    return z3.And(*conds) if conds else z3.BoolVal(True)


def exhaustive(cases: Sequence[dict[str, str]], timeout: float = 10.0) -> bool:
    """Whether the cases' conditions cover every assignment (Z3 proves it).

    Every integer, except that a gcd is never negative (the encoding states it).
    """
    s = z3.Solver()
    s.set("timeout", int(timeout * 1000))
    gcds = {n for c in cases for n in c if n.startswith(GCD_PREFIX)}
    s.add(*[z3.Int(n) >= 0 for n in sorted(gcds)])
    s.add(z3.Not(z3.Or(*[case_condition(c) for c in cases])))
    return bool(s.check() == z3.unsat)
