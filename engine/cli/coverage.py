"""``quorem coverage CORPUS.jsonl ...``: where the rules fire over corpora, and what is left.

The corpora are in the batch format of ``quorem simplify --batch`` (one JSON object per
line with ``expr``, optional ``id``, ``vars``, ``semantics`` and ``given``; other fields
are ignored). The analysis is :func:`quorem.coverage.collect.coverage`, the reports
:mod:`quorem.coverage.render`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Final, TextIO

from ..coverage.collect import Case, coverage
from ..coverage.render import to_html, to_json, to_text
from ..errors import QuoremError
from ..ops import Semantics
from .args import (
    EXIT_LINE_ERRORS,
    EXIT_OK,
    add_semantics_option,
    non_negative,
    positive,
)
from .batch import LineError, batch_input, decode, job_of, numbered_lines
from .rules_options import add_rules_options, ruleset_from_args

__all__ = ["CoverageUsageError", "add_parser", "read_cases", "run"]

_TITLE_CORPORA: Final = 3  # corpora named in the HTML title; more are counted

_EPILOG: Final = """\
Each case is simplified as 'quorem simplify --batch' would. The report gives, answer
first: per rule that fired its applications (they sum to the batch run's steps), the
cases it fired in, the // and % its steps removed and its first application; the
divisions left in the results grouped by shape (literals shown as C, variables renamed
a, b, ...); the rules shadowed (they matched a term an earlier rule always took first);
and how many rules never fired (--never-fired lists them; --json and --html have all).

exit status:
  0  every line of the corpora was simplified
  1  some lines could not be read or simplified (each reported on stderr)
  2  usage or input error (unreadable corpus, bad rules file)
"""


class CoverageUsageError(QuoremError):
    """A bad argument or an unreadable input of ``quorem coverage`` (exit status 2)."""


def add_parser(subs: Any) -> None:
    """Register ``quorem coverage`` on a subparsers object (its handler is :func:`run`)."""
    p = subs.add_parser(
        "coverage",
        help="where each rule fires over JSON-lines corpora, and the divisions left",
        description="Simplify every line of the corpora (batch format, as 'quorem "
        "simplify --batch' reads) and report, per rule, where it fired and what it removed.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "corpus", nargs="+", metavar="CORPUS.jsonl", help="a corpus file ('-' for stdin)"
    )
    add_rules_options(p)
    add_semantics_option(
        p, "meaning of // and %% for lines without a 'semantics' field (default floor)"
    )
    p.add_argument(
        "--max-steps",
        type=non_negative,
        default=None,
        metavar="N",
        help="rule application budget per line (default: as quorem simplify)",
    )
    p.add_argument(
        "--jobs",
        type=positive,
        default=1,
        metavar="N",
        help="simplify the cases in N worker processes (default 1: in this process); "
        "the report is the same",
    )
    p.add_argument(
        "--never-fired",
        action="store_true",
        help="also list the rules that never fired (the text report counts them)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="write the report as one JSON object (every rule, the fired ones first)",
    )
    p.add_argument(
        "--html", metavar="FILE", help="also write the report as a self-contained HTML page"
    )
    p.set_defaults(handler=run)


def read_cases(
    sources: list[str], default: Semantics, err: TextIO, command: str = "quorem coverage"
) -> tuple[list[Case], int]:
    """The cases of every corpus, and how many lines could not be read.

    Each line not read is reported on ``err`` as ``COMMAND: FILE:LINE: why``; a corpus
    that cannot be opened raises :class:`~quorem.cli.args.CliError`.
    """
    cases: list[Case] = []
    bad = 0
    for source in sources:
        with batch_input(source) as stream:
            for lineno, text in numbered_lines(stream):
                where = f"{source}:{lineno}"
                if text is None:
                    err.write(f"{command}: {where}: not valid UTF-8\n")
                    bad += 1
                    continue
                if not text.strip():
                    continue
                try:
                    job = job_of(decode(text), default)
                except LineError as exc:
                    err.write(f"{command}: {where}: {exc}\n")
                    bad += 1
                    continue
                cases.append(Case(job.id or where, job.term, job.semantics, job.given))
    return cases, bad


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem coverage``: report on ``out`` (text, or JSON with ``--json``).

    Returns 0, or 1 when some corpus lines could not be read or simplified (each is
    reported on ``err``). Raises :class:`CoverageUsageError` or a rules file's
    :class:`~quorem.errors.RuleError` for usage and input errors (status 2).
    """
    ruleset = ruleset_from_args(args)
    if args.corpus.count("-") > 1:
        raise CoverageUsageError("standard input ('-') can be read once")
    cases, bad = read_cases(args.corpus, Semantics(args.semantics), err)
    report = coverage(cases, ruleset, max_steps=args.max_steps, jobs=args.jobs)
    if args.html is not None:
        names = [Path(c).name for c in args.corpus]
        title = "quorem coverage: " + (
            ", ".join(names) if len(names) <= _TITLE_CORPORA else f"{len(names)} corpora"
        )
        try:
            Path(args.html).write_text(to_html(report, title), encoding="utf-8")
        except OSError as exc:
            raise CoverageUsageError(f"cannot write {args.html}: {exc.strerror or exc}") from None
    for label, why in report.failed:
        err.write(f"quorem coverage: {label}: internal error, please report it: {why}\n")
    if args.json:
        out.write(json.dumps(to_json(report), indent=1) + "\n")
    else:
        out.write(to_text(report, never_fired=args.never_fired))
    return EXIT_LINE_ERRORS if bad or report.failed else EXIT_OK
