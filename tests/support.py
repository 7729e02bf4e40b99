"""Helpers shared by quorem's tests: box sampling and equivalence checks."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hypothesis import settings

import quorem
from quorem.rule import Pattern, POp

REPO = Path(__file__).resolve().parent.parent
# The seed corpus, carried in the repository: a fresh clone needs nothing beside it.
SEED_CASES = REPO / "benchmarks" / "data" / "seed_cases.jsonl"


def points(bounds: Mapping[str, tuple[int, int]], limit: int = 4000) -> Iterator[dict[str, int]]:
    """Every point of the box if it has at most ``limit`` points, else its corners and
    ``limit`` seeded random points."""
    names = sorted(bounds)
    size = 1
    for lo, hi in bounds.values():
        size *= hi - lo + 1
    if size <= limit:
        for values in itertools.product(*(range(bounds[n][0], bounds[n][1] + 1) for n in names)):
            yield dict(zip(names, values, strict=True))
        return
    for corner in itertools.product(*(bounds[n] for n in names)):
        yield dict(zip(names, corner, strict=True))
    rng = random.Random(1234)
    for _ in range(limit):
        yield {n: rng.randint(*bounds[n]) for n in names}


def assert_equivalent(
    a: quorem.Term, b: quorem.Term, bounds: Mapping[str, tuple[int, int]]
) -> None:
    """``b`` has ``a``'s value wherever ``a`` is defined on the box."""
    for env in points(bounds):
        try:
            want = quorem.evaluate(a, env)
        except quorem.EvaluationError:
            continue
        got = quorem.evaluate(b, env)
        assert got == want, f"{a} = {want} but {b} = {got} at {env}"


def assert_simplified_keeps_value(
    text: str, bounds: Mapping[str, tuple[int, int]], semantics: str
) -> None:
    """``text`` simplified prints back to itself and keeps its value on the whole box."""
    term = quorem.parse(text, bounds, semantics)
    out = quorem.simplify(term)
    assert quorem.parse(quorem.to_text(out, quorem.Semantics(semantics)), bounds, semantics) is out
    assert_equivalent(term, out, bounds)


def has_junction(p: Pattern) -> bool:
    """Whether a rule pattern has an ``and``/``or`` node (matched by the reference matcher)."""
    if isinstance(p, POp):
        return p.op in ("and", "or") or any(has_junction(c) for c in p.children)
    return False


def run_verify(argv: list[str], capsys: Any) -> tuple[int, str]:
    """Run ``quorem verify`` in-process: its exit status and what it printed."""
    from quorem.cli import verify as cli

    # The repository's rules files are proven by CI: a test's run writes no record there.
    if not {"--write-records", "--check-records", "--no-record"} & set(argv):
        argv = [*argv, "--no-record"]
    code = cli.main(argv)
    return code, capsys.readouterr().out


def rewritten(text: str, semantics: str, bounds: Mapping[str, tuple[int, int]]) -> quorem.Term:
    """``text`` parsed and simplified, which must reach a fixed point."""
    result = quorem.explain(quorem.parse(text, bounds, semantics))
    assert result.reason is quorem.StopReason.FIXED_POINT
    return result.term


def normal(text: str, semantics: str, bounds: Mapping[str, tuple[int, int]]) -> quorem.Term:
    """The simplified form of ``text``: what an expected result is compared with."""
    return quorem.simplify(quorem.parse(text, bounds, semantics))


def examples(budget: int) -> int:
    """A property test's example count under the active Hypothesis profile (tests/conftest.py).

    ``budget`` is the test's full budget, which the ``ci`` profile runs; the default
    ``fast`` profile runs at most 20 of them (derandomized), ``thorough`` ten times as many.
    """
    active = settings.default
    assert active is not None  # tests/conftest.py loads a profile before any test module
    profile = active.max_examples
    if profile <= FAST_EXAMPLES:
        return min(budget, FAST_EXAMPLES)
    if profile >= THOROUGH_EXAMPLES:
        return budget * 10
    return budget


FAST_EXAMPLES = 20  # the fast profile's max_examples (tests/conftest.py)
THOROUGH_EXAMPLES = 1000  # the thorough profile's
