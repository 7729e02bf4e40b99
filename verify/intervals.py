"""Prove the engine's interval analysis sound, by symbolic execution of its own code.

Rule guards read ``vmin``/``vmax``, so an unsound transfer function would make every
range rule unsound. Each function of :mod:`quorem.interval` is run on symbolic
bounds: a value class records every comparison the code makes as a branch, and the
explorer runs the code once per feasible path. On each path Z3 proves: if the operands
lie in their (symbolic) ranges, the operation's result lies in the range the code
returned. Unbounded sides (``None``) are covered by running every combination of
bounded and unbounded endpoints. The proof is of the code the engine runs, not of a
re-implementation.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable
from typing import Any, Final

import z3

from quorem import interval as iv
from quorem import term
from quorem.ops import Op

from .record import decided

__all__ = ["IntervalProof", "interval_obligations", "prove_interval"]


@dataclasses.dataclass
class _Branch:
    """A branch point of the explored path, with models witnessing its two directions."""

    taken: bool
    other_todo: bool  # the other direction is feasible and not yet explored
    model: z3.ModelRef | None  # a model of the path up to and including this branch
    other_model: z3.ModelRef | None


class _Explorer:
    """Chooses branch directions depth-first, pruning infeasible ones with Z3.

    It keeps a model of the path so far: the direction that model takes at a new branch
    is feasible without asking Z3, so a branch costs one query, not two.
    """

    def __init__(self, facts: list[Any]) -> None:
        self.facts = facts
        self.branches: list[_Branch] = []
        self.pos = 0
        self.path: list[Any] = []
        self.root_model = self._feasible([])[1]

    def start(self) -> None:
        self.pos = 0
        self.path = []

    def _feasible(self, extra: list[Any]) -> tuple[bool, z3.ModelRef | None]:
        """Whether facts, path and ``extra`` may hold (unknown counts as may), and a model."""
        s = z3.Solver()
        s.set("timeout", 5000)
        s.add(*self.facts, *self.path, *extra)
        answer = decided(s)
        return answer != z3.unsat, s.model() if answer == z3.sat else None

    def decide(self, cond: Any) -> bool:
        if isinstance(cond, bool):
            return cond  # both sides concrete: no branch
        if self.pos < len(self.branches):
            d = self.branches[self.pos].taken
        else:
            known = self.branches[-1].model if self.branches else self.root_model
            witnessed = None
            if known is not None:
                witnessed = bool(z3.is_true(known.eval(cond, model_completion=True)))
            # The true direction first; the known model settles one side for free.
            yes = (True, known) if witnessed is True else self._feasible([cond])
            no = (True, known) if witnessed is False else self._feasible([z3.Not(cond)])
            d = yes[0]
            here, other = (yes, no) if d else (no, yes)
            self.branches.append(_Branch(d, yes[0] and no[0], here[1], other[1]))
        self.pos += 1
        self.path.append(cond if d else z3.Not(cond))
        return d

    def next_run(self) -> bool:
        """Advance to the next unexplored path; False when all are done."""
        del self.branches[self.pos :]
        while self.branches:
            last = self.branches[-1]
            if last.other_todo:
                self.branches[-1] = _Branch(not last.taken, False, last.other_model, None)
                return True
            self.branches.pop()
        return False


class _Sym:
    """A symbolic integer: arithmetic builds Z3 terms, comparisons become branches."""

    __slots__ = ("e", "ex")

    def __init__(self, e: Any, ex: _Explorer) -> None:
        self.e = e
        self.ex = ex

    def _v(self, o: object) -> Any:
        return o.e if isinstance(o, _Sym) else o

    def __add__(self, o: object) -> _Sym:
        return _Sym(self.e + self._v(o), self.ex)

    __radd__ = __add__

    def __sub__(self, o: object) -> _Sym:
        return _Sym(self.e - self._v(o), self.ex)

    def __rsub__(self, o: object) -> _Sym:
        return _Sym(self._v(o) - self.e, self.ex)

    def __mul__(self, o: object) -> _Sym:
        return _Sym(self.e * self._v(o), self.ex)

    __rmul__ = __mul__

    def __neg__(self) -> _Sym:
        return _Sym(-self.e, self.ex)

    def __floordiv__(self, o: object) -> _Sym:
        return _Sym(_floordiv(self.e, self._v(o)), self.ex)

    def __rfloordiv__(self, o: object) -> _Sym:
        return _Sym(_floordiv(self._v(o), self.e), self.ex)

    def __lt__(self, o: object) -> bool:
        return self.ex.decide(self.e < self._v(o))

    def __le__(self, o: object) -> bool:
        return self.ex.decide(self.e <= self._v(o))

    def __gt__(self, o: object) -> bool:
        return self.ex.decide(self.e > self._v(o))

    def __ge__(self, o: object) -> bool:
        return self.ex.decide(self.e >= self._v(o))

    def __eq__(self, o: object) -> bool:
        return self.ex.decide(self.e == self._v(o))

    def __ne__(self, o: object) -> bool:
        return self.ex.decide(self.e != self._v(o))

    def __abs__(self) -> _Sym:
        return self if self.ex.decide(self.e >= 0) else -self

    def __bool__(self) -> bool:
        return self.ex.decide(self.e != 0)

    __hash__ = None  # type: ignore[assignment]


def _floordiv(a: Any, b: Any) -> Any:
    # Z3's integer division is Euclidean; for a positive divisor that is floor division.
    return z3.If(b > 0, a / b, (-a) / (-b))


def _truncdiv(a: Any, b: Any) -> Any:
    mag = z3.If(a >= 0, a, -a) / z3.If(b > 0, b, -b)
    return z3.If((a >= 0) == (b > 0), mag, -mag)


def _euclidmod(a: Any, b: Any) -> Any:
    # The Euclidean remainder is the floor remainder by |b| (stated by |b|, Z3 decides it).
    mag = z3.If(b > 0, b, -b)
    return a - mag * (a / mag)


def _cmp(cond: Any) -> Any:
    return z3.If(cond, z3.IntVal(1), z3.IntVal(0))


_BINARY: Final[dict[str, tuple[Callable[..., iv.Range], Callable[[Any, Any], Any], bool]]] = {
    # name: (transfer function, concrete meaning, divisor must be non-zero)
    "mul": (iv.mul_range, lambda x, y: x * y, False),
    "floordiv": (iv.floordiv_range, _floordiv, True),
    "floormod": (iv.floormod_range, lambda x, y: x - y * _floordiv(x, y), True),
    "truncdiv": (iv.truncdiv_range, _truncdiv, True),
    "truncmod": (iv.truncmod_range, lambda x, y: x - y * _truncdiv(x, y), True),
    # Z3's own integer division and remainder are Euclidean.
    "eucliddiv": (iv.eucliddiv_range, lambda x, y: x / y, True),
    "euclidmod": (iv.euclidmod_range, _euclidmod, True),
    "ceildiv": (iv.ceildiv_range, lambda x, y: -_floordiv(-x, y), True),
    "max": (iv.max_range, lambda x, y: z3.If(x >= y, x, y), False),
    "min": (iv.min_range, lambda x, y: z3.If(x <= y, x, y), False),
    "lt": (lambda a, b: iv.compare_range(True, a, b), lambda x, y: _cmp(x < y), False),
    "le": (lambda a, b: iv.compare_range(False, a, b), lambda x, y: _cmp(x <= y), False),
    "eq": (lambda a, b: iv.equality_range(True, a, b), lambda x, y: _cmp(x == y), False),
    "ne": (lambda a, b: iv.equality_range(False, a, b), lambda x, y: _cmp(x != y), False),
}


@dataclasses.dataclass
class IntervalProof:
    """The verdict for one transfer function: ``proven``, ``unsound`` (a case) or ``unknown``."""

    op: str
    status: str
    paths: int
    seconds: float
    counterexample: dict[str, int] | None = None


def _range_facts(name: str, bounded: tuple[bool, ...], v: Any) -> tuple[list[Any], Any, Any]:
    lo = z3.Int(f"lo_{name}") if bounded[0] else None
    hi = z3.Int(f"hi_{name}") if bounded[1] else None
    facts = []
    if lo is not None:
        facts.append(lo <= v)
    if hi is not None:
        facts.append(v <= hi)
    return facts, lo, hi


def _prove_binary(op: str) -> IntervalProof:
    fn, meaning, nonzero = _BINARY[op]
    start = time.perf_counter()
    x, y = z3.Int("x"), z3.Int("y")
    paths = 0
    for ends in itertools.product((True, False), repeat=4):
        fa, alo, ahi = _range_facts("a", ends[:2], x)
        fb, blo, bhi = _range_facts("b", ends[2:], y)
        facts = fa + fb + ([y != 0] if nonzero else [])
        ex = _Explorer(facts)
        while True:
            ex.start()
            a = (_wrap(alo, ex), _wrap(ahi, ex))
            b = (_wrap(blo, ex), _wrap(bhi, ex))
            lo, hi = fn(a, b)
            paths += 1
            bad = _violation(facts + ex.path, meaning(x, y), lo, hi)
            if bad is not None:
                return _failed(op, bad, paths, start)
            if not ex.next_run():
                break
    return IntervalProof(op, "proven", paths, time.perf_counter() - start)


def _wrap(v: Any, ex: _Explorer) -> _Sym | None:
    return None if v is None else _Sym(v, ex)


_UNDECIDED: Final[dict[str, int]] = {}  # _violation's answer when the solver gave up


def _failed(name: str, bad: dict[str, int], paths: int, start: float) -> IntervalProof:
    """The verdict for a path that escaped its range: ``unknown`` if Z3 gave up on it."""
    seconds = time.perf_counter() - start
    if bad is _UNDECIDED:
        return IntervalProof(name, "unknown", paths, seconds)
    return IntervalProof(name, "unsound", paths, seconds, bad)


def _violation(facts: list[Any], value: Any, lo: Any, hi: Any) -> dict[str, int] | None:
    inside = []
    if lo is not None:
        inside.append(value >= (lo.e if isinstance(lo, _Sym) else lo))
    if hi is not None:
        inside.append(value <= (hi.e if isinstance(hi, _Sym) else hi))
    if not inside:
        return None
    s = z3.Solver()
    s.set("timeout", 20000)
    s.add(*facts, z3.Not(z3.And(*inside)))
    answer = decided(s)
    if answer == z3.unsat:
        return None
    if answer == z3.unknown:
        return _UNDECIDED
    m = s.model()
    return {str(d): m[d].as_long() for d in m.decls() if d.arity() == 0 and z3.is_int_value(m[d])}


def _prove_add(n: int) -> IntervalProof:
    """``add_range`` for ``n`` symbolic coefficients and ranges, and a constant."""
    start = time.perf_counter()
    paths = 0
    ts = [z3.Int(f"t{i}") for i in range(n)]
    cs = [z3.Int(f"c{i}") for i in range(n)]
    k = z3.Int("k")
    value = z3.Sum(*[c * t for c, t in zip(cs, ts, strict=True)], k)
    for ends in itertools.product((True, False), repeat=2 * n):
        facts: list[Any] = []
        bounds = []
        for i in range(n):
            f, lo, hi = _range_facts(f"t{i}", ends[2 * i : 2 * i + 2], ts[i])
            facts += f
            bounds.append((lo, hi))
        ex = _Explorer(facts)
        while True:
            ex.start()
            terms = [
                (_Sym(cs[i], ex), (_wrap(bounds[i][0], ex), _wrap(bounds[i][1], ex)))
                for i in range(n)
            ]
            lo, hi = iv.add_range(terms, _Sym(k, ex))  # type: ignore[arg-type]
            paths += 1
            bad = _violation(facts + ex.path, value, lo, hi)
            if bad is not None:
                return _failed(f"add/{n}", bad, paths, start)
            if not ex.next_run():
                break
    return IntervalProof(f"add/{n}", "proven", paths, time.perf_counter() - start)


@dataclasses.dataclass
class _FakeTerm:
    """Stands in for a Term where the engine's fast paths read only these fields."""

    vmin: Any
    vmax: Any
    op: Any = None
    arg: Any = None


_FAST_DIVISIONS: Final = {
    "term-fast-floordiv": Op.FLOORDIV,
    "term-fast-floormod": Op.FLOORMOD,
    "term-fast-eucliddiv": Op.EUCLIDDIV,
    "term-fast-euclidmod": Op.EUCLIDMOD,
}


def _prove_term_fast_division(name: str) -> IntervalProof:
    """``term._floor_by_positive_const``: the engine's shortcut for ``x // d``, ``x % d``.

    Floor and Euclidean division take it alike; each is proven against its own meaning.
    """
    op = _FAST_DIVISIONS[name]
    is_div = op in (Op.FLOORDIV, Op.EUCLIDDIV)
    start = time.perf_counter()
    x, d = z3.Int("x"), z3.Int("d")
    if op in (Op.FLOORDIV, Op.FLOORMOD):
        meaning = _floordiv(x, d) if is_div else x - d * _floordiv(x, d)
    else:  # Z3's own division is Euclidean
        meaning = x / d if is_div else x - d * (x / d)
    paths = 0
    for ends in itertools.product((True, False), repeat=2):
        facts, lo, hi = _range_facts("a", ends, x)
        facts.append(d != 0)
        ex = _Explorer(facts)
        while True:
            ex.start()
            a = _FakeTerm(_wrap(lo, ex), _wrap(hi, ex))
            b = _FakeTerm(_Sym(d, ex), _Sym(d, ex), Op.CONST, _Sym(d, ex))
            got = term._floor_by_positive_const(op, a, b)  # type: ignore[arg-type]
            paths += 1
            if got is not None:
                bad = _violation(facts + ex.path, meaning, got[0], got[1])
                if bad is not None:
                    return _failed(name, bad, paths, start)
            if not ex.next_run():
                break
    return IntervalProof(name, "proven", paths, time.perf_counter() - start)


def _prove_term_sum(n: int) -> IntervalProof:
    """``term._sum_range``: the engine's inlined range of a sum of ``n`` atoms."""
    start = time.perf_counter()
    ts = [z3.Int(f"t{i}") for i in range(n)]
    cs = [z3.Int(f"c{i}") for i in range(n)]
    k = z3.Int("k")
    value = z3.Sum(*[c * t for c, t in zip(cs, ts, strict=True)], k)
    paths = 0
    for ends in itertools.product((True, False), repeat=2 * n):
        facts: list[Any] = []
        bounds = []
        for i in range(n):
            f, lo, hi = _range_facts(f"t{i}", ends[2 * i : 2 * i + 2], ts[i])
            facts += f
            bounds.append((lo, hi))
        ex = _Explorer(facts)
        while True:
            ex.start()
            atoms = tuple(_FakeTerm(_wrap(lo, ex), _wrap(hi, ex)) for lo, hi in bounds)
            coefs = tuple(_Sym(c, ex) for c in cs)
            lo_r, hi_r = term._sum_range(atoms, coefs, _Sym(k, ex))  # type: ignore[arg-type]
            paths += 1
            bad = _violation(facts + ex.path, value, lo_r, hi_r)
            if bad is not None:
                return _failed(f"term-sum/{n}", bad, paths, start)
            if not ex.next_run():
                break
    return IntervalProof(f"term-sum/{n}", "proven", paths, time.perf_counter() - start)


def interval_obligations(max_addends: int = 2) -> list[str]:
    """The names of the transfer functions to prove, one obligation each.

    Each function of :mod:`quorem.interval`, and the fast paths
    :mod:`quorem.term` uses instead of them for sums and for floor (and Euclidean)
    division by a positive constant.
    """
    sums = range(1, max_addends + 1)
    return [
        *_BINARY,
        *[f"add/{n}" for n in sums],
        *_FAST_DIVISIONS,
        *[f"term-sum/{n}" for n in sums],
    ]


def prove_interval(name: str) -> IntervalProof:
    """Prove the transfer function ``name`` (one of :func:`interval_obligations`) sound."""
    if name in _BINARY:
        return _prove_binary(name)
    if name.startswith("add/"):
        return _prove_add(int(name[4:]))
    if name.startswith("term-sum/"):
        return _prove_term_sum(int(name[9:]))
    if name in _FAST_DIVISIONS:
        return _prove_term_fast_division(name)
    raise ValueError(f"no interval obligation named {name!r}")
