"""Replay a counterexample through the engine: the proof's verdict, checked concretely.

From a Z3 model, build the concrete term the rule's pattern describes (term variables
become variables ranging over the model's bounds), let the engine apply the rule to it,
and evaluate both sides at the model's point. A counterexample is *confirmed* only if
the engine really fires and the results differ (or the rewrite divides by zero, or, for
the int64 obligation, overflows where the input did not).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from quorem.errors import EvaluationError, QuoremError
from quorem.evaluation import evaluate
from quorem.ops import Op, Semantics
from quorem.rule import NameKind, Pattern, PConst, PLit, POp, PSum, PTerm, Rule, pattern_op
from quorem.ruleset import RuleSet
from quorem.term import Term, binary, const, linear, var
from quorem.walk import nodes, substitute

from .encode import INT64_MAX, INT64_MIN

__all__ = ["Replay", "replay"]


@dataclasses.dataclass
class Replay:
    """What the engine did with a counterexample."""

    confirmed: bool
    note: str
    lines: list[str]
    # How a confirmed counterexample fails: "mismatch" (the values differ), "division by
    # zero" (the rewrite's), or "overflow" (the values agree but the rewrite computes a
    # value outside int64 where the input does not).
    kind: str = ""
    # The term the counterexample describes (the pattern built from its values), when
    # it could be built: what a user would have to simplify to meet the rule's error.
    term: Term | None = None


def _bounds(values: dict[str, int], name: str, v: int) -> tuple[int, int]:
    lo = values.get(f"vmin({name})", v)
    hi = values.get(f"vmax({name})", v)
    return min(lo, v), max(hi, v)


def _bindings(
    rule: Rule, arity: int, values: dict[str, int]
) -> tuple[dict[str, object], dict[str, int]]:
    b: dict[str, object] = {}
    env: dict[str, int] = {}
    for name, kind in rule.names.items():
        if kind is NameKind.CONST and name in values:
            b[name] = values[name]
        elif kind is NameKind.TERM and name in values:
            v = values[name]
            lo, hi = _bounds(values, name, v)
            if INT64_MIN <= v <= INT64_MAX:
                b[name] = var(name, lo, hi)
                env[name] = v
            else:
                # Outside int64: a value no machine code holds. The prover's model means a
                # partial sum (the rest of a sum pattern), so build it as one of two
                # in-range variables, which the input adds up with its other addends.
                half = v // 2
                one, two = f"{name}_1", f"{name}_2"
                b[name] = var(one, lo // 2, hi // 2) + var(two, lo - lo // 2, hi - hi // 2)
                env[one], env[two] = half, v - half
        elif kind is NameKind.SEQ_CONST:
            b[name] = [values[f"{name}[{i + 1}]"] for i in range(arity)]
        elif kind is NameKind.SEQ_TERM:
            terms = []
            for i in range(arity):
                v = values[f"{name}[{i + 1}]"]
                vname = f"{name}_{i + 1}"
                terms.append(var(vname, *_bounds(values, f"{name}[{i + 1}]", v)))
                env[vname] = v
            b[name] = terms
    return b, env


def _sequences(p: Pattern) -> dict[str, str]:
    """Each sequence term name of ``p`` and the sum it belongs to: ``{"t": "sum(K*t)"}``."""
    out: dict[str, str] = {}
    if isinstance(p, POp):
        for k in p.children:
            out.update(_sequences(k))
    elif isinstance(p, PSum):
        if p.seq is not None:
            out[p.seq.term] = f"sum({p.seq.coef}*{p.seq.term})"
        for a in p.addends:
            out.update(_sequences(a.pattern))
    return out


def _ordinal(i: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(i, f"{i}th")


def name_notes(rule: Rule, arity: int, values: dict[str, int]) -> list[str]:
    """What each variable the replayed term shows stands for, where its name does not say.

    The engine's variables are plain names: the addends ``t[i]`` of ``sum(K*t)`` become
    ``t_1``, ``t_2``..., and a value outside int64 (a partial sum, for the prover) is
    replayed as two in-range variables ``x_1 + x_2`` (shown as ``x`` where the terms
    allow, see :func:`_Shown`).
    """
    notes = []
    sums = _sequences(rule.pattern)
    for name, kind in rule.names.items():
        if kind is NameKind.SEQ_TERM:
            total = sums.get(name, f"the sequence {name}")
            notes += [
                f"{name}_{i} is {name}[{i}], the {_ordinal(i)} addend of {total}"
                for i in range(1, arity + 1)
            ]
        elif kind is NameKind.TERM and name in values:
            v = values[name]
            if not INT64_MIN <= v <= INT64_MAX:
                half = v // 2
                notes.append(
                    f"{name} = {v} is outside int64: the prover's {name} stands for a "
                    f"partial sum (the rest of a sum), replayed as {name} = {name}_1 + "
                    f"{name}_2 with {name}_1 = {half}, {name}_2 = {v - half}, each in int64"
                )
    return notes


class _Shown:
    """How the replayed terms are shown: over the rule's own names.

    A term variable outside int64 is replayed as ``x_1 + x_2`` (:func:`_bindings`);
    wherever the two appear only together, as one sum's addends with one coefficient,
    the term is shown with ``x`` in their place (equal in value). Elsewhere they stay,
    and the notes say what they are.
    """

    def __init__(self, rule: Rule, values: dict[str, int]) -> None:
        self.splits: list[tuple[str, str, Term]] = []
        for name, kind in rule.names.items():
            v = values.get(name)
            if kind is NameKind.TERM and v is not None and not INT64_MIN <= v <= INT64_MAX:
                whole = var(name, *_bounds(values, name, v))
                self.splits.append((f"{name}_1", f"{name}_2", whole))

    def term(self, t: Term) -> Term:
        """``t`` with each split ``x_1 + x_2`` joined back into ``x`` where it can be."""
        for one, two, whole in self.splits:
            if _paired(t, one, two):
                t = substitute(t, {one: whole, two: const(0)})
        return t

    def __call__(self, t: Term) -> str:
        return str(self.term(t))


def _is_named(t: Term, names: tuple[str, str]) -> bool:
    return t.op is Op.VAR and t.arg[0] in names


def _paired(t: Term, one: str, two: str) -> bool:
    """Whether variables ``one`` and ``two`` occur in ``t`` only together, as equal addends."""
    names = (one, two)
    if _is_named(t, names):
        return False
    for n in nodes(t):
        if n.op is Op.ADD:
            coefs = {
                a.arg[0]: c for a, c in zip(n.args, n.arg[0], strict=True) if _is_named(a, names)
            }
            if coefs.get(one) != coefs.get(two):
                return False
        elif any(_is_named(a, names) for a in n.args):
            return False
    return True


def _build(p: Pattern, b: dict[str, object], sem: Semantics | None) -> Term:
    if isinstance(p, PTerm):
        t = b[p.name]
        assert isinstance(t, Term)
        return t
    if isinstance(p, PConst):
        v = b[p.name]
        assert isinstance(v, int)
        return const(v)
    if isinstance(p, PLit):
        return const(p.value)
    if isinstance(p, POp):
        a, c = (_build(k, b, sem) for k in p.children)
        return binary(pattern_op(p.op, sem), a, c)
    return _build_sum(p, b, sem)


def _coef(e: object, b: dict[str, object]) -> int:
    from quorem.interpret import evaluate_expr  # noqa: PLC0415

    v = evaluate_expr(e, b, None)  # type: ignore[arg-type]
    assert isinstance(v, int)
    return v


def _build_sum(p: PSum, b: dict[str, object], sem: Semantics | None) -> Term:
    pairs: list[tuple[Term, int]] = [
        (_build(a.pattern, b, sem), _coef(a.coef, b)) for a in p.addends
    ]
    k = _coef(p.const, b) if p.const is not None else 0
    if p.rest is not None:
        rest = b[p.rest]
        assert isinstance(rest, Term)
        pairs.append((rest, 1))
    if p.seq is not None:
        ks = b[p.seq.coef]
        ts = b[p.seq.term]
        assert isinstance(ks, list) and isinstance(ts, list)
        pairs += list(zip(ts, ks, strict=True))
    return linear(pairs, k)


def _subterm_values(t: Term, env: dict[str, int]) -> list[tuple[Term, int | str]]:
    seen: list[Term] = []
    stack = [t]
    while stack and len(seen) < 24:
        u = stack.pop()
        if u in seen or u.op in (Op.CONST, Op.VAR):
            continue
        seen.append(u)
        stack.extend(u.args)
    out: list[tuple[Term, int | str]] = []
    for u in seen:
        try:
            out.append((u, evaluate(u, env, check_bounds=False)))
        except EvaluationError:
            out.append((u, "division by zero"))
    return out


def _overflow(t: Term, env: dict[str, int], show: Callable[[Term], str] = str) -> str | None:
    """The first intermediate of ``t`` outside int64, described, or None if all fit.

    Intermediates are the prover's: each subterm, each scaled addend ``c*a`` of a sum, and
    each constant the term holds (coefficients, offsets, divisors).
    """
    values: list[tuple[str, int]] = []
    for u, v in _subterm_values(t, env):
        if not isinstance(v, int):
            return f"{show(u)} divides by zero"
        values.append((show(u), v))
        if u.op is Op.ADD:
            coefs, offset = u.arg
            values.append((f"the constant of {show(u)}", offset))
            for atom, c in zip(u.args, coefs, strict=True):
                values.append((f"the coefficient of {show(atom)}", c))
                values.append((f"{show(atom)}*{c}", c * evaluate(atom, env, check_bounds=False)))
        values += [(f"the constant {a}", a.arg) for a in u.args if a.op is Op.CONST]
    values.append((show(t), evaluate(t, env, check_bounds=False)))
    for what, v in values:
        if not INT64_MIN <= v <= INT64_MAX:
            return f"{what} = {v}"
    return None


def _value_lines(t: Term, env: dict[str, int], show: _Shown) -> list[str]:
    """``    u = value`` for the subterms of ``t``, shown over the rule's names, once each."""
    out: list[str] = []
    for u, v in _subterm_values(t, env):
        line = f"    {show(u)} = {v}"
        if line not in out:
            out.append(line)
    return out


def replay(
    rule: Rule, semantics: Semantics | None, arity: int, values: dict[str, int], *, int64: bool
) -> Replay:
    """Apply ``rule`` concretely to the term its pattern describes under ``values``."""
    b, env = _bindings(rule, arity, values)
    try:
        lhs = _build(rule.pattern, b, semantics)
    except (QuoremError, KeyError, AssertionError) as exc:
        return Replay(False, f"cannot build the pattern's term: {exc}", [])
    # The rule is being proven: it is applied whatever its record says.
    compiled = [
        c for c in RuleSet([rule], allow_unproven=True).compiled if c.semantics is semantics
    ]
    out = compiled[0].apply(lhs) if compiled else None
    show = _Shown(rule, values)
    lines = [f"where:    {note}" for note in name_notes(rule, arity, values)]
    lines.append(f"input:    {show(lhs)}")
    if out is None:
        return Replay(False, "the engine does not apply the rule to this term", lines, term=lhs)
    lines.append(f"rewrite:  {show(out)}")
    try:
        want = evaluate(lhs, env, check_bounds=False)
    except EvaluationError:
        return Replay(False, "the input is undefined at this point", lines, term=lhs)
    lines += _value_lines(lhs, env, show)
    try:
        got = evaluate(out, env, check_bounds=False)
    except EvaluationError:
        lines.append("  the rewrite divides by zero where the input is defined")
        return Replay(True, "", lines, "division by zero", term=lhs)
    lines += _value_lines(out, env, show)
    lines.append(f"  input value {want}, rewrite value {got}")
    if got != want:
        lines.append("  MISMATCH, confirmed by the engine")
        return Replay(True, "", lines, "mismatch", term=lhs)
    if int64 and _overflow(lhs, env) is None:
        wide = _overflow(out, env, show)
        if wide is not None:
            lines.append(
                "  OVERFLOW, confirmed by the engine: the values agree, but the rewrite "
                "computes a value outside int64 where the input does not: " + wide
            )
            return Replay(True, "", lines, "overflow", term=lhs)
    return Replay(False, "the engine's values agree at this point", lines, term=lhs)
