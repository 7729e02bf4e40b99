"""Start-up of ``quorem hlo``: time to the first result, and one process per module.

::

    .venv/bin/python benchmarks/hlo_startup.py                 # mlp.opt.hlo, 7 runs each
    .venv/bin/python benchmarks/hlo_startup.py --repeat 11 --module FILE.hlo

Each figure is the median over ``--repeat`` fresh processes (the machine is noisy):

* ``python -c pass``: the interpreter alone, the floor of any command;
* as users run it, with byte code: ``PYTHONDONTWRITEBYTECODE`` is dropped from the
  environment unless ``--no-byte-code`` (with no ``.pyc`` written yet, every module of
  quorem is compiled from source at every start: ~100 ms here);
* ``--all --jsonl``, time to the first JSON line and to the exit, with the rule-code
  cache (``engine/__pycache__/quorem-rules.*.marshal``, written by the first run) and
  without it (``QUOREM_RULE_CACHE=0``: every rule compiled, as a first run does);
* one call on one computation (``--fused --computation NAME``), and with
  ``--baseline PYTHON`` the same call run by another tree's interpreter;
* one process per computation (as a script calling quorem per fusion would) against one
  ``--all`` process for the whole module.

It also checks that the ``--all`` path imports neither Z3 nor SymPy
(``python -X importtime``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "benchmarks" / "data" / "hlo" / "mlp.opt.hlo"


# What the `quorem` console script runs (quorem.cli.main has no __main__ block).
_MAIN = "import sys; from quorem.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _quorem(python: str | None = None) -> list[str]:
    return [python or sys.executable, "-c", _MAIN]


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds to the first line of output and to the exit of ``argv``."""
    start = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, text=True) as proc:
        assert proc.stdout is not None
        if not proc.stdout.readline() and argv[-1] != "pass":
            raise SystemExit(f"no output from: {' '.join(argv)}")
        first = time.perf_counter() - start
        proc.stdout.read()
        if proc.wait() != 0:
            raise SystemExit(f"failed: {' '.join(argv)}")
    return first, time.perf_counter() - start


def _median(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    runs = [_timed(argv, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _imports(module: Path, env: dict[str, str]) -> set[str]:
    argv = [sys.executable, "-X", "importtime", "-c", _MAIN]
    done = subprocess.run(
        [*argv, "hlo", str(module), "--all", "--jsonl"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    names = set()
    for line in done.stderr.splitlines():
        if "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def main(argv: list[str]) -> int:
    """Measure, print a Markdown table of medians (milliseconds)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--module", type=Path, default=DEFAULT)
    ap.add_argument(
        "--no-byte-code",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE if set (byte code and rule caches read, not written)",
    )
    ap.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="also time one call with another tree's interpreter (e.g. an older quorem)",
    )
    args = ap.parse_args(argv)
    warm = dict(os.environ)
    warm.pop("QUOREM_RULE_CACHE", None)
    if not args.no_byte_code:
        # As users run it: Python reads (and the first run writes) byte code, and the
        # rule caches are written as byte code is (see quorem.compiler.cache).
        warm.pop("PYTHONDONTWRITEBYTECODE", None)
    cold = {**warm, "QUOREM_RULE_CACHE": "0"}
    module = args.module.resolve()
    run_all = [*_quorem(), "hlo", str(module), "--all", "--jsonl"]
    _timed(run_all, warm)  # writes the cache if this engine has none yet

    imported = _imports(module, warm)
    heavy = sorted(imported & {"z3", "sympy"})
    rows = [("python -c pass", *_median([sys.executable, "-c", "pass"], warm, args.repeat))]
    rows.append(("--all --jsonl, rule cache", *_median(run_all, warm, args.repeat)))
    rows.append(("--all --jsonl, no rule cache", *_median(run_all, cold, args.repeat)))

    from quorem.hlo.parse import parse_hlo  # noqa: PLC0415

    names = [c.name for c in parse_hlo(module.read_text(), str(module)).computations]
    one_call = ["hlo", str(module), "--fused", "--computation", names[0], "--json"]
    rows.append(
        (
            f"one call (--fused --computation {names[0]})",
            *_median([*_quorem(), *one_call], warm, args.repeat),
        )
    )
    if args.baseline:
        rows.append(
            (
                "the same call, --baseline",
                *_median([*_quorem(args.baseline), *one_call], warm, args.repeat),
            )
        )
    per_process = []
    for _ in range(max(1, args.repeat // 3)):
        start = time.perf_counter()
        for name in names:
            cmd = [*_quorem(), "hlo", str(module), "--fused", "--computation", name, "--json"]
            subprocess.run(cmd, env=warm, capture_output=True, check=True)
        per_process.append(time.perf_counter() - start)
    one = [_timed(run_all, warm)[1] for _ in range(max(1, args.repeat // 3))]

    print(f"module {module.relative_to(ROOT)}: {len(names)} computations")
    print(f"Z3 or SymPy imported on the --all path: {', '.join(heavy) or 'neither'}")
    print()
    print("| run | first result (ms) | exit (ms) |")
    print("|---|---:|---:|")
    for label, first, end in rows:
        print(f"| {label} | {first * 1000:.0f} | {end * 1000:.0f} |")
    print()
    print("| whole module | ms |")
    print("|---|---:|")
    each = statistics.median(per_process) * 1000
    print(f"| one process per computation ({len(names)}) | {each:.0f} |")
    print(f"| one `--all` process | {statistics.median(one) * 1000:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
