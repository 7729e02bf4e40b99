"""The ``quorem`` command-line tool: simplify expressions one at a time or in batches.

Subcommands:

* ``quorem simplify EXPR [--var NAME=LO:HI ...] [--semantics floor|trunc|euclid] [--explain]``
* ``quorem simplify --batch FILE.jsonl`` (``-`` reads standard input)
* ``quorem demo``: the worked example, simplified and explained
* ``quorem rules [FILE ...] [--json]``: the shipped rules, or those of rules files

``simplify``, ``emit``, ``rules`` and ``map simplify`` take ``--rules FILE`` (repeatable:
the files' rules run before the shipped ones) and ``--only-rules`` (the files' rules
alone); see :mod:`quorem.cli.rules_options`.

Exit status: 0 on success; 1 a negative finding (some lines of a batch had errors, the
demo's result is off, a --validate step is wrong); 2 for usage and input errors (a bad
rules file among them). Errors are printed as ``quorem COMMAND: error: <message>`` (``quorem
simplify: error: ...``), never as tracebacks.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TextIO

from quorem.api import (
    ParseError,
    QuoremError,
    RewriteResult,
    Semantics,
    StopReason,
    Term,
    count_divmod,
    default_ruleset,
    parse,
    to_text,
)
from quorem.bounds import quote as _quote
from quorem.bounds import range_of_text
from quorem.cli.args import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    positive,
    silence_stdout,
)
from quorem.cli.coverage import add_coverage_parser
from quorem.cli.hlo import add_hlo_parser
from quorem.cli.map import add_map_parser
from quorem.cli.rules_options import add_rules_options, ruleset_from_args, unproven_note
from quorem.codegen import DEFAULT_NAME, LANGUAGES, emit
from quorem.errors import RuleErrors, UnprovenRuleError
from quorem.printer import int_text
from quorem.rewrite import DEFAULT_MAX_STEPS, rewrite, rewrite_given
from quorem.rule import Rule
from quorem.ruleset import RuleSet, instance_problem
from quorem.syntax import MAX_DIGITS, RESERVED, parse_int
from quorem.walk import free_names

__all__ = ["main", "parse_var"]

Bounds = dict[str, tuple[int | None, int | None]]

EXIT_OK: Final = 0
EXIT_LINE_ERRORS: Final = 1
EXIT_USAGE: Final = 2

DEMO_EXPR: Final = "((R3*8 + R4*4 + R2)//8)*8 + (R3*8 + R4*4 + R2)%8"
DEMO_VARS: Final[Mapping[str, tuple[int, int]]] = {"R3": (0, 3), "R4": (0, 1), "R2": (0, 3)}
DEMO_EXPECTED: Final = "R2 + R3*8 + R4*4"

_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NOT_NAMES: Final = RESERVED | {"and", "or", "not"}
# A JSON string, or a number outside strings (group 1, and group 2 empty for an integer).
_JSON_TOKEN_RE: Final = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?[0-9]+)((?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
)
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
_CARET_WINDOW: Final = 60
_SHOW_LIMIT: Final = 60


class CliError(Exception):
    """A usage or input error: printed as ``quorem COMMAND: error: <message>``, exit status 2."""


# ------------------------------------------------------------------------ bounds syntax
def _check_range(name: str, lo: int | None, hi: int | None) -> None:
    """Raise ValueError if ``[lo, hi]`` is empty."""
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"variable {name} has an empty range: {_show_int(lo)} > {_show_int(hi)}")


def _show_int(value: int) -> str:
    """``value`` for a message: in full when short, else its ends and its length."""
    text = int_text(value)
    if len(text) <= _SHOW_LIMIT:
        return text
    return f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def _is_name(text: str) -> bool:
    """Whether ``text`` can name a variable in an expression (ASCII, not a keyword)."""
    return _NAME_RE.fullmatch(text) is not None and text not in _NOT_NAMES


def parse_var(text: str) -> tuple[str, int | None, int | None]:
    """Parse a ``--var`` value ``NAME=LO:HI`` into ``(name, lo, hi)``.

    Either bound may be empty (unbounded on that side) and may be negative. The range is
    inclusive and must not be empty. Raises ``argparse.ArgumentTypeError`` with a
    message quoting the value, so argparse names the ``--var`` option.
    """
    option = _quote(text)
    name, eq, bounds = text.partition("=")
    name = name.strip()
    if not eq or ":" not in bounds:
        raise argparse.ArgumentTypeError(
            f"{option} is not NAME=LO:HI (e.g. x=0:31, x=-5:5, x=:10, x=0:)"
        )
    if not _is_name(name):
        raise argparse.ArgumentTypeError(f"{option}: {_quote(name)} is not a variable name")
    try:
        lo, hi = range_of_text(bounds)
        _check_range(name, lo, hi)
    except ValueError as exc:  # a BoundsError too
        raise argparse.ArgumentTypeError(f"{option}: {exc}") from None
    return name, lo, hi


def _bounds_of(specs: Iterable[tuple[str, int | None, int | None]]) -> Bounds:
    """Collect the bounds named by ``--var`` options; a name given twice is a CliError."""
    bounds: Bounds = {}
    for name, lo, hi in specs:
        if name in bounds:
            raise CliError(f"argument --var: variable {name} is given twice")
        bounds[name] = (lo, hi)
    return bounds


# ------------------------------------------------------------------------------ output
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


def _warn_if_not_normal(result: RewriteResult, where: str, err: TextIO) -> None:
    """Warn on ``err`` unless rewriting reached a fixed point."""
    if result.reason is StopReason.FIXED_POINT:
        return
    why = _STOP_WARNING.get(result.reason, "")
    blame = f"; rules: {', '.join(result.culprits)}" if result.culprits else ""
    err.write(
        f"quorem simplify: warning: {where}rewriting stopped ({result.reason.value}: {why}{blame});"
        " the result is sound but may not be fully simplified\n"
    )


def _caret(text: str, line: int, col: int) -> list[str]:
    """Show the source line of a parse error with a caret under column ``col``."""
    lines = text.splitlines() or [""]
    if not 1 <= line <= len(lines):
        return []
    src = lines[line - 1].expandtabs(1)
    start = max(0, col - 1 - _CARET_WINDOW)
    shown = src[start : col - 1 + _CARET_WINDOW]
    prefix = "..." if start else ""
    suffix = "..." if start + len(shown) < len(src) else ""
    pad = len(prefix) + (col - 1 - start)
    return [f"  {prefix}{shown}{suffix}", "  " + " " * pad + "^"]


# ----------------------------------------------------------------------------- simplify
def _parse_expr(text: str, bounds: Bounds, semantics: Semantics) -> Term:
    """Parse ``text``, turning a ParseError into a CliError that shows where it is."""
    try:
        return parse(text, bounds, semantics)
    except ParseError as exc:
        detail = "\n".join(_caret(text, exc.line, exc.col))
        raise CliError(f"{exc}\n{detail}" if detail else str(exc)) from None


def cmd_simplify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem simplify``: one expression (``EXPR``) or a batch (``--batch FILE``)."""
    semantics = Semantics(args.semantics)
    if args.batch is not None:
        if args.expr is not None or args.var or args.validate or args.given:
            raise CliError(
                "--batch takes no EXPR, --var, --given or --validate (they are per line)"
            )
        ruleset = ruleset_from_args(args)
        return _run_batch_source(
            args.batch,
            semantics,
            args.max_steps,
            out,
            err,
            ruleset=ruleset,
            explain=args.explain,
            jobs=args.jobs,
        )
    if args.jobs != 1:
        raise CliError("--jobs applies to --batch (one expression is simplified in-process)")
    ruleset = ruleset_from_args(args)
    if args.expr is None:
        raise CliError("give an expression to simplify, or --batch FILE (try: quorem demo)")
    bounds = _bounds_of(args.var)
    term = _parse_expr(args.expr, bounds, semantics)
    unused = sorted(set(bounds) - free_names(term))
    if unused:
        err.write(f"quorem simplify: warning: --var {', '.join(unused)}: not in the expression\n")
    given = [_parse_expr(text, bounds, semantics) for text in args.given]
    tracing = args.explain or args.validate
    result = rewrite_given(term, ruleset, given, max_steps=args.max_steps, trace=tracing)
    err.write(unproven_note("simplify", result.unproven_rules))
    if result.given_never_hold:
        err.write("quorem simplify: warning: the --given conditions can never hold together\n")
    out.write(to_text(result.term, semantics) + "\n")
    if args.explain:
        out.write("\n" + "\n".join(explain_lines(result, semantics, count_divmod(term))) + "\n")
    _warn_if_not_normal(result, "", err)
    if args.validate:
        return _validate(result, semantics, out)
    return EXIT_OK


def _validate(result: RewriteResult, semantics: Semantics, out: TextIO) -> int:
    """Check each step of ``result``'s trace with Z3; report the first that is not valid."""
    try:
        from quorem.verify.validate import validate_trace  # noqa: PLC0415  (optional Z3)
    except ImportError as exc:
        raise CliError(
            f"--validate needs z3-solver ({exc}): pip install 'quorem[verify]'"
        ) from None
    checks = validate_trace(result.trace)
    for check in checks:
        if check.verdict != "valid":
            step = check.step
            before = to_text(step.before, semantics)
            after = to_text(step.after, semantics)
            out.write(f"validation: step {step.rule}: {before} -> {after}: {check.verdict}\n")
            if check.counterexample is not None:
                point = ", ".join(f"{k} = {v}" for k, v in check.counterexample.items())
                out.write(f"  counterexample: {point}\n")
            return EXIT_LINE_ERRORS
    out.write(f"validated: {len(checks)} rewrite steps checked with Z3, all valid\n")
    return EXIT_OK


# -------------------------------------------------------------------------------- batch
@dataclasses.dataclass(frozen=True, slots=True)
class BatchJob:
    """One valid batch line: its id, parsed term and semantics."""

    id: str | None
    term: Term
    semantics: Semantics
    given: tuple[Term, ...] = ()


class LineError(Exception):
    """Why one batch line cannot be processed (the message names no line number)."""


def _show(value: object) -> str:
    """Render a bad value as short JSON for an error message."""
    try:
        text = json.dumps(value)
    except (ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 3] + "..."


def _json_bounds(name: object, value: object) -> tuple[int | None, int | None]:
    """Return the ``[lo, hi]`` of one ``vars`` entry; ``null`` anywhere means unbounded."""
    if not isinstance(name, str) or not _is_name(name):
        raise LineError(f"vars: {_show(name)} is not a variable name")
    if value is None:
        return None, None
    if not isinstance(value, list) or len(value) != 2:
        raise LineError(f"vars.{name}: expected [lo, hi], got {_show(value)}")
    for side in value:
        if side is not None and (isinstance(side, bool) or not isinstance(side, int)):
            raise LineError(f"vars.{name}: bound {_show(side)} is not an integer or null")
    lo, hi = value
    try:
        _check_range(name, lo, hi)
    except ValueError as exc:
        raise LineError(f"vars.{name}: {exc}") from None
    return lo, hi


def _job_of(record: object, default: Semantics) -> BatchJob:
    """Validate one decoded JSON line and parse its expression."""
    if not isinstance(record, dict):
        raise LineError(f"expected a JSON object, got {type(record).__name__}")
    ident = record.get("id")
    if ident is not None and not isinstance(ident, str):
        raise LineError(f"id must be a string, got {_show(ident)}")
    if "expr" not in record:
        raise LineError("missing key 'expr'")
    expr = record["expr"]
    if not isinstance(expr, str):
        raise LineError(f"expr must be a string, got {type(expr).__name__}")
    sem_text = record.get("semantics", default.value)
    if not isinstance(sem_text, str) or sem_text not in _SEMANTICS_NAMES:
        raise LineError(f"semantics must be 'floor', 'trunc' or 'euclid', got {_show(sem_text)}")
    raw_vars = record.get("vars")
    if raw_vars is None:
        raw_vars = {}
    if not isinstance(raw_vars, dict):
        raise LineError(f"vars must be an object of [lo, hi] pairs, got {_show(raw_vars)}")
    bounds = {name: _json_bounds(name, value) for name, value in raw_vars.items()}
    semantics = Semantics(sem_text)
    try:
        term = parse(expr, bounds, semantics)
    except ParseError as exc:
        raise LineError(f"expr at {exc.line}:{exc.col}: {exc.reason}") from None
    except QuoremError as exc:
        raise LineError(f"expr: {exc}") from None
    raw_given = record.get("given", [])
    if not isinstance(raw_given, list) or not all(isinstance(g, str) for g in raw_given):
        raise LineError(f"given must be a list of condition strings, got {_show(raw_given)}")
    given = []
    for i, text in enumerate(raw_given):
        try:
            given.append(parse(text, bounds, semantics))
        except ParseError as exc:
            raise LineError(f"given[{i}] at {exc.line}:{exc.col}: {exc.reason}") from None
        except QuoremError as exc:
            raise LineError(f"given[{i}]: {exc}") from None
    return BatchJob(ident, term, semantics, tuple(given))


class _LongIntegerError(Exception):
    """A JSON integer with more digits than expression literals may have."""


def _json_int(text: str) -> int:
    """``int`` for json.loads: decimal text, capped as expression literals are."""
    if len(text) - text.startswith("-") > MAX_DIGITS:
        raise _LongIntegerError
    return parse_int(text)


def _long_integer_error(line: str) -> LineError:
    """The LineError for the first over-long integer of ``line``, with its column."""
    for m in _JSON_TOKEN_RE.finditer(line):
        number = m.group(1)
        if number and not m.group(2) and len(number.lstrip("-")) > MAX_DIGITS:
            digits = len(number.lstrip("-"))
            return LineError(
                f"invalid JSON: an integer of {digits} digits at column {m.start(1) + 1}"
                f" (the limit is {MAX_DIGITS}; larger bounds cannot be given in JSON)"
            )
    return LineError(f"invalid JSON: an integer of more than {MAX_DIGITS} digits")


def _decode(line: str) -> object:
    """``json.loads`` with its failures turned into LineErrors."""
    try:
        return json.loads(line, parse_int=_json_int)
    except _LongIntegerError:
        raise _long_integer_error(line) from None
    except json.JSONDecodeError as exc:
        raise LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise LineError(f"invalid JSON: {exc}") from None


def _id_of(record: object) -> str | None:
    """Return the line's id when it is a string (errors report it), else None."""
    if isinstance(record, dict):
        ident = record.get("id")
        if isinstance(ident, str):
            return ident
    return None


def batch_record(
    line: str,
    lineno: int,
    default: Semantics,
    max_steps: int | None,
    err: TextIO,
    *,
    ruleset: RuleSet | None = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Process one batch line into its output object (a result, or an ``error``).

    A result has ``id, output, ops_before, ops_after, rules, counts, steps, stop_reason,
    culprits, seconds`` (and ``trace`` with ``explain``; see :func:`_simplify_job`);
    ``seconds`` times the rewrite alone. Any problem with the line gives ``{"id",
    "error"}`` whose message starts with ``line N:``. Never raises for bad input.
    ``ruleset``: the rules to use (default: the shipped rules).
    """
    record: object = None
    try:
        record = _decode(line)
        job = _job_of(record, default)
        return _simplify_job(job, lineno, max_steps, err, ruleset=ruleset, explain=explain)
    except LineError as exc:
        return {"id": _id_of(record), "error": f"line {lineno}: {exc}"}
    except UnprovenRuleError:
        raise  # the rules, not the line, are at fault: the command fails
    except Exception as exc:  # an engine bug must not end the batch
        why = f"internal error, please report it: {type(exc).__name__}: {exc}"
        return {"id": _id_of(record), "error": f"line {lineno}: {why}"}


def _simplify_job(
    job: BatchJob,
    lineno: int,
    max_steps: int | None,
    err: TextIO,
    *,
    ruleset: RuleSet | None = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Rewrite one parsed batch line and build its result object.

    ``rules`` lists the rules applied in order of first application and ``counts`` how
    often each was (they sum to ``steps``); ``stop_reason`` is a
    :class:`~quorem.rewrite.StopReason` value and ``culprits`` the rules it
    blames (empty at a fixed point). With ``explain``, ``trace`` lists every step as
    ``{"rule", "before", "after"}``, terms printed in the line's semantics.
    """
    if ruleset is None:
        ruleset = default_ruleset()  # loaded before the clock starts
    start = time.perf_counter()
    result = rewrite_given(job.term, ruleset, job.given, max_steps=max_steps, trace=explain)
    seconds = time.perf_counter() - start
    where = f"line {lineno}" + (f" (id {job.id!r})" if job.id is not None else "") + ": "
    _warn_if_not_normal(result, where, err)
    err.write(unproven_note("simplify", result.unproven_rules, where))
    obj: dict[str, Any] = {
        "id": job.id,
        "output": to_text(result.term, job.semantics),
        "ops_before": count_divmod(job.term),
        "ops_after": count_divmod(result.term),
        "rules": result.rules,
        "counts": dict(result.counts),
        "steps": result.steps,
        "stop_reason": result.reason.value,
        "culprits": list(result.culprits),
        "seconds": seconds,
    }
    if result.unproven_rules:
        obj["unproven_rules"] = list(result.unproven_rules)
    if explain:
        sem = job.semantics
        obj["trace"] = [
            {"rule": s.rule, "before": to_text(s.before, sem), "after": to_text(s.after, sem)}
            for s in result.trace
        ]
    return obj


def _lines(stream: Iterable[bytes | str]) -> Iterator[tuple[int, str | None]]:
    """Yield ``(line number, text)`` per line of ``stream``; text is None if not UTF-8."""
    for lineno, raw in enumerate(stream, 1):
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield lineno, None
                continue
        else:
            text = raw
        if lineno == 1:
            text = text.removeprefix("\ufeff")
        yield lineno, text


def batch_line(
    lineno: int,
    text: str | None,
    default: Semantics,
    max_steps: int | None,
    err: TextIO,
    *,
    ruleset: RuleSet | None = None,
    explain: bool = False,
) -> dict[str, Any] | None:
    """The output object of batch line ``lineno`` (``text`` None: not UTF-8); None if blank."""
    if text is None:
        return {"id": None, "error": f"line {lineno}: not valid UTF-8"}
    if not text.strip():
        return None
    return batch_record(text, lineno, default, max_steps, err, ruleset=ruleset, explain=explain)


def run_batch(
    stream: Iterable[bytes | str],
    default: Semantics,
    max_steps: int | None,
    out: TextIO,
    err: TextIO,
    *,
    ruleset: RuleSet | None = None,
    explain: bool = False,
    jobs: int = 1,
) -> int:
    """Simplify each JSON line of ``stream``, writing one JSON line per input line.

    Blank lines are skipped; output is flushed after each line. Returns 0 when every
    line succeeded and 1 when some had errors (each reported in its output line).
    ``ruleset`` and ``explain`` are :func:`batch_record`'s. ``jobs`` > 1 simplifies the
    lines in that many worker processes (:mod:`quorem.jobs`), with the same
    output in the same order.
    """
    if jobs > 1:
        from quorem.jobs import run_batch_in_workers  # noqa: PLC0415  (start-up)

        rules = default_ruleset() if ruleset is None else ruleset
        lines = _lines(stream)
        failed = run_batch_in_workers(
            lines, default, max_steps, out, err, ruleset=rules, explain=explain, jobs=jobs
        )
        return EXIT_LINE_ERRORS if failed else EXIT_OK
    status = EXIT_OK
    for lineno, text in _lines(stream):
        obj = batch_line(lineno, text, default, max_steps, err, ruleset=ruleset, explain=explain)
        if obj is None:
            continue
        if "error" in obj:
            status = EXIT_LINE_ERRORS
        out.write(json.dumps(obj) + "\n")
        out.flush()
    return status


def _run_batch_source(
    source: str,
    default: Semantics,
    max_steps: int | None,
    out: TextIO,
    err: TextIO,
    *,
    ruleset: RuleSet | None = None,
    explain: bool = False,
    jobs: int = 1,
) -> int:
    """Run a batch from file ``source``, or from standard input when it is ``-``."""
    opts: dict[str, Any] = {"ruleset": ruleset, "explain": explain, "jobs": jobs}
    if source == "-":
        stdin = sys.stdin
        return run_batch(getattr(stdin, "buffer", stdin), default, max_steps, out, err, **opts)
    try:
        stream = open(source, "rb")  # noqa: SIM115  (only open errors are input errors)
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
    with stream:
        return run_batch(stream, default, max_steps, out, err, **opts)


# ------------------------------------------------------------------------------ emit
def cmd_emit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem emit``: simplify EXPR, then print it as a C, CUDA or Python function."""
    bounds = _bounds_of(args.var)
    term = _parse_expr(args.expr, bounds, Semantics(args.semantics))
    if args.no_simplify:
        if args.rules:
            raise CliError("--rules and --no-simplify exclude each other")
    else:
        result = rewrite(term, ruleset_from_args(args))
        err.write(unproven_note("emit", result.unproven_rules))
        term = result.term
    missing = sorted(free_names(term) - set(bounds))
    if missing:
        raise CliError(f"{_without_var(missing)}; each becomes a parameter of {args.name}()")
    out.write(emit(term, list(bounds), args.lang, args.name))
    return EXIT_OK


def _without_var(names: Sequence[str]) -> str:
    """``variable x has no --var: add --var x=LO:HI ...``, for the ``names`` given none."""
    head = f"variable {names[0]} has" if len(names) == 1 else f"variables {', '.join(names)} have"
    options = " ".join(f"--var {n}=LO:HI" for n in names)
    return f"{head} no --var: add {options} (LO or HI may be empty for unbounded)"


# ------------------------------------------------------------------------- demo, rules
def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem demo``: simplify and explain the worked example; 1 if the result is off."""
    bounds: Bounds = dict(DEMO_VARS)
    semantics = Semantics.FLOOR
    term = parse(DEMO_EXPR, bounds, semantics)
    result = rewrite(term, default_ruleset(), trace=True)
    text = to_text(result.term, semantics)
    ranges = ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in DEMO_VARS.items())
    var_opts = " ".join(f"--var {n}={lo}:{hi}" for n, (lo, hi) in DEMO_VARS.items())
    lines = [
        "quorem demo: the worked example (floor semantics)",
        "",
        f"variables: {ranges}",
        f"input:     {DEMO_EXPR}",
        f"result:    {text}",
        f"ops:       {count_divmod(term)} -> {count_divmod(result.term)}"
        "  (//, % and division functions)",
        "",
        *explain_lines(result, semantics),
        "",
        "The same with quorem simplify:",
        f"  quorem simplify '{DEMO_EXPR}' {var_opts} --explain",
    ]
    out.write("\n".join(lines) + "\n")
    if text != DEMO_EXPECTED:
        err.write(f"quorem demo: error: expected {DEMO_EXPECTED}, got {text}\n")
        return 1
    return EXIT_OK


_SEMANTICS_NAMES: Final = frozenset(s.value for s in Semantics)


def _semantics_text(semantics: Sequence[Semantics]) -> str:
    """``floor, trunc`` for the semantics a rule is stated for, ``any`` for none."""
    return ", ".join(s.value for s in semantics) or "any"


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem rules [FILE ...]``: each rule's name, semantics, proof status, location, doc.

    The rules are those of the FILEs alone when given, else the rules ``--rules`` and
    ``--only-rules`` select (by default the shipped ones), in priority order. With
    ``--json``, one JSON object ``{"rules": [...], "count": N}``.
    """
    if args.files:
        if args.rules or args.only_rules:
            raise CliError("give rules files either as FILE arguments or with --rules, not both")
        rules = RuleSet.from_files(args.files).rules
    else:
        rules = ruleset_from_args(args).rules
    statuses = _proof_statuses(rules)
    if args.json:
        records = [_rule_record(r, statuses[r.name]) for r in rules]
        out.write(json.dumps({"rules": records, "count": len(records)}) + "\n")
        return EXIT_OK
    width = max((len(r.name) for r in rules), default=0)
    for r in rules:
        status = statuses[r.name]
        out.write(
            f"{r.name:<{width}}  {_semantics_text(r.semantics):<19}  {status:<14}  {r.location}\n"
        )
        out.write(f"  {r.doc}\n")
    out.write(
        f"{len(rules)} rules (proof status from the rules files' proof records; only proven "
        "rules are applied: quorem verify FILE proves a file and writes its record)\n"
    )
    return EXIT_OK


def _rule_record(rule: Rule, status: str) -> dict[str, Any]:
    """One rule of ``quorem rules --json``."""
    return {
        "name": rule.name,
        "semantics": [s.value for s in rule.semantics],
        "phase": rule.phase,
        "file": rule.file,
        "line": rule.line,
        "location": rule.location,
        "doc": rule.doc,
        "status": status,
    }


def _proof_statuses(rules: Sequence[Rule]) -> dict[str, str]:
    """Each rule's status as its proof record gives it: what decides whether it is applied.

    ``proven`` when proven for every semantics it states, else the worst status of one
    of them (``unsound``, ``unknown``, ``stale``, ``unproven``) with its semantics.
    """
    out: dict[str, str] = {}
    for rule in rules:
        problems = [p for s in rule.semantics or (None,) if (p := instance_problem(rule, s))]
        if not problems:
            out[rule.name] = "proven"
            continue
        worst = min(problems, key=lambda p: _STATUS_ORDER.index(p.status))
        out[rule.name] = f"{worst.status} ({worst.semantics})"
    return out


# Worst first: the status a rule is listed with when its semantics differ.
_STATUS_ORDER: Final = ("unsound", "unknown", "stale", "unproven")


# ------------------------------------------------------------------------------ parser
def _non_negative(text: str) -> int:
    """Convert an argparse value to a non-negative decimal integer."""
    if not text.isdigit() or not text.isascii():
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    return int(text)


def _version() -> str:
    """Return the installed distribution's version, or ``unknown`` when not installed."""
    # Imported here: importlib.metadata is a sizeable share of the start-up of every
    # command (quorem hlo --all is timed to its first result), and only --version uses it.
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version("quorem")
    except metadata.PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: the version looked up only when asked (see :func:`_version`)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version"
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"quorem {_version()}\n")
        parser.exit()


_SIMPLIFY_EPILOG: Final = """\
bounds:
  --var NAME=LO:HI gives an inclusive range; either side may be empty for
  unbounded (x=:10, x=0:) and negative (x=-5:5). Unlisted variables are unbounded.
  An EXPR starting with '-' goes after '--':  quorem simplify -- '-x//4'

batch (--batch FILE.jsonl, '-' for stdin), one JSON object per line:
  in:  {"id": str, "vars": {"x": [lo, hi], ...}, "expr": str, "semantics": "floor"|"trunc"|"euclid",
        "given": [str, ...]}
       (semantics defaults to --semantics; null bounds are unbounded; blank lines skipped;
       the output equals expr wherever every condition of the optional given holds)
  out: {"id", "output", "ops_before", "ops_after", "rules", "counts", "steps",
        "stop_reason", "culprits", "seconds"}, and "trace" with --explain
       ([{"rule", "before", "after"}, ...]), or {"id", "error"} for a bad line;
       ops count //, % and division functions; rules are the rules applied in order of
       first use, counts how often each was (they sum to steps); stop_reason is
       "fixed point", "step limit", "size limit" or "cycle", and culprits the rules
       blamed for a stop before a fixed point; seconds times the rewrite alone.

custom rules:
  --rules FILE (repeatable) runs the file's rules before the shipped ones;
  --only-rules runs them alone. They are not proven (quorem verify FILE proves them)
  and may not terminate: the rewriter then stops and names them (--explain, culprits).

exit status:
  0  success (for --batch: every line succeeded)
  1  --batch: some lines had errors (each reported on its output line)
  2  usage or input error (bad option, unparsable EXPR, unreadable FILE, a bad
     rules file: each of its problems as file:line:col)
"""


def build_parser() -> argparse.ArgumentParser:
    """Build the ``quorem`` argument parser with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="quorem",
        description="Simplify integer index arithmetic (// and %) with proven rules.",
        epilog="Run 'quorem demo' for a worked example, 'quorem COMMAND --help' for details.",
    )
    parser.add_argument("--version", action=_VersionAction)
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")

    simp = subs.add_parser(
        "simplify",
        help="simplify an expression, or a JSON-lines batch",
        description="Simplify EXPR (or each line of --batch FILE) and print the result, "
        "which parses back under the same semantics.",
        epilog=_SIMPLIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    simp.add_argument("expr", nargs="?", metavar="EXPR", help="expression, e.g. '(x*4 + y)//4'")
    simp.add_argument(
        "--var",
        action="append",
        default=[],
        type=parse_var,
        metavar="NAME=LO:HI",
        help="inclusive bounds of a variable (repeatable)",
    )
    simp.add_argument(
        "--semantics",
        choices=[s.value for s in Semantics],
        default=Semantics.FLOOR.value,
        help="meaning of // and %%: floor (Python, default), trunc (C) or euclid (Halide)",
    )
    simp.add_argument(
        "--explain", action="store_true", help="also print each rule application and counts"
    )
    simp.add_argument(
        "--validate",
        action="store_true",
        help="check every rewrite step taken with Z3 (needs z3-solver); exit 1 on a wrong step",
    )
    simp.add_argument(
        "--given",
        action="append",
        default=[],
        metavar="COND",
        help="a condition known to hold, e.g. 'x*4 + y < 30' (repeatable): the result "
        "equals EXPR wherever every condition holds",
    )
    simp.add_argument("--batch", metavar="FILE", help="JSON-lines input file ('-' for stdin)")
    simp.add_argument(
        "--jobs",
        type=positive,
        default=1,
        metavar="N",
        help="--batch: simplify the lines in N worker processes, output in input order "
        "(default 1: in this process)",
    )
    simp.add_argument(
        "--max-steps",
        type=_non_negative,
        default=None,
        metavar="N",
        help="rule application budget (default: 10000 + 100 per node of the input, "
        f"at most {DEFAULT_MAX_STEPS})",
    )
    add_rules_options(simp)
    simp.set_defaults(handler=cmd_simplify)

    emit_p = subs.add_parser(
        "emit",
        help="simplify an expression and print it as a C, CUDA or Python function",
        description="Simplify EXPR and print a function NAME(...) computing it: its "
        "parameters are the --var variables, in order (int64_t in C and CUDA, which need "
        "only <stdint.h>); inside, int32_t wherever every step fits, floor division "
        "lowered to the target's by proven rules. Arguments must lie in their bounds. "
        "Names the target cannot use (keywords, reserved or library names) are refused.",
    )
    emit_p.add_argument("expr", metavar="EXPR", help="expression, e.g. '(x*4 + y)//4'")
    emit_p.add_argument(
        "--var",
        action="append",
        default=[],
        type=parse_var,
        metavar="NAME=LO:HI",
        help="a parameter and its inclusive bounds (repeatable, in parameter order)",
    )
    emit_p.add_argument("--lang", choices=LANGUAGES, default="c", help="target (default c)")
    emit_p.add_argument(
        "--semantics",
        choices=[s.value for s in Semantics],
        default=Semantics.FLOOR.value,
        help="meaning of // and %% in EXPR (default floor)",
    )
    emit_p.add_argument(
        "--name",
        default=DEFAULT_NAME,
        metavar="NAME",
        help=f"the function's name (default {DEFAULT_NAME})",
    )
    emit_p.add_argument("--no-simplify", action="store_true", help="emit EXPR as written")
    add_rules_options(emit_p)
    emit_p.set_defaults(handler=cmd_emit)

    demo = subs.add_parser("demo", help="simplify and explain a worked example")
    demo.set_defaults(handler=cmd_demo)

    rules = subs.add_parser(
        "rules",
        help="list the rules: the shipped ones, or those of rules files",
        description="List rules in priority order: name, semantics, proof status (from the "
        "proof cache: run quorem verify), location and doc. FILE arguments list the rules "
        "of those files alone; --rules lists them before the shipped ones, as simplify "
        "uses them.",
    )
    rules.add_argument("files", nargs="*", metavar="FILE", help="rules files to list")
    rules.add_argument(
        "--json",
        action="store_true",
        help='one JSON object {"rules": [{name, semantics, phase, file, line, location, doc, '
        'status}], "count"}',
    )
    add_rules_options(rules)
    rules.set_defaults(handler=cmd_rules)
    add_map_parser(subs)
    add_hlo_parser(subs)
    add_coverage_parser(subs)
    subs.add_parser(
        "verify",
        help="prove rules sound with Z3 (needs the verify extra; see quorem verify --help)",
        add_help=False,
    )
    subs.add_parser(
        "discover",
        help="propose proven rules for what the rules leave on a corpus (needs the verify "
        "extra; see quorem discover --help)",
        add_help=False,
    )
    return parser


# The commands that prove (quorem verify, quorem discover): their code lives in
# quorem.verify and needs z3-solver, which the engine never imports.
_PROVING_COMMANDS: Final = {"verify": "quorem.cli.verify", "discover": "quorem.cli.discover"}


def _proving_command(command: str, argv: list[str]) -> int:
    """Run ``quorem COMMAND``, or say which extra to install when Z3 is missing."""
    try:
        module = importlib.import_module(_PROVING_COMMANDS[command])
    except ImportError as exc:
        sys.stderr.write(
            f"quorem {command}: error: needs z3-solver ({exc}); "
            'install it with: pip install "quorem[verify]"\n'
        )
        return EXIT_USAGE
    status: int = module.main(argv)
    return status


def _command_of(args: argparse.Namespace) -> str:
    """How messages name the command run: ``quorem simplify``, ``quorem map simplify``..."""
    words = ["quorem", args.command or ""]
    action = getattr(args, "action", None)
    if isinstance(action, str):
        words.append(action)
    return " ".join(w for w in words if w)


def main(argv: list[str] | None = None) -> int:
    """Run the ``quorem`` command line with ``argv`` (default ``sys.argv[1:]``).

    Returns the exit status instead of exiting: 0 success, 1 batch lines with errors,
    2 usage or input errors (reported as ``quorem COMMAND: error: ...`` on stderr, never as
    a traceback), 130 when interrupted.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _PROVING_COMMANDS:
        return _proving_command(argv[0], argv[1:])
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        if exc.code is None:
            return EXIT_OK
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if extras:
        hint = ""
        if args.command == "simplify" and any(x.startswith("-") for x in extras):
            hint = " (an EXPR starting with '-' goes after '--': quorem simplify -- '-x//4')"
        where = _command_of(args)
        sys.stderr.write(f"{where}: error: unrecognized arguments: {' '.join(extras)}{hint}\n")
        return EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    where = _command_of(args)
    try:
        status: int = args.handler(args, out, err)
    except RuleErrors as exc:
        # One line per problem, each as a lone RuleError is printed (editors jump to them).
        err.writelines(f"{where}: error: {e}\n" for e in exc.errors)
        return EXIT_USAGE
    except UnprovenRuleError as exc:
        # Not a usage error: the rules given are not proven (exit 1, as verify's unsound).
        err.write(f"{where}: error: {exc}\n")
        return EXIT_LINE_ERRORS
    except (CliError, QuoremError) as exc:
        err.write(f"{where}: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write(f"{where}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    return status
