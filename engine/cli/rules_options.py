"""``--rules FILE`` and ``--only-rules``: custom rules on the command line, one helper for all.

Every command that rewrites with the rules (``quorem simplify``, ``emit``, ``map
simplify``, ``rules``, ``coverage``) takes the same two options and builds its rule set the
same way:

* :func:`add_rules_options` adds ``--rules FILE`` (repeatable) and ``--only-rules`` to an
  argparse parser;
* :func:`ruleset_from_args` turns the parsed options into the :class:`RuleSet` to use: the
  files' rules first, in the order given, then the shipped rules (or the files' rules
  alone with ``--only-rules``); without ``--rules``, the shipped rules.

A problem in a rules file is a :class:`~quorem.errors.RuleError` naming
``file:line:col`` (a :class:`~quorem.errors.RuleErrors` listing every problem of
every file): the commands print it as ``quorem COMMAND: error: ...`` and exit with status 2.

Only proven rules are applied: a file's rules count as proven where its proof record
(``FILE.proof.json``, written by ``quorem verify FILE``) says so. A command whose rules
hold one not proven for the semantics in use fails with status 1, naming each such rule
and the command that proves it. ``--allow-unproven`` applies them anyway; every result
they touch then says so (:func:`unproven_note`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..errors import QuoremError
from ..ruleset import RuleSet, default_ruleset

__all__ = ["RulesUsageError", "add_rules_options", "ruleset_from_args", "unproven_note"]


class RulesUsageError(QuoremError):
    """``--only-rules`` without ``--rules``: a usage error (exit status 2)."""


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--rules FILE`` (repeatable, into ``args.rules``) and ``--only-rules``."""
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE",
        help="a rules file whose rules run before the shipped ones (repeatable); its "
        "rules must be proven (quorem verify FILE writes FILE.proof.json)",
    )
    parser.add_argument(
        "--only-rules",
        action="store_true",
        help="use the --rules files' rules alone, without the shipped rules",
    )
    parser.add_argument(
        "--allow-unproven",
        action="store_true",
        help="apply --rules rules that are not proven (unproven, unknown, unsound or a "
        "stale record); each result they rewrite says so on stderr and in --json output",
    )


def ruleset_from_args(args: argparse.Namespace) -> RuleSet:
    """The rule set ``args`` asks for (see the module docstring).

    Raises RuleError (``file:line:col``) for a bad rules file and RulesUsageError for
    ``--only-rules`` without ``--rules``.
    """
    files: list[str] = getattr(args, "rules", None) or []
    only = bool(getattr(args, "only_rules", False))
    if not files:
        if only:
            raise RulesUsageError("--only-rules needs at least one --rules FILE")
        return default_ruleset()
    allow = bool(getattr(args, "allow_unproven", False))
    return RuleSet.from_files(files, with_shipped=not only, allow_unproven=allow)


def unproven_note(command: str, names: Sequence[str], where: str = "") -> str:
    """The stderr line saying a result was rewritten by unproven rules (empty for none)."""
    if not names:
        return ""
    return (
        f"quorem {command}: warning: {where}rewritten by rules that are not proven "
        f"(--allow-unproven): {', '.join(names)}\n"
    )
