"""How good is ``quorem verify --suggest-guard``? Measured on the guard mutants.

Every shipped rule with a guard -- the rewrite rules and the constraint-phase ones --
yields mutants with one guard conjunct dropped (:func:`quorem.verify.mutate.mutants`,
kind ``guard``). For each, the guard search runs
on the mutant and the outcome is one of:

* ``survived``: the mutant is already proven (the dropped conjunct was redundant); its
  guard is implied by the shipped one, so it counts as a success;
* ``found``: a guard was found and proven; it is ``as-weak`` when the shipped guard
  implies every added atom (checked by Z3 under the rule's premises, per semantics and
  arity), else ``stronger``;
* ``not-found``: no proven guard within the limits.

The score is (survived + found as-weak) / mutants: the share of mutants for which the
search found a proven guard no stronger than the shipped one.

The search's budget is deterministic (``--candidates`` per mutant, ``--rlimit`` Z3
resources per query), so the score does not move with the machine's load; the
wall-clock ``--time-limit`` is a safety net, and a mutant it stops says so in its note.

Run ``python -m benchmarks.suggest_guard [--every N] [--candidates K]``; ``--every N``
takes every N-th mutant, ``--sample N [--seed S]`` a uniform random sample of N (fixed
seed: the same sample every time), for a shorter run; ``--rows FILE`` appends each row
as it completes, ``--resume FILE`` reuses the rows of such a file (an interrupted run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import z3

from quorem.rule import Binary, Call, Expr, Rule, Unary
from quorem.ruleset import constraint_ruleset
from quorem.verify.encode import INT64_MAX, INT64_MIN, encode_rule, has_sequence
from quorem.verify.guards import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_QUERY_RLIMIT,
    DEFAULT_TIME_LIMIT,
    suggest_guard,
)
from quorem.verify.mutate import Mutant, conjuncts, mutants


def _implied(shipped: Rule, atom: Expr, arity: int, timeout: float) -> bool:
    """Whether ``shipped``'s guard implies ``atom`` wherever its pattern is defined (Z3)."""
    arities = range(1, arity + 1) if has_sequence(shipped) else range(0, 1)
    for sem in shipped.semantics or (None,):
        for k in arities:
            if isinstance(atom, Call) and atom.func == "fits_int64":
                # fits_int64(e): every value of e in int64, given the input's are.
                probe = dataclasses.replace(shipped, rewrite=atom.args[0])
                enc = encode_rule(probe, sem, k, int64=True)
                inside = [z3.And(v >= INT64_MIN, v <= INT64_MAX) for v in enc.lhs_nodes]
                outside = [z3.Or(v < INT64_MIN, v > INT64_MAX) for v in enc.rhs_nodes]
                query = [*enc.premises, *inside, z3.Or(*outside) if outside else z3.BoolVal(False)]
            else:
                assert shipped.guard is not None
                guard = Binary("and", shipped.guard, Unary("not", atom))
                enc = encode_rule(dataclasses.replace(shipped, guard=guard), sem, k)
                query = list(enc.premises)
            s = z3.Solver()
            s.set("timeout", int(timeout * 1000))
            s.add(*query)
            if s.check() != z3.unsat:
                return False
    return True


def _alternatives(e: Expr) -> list[list[Expr]]:
    """The disjuncts of ``e``, each as its list of conjuncts."""
    if isinstance(e, Binary) and e.op == "or":
        return [*_alternatives(e.left), *_alternatives(e.right)]
    return [conjuncts(e)]


def _implied_added(shipped: Rule, added: Expr, arity: int, timeout: float) -> bool:
    """Whether the shipped guard implies ``added`` (a conjunct, or a disjunction of them).

    A disjunction is implied when one alternative is (every conjunct), or when Z3 shows the
    whole implied; the latter leaves ``fits_int64`` free, so this errs towards "stronger".
    """
    alternatives = _alternatives(added)
    if len(alternatives) == 1:
        return _implied(shipped, added, arity, timeout)
    if any(all(_implied(shipped, c, arity, timeout) for c in alt) for alt in alternatives):
        return True
    return _implied(shipped, added, arity, timeout)


def _measure(m: Mutant, shipped: Rule, args: argparse.Namespace) -> dict[str, object]:
    start = time.perf_counter()
    s = suggest_guard(
        m.rule,
        max_candidates=args.candidates,
        rlimit=args.rlimit or None,
        time_limit=args.time_limit,
    )
    row: dict[str, object] = {"rule": shipped.name, "mutant": m.description, "status": s.status}
    if s.status == "already-proven":
        row["verdict"] = "survived"
    elif s.status == "found":
        weak = all(_implied_added(shipped, a.expr, 2, 5.0) for a in s.added)
        row["verdict"] = "as-weak" if weak else "stronger"
        row["added"] = [a.text for a in s.added]
    else:
        row["verdict"] = "not-found"
        row["note"] = s.note
    row["candidates"] = s.candidates_tried
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measure; print one JSON line per mutant to stderr and a summary to stdout."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.suggest_guard")
    p.add_argument("--every", type=int, default=1, help="take every N-th guard mutant")
    p.add_argument("--sample", type=int, help="a uniform random sample of N guard mutants")
    p.add_argument("--seed", type=int, default=18, help="the sample's random seed")
    p.add_argument("--rows", type=Path, help="append each row to PATH as it completes")
    p.add_argument(
        "--resume", type=Path, help="reuse the rows in PATH (a --rows file) for their mutants"
    )
    p.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_MAX_CANDIDATES,
        help="candidate guards proven per mutant at most (the deterministic budget)",
    )
    p.add_argument(
        "--rlimit",
        type=int,
        default=DEFAULT_QUERY_RLIMIT,
        help="Z3 resource limit per query (0: none, then time bounds each query)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        help="wall-clock safety net per mutant, seconds (a search it stops says so)",
    )
    p.add_argument("--rule", action="append", default=[], help="only the rule NAME")
    p.add_argument("--out", type=Path, help="write the rows as JSON to PATH")
    args = p.parse_args(argv)
    work = [
        (m, r)
        for r in constraint_ruleset().rules
        if not args.rule or r.name in args.rule
        for m in mutants(r)
        if m.kind == "guard"
    ][:: args.every]
    population = len(work)
    if args.sample is not None and args.sample < population:
        # Sorted back into rule order, so that a partial run covers every file evenly.
        picked = sorted(random.Random(args.seed).sample(range(population), args.sample))
        work = [work[i] for i in picked]
    done: dict[tuple[object, object], dict[str, object]] = {}
    if args.resume and args.resume.exists():
        for line in args.resume.read_text().splitlines():
            old = json.loads(line)
            done[old["rule"], old["mutant"]] = old
    rows = []
    start = time.perf_counter()
    for m, r in work:
        row = done.get((r.name, m.description)) or _measure(m, r, args)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        if args.rows:
            with args.rows.open("a") as f:
                f.write(json.dumps(row) + "\n")
    counts = {
        v: sum(r["verdict"] == v for r in rows)
        for v in ("survived", "as-weak", "stronger", "not-found")
    }
    good = counts["survived"] + counts["as-weak"]
    total = len(rows)
    how = f"sample of {args.sample}, seed {args.seed}" if args.sample else f"every {args.every}"
    print(f"{total} of {population} guard mutants ({how}), {time.perf_counter() - start:.0f} s")
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    print(
        f"proven guard no stronger than the shipped one: {good}/{total} "
        f"= {100 * good / max(total, 1):.1f}%"
    )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
