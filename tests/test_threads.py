"""Terms built and simplified from many threads at once stay interned: ``a is b`` decides.

Each test starts every thread at a barrier with a tiny switch interval, so that threads
interleave inside the intern table's find-or-insert as often as CPython allows. The
terms are new to the table when the threads start (the single-threaded reference is
kept as text only), so every thread races to insert the same nodes.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

import quorem
from quorem import RuleSet, Semantics, Term
from quorem import ruleset as ruleset_module
from quorem import term as term_module
from quorem.errors import VariableClashError
from quorem.term import div, maximum, minimum, mod, var

_CORPORA = Path(__file__).resolve().parents[1] / "benchmarks" / "corpora"
_THREADS = 8
_ROUNDS = 3

T = TypeVar("T")


@pytest.fixture(autouse=True)
def _tiny_switch_interval() -> Iterator[None]:
    """Switch threads as often as possible, so that races show up in a short test."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _in_threads(work: Callable[[int], T], n: int = _THREADS) -> list[T]:
    """``work(i)`` for ``i`` in ``range(n)``, each in its own thread, started together."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _corpus_sample(step: int) -> list[tuple[str, dict[str, tuple[int, int]], str]]:
    """Every ``step``-th benchmark corpus expression: text, bounds, semantics."""
    rows = []
    for path in sorted(_CORPORA.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                bounds = {k: (lo, hi) for k, (lo, hi) in row["vars"].items()}
                rows.append((row["expr"], bounds, row["semantics"]))
    return rows[::step]


def _random_terms(seed: int, count: int) -> list[Term]:
    """``count`` terms over a few variables, from ``seed`` alone (the same in every thread)."""
    rng = random.Random(seed)
    xs = [var(f"t{seed}_{i}", 0, 4 + i) for i in range(4)]
    pool: list[Term] = list(xs)
    for _ in range(count):
        a, b = rng.choice(pool), rng.choice(pool)
        k = rng.randint(2, 9)
        pick = rng.randrange(7)
        if pick == 0:
            t = a + b * k
        elif pick == 1:
            t = a * b
        elif pick == 2:
            t = div(a + k, quorem.const(k), Semantics.FLOOR)
        elif pick == 3:
            t = mod(a * k + b, quorem.const(k + 1), Semantics.TRUNC)
        elif pick == 4:
            t = maximum(a, b - k)
        elif pick == 5:
            t = minimum(a - b, b + k)
        else:
            t = a - b + k
        pool.append(t)
        if len(pool) > 60:  # keep sizes small: replace old terms
            pool.pop(rng.randrange(4, len(pool) - 1))
    return pool


def _assert_same_objects(per_thread: Sequence[Sequence[Term]]) -> None:
    """Every thread's i-th term is one object: equal terms were never interned twice."""
    first = per_thread[0]
    for results in per_thread[1:]:
        assert len(results) == len(first)
        split = [i for i, (a, b) in enumerate(zip(first, results, strict=True)) if a is not b]
        assert not split, f"{len(split)} equal terms are different objects, e.g. {first[split[0]]}"


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(_ROUNDS))
def test_parse_and_simplify_from_threads(round_: int) -> None:
    """Eight threads parse and simplify the same expressions: one object per term, and
    the results of a single-threaded run."""
    rows = _corpus_sample(11)
    # The single-threaded reference as text, so that no term survives into the race.
    expected = [str(quorem.simplify(quorem.parse(t, b, s))) for t, b, s in rows]
    gc.collect()

    def work(i: int) -> tuple[list[Term], list[Term]]:
        order = list(range(len(rows)))
        random.Random(i + 100 * round_).shuffle(order)  # different interleavings
        built: list[Any] = [None] * len(rows)
        done: list[Any] = [None] * len(rows)
        for j in order:
            text, bounds, sem = rows[j]
            built[j] = quorem.parse(text, bounds, sem)
            done[j] = quorem.simplify(built[j])
        return built, done

    results = _in_threads(work)
    _assert_same_objects([built for built, _ in results])
    _assert_same_objects([done for _, done in results])
    assert [str(t) for t in results[0][1]] == expected
    # Built again by one thread, the terms are the objects the threads share.
    for j, (text, bounds, sem) in enumerate(rows):
        assert quorem.parse(text, bounds, sem) is results[0][0][j]


@pytest.mark.parametrize("round_", range(_ROUNDS))
def test_operators_from_threads(round_: int) -> None:
    """Eight threads build the same few thousand terms with operators: one object each,
    the one a single thread builds afterwards."""
    seeds = [1000 * round_ + s for s in range(8)]
    results = _in_threads(lambda i: [t for s in seeds for t in _random_terms(s, 800)])
    _assert_same_objects(results)
    again = [t for s in seeds for t in _random_terms(s, 800)]
    _assert_same_objects([results[0], again])


def test_terms_dying_while_threads_build_them() -> None:
    """Threads drop their terms as they go, so the table meets dead entries mid-race."""
    seeds = list(range(50_000, 50_006))

    def work(i: int) -> list[str]:
        out = []
        for _ in range(3):
            for s in seeds:
                ts = _random_terms(s, 150)
                out.append(str(ts[-1]))
                del ts  # the terms die here, while other threads may be rebuilding them
        return out

    results = _in_threads(work)
    assert all(r == results[0] for r in results)
    kept = [_random_terms(s, 150) for s in seeds]
    again = [_random_terms(s, 150) for s in seeds]
    _assert_same_objects([[t for ts in kept for t in ts], [t for ts in again for t in ts]])


@pytest.mark.slow
def test_new_rule_set_from_threads() -> None:
    """Threads share a fresh rule set whose dispatchers are compiled on first use."""
    rules = RuleSet(list(quorem.default_ruleset().rules))
    rows = _corpus_sample(23)
    # The default rule set has the same rules: ``rules`` is first used by the threads.
    expected = [str(quorem.simplify(quorem.parse(t, b, s))) for t, b, s in rows]

    def work(i: int) -> list[str]:
        return [str(quorem.simplify(quorem.parse(t, b, s), rules)) for t, b, s in rows]

    assert all(r == expected for r in _in_threads(work))


def test_default_rule_set_loaded_once_from_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads asking for the default rules at once all get one rule set."""
    monkeypatch.setattr(ruleset_module, "_DEFAULT", [])
    got = _in_threads(lambda i: ruleset_module.default_ruleset())
    assert all(r is got[0] for r in got)
    assert len(ruleset_module._DEFAULT) == 1


@pytest.mark.slow
def test_variable_counts_from_threads() -> None:
    """Threads build and drop variables of one name with two bounds at once: every
    term holding both is refused, and once all are dropped no count is left over."""

    def work(i: int) -> int:
        refused = 0
        for k in range(300):
            a = var("th_clash", 0, 31)
            b = var("th_clash", 0, 7 + (i + k) % 2)  # two narrow variants, shared by threads
            try:
                quorem.simplify(a - b)
            except VariableClashError:
                refused += 1
            del a, b
            if k % 50 == 0:
                gc.collect()
        return refused

    assert _in_threads(work) == [300] * _THREADS
    gc.collect()
    quorem.simplify(var("th_other", 0, 1) + 1)  # settles the reported deaths
    with term_module._NAMES_LOCK:
        term_module._settle()
        assert "th_clash" not in term_module._LIVE
        assert "th_clash" not in term_module._CLASHING
