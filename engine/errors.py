"""Exceptions raised by quorem, each naming where and why something went wrong."""

from __future__ import annotations

__all__ = [
    "DivisionByZeroError",
    "EvaluationError",
    "IncompleteRewriteWarning",
    "ParseError",
    "QuoremError",
    "RuleError",
    "RuleErrors",
    "TermError",
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
