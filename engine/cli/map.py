"""``quorem map simplify``: simplify an indexing map given in XLA's textual form."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from ..errors import QuoremError, UnprovenRuleError
from ..indexing.map import IndexingMap
from ..indexing.mapsyntax import parse_map, print_map
from ..indexing.simplify import simplify_map
from ..rewrite import track_unproven
from ..ruleset import RuleSet
from .rules_options import add_rules_options, ruleset_from_args, unproven_note

__all__ = ["add_parser", "map_record", "run"]

_EPILOG = """\
examples:
  quorem map simplify '(d0) -> (d0 floordiv 16, d0 mod 16), domain: d0 in [0, 63]'
  quorem map simplify --rescale-symbols '()[s0] -> (s0), domain: s0 in [0, 9], s0 mod 3 in [1, 1]'
  quorem map simplify --batch maps.jsonl      # lines {"id": ..., "map": "..."}
  quorem map simplify --json MAP              # {"input", "output", "known_empty"}
  quorem map simplify --rules my.rules MAP    # my.rules first, then the shipped rules

Batch output: one line per input line, {"id", "output"} or {"id", "error"}.
Exit status: 0 success; 1 some batch lines had errors; 2 usage or input error
(a bad rules file among them).
"""


class MapInputError(QuoremError):
    """An unreadable batch file or a malformed batch line."""


def add_parser(subs: Any) -> None:
    """Register ``quorem map`` (with its ``simplify`` action) on a subparsers object.

    The action is a sub-command with its own parser, so that options may come before
    or after MAP (``quorem map simplify --keep-unused MAP``): argparse fills an optional
    positional that follows another positional only from the same run of arguments.
    """
    p = subs.add_parser(
        "map",
        help="simplify XLA-style indexing maps",
        description="Indexing maps in XLA's textual form: '(d0)[s0]{rt0} -> (exprs), "
        "domain: d0 in [lo, hi], ..., expr in [lo, hi]'.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    simp = actions.add_parser(
        "simplify",
        help="simplify a map, or each map of a JSON-lines file",
        description="Simplify MAP, or each map of a JSON-lines file.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    simp.add_argument("map", nargs="?", metavar="MAP", help="the map, in XLA's textual form")
    simp.add_argument("--batch", metavar="FILE", help='JSON lines {"id", "map"} (- for stdin)')
    simp.add_argument(
        "--keep-unused",
        action="store_true",
        help="keep range and runtime variables that no result uses",
    )
    simp.add_argument(
        "--remove-unused-dims",
        action="store_true",
        help="remove dimensions no result uses too (XLA's RemoveUnusedVars): fewer dimensions",
    )
    simp.add_argument(
        "--rescale-symbols",
        action="store_true",
        help="a range variable confined to a residue class counts its members "
        "(XLA's RescaleSymbols): same reads, new symbol values",
    )
    simp.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object {"input", "output", "known_empty"} (MAP only: '
        "--batch output is JSON lines already)",
    )
    add_rules_options(simp)
    simp.set_defaults(handler=run)


def _simplified(
    source: str, keep_unused: bool, options: dict[str, bool], rules: RuleSet | None = None
) -> IndexingMap:
    try:
        m = parse_map(source)
        return simplify_map(
            m,
            remove_unused=not keep_unused,
            remove_unused_dims=options.get("remove_unused_dims", False),
            rescale=options.get("rescale", False),
            rules=rules,
        )
    except RecursionError:
        # Not expected (the parser limits nesting, the engine walks terms with explicit
        # stacks), but one bad map must not take the batch down with a traceback.
        raise MapInputError("the map is nested too deeply") from None


def map_record(
    text: str,
    lineno: int,
    keep_unused: bool,
    *,
    remove_unused_dims: bool = False,
    rescale: bool = False,
    rules: RuleSet | None = None,
) -> dict[str, Any]:
    """The output record of one batch line: ``{"id", "output"}`` or ``{"id", "error"}``.

    The options are :func:`~quorem.indexing.simplify.simplify_map`'s (``rules``:
    default the shipped rules).

    Never raises for what the line holds: bad JSON, JSON nested too deeply for Python's
    decoder, a bad map or one too large are each an error record.
    """
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return {"id": None, "error": f"line {lineno}: not JSON: {exc.msg}"}
    except RecursionError:
        return {"id": None, "error": f"line {lineno}: not read: JSON nested too deeply"}
    except ValueError as exc:  # an integer over Python's int-str limit, say
        return {"id": None, "error": f"line {lineno}: not read: {exc}"}
    if not isinstance(obj, dict):
        return {"id": None, "error": f"line {lineno}: expected a JSON object"}
    ident = obj.get("id")
    source = obj.get("map")
    if not isinstance(source, str):
        return {"id": ident, "error": f"line {lineno}: 'map' must be a string"}
    try:
        with track_unproven() as unproven:
            out = _simplified(
                source,
                keep_unused,
                {"remove_unused_dims": remove_unused_dims, "rescale": rescale},
                rules,
            )
    except UnprovenRuleError:
        raise  # the rules, not the line, are at fault: the command fails
    except QuoremError as exc:
        return {"id": ident, "error": f"line {lineno}: {exc}"}
    record: dict[str, Any] = {"id": ident, "output": print_map(out)}
    if unproven:
        record["unproven_rules"] = list(unproven)
    return record


def _lines(source: str) -> Iterator[tuple[int, str]]:
    if source == "-":
        yield from enumerate(sys.stdin, 1)
        return
    try:
        with open(source, encoding="utf-8") as f:
            yield from enumerate(f, 1)
    except OSError as exc:
        raise MapInputError(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MapInputError(f"{source} is not UTF-8 text") from None


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem map simplify``: print the simplified map, or a JSON line per batch line."""
    if (args.map is None) == (args.batch is None):
        raise MapInputError("give either MAP or --batch FILE")
    options = {"remove_unused_dims": args.remove_unused_dims, "rescale": args.rescale_symbols}
    if args.json and args.batch is not None:
        raise MapInputError("--json is for MAP: the --batch output is JSON lines already")
    rules = ruleset_from_args(args)
    if args.batch is None:
        with track_unproven() as unproven:
            m = _simplified(args.map, args.keep_unused, options, rules)
        err.write(unproven_note("map simplify", list(unproven)))
        if args.json:
            record = {"input": args.map, "output": print_map(m), "known_empty": m.known_empty}
            if unproven:
                record["unproven_rules"] = list(unproven)
            out.write(json.dumps(record) + "\n")
        else:
            out.write(print_map(m) + "\n")
        return 0
    status = 0
    for lineno, text in _lines(args.batch):
        if not text.strip():
            continue
        rec = map_record(text, lineno, args.keep_unused, **options, rules=rules)
        where = f"line {lineno}: "
        err.write(unproven_note("map simplify", rec.get("unproven_rules", []), where))
        if "error" in rec:
            status = 1
        out.write(json.dumps(rec) + "\n")
        out.flush()
    return status
