"""How much of a removed rule family ``quorem discover`` proposes back, on the generated corpora.

For each family (a shipped rules file) given, the shipped rules without it simplify the
generated corpora (tiling, reshapes, transposes, strides: the cases with an ``ideal_ops``
of their own), and :func:`quorem.verify.discover.discover` proposes rules for what is
left. Reported per family, all measured in this run:

* the corpus's ``//`` and ``%`` with the shipped rules, without the family, and without
  it plus the discovered rules; *recovered* is the share of the family's effect the
  discovered rules bring back, ``(without - with_discovered) / (without - shipped)``;
* the cases at their ideal op count (``ideal_ops``) in each of the three;
* the rules kept, the candidates proven and tried, and the time.

::

    python -m benchmarks.discover_recovery                      # 20-divmod-identity.rules
    python -m benchmarks.discover_recovery --family 30-range.rules --patterns 10 --jobs 2
    python -m benchmarks.discover_recovery --executor dask://HOST:8786

Results go to ``benchmarks/results/discover_recovery.json``, one row per family (a run
replaces the rows of the families it ran), and the table to stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path
from typing import Any

import quorem
from quorem.cli.coverage import read_cases
from quorem.coverage.collect import Case
from quorem.rewrite import rewrite_given
from quorem.rules import rule_files
from quorem.ruleset import RuleSet
from quorem.verify.discover import Settings, discover, rules_text
from quorem.verify.executor import Executor, add_executor_option, open_executor

HERE = Path(__file__).parent
GENERATED = ("tiled", "transpose", "reshape_aba", "reshape_abc", "strided")
RESULTS = HERE / "results" / "discover_recovery.json"


def _corpus(names: list[str]) -> tuple[list[Case], list[int | None]]:
    cases: list[Case] = []
    ideal: list[int | None] = []
    for name in names:
        path = HERE / "corpora" / f"{name}.jsonl"
        got, bad = read_cases([str(path)], quorem.Semantics.FLOOR, io.StringIO())
        assert bad == 0, path
        cases += got
        ideal += [json.loads(line).get("ideal_ops") for line in path.open()]
    return cases, ideal


def _measure(cases: list[Case], ideal: list[int | None], rules: RuleSet) -> tuple[int, int]:
    """(// and % left, cases at their ideal op count)."""
    ops = at_ideal = 0
    for case, best in zip(cases, ideal, strict=True):
        left = quorem.count_divmod(rewrite_given(case.term, rules, case.given).term)
        ops += left
        at_ideal += best is not None and left <= best
    return ops, at_ideal


def run_family(
    family: str,
    cases: list[Case],
    ideal: list[int | None],
    settings: Settings,
    executor: Executor,
) -> dict[str, Any]:
    """Discover rules with ``family`` removed; the three measurements and what was kept."""
    shipped = RuleSet.shipped()
    without = RuleSet.from_files([str(p) for p in rule_files() if p.name != family])
    start = time.perf_counter()

    found = discover(cases, without, settings=settings, executor=executor)
    seconds = time.perf_counter() - start
    kept = quorem.rulefile.parse_rules(rules_text(found), "<discovered>")
    ops = {
        "shipped": _measure(cases, ideal, shipped),
        "without": _measure(cases, ideal, without),
        "discovered": _measure(cases, ideal, without.extend(kept, first=True)),
    }
    lost = ops["without"][0] - ops["shipped"][0]
    back = ops["without"][0] - ops["discovered"][0]
    return {
        "family": family,
        "cases": len(cases),
        "with_ideal": sum(1 for i in ideal if i is not None),
        "ops": {k: v[0] for k, v in ops.items()},
        "at_ideal": {k: v[1] for k, v in ops.items()},
        "recovered": round(back / lost, 4) if lost else None,
        "kept": [
            {
                "name": p.name,
                "doc": p.pattern + " == " + p.rewrite,
                "guard": p.guard,
                "semantics": p.semantics,
                "phase": p.phase,
                "removes": p.removes,
            }
            for p in found.kept
        ],
        "proven": found.proven,
        "tried": len(found.proposals),
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table and write the JSON results."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--family", action="append", default=[], help="a shipped rules file name")
    p.add_argument("--corpus", action="append", default=[], help=f"default: {', '.join(GENERATED)}")
    p.add_argument("--patterns", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    add_executor_option(p)
    args = p.parse_args(argv)
    cases, ideal = _corpus(args.corpus or list(GENERATED))
    settings = Settings(patterns=args.patterns, rounds=args.rounds)
    rows = []
    with open_executor(args.executor, args.jobs) as executor:
        for family in args.family or ["20-divmod-identity.rules"]:
            row = run_family(family, cases, ideal, settings, executor)
            rows.append(row)
            o, a = row["ops"], row["at_ideal"]
            print(
                f"{family}: {row['cases']} cases; // and % shipped {o['shipped']}, without "
                f"{o['without']}, with discovered {o['discovered']} (recovered "
                f"{row['recovered']}); at ideal {a['shipped']} / {a['without']} / "
                f"{a['discovered']} of {row['with_ideal']}; kept {len(row['kept'])}, proven "
                f"{row['proven']} of {row['tried']}; {row['seconds']} s",
                flush=True,
            )
            for k in row["kept"]:
                where = f"[{k['semantics']}, {k['phase']}]"
                print(f"  {k['name']} {where} {k['doc']}  removes {k['removes']}")
    # One row per family: a run replaces its families' rows and keeps the others.
    RESULTS.parent.mkdir(exist_ok=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    done = {r["family"] for r in rows}
    RESULTS.write_text(
        json.dumps([*(r for r in old if r["family"] not in done), *rows], indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
