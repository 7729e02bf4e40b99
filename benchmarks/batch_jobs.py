"""``--jobs``: ``quorem simplify --batch`` and ``quorem coverage`` in 1 and N processes (issue 36).

::

    .venv/bin/python -m benchmarks.batch_jobs                     # 3000 lines, jobs 1 and 2, 5 runs
    .venv/bin/python -m benchmarks.batch_jobs --lines 6000 --jobs 1 2 4 --repeat 7 --coverage

The batch is generated (``--seed``): index arithmetic as tensor compilers write it
(flattened indices split by ``//`` and ``%``, recombined, offset, compared), under the
three semantics, over bounded variables. Each figure is the wall time of a whole
command in a fresh process (start-up, rule loading and the workers' start included),
the median over ``--repeat`` runs; the job counts are run in turn within each round, so
a load change on the machine hits them alike. The outputs of every job count are
checked to be the same (the ``seconds`` fields aside).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MAIN = "import sys; from quorem.cli.main import main; sys.exit(main(sys.argv[1:]))"
_SEMANTICS = ("floor", "trunc", "euclid")


def _index(rng: random.Random, names: list[str], dims: dict[str, int]) -> str:
    """A flattened index over some of ``names``: ``i*S1 + j*S2 + k`` (row-major strides)."""
    chosen = rng.sample(names, rng.randint(2, len(names)))
    stride = 1
    terms = []
    for name in reversed(chosen):
        terms.append(f"{name}*{stride}" if stride != 1 else name)
        stride *= dims[name]
    return " + ".join(reversed(terms))


def _radix_split(index: str, dims: list[int]) -> str:
    """``index`` split into its mixed-radix digits and put back together: equal to it."""
    parts = []
    stride = 1
    for dim in reversed(dims):
        digit = f"(({index})//{stride})%{dim}" if stride != 1 else f"({index})%{dim}"
        parts.append(f"({digit})*{stride}" if stride != 1 else digit)
        stride *= dim
    return " + ".join(reversed(parts))


def generated_line(rng: random.Random, n: int) -> dict[str, object]:
    """One batch line: a random index expression with its variables' bounds."""
    names = ["i", "j", "k", "l"][: rng.randint(2, 4)]
    dims = {name: rng.choice([2, 3, 4, 6, 8, 16, 32]) for name in names}
    index = _index(rng, names, dims)
    d = rng.choice([2, 3, 4, 8, 16, 64])
    shape = rng.randrange(6)
    if shape == 0:
        radix = [rng.choice([2, 3, 4, 8]) for _ in range(rng.randint(2, 4))]
        expr = _radix_split(index, radix)
    elif shape == 1:
        expr = f"(({index})//{d})%{rng.choice([2, 4, 8])} + ({index} + {rng.randint(1, 9)})//{d}"
    elif shape == 2:
        expr = f"((({index})%{d * 4})//{d})*{d} + ({index})%{d}"
    elif shape == 3:
        expr = f"({index})//{d} < {rng.randint(1, 40)} and ({index})%{d} < {rng.randint(1, d)}"
    elif shape == 4:
        expr = f"max(({index})//{d}, {rng.randint(0, 5)}) + min(({index})%{d}, {d - 1})"
    else:
        expr = f"((({index})//{d})*{d} + ({index})%{d})//{rng.choice([1, 2, 4])}"
    return {
        "id": f"gen-{n:05d}",
        "vars": {name: [0, dims[name] - 1] for name in names},
        "expr": expr,
        "semantics": rng.choice(_SEMANTICS),
    }


def write_batch(path: Path, lines: int, seed: int) -> None:
    """``lines`` generated batch lines in ``path``."""
    rng = random.Random(seed)
    text = "".join(json.dumps(generated_line(rng, n)) + "\n" for n in range(lines))
    path.write_text(text, encoding="utf-8")


def _cpu() -> float:
    """CPU seconds (user + system) of the ended child processes, theirs included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``quorem ARGV`` in a fresh process (its workers' CPU
    included), and its output."""
    cpu = _cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"quorem {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return seconds, _cpu() - cpu, done.stdout


def _comparable(command: str, out: str) -> object:
    """The output without what differs from run to run (a rewrite's ``seconds``)."""
    if command != "simplify":
        return out
    lines = [json.loads(line) for line in out.splitlines()]
    for line in lines:
        line.pop("seconds", None)
    return lines


def measure(commands: dict[str, list[str]], jobs: list[int], repeat: int) -> None:
    """Time each command with each job count, ``repeat`` rounds; print medians and ratios."""
    for command, argv in commands.items():
        times: dict[int, list[float]] = {n: [] for n in jobs}
        cpu: dict[int, list[float]] = {n: [] for n in jobs}
        outputs: dict[int, object] = {}
        for _ in range(repeat):
            for n in jobs:
                seconds, used, out = _run([*argv, "--jobs", str(n)])
                times[n].append(seconds)
                cpu[n].append(used)
                outputs[n] = _comparable(command, out)
        same = all(outputs[n] == outputs[jobs[0]] for n in jobs)
        base = statistics.median(times[jobs[0]])
        print(f"{command}: {' '.join(argv)}")
        for n in jobs:
            med = statistics.median(times[n])
            runs = ", ".join(f"{t:.2f}" for t in times[n])
            print(
                f"  --jobs {n}: wall median {med:.2f} s, speed-up x{base / med:.2f}; "
                f"CPU median {statistics.median(cpu[n]):.2f} s  (wall runs {runs})"
            )
        print(f"  outputs identical across job counts: {same}")
        if not same:
            raise SystemExit("the outputs differ")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=3000, help="generated batch lines")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="job counts")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (median reported)")
    parser.add_argument("--coverage", action="store_true", help="also time quorem coverage")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.jsonl"
        write_batch(batch, args.lines, args.seed)
        commands = {"simplify": ["simplify", "--batch", str(batch)]}
        if args.coverage:
            commands["coverage"] = ["coverage", str(batch), "--json"]
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{args.lines} lines (seed {args.seed}), {os.cpu_count()} CPUs, load {load}")
        measure(commands, args.jobs, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
