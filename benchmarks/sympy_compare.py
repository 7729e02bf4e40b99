"""How SymPy's own ``simplify`` fares on quorem's corpora, next to quorem.

    python -m benchmarks.sympy_compare --out benchmarks/results [--every 10] [--timeout 20]

Each case (the seed examples, and one expression in ``--every`` of each generated family,
floor and truncating)
is parsed by quorem; quorem's time is ``quorem.simplify`` of a fresh parse (median of 3).
The same term goes to SymPy through :func:`quorem.to_sympy` (integer symbols,
non-negative where the bounds say so; SymPy cannot hold upper bounds) and SymPy's time
is ``sympy.simplify`` of it after clearing SymPy's cache, once, stopped after
``--timeout`` seconds. Divisions are ``floor`` and ``Mod`` nodes counted as a tree (for
quorem, ``//`` and ``%``). Every SymPy result is evaluated on up to 64 points of the box
and compared with quorem's evaluation of the input (every number put in at once with
``xreplace``: SymPy's ``subs`` can compute wrong values): a difference is a non-equivalent
output. Writes ``sympy.md`` and ``sympy.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import signal
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sympy

import quorem
from quorem.errors import EvaluationError, QuoremError

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "benchmarks" / "data" / "seed_cases.jsonl"
FAMILIES = ("reshape_aba", "reshape_abc", "strided", "tiled", "transpose")


class _TimeoutError(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _TimeoutError


def cases(every: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(family, case): the seeds, and of each generated family one expression in
    ``every``, with both its floor and its truncating case."""
    for line in SEEDS.read_text().splitlines():
        yield "seeds", json.loads(line)
    for fam in FAMILIES:
        path = ROOT / "benchmarks" / "corpora" / f"{fam}.jsonl"
        # Lines alternate floor and trunc: take a pair (both semantics) every 2*every.
        for i, line in enumerate(path.read_text().splitlines()):
            if i % (2 * every) in (0, 1):
                yield fam, json.loads(line)


def sympy_divisions(e: Any) -> int:
    """``floor`` and ``Mod`` nodes of a SymPy expression, as a tree."""
    return sum(isinstance(n, sympy.floor | sympy.Mod) for n in sympy.preorder_traversal(e))


def _bounds(case: dict[str, Any]) -> dict[str, tuple[int | None, int | None]]:
    return {k: (v[0], v[1]) for k, v in case["vars"].items()}


def _points(
    box: dict[str, tuple[int | None, int | None]], n: int, rng: random.Random
) -> list[dict[str, int]]:
    out = []
    for _ in range(n):
        out.append(
            {
                k: rng.randint(lo if lo is not None else -100, hi if hi is not None else 100)
                for k, (lo, hi) in box.items()
            }
        )
    return out


def measure(fam: str, case: dict[str, Any], timeout: float, rng: random.Random) -> dict[str, Any]:
    """One case: quorem's and SymPy's division counts and times, and SymPy's correctness."""
    box = _bounds(case)
    sem = case.get("semantics", "floor")
    term = quorem.parse(case["expr"], box, sem)
    times = []
    for _ in range(3):
        fresh = quorem.parse(case["expr"], box, sem)
        t0 = time.perf_counter()
        out = quorem.simplify(fresh)
        times.append(time.perf_counter() - t0)
        del fresh
    row: dict[str, Any] = {
        "family": fam,
        "id": case.get("id"),
        "semantics": sem,
        "ops_before": quorem.count_divmod(term),
        "quorem_ops": quorem.count_divmod(out),
        "quorem_us": statistics.median(times) * 1e6,
    }
    try:
        expr = quorem.to_sympy(term)
    except QuoremError as exc:
        return {**row, "sympy_status": f"no SymPy form: {exc}"}
    sympy.core.cache.clear_cache()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    t0 = time.perf_counter()
    try:
        simple = sympy.simplify(expr)
        seconds = time.perf_counter() - t0
    except _TimeoutError:
        return {**row, "sympy_status": "timeout"}
    except Exception as exc:
        return {**row, "sympy_status": f"error: {type(exc).__name__}"}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    wrong = 0
    for p in _points(box, 64, rng):
        try:
            expected = quorem.evaluate(term, p)
        except EvaluationError:
            continue
        try:
            # xreplace puts every number in at once; subs goes one symbol at a time and
            # SymPy's rewriting of the partly numeric Mods on the way can be wrong (it
            # gives 20 for Mod(Mod(i0, 4) + 4*Mod(2*i1 + 4*i2 + floor(i0/4), 8), 8) at
            # i0=4, i1=0, i2=1, whose value is 4).
            got = simple.xreplace({s: sympy.Integer(p[s.name]) for s in simple.free_symbols})
            if int(got) != expected:
                wrong += 1
        except (TypeError, ValueError, ZeroDivisionError):
            wrong += 1
    return {
        **row,
        "sympy_status": "ok" if not wrong else "non-equivalent",
        "sympy_ops_before": sympy_divisions(expr),
        "sympy_ops": sympy_divisions(simple),
        "sympy_us": seconds * 1e6,
        "wrong_points": wrong,
    }


def render(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The markdown page of a run."""
    lines = [
        "# SymPy's simplify next to quorem",
        "",
        f"{meta['date']}; Python {meta['python']}, SymPy {meta['sympy']}, quorem {meta['quorem']}; "
        f"{meta['machine']}. Command: `{meta['command']}`.",
        "",
        "Divisions (`//` `%`, SymPy's `floor` and `Mod`) summed over the cases; times are medians "
        "over the cases, in µs (machine-dependent; the ratio is per case, median).",
        "",
        "| family | cases | before | quorem after | SymPy after (its results) | quorem µs "
        "| SymPy µs | SymPy / quorem time | SymPy timeouts | SymPy errors "
        "| SymPy non-equivalent |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    fams = ["seeds", *FAMILIES, "all"]
    for fam in fams:
        rs = [r for r in rows if fam in ("all", r["family"])]
        if not rs:
            continue
        ok = [r for r in rs if r["sympy_status"] in ("ok", "non-equivalent")]
        ratio = [r["sympy_us"] / r["quorem_us"] for r in ok]
        lines.append(
            f"| {fam} | {len(rs)} | {sum(r['ops_before'] for r in rs)} | "
            f"{sum(r['quorem_ops'] for r in rs)} | {sum(r['sympy_ops'] for r in ok)} ({len(ok)}) | "
            f"{statistics.median(r['quorem_us'] for r in rs):.0f} | "
            f"{statistics.median(r['sympy_us'] for r in ok) if ok else float('nan'):.0f} | "
            f"{statistics.median(ratio) if ratio else float('nan'):.0f} | "
            f"{sum(r['sympy_status'] == 'timeout' for r in rs)} | "
            f"{sum(r['sympy_status'].startswith(('error', 'no SymPy')) for r in rs)} | "
            f"{sum(r['sympy_status'] == 'non-equivalent' for r in rs)} |"
        )
    bad = [r for r in rows if r["sympy_status"] == "non-equivalent"]
    if bad:
        lines += ["", "SymPy outputs that differ from their input on the box:", ""]
        lines += [f"- `{r['id']}` ({r['wrong_points']} of 64 points)" for r in bad[:20]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and write ``sympy.md`` and ``sympy.json`` under ``--out``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.sympy_compare")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    p.add_argument("--every", type=int, default=10, help="every N-th generated case")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per SymPy call")
    args = p.parse_args(argv)
    rng = random.Random(0)
    rows = []
    for fam, case in cases(args.every):
        rows.append(measure(fam, case, args.timeout, rng))
        print(f"{fam} {case.get('id')}: {rows[-1]['sympy_status']}", flush=True)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "sympy": sympy.__version__,
        "quorem": "0.1.0",
        "machine": f"{platform.machine()}, {platform.system()}",
        "command": "python -m benchmarks.sympy_compare "
        f"--every {args.every} --timeout {args.timeout:g}",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sympy.json").write_text(json.dumps({"meta": meta, "cases": rows}, indent=1))
    (args.out / "sympy.md").write_text(render(rows, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
