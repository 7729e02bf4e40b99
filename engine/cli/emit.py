"""``quorem emit EXPR``: simplify an expression and print it as a C, CUDA or Python function."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

from ..api import Semantics
from ..codegen import DEFAULT_NAME, LANGUAGES, emit
from ..rewrite import rewrite
from ..walk import free_names
from .args import EXIT_OK, CliError, add_semantics_option
from .expressions import add_var_option, bounds_of, parse_expr
from .rules_options import add_rules_options, ruleset_from_args, unproven_note

__all__ = ["add_parser", "run"]


def add_parser(subs: Any) -> None:
    """Register ``quorem emit`` on a subparsers object (its handler is :func:`run`)."""
    emit_p = subs.add_parser(
        "emit",
        help="simplify an expression and print it as a C, CUDA or Python function",
        description="Simplify EXPR and print a function NAME(...) computing it: its "
        "parameters are the --var variables, in order (int64_t in C and CUDA, which need "
        "only <stdint.h>); inside, int32_t wherever every step fits, floor division "
        "lowered to the target's by proven rules. Arguments must lie in their bounds. "
        "Names the target cannot use (keywords, reserved or library names) are refused.",
    )
    emit_p.add_argument("expr", metavar="EXPR", help="expression, e.g. '(x*4 + y)//4'")
    add_var_option(emit_p, "a parameter and its inclusive bounds (repeatable, in parameter order)")
    emit_p.add_argument("--lang", choices=LANGUAGES, default="c", help="target (default c)")
    add_semantics_option(emit_p, "meaning of // and %% in EXPR (default floor)")
    emit_p.add_argument(
        "--name",
        default=DEFAULT_NAME,
        metavar="NAME",
        help=f"the function's name (default {DEFAULT_NAME})",
    )
    emit_p.add_argument("--no-simplify", action="store_true", help="emit EXPR as written")
    add_rules_options(emit_p)
    emit_p.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem emit``: simplify EXPR, then print it as a C, CUDA or Python function."""
    bounds = bounds_of(args.var)
    term = parse_expr(args.expr, bounds, Semantics(args.semantics))
    if args.no_simplify:
        if args.rules:
            raise CliError("--rules and --no-simplify exclude each other")
    else:
        result = rewrite(term, ruleset_from_args(args))
        err.write(unproven_note("emit", result.unproven_rules))
        term = result.term
    missing = sorted(free_names(term) - set(bounds))
    if missing:
        raise CliError(f"{_without_var(missing)}; each becomes a parameter of {args.name}()")
    out.write(emit(term, list(bounds), args.lang, args.name))
    return EXIT_OK


def _without_var(names: Sequence[str]) -> str:
    """``variable x has no --var: add --var x=LO:HI ...``, for the ``names`` given none."""
    head = f"variable {names[0]} has" if len(names) == 1 else f"variables {', '.join(names)} have"
    options = " ".join(f"--var {n}=LO:HI" for n in names)
    return f"{head} no --var: add {options} (LO or HI may be empty for unbounded)"
