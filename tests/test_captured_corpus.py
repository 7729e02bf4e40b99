"""The index math captured from tinygrad's kernel generation (benchmarks/capture_tinygrad.py).

Every case of the committed corpus parses, and quorem's simplified output equals the
expression as written on the corners and 200 seeded random points of its box (every point
of a box of at most 200). The reference value comes from the benchmark's own evaluator of
the text as written (benchmarks.peers.expr), not from quorem's canonical form.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import quorem
from benchmarks.peers.expr import evaluate_points, from_text

CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "tinygrad_captured.jsonl"
SAMPLES = 200
CASES = [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if x.strip()]


def _points(bounds: Mapping[str, tuple[int, int]], seed: str) -> list[dict[str, int]]:
    names = sorted(bounds)
    ranges = [range(bounds[n][0], bounds[n][1] + 1) for n in names]
    size = 1
    for r in ranges:
        size *= len(r)
    if size <= SAMPLES:
        return [dict(zip(names, v, strict=True)) for v in itertools.product(*ranges)]
    corners = itertools.islice(itertools.product(*((r[0], r[-1]) for r in ranges)), 64)
    points = [dict(zip(names, v, strict=True)) for v in corners]
    rng = random.Random(seed)
    points += [{n: rng.randint(*bounds[n]) for n in names} for _ in range(SAMPLES)]
    return points


def test_corpus_shape() -> None:
    assert len(CASES) >= 100 and CORPUS.stat().st_size < 1_000_000
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert len({(c["expr"], json.dumps(c["vars"], sort_keys=True)) for c in CASES}) == len(CASES)
    for c in CASES:
        assert c["family"] == "tinygrad_captured" and c["semantics"] == "floor"
        assert c["source"].startswith("tinygrad "), c["id"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_captured_case(case: Mapping[str, Any]) -> None:
    bounds = {n: (int(b[0]), int(b[1])) for n, b in case["vars"].items()}
    term = quorem.parse(case["expr"], bounds, case["semantics"])
    out = quorem.simplify(term)
    points = _points(bounds, case["id"])
    want = evaluate_points(from_text(case["expr"], case["semantics"]), points)
    for point, value in zip(points, want, strict=True):
        if value is None:
            continue  # the input divides by zero here
        assert quorem.evaluate(out, point) == int(value), (case["id"], point, quorem.to_text(out))
