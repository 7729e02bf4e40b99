"""Class corpora: one module per class of index expressions a peer simplifies (issue 15).

Each module ``benchmarks/classes/<family>.py`` generates the cases of one class, drawn
from a random stream so that the cases vary in constants, signs and shapes, including the
edges where a rule must stop applying. A module defines::

    def cases(rng: random.Random) -> Iterator[ClassCase]

and builds each case with :func:`class_case`. Families are found by listing this package
(no registry to edit); ``python -m benchmarks.corpora --families <family>`` writes
``benchmarks/corpora/<family>.jsonl``, and ``tests/test_class_corpora.py`` checks every
family: at least 40 cases, in floor and trunc (or the module's ``SEMANTICS``), every
output equal to its input at every point of the box where the case's ``given``
conditions hold (exhaustively on small boxes), and the expected form reached on at least
99% of the cases.

A case's ``expected`` is the text of the form a peer reaches (or better); it is reached
when quorem's result is that term (the same interned term, parsed with the case's
bounds and semantics) or has no more ``//``/``%`` and no more nodes than it.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NotRequired, TypedDict

__all__ = [
    "CaseList",
    "ClassCase",
    "Template",
    "class_case",
    "class_cases",
    "class_families",
    "class_semantics",
    "cycle_templates",
    "distinct_per_kind",
    "no_given",
]


class ClassCase(TypedDict):
    """One class-corpus line: the ``--batch`` fields, then the benchmark's own."""

    id: str
    family: str
    semantics: str
    vars: dict[str, list[int]]
    expr: str
    given: NotRequired[list[str]]
    expected: str
    ideal_ops: NotRequired[int]
    source: str


def class_case(
    family: str,
    index: int,
    semantics: str,
    *,
    expr: str,
    bounds: Mapping[str, tuple[int, int]],
    expected: str,
    source: str,
    ideal_ops: int | None = None,
    given: Sequence[str] = (),
) -> ClassCase:
    """A case with id ``<family>-<index:03d>-<semantics>`` (``given`` left out when empty)."""
    case: ClassCase = {
        "id": f"{family}-{index:03d}-{semantics}",
        "family": family,
        "semantics": semantics,
        "vars": {n: [lo, hi] for n, (lo, hi) in sorted(bounds.items())},
        "expr": expr,
        "expected": expected,
        "source": source,
    }
    if given:
        case["given"] = list(given)
    if ideal_ops is not None:
        case["ideal_ops"] = ideal_ops
    return case


def class_families() -> tuple[str, ...]:
    """The class families: the modules of this package, in name order."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg))


def class_semantics(family: str) -> tuple[str, ...]:
    """The semantics the cases of ``family`` are stated in: its module's ``SEMANTICS``,
    floor and trunc unless it says otherwise (Halide's cases are Euclidean only)."""
    if family not in class_families():
        raise ValueError(f"unknown class family {family!r}")
    module = importlib.import_module(f"{__name__}.{family}")
    found: tuple[str, ...] = getattr(module, "SEMANTICS", ("floor", "trunc"))
    return found


def class_cases(family: str, rng: random.Random) -> Iterator[ClassCase]:
    """The cases of class ``family`` drawn from ``rng``."""
    if family not in class_families():
        raise ValueError(f"unknown class family {family!r}")
    module = importlib.import_module(f"{__name__}.{family}")
    cases: Iterator[ClassCase] = module.cases(rng)
    return cases


# A template draws one case for a semantics: (expr, bounds, expected, source).
Template = Callable[[random.Random, str], tuple[str, Mapping[str, tuple[int, int]], str, str]]


def cycle_templates(
    family: str,
    templates: Sequence[Template],
    draws: int,
    rng: random.Random,
    *,
    semantics: Sequence[str] = ("floor", "trunc"),
) -> Iterator[ClassCase]:
    """``draws`` draws cycling through ``templates``, each drawn for each of ``semantics``."""
    for index in range(draws):
        template = templates[index % len(templates)]
        for semantics_name in semantics:
            expr, bounds, expected, source = template(rng, semantics_name)
            yield class_case(
                family,
                index,
                semantics_name,
                expr=expr,
                bounds=bounds,
                expected=expected,
                source=source,
            )


# A kind draws one expression: (expr, bounds, given, expected, source).
Kind = Callable[[random.Random], tuple[str, Mapping[str, tuple[int, int]], Sequence[str], str, str]]


# A draw without conditions: (expr, bounds, expected, source).
UngivenDraw = tuple[str, dict[str, tuple[int, int]], str, str]


def no_given(make: Callable[[random.Random], UngivenDraw]) -> Kind:
    """The kind that draws what ``make`` draws, with no ``given`` conditions."""

    def draw(rng: random.Random) -> tuple[str, dict[str, tuple[int, int]], list[str], str, str]:
        text, bounds, expected, source = make(rng)
        return text, bounds, [], expected, source

    return draw


def distinct_per_kind(
    family: str,
    kinds: Sequence[Kind],
    per_kind: int,
    rng: random.Random,
    *,
    ideal_ops: int | None = None,
) -> Iterator[ClassCase]:
    """``per_kind`` distinct draws of each kind (200 tries at most), each in floor and
    in trunc with the same expected form."""
    index = 0
    for kind in kinds:
        seen: set[str] = set()
        for _ in range(200):
            if len(seen) == per_kind:
                break
            expr, bounds, given, expected, source = kind(rng)
            key = "|".join([expr, *given])
            if key in seen:
                continue
            seen.add(key)
            for semantics in ("floor", "trunc"):
                yield class_case(
                    family,
                    index,
                    semantics,
                    expr=expr,
                    bounds=bounds,
                    expected=expected,
                    source=source,
                    ideal_ops=ideal_ops,
                    given=given,
                )
            index += 1


class CaseList(list[ClassCase]):
    """A family's cases, numbered in the order they are added."""

    def __init__(self, family: str) -> None:
        super().__init__()
        self.family = family

    def pair(
        self,
        expr: str,
        bounds: Mapping[str, tuple[int, int]],
        source: str,
        *,
        floor: str,
        trunc: str,
    ) -> list[ClassCase]:
        """Add ``expr`` under floor and under trunc, each with its expected form."""
        for semantics, expected in (("floor", floor), ("trunc", trunc)):
            self.append(
                class_case(
                    self.family,
                    len(self),
                    semantics,
                    expr=expr,
                    bounds=bounds,
                    expected=expected,
                    source=source,
                )
            )
        return self[-2:]
