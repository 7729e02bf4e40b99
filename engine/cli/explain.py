"""How a rewrite is reported on the command line.

The ``--explain`` lines (each rule applied, counts, why it stopped), and the warning for a
rewrite that stopped before a fixed point.
"""

from __future__ import annotations

from typing import Final, TextIO

from ..api import RewriteResult, Semantics, StopReason, count_divmod, to_text

__all__ = ["explain_lines", "warn_if_not_normal"]

_STOP_WARNING: Final = {
    StopReason.STEP_LIMIT: "the step budget ran out",
    StopReason.SIZE_LIMIT: "the rules grew the term or its integers past what the input justifies",
    StopReason.CYCLE: "the rules led back to a term being rewritten, which was kept as it was",
}
# How explain_lines introduces RewriteResult.culprits, per stop reason.
_CULPRITS: Final = {
    StopReason.STEP_LIMIT: "rules that used most of the budget",
    StopReason.SIZE_LIMIT: "rules that grew the term most often",
    StopReason.CYCLE: "rules in the cycle",
}


def explain_lines(
    result: RewriteResult, semantics: Semantics, ops_before: int | None = None
) -> list[str]:
    """Describe a traced rewrite: each rule application in order, counts, stop reason.

    Terms are printed with ``to_text(term, semantics)``; ``ops_before`` (the input's
    division count), when given, adds an ``ops before -> after`` line.
    """
    lines: list[str] = []
    if result.trace:
        lines.append("rules applied, in order:")
        width = len(str(len(result.trace)))
        for i, step in enumerate(result.trace, 1):
            before = to_text(step.before, semantics)
            after = to_text(step.after, semantics)
            lines.append(f"  {i:>{width}}. {step.rule}: {before} -> {after}")
    elif result.steps:
        lines.append(f"rules applied: {result.steps} (not traced)")
    else:
        lines.append("rules applied: none")
    if result.counts:
        lines.append("rule counts:")
        width = max(len(name) for name in result.counts)
        lines.extend(f"  {name:<{width}}  {n}" for name, n in result.counts.items())
    if ops_before is not None:
        lines.append(
            f"ops: {ops_before} -> {count_divmod(result.term)}  (//, % and division functions)"
        )
    plural = "" if result.steps == 1 else "s"
    lines.append(f"stop reason: {result.reason.value} after {result.steps} step{plural}")
    if result.culprits:
        lines.append(f"{_CULPRITS[result.reason]}: {', '.join(result.culprits)}")
    return lines


def warn_if_not_normal(result: RewriteResult, where: str, err: TextIO) -> None:
    """Warn on ``err`` unless rewriting reached a fixed point."""
    if result.reason is StopReason.FIXED_POINT:
        return
    why = _STOP_WARNING.get(result.reason, "")
    blame = f"; rules: {', '.join(result.culprits)}" if result.culprits else ""
    err.write(
        f"quorem simplify: warning: {where}rewriting stopped ({result.reason.value}: {why}{blame});"
        " the result is sound but may not be fully simplified\n"
    )
