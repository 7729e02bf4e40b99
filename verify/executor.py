"""Where proof jobs run: a local process pool (the default) or a Dask ``distributed`` cluster.

``quorem verify --executor dask://HOST:PORT`` sends each job as one task to the Dask
scheduler at ``HOST:PORT``; ``--executor local`` (the default) runs them in a pool of
``--jobs`` processes on this machine. Either way the caller gets each job's result as
soon as it is known and does everything else (caching, reporting) itself, so the two
give the same report.

The workers of a cluster may run on other hosts: nothing names a file on this machine.
What the tasks share (for ``quorem verify``, the rules files' texts) is sent once, as a
task of its own whose result the scheduler can compute again if the worker holding it
dies (data scattered to a worker is lost with it). A task whose worker dies is run
again elsewhere by the scheduler (up to Dask's ``distributed.scheduler.allowed-failures``
times, 3 by default), a task that raises is retried (:data:`RETRIES`), and every item's
result is reported exactly once. A worker must run the same prover as this process (the
same quorem code and Z3 version, checked by each task): its results are cached here
under this process's keys.

:func:`add_executor_option` adds ``--executor`` to a command's parser;
:func:`open_executor` gives an :class:`Executor` whose
:meth:`~Executor.map_unordered` maps a picklable module-level function over items.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
import dataclasses
import functools
import importlib.util
import multiprocessing
import pickle
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

import z3

from quorem.errors import QuoremError

from .digest import code_digest
from .interrupt import ignore_interrupts

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "LOCAL",
    "RETRIES",
    "DaskExecutor",
    "Executor",
    "ExecutorError",
    "ExecutorSpec",
    "LocalPool",
    "WorkerMismatchError",
    "add_executor_option",
    "in_new_process",
    "open_executor",
    "parse_executor",
]

_C = TypeVar("_C")
_A = TypeVar("_A")
_R = TypeVar("_R")
_T = TypeVar("_T")

LOCAL: Final = "local"
_SCHEME: Final = "dask"
INSTALL_HINT: Final = 'pip install "quorem[dask]"'
RETRIES: Final = 2
"""How many times a Dask task that raised is run again (worker deaths: see above)."""
CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the Dask scheduler before giving up (read at each connection)."""


class ExecutorError(QuoremError):
    """A bad ``--executor``, Dask not installed, or a scheduler not reached (exit status 2)."""


class WorkerMismatchError(ExecutorError):
    """A Dask worker runs another prover (quorem code or Z3 version) than the client."""


@dataclasses.dataclass(frozen=True)
class ExecutorSpec:
    """Where to run jobs: ``address`` is a Dask scheduler's ``tcp://HOST:PORT``, or None (local)."""

    address: str | None = None

    def __str__(self) -> str:
        if self.address is None:
            return LOCAL
        return f"{_SCHEME}://{self.address.removeprefix('tcp://')}"


def parse_executor(text: str) -> ExecutorSpec:
    """The executor ``text`` names: ``local``, or ``dask://HOST:PORT``.

    Raises ExecutorError, saying what is wrong, for anything else, and for a Dask
    address when ``distributed`` is not installed (naming the extra to install).
    """
    if text == LOCAL:
        return ExecutorSpec()
    usage = f"expected {LOCAL} or {_SCHEME}://HOST:PORT, not {text!r}"
    try:
        url = urllib.parse.urlsplit(text)
        port = url.port
    except ValueError as exc:  # a port that is not a number, or out of range
        raise ExecutorError(f"{usage} ({exc})") from None
    if url.scheme != _SCHEME:
        raise ExecutorError(usage)
    if not url.hostname or port is None or port == 0:
        raise ExecutorError(f"{usage} (a host and a port are needed)")
    if url.path not in ("", "/") or url.query or url.fragment or url.username or url.password:
        raise ExecutorError(f"{usage} (nothing may follow the port)")
    if importlib.util.find_spec("distributed") is None:
        raise ExecutorError(f"{text}: the Dask client is not installed ({INSTALL_HINT})")
    host = f"[{url.hostname}]" if ":" in url.hostname else url.hostname
    return ExecutorSpec(f"tcp://{host}:{port}")


def _executor_type(text: str) -> ExecutorSpec:
    try:
        return parse_executor(text)
    except ExecutorError as exc:
        # argparse prints it as "PROG: error: argument --executor: ..." and exits 2.
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_executor_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--executor local|dask://HOST:PORT`` to ``parser``; its value is an ExecutorSpec.

    A bad value is a usage error of the command (argparse's message, exit status 2).
    """
    parser.add_argument(
        "--executor",
        type=_executor_type,
        default=ExecutorSpec(),
        metavar="URL",
        help=f"where the proofs run: {LOCAL} (default: a pool of --jobs processes) or "
        f"{_SCHEME}://HOST:PORT, a Dask scheduler whose workers run them (needs "
        f"quorem[dask]; the workers need quorem[verify])",
    )


class Executor(abc.ABC):
    """Runs a function over items, giving each result as it comes."""

    @abc.abstractmethod
    def map_unordered(
        self,
        fn: Callable[[_C, _A], _R],
        items: Sequence[_A],
        context: _C,
        order: Sequence[int] | None = None,
    ) -> Generator[tuple[int, _R], None, None]:
        """``(i, fn(context, items[i]))`` for every i, each exactly once, as they finish.

        ``fn`` must be a module-level function (it is sent by name) and ``context`` and
        the items picklable; ``context`` is sent once to each process, not with each
        item. ``order`` is the order to start them in (default: the items' order). An
        item whose ``fn`` raises ends the iteration with that exception. Closing the
        iterator (or an exception in the caller while iterating it inside
        ``contextlib.closing``) cancels the items not started.
        """

    def map_items(
        self, fn: Callable[[_A], _R], items: Sequence[_A], order: Sequence[int] | None = None
    ) -> Generator[tuple[int, _R], None, None]:
        """``(i, fn(items[i]))`` for every i, each exactly once, as they finish.

        :meth:`map_unordered` with no context: ``fn`` is the context, sent once.
        """
        return self.map_unordered(_call_item, items, fn, order)

    @property
    @abc.abstractmethod
    def in_process(self) -> bool:
        """True when every item runs in this process, one after the other."""


def _call_item(fn: Callable[[_A], _R], item: _A) -> _R:
    return fn(item)


class LocalPool(Executor):
    """A pool of ``workers`` processes on this machine (one: everything in this process)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    @property
    def in_process(self) -> bool:
        """True with one worker: no pool is started."""
        return self.workers <= 1

    def map_unordered(
        self,
        fn: Callable[[_C, _A], _R],
        items: Sequence[_A],
        context: _C,
        order: Sequence[int] | None = None,
    ) -> Generator[tuple[int, _R], None, None]:
        """See :meth:`Executor.map_unordered`; the pool is shut down when it ends."""
        order = range(len(items)) if order is None else order
        if self.in_process or len(items) <= 1:
            for i in order:
                yield i, fn(context, items[i])
            return
        pool = ProcessPoolExecutor(
            max_workers=self.workers, initializer=_init_local, initargs=(context,)
        )
        try:
            futures: dict[Future[_R], int] = {
                pool.submit(_call_local, fn, items[i]): i for i in order
            }
            for f in as_completed(futures):
                yield futures[f], f.result()
        except BaseException:  # also GeneratorExit: the caller stopped iterating
            stop_pool(pool)
            raise
        pool.shutdown(wait=True)


# The context of the items of a local pool's worker process (LocalPool.map_unordered).
_local_context: Any = None


def _init_local(context: object) -> None:
    global _local_context  # noqa: PLW0603  (one per worker process, set once)
    ignore_interrupts()
    _local_context = context


def _call_local(fn: Callable[[Any, _A], _R], item: _A) -> _R:
    return fn(_local_context, item)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued jobs and terminate the workers, which ignore Ctrl-C.

    Interrupted, a job failed, or the output pipe closed: do not wait for the running
    proofs to end. (CPython keeps the workers in ``_processes``, which shutdown forgets.)
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown forgets it too
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    # Let the pool's manager thread see its workers gone and close its wake-up pipe now:
    # otherwise it may close the pipe while the interpreter's exit hook is writing to it
    # (an EBADF traceback after "interrupted").
    if manager is not None:
        manager.join(timeout=5)


@dataclasses.dataclass(frozen=True)
class _Shared(Generic[_C]):
    """A map's context as its tasks get it, with the prover the client runs."""

    value: _C
    prover: str


@functools.cache
def _prover() -> str:
    """The prover of this process: the digest of the code proofs rely on, and Z3's version."""
    return f"quorem {code_digest()[:16]}, Z3 {z3.get_version_string()}"


# Z3's main context, the proof recorder and the fresh-context trick are per process: two
# proofs must not run at once in one worker process, whatever its thread count.
_ONE_AT_A_TIME: Final = threading.Lock()


def _hold(shared: _Shared[_C]) -> _Shared[_C]:
    return shared


def _call_dask(fn: Callable[[_C, _A], _R], shared: _Shared[_C], item: _A) -> _R:
    if shared.prover != _prover():
        raise WorkerMismatchError(
            f"a Dask worker runs another prover ({_prover()}) than this client "
            f"({shared.prover}): install the same quorem and Z3 on every worker"
        )
    with _ONE_AT_A_TIME:
        return fn(shared.value, item)


class DaskExecutor(Executor):
    """The workers of a Dask ``distributed`` scheduler, through ``client``.

    The client is this process's; closing it (``open_executor`` does) leaves the
    scheduler and its workers running.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    @property
    def in_process(self) -> bool:
        """Never: even one item goes to the cluster."""
        return False

    def map_unordered(
        self,
        fn: Callable[[_C, _A], _R],
        items: Sequence[_A],
        context: _C,
        order: Sequence[int] | None = None,
    ) -> Generator[tuple[int, _R], None, None]:
        """See :meth:`Executor.map_unordered`.

        One task per item, with ``retries=RETRIES`` and a priority falling in ``order``
        (Dask starts the highest first). The context is a task of its own, so that it
        is computed again if the worker holding it dies. Closing the iterator cancels
        the tasks not finished (a task already running goes on to its end: Dask does
        not stop a running thread).
        """
        from distributed import as_completed as dask_as_completed  # noqa: PLC0415

        order = range(len(items)) if order is None else order
        # Keys unique to this map: two runs on one cluster never share a result.
        token = uuid.uuid4().hex[:12]
        name = getattr(fn, "__name__", "task").strip("_")
        shared = self.client.submit(
            _hold, _Shared(context, _prover()), key=f"quorem-context-{token}", pure=False
        )
        pending: dict[Any, int] = {}
        try:
            for rank, i in enumerate(order):
                f = self.client.submit(
                    _call_dask,
                    fn,
                    shared,
                    items[i],
                    key=f"quorem-{name}-{token}-{i}",
                    retries=RETRIES,
                    priority=len(order) - rank,
                    pure=False,
                )
                pending[f] = i
            for f in dask_as_completed(list(pending), loop=self.client.loop):
                result: _R = f.result()
                # Dropped here, the future is released: the cluster forgets the result.
                yield pending.pop(f), result
            if pending:  # never silently: a missing result is an error
                raise ExecutorError(f"Dask returned no result for {len(pending)} tasks")
        finally:
            # The cluster's state is not ours to keep: the tasks left are cancelled, and
            # a failure to do so (the scheduler gone) must not hide what ended the map.
            with contextlib.suppress(Exception):
                self.client.cancel([*pending, shared])


@contextlib.contextmanager
def open_executor(spec: ExecutorSpec, workers: int) -> Iterator[Executor]:
    """The executor ``spec`` names: a pool of ``workers`` processes, or a Dask client.

    A Dask scheduler not answering within :data:`CONNECT_TIMEOUT` seconds is an
    ExecutorError. On the way out the client is closed; the cluster is left running.
    """
    if spec.address is None:
        yield LocalPool(workers)
        return
    try:
        from distributed import Client  # noqa: PLC0415
    except ImportError:
        raise ExecutorError(f"{spec}: the Dask client is not installed ({INSTALL_HINT})") from None
    timeout = CONNECT_TIMEOUT
    try:
        client = Client(spec.address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {spec} within {timeout:g} s ({exc})"
        ) from None
    try:
        yield DaskExecutor(client)
    finally:
        client.close()


def in_new_process(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` in a new Python process (spawned: nothing inherited from this one).

    ``fn`` is sent by name, so it must be a module-level function; its exception is
    raised here. In a daemonic process (a Dask worker's, a ``multiprocessing.Pool``'s),
    which multiprocessing does not let have children, the new process is a plain
    subprocess of the same interpreter, given its input and returning its result pickled.
    """
    if multiprocessing.current_process().daemon:
        return _in_subprocess(fn, *args)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=ignore_interrupts)
    try:
        out = pool.submit(fn, *args).result()
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return out


_CHILD: Final = "import sys; from quorem.verify.executor import _child; _child(sys.argv[1])"


def _in_subprocess(fn: Callable[..., _T], *args: Any) -> _T:
    with tempfile.TemporaryDirectory(prefix="quorem-") as tmp:
        out = Path(tmp) / "result.pickle"
        # subprocess.run kills the child if this process is interrupted while it waits.
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(out)],
            input=pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL),
            stderr=subprocess.PIPE,
            check=False,
        )
        if done.returncode != 0 or not out.exists():
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(
                f"the new process running {getattr(fn, '__qualname__', fn)} failed "
                f"(exit status {done.returncode})" + "".join(f"\n  {line}" for line in tail)
            )
        ok, value = pickle.loads(out.read_bytes())  # written by our own child just now
    if not ok:
        raise value
    result: _T = value
    return result


def _child(out: str) -> None:
    """The subprocess of :func:`_in_subprocess`: stdin's pickled call, its outcome to ``out``."""
    ignore_interrupts()
    fn, args = pickle.loads(sys.stdin.buffer.read())
    try:
        outcome: tuple[bool, object] = (True, fn(*args))
    except Exception as exc:
        outcome = (False, exc)
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an exception (or result) that does not pickle
        data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    Path(out).write_bytes(data)
