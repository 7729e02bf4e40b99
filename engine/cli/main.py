"""The ``quorem`` command line: the top-level parser, and ``main()`` dispatching to a command.

Each command is a module of :mod:`quorem.cli` registering its parser with
``add_parser(subparsers)`` and run by its handler ``run(args, out, err) -> int``:

* ``quorem simplify EXPR [--var NAME=LO:HI ...] [--semantics floor|trunc|euclid] [--explain]``
  (:mod:`~quorem.cli.simplify`); ``quorem simplify --batch FILE.jsonl`` (``-`` reads
  standard input; :mod:`~quorem.cli.batch`)
* ``quorem emit``, ``quorem demo`` (the worked example, simplified and explained),
  ``quorem rules [FILE ...] [--json]`` (the shipped rules, or those of rules files),
  ``quorem map simplify``, ``quorem hlo``, ``quorem coverage``: the modules of those names
* ``quorem verify`` and ``quorem discover`` need z3-solver: their modules are imported
  only when they run, and parse their own arguments.

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
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..errors import QuoremError, RuleErrors, UnprovenRuleError
from . import coverage, demo, emit, hlo, rules, simplify
from . import map as map_command
from .args import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_LINE_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    silence_stdout,
)

__all__ = ["build_parser", "main"]

# The commands in the order ``quorem --help`` lists them, each registering its parser.
_COMMANDS: Final[tuple[Callable[[Any], None], ...]] = (
    simplify.add_parser,
    emit.add_parser,
    demo.add_parser,
    rules.add_parser,
    map_command.add_parser,
    hlo.add_parser,
    coverage.add_parser,
)

# The commands that prove (quorem verify, quorem discover): their code lives in
# quorem.verify and needs z3-solver, which the engine never imports. Each is listed
# in ``quorem --help`` (with its help line) and imported only when run.
_PROVING_COMMANDS: Final = {"verify": "quorem.cli.verify", "discover": "quorem.cli.discover"}
_PROVING_HELP: Final = {
    "verify": "prove rules sound with Z3 (needs the verify extra; see quorem verify --help)",
    "discover": "propose proven rules for what the rules leave on a corpus (needs the verify "
    "extra; see quorem discover --help)",
}


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


def build_parser() -> argparse.ArgumentParser:
    """Build the ``quorem`` argument parser with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="quorem",
        description="Simplify integer index arithmetic (// and %) with proven rules.",
        epilog="Run 'quorem demo' for a worked example, 'quorem COMMAND --help' for details.",
    )
    parser.add_argument("--version", action=_VersionAction)
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add_parser in _COMMANDS:
        add_parser(subs)
    for command, help_text in _PROVING_HELP.items():
        # Listed only: main() hands their arguments to their own parsers.
        subs.add_parser(command, help=help_text, add_help=False)
    return parser


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
