"""Sign splits: one obligation stated as sub-obligations a second solver can decide.

A rule's equivalence obligation with a symbolic divisor ``B`` is non-linear (``B*q``);
cvc5 times out on many that Z3 proves. Split by the sign of each symbolic constant the
rule divides by: one sub-obligation per combination of ``name > 0``, ``name < 0`` and
``name == 0``, the case's conditions added as premises. The cases cover every integer
(:func:`exhaustive` checks it), so the obligation holds if and only if every case does;
each case is one query, the same text for every solver. Within a case the native
encoding (:func:`quorem.verify.division.native_division`) writes only the branch of a
floor division the divisor's sign selects, which is what makes the case decidable.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final

import z3
from quorem.engine.ops import Semantics
from quorem.engine.rule import NameKind, Rule
from quorem.verify.encode import encode_rule

__all__ = ["MAX_SPLIT_NAMES", "case_condition", "exhaustive", "sign_cases", "split_names"]

# At most 3**3 = 27 cases per obligation.
MAX_SPLIT_NAMES: Final = 3
_SIGNS: Final = (1, -1, 0)


def split_names(
    rule: Rule, semantics: Semantics | None, arity: int, limit: int = MAX_SPLIT_NAMES
) -> list[str]:
    """The rule's names (constants first) that occur in a divisor, at most ``limit``.

    Read from the purified encoding's divisions, so a divisor the rule computes (``B*C``,
    ``D // G``) contributes its names too.
    """
    enc = encode_rule(rule, semantics, arity)
    kinds = rule.names
    found: list[str] = []
    for b in enc.divisors:
        for name in _constants_in(b):
            if name in enc.symbols and name not in found:
                found.append(name)

    def rank(name: str) -> int:
        kind = kinds.get(name.split("[")[0])
        return 0 if kind in (NameKind.CONST, NameKind.SEQ_CONST) else 1

    return sorted(found, key=rank)[:limit]


def _constants_in(e: z3.ExprRef) -> list[str]:
    out: list[str] = []
    todo = [e]
    seen: set[int] = set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(x.decl().name())
        else:
            todo.extend(x.children())
    return sorted(out)


def sign_cases(names: Sequence[str]) -> list[dict[str, int]]:
    """Every combination of signs (1, -1, 0) of ``names``: ``3**len(names)`` cases."""
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(_SIGNS, repeat=len(names))]


def case_condition(case: dict[str, int]) -> z3.BoolRef:
    """The premise a case adds: each name's sign."""
    conds = []
    for name, sign in case.items():
        v = z3.Int(name)
        conds.append(v > 0 if sign > 0 else v < 0 if sign < 0 else v == 0)
    return z3.And(*conds) if conds else z3.BoolVal(True)


def exhaustive(cases: Sequence[dict[str, int]], timeout: float = 10.0) -> bool:
    """Whether the cases' conditions cover every integer assignment (Z3 proves it)."""
    s = z3.Solver()
    s.set("timeout", int(timeout * 1000))
    s.add(z3.Not(z3.Or(*[case_condition(c) for c in cases])))
    return bool(s.check() == z3.unsat)
