"""The public API of quorem: parse, build, simplify, explain, evaluate and print terms."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, ParamSpec, TypeVar

from . import evaluation as _evaluate
from . import printer as _printer
from . import term as _term
from .bounds import BoundsError, bounds_of
from .build import parse_term
from .errors import (
    DivisionByZeroError,
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
from .ops import Op, Semantics
from .rewrite import (
    RewriteResult,
    Step,
    StopReason,
    rewrite,
    rewrite_given,
    rewrite_stop,
)
from .rule import Rule
from .ruleset import RuleSet, default_ruleset
from .term import Term, check_one_name, const, var
from .walk import free_names, nodes

__all__ = [
    "BoundsError",
    "DivisionByZeroError",
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

VarBounds = Mapping[str, tuple[int | None, int | None] | str | None]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_NAMES_SHOWN: Final = 6
_ABSENT: Final = object()  # an argument not given (None may be given)
_TEXT_SHOWN: Final = 200  # characters of text quoted in a suggested call, else "text"


# ------------------------------------------------------------------ arguments that are terms
def _parse_call(text: str) -> str:
    """The ``quorem.parse(...)`` call that makes a term of ``text``, bounds left to fill in."""
    try:
        names = sorted(free_names(parse_term(text)))
    except (QuoremError, RecursionError):
        names = []
    shown = [f"{n!r}: (lo, hi)" for n in names[:_NAMES_SHOWN]]
    if len(names) > _NAMES_SHOWN:
        shown.append("...")
    bounds = f", {{{', '.join(shown)}}}" if names else ""
    shown_text = repr(text) if len(text) <= _TEXT_SHOWN else "text"
    return f"quorem.parse({shown_text}{bounds})"


def _not_a_term(function: str, value: object, first: bool = True, more: bool = False) -> TypeError:
    """The TypeError for ``value`` given to ``quorem.<function>`` where a Term is expected.

    For text it shows the ``quorem.parse`` call to make (inside the call to ``function``
    when ``value`` is its first argument; ``more``: the call has other arguments); for an
    int, the ``quorem.const`` call.
    """
    where = f"quorem.{function}"
    if isinstance(value, str):
        made = _parse_call(value)
        call = f"{where}({made}{', ...' if more else ''})" if first else made
        return TypeError(f"{where} expects a Term, not a str; parse it first: {call}")
    if isinstance(value, int) and not isinstance(value, bool):
        return TypeError(
            f"{where} expects a Term, not an int; make a constant with quorem.const({value})"
        )
    return TypeError(
        f"{where} expects a Term, not {type(value).__name__}; make one with "
        "quorem.parse(text, vars) or quorem.var(name, lo, hi)"
    )


def _require_term(function: str, value: object, first: bool = True, more: bool = False) -> None:
    """Raise :func:`_not_a_term`'s TypeError unless ``value`` is a Term."""
    if not isinstance(value, Term):
        raise _not_a_term(function, value, first, more)


def _terms_checked(*params: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Wrap a function so that its arguments ``params`` must be Terms (see :func:`_not_a_term`).

    The wrapper keeps the function's name, docstring and signature.
    """

    def wrap(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(fn)
        order = list(signature.parameters)
        positions = {p: order.index(p) for p in params}

        @functools.wraps(fn)
        def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            given = len(args)
            for param, i in positions.items():
                value = args[i] if i < given else kwargs.get(param, _ABSENT)
                if value is not _ABSENT and not isinstance(value, Term):
                    raise _not_a_term(fn.__name__, value, i == 0, given + len(kwargs) > 1)
            return fn(*args, **kwargs)

        return checked

    return wrap


def _rules_checked(function: str, rules: object) -> None:
    """TypeError unless ``rules`` is None or a RuleSet, saying how to make one."""
    if rules is not None and not isinstance(rules, RuleSet):
        how = "quorem.RuleSet.from_files([path], with_shipped=True)"
        raise TypeError(
            f"quorem.{function}: rules must be a RuleSet, not {type(rules).__name__}; "
            f"load rules files with {how}"
        )


def _given_checked(function: str, given: object) -> None:
    """TypeError unless ``given`` is a sequence of Terms (text shows the parse to make)."""
    if isinstance(given, str):
        raise TypeError(
            f"quorem.{function}: given must be a sequence of condition Terms, not a str; "
            f"parse it first: given=[{_parse_call(given)}]"
        )
    if not isinstance(given, Sequence):
        raise TypeError(
            f"quorem.{function}: given must be a sequence of condition Terms, "
            f"not {type(given).__name__}"
        )
    for i, condition in enumerate(given):
        if not isinstance(condition, Term):
            problem = _not_a_term(function, condition, first=False)
            raise TypeError(f"given[{i}]: {problem}")


evaluate = _terms_checked("term")(_evaluate.evaluate)
count_divmod = _terms_checked("term")(_evaluate.count_divmod)
to_text = _terms_checked("term")(_printer.to_text)
div = _terms_checked("a", "b")(_term.div)
mod = _terms_checked("a", "b")(_term.mod)
ceildiv = _terms_checked("a", "b")(_term.ceildiv)
maximum = _terms_checked("a", "b")(_term.maximum)
minimum = _terms_checked("a", "b")(_term.minimum)
compare = _terms_checked("a", "b")(_term.compare)
logical_and = _terms_checked("a", "b")(_term.logical_and)
logical_or = _terms_checked("a", "b")(_term.logical_or)
logical_not = _terms_checked("t")(_term.logical_not)


def linear(pairs: Iterable[tuple[Term, int]], constant: int = 0) -> Term:
    """``sum(c*t for t, c in pairs) + constant`` as a canonical term (see ``quorem.term``).

    Each pair must be ``(Term, int)``: a TypeError names the first that is not.
    """
    listed = list(pairs)
    for i, pair in enumerate(listed):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"quorem.linear: pairs[{i}] is not a (term, coefficient) pair")
        if not isinstance(pair[0], Term):
            raise TypeError(f"pairs[{i}]: {_not_a_term('linear', pair[0], first=False)}")
    return _term.linear(listed, constant)


def sum_of(terms: Iterable[Term | int]) -> Term:
    """The sum of ``terms`` (Terms and ints) as a canonical term; text is a TypeError."""
    listed = list(terms)
    for i, t in enumerate(listed):
        if not isinstance(t, Term | int):
            raise TypeError(f"terms[{i}]: {_not_a_term('sum_of', t, first=False)}")
    return _term.sum_of(listed)


def conjunction(clauses: Iterable[Term]) -> Term:
    """The clauses joined by ``and`` (true where every clause is non-zero), canonical."""
    return _term.conjunction(_clauses("conjunction", clauses))


def disjunction(clauses: Iterable[Term]) -> Term:
    """The clauses joined by ``or`` (true where some clause is non-zero), canonical."""
    return _term.disjunction(_clauses("disjunction", clauses))


def _clauses(function: str, clauses: Iterable[Term]) -> list[Term]:
    listed = list(clauses)
    for i, c in enumerate(listed):
        if not isinstance(c, Term):
            raise TypeError(f"clauses[{i}]: {_not_a_term(function, c, first=False)}")
    return listed


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
        vars: inclusive bounds per variable name, as ``(lo, hi)`` (``None`` leaves a
            side unbounded) or as the command line's ``"LO:HI"`` text (``"0:31"``,
            ``"-5:5"``, ``":10"``, ``"0:"``: an empty side is unbounded); ``None`` for a
            name, and names not listed, are unbounded.
        semantics: what ``//`` and ``%`` mean: ``"floor"`` (Python), ``"trunc"`` (C) or
            ``"euclid"`` (Halide: the remainder is in ``[0, |b|)``).

    Raises:
        ParseError: with line and column, for text that is not a valid expression.
        BoundsError: (a :class:`QuoremError` and ValueError) naming the variable whose
            bounds cannot be read.

    """
    return parse_term(text, bounds_of(vars), _semantics(semantics))


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
    :func:`quorem.rewrite.budget_for`); if rewriting stops before a fixed point
    (budget spent, runaway growth, a cycle), the result is still sound and an
    :class:`IncompleteRewriteWarning` is issued. Use :func:`explain` to see the rules
    applied and why rewriting stopped.

    With ``given`` conditions (terms such as ``x*4 + y < 30``, true where non-zero), the
    result equals ``term`` only at the points where every condition holds: the
    variables' ranges are narrowed by the conditions while simplifying (see
    :func:`quorem.rewrite.rewrite_given`).

    Safe to call from several threads at once, on shared terms and rule sets (see
    *Threads* in :mod:`quorem.term`).

    Raises:
        VariableClashError: (a :class:`TermError`) if ``term`` holds two variables with
            one name and different bounds; the message names the variable and both bounds.
        DivisionByZeroError: (a :class:`TermError`) if a divisor is 0 at every point of
            the variables' box (``x // (w < w)``): the term has no value anywhere.
        UnprovenRuleError: if ``rules`` holds a rule not proven for the semantics in use
            and does not allow unproven rules (see :class:`RuleSet`).

    """
    _check_arguments("simplify", term, rules, given)
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
    _check_arguments("explain", term, rules, given)
    ruleset = default_ruleset() if rules is None else rules
    if given:
        _check_names(term, given)
        return rewrite_given(term, ruleset, given, max_steps=max_steps, trace=True)
    check_one_name(term)
    return rewrite(term, ruleset, max_steps=max_steps, trace=True)


def _check_arguments(function: str, term: object, rules: object, given: object) -> None:
    """TypeError for a term, rule set or conditions of the wrong type (see _not_a_term)."""
    _require_term(function, term, more=rules is not None or bool(given))
    _rules_checked(function, rules)
    _given_checked(function, given)


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

    See :func:`quorem.codegen.emit`: parameters in order (default: the variables,
    sorted), ``int64_t`` in C and CUDA with ``int32_t`` inside where every step fits,
    floor division lowered to the target's by proven rules; ``name`` (default
    ``quorem_index``) and the parameters must be identifiers ``lang`` can use, else an
    error names them. Equal to ``term`` at every point of its variables' bounds where
    ``term`` has a value.
    """
    from .codegen import emit as emit_code  # noqa: PLC0415

    _require_term("emit", term, more=params is not None)
    return emit_code(term, params, lang, name)


def to_sympy(term: Term) -> Any:
    """``term`` as a SymPy expression (needs SymPy; see :mod:`quorem.sympy_interop`)."""
    from .sympy_interop import to_sympy as convert  # noqa: PLC0415

    _require_term("to_sympy", term)
    return convert(term)


def from_sympy(expr: Any, bounds: VarBounds | None = None) -> Term:
    """The term of a SymPy integer expression, with ``bounds`` for its symbols.

    ``bounds`` takes the forms :func:`parse`'s ``vars`` does (``(lo, hi)`` or ``"LO:HI"``).
    """
    from .sympy_interop import from_sympy as convert  # noqa: PLC0415

    return convert(expr, bounds_of(bounds))
