"""The proof records (``FILE.proof.json``): written or checked after a run, as asked."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from quorem.verify.prove import DEFAULT_ARITY
from quorem.verify.records import RECORDED_KINDS, check_records, write_records

from ...compiler.cache import shipped
from ...rule import Rule
from .paths import relative
from .select import load

__all__ = ["records"]


def records(
    rules: Sequence[Rule], results: Sequence[dict[str, Any]], args: argparse.Namespace
) -> int:
    """Write or check the proof records as ``args`` ask; 1 when a check found differences."""
    every = load(args.files)
    if args.check_records:
        problems = check_records(rules, results, every)
        for line in problems:
            print(f"quorem verify: record mismatch: {line}", file=sys.stderr)
        if problems:
            print(
                f"quorem verify: {len(problems)} proof record differences; write them again "
                "with quorem verify" + (" --write-records" if not args.files else ""),
                file=sys.stderr,
            )
        return 1 if problems else 0
    if args.no_record or not (args.files or args.write_records):
        return 0
    partial = _partial_run(args)
    if partial:
        print(f"quorem verify: no proof record written ({partial})", file=sys.stderr)
        return 0
    if not args.write_records:
        # The shipped records change only with --write-records, from a run of them all:
        # naming a shipped file (a partial check, a test) never rewrites its record.
        rules = [r for r in rules if not shipped(r.file)]
    try:
        written = write_records(rules, results, every)
    except OSError as exc:
        print(f"quorem verify: warning: cannot write the proof record: {exc}", file=sys.stderr)
        return 0
    if not args.json:
        for path in written:
            print(f"proof record: {relative(str(path))}")
    return 0


def _partial_run(args: argparse.Namespace) -> str:
    """Why this run cannot vouch for its rules in a record, or '' when it can."""
    if args.obligation and set(RECORDED_KINDS) - set(args.obligation):
        return "--obligation left some kinds of obligation out"
    if args.arity < DEFAULT_ARITY:
        return f"--arity below {DEFAULT_ARITY}"
    if args.slowest is not None:
        return "--slowest proves only some rules again"
    return ""
