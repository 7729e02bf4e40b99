"""The native (Cython-compiled) engine against the interpreted one, side by side.

    .venv/bin/python benchmarks/native.py                 # times, both engines interleaved
    .venv/bin/python benchmarks/native.py --callgrind     # + instruction counts

Needs a native build (``pip install -e .`` with a C compiler). The interpreted engine is
the same installation run with ``QUOREM_PURE_PYTHON=1``. Each *round* starts one worker
process per engine, in a new random order each round. A worker reads every
``--step``-th case of ``benchmarks/corpora/*.jsonl``, loads the shipped rules and every
dispatcher (not timed), then ``--repeats`` times parses every case afresh (not timed) and
times ``quorem.simplify`` on each (CPU time of the process), keeping each case's best.
Terms are interned weakly and dropped between repeats, so no repeat reuses a term. The
table gives, over cases, the median of each engine's time and the median of the
per-case ratio interpreted / native; rounds are summarised by their median.

It also reports bytes per interned term (``tracemalloc``: memory held by the terms of
the corpora, built once, divided by the number of terms they added to the intern table),
and the start-up time of a process to its first simplification.

``--callgrind`` counts instructions (``valgrind --tool=callgrind``, ``PYTHONHASHSEED=0``):
a worker that simplifies every case once minus one that only loads (the same imports,
corpora and rules), per engine. Unlike times, these do not depend on how busy the
machine is.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "benchmarks" / "corpora"
ENGINES: dict[str, dict[str, str]] = {"native": {}, "interpreted": {"QUOREM_PURE_PYTHON": "1"}}
BASELINES: dict[str, Path] = {}  # engine name -> tree on PYTHONPATH (--baseline)


Row = tuple[str, dict[str, tuple[int, int]], str]


def _cases(ladders: bool) -> list[dict[str, Any]]:
    """The corpus cases: the size ladders alone, or every other case."""
    out = []
    for path in sorted(CORPORA.glob("*.jsonl")):
        if path.stem.startswith("ladder_") == ladders:
            out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return out


def _row(case: dict[str, Any]) -> Row:
    bounds = {k: (v[0], v[1]) for k, v in case.get("vars", {}).items()}
    return case["expr"], bounds, case.get("semantics", "floor")


def _rows(step: int) -> list[Row]:
    """Every ``step``-th case, but the size ladders (timed apart: :func:`_ladder_rows`)."""
    return [_row(c) for c in _cases(ladders=False)][::step]


def _ladder_rows() -> list[Row]:
    """The size ladders' cases of size 1 000 and 10 000."""
    return [_row(c) for c in _cases(ladders=True) if c.get("size") in (1000, 10000)]


def _ladder_keys() -> list[str]:
    return [
        f"{c['family']} N={c['size']}"
        for c in _cases(ladders=True)
        if c.get("size") in (1000, 10000)
    ]


def _ladder_times(repeats: int) -> list[float]:
    """The size ladders at N = 1 000 and 10 000: each case's best of ``repeats``."""
    import quorem  # noqa: PLC0415

    ladder = []
    for text, bounds, sem in _ladder_rows():
        times = []
        for _ in range(repeats):
            t = quorem.parse(text, bounds, sem)
            t0 = time.process_time()
            quorem.simplify(t)
            times.append(time.process_time() - t0)
            del t
        ladder.append(min(times))
    return ladder


def _bytes_per_term(rows: list[Row]) -> tuple[float, int]:
    """Memory the terms of ``rows`` hold, built once, per term they add to the table."""
    import quorem  # noqa: PLC0415
    from quorem import term as term_module  # noqa: PLC0415

    gc.collect()
    before_terms = len(term_module._TABLE)
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    held = [quorem.parse(text, bounds, sem) for text, bounds, sem in rows]
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    added = len(term_module._TABLE) - before_terms
    del held
    return grown / max(added, 1), added


def _worker(args: argparse.Namespace) -> None:
    t_start = time.perf_counter()
    import quorem  # noqa: PLC0415  (timed: start-up)

    try:
        from quorem import _native  # noqa: PLC0415
    except ImportError:  # a --baseline tree from before the native build
        _native = None  # type: ignore[assignment]
    from quorem import term as term_module  # noqa: PLC0415
    from quorem.ops import Op  # noqa: PLC0415

    quorem.simplify(quorem.parse("(x*4 + y)//4", {"x": (0, 9), "y": (0, 3)}))
    startup = time.perf_counter() - t_start
    rows = _rows(args.step)
    rules = quorem.default_ruleset()
    for op in Op:  # every dispatcher made now, not in a timed repeat
        rules.dispatchers()[op]
        early = rules.early_dispatchers()
        if early is not None:
            early[op]
    compiled = _native.compiled_modules() if _native is not None else {}
    if args.repeats == 0:  # the callgrind baseline: imports, corpora and rules only
        print(json.dumps({"rows": len(rows), "compiled": compiled, "file": quorem.__file__}))
        return
    gc.collect()
    base = len(term_module._TABLE)
    best = [float("inf")] * len(rows)
    for _ in range(args.repeats):
        terms = [quorem.parse(text, bounds, sem) for text, bounds, sem in rows]
        gc.collect()
        for i, t in enumerate(terms):
            t0 = time.process_time()
            quorem.simplify(t)
            best[i] = min(best[i], time.process_time() - t0)
        del terms, t
        gc.collect()
        assert len(term_module._TABLE) == base, "terms survived a repeat"
    if args.no_memory:  # the callgrind run: simplification only
        print(json.dumps({"rows": len(rows), "compiled": compiled, "file": quorem.__file__}))
        return
    ladder = _ladder_times(args.repeats)
    bytes_per_term, added = _bytes_per_term(rows)
    print(
        json.dumps(
            {
                "rows": len(rows),
                "best": best,
                "ladder": ladder,
                "startup": startup,
                "bytes_per_term": bytes_per_term,
                "terms": added,
                "compiled": compiled,
                "file": quorem.__file__,
            }
        )
    )


def _baseline_tree(rev: str) -> Path:
    """The installed layout of git revision ``rev``, as a folder to put on PYTHONPATH."""
    scratch = Path(tempfile.mkdtemp(prefix="native-baseline."))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "engine", "rules"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    tree = scratch / "tree"
    if not (scratch / "engine" / "_root").is_dir():  # engine/ is the package quorem
        tree.mkdir()
        (tree / "quorem").symlink_to(scratch / "engine")
        # rules/ inside it, as installed (a revision's engine/ has no rules folder)
        (scratch / "engine" / "rules").symlink_to(scratch / "rules")
        return tree
    # Revisions before the re-layout: quorem was engine/_root, quorem.engine engine/.
    (tree / "quorem").mkdir(parents=True)
    for f in (scratch / "engine" / "_root").iterdir():
        (tree / "quorem" / f.name).symlink_to(f)
    (tree / "quorem" / "engine").symlink_to(scratch / "engine")
    (tree / "quorem" / "rules").symlink_to(scratch / "rules")
    return tree


def _run_worker(engine: str, argv: list[str], prefix: list[str] | None = None) -> dict[str, Any]:
    # Byte code written and read as an installed package has it (pip compiles it): a
    # start-up that compiles every module from source is not what users see.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("QUOREM_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(ENGINES[engine], PYTHONHASHSEED="0")
    if engine in BASELINES:
        env["PYTHONPATH"] = str(BASELINES[engine])
    cmd = [*(prefix or []), sys.executable, str(Path(__file__).resolve()), "--worker", *argv]
    out = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"worker failed ({engine}):\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    from quorem._native import NATIVE_MODULES  # noqa: PLC0415  (the driver's quorem)

    want = engine == "native"
    if engine in BASELINES and not result["file"].startswith(str(BASELINES[engine])):
        sys.exit(f"the {engine} worker imported {result['file']}, not the baseline tree")
    if engine not in BASELINES and set(result["compiled"]) != set(NATIVE_MODULES):
        sys.exit(f"the {engine} worker did not import the installed quorem")
    if any(v != want for v in result["compiled"].values()):
        sys.exit(f"the {engine} worker ran {result['compiled']}: is there a native build?")
    return result


def _callgrind_ir(engine: str, argv: list[str], scratch: Path) -> int:
    out = scratch / f"cg.{random.getrandbits(32)}.out"
    prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    _run_worker(engine, argv, prefix)
    match = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.MULTILINE)
    assert match, "no instruction count in the callgrind output"
    return int(match.group(1))


def _report(
    args: argparse.Namespace,
    per_round: dict[str, list[dict[str, Any]]],
    ratios: dict[str, list[float]],
) -> None:
    rows = per_round["native"][0]["rows"]
    print(
        f"{rows} cases (every {args.step}-th of benchmarks/corpora), {args.rounds} rounds, "
        f"best of {args.repeats} per case, CPU time"
    )
    print()
    print("| engine | median µs per case | start-up to first result, s | bytes per term |")
    print("|---|---|---|---|")
    for e in ENGINES:
        med = statistics.median(statistics.median(r["best"]) for r in per_round[e]) * 1e6
        up = statistics.median(r["startup"] for r in per_round[e])
        bpt = statistics.median(r["bytes_per_term"] for r in per_round[e])
        print(f"| {e} | {med:.1f} | {up:.2f} | {bpt:.0f} |")
    print()
    print()
    print("Size ladders: time at N = 10 000 over time at N = 1 000 (median over rounds)")
    print()
    keys = _ladder_keys()
    families = sorted({k.split(" ")[0] for k in keys})
    print("| engine | " + " | ".join(families) + " |")
    print("|---|" + "---|" * len(families))
    for e in ENGINES:
        cells = []
        for fam in families:
            per = []
            for r in per_round[e]:
                small = [t for k, t in zip(keys, r["ladder"], strict=True) if k == f"{fam} N=1000"]
                big = [t for k, t in zip(keys, r["ladder"], strict=True) if k == f"{fam} N=10000"]
                per.append(statistics.median(big) / statistics.median(small))
            cells.append(f"{statistics.median(per):.1f}")
        print(f"| {e} | " + " | ".join(cells) + " |")
    print()
    for e, out in ratios.items():
        print(
            f"{e} / native, median of per-case ratios: {statistics.median(out):.2f} "
            f"(rounds: {', '.join(f'{r:.2f}' for r in out)})"
        )


def main() -> None:
    """Run the comparison and print a markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--step", type=int, default=1, help="every N-th corpus case")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="also run git revision REV's engine (interpreted), e.g. the last before the build",
    )
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--callgrind-step", type=int, default=10)
    args = ap.parse_args()
    if args.worker:
        _worker(args)
        return
    if args.baseline:
        name = f"{args.baseline} (before)"
        ENGINES[name] = {}
        BASELINES[name] = _baseline_tree(args.baseline)
    argv = ["--step", str(args.step), "--repeats", str(args.repeats)]
    for e in ENGINES:  # warm-up: byte code and rule caches written, not measured
        _run_worker(e, ["--step", str(args.step), "--repeats", "0"])
    per_round: dict[str, list[dict[str, Any]]] = {e: [] for e in ENGINES}
    ratios: dict[str, list[float]] = {e: [] for e in ENGINES if e != "native"}
    for _ in range(args.rounds):
        order = list(ENGINES)
        random.shuffle(order)
        got = {e: _run_worker(e, argv) for e in order}
        for e in ENGINES:
            per_round[e].append(got[e])
        for e, out in ratios.items():
            pairs = zip(got[e]["best"], got["native"]["best"], strict=True)
            out.append(statistics.median(p / n for p, n in pairs if n > 0))
    _report(args, per_round, ratios)
    if args.callgrind:
        scratch = Path(tempfile.mkdtemp(prefix="native-cg."))
        cg = ["--step", str(args.callgrind_step), "--no-memory"]
        ir = {}
        for e in ENGINES:
            full = _callgrind_ir(e, [*cg, "--repeats", "1"], scratch)
            base = _callgrind_ir(e, [*cg, "--repeats", "0"], scratch)
            ir[e] = full - base
        n = len(_rows(args.callgrind_step))
        print()
        print(f"callgrind, {n} cases simplified once (worker minus a load-only worker):")
        for e in ENGINES:
            print(f"  {e}: {ir[e] / n / 1e3:.0f} k instructions per case")
        for e in ENGINES:
            if e != "native":
                print(f"  {e} / native: {ir[e] / ir['native']:.2f}")


if __name__ == "__main__":
    main()
