"""How much of ``quorem verify`` does cvc5 confirm, and at what cost?

Runs ``quorem verify --confirm cvc5 --no-cache --json`` on the equivalence and int64
obligations of the shipped rules (or of the rules ``--rule`` names: a name or a
shell-style pattern, repeatable, ``--rule 'congruence-*'``) and prints, per family —
the rules file (default) or each rule (``--group rule``) — how many obligations cvc5
confirmed (``z3+cvc5``), left to Z3 alone (``z3 only``: unknown or timed out at
``--confirm-timeout``), disagreed on, or did not check (Z3 did not decide them by one
query), with Z3's and cvc5's time. The obligations left to Z3 alone are listed after.

``--obligation KIND`` (repeatable) runs other kinds (``termination``,
``termination-context``, ``interval``: their confirmation checks every query the search
rested on); ``--report FILE`` summarizes a report already made instead of running.

``--baseline`` first runs the same command without ``--confirm`` and reports the
run times side by side (the issue keeps ``--confirm`` off by default if it costs more
than twice the cold time). ``--out FILE`` writes the per-obligation rows as JSON.

    python -m benchmarks.confirm --jobs 2 --rule 'congruence-*' --rule 'nested-div*'
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quorem.verify.jobs import load_rules

VERDICTS = ("z3+cvc5", "z3 only", "disagree", "no query", "not checked")


def _selected(patterns: Sequence[str]) -> list[str]:
    names = [r.name for r in load_rules([])]
    if not patterns:
        return names
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def _verify(names: Sequence[str], args: argparse.Namespace, confirm: bool) -> tuple[Any, float]:
    argv = [sys.executable, "-m", "quorem", "verify", "--no-cache", "--json"]
    for kind in args.obligation or ("equivalence", "int64"):
        argv += ["--obligation", kind]
    argv += ["--jobs", str(args.jobs), "--timeout", str(args.timeout), "--arity", str(args.arity)]
    if confirm:
        argv += ["--confirm", "cvc5", "--confirm-timeout", str(args.confirm_timeout)]
    if args.rule:  # else every rule, and the interval proofs, which belong to none
        for n in names:
            argv += ["--rule", n]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"quorem verify failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout), seconds


def _family(r: dict[str, Any], group: str) -> str:
    return str(r["name"]) if group == "rule" else Path(r["file"]).stem


def _verdict(r: dict[str, Any]) -> str:
    c = r.get("confirmation")
    return str(c["verdict"]) if c else "not checked"


def _load_report(path: Path) -> Any:
    """The JSON report at ``path``, or None (and why, on stderr) when it is not one."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"--report {path}: {exc}", file=sys.stderr)
        return None
    if not isinstance(report, dict) or not isinstance(report.get("rules"), list):
        print(f"--report {path}: not a quorem verify --json report", file=sys.stderr)
        return None
    return report


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.confirm", description=__doc__)
    p.add_argument("--rule", action="append", default=[], help="a rule name or pattern")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=20.0, help="Z3's seconds per query")
    p.add_argument("--confirm-timeout", type=float, default=20.0, help="cvc5's seconds")
    p.add_argument("--arity", type=int, default=4)
    p.add_argument("--group", choices=("file", "rule"), default="file")
    p.add_argument("--baseline", action="store_true", help="also run without --confirm")
    p.add_argument("--out", type=Path, help="write the per-obligation rows as JSON")
    p.add_argument(
        "--obligation",
        action="append",
        default=[],
        help="an obligation kind to run (repeatable; default equivalence and int64)",
    )
    p.add_argument(
        "--report",
        type=Path,
        help="summarize this `quorem verify --confirm cvc5 --json` report instead of running",
    )
    args = p.parse_args(argv)
    names = _selected(args.rule)
    if not names:
        print("no rule matches", file=sys.stderr)
        return 2
    baseline = None
    if args.report:
        report, wall = _load_report(args.report), 0.0
        if report is None:
            return 2
    else:
        baseline = _verify(names, args, confirm=False)[1] if args.baseline else None
        report, wall = _verify(names, args, confirm=True)
    rows = report["rules"]
    if not rows:
        print("no results (interval proofs run only without --rule)", file=sys.stderr)
        return 2
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    z3_time: collections.Counter[str] = collections.Counter()
    cvc5_time: collections.Counter[str] = collections.Counter()
    for r in rows:
        family = _family(r, args.group)
        counts[family][_verdict(r)] += 1
        z3_time[family] += r["seconds"]
        if r.get("confirmation"):
            cvc5_time[family] += r["confirmation"]["seconds"]
    width = max(len(f) for f in counts)
    head = f"{'family':<{width}} " + " ".join(f"{v:>11}" for v in VERDICTS)
    print(f"{head} {'z3 s':>8} {'cvc5 s':>8}")
    for family in sorted(counts):
        cells = " ".join(f"{counts[family][v]:>11}" for v in VERDICTS)
        print(f"{family:<{width}} {cells} {z3_time[family]:>8.1f} {cvc5_time[family]:>8.1f}")
    total = sum(counts.values(), collections.Counter())
    cells = " ".join(f"{total[v]:>11}" for v in VERDICTS)
    print(f"{'total':<{width}} {cells} {z3_time.total():>8.1f} {cvc5_time.total():>8.1f}")
    print(
        f"\n{len(rows)} obligations of {len(names)} rules, --jobs {args.jobs}: "
        f"Z3 {z3_time.total():.1f} s, cvc5 {cvc5_time.total():.1f} s "
        f"(at most {args.confirm_timeout:g} s a query); wall {wall:.1f} s with --confirm"
        + (f", {baseline:.1f} s without" if baseline is not None else "")
    )
    alone = [r for r in rows if _verdict(r) in ("z3 only", "disagree")]
    if alone:
        print("\nnot confirmed:")
    for r in alone:
        c = r["confirmation"]
        print(
            f"  {c['verdict']:<8} {r['name']} [{r['semantics']} {r['obligation']}] "
            f"z3 {r['seconds']:.2f}s, cvc5 {c['answer']} {c['seconds']:.2f}s {c['reason']}"
        )
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
