"""The tinygrad hook: quorem simplifies index expressions during kernel generation.

tinygrad 0.14 lowers a kernel in ``tinygrad.codegen.full_rewrite_to_sink``, a fixed
sequence of named ``graph_rewrite`` passes. While the hook is installed, a pass of
quorem's own runs after each pass named in ``AFTER_PASSES``: it replaces each index
operand of an ``INDEX`` (and each ``weakint`` or condition operand of a non-index UOp)
that holds a ``//`` or ``%`` by :func:`quorem.adapters.tinygrad.simplify` of it, when
that has no more ``FLOORDIV``/``FLOORMOD``/``CDIV``/``CMOD`` UOps. Those passes run while
index expressions are still ``weakint`` (unbounded integers): quorem reads arithmetic as
exact, so operands with arithmetic in a sized int (which may wrap) are left alone.

The seam is the module attribute ``tinygrad.codegen.graph_rewrite``, looked up by
``full_rewrite_to_sink`` at each call; ``install`` replaces it and ``uninstall`` puts
the original back. Compiled programs are cached by tinygrad under ``to_program_key``,
which does not know of the hook, so the hook adds a marker to that key while it is
installed: programs made with and without it are never mixed up. tinygrad compiles
several kernels in spawned worker processes; the hook sends them a function of its own
that installs the hook in the worker for that compilation.

Import this through :mod:`quorem.adapters.tinygrad`, which re-exports ``install``,
``uninstall``, ``installed``, ``hook`` and ``hook_stats``.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import tinygrad.codegen as _codegen
import tinygrad.engine.realize as _realize
from tinygrad.dtype import dtypes
from tinygrad.uop import GroupOp
from tinygrad.uop.ops import Ops, PatternMatcher, UPat

from . import _tinygrad_terms as terms

__all__ = [
    "AFTER_PASSES",
    "ENV_VAR",
    "HookStats",
    "hook",
    "hook_stats",
    "install",
    "installed",
    "uninstall",
]

# The passes of full_rewrite_to_sink that quorem's pass follows: the symbolic passes
# after range optimisation ("postopt symbolic", on the kernel's loop indices) and the
# last one before index dtypes are lowered to sized ints ("extra symbolic", on the
# final scalar index expressions). Both leave indices in weakint, which cannot wrap.
AFTER_PASSES: Final = ("postopt symbolic", "extra symbolic")
# Set to 1 (or any value but "" and "0") to install the hook when the adapter is imported.
ENV_VAR: Final = "QUOREM_TINYGRAD"
_PASS_NAME: Final = "quorem index simplify"
_KEY_MARK: Final = "quorem-index-simplify"
_DIVMODS: Final = frozenset({Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD})

_log = logging.getLogger("quorem.adapters.tinygrad")
_lock = threading.Lock()


@dataclass
class HookStats:
    """What the hook did since it was last reset (``hook_stats(reset=True)``)."""

    operands_seen: int = 0  # index operands holding a division, read by quorem
    operands_rewritten: int = 0  # of those, replaced by quorem's result
    divmods_removed: int = 0  # FLOORDIV/FLOORMOD/CDIV/CMOD UOps fewer in those operands
    errors: int = 0  # operands left to tinygrad because quorem raised


@dataclass
class _State:
    """The hook's mutable state, one per process."""

    installed: bool = False
    logged_error: bool = False
    stats: HookStats = field(default_factory=HookStats)


_state = _State()
# Per UOp (hash-consed, so one entry per structure): quorem's replacement, or None where
# quorem gives nothing better. Weak keys: a kernel's UOps die with it.
_memo: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

_original_graph_rewrite: Final[Callable[..., Any]] = _codegen.graph_rewrite
_original_codegen_key: Final[Callable[..., tuple[Any, ...]]] = _codegen.to_program_key
_original_realize_key: Final[Callable[..., tuple[Any, ...]]] = _realize.to_program_key
_original_compile_kernel: Final[Callable[..., Any]] = _realize._compile_kernel


def installed() -> bool:
    """Whether the hook is installed in this process."""
    return _state.installed


def install() -> None:
    """Make tinygrad simplify index expressions with quorem in the kernels it generates.

    Idempotent. Kernels generated from now on (in this process and in tinygrad's
    compile workers) go through quorem's pass; kernels already compiled are not
    regenerated, but a program compiled without the hook is never reused for a kernel
    generated with it (nor the other way round). The hook never changes what a kernel
    computes: quorem's rewrites are proven, untranslatable UOps stay as they are, and
    if quorem raises, tinygrad's own expression is kept (the error is logged once).
    """
    with _lock:
        if _state.installed:
            return
        _codegen.graph_rewrite = _graph_rewrite
        _codegen.to_program_key = _to_program_key_codegen
        _realize.to_program_key = _to_program_key_realize
        _realize._compile_kernel = _compile_kernel
        _state.installed = True


def uninstall() -> None:
    """Undo :func:`install`: tinygrad generates kernels as it does without quorem.

    Idempotent. Programs tinygrad compiled before :func:`install` are found again in its
    cache; those compiled with the hook stay cached under their own key, unused.
    """
    with _lock:
        if not _state.installed:
            return
        _codegen.graph_rewrite = _original_graph_rewrite
        _codegen.to_program_key = _original_codegen_key
        _realize.to_program_key = _original_realize_key
        _realize._compile_kernel = _original_compile_kernel
        _state.installed = False


@contextmanager
def hook() -> Iterator[None]:
    """The hook installed inside a ``with`` block, and as it was before after it."""
    was = _state.installed
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()


def hook_stats(*, reset: bool = False) -> HookStats:
    """A copy of the hook's counters in this process (not its workers'); ``reset`` zeroes them."""
    out = HookStats(**vars(_state.stats))
    if reset:
        _state.stats = HookStats()
    return out


def install_from_env() -> None:
    """Install the hook if the environment variable ``QUOREM_TINYGRAD`` is set (not ``0``)."""
    if os.environ.get(ENV_VAR, "") not in ("", "0"):
        install()


def _graph_rewrite(*args: Any, **kwargs: Any) -> Any:
    """Tinygrad's ``graph_rewrite``, followed by quorem's pass after the chosen passes."""
    out = _original_graph_rewrite(*args, **kwargs)
    if kwargs.get("name") in AFTER_PASSES:
        out = _original_graph_rewrite(out, _pm_quorem, name=_PASS_NAME, walk=True)
    return out


def _to_program_key_codegen(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
    return (*_original_codegen_key(*args, **kwargs), _KEY_MARK)


def _to_program_key_realize(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
    return (*_original_realize_key(*args, **kwargs), _KEY_MARK)


def _compile_kernel(task: Any) -> Any:
    """Tinygrad's compile-worker task, with the hook installed for its duration.

    Workers are spawned processes that import tinygrad afresh: this function (sent to them
    by reference, so they import quorem) installs the hook there, and uninstalls it after,
    since the same worker later serves tasks sent while the hook is off.
    """
    was = _state.installed
    install()
    try:
        return _original_compile_kernel(task)
    finally:
        if not was:
            uninstall()


def _rewrite_operands(x: Any) -> Any:
    """``x`` with its division-holding index operands simplified by quorem, or None."""
    if x.op is not Ops.INDEX and _holds_index(x):
        return None  # an index UOp is simplified as a whole, from its consumer
    src = tuple(_simplified(s) if _holds_index(s) else s for s in x.src)
    if all(a is b for a, b in zip(src, x.src, strict=True)):
        return None
    return x.replace(src=src)


_pm_quorem: Final = PatternMatcher([(UPat(GroupOp.All, name="x"), _rewrite_operands)])


def _holds_index(u: Any) -> bool:
    """Whether ``u`` is an unbounded-int index or a condition: what quorem may rewrite."""
    return bool(u.dtype in (dtypes.weakint, dtypes.bool))


def _simplified(u: Any) -> Any:
    """Quorem's version of the index UOp ``u`` if it has no more divisions, else ``u``."""
    try:
        found = _memo.get(u, _MISSING)
    except TypeError:  # pragma: no cover - a UOp without weak references
        found = _MISSING
    if found is not _MISSING:
        return u if found is None else found
    before = _count_divmods(u)
    if before == 0 or not _exact(u):
        return u
    _state.stats.operands_seen += 1
    try:
        with warnings.catch_warnings():
            # A rewrite cut short by quorem's budget is still proven; no warning per kernel.
            warnings.simplefilter("ignore")
            out = terms.simplify(u, cost=_cost)  # looked up now: a test may replace it
        if out.dtype != u.dtype:
            raise TypeError(f"quorem changed the dtype {u.dtype} to {out.dtype}")
        after = _count_divmods(out)
    except Exception:
        _state.stats.errors += 1
        if not _state.logged_error:
            _state.logged_error = True
            _log.warning(
                "quorem failed on an index expression; tinygrad's own is kept", exc_info=True
            )
        out, after = u, before
    keep = out is not u and after <= before
    _memo[u] = out if keep else None
    if not keep:
        return u
    _state.stats.operands_rewritten += 1
    _state.stats.divmods_removed += before - after
    return out


_MISSING: Final = object()


def _cost(u: Any) -> tuple[int, int]:
    """Divisions and remainders first, then UOps: quorem's result must have fewer of these."""
    nodes = u.toposort()
    return sum(n.op in _DIVMODS for n in nodes), len(nodes)


def _count_divmods(u: Any) -> int:
    return sum(n.op in _DIVMODS for n in u.toposort())


def _exact(u: Any) -> bool:
    """Whether every integer ALU UOp in ``u`` is weakint, whose arithmetic cannot wrap.

    quorem reads integer arithmetic as exact; in a sized int (data loaded as ``int32``,
    say) that would assume no overflow, which tinygrad's index dtypes promise and data
    does not. Such an operand is left to tinygrad.
    """
    return not any(
        n.op in GroupOp.ALU
        and n.dtype not in (dtypes.bool, dtypes.weakint)
        and dtypes.is_int(n.dtype)
        for n in u.toposort()
    )
