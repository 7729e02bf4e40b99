"""A digest of the code a proof's meaning relies on, so that no cached proof outlives it.

A cached ``proven`` says: *this* encoding of the division semantics, *this* rule parser
and compiler, *these* interval functions and ``fits_int64`` proved the rule. Change any of
them and the answer may change (truncating division encoded as floor proves unsound
truncating rules), so the proof cache keys every entry by :func:`code_digest`: a SHA-256
over the bytes of every source file the prover's modules import from quorem,
transitively — computed from the files, never a hand-bumped version number.

The roots are the modules that decide a result: the prover, the encoder and its
division encodings, the counterexample replay, termination, the interval proofs, the job
runner and the cache itself. Following their ``quorem`` imports reaches the engine code
they rely on (``interval``, ``overflow``, ``term``, ``rule``, ``rulefile``, ``compiled``,
``matcher``, ``arith``, ...) and nothing else: editing the command line, the emitters or
the indexing maps keeps the proofs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from typing import Final, cast

__all__ = ["PROOF_ROOTS", "code_digest", "proof_modules", "proof_sources"]

PROOF_ROOTS: Final = (
    "quorem.verify.cache",
    "quorem.verify.division",
    "quorem.verify.encode",
    "quorem.verify.intervals",
    "quorem.verify.jobs",
    "quorem.verify.prove",
    "quorem.verify.replay",
    "quorem.verify.termination",
)


@functools.cache
def _spec(module: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``module``, found without importing it or any package above it.

    ``importlib.util.find_spec`` imports the parent packages, and a name taken for a
    module (``quorem.verify.prove.Obligation``) imports its module: the prover's, which
    imports Z3. The engine computes this digest at run time to check proof records,
    where neither Z3 nor the prover may be imported, so the finders are asked directly.
    """
    if module == "quorem":
        return importlib.util.find_spec("quorem")
    parent, _, _ = module.rpartition(".")
    parent_spec = _spec(parent)
    if parent_spec is None or parent_spec.submodule_search_locations is None:
        return None
    path = list(parent_spec.submodule_search_locations)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(module, path)
        except (ImportError, ValueError):
            continue
        if spec is not None:
            return cast(importlib.machinery.ModuleSpec, spec)
    return None


def _origin(module: str) -> Path | None:
    """The source file of ``module``, or None when it is not a quorem module with one."""
    spec = _spec(module)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    if origin.suffix != ".py":
        # A native build's extension module (quorem._native): its source is the .py
        # beside it, compiled from it; that is what the proofs read.
        source = origin.with_name(origin.name.split(".")[0] + ".py")
        return source if source.is_file() and origin.suffix in (".so", ".pyd") else None
    return origin


# Import statements, also indented ones (the replay imports the interpreter lazily) and
# parenthesised lists over several lines. Reading the text is ten times faster than
# parsing it, and a stray match in a docstring can only add a file, never lose one.
_FROM: Final = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT: Final = re.compile(r"^[ \t]*import[ \t]+([\w.][\w., \t]*)", re.M)


def _imported(module: str, source: str, is_package: bool) -> set[str]:
    """The quorem modules ``source`` (the text of ``module``) may import, anywhere in it.

    A name imported *from* a package is included as a candidate module: it counts when
    it is one.
    """
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for m in _IMPORT.finditer(source):
        out.update(n.split()[0] for n in m.group(1).split(",") if n.strip())
    for m in _FROM.finditer(source):
        base = m.group(1)
        level = len(base) - len(base.lstrip("."))
        if level:
            parts = package.split(".")
            rest = base[level:]
            parts = parts[: len(parts) - level + 1]
            base = ".".join([*parts, rest] if rest else parts)
        out.add(base)
        names = re.sub(r"#[^\n]*", "", m.group(2)).strip("()")
        out.update(f"{base}.{n.split()[0]}" for n in names.split(",") if n.strip())
    return {m for m in out if m == "quorem" or m.startswith("quorem.")}


def proof_sources() -> list[Path]:
    """The source files of :data:`PROOF_ROOTS` and every quorem module they import.

    Sorted, each once; found by reading the files' ``import`` statements (nothing is
    imported to find them but the packages, to locate their files).
    """
    return sorted(set(proof_modules().values()))


def proof_modules() -> dict[str, Path]:
    """The modules of :data:`PROOF_ROOTS` and every quorem module they import, by name.

    Each with its source file; found by reading the files' ``import`` statements.
    """
    found: dict[str, Path] = {}
    todo = list(PROOF_ROOTS)
    while todo:
        module = todo.pop()
        if module in found or module == "quorem":
            # The root package only re-exports the API (``from quorem import term`` runs
            # it, but no proof reads it): following it would tie every proof to the CLI's
            # and the emitters' code.
            continue
        path = _origin(module)
        if path is None:
            continue  # a name imported from a module, not a module itself
        found[module] = path
        text = path.read_text(encoding="utf-8")
        todo += sorted(_imported(module, text, path.name == "__init__.py") - found.keys())
    return found


@functools.cache
def code_digest() -> str:
    """SHA-256 of the bytes of :func:`proof_sources`, each with its file name.

    Computed once per process; each file is named by its module (``quorem.verify.division``),
    so the digest does not depend on where the package lives: a wheel, an editable install's
    link tree and the source folders give one digest.
    """
    h = hashlib.sha256()
    for module, path in sorted(proof_modules().items()):
        h.update(module.encode() + b"\x00")
        h.update(path.read_bytes())
        h.update(b"\x00")
    return h.hexdigest()
