"""Ctrl-C during a Z3 query: stop at once, as a ``KeyboardInterrupt``, not as an answer.

Z3 catches SIGINT itself while it searches and answers ``unknown`` ("interrupted from
keyboard"); Python never sees the interrupt, so ``quorem verify`` went on to the next
query, and each Ctrl-C cost one proof instead of stopping the run. With Z3's handler
off, Python's runs only once the query returns, up to a query's timeout later. So
:func:`interruptible` turns Z3's handler off and lets a watcher thread, woken through
:func:`signal.set_wakeup_fd`, interrupt the running query: it returns at once and Python
raises ``KeyboardInterrupt`` before its answer is used.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator

import z3

__all__ = ["ignore_interrupts", "interruptible"]


def _watch(reader: socket.socket) -> None:
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT in data:
            ctx = z3.z3._main_ctx  # the current context (jobs may replace it)
            if ctx is not None:
                ctx.interrupt()


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, Ctrl-C stops a running Z3 query and raises ``KeyboardInterrupt``.

    Only in the main thread (signals are delivered there); elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    z3.set_param("ctrl_c", False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(reader,), daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        z3.set_param("ctrl_c", True)
        writer.close()  # the watcher's recv returns b"" and it ends
        reader.close()


def ignore_interrupts() -> None:
    """In a worker process: leave Ctrl-C to the parent, which stops the workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    z3.set_param("ctrl_c", False)
