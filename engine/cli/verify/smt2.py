"""``--smt2 DIR``: the obligations' queries as SMT-LIB 2.6 files, proving nothing."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from quorem.verify.prove import obligations_of
from quorem.verify.smtlib import UnsupportedTermError, file_name, obligation_script
from quorem.verify.termination import NESTED_OBLIGATION

from ...rule import Rule
from .exits import EXIT_PROVEN, EXIT_USAGE
from .paths import relative

__all__ = ["write_smt2"]


# Obligations decided by more than one query, so not written by --smt2 (nor confirmed).
_NOT_ONE_QUERY: Final = {
    "termination": "one query per component of the measure, then the lexicographic order",
    NESTED_OBLIGATION: "one query per component and per pairing of the nodes",
    "interval": "one query per path of the symbolic execution",
}


def write_smt2(folder: Path, rules: Sequence[Rule], wanted: Sequence[str], arity: int) -> int:
    """``--smt2 DIR``: each equivalence and int64 obligation's first query, one file each."""
    obs = [ob for r in rules for ob in obligations_of(r, arity) if ob.kind in wanted]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"quorem verify: error: cannot write to {folder}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    written: set[str] = set()
    failed = 0
    for ob in obs:
        name = file_name(ob)
        if name in written:  # two rules of one name (in two files)
            name = f"{name.removesuffix('.smt2')}.{len(written)}.smt2"
        try:
            script = obligation_script(ob, location=f"{relative(ob.rule.file)}:{ob.rule.line}")
        except UnsupportedTermError as exc:
            print(f"quorem verify: error: {ob.rule.location}: {exc}", file=sys.stderr)
            failed += 1
            continue
        try:
            (folder / name).write_text(script.text, encoding="utf-8")
        except OSError as exc:
            print(f"quorem verify: error: cannot write {folder / name}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        written.add(name)
    print(f"wrote {len(written)} SMT-LIB 2.6 files to {folder} (equivalence and int64)")
    for kind, why in _NOT_ONE_QUERY.items():
        if kind in wanted:
            print(f"not written: {kind} obligations (decided by {why}, not one query)")
    return EXIT_USAGE if failed else EXIT_PROVEN
