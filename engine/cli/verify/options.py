"""The options of ``quorem verify``: its parser, and what it rejects once parsed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from quorem.verify.confirm import (
    CONFIRMERS,
    DEFAULT_CONFIRM_TIMEOUT,
    ConfirmerMissingError,
    confirmer_version,
)
from quorem.verify.executor import add_executor_option
from quorem.verify.guards import DEFAULT_MAX_CANDIDATES, DEFAULT_QUERY_RLIMIT
from quorem.verify.prove import DEFAULT_ARITY, DEFAULT_TIMEOUT, ENCODINGS, OBLIGATIONS
from quorem.verify.termination import NESTED_OBLIGATION

__all__ = ["LABELS_EPILOG", "OBLIGATIONS_ALL", "parser", "usage_problem"]

# Every kind of obligation, in the order they are proven: the default of --obligation.
OBLIGATIONS_ALL: Final = (*OBLIGATIONS, "interval", "termination", NESTED_OBLIGATION)

# What every label of the output means (quorem verify --help); tests check that each
# status, method and verdict the prover can print is explained here.
LABELS_EPILOG: Final = """\
output: one line per obligation, STATUS RULE [SEMANTICS OBLIGATION] METHOD SECONDS

obligations:
  equivalence          the rewrite equals the input wherever the input is defined
  int64                no intermediate of the rewrite leaves int64 where the input's do not
  termination          the rule makes the term smaller in the measure (a tuple of counts)
  termination-context  ... and in the nested order, so whole terms shrink around it
  interval             the engine's interval analysis is sound (shipped rules only)
  k=N                  the instance of a sum(K*t) rule with N addends (--arity)

statuses:
  proven               holds for all integers
  proven-int64         holds where every value is a machine integer (int64); for the
                       int64 obligation its only proven status
  proven-on-grid(...)  proven only with the rule's constants pinned to the grid shown:
                       weaker than a proof, counted as unknown
  unsound              a counterexample, replayed and confirmed by the engine: UNSOUND
                       (a wrong value, or a division by zero: counted as wrong value)
                       or OVERFLOW (int64: equal values, an intermediate leaves int64)
  unknown              not decided: Z3 timed out or answered unknown, or its model was
                       not reproduced by the engine (the report says which)
  seed-dependent       --seeds: the verdict differs between Z3 seeds (counted as unknown)
  DISAGREE             --confirm: the second solver gives the opposite answer (exit 1)
  STATUS (z3+cvc5)     --confirm: the second solver gives the same answer
  STATUS (z3 only)     --confirm: the second solver gave no answer in time
  no query             --confirm: decided without a single query (nothing to confirm)
  (cached)             taken from the proof cache (--no-cache proves it again)

methods (how the status was reached):
  IntAux               Z3 over unbounded integers, each division purified into an
                       auxiliary quotient and remainder with their defining lemmas
  IntAux64             the same encoding for the int64 obligation
  , native             --encoding native: SMT-LIB div/mod instead of purified division
  , native-split (...) --encoding native-split: one query per sign case of the divisors
  , values in int64    proven with every name and intermediate bounded to int64
  grid, constants pinned  the rule's constants pinned to each point of a small grid
  vacuous              the guard and premises never hold: the rule never fires (unknown)
  vacuity-unknown      the guard and premises could not be shown satisfiable (unknown)
  measure: COMPONENT   termination: the measure component that decreases (or
                       "lexicographic by cases"); measure alone: not shown decreasing
  nested order: ...    termination-context: why the nested order decreases (or
                       "junction count decreases": fewer and/or, the first component);
                       nested order alone: not shown decreasing
  symbolic execution   interval: the paths of the interval code, each proven

summary: proven, unsound (wrong value, overflow), unknown; --json adds
  "wrong_value" and "overflow" beside "unsound" (their sum, with other kinds' failures).

exit status: 0 all proven; 1 some rule unsound, or --confirm's solver disagreeing with
  Z3; 2 usage or input errors (a bad or empty rules file); 3 some obligation unknown or
  seed-dependent (unless --allow-unknown); 130 interrupted.
"""


def parser() -> argparse.ArgumentParser:
    """The parser of ``quorem verify``'s arguments (its ``--help``, with the labels' epilog)."""
    p = argparse.ArgumentParser(
        prog="quorem verify",
        description="Prove rules sound with Z3 (the shipped rules, or FILE.rules ...).",
        epilog=LABELS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="*", help="rules files (default: the shipped rules)")
    p.add_argument("--rule", action="append", default=[], help="only the rule NAME (repeatable)")
    p.add_argument(
        "--obligation",
        choices=("equivalence", "int64", "interval", "termination", NESTED_OBLIGATION),
        action="append",
        help="only this kind of obligation (repeatable; default: all)",
    )
    p.add_argument("--arity", type=int, default=DEFAULT_ARITY, help="prove sum(K*t) rules for 1..K")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per query")
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        help="parallel prover processes (of the local pool; a Dask cluster runs as many "
        "proofs at once as it has worker processes)",
    )
    add_executor_option(p)
    p.add_argument(
        "--encoding",
        choices=ENCODINGS,
        default="purify",
        help="how rule obligations are stated: purified division (default), SMT-LIB "
        "div/mod, or div/mod split by the sign of each symbolic divisor",
    )
    p.add_argument("--json", action="store_true", help="write one JSON object to stdout")
    p.add_argument("--junit", type=Path, help="write a JUnit XML report to PATH")
    p.add_argument("--no-cache", action="store_true", help="prove everything again")
    p.add_argument("--allow-unknown", action="store_true", help="exit 0 despite unknowns")
    p.add_argument(
        "--smt2",
        type=Path,
        metavar="DIR",
        help="write each equivalence and int64 obligation's query to DIR as a standard "
        "SMT-LIB 2.6 file, one per obligation, and exit (nothing is proven)",
    )
    p.add_argument(
        "--confirm",
        choices=CONFIRMERS,
        help="check each query Z3 decides with this solver too (needs quorem[confirm])",
    )
    p.add_argument(
        "--confirm-timeout",
        type=float,
        default=DEFAULT_CONFIRM_TIMEOUT,
        metavar="S",
        help="seconds the confirming solver gets per query",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="prove each equivalence and int64 obligation under Z3 seeds 0..N-1, each "
        "alone; a status that differs between seeds is seed-dependent (as unknown)",
    )
    p.add_argument(
        "--slowest",
        type=int,
        metavar="N",
        help="only the N rules whose cached proofs took longest (with --seeds: the proofs "
        "most likely to depend on a seed); the cache must hold their times",
    )
    p.add_argument(
        "--suggest-guard",
        action="store_true",
        help="for each rule not proven, search for the weakest guard that makes it proven",
    )
    p.add_argument(
        "--guard-candidates",
        type=int,
        metavar="N",
        default=DEFAULT_MAX_CANDIDATES,
        help="with --suggest-guard: prove at most N candidate guards per rule (default "
        "%(default)s); the search's budget is this count and --guard-rlimit, not time, so its "
        "answer does not depend on the machine's load",
    )
    p.add_argument(
        "--guard-rlimit",
        type=int,
        metavar="N",
        default=DEFAULT_QUERY_RLIMIT,
        help="with --suggest-guard: Z3 resource limit per query (default %(default)s, "
        "about 2 s here); 0 for none (then only the wall-clock timeout bounds a query)",
    )
    records = p.add_mutually_exclusive_group()
    records.add_argument(
        "--no-record",
        action="store_true",
        help="do not write FILE.proof.json (by default a run of every obligation of "
        "FILE writes it: the record simplify, emit and the API read to apply only "
        "proven rules)",
    )
    records.add_argument(
        "--write-records",
        action="store_true",
        help="write the proof records of the shipped rules too (for quorem's developers)",
    )
    records.add_argument(
        "--check-records",
        action="store_true",
        help="write nothing; exit 1 when a proof record differs from what was proven now "
        "(CI: a record cannot be written by hand)",
    )
    return p


def usage_problem(args: argparse.Namespace) -> str:
    """What is wrong with the options, or an empty string."""
    if min(args.arity, args.jobs, args.seeds) < 1 or min(args.timeout, args.confirm_timeout) <= 0:
        return "--arity, --jobs, --seeds, --timeout and --confirm-timeout must be positive"
    if args.slowest is not None and args.slowest < 1:
        return "--slowest must be positive"
    if args.guard_candidates < 1:
        return "--guard-candidates must be positive"
    if args.guard_rlimit < 0:
        return "--guard-rlimit must be 0 (none) or positive"
    if args.confirm:
        try:
            confirmer_version(args.confirm)
        except ConfirmerMissingError as exc:
            return str(exc)
    return ""
