"""Exceptions raised by quorem, each naming where and why something went wrong."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = [
    "DivisionByZeroError",
    "EvaluationError",
    "IncompleteRewriteWarning",
    "ParseError",
    "QuoremError",
    "RuleError",
    "RuleErrors",
    "TermError",
    "UnprovenRule",
    "UnprovenRuleError",
    "UnprovenRuleWarning",
    "VariableClashError",
    "ZeroDivisorParseError",
]


class QuoremError(Exception):
    """Base class of every error quorem raises on bad input."""


class ParseError(QuoremError):
    """Text that is not a well-formed expression.

    Attributes:
        source: name of the text's origin (a file name, or ``"<expr>"``).
        line: 1-based line of the offending token.
        col: 1-based column of the offending token.
        reason: what is wrong, in one sentence.

    """

    def __init__(self, reason: str, line: int, col: int, source: str = "<expr>") -> None:
        self.source = source
        self.line = line
        self.col = col
        self.reason = reason
        super().__init__(f"{source}:{line}:{col}: {reason}")


class RuleError(ParseError):
    """A rule file that is malformed or inconsistent (``file:line:col: reason``)."""


class RuleErrors(RuleError):  # noqa: N818  (several RuleErrors: the plural says so)
    """Several problems in rules files, each a :class:`RuleError`, in file order.

    Its message is theirs, one ``file:line:col: reason`` per line; its ``source``,
    ``line``, ``col`` and ``reason`` are the first one's.

    Attributes:
        errors: the problems, in file order.

    """

    def __init__(self, errors: list[RuleError]) -> None:
        first = errors[0]
        super().__init__(first.reason, first.line, first.col, first.source)
        self.errors = list(errors)
        self.args = ("\n".join(str(e) for e in errors),)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


@dataclasses.dataclass(frozen=True, slots=True)
class UnprovenRule:
    """A rule instance not proven for its semantics: who, where, what its record says.

    ``status`` is ``unproven`` (no record speaks for it), ``stale`` (the record is of
    another prover or an older text), ``unknown`` or ``unsound``; ``why`` says which
    record and why; ``command`` proves it.
    """

    name: str
    location: str
    semantics: str
    status: str
    why: str
    command: str

    def __str__(self) -> str:
        return (
            f"{self.location}: rule {self.name} [{self.semantics}]: {self.status} "
            f"({self.why}); prove it with: {self.command}"
        )


class UnprovenRuleError(QuoremError):
    """Rules not proven for the semantics in use were about to be applied.

    quorem applies only proven rules. Prove them with ``quorem verify FILE`` (which
    writes ``FILE.proof.json``), or opt in with ``allow_unproven=True`` (the command
    line's ``--allow-unproven``). ``rules`` lists each rule instance refused.
    """

    def __init__(self, rules: Sequence[UnprovenRule]) -> None:
        self.rules = tuple(rules)
        # One line per rule (its semantics together), at most _SHOWN of them.
        by_rule: dict[tuple[str, str], list[UnprovenRule]] = {}
        for r in self.rules:
            by_rule.setdefault((r.location, r.name), []).append(r)
        n = len(by_rule)
        lines = [
            f"{n} rule{'s' if n != 1 else ''} not proven for the semantics in use (quorem "
            "applies only proven rules; prove them, or pass --allow-unproven / "
            "allow_unproven=True to apply them anyway):"
        ]
        for group in list(by_rule.values())[:_SHOWN]:
            first = group[0]
            sems = "/".join(r.semantics for r in group)
            statuses = ", ".join(dict.fromkeys(r.status for r in group))
            whys = "; ".join(dict.fromkeys(r.why for r in group))
            lines.append(
                f"  {first.location}: rule {first.name} [{sems}]: {statuses} ({whys}); "
                f"prove it with: {first.command}"
            )
        if n > _SHOWN:
            commands = ", ".join(dict.fromkeys(g[0].command for g in by_rule.values()))
            lines.append(f"  ... and {n - _SHOWN} more (prove them with: {commands})")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> tuple[type[UnprovenRuleError], tuple[tuple[UnprovenRule, ...]]]:
        # Rebuilt from the rules, not the message (a worker process raises it to its parent).
        return (type(self), (self.rules,))


_SHOWN = 12


class UnprovenRuleWarning(UserWarning):
    """A result was rewritten by rules not proven, applied because the caller allowed it.

    ``rules`` names them.
    """

    def __init__(self, message: str, rules: Sequence[str]) -> None:
        super().__init__(message)
        self.rules = tuple(rules)


class TermError(QuoremError):
    """A term that cannot be built, e.g. a division by the constant zero."""


class DivisionByZeroError(TermError):
    """A division or remainder whose divisor is 0 at every point of the variables' box.

    Raised for a divisor that is the constant 0 when a term is built (``div(x, 0)``), and
    by ``simplify`` for a divisor it proves 0 everywhere (``w < w``, or ``w < 0 and
    0 < w``): such a term has no value at any point. The message reads
    ``division by zero in (x) // 0``, as the parser's does (which raises
    :class:`ZeroDivisorParseError`, both a :class:`ParseError` and one of these).
    """


class ZeroDivisorParseError(ParseError, DivisionByZeroError):
    """Text dividing by a divisor that is 0 at every point (``x // 0``, ``x % (w < w)``).

    A :class:`ParseError` (``file:line:col: division by zero in (x) // 0``) and a
    :class:`DivisionByZeroError`: ``except DivisionByZeroError`` catches a zero divisor
    wherever it is found.
    """


class EvaluationError(QuoremError):
    """A term that has no value at a point, e.g. a division by zero there."""


class IncompleteRewriteWarning(RuntimeWarning):
    """``quorem.simplify`` stopped before a fixed point; its result is sound but not normal.

    Issued when the step budget ran out, the rules grew the term or its integers past
    what the input justifies, or the rules led back to a term being rewritten (a cycle).
    Turn it into an exception with ``warnings.simplefilter("error",
    IncompleteRewriteWarning)``; :func:`quorem.explain` reports the same as its ``reason``.

    Attributes:
        reason: the :class:`quorem.StopReason` value, e.g. ``"step limit"``.
        culprits: the rules to blame (those in the cycle, or the busiest ones), as
            :func:`quorem.explain` reports them; named in the message too.

    """

    def __init__(self, message: str, reason: str, culprits: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.culprits = culprits
        super().__init__(message)


class VariableClashError(TermError):
    """A term holding two variables with one name and different bounds.

    Such a term prints as text that parses back as another term (``x - x`` is ``0``), so
    it is refused where its meaning matters: simplifying, explaining, emitting.

    Attributes:
        name: the variable's name.
        bounds: the two ``(lo, hi)`` bounds, ``None`` for an unbounded side.

    """

    def __init__(
        self, name: str, first: tuple[int | None, int | None], second: tuple[int | None, int | None]
    ) -> None:
        self.name = name
        self.bounds = (first, second)
        shown = " and ".join(
            f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            for lo, hi in self.bounds
        )
        super().__init__(
            f"variable {name} appears with two ranges, {shown}: one name must be one "
            "variable (rename one, or give both the same bounds)"
        )
