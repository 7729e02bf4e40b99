"""A proof cache, so CI re-proves only the rules that changed.

An entry is keyed by the rule's text (whitespace-normalised, so moving a rule within a
file keeps its proofs), the obligation (semantics, kind, arity), a digest of the code the
proof relies on (:func:`quorem.verify.digest.code_digest`: the prover, the division
encodings, the rule parser and compiler, the interval functions, ``fits_int64``...) and
Z3's version: changing any of them proves the rule again. Only definite answers
(proven, unsound) are cached; unknown never is.

Entries no recent run used are pruned when the file would hold more than
:data:`MAX_ENTRIES`. The cache is written as results arrive (at most every
:data:`SAVE_INTERVAL` seconds, and at the end), so an interrupted run keeps the proofs
it finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Final

import z3

from .digest import code_digest
from .prove import PROVEN_STATUSES, Obligation

__all__ = ["MAX_ENTRIES", "SAVE_INTERVAL", "ProofCache", "cache_key"]

# Seconds between two saves while results arrive: the file holds thousands of entries,
# and writing it after each of them would cost more than some proofs.
SAVE_INTERVAL: Final = 2.0
# Entries kept: the shipped catalogue is about 3,700 obligations, so this holds many
# versions of it (a few hundred bytes each) and prunes only what no recent run used.
MAX_ENTRIES: Final = 50_000
_FORMAT: Final = 2


def cache_key(ob: Obligation) -> str:
    """The digest identifying ``ob``'s proof."""
    body = "\n".join(
        line.split("#", 1)[0].strip() for line in ob.rule.text.splitlines() if line.strip()
    )
    parts = [
        body,
        ob.semantics.value if ob.semantics else "any",
        ob.kind,
        str(ob.arity),
        code_digest(),
        z3.get_version_string(),
    ]
    if ob.encoding != "purify":
        parts.append(ob.encoding)
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def default_path() -> Path:
    """``$QUOREM_CACHE_DIR/proofs.json``, else ``~/.cache/quorem/proofs.json``."""
    root = os.environ.get("QUOREM_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "quorem"
    return base / "proofs.json"


class ProofCache:
    """A JSON file of proof results keyed by :func:`cache_key`, pruned least recently used.

    Every change to a rule or to the prover makes new keys and leaves the old entries
    behind; a cache kept between CI runs would grow without end. Each entry's last use is
    remembered, and a save keeps the :data:`MAX_ENTRIES` most recently used.
    """

    def __init__(self, path: Path | None = None, max_entries: int | None = None) -> None:
        self.path = path or default_path()
        self.max_entries = MAX_ENTRIES if max_entries is None else max_entries
        self.entries: dict[str, dict[str, Any]] = {}
        self.used: dict[str, float] = {}
        self.saved_at = time.monotonic()
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        if isinstance(loaded, dict) and loaded.get("format") == _FORMAT:
            entries, used = loaded.get("entries"), loaded.get("used")
            if isinstance(entries, dict) and isinstance(used, dict):
                self.entries = entries
                self.used = {k: float(v) for k, v in used.items() if isinstance(v, int | float)}
        elif isinstance(loaded, dict):
            self.entries = loaded  # the first format: the entries alone, never used since

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The entry under ``key``, if any (and it counts as used now)."""
        entry = self.entries.get(key)
        if entry is not None:
            self.used[key] = time.time()
        return entry

    def store(self, key: str, entry: dict[str, Any]) -> None:
        """Remember ``entry`` under ``key`` (the caller decides it is definite)."""
        self.entries[key] = entry
        self.used[key] = time.time()

    def get(self, ob: Obligation) -> dict[str, Any] | None:
        """The cached result of ``ob``, if any."""
        return self.lookup(cache_key(ob))

    def put(self, ob: Obligation, entry: dict[str, Any]) -> None:
        """Remember a definite result of ``ob``."""
        if entry.get("status") in {*PROVEN_STATUSES, "unsound"}:
            self.store(cache_key(ob), entry)

    def save_if_due(self) -> None:
        """:meth:`save`, unless the last save was less than :data:`SAVE_INTERVAL` ago."""
        if time.monotonic() - self.saved_at >= SAVE_INTERVAL:
            self.save()

    def prune(self) -> int:
        """Drop all but the :attr:`max_entries` most recently used entries; how many went."""
        excess = len(self.entries) - self.max_entries
        if excess <= 0:
            return 0
        oldest = sorted(self.entries, key=lambda k: self.used.get(k, 0.0))[:excess]
        for key in oldest:
            del self.entries[key]
            self.used.pop(key, None)
        return excess

    def save(self) -> None:
        """Write the cache, pruned (best effort: an unwritable cache only costs time)."""
        self.saved_at = time.monotonic()
        self.prune()
        body = {"format": _FORMAT, "entries": self.entries, "used": self.used}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass
