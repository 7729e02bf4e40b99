"""``quorem simplify --batch FILE.jsonl``: one JSON object in, one JSON object out, per line.

A line is read (:func:`decode`), checked and parsed (:func:`job_of`), simplified
(:func:`simplify_job`) and written back as its result record or an error record
(:func:`batch_record`); :func:`run_batch` does so for every line of a stream, in this
process or in worker processes (:mod:`quorem.jobs`). ``quorem coverage`` and ``quorem
discover`` read their corpora with the same :func:`numbered_lines`, :func:`decode` and
:func:`job_of`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, Final, TextIO

from ..api import (
    ParseError,
    QuoremError,
    Semantics,
    Term,
    count_divmod,
    default_ruleset,
    parse,
    to_text,
)
from ..errors import UnprovenRuleError
from ..rewrite import rewrite_given
from ..ruleset import RuleSet
from ..syntax import MAX_DIGITS, parse_int
from .args import EXIT_LINE_ERRORS, EXIT_OK, CliError
from .explain import warn_if_not_normal
from .expressions import SHOW_LIMIT, check_range, is_name
from .rules_options import unproven_note

__all__ = [
    "BatchJob",
    "LineError",
    "batch_input",
    "batch_line",
    "batch_record",
    "decode",
    "job_of",
    "numbered_lines",
    "run_batch",
    "simplify_job",
]

# A JSON string, or a number outside strings (group 1, and group 2 empty for an integer).
_JSON_TOKEN_RE: Final = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?[0-9]+)((?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
)
_SEMANTICS_NAMES: Final = frozenset(s.value for s in Semantics)


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
    return text if len(text) <= SHOW_LIMIT else text[: SHOW_LIMIT - 3] + "..."


def _json_bounds(name: object, value: object) -> tuple[int | None, int | None]:
    """Return the ``[lo, hi]`` of one ``vars`` entry; ``null`` anywhere means unbounded."""
    if not isinstance(name, str) or not is_name(name):
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
        check_range(name, lo, hi)
    except ValueError as exc:
        raise LineError(f"vars.{name}: {exc}") from None
    return lo, hi


def job_of(record: object, default: Semantics) -> BatchJob:
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


def decode(line: str) -> object:
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
    culprits, seconds`` (and ``trace`` with ``explain``; see :func:`simplify_job`);
    ``seconds`` times the rewrite alone. Any problem with the line gives ``{"id",
    "error"}`` whose message starts with ``line N:``. Never raises for bad input.
    ``ruleset``: the rules to use (default: the shipped rules).
    """
    record: object = None
    try:
        record = decode(line)
        job = job_of(record, default)
        return simplify_job(job, lineno, max_steps, err, ruleset=ruleset, explain=explain)
    except LineError as exc:
        return {"id": _id_of(record), "error": f"line {lineno}: {exc}"}
    except UnprovenRuleError:
        raise  # the rules, not the line, are at fault: the command fails
    except Exception as exc:  # an engine bug must not end the batch
        why = f"internal error, please report it: {type(exc).__name__}: {exc}"
        return {"id": _id_of(record), "error": f"line {lineno}: {why}"}


def simplify_job(
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
    warn_if_not_normal(result, where, err)
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


def numbered_lines(stream: Iterable[bytes | str]) -> Iterator[tuple[int, str | None]]:
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
        rules = default_ruleset() if ruleset is None else ruleset
        lines = numbered_lines(stream)
        failed = run_batch_in_workers(
            lines, default, max_steps, out, err, ruleset=rules, explain=explain, jobs=jobs
        )
        return EXIT_LINE_ERRORS if failed else EXIT_OK
    status = EXIT_OK
    for lineno, text in numbered_lines(stream):
        obj = batch_line(lineno, text, default, max_steps, err, ruleset=ruleset, explain=explain)
        if obj is None:
            continue
        if "error" in obj:
            status = EXIT_LINE_ERRORS
        out.write(json.dumps(obj) + "\n")
        out.flush()
    return status


@contextlib.contextmanager
def batch_input(source: str) -> Iterator[Iterable[bytes | str]]:
    """The lines of file ``source`` (as bytes), or of standard input when it is ``-``.

    Raises CliError (a usage error) when the file cannot be opened; the file is closed
    when the ``with`` block ends.
    """
    if source == "-":
        stdin = sys.stdin
        yield getattr(stdin, "buffer", stdin)
        return
    try:
        stream = open(source, "rb")  # noqa: SIM115  (only open errors are input errors)
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
    with stream:
        yield stream


# ---------------------------------------------------------------- --jobs N: in workers
BATCH_CHUNK: Final = 16  # batch lines sent to a worker at a time

# One batch line's output: its JSON text (None for a blank line), what it wrote on
# stderr (warnings), and whether it is an error.
_LineOutput = tuple[str | None, str, bool]


@dataclasses.dataclass(frozen=True, slots=True)
class _BatchChunk:
    """A chunk of batch lines and what every line needs (sent to a worker)."""

    lines: list[tuple[int, str | None]]
    default: Semantics
    max_steps: int | None
    explain: bool


def _batch_lines(chunk: _BatchChunk, ruleset: RuleSet) -> list[_LineOutput]:
    """Each line's output, as the in-process batch writes it."""
    done: list[_LineOutput] = []
    for lineno, text in chunk.lines:
        err = io.StringIO()
        obj = batch_line(
            lineno,
            text,
            chunk.default,
            chunk.max_steps,
            err,
            ruleset=ruleset,
            explain=chunk.explain,
        )
        if obj is None:
            done.append((None, err.getvalue(), False))
        else:
            done.append((json.dumps(obj), err.getvalue(), "error" in obj))
    return done


def _batch_chunk(chunk: _BatchChunk) -> list[_LineOutput]:
    """In a worker: :func:`_batch_lines` with the pool's rule set."""
    from ..jobs import worker_ruleset  # noqa: PLC0415  (start-up: only with --jobs)

    return _batch_lines(chunk, worker_ruleset())


def _write_lines(done: list[_LineOutput], out: TextIO, err: TextIO) -> bool:
    """Write a chunk's outputs (each line's warnings first); whether one is an error."""
    failed = False
    for text, warnings, is_error in done:
        if warnings:
            err.write(warnings)
        if text is not None:
            out.write(text + "\n")
        failed = failed or is_error
    out.flush()
    return failed


def run_batch_in_workers(
    lines: Iterable[tuple[int, str | None]],
    default: Semantics,
    max_steps: int | None,
    out: TextIO,
    err: TextIO,
    *,
    ruleset: RuleSet,
    explain: bool,
    jobs: int,
    chunk_size: int | None = None,
) -> bool:
    """``quorem simplify --batch`` over ``lines`` in ``jobs`` worker processes.

    ``lines`` are ``(line number, text or None if not UTF-8)``. Each line's output (and
    its warnings on ``err``) is written in input order, exactly as the in-process batch
    writes it, flushed after each chunk (of ``chunk_size`` lines, default
    :data:`BATCH_CHUNK`). Returns whether some line had an error.

    The first chunk is simplified here, before the workers start: it compiles the
    dispatchers its lines need, which forked workers then inherit instead of each
    compiling them again (about a second of start-up per worker otherwise).
    """
    from ..jobs import chunks, ordered_results, start_pool  # noqa: PLC0415  (start-up)

    size = BATCH_CHUNK if chunk_size is None else chunk_size
    parts = (_BatchChunk(part, default, max_steps, explain) for part in chunks(lines, size))
    first = next(parts, None)
    if first is None:
        return False
    failed = _write_lines(_batch_lines(first, ruleset), out, err)
    pool = start_pool(jobs, ruleset)
    with contextlib.closing(ordered_results(pool, _batch_chunk, parts, jobs)) as results:
        for done in results:
            failed = _write_lines(done, out, err) or failed
    return failed
