"""Index expressions simplified under a condition (issue 15, class 5).

A gated load computes its index only where its gate holds (tinygrad's
``uop_given_valid``); an indexing map's results matter only inside its constraints. Each
case has ``given`` conditions, and its expected form equals the input where they hold,
derived here from the construction:

* a remainder whose numerator the condition keeps below the divisor: ``x % d`` under
  ``x < d`` is ``x``; ``(x*s + y) % m`` under ``x*s + y < m`` is ``x*s + y``;
* a quotient the condition keeps in one bucket: ``(x*s + y) // m`` under ``x*s + y < m``
  is ``0``; ``x // d`` under ``x // d == c`` is ``c``; under ``c*d <= x < c*d + d``,
  ``x % d + y`` is ``x - c*d + y``;
* a max or min the condition decides: ``max(x, a)`` under ``x < a`` is ``a``;
* a sum of two indices under a joint bound: ``(x + y) // d`` under ``x + y < d`` is 0;
* a condition that does not decide keeps the term: ``x % d`` under ``x < d + 5`` stays.

Boxes are non-negative (index variables), so floor and truncation agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from benchmarks.classes import ClassCase, distinct_per_kind

FAMILY = "given"
_Draw = tuple[str, dict[str, tuple[int, int]], list[str], str, str]


def _small_remainder(rng: random.Random) -> _Draw:
    d = rng.choice([4, 8, 16, 32, 6])
    return f"x % {d}", {"x": (0, 4 * d)}, [f"x < {d}"], "x", "remainder below its divisor"


def _flat_remainder(rng: random.Random) -> _Draw:
    s = rng.choice([2, 4, 8])
    m = rng.choice([16, 30, 32, 60])
    box = {"x": (0, m), "y": (0, s - 1)}
    form = f"x*{s} + y"
    return f"({form}) % {m}", box, [f"{form} < {m}"], form, "flat index below the modulus"


def _flat_quotient(rng: random.Random) -> _Draw:
    s = rng.choice([2, 4, 8])
    m = rng.choice([16, 30, 32, 60])
    box = {"x": (0, m), "y": (0, s - 1)}
    form = f"x*{s} + y"
    return f"({form}) // {m}", box, [f"{form} < {m}"], "0", "flat index below the divisor"


def _pinned_quotient(rng: random.Random) -> _Draw:
    d = rng.choice([2, 3, 4, 8])
    c = rng.randint(0, 6)
    return f"x // {d}", {"x": (0, 8 * d)}, [f"x // {d} == {c}"], str(c), "quotient pinned"


def _band(rng: random.Random) -> _Draw:
    d = rng.choice([4, 8, 16])
    c = rng.randint(1, 4)
    lo = c * d
    conds = [f"{lo} <= x", f"x < {lo + d}"]
    return f"x % {d} + y", {"x": (0, 6 * d), "y": (0, 9)}, conds, f"x - {lo} + y", "one band"


def _decided_extreme(rng: random.Random) -> _Draw:
    a = rng.randint(3, 40)
    if rng.random() < 0.5:
        return f"max(x, {a})", {"x": (0, 63)}, [f"x < {a}"], str(a), "max decided"
    return f"min(x, {a})", {"x": (0, 63)}, [f"x < {a}"], "x", "min decided"


def _joint_bound(rng: random.Random) -> _Draw:
    d = rng.choice([8, 16, 32])
    box = {"x": (0, d), "y": (0, d)}
    return f"(x + y) // {d}", box, [f"x + y < {d}"], "0", "sum below the divisor"


def _undecided(rng: random.Random) -> _Draw:
    d = rng.choice([4, 8, 16])
    k = rng.randint(1, d - 1)
    return f"x % {d}", {"x": (0, 8 * d)}, [f"x < {d + k}"], f"x % {d}", "condition too weak"


_KINDS: tuple[Callable[[random.Random], _Draw], ...] = (
    _small_remainder,
    _flat_remainder,
    _flat_quotient,
    _pinned_quotient,
    _band,
    _decided_extreme,
    _joint_bound,
    _undecided,
)
_PER_KIND = 3


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """Three distinct cases of each kind, each in floor and in trunc."""
    return distinct_per_kind(FAMILY, _KINDS, _PER_KIND, rng)
