"""The proof-cache key of a termination result (``quorem verify``)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import sys

from .. import encode
from ..cache import cache_key
from ..prove import Obligation

__all__ = ["termination_cache_key", "termination_digest"]


def termination_digest() -> str:
    """What a cached termination result depends on besides its rule.

    That is the source of every module of this package (the measure and its proofs) and
    of the encoder; pass it to :func:`termination_cache_key`.
    """
    package = sys.modules[__name__.rpartition(".")[0]]
    # Every module of the package, found rather than listed, so that a new one counts.
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    modules = [package] + [importlib.import_module(f"{package.__name__}.{n}") for n in names]
    text = "".join(f"{m.__name__}\n{inspect.getsource(m)}" for m in modules)
    return hashlib.sha256((text + inspect.getsource(encode)).encode()).hexdigest()


def termination_cache_key(ob: Obligation, digest: str) -> str:
    """The proof-cache key of a termination obligation, given :func:`termination_digest`."""
    return f"termination:{cache_key(ob)}:{digest}"
