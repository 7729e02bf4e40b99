"""The public API of quorem: parse, build, simplify, explain, evaluate and print terms."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from quorem.engine.build import parse_term
from quorem.engine.errors import (
    EvaluationError,
    IncompleteRewriteWarning,
    ParseError,
    QuoremError,
    RuleError,
    RuleErrors,
    TermError,
    UnprovenRuleError,
    UnprovenRuleWarning,
    VariableClashError,
)
from quorem.engine.evaluate import count_divmod, evaluate
from quorem.engine.ops import Op, Semantics
from quorem.engine.printer import to_text
from quorem.engine.rewrite import (
    RewriteResult,
    Step,
    StopReason,
    rewrite,
    rewrite_given,
    rewrite_stop,
)
from quorem.engine.rule import Rule
from quorem.engine.ruleset import RuleSet, default_ruleset
from quorem.engine.term import (
    Term,
    ceildiv,
    check_one_name,
    compare,
    conjunction,
    const,
    disjunction,
    div,
    linear,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    sum_of,
    var,
)
from quorem.engine.walk import nodes

__all__ = [
    "EvaluationError",
    "IncompleteRewriteWarning",
    "Op",
    "ParseError",
    "QuoremError",
    "RewriteResult",
    "Rule",
    "RuleError",
    "RuleErrors",
    "RuleSet",
    "Semantics",
    "Step",
    "StopReason",
    "Term",
    "TermError",
    "UnprovenRuleError",
    "UnprovenRuleWarning",
    "VariableClashError",
    "ceildiv",
    "compare",
    "conjunction",
    "const",
    "count_divmod",
    "default_ruleset",
    "disjunction",
    "div",
    "emit",
    "evaluate",
    "explain",
    "from_sympy",
    "linear",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "mod",
    "parse",
    "simplify",
    "sum_of",
    "to_sympy",
    "to_text",
    "var",
]

VarBounds = Mapping[str, tuple[int | None, int | None]]


def _semantics(semantics: Semantics | str) -> Semantics:
    if isinstance(semantics, Semantics):
        return semantics
    try:
        return Semantics(semantics)
    except ValueError:
        raise QuoremError(
            f"unknown semantics {semantics!r}: use 'floor', 'trunc' or 'euclid'"
        ) from None


def parse(text: str, vars: VarBounds | None = None, semantics: Semantics | str = "floor") -> Term:
    """Parse expression text into a canonical term.

    Args:
        text: Python-like integer expression: ``+ - * // %``, unary minus, parentheses,
            ``max``, ``min``, comparisons, and the explicit ``floordiv``/``floormod``,
            ``truncdiv``/``truncmod``, ``eucliddiv``/``euclidmod`` and ``ceildiv``.
        vars: inclusive bounds ``(lo, hi)`` per variable name; ``None`` leaves a side
            unbounded, and names not listed are unbounded.
        semantics: what ``//`` and ``%`` mean: ``"floor"`` (Python), ``"trunc"`` (C) or
            ``"euclid"`` (Halide: the remainder is in ``[0, |b|)``).

    Raises:
        ParseError: with line and column, for text that is not a valid expression.

    """
    return parse_term(text, vars or {}, _semantics(semantics))


def simplify(
    term: Term,
    rules: RuleSet | None = None,
    *,
    max_steps: int | None = None,
    given: Sequence[Term] = (),
) -> Term:
    """Simplify ``term`` with ``rules`` (default: the shipped rules) to a fixed point.

    The result equals ``term`` at every point of the variables' ranges where ``term`` is
    defined. The work is bounded by what the input justifies (``max_steps`` rule
    applications, default relative to the input's size; see
    :func:`quorem.engine.rewrite.budget_for`); if rewriting stops before a fixed point
    (budget spent, runaway growth, a cycle), the result is still sound and an
    :class:`IncompleteRewriteWarning` is issued. Use :func:`explain` to see the rules
    applied and why rewriting stopped.

    With ``given`` conditions (terms such as ``x*4 + y < 30``, true where non-zero), the
    result equals ``term`` only at the points where every condition holds: the
    variables' ranges are narrowed by the conditions while simplifying (see
    :func:`quorem.engine.rewrite.rewrite_given`).

    Safe to call from several threads at once, on shared terms and rule sets (see
    *Threads* in :mod:`quorem.engine.term`).

    Raises:
        VariableClashError: (a :class:`TermError`) if ``term`` holds two variables with
            one name and different bounds; the message names the variable and both bounds.

    """
    ruleset = default_ruleset() if rules is None else rules
    if given:
        _check_names(term, given)
        found = rewrite_given(term, ruleset, given, max_steps=max_steps)
        result, reason = found.term, found.reason
        _warn_unproven(found.unproven_rules)
    elif ruleset.unproven_names:
        # Allowed unproven rules: the result must say whether they touched it.
        check_one_name(term)
        found = rewrite(term, ruleset, max_steps=max_steps)
        result, reason = found.term, found.reason
        _warn_unproven(found.unproven_rules)
    else:
        check_one_name(term)
        result, reason = rewrite_stop(term, ruleset, max_steps=max_steps)
    if reason is not StopReason.FIXED_POINT:
        # Rare, so the rules to blame are found by running again with the trace on
        # (rewriting is deterministic) rather than by tracing every call.
        traced = (
            rewrite_given(term, ruleset, given, max_steps=max_steps, trace=True)
            if given
            else rewrite(term, ruleset, max_steps=max_steps, trace=True)
        )
        blame = f"; rules to blame: {', '.join(traced.culprits)}" if traced.culprits else ""
        warnings.warn(
            IncompleteRewriteWarning(
                f"simplify stopped before a fixed point ({reason.value}{blame}); "
                "the result is sound but may not be fully simplified",
                reason.value,
                traced.culprits,
            ),
            stacklevel=2,
        )
    return result


def _warn_unproven(names: Sequence[str]) -> None:
    """An UnprovenRuleWarning naming the unproven rules a result was rewritten by."""
    if names:
        warnings.warn(
            UnprovenRuleWarning(
                f"the result was rewritten by rules that are not proven: {', '.join(names)} "
                "(applied because the rule set allows unproven rules)",
                names,
            ),
            stacklevel=3,
        )


def explain(
    term: Term,
    rules: RuleSet | None = None,
    *,
    max_steps: int | None = None,
    given: Sequence[Term] = (),
) -> RewriteResult:
    """Simplify ``term`` and return the full result: rules fired in order, counts, stop reason.

    Never warns: the stop reason is the result's ``reason``. With ``given``, as
    :func:`simplify`: the result's ``given`` says under which conditions it equals
    ``term``. Raises VariableClashError as :func:`simplify` does, and is as safe to call
    from several threads.
    """
    ruleset = default_ruleset() if rules is None else rules
    if given:
        _check_names(term, given)
        return rewrite_given(term, ruleset, given, max_steps=max_steps, trace=True)
    check_one_name(term)
    return rewrite(term, ruleset, max_steps=max_steps, trace=True)


def _check_names(term: Term, given: Sequence[Term]) -> None:
    """VariableClashError if the term and its conditions use one name for two variables."""
    seen: dict[str, tuple[int | None, int | None]] = {}
    for t in (term, *given):
        if not isinstance(t, Term):
            raise TypeError(f"a condition must be a term, not {type(t).__name__}")
        check_one_name(t)
        for n in nodes(t):
            if n.op is Op.VAR:
                name, lo, hi = n.arg
                other = seen.setdefault(name, (lo, hi))
                if other != (lo, hi):
                    raise VariableClashError(name, other, (lo, hi))


def emit(
    term: Term, params: list[str] | None = None, lang: str = "c", name: str = "quorem_index"
) -> str:
    """Source of a C, CUDA or Python function ``name(params...)`` computing ``term``.

    See :func:`quorem.engine.emit.emit`: parameters in order (default: the variables,
    sorted), ``int64_t`` in C and CUDA with ``int32_t`` inside where every step fits,
    floor division lowered to the target's by proven rules; ``name`` (default
    ``quorem_index``) and the parameters must be identifiers ``lang`` can use, else an
    error names them. Equal to ``term`` at every point of its variables' bounds where
    ``term`` has a value.
    """
    from quorem.engine.emit import emit as emit_code  # noqa: PLC0415

    return emit_code(term, params, lang, name)


def to_sympy(term: Term) -> Any:
    """``term`` as a SymPy expression (needs SymPy; see :mod:`quorem.engine.sympy_interop`)."""
    from quorem.engine.sympy_interop import to_sympy as convert  # noqa: PLC0415

    return convert(term)


def from_sympy(expr: Any, bounds: VarBounds | None = None) -> Term:
    """The term of a SymPy integer expression, with ``bounds`` for its symbols."""
    from quorem.engine.sympy_interop import from_sympy as convert  # noqa: PLC0415

    return convert(expr, bounds)
