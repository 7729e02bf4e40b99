"""``quorem simplify EXPR``: simplify one expression (``--batch``: :mod:`quorem.cli.batch`).

Exit status: 0 on success; 1 when ``--validate`` finds a wrong step (or, with ``--batch``,
when some lines had errors); 2 for usage and input errors.
"""

from __future__ import annotations

import argparse
from typing import Any, Final, TextIO

from ..api import RewriteResult, Semantics, count_divmod, to_text
from ..rewrite import DEFAULT_MAX_STEPS, rewrite_given
from ..walk import free_names
from .args import EXIT_LINE_ERRORS, EXIT_OK, CliError, add_semantics_option, positive
from .batch import batch_input, run_batch
from .explain import explain_lines, warn_if_not_normal
from .expressions import add_var_option, bounds_of, parse_expr
from .rules_options import add_rules_options, ruleset_from_args, unproven_note

__all__ = ["add_parser", "run"]

_SIMPLIFY_EPILOG: Final = """\
bounds:
  --var NAME=LO:HI gives an inclusive range; either side may be empty for
  unbounded (x=:10, x=0:) and negative (x=-5:5). Unlisted variables are unbounded.
  An EXPR starting with '-' goes after '--':  quorem simplify -- '-x//4'

batch (--batch FILE.jsonl, '-' for stdin), one JSON object per line:
  in:  {"id": str, "vars": {"x": [lo, hi], ...}, "expr": str, "semantics": "floor"|"trunc"|"euclid",
        "given": [str, ...]}
       (semantics defaults to --semantics; null bounds are unbounded; blank lines skipped;
       the output equals expr wherever every condition of the optional given holds)
  out: {"id", "output", "ops_before", "ops_after", "rules", "counts", "steps",
        "stop_reason", "culprits", "seconds"}, and "trace" with --explain
       ([{"rule", "before", "after"}, ...]), or {"id", "error"} for a bad line;
       ops count //, % and division functions; rules are the rules applied in order of
       first use, counts how often each was (they sum to steps); stop_reason is
       "fixed point", "step limit", "size limit" or "cycle", and culprits the rules
       blamed for a stop before a fixed point; seconds times the rewrite alone.

custom rules:
  --rules FILE (repeatable) runs the file's rules before the shipped ones;
  --only-rules runs them alone. They are not proven (quorem verify FILE proves them)
  and may not terminate: the rewriter then stops and names them (--explain, culprits).

exit status:
  0  success (for --batch: every line succeeded)
  1  --batch: some lines had errors (each reported on its output line)
  2  usage or input error (bad option, unparsable EXPR, unreadable FILE, a bad
     rules file: each of its problems as file:line:col)
"""


def add_parser(subs: Any) -> None:
    """Register ``quorem simplify`` on a subparsers object (its handler is :func:`run`)."""
    simp = subs.add_parser(
        "simplify",
        help="simplify an expression, or a JSON-lines batch",
        description="Simplify EXPR (or each line of --batch FILE) and print the result, "
        "which parses back under the same semantics.",
        epilog=_SIMPLIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    simp.add_argument("expr", nargs="?", metavar="EXPR", help="expression, e.g. '(x*4 + y)//4'")
    add_var_option(simp, "inclusive bounds of a variable (repeatable)")
    add_semantics_option(
        simp, "meaning of // and %%: floor (Python, default), trunc (C) or euclid (Halide)"
    )
    simp.add_argument(
        "--explain", action="store_true", help="also print each rule application and counts"
    )
    simp.add_argument(
        "--validate",
        action="store_true",
        help="check every rewrite step taken with Z3 (needs z3-solver); exit 1 on a wrong step",
    )
    simp.add_argument(
        "--given",
        action="append",
        default=[],
        metavar="COND",
        help="a condition known to hold, e.g. 'x*4 + y < 30' (repeatable): the result "
        "equals EXPR wherever every condition holds",
    )
    simp.add_argument("--batch", metavar="FILE", help="JSON-lines input file ('-' for stdin)")
    simp.add_argument(
        "--jobs",
        type=positive,
        default=1,
        metavar="N",
        help="--batch: simplify the lines in N worker processes, output in input order "
        "(default 1: in this process)",
    )
    simp.add_argument(
        "--max-steps",
        type=_non_negative,
        default=None,
        metavar="N",
        help="rule application budget (default: 10000 + 100 per node of the input, "
        f"at most {DEFAULT_MAX_STEPS})",
    )
    add_rules_options(simp)
    simp.set_defaults(handler=run)


def _non_negative(text: str) -> int:
    """Convert an argparse value to a non-negative decimal integer."""
    if not text.isdigit() or not text.isascii():
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    return int(text)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem simplify``: one expression (``EXPR``) or a batch (``--batch FILE``)."""
    semantics = Semantics(args.semantics)
    if args.batch is not None:
        if args.expr is not None or args.var or args.validate or args.given:
            raise CliError(
                "--batch takes no EXPR, --var, --given or --validate (they are per line)"
            )
        ruleset = ruleset_from_args(args)
        with batch_input(args.batch) as stream:
            return run_batch(
                stream,
                semantics,
                args.max_steps,
                out,
                err,
                ruleset=ruleset,
                explain=args.explain,
                jobs=args.jobs,
            )
    if args.jobs != 1:
        raise CliError("--jobs applies to --batch (one expression is simplified in-process)")
    ruleset = ruleset_from_args(args)
    if args.expr is None:
        raise CliError("give an expression to simplify, or --batch FILE (try: quorem demo)")
    bounds = bounds_of(args.var)
    term = parse_expr(args.expr, bounds, semantics)
    unused = sorted(set(bounds) - free_names(term))
    if unused:
        err.write(f"quorem simplify: warning: --var {', '.join(unused)}: not in the expression\n")
    given = [parse_expr(text, bounds, semantics) for text in args.given]
    tracing = args.explain or args.validate
    result = rewrite_given(term, ruleset, given, max_steps=args.max_steps, trace=tracing)
    err.write(unproven_note("simplify", result.unproven_rules))
    if result.given_never_hold:
        err.write("quorem simplify: warning: the --given conditions can never hold together\n")
    out.write(to_text(result.term, semantics) + "\n")
    if args.explain:
        out.write("\n" + "\n".join(explain_lines(result, semantics, count_divmod(term))) + "\n")
    warn_if_not_normal(result, "", err)
    if args.validate:
        return _validate(result, semantics, out)
    return EXIT_OK


def _validate(result: RewriteResult, semantics: Semantics, out: TextIO) -> int:
    """Check each step of ``result``'s trace with Z3; report the first that is not valid."""
    try:
        from quorem.verify.validate import validate_trace  # noqa: PLC0415  (optional Z3)
    except ImportError as exc:
        raise CliError(
            f"--validate needs z3-solver ({exc}): pip install 'quorem[verify]'"
        ) from None
    checks = validate_trace(result.trace)
    for check in checks:
        if check.verdict != "valid":
            step = check.step
            before = to_text(step.before, semantics)
            after = to_text(step.after, semantics)
            out.write(f"validation: step {step.rule}: {before} -> {after}: {check.verdict}\n")
            if check.counterexample is not None:
                point = ", ".join(f"{k} = {v}" for k, v in check.counterexample.items())
                out.write(f"  counterexample: {point}\n")
            return EXIT_LINE_ERRORS
    out.write(f"validated: {len(checks)} rewrite steps checked with Z3, all valid\n")
    return EXIT_OK
