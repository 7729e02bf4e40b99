"""``quorem discover``: propose proven rules for what the rules leave undone on a corpus.

::

    quorem discover CORPUS.jsonl [...] [--rules FILE ...] [--only-rules] [--out FILE]
                    [--apply] [--json] [--executor URL] [--jobs N]
                    [--patterns N] [--per-pattern N] [--min-cases N] [--rounds N]

The corpus is JSON lines as ``quorem simplify --batch`` reads them; ``--rules`` and
``--only-rules`` choose the rule set as on ``quorem simplify``. The proposals are
written as a rules file (to ``--out``, else standard output): the kept rules as rules,
each headed by its proof status, guard and what it removes on the corpus, and the
candidates not kept as comments, each with why. ``--apply`` also prints the corpus's
totals with the proposed rules added. Progress goes to standard error.

Exit status: 0 (whether or not a rule was found), 2 for bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from quorem.verify.discover import Discovery, Settings, discover, rules_text
from quorem.verify.executor import ExecutorError, add_executor_option, open_executor

from ..errors import QuoremError, RuleErrors, UnprovenRuleError
from ..ops import Semantics
from .args import EXIT_INTERRUPTED, CliError, add_semantics_option, positive
from .coverage import read_cases
from .rules_options import add_rules_options, ruleset_from_args

__all__ = ["build_parser", "main"]

_EXIT_OK = 0
_EXIT_USAGE = 2
_COMMAND = "quorem discover"  # how its messages begin


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``quorem discover``."""
    p = argparse.ArgumentParser(
        prog="quorem discover",
        description="Propose proven rules that remove the // and %% a rule set leaves "
        "on a corpus (needs z3-solver).",
    )
    p.add_argument("corpus", nargs="+", help="JSON-lines corpus files (as simplify --batch)")
    add_rules_options(p)
    p.add_argument("--out", metavar="FILE", help="write the proposed rules here (default: stdout)")
    p.add_argument(
        "--apply", action="store_true", help="report the corpus totals with the rules added"
    )
    p.add_argument("--json", action="store_true", help="print a JSON report instead of rules text")
    add_semantics_option(p, "semantics of corpus lines that do not say (default floor)")
    settings = Settings()
    for option, default, what in (
        ("--patterns", settings.patterns, "residue patterns searched per round"),
        ("--per-pattern", settings.per_pattern, "candidates proven per pattern"),
        ("--min-cases", settings.min_cases, "cases a pattern must occur in"),
        ("--rounds", settings.rounds, "rounds of discovery at most"),
    ):
        p.add_argument(
            option, type=positive, default=default, metavar="N", help=f"{what} (default {default})"
        )
    p.add_argument("--jobs", "-j", type=positive, default=1, help="parallel prover processes")
    add_executor_option(p)
    return p


def why_no_rule(d: Discovery, settings: Settings) -> str:
    """Why discovery proposes no rule (the first step that came out empty); "" if it does."""
    if d.kept:
        return ""
    if d.ops_before == 0:
        return "the rules leave no // or % on the corpus: there is nothing to remove"
    if d.patterns == 0:
        return f"the {d.ops_before} // and % left generalise to no residue pattern"
    if d.frequent == 0:
        return (
            f"none of the {d.patterns} residue patterns occurs in {settings.min_cases} or more "
            "cases (--min-cases)"
        )
    if not d.proposals:
        return (
            f"no candidate rewrite with fewer // and % was found for the {d.frequent} "
            f"residue patterns occurring in {settings.min_cases} or more cases"
        )
    if d.proven == 0:
        return (
            f"none of the {len(d.proposals)} candidates was proven (each is listed in the "
            "rules text with why)"
        )
    return (
        f"the {d.proven} proven candidates remove no // or % on the corpus or make a case "
        "loop (each is listed in the rules text with why)"
    )


def _summary(d: Discovery) -> dict[str, Any]:
    return {
        "cases": d.cases,
        "ops_input": d.ops_input,
        "ops_before": d.ops_before,
        "ops_after": d.ops_after,
        "residue_patterns": d.patterns,
        "kept": [p.name for p in d.kept],
        "proposals": [p.to_json() for p in d.proposals],
    }


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ruleset = ruleset_from_args(args)
    cases, bad = read_cases(list(args.corpus), Semantics(args.semantics), err, _COMMAND)
    if bad:
        err.write(f"{_COMMAND}: error: {bad} corpus lines could not be read (above)\n")
        return _EXIT_USAGE
    if not cases:
        err.write(f"{_COMMAND}: error: the corpus has no case\n")
        return _EXIT_USAGE
    settings = Settings(args.patterns, args.per_pattern, args.min_cases, args.rounds)

    def say(line: str) -> None:
        err.write(f"{_COMMAND}: {line}\n")
        err.flush()

    with open_executor(args.executor, args.jobs) as executor:
        found = discover(cases, ruleset, settings=settings, executor=executor, progress=say)
    why_none = why_no_rule(found, settings)
    if why_none:
        say(f"no rule proposed: {why_none}")
    text = rules_text(found)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    if args.json:
        out.write(json.dumps({**_summary(found), "why_no_rule": why_none}) + "\n")
    elif not args.out:
        out.write(text)
    if args.apply or args.out:
        proven = found.proven
        out.write(
            f"corpus: {found.cases} cases; // and % in the input {found.ops_input}, "
            f"with the rules {found.ops_before}, with the {len(found.kept)} proposed rules "
            f"added {found.ops_after}; {proven} of {len(found.proposals)} candidates proven"
            f"{'; no rule proposed: ' + why_none if why_none else ''}\n"
            if args.apply
            else f"wrote {len(found.kept)} proposed rules to {args.out}\n"
        )
    return _EXIT_OK


def main(argv: list[str]) -> int:
    """Run ``quorem discover`` with ``argv``; the exit status (see the module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else _EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    try:
        return _run(args, out, err)
    except RuleErrors as exc:
        err.writelines(f"{_COMMAND}: error: {e}\n" for e in exc.errors)
        return _EXIT_USAGE
    except UnprovenRuleError as exc:
        err.write(f"quorem discover: error: {exc}\n")
        return 1  # the rules given are not proven, as every command says it
    except (CliError, QuoremError, ExecutorError, OSError) as exc:
        err.write(f"{_COMMAND}: error: {exc}\n")
        return _EXIT_USAGE
    except KeyboardInterrupt:
        err.write(f"{_COMMAND}: interrupted\n")
        return EXIT_INTERRUPTED
