"""File names as the reports show them: the same on every machine and checkout."""

from __future__ import annotations

import os
from pathlib import Path

import quorem
import quorem.rules

__all__ = ["relative"]


def relative(file: str) -> str:
    """``file`` as a path relative to the working directory or to quorem, never absolute.

    Relative to the working directory when inside it, else to the folder holding the
    shipped rules or the engine (``rules/00-fold.rules``, ``engine/interval.py``
    wherever quorem is installed), else ``..``-relative to the working directory: a
    report reads the same on every machine and checkout.
    """
    path = Path(file).resolve()
    roots = [Path.cwd().resolve()]
    roots += [Path(m.__file__ or ".").resolve().parent.parent for m in (quorem.rules, quorem)]
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows)
        return path.name
