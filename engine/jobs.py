"""Worker processes for ``--jobs N``: the pool ``quorem simplify --batch`` and coverage use.

CPython runs one thread of Python code at a time, so threads do not make rewriting any
faster (four threads take as long as one); worker processes do. A pool of ``N`` workers
is started once per command; each loads the rule set once, when it starts
(:class:`RulesSpec`), and is then sent work in chunks of lines or cases, so the start-up
and the rule loading are paid once per worker, not once per line. The first chunk is
done by the parent before the workers start: workers forked from it inherit the rule
dispatchers that chunk compiled. The parent writes the results in input order: the
output is the same as in one process (only the ``seconds`` a rewrite took differ from
run to run). ``--jobs 1`` starts no process. Any start method works (fork, spawn,
forkserver): the rule set is sent as a picklable :class:`RulesSpec`, cases as pickled
terms (:meth:`quorem.term.Term.__reduce__`).

Workers ignore Ctrl-C: the parent, interrupted, stops them (:func:`stop_pool`).
"""

from __future__ import annotations

import dataclasses
import signal
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Final, TypeVar

from .errors import QuoremError
from .rule import Rule
from .ruleset import RuleSet, default_ruleset

__all__ = [
    "JobsError",
    "RulesSpec",
    "chunks",
    "ordered_results",
    "start_pool",
    "stop_pool",
    "worker_ruleset",
]

_IN_FLIGHT: Final = 2  # chunks queued per worker, ahead of the one it is working on

_T = TypeVar("_T")
_R = TypeVar("_R")


class JobsError(QuoremError):
    """A worker process ended without finishing its work (killed, out of memory)."""


@dataclasses.dataclass(frozen=True, slots=True)
class RulesSpec:
    """A rule set as a worker process rebuilds it: picklable, loaded once per worker.

    ``own``: the rules that are not the shipped ones, in priority order; with
    ``with_shipped``, the shipped rules follow them (``--rules FILE``), else they are
    the whole set (``--only-rules``, or a set built in Python). ``compiled`` and
    ``allow_unproven``: as the parent's set (see :class:`~quorem.ruleset.RuleSet`;
    each rule carries its proof, so a worker gates the rules as the parent does).
    """

    own: tuple[Rule, ...]
    with_shipped: bool
    compiled: bool
    allow_unproven: bool = False

    @classmethod
    def of(cls, ruleset: RuleSet) -> RulesSpec:
        """The spec of ``ruleset``: its rules, the shipped ones named rather than copied.

        (It loads the shipped rules to compare, once per process, if not yet loaded.)
        """
        shipped = default_ruleset()
        rules, n = ruleset.rules, len(shipped.rules)
        split = len(rules) - n
        if (
            n
            and split >= 0
            and ruleset.is_compiled == shipped.is_compiled
            and all(a is b for a, b in zip(rules[split:], shipped.rules, strict=True))
        ):
            return cls(rules[:split], True, ruleset.is_compiled, ruleset.allow_unproven)
        return cls(rules, False, ruleset.is_compiled, ruleset.allow_unproven)

    def load(self) -> RuleSet:
        """The rule set: the same rules in the same order as the parent's."""
        allow = self.allow_unproven
        if not self.with_shipped:
            return RuleSet(self.own, compiled=self.compiled, allow_unproven=allow)
        shipped = default_ruleset()
        return shipped.extend(self.own, first=True, allow_unproven=allow) if self.own else shipped


# The rule set of this worker process, loaded by _start_worker (one per process).
_WORKER_RULES: list[RuleSet] = []


def _start_worker(spec: RulesSpec) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the pool itself
    _WORKER_RULES.append(spec.load())


def worker_ruleset() -> RuleSet:
    """In a worker process: the rule set its pool was started with (loaded once)."""
    return _WORKER_RULES[-1]


def start_pool(jobs: int, ruleset: RuleSet) -> ProcessPoolExecutor:
    """A pool of ``jobs`` worker processes, each with ``ruleset`` loaded when it starts."""
    return ProcessPoolExecutor(
        max_workers=jobs, initializer=_start_worker, initargs=(RulesSpec.of(ruleset),)
    )


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued chunks and terminate the workers (they ignore Ctrl-C).

    For an interrupt or a closed output pipe: the chunks being worked on are not waited
    for. (CPython keeps the workers in ``_processes``, which ``shutdown`` forgets.)
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    if manager is not None:  # let it close its wake-up pipe before the interpreter exits
        manager.join(timeout=5)


def chunks(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    """``items`` in consecutive lists of ``size`` (the last one may be shorter)."""
    part: list[_T] = []
    for item in items:
        part.append(item)
        if len(part) == size:
            yield part
            part = []
    if part:
        yield part


def ordered_results(
    pool: ProcessPoolExecutor,
    fn: Callable[[_T], _R],
    parts: Iterable[_T],
    jobs: int,
) -> Generator[_R, None, None]:
    """``fn(part)`` for each part, computed in ``pool``, yielded in the order of ``parts``.

    At most a few parts per worker are queued ahead of the one yielded next, so a long
    input (a stream) is read as the results are consumed, not all at once. A worker
    that dies raises :class:`JobsError`; on any exception (an interrupt too) the pool is
    stopped.
    """
    pending: deque[Future[_R]] = deque()
    try:
        for part in parts:
            pending.append(pool.submit(fn, part))
            if len(pending) > jobs * _IN_FLIGHT:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool as exc:
        stop_pool(pool)
        raise JobsError(f"a worker process ended before finishing its work ({exc})") from None
    except BaseException:  # also GeneratorExit: the consumer stopped (a closed pipe)
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
