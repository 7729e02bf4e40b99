"""The map corpus of issue 16 (``benchmarks/maps/xla_maps.jsonl``): every expected map reached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from indexing_support import image

from benchmarks.maps.xla_maps import cases
from quorem.indexing import parse_map, print_map
from quorem.indexing.compare import points
from quorem.indexing.simplify import simplify_map

CORPUS = Path(__file__).parent.parent / "benchmarks" / "maps" / "xla_maps.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_the_corpus_is_what_its_generator_writes() -> None:
    assert cases() == CASES
    assert len(CASES) >= 40
    assert {c["family"] for c in CASES} == {
        "rescale",
        "residues",
        "reshape-back",
        "min-max",
        "constraints",
        "unused-dims",
    }


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_case_reaches_its_expected_map(case: dict[str, Any]) -> None:
    m = parse_map(case["map"])
    assert print_map(simplify_map(m, **case["options"])) == case["expected"]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_expected_map_reads_what_its_map_reads(case: dict[str, Any]) -> None:
    m, want = parse_map(case["map"]), parse_map(case["expected"])
    if points(m) is None:
        pytest.skip("domain too large to enumerate")
    if case["options"].get("remove_unused_dims"):
        # Fewer dims: the same results, each from some point of the domain.
        def reach(x: Any) -> set[tuple[int, ...]]:
            return {r for rs in image(x).values() for r in rs}

        assert reach(want) == reach(m)
    else:
        assert image(want) == image(m)
