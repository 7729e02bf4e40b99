"""``--rules FILE`` and ``--only-rules``: custom rules on the command line, one helper for all.

Every command that rewrites with the rules (``quorem simplify``, ``emit``, ``map
simplify``, ``rules``, ``coverage``) takes the same two options and builds its rule set the
same way:

* :func:`add_rules_options` adds ``--rules FILE`` (repeatable) and ``--only-rules`` to an
  argparse parser;
* :func:`ruleset_from_args` turns the parsed options into the :class:`RuleSet` to use: the
  files' rules first, in the order given, then the shipped rules (or the files' rules
  alone with ``--only-rules``); without ``--rules``, the shipped rules.

A problem in a rules file is a :class:`~quorem.engine.errors.RuleError` naming
``file:line:col`` (a :class:`~quorem.engine.errors.RuleErrors` listing every problem of
every file): the commands print it as ``quorem COMMAND: error: ...`` and exit with status 2.
Rules loaded this way are not proven (run ``quorem verify FILE``) and may not terminate:
the rewriter then stops and names them (see ``RewriteResult.culprits``).
"""

from __future__ import annotations

import argparse

from quorem.engine.errors import QuoremError
from quorem.engine.ruleset import RuleSet, default_ruleset

__all__ = ["RulesUsageError", "add_rules_options", "ruleset_from_args"]


class RulesUsageError(QuoremError):
    """``--only-rules`` without ``--rules``: a usage error (exit status 2)."""


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--rules FILE`` (repeatable, into ``args.rules``) and ``--only-rules``."""
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE",
        help="a rules file whose rules run before the shipped ones (repeatable; "
        "not proven: check them with quorem verify FILE)",
    )
    parser.add_argument(
        "--only-rules",
        action="store_true",
        help="use the --rules files' rules alone, without the shipped rules",
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
    return RuleSet.from_files(files, with_shipped=not only)
