"""min/max in comparisons, and two comparisons of the same operands (issue 15, class 1).

The forms TVM's comparison rules fold, each with the answer derived here from the
construction (not from quorem):

* a min or max compared with one of its operands: ``min(a, b) <= a`` is ``1``,
  ``min(a, b) < a`` is ``b < a``, ``max(a, b) == a`` is ``b <= a``;
* a min or max compared with one of its operands shifted by a constant:
  ``x + 1 < max(8, x)`` is ``x < 7``, ``max(x, y) < x + 3`` is ``y < x + 3``;
* a min or max with a constant compared with a constant: ``min(a, 5) < 3`` is ``a < 3``;
  where the constants are the other way round the range decides it (``min(a, 2) < 3``
  is ``1``), and a comparison with the min's own constant keeps one clause
  (``min(a, 5) == 5`` is ``5 <= a``);
* two comparisons of the same operands in a junction: ``a < b or b < a`` is ``a != b``,
  ``a <= b and a != b`` is ``a < b``, also among other clauses; clauses that contradict
  through a difference of atoms fold (``x - 2 < y - 2 and y < x`` is ``0``).

Operands are plain variables and quotients of them, so the expected forms are exact in
floor and trunc alike (no division changes meaning).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from benchmarks.classes import ClassCase, distinct_per_kind, no_given

FAMILY = "minmax_compare"
_Draw = tuple[str, dict[str, tuple[int, int]], str, str]
_BOX = {"x": (-60, 60), "y": (-60, 60), "z": (-60, 60)}


def _operand(rng: random.Random) -> _Draw:
    a, b = rng.sample(["x", "y", "x // 4", "y + 3"], 2)
    f = rng.choice(["min", "max"])
    op = rng.choice(["<=", "<", "==", "!="])
    if op in ("==", "!=") and "+" in a:
        # An equation is built as a function of the difference of its sides, which
        # splits a sum operand (y + 3 == max(y + 3, b) is y == max(y + 3, b) - 3); the
        # rules match an operand that is an atom (not done: see the README).
        a, b = "y", (b if b != "y" else "x")
    want = {
        ("min", "<="): "1",
        ("min", "<"): f"{b} < {a}",
        ("min", "=="): f"{a} <= {b}",
        ("min", "!="): f"{b} < {a}",
        ("max", "<="): f"{b} <= {a}",
        ("max", "<"): "0",
        ("max", "=="): f"{b} <= {a}",
        ("max", "!="): f"{a} < {b}",
    }[(f, op)]
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    return f"{f}({first}, {second}) {op} {a}", _BOX, want, f"{f} against an operand"


def _operand_left(rng: random.Random) -> _Draw:
    a, b = rng.sample(["x", "y", "z // 3"], 2)
    f = rng.choice(["min", "max"])
    op = rng.choice(["<", "<="])
    want = {
        ("min", "<"): "0",
        ("min", "<="): f"{a} <= {b}",
        ("max", "<"): f"{a} < {b}",
        ("max", "<="): "1",
    }[(f, op)]
    return f"{a} {op} {f}({b}, {a})", _BOX, want, f"an operand against its {f}"


def _shifted(rng: random.Random) -> _Draw:
    c = rng.randint(1, 6)
    d = rng.randint(-10, 10)
    kind = rng.randrange(4)
    if kind == 0:
        return f"x + {c} < max({d}, x)", _BOX, f"x < {d - c}", "operand shifted under max"
    if kind == 1:
        return f"max(x, y) < x + {c}", _BOX, f"y < x + {c}", "max under its shifted operand"
    if kind == 2:
        return f"x - {c} < min(x, y)", _BOX, f"x < y + {c}", "operand shifted under min"
    return f"min(x, y) <= x - {c}", _BOX, f"y <= x - {c}", "min over its shifted operand"


def _constant(rng: random.Random) -> _Draw:
    c1 = rng.randint(-10, 10)
    f = rng.choice(["min", "max"])
    op = rng.choice(["<", "<=", "=="])
    # c2 on the side where the min/max's constant does not decide the comparison
    if f == "min":
        c2 = c1 - rng.randint(1, 5) if op != "<" else c1 - rng.randint(0, 5)
    else:
        c2 = c1 + rng.randint(1, 5) if op != "<=" else c1 + rng.randint(0, 5)
    want = f"x {op} {c2}"
    return f"{f}(x, {c1}) {op} {c2}", _BOX, want, f"{f} with a constant against a constant"


def _decided_by_range(rng: random.Random) -> _Draw:
    c1 = rng.randint(-10, 10)
    if rng.random() < 0.5:
        c2 = c1 + rng.randint(1, 5)
        return f"min(x, {c1}) < {c2}", _BOX, "1", "min below the constant: decided by range"
    c2 = c1 - rng.randint(1, 5)
    return f"max(x, {c1}) <= {c2}", _BOX, "0", "max above the constant: decided by range"


def _own_constant(rng: random.Random) -> _Draw:
    c = rng.randint(-10, 10)
    f, op = rng.choice([("min", "=="), ("min", "!="), ("max", "=="), ("max", "!=")])
    want = {
        ("min", "=="): f"{c} <= x",
        ("min", "!="): f"x < {c}",
        ("max", "=="): f"x <= {c}",
        ("max", "!="): f"{c} < x",
    }[(f, op)]
    return f"{f}(x, {c}) {op} {c}", _BOX, want, f"{f} against its own constant"


def _pairs(rng: random.Random) -> _Draw:
    a, b = rng.sample(["x", "y", "x*2"], 2)
    kind = rng.randrange(3)
    extra = rng.random() < 0.5
    if kind == 0:
        clauses, want, j = [f"{a} < {b}", f"{b} < {a}"], f"{a} != {b}", "or"
    elif kind == 1:
        clauses, want, j = [f"{a} < {b}", f"{a} == {b}"], f"{a} <= {b}", "or"
    else:
        clauses, want, j = [f"{a} <= {b}", f"{a} != {b}"], f"{a} < {b}", "and"
    if extra:
        clauses.insert(rng.randrange(3), "z == 7")
        want = f"z == 7 {j} {want}"
    rng.shuffle(clauses)
    return f" {j} ".join(clauses), _BOX, want, f"two comparisons of the same operands ({j})"


def _contradiction(rng: random.Random) -> _Draw:
    k = rng.randint(1, 9)
    c = rng.randint(0, 4)
    text = f"x - {k} < y - {k} and y < x - {c}"
    return text, _BOX, "0", "contradiction through a difference of atoms"


_KINDS: tuple[Callable[[random.Random], _Draw], ...] = (
    _operand,
    _operand_left,
    _shifted,
    _constant,
    _decided_by_range,
    _own_constant,
    _pairs,
    _contradiction,
)
_PER_KIND = 4


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """Four distinct expressions of each kind, each in floor and in trunc."""
    return distinct_per_kind(FAMILY, [no_given(k) for k in _KINDS], _PER_KIND, rng, ideal_ops=None)
