"""The run of ``quorem verify``: options, rules, proofs, then the reports, in that order."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from quorem.verify.cache import ProofCache
from quorem.verify.interrupt import interruptible
from quorem.verify.jobs import Checks

from ...errors import QuoremError
from ..args import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, CliError, silence_stdout
from .exits import EXIT_PROVEN, EXIT_UNKNOWN, EXIT_UNSOUND, EXIT_USAGE
from .json_report import write_json
from .junit import write_junit
from .options import OBLIGATIONS_ALL, parser, usage_problem
from .proof_records import records
from .run import prove
from .select import load, named, slowest
from .smt2 import write_smt2
from .suggest import suggest
from .summary import summary as summarize
from .text import Progress, print_reports

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``quorem verify`` with ``argv``; return the exit status.

    Ctrl-C stops the run at once (exit 130, no traceback) keeping every proof finished
    so far in the cache; a closed output pipe (``quorem verify | head``) ends it quietly.
    """
    try:
        with interruptible():
            return _main(argv)
    except KeyboardInterrupt:
        print(
            "\nquorem verify: interrupted (the proofs finished are in the cache)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    try:
        # The checks in the order they are reported: a bad file first, then a rule
        # missing, the options, and --slowest, which needs the rules chosen.
        rules = load(args.files)
        if args.rule:
            rules = named(rules, args.rule)
        problem = usage_problem(args)
        if problem:
            raise CliError(problem)
        if args.slowest is not None:
            rules = slowest(rules, args)
    except (QuoremError, CliError) as exc:
        print(f"quorem verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    wanted = args.obligation or OBLIGATIONS_ALL
    if args.smt2 is not None:
        return write_smt2(args.smt2, rules, wanted, args.arity)
    checks = Checks(args.seeds, args.confirm or "", args.confirm_timeout)
    cache = None if args.no_cache else ProofCache()
    show = None if args.json else Progress(sys.stdout.isatty())
    start = time.perf_counter()
    results = prove(rules, args, wanted=wanted, checks=checks, cache=cache, show=show)
    if results is None:
        return EXIT_USAGE
    seconds = time.perf_counter() - start
    if show is not None:
        show.close()
    # Before the reports: the summary stays the last line (CI prints it with tail -n 1).
    status = records(rules, results, args)
    summary = summarize(results, seconds, checks)
    # Guard synthesis (quorem.verify.guards) for the rules not proven.
    suggestions = suggest(rules, results, args) if args.suggest_guard else None
    if args.json:
        write_json(results, summary, suggestions)
    else:
        print_reports(results, summary)
    if args.junit:
        write_junit(args.junit, results, seconds)
    if suggestions is not None and not args.json:
        for s in suggestions:
            print("\n" + str(s["rendered"]))
    if summary["unsound"] or summary.get("disagree") or status:
        return EXIT_UNSOUND
    if summary["unknown"] and not args.allow_unknown:
        return EXIT_UNKNOWN
    return EXIT_PROVEN
