"""Proving throughput on a Dask cluster against its number of workers (issue 21).

Every run proves the same rules files from scratch (no proof cache): their
``equivalence``, ``int64``, ``termination`` and ``termination-context`` obligations,
through :func:`quorem.cli.verify.verify_rules` as ``quorem verify --no-cache`` does. The
figure is obligations per second of wall time.

On this machine one ``distributed.LocalCluster`` (one thread per worker process) is
scaled to each worker count of ``--workers`` (default 1 2 3 4) in turn, before each run
and untimed, and its workers warmed (quorem imported, the rules parsed, as a real
cluster's workers are once per run); each repeat runs every count in turn, so a slow
phase of a shared machine hits them all alike, and the medians over ``--repeats`` are
reported. With ``--local`` (the default) the local process pool (``quorem verify --jobs
N``) is measured beside it; it starts its processes in every run, as the command does.

``--address dask://HOST:PORT`` measures an existing cluster instead (``dask scheduler``
and ``dask worker`` processes started by hand, see ``benchmarks/results/NOTES.md``): one series,
labelled by the cluster's number of worker threads.

The results go to ``--out`` (default ``benchmarks/results/``) as
``dask_throughput.json`` and a plot, ``dask_throughput.svg``, written as plain SVG.

Run: ``python -m benchmarks.dask_throughput [--files F ...] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import distributed
import z3
from distributed import Client, LocalCluster

from quorem.cli.verify import verify_rules
from quorem.verify import jobs
from quorem.verify.executor import DaskExecutor, Executor, LocalPool, parse_executor

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
KINDS = ("equivalence", "int64", "termination", "termination-context")
# A representative subset of the shipped rules: 366 obligations, about 25 s of proving in
# one process here (the whole catalogue, 3676, takes 385 s): folds with sums (arity
# 1..4), offset pairs (a few proofs of seconds each), bands (many quick ones), ceildiv,
# and two lowering files (each proven in a fresh Z3 context).
DEFAULT_FILES = (
    "rules/10-fold.rules",
    "rules/35-offset-pairs.rules",
    "rules/47-bands.rules",
    "rules/58-ceildiv.rules",
    "rules/lowering/70-floor-to-trunc.rules",
    "rules/lowering/76-ceildiv-lowering.rules",
)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dask_throughput")
    p.add_argument("--files", nargs="+", default=list(DEFAULT_FILES), help="rules files")
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2, 3, 4])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--address", help="dask://HOST:PORT: measure this cluster instead")
    p.add_argument("--local", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--out", type=Path, default=RESULTS)
    return p.parse_args(argv)


def _warm(client: Any, files: Sequence[str]) -> None:
    """Before timing, on every worker: quorem and Z3 imported, the rules parsed.

    (A function of quorem's, so that workers elsewhere need nothing but quorem.)
    """
    client.run(jobs._rules_of, jobs.rule_texts(files))


def _proofs(files: Sequence[str], executor: Executor) -> tuple[float, list[str]]:
    """Wall seconds of one run on ``executor``, and its statuses in report order."""
    rules = jobs.load_rules(files)
    start = time.perf_counter()
    results = verify_rules(rules, files, kinds=KINDS, executor=executor)
    seconds = time.perf_counter() - start
    return seconds, [
        f"{r['name']} {r['semantics']} {r['obligation']} {r['status']}" for r in results
    ]


def _resize(cluster: Any, client: Any, workers: int, files: Sequence[str]) -> None:
    """Scale ``cluster`` to ``workers`` worker processes and warm them (untimed).

    One cluster, resized before each run: idle Dask workers are not free (a few percent
    of a core each, here), so no worker of another count is up while one is timed.
    """
    cluster.scale(workers)
    deadline = time.monotonic() + 120
    while len(client.nthreads()) != workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster did not reach {workers} workers")
        time.sleep(0.1)
    _warm(client, files)


# A run: where it proves, and what to do before it (untimed).
Run = tuple[Executor, Callable[[], None] | None]


def _series(label: str, workers: int, seconds: list[float], obligations: int) -> dict[str, Any]:
    median = statistics.median(seconds)
    return {
        "executor": label,
        "workers": workers,
        "seconds": [round(s, 3) for s in seconds],
        "median_seconds": round(median, 3),
        "obligations_per_second": round(obligations / median, 2),
    }


def _measure(
    runs: dict[tuple[str, int], Run], files: Sequence[str], repeats: int
) -> tuple[dict[tuple[str, int], list[float]], int, bool]:
    """Each run ``repeats`` times, interleaved; the obligations and whether statuses agree."""
    times: dict[tuple[str, int], list[float]] = {k: [] for k in runs}
    first: list[str] | None = None
    same = True
    for rep in range(repeats):
        for (label, n), (executor, prepare) in runs.items():
            if prepare is not None:
                prepare()
            seconds, statuses = _proofs(files, executor)
            times[label, n].append(seconds)
            first = statuses if first is None else first
            same = same and statuses == first
            print(f"repeat {rep + 1}/{repeats}: {label:5} {n} workers {seconds:7.2f} s", flush=True)
    return times, len(first or []), same


def _svg(series: Sequence[dict[str, Any]], title: str) -> str:
    """A line plot of obligations per second against workers, one line per executor."""
    width, height, left, bottom, top, right = 560, 360, 70, 50, 40, 130
    xs: list[int] = sorted({s["workers"] for s in series})
    ymax = max(s["obligations_per_second"] for s in series) * 1.15 or 1.0

    def x(n: int) -> float:
        span = (xs[-1] - xs[0]) or 1
        return left + (n - xs[0]) / span * (width - left - right)

    def y(v: float) -> float:
        return height - bottom - v / ymax * (height - bottom - top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
        f'<line x1="{left}" y1="{y(0)}" x2="{width - right}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{y(0)}" x2="{left}" y2="{top}" stroke="black"/>',
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" '
        f'text-anchor="middle">workers (processes)</text>',
        f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(top + height - bottom) / 2})">obligations / s</text>',
    ]
    for n in xs:
        out.append(f'<text x="{x(n)}" y="{y(0) + 18}" text-anchor="middle">{n}</text>')
    for i in range(5):
        v = ymax * i / 4
        out.append(f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end">{v:.0f}</text>')
        out.append(
            f'<line x1="{left}" y1="{y(v)}" x2="{width - right}" y2="{y(v)}" stroke="#ddd"/>'
        )
    colours = {"dask": "#1f77b4", "local": "#ff7f0e"}
    for k, label in enumerate(sorted({s["executor"] for s in series})):
        colour = colours.get(label, "#2ca02c")
        points = sorted(
            (s["workers"], s["obligations_per_second"]) for s in series if s["executor"] == label
        )
        path = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for n, v in points:
            out.append(f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 10 + 20 * k
        out.append(
            f'<line x1="{width - right + 15}" y1="{ly}" x2="{width - right + 40}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{width - right + 46}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print a table, write the JSON and the plot; exit status 0."""
    args = _parse_args(argv)
    files = [str(f) for f in args.files]
    runs: dict[tuple[str, int], Run] = {}
    with contextlib.ExitStack() as stack:
        if args.address:
            spec = parse_executor(args.address)
            client = stack.enter_context(Client(spec.address, set_as_default=False))
            _warm(client, files)
            threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
            remote = DaskExecutor(client)
            runs["dask", threads] = (remote, None)
        else:
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=0,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=":0",
                )
            )
            client = stack.enter_context(Client(cluster, set_as_default=False))
            dask = DaskExecutor(client)
            for n in args.workers:
                runs["dask", n] = (dask, functools.partial(_resize, cluster, client, n, files))
            if args.local:
                for n in args.workers:
                    runs["local", n] = (LocalPool(n), None)
        times, obligations, same = _measure(runs, files, args.repeats)
    series = [_series(label, n, t, obligations) for (label, n), t in times.items()]
    print(f"\n{obligations} obligations of {len(files)} files; statuses identical: {same}")
    print("| executor | workers | median s | obligations/s |")
    for s in series:
        print(
            f"| {s['executor']} | {s['workers']} | {s['median_seconds']:.2f} | "
            f"{s['obligations_per_second']:.1f} |"
        )
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "z3": z3.get_version_string(),
            # distributed sets __version__ without listing it in __all__.
            "distributed": distributed.__version__,  # type: ignore[attr-defined]
        },
        "address": args.address,
        "files": files,
        "kinds": list(KINDS),
        "obligations": obligations,
        "repeats": args.repeats,
        "statuses_identical": same,
        "series": series,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dask_throughput.json").write_text(json.dumps(report, indent=2) + "\n")
    title = f"quorem verify: {obligations} obligations, {os.cpu_count()} CPUs"
    (args.out / "dask_throughput.svg").write_text(_svg(series, title))
    print(f"wrote {args.out / 'dask_throughput.json'} and dask_throughput.svg")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
