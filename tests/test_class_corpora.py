"""The class corpora of issue 15 (benchmarks/classes): one module per class of index
expressions a peer simplifies. For every class family: the committed file is what the
generator makes for seed 0; it has at least 40 cases, in floor and in trunc (Halide's in
Euclidean division); quorem's output equals the input at every point of the box where the
case's ``given`` conditions hold (every point of a box of at most 4096, else corners and
random points); and it reaches the expected form (the same term, or no more ``//``/``%`` and
no more nodes) on at least 99% of the cases.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support import FAST_EXAMPLES, examples

import quorem
from benchmarks import corpora
from benchmarks.classes import class_semantics
from quorem.evaluation import count_divmod
from quorem.walk import tree_size

COMMITTED = Path(corpora.__file__).resolve().parent / "corpora"
# Points a case is checked at: the whole box up to EXHAUSTIVE points, else its corners and
# SAMPLES random points (fewer in the fast profile: the ci profile checks them all).
EXHAUSTIVE = 4096 if examples(1500) > FAST_EXAMPLES else 256
SAMPLES = examples(1500)
REACHED = 0.99


def _bounds(case: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    return {n: (b[0], b[1]) for n, b in case["vars"].items()}


def _points(bounds: Mapping[str, tuple[int, int]], seed: str) -> Iterator[dict[str, int]]:
    names = sorted(bounds)
    size = 1
    for lo, hi in bounds.values():
        size *= hi - lo + 1
    if size <= EXHAUSTIVE:
        for values in itertools.product(*(range(bounds[n][0], bounds[n][1] + 1) for n in names)):
            yield dict(zip(names, values, strict=True))
        return
    for corner in itertools.product(*((bounds[n][0], bounds[n][1]) for n in names)):
        yield dict(zip(names, corner, strict=True))
    rng = random.Random(seed)
    for _ in range(SAMPLES):
        yield {n: rng.randint(*bounds[n]) for n in names}


def _value(term: quorem.Term, point: Mapping[str, int]) -> int | None:
    try:
        return quorem.evaluate(term, point)
    except quorem.EvaluationError:
        return None  # division by zero: the input is undefined here


def simplify_case(case: Mapping[str, Any]) -> tuple[quorem.Term, quorem.Term, list[quorem.Term]]:
    """The case's input, quorem's output and its parsed conditions."""
    bounds, semantics = _bounds(case), case["semantics"]
    term = quorem.parse(case["expr"], bounds, semantics)
    given = [quorem.parse(g, bounds, semantics) for g in case.get("given", [])]
    out = quorem.simplify(term, given=given)
    return term, out, given


def reached(case: Mapping[str, Any], out: quorem.Term) -> bool:
    """Whether ``out`` is the expected form or at least as simplified."""
    want = quorem.parse(case["expected"], _bounds(case), case["semantics"])
    if out is want:
        return True
    return count_divmod(out) <= count_divmod(want) and tree_size(out) <= tree_size(want)


def _text(case: Mapping[str, Any], out: quorem.Term) -> str:
    return quorem.to_text(out, quorem.Semantics(case["semantics"]))


@pytest.mark.parametrize("family", corpora.CLASSES)
def test_class_corpus(family: str) -> None:
    path = COMMITTED / f"{family}.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [json.loads(corpora.to_line(c)) for c in corpora.family_cases(family, 0)], (
        "regenerate: python -m benchmarks.corpora --families " + family
    )
    assert len(lines) >= 40, family
    assert {c["semantics"] for c in lines} == set(class_semantics(family))
    misses = []
    for case in lines:
        term, out, given = simplify_case(case)
        for point in _points(_bounds(case), case["id"]):
            if any(_value(g, point) in (0, None) for g in given):
                continue  # outside the conditions the result is promised under
            want = _value(term, point)
            if want is not None:
                assert _value(out, point) == want, (case["id"], point, quorem.to_text(out))
        if not reached(case, out):
            misses.append(
                f"{case['id']}: {case['expr']} -> {_text(case, out)}, want {case['expected']}"
            )
    assert len(misses) <= (1 - REACHED) * len(lines), "\n".join(misses)
