"""Side-by-side benchmark: quorem, tinygrad and TVM simplify the same corpus in one run.

For every case of the corpora (``quorem simplify --batch`` JSONL), the runner

1. parses the text with ``quorem.parse`` and writes the term (or, with ``peer_input =
   "text"``, the text as written) as a plain tree (:mod:`benchmarks.peers.expr`);
2. translates the tree into each system's expression, simplifies it once (warm-up) and
   reads the result back into a tree: op counts, output text, and an equivalence check
   of every output against the input on the variables' box (exhaustive up to 4096
   points, else the box's corners and seeded random points);
3. times ``repeats`` rounds, interleaved: each round visits every case and, per case,
   every system (their order rotating from case to case and round to round), each on
   expressions built afresh for that call (``build``, timed on its own) with the
   system's caches dropped after the call (``release``, not timed). The garbage
   collector is paused during a round and run between rounds.

The report gives, per system, the median and 90th percentile over the cases of each
case's median time, ``//``/``%`` counts before and after, the cases reaching
``ideal_ops``, non-equivalent outputs and unsupported cases; and, per peer, quorem's
wins, ties and losses on op count and the medians of the per-case time ratios.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import itertools
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import quorem
from benchmarks.peers import DEFAULT_SYSTEMS, System, load_system
from benchmarks.peers.expr import (
    Node,
    Unsupported,
    annotate_nonneg,
    count_divmod,
    division_ops,
    evaluate_points,
    from_term,
    from_text,
    lower_divisions,
    node_count,
    to_text,
)

__all__ = [
    "EXHAUSTIVE_LIMIT",
    "Case",
    "Outcome",
    "box_points",
    "check_equivalent",
    "load_cases",
    "prepare_case",
    "render",
    "report",
    "run",
    "summarize",
    "write_results",
]

EXHAUSTIVE_LIMIT = 4096  # boxes with at most this many points are checked at every point
RANDOM_POINTS = 1000  # otherwise: the corners and this many seeded random points
MAX_CORNERS = 1024
UNBOUNDED = 10**6  # an unbounded side is sampled up to this magnitude
ROOT = Path(__file__).resolve().parent.parent
SEED_CORPUS = ROOT / "benchmarks" / "data" / "seed_cases.jsonl"

Bounds = Mapping[str, tuple[int | None, int | None]]


@dataclass
class Case:
    """One corpus case, parsed and written as the tree every system receives."""

    id: str
    corpus: str
    expr: str
    semantics: str
    bounds: dict[str, tuple[int | None, int | None]]
    tree: Node
    ops_before: int
    size: int
    ideal_ops: int | None = None
    family: str | None = None

    @property
    def key(self) -> str:
        """``corpus:id``, unique over a run."""
        return f"{self.corpus}:{self.id}"


@dataclass
class Outcome:
    """What one system did with one case."""

    status: str  # "ok", "unsupported", "error" or "timeout"
    reason: str = ""
    output: str = ""
    ops_after: int | None = None
    equivalent: bool | None = None
    counterexample: dict[str, Any] | None = None
    points_checked: int = 0
    simplify_ns: list[int] = field(default_factory=list)
    build_ns: list[int] = field(default_factory=list)
    tree: Node | None = None  # the system's input (after lowering divisions it lacks)
    timed_once: bool = False  # the warm-up call was slow: its time is the only sample

    def median_us(self) -> float | None:
        """Median simplify time over the repeats (µs)."""
        return statistics.median(self.simplify_ns) / 1e3 if self.simplify_ns else None

    def total_median_us(self) -> float | None:
        """Median of build + simplify over the repeats (µs)."""
        if not self.simplify_ns:
            return None
        totals = [a + b for a, b in zip(self.build_ns, self.simplify_ns, strict=True)]
        return statistics.median(totals) / 1e3


# ---------------------------------------------------------------------------------------
# Corpora


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (blank lines skipped)."""
    cases = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                cases.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not JSON: {exc}") from None
    return cases


def _bounds(raw: Mapping[str, Any]) -> dict[str, tuple[int | None, int | None]]:
    out: dict[str, tuple[int | None, int | None]] = {}
    for name, b in raw.items():
        if b is None:
            out[name] = (None, None)
        else:
            lo, hi = b
            out[name] = (None if lo is None else int(lo), None if hi is None else int(hi))
    return out


def prepare_case(raw: Mapping[str, Any], corpus: str, peer_input: str = "term") -> Case:
    """Parse a corpus case and write the tree the systems receive.

    ``peer_input``: ``"term"`` (the canonical term quorem parses, as quorem sees it) or
    ``"text"`` (the expression as written, quorem's parser without the canonical form).

    Raises:
        quorem.QuoremError: the text does not parse.

    """
    bounds = _bounds(raw.get("vars") or {})
    semantics = raw.get("semantics", "floor")
    term = quorem.parse(raw["expr"], bounds, semantics)
    if peer_input == "term":
        tree = from_term(term)
    elif peer_input == "text":
        tree = from_text(raw["expr"], semantics)
    else:
        raise ValueError(f"peer_input is 'term' or 'text', not {peer_input!r}")
    del term
    size = raw.get("size")
    ideal = raw.get("ideal_ops")
    return Case(
        id=str(raw["id"]),
        corpus=corpus,
        expr=raw["expr"],
        semantics=semantics,
        bounds=bounds,
        tree=tree,
        ops_before=count_divmod(tree),
        size=int(size) if isinstance(size, int) else node_count(tree),
        ideal_ops=int(ideal) if isinstance(ideal, int) else None,
        family=raw.get("family"),
    )


# ---------------------------------------------------------------------------------------
# Equivalence on the box


def _variables(tree: Node) -> list[str]:
    names: set[str] = set()
    stack = [tree]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op == "var":
            names.add(n.value)
        stack.extend(n.args)
    return sorted(names)


def box_points(
    bounds: Bounds,
    names: Sequence[str],
    seed: int,
    limit: int = EXHAUSTIVE_LIMIT,
    samples: int = RANDOM_POINTS,
) -> tuple[list[dict[str, int]], bool]:
    """Points of the variables' box, and whether they are all of its points.

    Every point when the box is bounded and has at most ``limit`` points; otherwise its
    corners (at most ``MAX_CORNERS``, seeded choice beyond) and ``samples`` seeded
    uniform points. An unbounded side is taken as ``UNBOUNDED`` in magnitude.
    """
    ranges = []
    bounded = True
    for name in names:
        lo, hi = bounds.get(name, (None, None))
        bounded = bounded and lo is not None and hi is not None
        lo = -UNBOUNDED if lo is None else lo
        hi = UNBOUNDED if hi is None else hi
        if lo > hi:
            return [], True  # empty box: nothing to check
        ranges.append((lo, hi))
    total = math.prod(hi - lo + 1 for lo, hi in ranges)
    if bounded and total <= limit:
        points = itertools.product(*(range(lo, hi + 1) for lo, hi in ranges))
        return [dict(zip(names, p, strict=True)) for p in points], True
    rng = random.Random(seed)
    if len(ranges) <= 10:
        corners = list(itertools.product(*ranges))
    else:
        corners = [tuple(rng.choice(r) for r in ranges) for _ in range(MAX_CORNERS)]
    randoms = [tuple(rng.randint(lo, hi) for lo, hi in ranges) for _ in range(samples)]
    return [dict(zip(names, p, strict=True)) for p in corners + randoms], False


def check_equivalent(
    reference: Node, candidates: Mapping[str, Node], bounds: Bounds, seed: int
) -> dict[str, tuple[bool, dict[str, Any] | None, int]]:
    """For each candidate: (equal to ``reference`` wherever it is defined, first
    counterexample, points compared). A candidate that divides by zero where the
    reference is defined, or that cannot be evaluated, is not equivalent.
    """
    names = sorted(set(_variables(reference)).union(*(_variables(c) for c in candidates.values())))
    points, _ = box_points(bounds, names, seed)
    want = evaluate_points(reference, points)
    defined = [i for i, v in enumerate(want) if v is not None]  # elsewhere any value is fine
    out: dict[str, tuple[bool, dict[str, Any] | None, int]] = {}
    for name, cand in candidates.items():
        try:
            got = evaluate_points(cand, points)
        except (Unsupported, KeyError) as exc:
            out[name] = (False, {"error": f"cannot evaluate: {exc}"}, 0)
            continue
        verdict: tuple[bool, dict[str, Any] | None, int] = (True, None, len(defined))
        for i in defined:
            if got[i] != want[i]:
                value = "division by zero" if got[i] is None else got[i]
                example = {"point": points[i], "expected": want[i], "got": value}
                verdict = (False, example, len(defined))
                break
        out[name] = verdict
    return out


# ---------------------------------------------------------------------------------------
# Running


def _case_seed(case: Case) -> int:
    return zlib.crc32(case.key.encode())


def _system_input(case: Case, system: System) -> Node:
    """The case's tree in the divisions the system has (raises Unsupported)."""
    if division_ops(case.tree) <= set(system.division_ops):
        return case.tree
    annotate_nonneg(case.tree, case.bounds)
    return lower_divisions(case.tree, system.division_ops)


class CallTimeout(BaseException):
    """Raised in the benchmark's thread when a call overruns its time limit.

    A ``BaseException``, so that a peer's ``except Exception`` does not swallow it.
    """


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`CallTimeout` in this thread if the block runs over ``seconds``.

    A watchdog thread sets an asynchronous exception in this thread
    (``PyThreadState_SetAsyncExc``); it is raised at the next Python bytecode, so a call
    into C++ (TVM) is interrupted only when it returns to Python.
    """
    if not seconds:
        yield
        return
    tid = ctypes.c_ulong(threading.get_ident())
    done = threading.Event()
    fired: list[bool] = []

    def watch() -> None:
        if not done.wait(seconds):
            fired.append(True)
            ctypes.pythonapi.PyThreadState_SetAsyncExc(tid, ctypes.py_object(CallTimeout))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        if fired:  # cancel the exception if it has not been raised yet
            ctypes.pythonapi.PyThreadState_SetAsyncExc(tid, None)


def warm_up(
    cases: Sequence[Case],
    systems: Sequence[System],
    *,
    timeout: float | None = None,
    slow: float | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> dict[str, dict[str, Outcome]]:
    """Each system simplifies each case once: outputs, op counts, equivalence.

    A call still running after ``timeout`` seconds is stopped (status ``timeout``); a
    call slower than ``slow`` seconds is not repeated (its time is the only sample).
    """
    outcomes: dict[str, dict[str, Outcome]] = {s.name: {} for s in systems}
    for case in cases:
        outputs: dict[str, Node] = {}
        for system in systems:
            try:
                tree = _system_input(case, system)
            except Unsupported as exc:
                outcomes[system.name][case.key] = Outcome("unsupported", str(exc))
                continue
            try:
                with deadline(timeout):
                    t0 = clock()
                    built = system.build(tree, case.bounds)
                    t1 = clock()
                    result = system.simplify(built)
                    t2 = clock()
                del built
                out = system.to_tree(result)
                del result
            except CallTimeout:
                reason = f"no result within {timeout:g} s"
                outcomes[system.name][case.key] = Outcome("timeout", reason)
                continue
            except Unsupported as exc:
                outcomes[system.name][case.key] = Outcome("unsupported", str(exc))
                continue
            except Exception as exc:  # a peer's failure is a result
                outcomes[system.name][case.key] = Outcome("error", f"{type(exc).__name__}: {exc}")
                continue
            finally:
                system.release()
            o = Outcome("ok", output=to_text(out), ops_after=count_divmod(out), tree=tree)
            if slow is not None and (t2 - t1) > slow * 1e9:
                o.timed_once, o.build_ns, o.simplify_ns = True, [t1 - t0], [t2 - t1]
            outcomes[system.name][case.key] = o
            outputs[system.name] = out
        verdicts = check_equivalent(case.tree, outputs, case.bounds, _case_seed(case))
        for name, (ok, example, n) in verdicts.items():
            o = outcomes[name][case.key]
            o.equivalent, o.counterexample, o.points_checked = ok, example, n
    return outcomes


def measure(
    cases: Sequence[Case],
    systems: Sequence[System],
    outcomes: Mapping[str, Mapping[str, Outcome]],
    *,
    repeats: int,
    clock: Callable[[], int] = time.perf_counter_ns,
    progress: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Time ``repeats`` interleaved rounds into ``outcomes``; returns, per system, the
    calls after which interned nodes of the call were still alive (should be 0)."""
    stale = {s.name: 0 for s in systems}
    k = len(systems)
    was_enabled = gc.isenabled()
    try:
        for r in range(repeats):
            gc.collect()
            gc.disable()
            for i, case in enumerate(cases):
                start = (r + i) % k
                for system in itertools.chain(systems[start:], systems[:start]):
                    o = outcomes[system.name][case.key]
                    if o.status != "ok" or o.timed_once:
                        continue
                    tree = o.tree
                    assert tree is not None  # every "ok" outcome keeps its input
                    before = system.live_nodes()
                    t0 = clock()
                    built = system.build(tree, case.bounds)
                    t1 = clock()
                    result = system.simplify(built)
                    t2 = clock()
                    del built, result
                    system.release()
                    if before is not None and system.live_nodes() != before:
                        gc.collect()
                        if system.live_nodes() != before:
                            stale[system.name] += 1
                    o.build_ns.append(t1 - t0)
                    o.simplify_ns.append(t2 - t1)
            gc.enable()
            if progress is not None:
                progress(f"round {r + 1}/{repeats}")
    finally:
        if was_enabled:
            gc.enable()
        else:  # pragma: no cover
            gc.disable()
    return stale


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile by nearest rank on the sorted values (as bench_simplify's p90)."""
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


def summarize(
    cases: Sequence[Case],
    outcomes: Mapping[str, Mapping[str, Outcome]],
    stale: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Per-system summaries and quorem-versus-peer comparisons (JSON-ready)."""
    systems: dict[str, Any] = {}
    for name, per_case in outcomes.items():
        ok = [c for c in cases if per_case[c.key].status == "ok"]
        medians = sorted(m for c in ok if (m := per_case[c.key].median_us()) is not None)
        totals = sorted(m for c in ok if (m := per_case[c.key].total_median_us()) is not None)
        with_ideal = [c for c in ok if c.ideal_ops is not None]
        systems[name] = {
            "cases": len(cases),
            "supported": len(ok),
            "median_us": statistics.median(medians) if medians else None,
            "p90_us": _quantile(medians, 0.9) if medians else None,
            "build_plus_simplify_median_us": statistics.median(totals) if totals else None,
            "build_plus_simplify_p90_us": _quantile(totals, 0.9) if totals else None,
            "ops_before": sum(c.ops_before for c in ok),
            "ops_after": sum(per_case[c.key].ops_after or 0 for c in ok),
            "with_ideal_ops": len(with_ideal),
            "reached_ideal": sum(
                1 for c in with_ideal if (per_case[c.key].ops_after or 0) <= (c.ideal_ops or 0)
            ),
            "non_equivalent": [c.key for c in ok if per_case[c.key].equivalent is False],
            "unsupported": {
                c.key: per_case[c.key].reason
                for c in cases
                if per_case[c.key].status == "unsupported"
            },
            "errors": {
                c.key: per_case[c.key].reason for c in cases if per_case[c.key].status == "error"
            },
            "timeouts": {
                c.key: per_case[c.key].reason for c in cases if per_case[c.key].status == "timeout"
            },
            "timed_once": [c.key for c in ok if per_case[c.key].timed_once],
            "stale_calls": (stale or {}).get(name, 0),
        }
    comparisons: dict[str, Any] = {}
    if "quorem" in outcomes:
        q = outcomes["quorem"]
        for name, per_case in outcomes.items():
            if name != "quorem":
                comparisons[name] = _compare(cases, q, per_case)
    return {"systems": systems, "comparisons": comparisons}


def _compare(
    cases: Sequence[Case], q: Mapping[str, Outcome], p: Mapping[str, Outcome]
) -> dict[str, Any]:
    """quorem against one peer on the cases both simplified to equivalent outputs."""
    both = [
        c
        for c in cases
        if q[c.key].status == "ok"
        and p[c.key].status == "ok"
        and q[c.key].equivalent is not False
        and p[c.key].equivalent is not False
    ]
    fewer = [c.key for c in both if (q[c.key].ops_after or 0) < (p[c.key].ops_after or 0)]
    more = [c.key for c in both if (q[c.key].ops_after or 0) > (p[c.key].ops_after or 0)]
    ratios, total_ratios = [], []
    for c in both:
        qm, pm = q[c.key].median_us(), p[c.key].median_us()
        if qm and pm:
            ratios.append(pm / qm)
        qt, pt = q[c.key].total_median_us(), p[c.key].total_median_us()
        if qt and pt:
            total_ratios.append(pt / qt)
    ratios.sort()
    total_ratios.sort()

    def spread(values: list[float]) -> dict[str, float | None]:
        if not values:
            return {"median": None, "p10": None, "p90": None, "min": None, "max": None}
        return {
            "median": statistics.median(values),
            "p10": _quantile(values, 0.1),
            "p90": _quantile(values, 0.9),
            "min": values[0],
            "max": values[-1],
        }

    return {
        "cases": len(both),
        "quorem_fewer_ops": fewer,
        "same_ops": len(both) - len(fewer) - len(more),
        "quorem_more_ops": more,
        "time_ratio_peer_over_quorem": spread(ratios),
        "build_plus_simplify_ratio_peer_over_quorem": spread(total_ratios),
    }


@dataclass
class RunResult:
    """Everything a run produced."""

    cases: list[Case]
    systems: list[System]
    outcomes: dict[str, dict[str, Outcome]]
    summary: dict[str, Any]
    meta: dict[str, Any]


def load_systems(names: Iterable[str], log: Callable[[str], None]) -> list[System]:
    """The named systems that are installed (a missing one is logged and skipped)."""
    out = []
    for name in names:
        try:
            out.append(load_system(name))
        except ImportError as exc:
            log(f"{name}: not installed ({exc}); skipped")
    return out


def run(
    corpora: Sequence[Path],
    *,
    repeats: int,
    system_names: Sequence[str] = DEFAULT_SYSTEMS,
    peer_input: str = "term",
    clock: str = "wall",
    limit: int | None = None,
    timeout: float | None = 120.0,
    slow: float | None = 2.0,
    log: Callable[[str], None] = lambda s: None,
) -> RunResult:
    """Load the corpora, warm up, check and time every system; summarize."""
    cases: list[Case] = []
    for path in corpora:
        raw_cases = load_cases(path)[:limit] if limit else load_cases(path)
        for raw in raw_cases:
            cases.append(prepare_case(raw, path.stem, peer_input))
    systems = load_systems(system_names, log)
    if not systems:
        raise RuntimeError("no system to run")
    log(f"{len(cases)} cases; systems: {', '.join(s.name for s in systems)}")
    t0 = time.monotonic()
    ns_clock = time.perf_counter_ns if clock == "wall" else time.process_time_ns
    outcomes = warm_up(cases, systems, timeout=timeout, slow=slow, clock=ns_clock)
    log(f"warm-up and equivalence checks: {time.monotonic() - t0:.1f} s")
    stale = measure(cases, systems, outcomes, repeats=repeats, clock=ns_clock, progress=log)
    summary = summarize(cases, outcomes, stale)
    meta = _meta(
        corpora, cases=cases, systems=systems, repeats=repeats, peer_input=peer_input, clock=clock
    )
    meta["timeout_s"], meta["slow_s"] = timeout, slow
    return RunResult(cases, systems, outcomes, summary, meta)


def _meta(
    corpora: Sequence[Path],
    *,
    cases: Sequence[Case],
    systems: Sequence[System],
    repeats: int,
    peer_input: str,
    clock: str,
) -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "engine", "rules"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if commit and changed:
            commit += " with uncommitted changes in engine/ or rules/"
    except OSError:  # pragma: no cover
        commit = ""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:  # pragma: no cover
        pass
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m benchmarks " + " ".join(sys.argv[1:]),
        "commit": commit,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "repeats": repeats,
        "clock": clock,
        "peer_input": peer_input,
        "corpora": [
            {
                "path": str(p),
                "cases": sum(1 for c in cases if c.corpus == p.stem),
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest()[:16],
            }
            for p in corpora
        ],
        "versions": {s.name: s.version for s in systems},
        "methods": {s.name: s.method for s in systems},
        "division_ops": {s.name: sorted(s.division_ops) for s in systems},
    }


# ---------------------------------------------------------------------------------------
# Reporting


def report(result: RunResult) -> dict[str, Any]:
    """The JSON document of a run: meta, summary and every case."""
    rows = []
    for c in result.cases:
        per_system = {}
        for s in result.systems:
            o = result.outcomes[s.name][c.key]
            per_system[s.name] = {
                "status": o.status,
                "reason": o.reason or None,
                "timed_once": o.timed_once,
                "output": _clip(o.output) or None,
                "ops_after": o.ops_after,
                "equivalent": o.equivalent,
                "counterexample": o.counterexample,
                "points_checked": o.points_checked,
                "median_us": _round(o.median_us()),
                "p90_us": _round(_p90_us(o.simplify_ns)),
                "build_plus_simplify_median_us": _round(o.total_median_us()),
            }
        rows.append(
            {
                "id": c.id,
                "corpus": c.corpus,
                "family": c.family,
                "size": c.size,
                "semantics": c.semantics,
                "ideal_ops": c.ideal_ops,
                "ops_before": c.ops_before,
                "expr": _clip(c.expr),
                "input": _clip(to_text(c.tree)),
                "results": per_system,
            }
        )
    return {"meta": result.meta, **result.summary, "cases": rows}


TEXT_LIMIT = 2000  # longer input and output texts are cut in the reports


def _clip(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def _p90_us(ns: list[int]) -> float | None:
    return _quantile(sorted(ns), 0.9) / 1e3 if ns else None


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 2)


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _case_list(keys: Sequence[str], cap: int = 40) -> str:
    if not keys:
        return "none"
    shown = ", ".join(f"`{k}`" for k in keys[:cap])
    return shown + (f" and {len(keys) - cap} more" if len(keys) > cap else "")


def markdown(doc: Mapping[str, Any], plot_name: str | None = None) -> str:
    """The results as a markdown page."""
    meta, systems, comparisons = doc["meta"], doc["systems"], doc["comparisons"]
    lines = [
        f"# Side-by-side simplification: {', '.join(c['path'] for c in meta['corpora'])}",
        "",
        f"{meta['date']}; commit `{meta['commit']}`; Python {meta['python']}; "
        f"{meta['cpu_count']} CPUs ({meta['cpu'] or 'unknown'}); {meta['platform']}.",
        f"Versions: {', '.join(f'{k} {v}' for k, v in meta['versions'].items())}. "
        f"{meta['repeats']} interleaved rounds, {meta['clock']} clock; peers receive the "
        f"{'canonical term' if meta['peer_input'] == 'term' else 'text as written'}.",
        f"Command: `{meta['command']}`.",
        "",
        "Times are per expression, in µs: the median (and 90th percentile) over the cases of "
        "each case's median over the rounds. They depend on the machine; the ratios, "
        "measured in the same run, less so.",
        "",
        "| system | cases supported | median µs | p90 µs | build+simplify median µs | "
        "`//` `%` before | after | reached ideal_ops | non-equivalent | unsupported | errors | "
        "timeouts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in systems.items():
        lines.append(
            f"| {name} | {s['supported']}/{s['cases']} | {_fmt(s['median_us'])} | "
            f"{_fmt(s['p90_us'])} | {_fmt(s['build_plus_simplify_median_us'])} | "
            f"{s['ops_before']} | {s['ops_after']} | {s['reached_ideal']}/{s['with_ideal_ops']} | "
            f"{len(s['non_equivalent'])} | {len(s['unsupported'])} | {len(s['errors'])} | "
            f"{len(s['timeouts'])} |"
        )
    if comparisons:
        lines += [
            "",
            "quorem against each peer, on the cases both simplified to equivalent outputs. "
            "Time ratio = peer time / quorem time per case (above 1: quorem is faster); "
            "median over the cases, with the 10th-90th percentile range.",
            "",
            "| peer | cases | quorem fewer `//` `%` | same | quorem more | time ratio (simplify) "
            "| p10 to p90 | time ratio (build+simplify) | p10 to p90 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, c in comparisons.items():
            r, t = c["time_ratio_peer_over_quorem"], c["build_plus_simplify_ratio_peer_over_quorem"]
            lines.append(
                f"| {name} | {c['cases']} | {len(c['quorem_fewer_ops'])} | {c['same_ops']} | "
                f"{len(c['quorem_more_ops'])} | {_fmt(r['median'], 2)} | "
                f"{_fmt(r['p10'], 2)} to {_fmt(r['p90'], 2)} | {_fmt(t['median'], 2)} | "
                f"{_fmt(t['p10'], 2)} to {_fmt(t['p90'], 2)} |"
            )
    lines += _families(doc)
    lines += ["", "## Where quorem has more `//` `%` than a peer", ""]
    by_key = {f"{r['corpus']}:{r['id']}": r for r in doc["cases"]}
    any_loss = False
    for name, c in comparisons.items():
        for key in c["quorem_more_ops"]:
            any_loss = True
            row = by_key[key]
            q, p = row["results"]["quorem"], row["results"][name]
            lines.append(
                f"- `{key}` vs {name}: `{_clip(row['input'], 300)}` → quorem "
                f"`{_clip(q['output'], 300)}` ({q['ops_after']}), {name} "
                f"`{_clip(p['output'], 300)}` ({p['ops_after']})"
            )
    if not any_loss:
        lines.append("None.")
    lines += ["", "## Non-equivalent outputs", ""]
    any_bad = False
    for row in doc["cases"]:
        for name, res in row["results"].items():
            if res["status"] == "ok" and res["equivalent"] is False:
                any_bad = True
                lines.append(
                    f"- {name}, `{row['corpus']}:{row['id']}`: `{_clip(row['input'], 300)}` → "
                    f"`{_clip(res['output'], 300)}`; counterexample {res['counterexample']}"
                )
    if not any_bad:
        lines.append(
            "None: every output equals its input on every point checked (every point of "
            f"boxes of at most {EXHAUSTIVE_LIMIT} points; corners and {RANDOM_POINTS} seeded "
            "random points otherwise)."
        )
    lines += ["", "## Unsupported cases and errors", ""]
    any_unsupported = False
    for name, s in systems.items():
        for key, why in {**s["unsupported"], **s["errors"], **s["timeouts"]}.items():
            any_unsupported = True
            lines.append(f"- {name}, `{key}`: {why}")
    if not any_unsupported:
        lines.append("None: every system expressed and simplified every case.")
    once = {n: s["timed_once"] for n, s in systems.items() if s["timed_once"]}
    if once:
        lines += ["", f"Timed once (the warm-up call took over {meta.get('slow_s')} s):"]
        lines += [f"- {n}: {_case_list(keys)}" for n, keys in once.items()]
    stale = {n: s["stale_calls"] for n, s in systems.items() if s["stale_calls"]}
    if stale:
        lines += ["", f"Calls that left interned nodes alive (caches not defeated): {stale}."]
    lines += ["", "## What is timed", ""]
    lines += [f"- **{n}** {meta['versions'][n]}: {m}" for n, m in meta["methods"].items()]
    if plot_name:
        lines += ["", f"![time against expression size]({plot_name})"]
    return "\n".join(lines) + "\n"


def _families(doc: Mapping[str, Any]) -> list[str]:
    rows = doc["cases"]
    families = sorted({r["family"] for r in rows if r["family"]})
    if not families:
        return []
    names = list(doc["systems"])
    head = "| family | cases | " + " | ".join(f"{n} median µs | {n} `//` `%` after" for n in names)
    out = ["", "Per family (`//` `%` before, and after on each system's supported cases):", ""]
    out += [
        head + " | before |",
        "|---|---:|" + "---:|---:|" * len(names) + "---:|",
    ]
    for fam in families:
        sel = [r for r in rows if r["family"] == fam]
        cells = []
        for n in names:
            ok = [r["results"][n] for r in sel if r["results"][n]["status"] == "ok"]
            meds = [x["median_us"] for x in ok if x["median_us"] is not None]
            cells.append(_fmt(statistics.median(meds)) if meds else "—")
            cells.append(str(sum(x["ops_after"] or 0 for x in ok)))
        before = sum(r["ops_before"] for r in sel)
        out.append(f"| {fam} | {len(sel)} | " + " | ".join(cells) + f" | {before} |")
    peers = [n for n in names if n != "quorem"]
    if "quorem" not in names or not peers:
        return out
    out += [
        "",
        "Per family, quorem against each peer (cases both simplified to equivalent outputs): "
        "median of the per-case time ratios peer / quorem, and cases where quorem has "
        "fewer / the same / more `//` `%`:",
        "",
        "| family | "
        + " | ".join(f"{p} / quorem time | fewer / same / more" for p in peers)
        + " |",
        "|---|" + "---:|---:|" * len(peers),
    ]
    for fam in families:
        cells = []
        for peer in peers:
            ratios, counts = [], [0, 0, 0]
            for r in rows:
                q, o = r["results"]["quorem"], r["results"][peer]
                if r["family"] != fam or not _comparable(q) or not _comparable(o):
                    continue
                if q["median_us"] and o["median_us"]:
                    ratios.append(o["median_us"] / q["median_us"])
                qo, po = q["ops_after"], o["ops_after"]
                counts[(qo > po) - (qo < po) + 1] += 1
            cells.append(_fmt(statistics.median(ratios), 2) if ratios else "—")
            cells.append(" / ".join(map(str, counts)))
        out.append(f"| {fam} | " + " | ".join(cells) + " |")
    return out


def _comparable(result: Mapping[str, Any]) -> bool:
    return bool(result["status"] == "ok" and result["equivalent"] is not False)


def plot(doc: Mapping[str, Any], path: Path) -> bool:
    """A PNG of per-case median time against expression size, one series per system.

    Returns False (and writes nothing) when matplotlib is not installed.
    """
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
        from matplotlib import ticker  # noqa: PLC0415
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    markers = itertools.cycle("os^Dv")
    for name in doc["systems"]:
        marker = next(markers)
        for ax, key in zip(axes, ("median_us", "build_plus_simplify_median_us"), strict=True):
            pts = [
                (r["size"], r["results"][name][key])
                for r in doc["cases"]
                if r["results"][name][key] is not None
            ]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.scatter(xs, ys, label=name, marker=marker, s=14, alpha=0.6)
    for ax, title in zip(axes, ("simplify", "build + simplify"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("expression size (the case's size, else nodes of the input tree)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("median time per expression (µs)")
    axes[0].legend()
    meta = doc["meta"]
    names = [Path(c["path"]).name for c in meta["corpora"]]
    what = ", ".join(names) if len(names) <= 2 else f"{len(names)} corpora"
    fig.suptitle(f"{what}, {len(doc['cases'])} cases: {meta['repeats']} rounds, {meta['date']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def dump(doc: Mapping[str, Any]) -> str:
    """The results JSON: indented, except one line per case (compact and diffable)."""
    head = {k: v for k, v in doc.items() if k != "cases"}
    text = json.dumps(head, indent=1, default=str)
    cases = ",\n  ".join(json.dumps(c, default=str, separators=(",", ":")) for c in doc["cases"])
    return f'{text[:-2]},\n "cases": [\n  {cases}\n ]\n}}\n'


def render(json_path: Path) -> list[Path]:
    """Write the markdown page and the plot of a results JSON again, beside it."""
    doc = json.loads(json_path.read_text())
    png = json_path.with_suffix(".png")
    has_plot = plot(doc, png)
    md = json_path.with_suffix(".md")
    md.write_text(markdown(doc, png.name if has_plot else None))
    return [md, png] if has_plot else [md]


def write_results(result: RunResult, out: Path, name: str) -> list[Path]:
    """Write ``name``.json, ``name``.md and (with matplotlib) ``name``.png into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    doc = report(result)
    written = []
    png = out / f"{name}.png"
    has_plot = plot(doc, png)
    if has_plot:
        written.append(png)
    js = out / f"{name}.json"
    js.write_text(dump(doc))
    md = out / f"{name}.md"
    md.write_text(markdown(doc, png.name if has_plot else None))
    return [js, md, *written]
