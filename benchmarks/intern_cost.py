"""What interning costs: building and simplifying the corpora with variants of term.py.

    .venv/bin/python benchmarks/intern_cost.py                      # default variants
    .venv/bin/python benchmarks/intern_cost.py --variant old=dcfbd8c --variant new=WORK
    .venv/bin/python benchmarks/intern_cost.py --locks --callgrind  # + lock variants, Ir

Each variant is this working tree with ``engine/term.py`` replaced: ``NAME=REV`` takes
the file at git revision ``REV`` (``WORK``: the working tree's file). ``--locks`` adds two
variants made from the working tree's file, to price a lock against the lock-free
``dict.setdefault`` the module uses: ``lock-insert`` enters a new term under a
``threading.Lock`` (lookup of an existing term lock-free, checked again under the lock),
``lock-all`` also takes the lock for every lookup.

One worker process per variant and round, variants in a new random order every round
(the host's fast and slow phases then hit all of them alike). A worker parses every
expression of ``benchmarks/corpora/*.jsonl`` (*build*), then simplifies every
``--simplify-step``-th of those terms with the default rules, compiled beforehand
(*simplify*), then drops every term and checks the intern table is back to where it
started, so every repeat builds every term anew; a garbage collection (not timed)
precedes each phase, so that neither pays for the other's. It reports the best of
``--repeats``,
in CPU time of the process (``time.process_time``: on a machine shared with other jobs,
wall time mostly measures the wait for a CPU).
The table gives, per variant, the median over rounds and the median over rounds of the
ratio to the first variant in the same round.

``--callgrind`` also counts instructions (``valgrind --tool=callgrind``, hash seed fixed)
of one build of every ``--callgrind-step``-th expression, as a worker that builds minus
one that only imports and reads the corpora: unlike times, this does not depend on how
busy the machine is.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "benchmarks" / "corpora"

# The lines of term.py the lock variants replace: the lock-free insertion (three
# functions) and the lookup (the same three). Asserted present, so a change to term.py
# that moves them fails loudly instead of measuring the unchanged file.
_INSERT = """    got = _SETDEFAULT(key, ref)  # atomic find-or-insert: see _lost_race
    return term if got is ref else _lost_race(key, ref, got)
"""
_LOCKED_INSERT = """    with _BENCH_LOCK:
        got = _DATA.get(key)
        if got is not None:
            won = got()
            if won is not None:
                return won
        _DATA[key] = ref
    return term
"""
_LOOKUP = """    ref = _DATA.get(key)
    if ref is not None:
"""
_LOCKED_LOOKUP = """    with _BENCH_LOCK:
        ref = _DATA.get(key)
    if ref is not None:
"""


def _lock_variant(source: str, *, lookups: bool) -> str:
    """term.py with a lock around insertion (and lookups): see the module docstring."""
    assert source.count(_INSERT) == 3, "term.py's insertion moved: update intern_cost.py"
    out = source.replace(_INSERT, _LOCKED_INSERT)
    if lookups:
        assert out.count(_LOOKUP) >= 3, "term.py's lookup moved: update intern_cost.py"
        out = out.replace(_LOOKUP, _LOCKED_LOOKUP)
    return out.replace(
        "\ndef _lost_race(",
        "\nimport threading\n\n_BENCH_LOCK = threading.Lock()\n\n\ndef _lost_race(",
    )


def _mirror(term_source: str, where: Path) -> Path:
    """A package tree importing as ``quorem``: this tree's files, ``term_source`` as term.py.

    The layout of the installed package (quorem -> engine/, with rules/ and verify/ in
    it), made of symbolic links; term.py is a copy.
    """
    pkg = where / "quorem"
    pkg.mkdir(parents=True)
    for f in (ROOT / "engine").iterdir():
        if f.name not in ("term.py", "__pycache__"):
            (pkg / f.name).symlink_to(f)
    if "def check_one_name(" not in term_source:  # a term.py older than api.py's call
        term_source += "\n\ndef check_one_name(term):\n    pass\n"
    (pkg / "term.py").write_text(term_source)
    for name in ("rules", "verify"):
        (pkg / name).symlink_to(ROOT / name)
    return where


def _term_source(rev: str) -> str:
    if rev == "WORK":
        return (ROOT / "engine" / "term.py").read_text()
    return subprocess.run(
        ["git", "show", f"{rev}:engine/term.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


# --------------------------------------------------------------------------- worker


def _rows(step: int) -> list[tuple[str, dict[str, tuple[int, int]], str]]:
    rows = []
    for path in sorted(CORPORA.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows.append(
                    (r["expr"], {k: (v[0], v[1]) for k, v in r["vars"].items()}, r["semantics"])
                )
    return rows[::step]


def _worker(args: argparse.Namespace) -> None:
    import quorem  # noqa: PLC0415  (from the mirror on PYTHONPATH)
    from quorem import term as term_module  # noqa: PLC0415
    from quorem.ops import Op  # noqa: PLC0415

    assert term_module.__file__ is not None
    assert Path(term_module.__file__).parents[2] == Path(os.environ["PYTHONPATH"]), "not the mirror"
    rows = _rows(args.step)
    if args.repeats == 0:  # the callgrind baseline: imports and corpora only
        print(json.dumps({"rows": len(rows)}))
        return
    if args.simplify_step:
        rules = quorem.default_ruleset()
        for op in Op:  # compile every dispatcher now, not in a timed repeat
            rules.dispatchers()[op]
            early = rules.early_dispatchers()
            if early is not None:
                early[op]
    gc.collect()
    base = len(term_module._TABLE)
    build: list[float] = []
    simp: list[float] = []
    for _ in range(args.repeats):
        t0 = time.process_time()
        terms = [quorem.parse(text, bounds, sem) for text, bounds, sem in rows]
        t1 = time.process_time()
        gc.collect()  # not timed: the building's garbage is not the simplifier's
        t1 = time.process_time()
        done = (
            [quorem.simplify(t) for t in terms[:: args.simplify_step]] if args.simplify_step else []
        )
        t2 = time.process_time()
        build.append(t1 - t0)
        simp.append(t2 - t1)
        del terms, done
        gc.collect()
        assert len(term_module._TABLE) == base, "terms survived a repeat"
    print(json.dumps({"rows": len(rows), "build": min(build), "simplify": min(simp)}))


# --------------------------------------------------------------------------- driver


def _run_worker(tree: Path, argv: list[str], prefix: list[str] | None = None) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    cmd = [*(prefix or []), sys.executable, str(Path(__file__).resolve()), "--worker", *argv]
    out = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"worker failed ({tree}):\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _callgrind_ir(tree: Path, argv: list[str], scratch: Path) -> int:
    """Instructions executed by one worker under callgrind."""
    out = scratch / f"cg.{random.getrandbits(32)}.out"
    prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    _run_worker(tree, argv, prefix)
    match = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.MULTILINE)
    assert match, "no instruction count in the callgrind output"
    return int(match.group(1))


def _table(names: list[str], per_round: list[dict[str, dict[str, Any]]], phase: str) -> list[str]:
    base = names[0]
    lines = [
        f"| {phase} | median CPU s | range s | ratio to {base} (median of rounds) |",
        "|---|---:|---:|---:|",
    ]
    for n in names:
        times = [r[n][phase] for r in per_round]
        ratios = [r[n][phase] / r[base][phase] for r in per_round]
        lines.append(
            f"| {n} | {statistics.median(times):.4f} | {min(times):.4f}-{max(times):.4f} "
            f"| {statistics.median(ratios):.4f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print its tables (Markdown); see the module docstring."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", action="append", default=[], metavar="NAME=REV")
    p.add_argument("--locks", action="store_true", help="add lock-insert and lock-all")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--step", type=int, default=1, help="every STEP-th expression")
    p.add_argument("--simplify-step", type=int, default=4, help="0: no simplify phase")
    p.add_argument("--callgrind", action="store_true")
    p.add_argument("--callgrind-step", type=int, default=8)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args)
        return 0
    specs = [v.split("=", 1) for v in args.variant] or [["WORK", "WORK"]]
    sources = {name: _term_source(rev) for name, rev in specs}
    if args.locks:
        work = _term_source("WORK")
        sources["lock-insert"] = _lock_variant(work, lookups=False)
        sources["lock-all"] = _lock_variant(work, lookups=True)
    names = list(sources)
    scratch = Path(tempfile.mkdtemp(prefix="intern_cost."))
    try:
        trees = {n: _mirror(src, scratch / f"v{i}") for i, (n, src) in enumerate(sources.items())}
        worker_argv = [
            f"--repeats={args.repeats}",
            f"--step={args.step}",
            f"--simplify-step={args.simplify_step}",
        ]
        per_round: list[dict[str, dict[str, Any]]] = []
        for r in range(args.rounds):
            order = random.sample(names, len(names))
            per_round.append({n: _run_worker(trees[n], worker_argv) for n in order})
            print(f"round {r + 1}/{args.rounds}: {order}", file=sys.stderr)
        rows = per_round[0][names[0]]["rows"]
        print(
            f"{rows} expressions built; every {args.simplify_step}th simplified; "
            f"best of {args.repeats} per worker; {args.rounds} rounds, interleaved\n"
        )
        print("\n".join(_table(names, per_round, "build")) + "\n")
        if args.simplify_step:
            print("\n".join(_table(names, per_round, "simplify")) + "\n")
        if args.callgrind:
            if shutil.which("valgrind") is None:
                print("valgrind is not installed: no instruction counts")
                return 0
            cg = [f"--step={args.callgrind_step}", "--simplify-step=0"]
            ir = {}
            for n in names:
                built = _callgrind_ir(trees[n], [*cg, "--repeats=1"], scratch)
                imported = _callgrind_ir(trees[n], [*cg, "--repeats=0"], scratch)
                ir[n] = built - imported
            print(
                f"| callgrind: build every {args.callgrind_step}th expression once | Ir | ratio |"
            )
            print("|---|---:|---:|")
            for n in names:
                print(f"| {n} | {ir[n]:,} | {ir[n] / ir[names[0]]:.4f} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
