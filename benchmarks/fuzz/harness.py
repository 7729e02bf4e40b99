"""The fuzzing harness: targets, workers with a watchdog, failure records and replay.

A :class:`Target` draws a case from a seeded ``random.Random``, stores it as JSON and
checks it. Checking classifies what happens:

* the surface's documented error (``Target.allowed``): a *rejected* input, not a failure;
* :class:`WrongResultError`: a wrong result (a value mismatch, an unsound range, a text that does
  not parse back), failure kind ``wrong``;
* any other exception: failure kind ``traceback``;
* no answer within the per-input limit: failure kind ``hang``.

Input ``i`` of a target is drawn from ``Random(seed * 1_000_003 + i)``, so the parent can
draw it again when it has to kill a worker that is stuck in C code (the worker's own
``SIGALRM`` catches every hang that returns to Python).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing as mp
import os
import queue as queue_module
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, ClassVar, Final

from quorem import QuoremError

KINDS: Final = ("traceback", "hang", "wrong")
_SAMPLES_PER_KEY: Final = 3
_SNAPSHOT_SECONDS: Final = 1.0
_GRACE_SECONDS: Final = 10.0  # beyond the per-input limit before the parent kills a worker
_ENGINE_DIRS: Final = ("/engine/", "/rules/", "/verify/", "/quorem/")


class WrongResultError(Exception):
    """A wrong result; ``what`` names the check, so that findings group by it."""

    def __init__(self, what: str, detail: str) -> None:
        self.what = what
        self.detail = detail
        super().__init__(f"{what}: {detail}")


class Hang(BaseException):
    """Raised by the per-input alarm; a BaseException so that ``except Exception`` lets it by."""


Case = dict[str, Any]


class Target:
    """A fuzz target: draws cases, checks them; subclasses set the class attributes."""

    name: ClassVar[str] = ""
    allowed: ClassVar[tuple[type[BaseException], ...]] = (QuoremError,)

    def generate(self, rng: random.Random) -> Case:
        """A new JSON-serialisable case."""
        raise NotImplementedError

    def check(self, case: Case) -> int:
        """Check ``case``; return how many expressions it exercised. Raise on failure."""
        raise NotImplementedError

    def warm(self) -> None:
        """Load and compile what every case needs, once, before workers fork."""
        import quorem  # noqa: PLC0415
        from quorem.ruleset import constraint_ruleset  # noqa: PLC0415

        constraint_ruleset()
        for sem in ("floor", "trunc", "euclid"):
            for text in ("(x*4 + y)//4 + (x*4 + y)%4 + max(x, y) + (x < y) + x*y",
                         "((x + 3)//8)//2 + (x % 16) % 4"):  # fmt: skip
                quorem.simplify(quorem.parse(text, {"x": (0, 99), "y": (-9, 9)}, sem))

    def shrink(self, case: Case) -> Iterator[Case]:
        """Smaller variants of ``case``, most aggressive first (for ``--shrink``)."""
        text = case.get("text")
        if isinstance(text, str):
            for smaller in shrink_text(text):
                yield {**case, "text": smaller}


def shrink_text(text: str) -> Iterator[str]:
    """Variants of ``text`` with a chunk of lines, then of characters, removed."""
    lines = text.split("\n")
    if len(lines) > 1:
        n = len(lines) // 2
        while n >= 1:
            for i in range(0, len(lines), n):
                yield "\n".join(lines[:i] + lines[i + n :])
            n //= 2
    n = len(text) // 2
    while n >= 1:
        for i in range(0, len(text), n):
            yield text[:i] + text[i + n :]
        n //= 2


# ------------------------------------------------------------------------ classification
@dataclasses.dataclass
class Outcome:
    """What checking one case did: ``kind`` None (passed or rejected), or a failure."""

    kind: str | None
    key: str = ""
    message: str = ""
    trace: str = ""
    expressions: int = 0
    rejected: bool = False


def _location(tb: TracebackType | None) -> str:
    """``file:line in function`` of the innermost engine frame of ``tb`` (else innermost)."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return "?"
    pick = frames[-1]
    for fr in reversed(frames):
        path = fr.filename.replace(os.sep, "/")
        if any(d in path for d in _ENGINE_DIRS) and "/benchmarks/" not in path:
            pick = fr
            break
    path = pick.filename.replace(os.sep, "/")
    for marker in ("/engine/", "/rules/", "/verify/", "/benchmarks/"):
        if marker in path:
            path = marker.strip("/") + "/" + path.split(marker, 1)[1]
            break
    return f"{path}:{pick.lineno} in {pick.name}"


def _brief(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def run_case(target: Target, case: Case, limit: float) -> Outcome:
    """Check ``case`` under a ``limit``-second alarm and classify what happened."""
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        n = target.check(case)
    except Hang as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        loc = _location(exc.__traceback__)
        return Outcome("hang", f"hang@{loc}", f"over {limit} s", traceback.format_exc())
    except WrongResultError as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return Outcome("wrong", f"wrong:{exc.what}", _brief(exc.detail, 2000))
    except target.allowed:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return Outcome(None, rejected=True)
    except (Exception, RecursionError, MemoryError) as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        loc = _location(exc.__traceback__)
        key = f"{type(exc).__name__}@{loc}"
        return Outcome(
            "traceback", key, _brief(f"{type(exc).__name__}: {exc}"), traceback.format_exc()
        )
    signal.setitimer(signal.ITIMER_REAL, 0)
    return Outcome(None, expressions=n)


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(seed * 1_000_003 + index)


# ------------------------------------------------------------------------ workers
@dataclasses.dataclass
class Stats:
    """Counts of one target's run (summed over workers)."""

    tried: int = 0
    expressions: int = 0
    rejected: int = 0
    failures: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    by_key: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, other: Stats) -> None:
        self.tried += other.tried
        self.expressions += other.expressions
        self.rejected += other.rejected
        for k, v in other.failures.items():
            self.failures[k] = self.failures.get(k, 0) + v
        for k, v in other.by_key.items():
            self.by_key[k] = self.by_key.get(k, 0) + v

    def record(self, kind: str, key: str) -> None:
        self.failures[kind] = self.failures.get(kind, 0) + 1
        self.by_key[key] = self.by_key.get(key, 0) + 1


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one worker runs: inputs ``first, first + step, ...`` of a target, until ``deadline``."""

    factory: Callable[[], Target]
    seed: int
    first: int
    step: int
    deadline: float
    limit: float


@dataclasses.dataclass(frozen=True)
class Failure:
    """One failing input, as a worker reports it."""

    kind: str
    key: str
    message: str
    trace: str
    case: Case
    index: int


def _generate(target: Target, seed: int, index: int, limit: float) -> tuple[Case, Outcome]:
    try:
        case = target.generate(case_rng(seed, index))
    except Exception as exc:  # a harness bug: report it, do not stop
        where = _location(exc.__traceback__)
        key = f"generator:{type(exc).__name__}@{where}"
        return {"generator_error": repr(exc)}, Outcome(
            "traceback", key, repr(exc), traceback.format_exc()
        )
    return case, run_case(target, case, limit)


_MIN_INPUTS: Final = 16  # inputs every worker checks, deadline or not


def _worker(plan: Plan, progress: Any, queue: Any) -> None:
    """Check the plan's inputs; report stats (every second) and failures on ``queue``."""
    signal.signal(signal.SIGALRM, _on_alarm)
    target = plan.factory()
    stats = Stats()
    smallest: dict[str, int] = {}
    sent: dict[str, int] = {}
    last = time.monotonic()
    index = plan.first
    # A few inputs even past the deadline: on a loaded machine starting the worker can
    # take the whole budget, and a run that checked nothing says nothing.
    while stats.tried < _MIN_INPUTS or time.time() < plan.deadline:
        progress.value = index
        case, out = _generate(target, plan.seed, index, plan.limit)
        stats.tried += 1
        stats.expressions += out.expressions
        stats.rejected += out.rejected
        if out.kind is not None:
            stats.record(out.kind, out.key)
            size = len(json.dumps(case))
            if sent.get(out.key, 0) < _SAMPLES_PER_KEY or size < smallest.get(out.key, size):
                sent[out.key] = sent.get(out.key, 0) + 1
                smallest[out.key] = min(size, smallest.get(out.key, size))
                failure = Failure(out.kind, out.key, out.message, out.trace, case, index)
                queue.put(("failure", plan.first, failure))
        index += plan.step
        now = time.monotonic()
        if now - last >= _SNAPSHOT_SECONDS:
            queue.put(("stats", plan.first, stats))
            last = now
    progress.value = -1
    queue.put(("stats", plan.first, stats))
    queue.put(("done", plan.first))


@dataclasses.dataclass
class Recorder:
    """Writes failing inputs under ``directory/<target>/`` (a few per distinct key)."""

    directory: Path | None
    written: dict[str, int] = dataclasses.field(default_factory=dict)
    smallest: dict[str, int] = dataclasses.field(default_factory=dict)
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    messages: dict[str, str] = dataclasses.field(default_factory=dict)

    def write(self, target: str, seed: int, failure: Failure) -> None:
        key = failure.key
        self.messages.setdefault(key, failure.message)
        if self.directory is None:
            return
        size = len(json.dumps(failure.case))
        best = self.smallest.get(key)
        if self.written.get(key, 0) >= _SAMPLES_PER_KEY and (best is None or size >= best):
            return
        self.written[key] = self.written.get(key, 0) + 1
        digest = hashlib.sha1(f"{target}|{key}".encode()).hexdigest()[:10]
        folder = self.directory / target
        path = folder / f"{failure.kind}-{digest}-{self.written[key]}.json"
        if best is None or size < best:
            self.smallest[key] = size
            self.files[key] = str(path)
        folder.mkdir(parents=True, exist_ok=True)
        record = {"target": target, "seed": seed, **dataclasses.asdict(failure)}
        path.write_text(json.dumps(record, indent=1) + "\n")


class _Run:
    """One target's run: its workers, the watchdog, the counts."""

    def __init__(self, name: str, factory: Callable[[], Target], *, seed: int, jobs: int,
                 limit: float, seconds: float, recorder: Recorder,
                 log: Callable[[str], None], grace: float) -> None:  # fmt: skip
        self.name, self.factory, self.seed, self.jobs = name, factory, seed, jobs
        self.limit, self.recorder, self.log, self.grace = limit, recorder, log, grace
        self.ctx = mp.get_context("fork")
        self.queue: Any = self.ctx.Queue()
        self.deadline = time.time() + seconds
        self.workers: dict[int, tuple[Any, Any]] = {}
        self.latest: dict[int, Stats] = {}
        self.banked = Stats()  # counts of workers killed by the watchdog
        self.watch: dict[int, tuple[int, float]] = {}
        self.done: set[int] = set()
        self.killed: set[int] = set()

    def start(self, first: int) -> None:
        progress = self.ctx.Value("q", first)
        plan = Plan(self.factory, self.seed, first, self.jobs, self.deadline, self.limit)
        p = self.ctx.Process(target=_worker, args=(plan, progress, self.queue), daemon=True)
        p.start()
        self.workers[first] = (p, progress)
        self.watch[first] = (first, time.monotonic())

    def receive(self) -> None:
        try:
            msg = self.queue.get(timeout=0.25)
        except queue_module.Empty:
            return
        tag, wid = msg[0], msg[1]
        if wid in self.killed:
            return
        if tag == "stats":
            self.latest[wid] = msg[2]
        elif tag == "failure":
            self.recorder.write(self.name, self.seed, msg[2])
        elif tag == "done":
            self.done.add(wid)

    def watchdog(self) -> None:
        now = time.monotonic()
        for wid, (p, progress) in list(self.workers.items()):
            if wid in self.done:
                continue
            value = int(progress.value)
            seen, since = self.watch[wid]
            if value != seen:
                self.watch[wid] = (value, now)
            elif value >= 0 and now - since > self.limit + self.grace:
                self.kill(wid, p, value, now - since)
            elif value < 0 and not p.is_alive() and self.queue.empty():
                self.done.add(wid)  # ended without its last message

    def kill(self, wid: int, p: Any, index: int, stuck: float) -> None:
        p.kill()
        p.join()
        self.done.add(wid)
        self.killed.add(wid)
        key = "hang@killed by the watchdog (stuck outside Python)"
        hung = Stats(tried=1)
        hung.record("hang", key)
        self.banked.add(hung)
        if wid in self.latest:
            self.banked.add(self.latest.pop(wid))
        case = self.factory().generate(case_rng(self.seed, index))
        failure = Failure("hang", key, f"killed after {stuck:.0f} s", "", case, index)
        self.recorder.write(self.name, self.seed, failure)
        self.log(f"  [{self.name}] worker stuck on input {index}: killed, restarting")
        if time.time() < self.deadline:
            self.start(index + self.jobs)

    def run(self) -> Stats:
        self.factory().warm()
        for k in range(self.jobs):
            self.start(k)
        while len(self.done) < len(self.workers):
            self.receive()
            self.watchdog()
        for p, _ in self.workers.values():
            p.join(timeout=5)
        total = Stats()
        total.add(self.banked)
        for s in self.latest.values():
            total.add(s)
        return total


def run_target(
    name: str,
    factory: Callable[[], Target],
    *,
    seconds: float,
    seed: int,
    jobs: int,
    limit: float,
    recorder: Recorder,
    log: Callable[[str], None] = lambda s: None,
    grace: float = _GRACE_SECONDS,
) -> Stats:
    """Fuzz one target for ``seconds`` with ``jobs`` worker processes; return the counts.

    A worker that has not moved on from an input for ``limit + grace`` seconds (stuck
    where the alarm cannot reach it) is killed, the input recorded as a hang, and a new
    worker goes on with the next input.
    """
    run = _Run(name, factory, seed=seed, jobs=jobs, limit=limit, seconds=seconds,
               recorder=recorder, log=log, grace=grace)  # fmt: skip
    return run.run()


# ------------------------------------------------------------------------ replay, shrink
def replay(target: Target, case: Case, limit: float) -> Outcome:
    """Check one stored case (in this process) and classify it."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        return run_case(target, case, limit)
    finally:
        signal.signal(signal.SIGALRM, old)


def shrink(target: Target, case: Case, key: str, limit: float, budget: float) -> Case:
    """Greedily smaller ``case`` that still fails with ``key``, within ``budget`` seconds."""
    stop = time.monotonic() + budget
    best = case
    improved = True
    while improved and time.monotonic() < stop:
        improved = False
        for cand in target.shrink(best):
            if time.monotonic() >= stop:
                break
            if len(json.dumps(cand)) >= len(json.dumps(best)):
                continue
            out = replay(target, cand, limit)
            if out.key == key:
                best = cand
                improved = True
                break
    return best


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
