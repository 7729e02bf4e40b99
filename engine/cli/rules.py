"""``quorem rules [FILE ...]``: list rules with their semantics, proof status and location."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, Final, TextIO

from ..api import Semantics
from ..rule import Rule
from ..ruleset import RuleSet, instance_problem
from .args import EXIT_OK, CliError
from .rules_options import add_rules_options, ruleset_from_args

__all__ = ["add_parser", "run"]


def add_parser(subs: Any) -> None:
    """Register ``quorem rules`` on a subparsers object (its handler is :func:`run`)."""
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
    rules.set_defaults(handler=run)


def _semantics_text(semantics: Sequence[Semantics]) -> str:
    """``floor, trunc`` for the semantics a rule is stated for, ``any`` for none."""
    return ", ".join(s.value for s in semantics) or "any"


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
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
