"""Unsound rules are refused at use: mutants of the shipped rules, proven, then applied.

    python -m benchmarks.unsound_gate [--mutants 60] [--jobs 2] [--json PATH]

Each mutant (``quorem.verify.mutate``: a guard conjunct dropped, a literal moved by one,
the rule restated for another semantics) is written to a rules file of its own and
``quorem verify`` proves them all, as a rule author would (one command, the records
written beside the files). For every mutant that ``quorem verify`` shows unsound (its
counterexample replayed by the engine), the term of that counterexample is simplified
with the mutant's file:

* through the API (``RuleSet.from_files`` and ``quorem.simplify``), which must raise
  UnprovenRuleError naming the mutant as ``unsound``;
* through the command line (``quorem simplify TERM --var ... --rules FILE``), which
  must exit 1 and name the mutant;
* with the opt-in (``allow_unproven=True``), which applies it and must say so.

Prints one line per mutant and a summary; ``--json`` writes every row.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import quorem
from quorem.errors import UnprovenRuleError, UnprovenRuleWarning
from quorem.ops import Op, Semantics
from quorem.rulefile import parse_rules
from quorem.ruleset import RuleSet, default_ruleset
from quorem.verify.mutate import Mutant, mutants, rule_source
from quorem.verify.replay import replay
from quorem.walk import nodes

QUOREM = [sys.executable, "-m", "quorem"]


@dataclasses.dataclass
class Row:
    name: str
    origin: str
    change: str
    verdict: str = ""
    kind: str = ""
    api_refused: bool = False
    cli_refused: bool = False
    fired: bool = False
    opt_in_said: bool = False
    note: str = ""


def candidates(n: int) -> Iterator[tuple[str, Mutant]]:
    """Up to ``n`` mutants that parse, taken round-robin over the shipped rules."""
    pools = [mutants(r) for r in default_ruleset().rules]
    taken = 0
    depth = 0
    while taken < n and any(depth < len(p) for p in pools):
        for pool in pools:
            if depth >= len(pool) or taken >= n:
                continue
            m = pool[depth]
            name = f"mutant-{taken:03d}-{m.rule.name}"
            try:
                parse_rules(rule_source(m.rule, name))
            except quorem.QuoremError:
                continue  # a coefficient moved to 0 is not a rule the parser takes
            taken += 1
            yield name, m
        depth += 1


def _verify(files: Sequence[Path], jobs: int) -> dict[str, list[dict[str, Any]]]:
    """``quorem verify FILES --json``: the results per rule name (the records are written)."""
    cmd = [*QUOREM, "verify", *map(str, files), "--json", "--jobs", str(jobs), "--arity", "4"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"quorem verify failed ({done.returncode}): {done.stderr[-2000:]}")
    out: dict[str, list[dict[str, Any]]] = {}
    for r in json.loads(done.stdout)["rules"]:
        out.setdefault(r["name"], []).append(r)
    return out


def _var_options(term: quorem.Term) -> list[str]:
    out = []
    for n in nodes(term):
        if n.op is Op.VAR:
            name, lo, hi = n.arg
            out.append(f"--var={name}={'' if lo is None else lo}:{'' if hi is None else hi}")
    return sorted(set(out))


def check(row: Row, file: Path, results: list[dict[str, Any]]) -> None:
    """Fill ``row`` for a mutant ``quorem verify`` gave ``results`` for."""
    bad = [r for r in results if r["status"] == "unsound" and r.get("counterexample")]
    if not bad:
        row.verdict = "not unsound: " + ", ".join(sorted({r["status"] for r in results}))
        return
    first = bad[0]
    row.verdict = "unsound"
    (rule,) = parse_rules(file.read_text(), str(file))
    sem = Semantics(first["semantics"]) if first["semantics"] != "any" else None
    kind, _, k = str(first["obligation"]).partition(" k=")
    shown = replay(rule, sem, int(k or 0), first["counterexample"], int64=kind == "int64")
    row.kind = shown.kind
    term = shown.term
    if not shown.confirmed or term is None:
        row.note = f"counterexample not replayed: {shown.note}"
        return
    try:
        quorem.simplify(term, RuleSet.from_files([file]))
    except UnprovenRuleError as exc:
        row.api_refused = any(u.name == row.name and u.status == "unsound" for u in exc.rules)
    text = quorem.to_text(term, sem or Semantics.FLOOR)
    semantics = (sem or Semantics.FLOOR).value
    cmd = [*QUOREM, "simplify", *_var_options(term), "--semantics", semantics]
    cmd += ["--rules", str(file), "--", text]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    row.cli_refused = done.returncode == 1 and row.name in done.stderr and "unsound" in done.stderr
    allowed = RuleSet.from_files([file], allow_unproven=True)
    row.fired = row.name in quorem.explain(term, allowed).rules
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quorem.simplify(term, allowed)
    said = [w.message for w in caught if isinstance(w.message, UnprovenRuleWarning)]
    # With the opt-in the mutant is applied where it fires (another shipped rule may take
    # the term first), and the result says so exactly then.
    row.opt_in_said = row.fired == any(row.name in m.rules for m in said)


def run(n: int, jobs: int, folder: Path) -> list[Row]:
    """Write ``n`` mutants to ``folder``, prove them, and check each unsound one is refused."""
    rows: list[Row] = []
    files: list[Path] = []
    for name, m in candidates(n):
        file = folder / f"{name}.rules"
        file.write_text(rule_source(m.rule, name), encoding="utf-8")
        files.append(file)
        rows.append(Row(name, m.rule.name, f"{m.kind}: {m.description}"))
    found = _verify(files, jobs)
    for row, file in zip(rows, files, strict=True):
        check(row, file, found.get(row.name, []))
    return rows


def summary(rows: Sequence[Row]) -> dict[str, int]:
    unsound = [r for r in rows if r.verdict == "unsound"]
    return {
        "mutants": len(rows),
        "shown unsound": len(unsound),
        "refused by the API": sum(r.api_refused for r in unsound),
        "refused by the CLI (exit 1)": sum(r.cli_refused for r in unsound),
        "applied with the opt-in, and said so": sum(r.opt_in_said for r in unsound),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.unsound_gate", description=__doc__)
    p.add_argument("--mutants", type=int, default=90, help="mutants to write and prove")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--json", type=Path, help="write the rows and the summary here")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(args.mutants, args.jobs, Path(tmp))
    for r in rows:
        flags = f"api={r.api_refused} cli={r.cli_refused} opt-in={r.opt_in_said}"
        print(f"{r.name:<60} {r.verdict:<28} {flags} {r.note}")
    totals = summary(rows)
    print(json.dumps(totals))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        body = {"summary": totals, "rows": [dataclasses.asdict(r) for r in rows]}
        args.json.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    ok = all(r.api_refused and r.cli_refused for r in rows if r.verdict == "unsound")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
