"""Which encoding of a rule's equivalence obligation both Z3 and cvc5 decide (issue 24).

For each shipped rule (or ``--rule NAME``, ``--family PREFIX``), semantics and arity
(1..``--max-arity``), the equivalence obligation is stated in each encoding variant:

* ``purify``: what ``quorem verify`` sends (purified division, quotient lemmas);
* ``native``: SMT-LIB ``div``/``mod`` terms instead of purification, no lemmas
  (``quorem verify --encoding native``);
* ``native-lemmas``: native, with the quotient lemmas;
* ``native-split``: one sub-obligation per sign of each symbolic name the rule divides
  by (``quorem.verify.split``), native, no lemmas: proven when every case is
  (``quorem verify --encoding native-split``);
  With instances of the lemmas of ``quorem.verify.lemmas`` (each proven by both solvers
  in tests/test_lemmas.py);
* ``native-split-plain``: the same without the lemma instances;
* ``native-split-lemmas``, ``purify-split``: the same split with the quotient lemmas
  of ``quorem.verify.division`` (Z3's), or of the purified statement.

Each (sub-)obligation is written once as SMT-LIB text; that same text is read by Z3 (run
with ``quorem verify``'s restart schedule) and by cvc5 (in a child process, one solver at
a time), each with ``--timeout`` seconds per query. An obligation counts as proven by a
solver only if the solver answered ``unsat`` on every one of its queries.

    python -m benchmarks.nonlinear --family nested-div --timeout 20
    python -m benchmarks.nonlinear --variant purify --variant native-split --jsonl out.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import z3

from quorem.rule import Rule
from quorem.verify.encode import encode_rule
from quorem.verify.jobs import load_rules
from quorem.verify.prove import Obligation, _query, check_query, obligations_of, split_queries
from quorem.verify.split import exhaustive, sign_cases, split_plan

__all__ = ["VARIANTS", "Variant", "main", "queries", "smt2_text"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One way to state an obligation."""

    name: str
    encoding: str
    split: bool
    lemmas: bool = True


VARIANTS: Final = {
    v.name: v
    for v in (
        Variant("purify", "purify", False),
        Variant("native", "native", False, lemmas=False),
        Variant("native-lemmas", "native", False),
        Variant("native-split", "native", True, lemmas=False),
        Variant("native-split-plain", "native", True, lemmas=False),
        Variant("native-split-lemmas", "native", True),
        Variant("purify-split", "purify", True),
    )
}


def queries(ob: Obligation, variant: Variant) -> list[tuple[str, list[z3.BoolRef]]]:
    """The queries (case label, assertions to refute) stating ``ob`` in ``variant``."""
    if variant.name == "native-split":
        # Exactly what quorem verify --encoding native-split sends.
        return [(_case_label(case), qs) for case, qs in split_queries(ob)]
    if variant.name == "native-split-plain":
        return [(_case_label(case), qs) for case, qs in split_queries(ob, lemmas=False)]
    cases: list[dict[str, str]] = [{}]
    if variant.split:
        cases = sign_cases(split_plan(ob.rule, ob.semantics, ob.arity))
        assert exhaustive(cases), cases
    out = []
    for case in cases:
        enc = encode_rule(
            ob.rule,
            ob.semantics,
            ob.arity,
            int64=ob.kind == "int64",
            encoding=variant.encoding,
            signs=case,
            lemmas=variant.lemmas,
        )
        premises, goal = _query(enc, ob.kind)
        out.append((_case_label(case), [*premises, z3.Not(goal)]))
    return out


def _case_label(case: dict[str, str]) -> str:
    return ",".join(f"{n}{rel}" for n, rel in case.items()) or "-"


# --------------------------------------------------------------------------- SMT-LIB
def _tokens(text: str) -> Iterator[str]:
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            yield c
            i += 1
        elif c == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif c == "|":
            j = text.index("|", i + 1)
            yield text[i : j + 1]
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "()":
                j += 1
            yield text[i:j]
            i = j


def _parse(text: str) -> list[Any]:
    stack: list[list[Any]] = [[]]
    for tok in _tokens(text):
        if tok == "(":
            stack.append([])
        elif tok == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    return stack[0]


_UNIT: Final = {"and": "true", "or": "false", "+": "0", "*": "1"}


def _standard(e: Any) -> Any:
    """Z3's SMT-LIB with the non-standard forms fixed: ``(+ x)``, ``(and)`` ..."""
    if isinstance(e, str):
        return e
    e = [_standard(x) for x in e]
    if e and isinstance(e[0], str) and e[0] in _UNIT:
        if len(e) == 1:
            return _UNIT[e[0]]
        if len(e) == 2:
            return e[1]
    return e


def _show(e: Any) -> str:
    return e if isinstance(e, str) else "(" + " ".join(_show(x) for x in e) + ")"


def smt2_text(assertions: Sequence[z3.BoolRef], comment: str = "") -> str:
    """Standalone standard SMT-LIB 2.6 for ``assertions`` (expected: unsat)."""
    s = z3.Solver()
    s.add(*assertions)
    body = [_show(_standard(x)) for x in _parse(s.to_smt2())]
    body = [x for x in body if not x.startswith(("(check-sat", "(set-info :status"))]
    head = [f"; {line}" for line in comment.splitlines()]
    return "\n".join([*head, "(set-logic ALL)", *body, "(check-sat)", ""])


# --------------------------------------------------------------------------- solvers
def run_z3(text: str, timeout: float) -> tuple[str, float]:
    """Z3's answer on the text, with quorem verify's restart schedule, and its seconds."""
    assertions = list(z3.parse_smt2_string(text))
    start = time.perf_counter()
    answer, _ = check_query(assertions, timeout)
    return str(answer), time.perf_counter() - start


def run_cvc5(path: Path, timeout: float) -> tuple[str, float]:
    """cvc5's answer on the file and its solving seconds, in a child process.

    The child (benchmarks/cvc5_worker.py) is killed after ``timeout`` + 10 s.
    """
    cmd = [sys.executable, "-m", "benchmarks.cvc5_worker", str(path), str(timeout)]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout + 10, check=False
        )
    except subprocess.TimeoutExpired:
        return "unknown(killed)", time.perf_counter() - start
    out = done.stdout.strip().splitlines()
    if done.returncode != 0 or len(out) < 2:
        return f"error({done.stderr.strip()[-200:]})", time.perf_counter() - start
    return out[-1], float(out[-2])


def _cvc5_worker(path: str, timeout: float) -> str:
    from benchmarks.cvc5_worker import solve  # noqa: PLC0415

    return solve(path, timeout)[0]


# --------------------------------------------------------------------------- harness
def _selected(rules: Sequence[Rule], names: Sequence[str], families: Sequence[str]) -> list[Rule]:
    if not names and not families:
        return list(rules)
    return [r for r in rules if r.name in names or any(r.name.startswith(f) for f in families)]


def _solve(
    solver: str, qs: list[tuple[str, list[z3.BoolRef]]], tmp: Path, timeout: float, ob: Obligation
) -> tuple[str, float, float]:
    """(answer, solver seconds summed, slowest query): ``unsat`` only if all refuted.

    Stops at the first query not refuted.
    """
    total = slowest = 0.0
    for i, (label, assertions) in enumerate(qs):
        text = smt2_text(assertions, f"{ob.rule.name} {ob.label} case {label}\nexpected: unsat")
        path = tmp / f"q{i}.smt2"
        path.write_text(text)
        answer, secs = run_z3(text, timeout) if solver == "z3" else run_cvc5(path, timeout)
        total += secs
        slowest = max(slowest, secs)
        if answer != "unsat":
            return f"{answer}@{label}", total, slowest
    return "unsat", total, slowest


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; print one line per obligation and variant and a family summary."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.nonlinear", description=__doc__)
    p.add_argument("--rule", action="append", default=[], help="a rule name (repeatable)")
    p.add_argument("--family", action="append", default=[], help="a rule-name prefix")
    p.add_argument("--variant", action="append", choices=sorted(VARIANTS), default=[])
    p.add_argument("--solver", action="append", choices=("z3", "cvc5"), default=[])
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per query")
    p.add_argument("--max-arity", type=int, default=2)
    p.add_argument("--semantics", action="append", default=[], help="floor, trunc, euclid")
    p.add_argument("--jsonl", type=Path, help="append one JSON row per obligation and variant")
    p.add_argument("--cvc5-worker", help=argparse.SUPPRESS)
    p.add_argument("--summary", type=Path, help="only summarize a --jsonl file")
    args = p.parse_args(argv)
    if args.cvc5_worker:
        print(_cvc5_worker(args.cvc5_worker, args.timeout))
        return 0
    if args.summary:
        recorded = [json.loads(line) for line in args.summary.read_text().splitlines() if line]
        solvers = args.solver or ["z3", "cvc5"]
        summary(recorded, solvers, args.family)
        return 0
    variants = [VARIANTS[v] for v in args.variant or ("purify", "native-split")]
    solvers = args.solver or ["z3", "cvc5"]
    rules = _selected(load_rules([]), args.rule, args.family)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for rule in rules:
            for ob in obligations_of(rule, args.max_arity):
                if ob.kind != "equivalence":
                    continue
                if args.semantics and (
                    ob.semantics is None or ob.semantics.value not in args.semantics
                ):
                    continue
                for v in variants:
                    qs = queries(ob, v)
                    row: dict[str, Any] = {
                        "rule": rule.name,
                        "obligation": ob.label,
                        "variant": v.name,
                        "queries": len(qs),
                    }
                    for solver in solvers:
                        answer, secs, slowest = _solve(solver, qs, tmp, args.timeout, ob)
                        row[solver] = answer
                        row[f"{solver}_s"] = round(secs, 2)
                        row[f"{solver}_max_s"] = round(slowest, 2)
                    rows.append(row)
                    cells = "  ".join(
                        f"{s}={row[s]:<10} {row[s + '_s']:6.2f}s (max {row[s + '_max_s']:5.2f})"
                        for s in solvers
                    )
                    print(
                        f"{rule.name:42} {ob.label:26} {v.name:18} n={len(qs):<3} {cells}",
                        flush=True,
                    )
                    if args.jsonl:
                        with args.jsonl.open("a") as f:
                            f.write(json.dumps(row) + "\n")
    summary(rows, solvers, args.family)
    return 0


def _family(name: str, families: Sequence[str]) -> str:
    """The longest ``--family`` prefix of ``name``, else the name itself."""
    return max((f for f in families if name.startswith(f)), key=len, default=name)


def summary(
    rows: Sequence[dict[str, Any]], solvers: Sequence[str], families: Sequence[str] = ()
) -> None:
    """Per family and variant: obligations proven by each solver, and their time."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((_family(row["rule"], families), row["variant"]), []).append(row)
    print("\nsummary (rule, variant: proven/obligations, solver seconds summed)")
    for (fam, variant), rs in sorted(groups.items()):
        cells = []
        for s in solvers:
            proven = sum(1 for r in rs if r.get(s) == "unsat")
            secs = sum(r.get(f"{s}_s", 0.0) for r in rs)
            cells.append(f"{s} {proven}/{len(rs)} {secs:7.1f}s")
        print(f"  {fam:42} {variant:18} " + "  ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
