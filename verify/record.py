"""The queries a proof rests on, kept for a second solver to check.

A termination or interval proof is no single query: it is a search (a lexicographic
order tried component by component, the paths of a transfer function explored branch
by branch) whose steps each rest on Z3 answering ``unsat``. ``quorem verify --confirm``
re-checks those answers with cvc5, so the modules that search call :func:`decided`
instead of ``solver.check()``; inside :func:`recording` each ``unsat`` is kept with the
assertions it refuted. Other answers are not kept: a model only adds a path to explore
or is the counterexample of a failed proof, never a step a proof rests on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import z3

__all__ = ["decided", "recording"]

# One list per open recording (they nest: the innermost one gets the queries).
_OPEN: list[list[list[Any]]] = []


@contextlib.contextmanager
def recording() -> Iterator[list[list[Any]]]:
    """Within the block, each query :func:`decided` answers ``unsat`` is appended to the list."""
    queries: list[list[Any]] = []
    _OPEN.append(queries)
    try:
        yield queries
    finally:
        _OPEN.pop()


def decided(solver: z3.Solver) -> Any:
    """``solver.check()``; an ``unsat`` answer is recorded with its assertions when recording."""
    answer = solver.check()
    if _OPEN and answer == z3.unsat:
        _OPEN[-1].append(list(solver.assertions()))
    return answer
