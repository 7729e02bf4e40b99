"""The benchmark corpora (benchmarks/corpora.py) and their ideal_ops (benchmarks/ideal.py).

The generated cases must be valid ``--batch`` lines, reproducible from the seed, and
their ``ideal_ops`` true: 0 only for expressions affine on the box (and quorem's result
stays equivalent), a positive claim never below the proven lower bound nor above what
the expression itself needs (the bounds themselves: tests/test_bench_ideal.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import assert_equivalent, examples

import quorem
from benchmarks import corpora, ideal
from benchmarks.layouts import Bounds

SMALL = 10  # cases per generated family in these tests
SIZES = (10, 30)
COMMITTED = Path(corpora.__file__).resolve().parent / "corpora"


def bounds_of(case: corpora.Case) -> Bounds:
    return {n: (b[0], b[1]) for n, b in case["vars"].items()}


def parsed(case: corpora.Case) -> quorem.Term:
    return quorem.parse(case["expr"], bounds_of(case), case["semantics"])


@pytest.fixture(scope="module")
def small() -> dict[str, list[corpora.Case]]:
    return {f: list(corpora.family_cases(f, 0, SMALL, SIZES)) for f in corpora.FAMILIES}


def all_cases(small: dict[str, list[corpora.Case]]) -> Iterator[corpora.Case]:
    for cases in small.values():
        yield from cases


def test_every_case_has_the_fields_and_parses(small: dict[str, list[corpora.Case]]) -> None:
    for family, cases in small.items():
        assert cases, family
        for case in cases:
            assert case["family"] == family
            assert case["semantics"] in ("floor", "trunc", "euclid")
            assert isinstance(case["expr"], str)
            assert isinstance(case["id"], str)
            for lo, hi in case["vars"].values():
                assert isinstance(lo, int) and isinstance(hi, int) and lo <= hi
            if "ideal_ops" in case:
                assert isinstance(case["ideal_ops"], int) and case["ideal_ops"] >= 0
            assert ("size" in case) == family.startswith("ladder_")
            json.loads(corpora.to_line(case))
            parsed(case)


def test_counts_and_unique_ids(small: dict[str, list[corpora.Case]]) -> None:
    for family in corpora.GENERATED:
        assert len(small[family]) == SMALL
    assert len(small["ladder_sum"]) == 2 * len(SIZES)
    assert len(small["ladder_nest"]) == 4 * len(SIZES)
    ids = [c["id"] for c in all_cases(small)]
    assert len(ids) == len(set(ids))


def test_generation_is_deterministic_per_seed(small: dict[str, list[corpora.Case]]) -> None:
    for family in ("transpose", "ladder_sum"):
        again = list(corpora.family_cases(family, 0, SMALL, SIZES))
        assert again == small[family]
    other = list(corpora.family_cases("tiled", 1, SMALL))
    assert other != small["tiled"]


def test_ideal_zero_is_affine_and_claims_are_bounded(small: dict[str, list[corpora.Case]]) -> None:
    """Recompute each generated claim's lower bound; 0 means an affine table."""
    for family in corpora.GENERATED:
        for case in small[family]:
            if "ideal_ops" not in case:
                continue
            term, bounds = parsed(case), bounds_of(case)
            table = ideal.tabulate(term, bounds)
            lower = ideal.lower_bound(table, case["semantics"])
            assert lower == case["ideal_ops"], case["id"]
            assert (lower == 0) == ideal.is_affine(table)
            assert case["ideal_ops"] <= quorem.count_divmod(term)


def test_quorem_results_are_equivalent(small: dict[str, list[corpora.Case]]) -> None:
    for family in (*corpora.GENERATED, "seeds"):
        for case in small[family]:
            term = parsed(case)
            assert_equivalent(term, quorem.simplify(term), bounds_of(case))


def test_seeds_are_copied_whole(small: dict[str, list[corpora.Case]]) -> None:
    lines = [json.loads(x) for x in corpora.SEEDS.read_text().splitlines() if x.strip()]
    assert [c["expr"] for c in small["seeds"]] == [x["expr"] for x in lines]
    assert [c.get("ideal_ops") for c in small["seeds"]] == [x.get("ideal_ops") for x in lines]


# ------------------------------------------------------------------------ the ladders
def affine_at(term: quorem.Term, bounds: Bounds, env: dict[str, int]) -> bool:
    """Whether the value at ``env`` is the affine interpolation from the unit steps."""
    origin = {n: lo for n, (lo, _) in bounds.items()}
    base = quorem.evaluate(term, origin)
    want = base
    for n, v in env.items():
        step = dict(origin, **{n: origin[n] + 1})
        want += (quorem.evaluate(term, step) - base) * (v - origin[n])
    return quorem.evaluate(term, env) == want


@settings(max_examples=examples(25), deadline=None)
@given(st.data())
def test_ladder_sum_is_affine_at_any_point(data: st.DataObject) -> None:
    """ideal_ops 0 by construction: the value is the unit-step interpolation anywhere."""
    case = data.draw(st.sampled_from(list(corpora.family_cases("ladder_sum", 0, sizes=(10, 31)))))
    bounds = bounds_of(case)
    env = {n: data.draw(st.integers(lo, hi), label=n) for n, (lo, hi) in sorted(bounds.items())}
    assert case["ideal_ops"] == 0
    assert affine_at(parsed(case), bounds, env)


@pytest.mark.slow
def test_ladder_nests_by_construction() -> None:
    witnessed = 0
    for case in corpora.family_cases("ladder_nest", 0, sizes=(3, 12)):
        term, bounds = parsed(case), bounds_of(case)
        table = ideal.tabulate(term, bounds)
        assert (case["ideal_ops"] == 0) == ideal.is_affine(table), case["id"]
        if "identity" in case["id"]:
            assert table.values == tuple(range(corpora.NEST_BOUND + 1))
            continue
        if case["ideal_ops"] == 1:  # the witness (x + K)//2**depth, K from the text
            consts = [int(c) for c in re.findall(r"\+ (\d+)\)//2", case["expr"])]
            assert len(consts) == case["size"]
            k = sum(c << i for i, c in enumerate(consts))
            assert table.values == tuple((x + k) >> case["size"] for x in range(len(table.values)))
            witnessed += 1
    assert witnessed


def test_ladders_have_their_sizes() -> None:
    cases = list(corpora.family_cases("ladder_sum", 0, sizes=(10, 30)))
    assert [c["size"] for c in cases] == [10, 10, 30, 30]
    for c in cases:
        assert len(re.findall(r"\bx\d+\b", c["expr"])) == c["size"]


# ------------------------------------------------------------ CLI and committed files
def test_cli_writes_the_families(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--out", str(tmp_path), "--seed", "3", "--count", "4", "--sizes", "10"]
    assert corpora.main([*argv, "--families", "strided,ladder_nest,seeds"]) == 0
    out = capsys.readouterr().out
    assert "strided: 4 cases" in out
    lines = (tmp_path / "strided.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == list(corpora.family_cases("strided", 3, 4))
    assert len((tmp_path / "ladder_nest.jsonl").read_text().splitlines()) == 4


def test_committed_corpora_are_seed_zero(small: dict[str, list[corpora.Case]]) -> None:
    """The committed files begin with the cases the generator makes for seed 0, parse,
    and stay under about a megabyte each."""
    for family in corpora.FAMILIES:
        path = COMMITTED / f"{family}.jsonl"
        assert path.stat().st_size < 1_100_000, family
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        if family in corpora.GENERATED or family == "seeds":
            assert lines[: len(small[family])] == small[family], family
            for case in lines:
                parsed(case)
        ids = [c["id"] for c in lines]
        assert len(ids) == len(set(ids))
    ladders = [json.loads(x) for x in (COMMITTED / "ladder_nest.jsonl").read_text().splitlines()]
    assert sorted({c["size"] for c in ladders}) == list(corpora.LADDER)
