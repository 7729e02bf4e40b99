"""The ``map-text`` target: indexing maps parsed, printed, simplified, compared.

Maps with a box of at most :data:`_ENUMERATE` points are checked by enumeration: the
simplified map has the same domain and the same results at every point, and
``maps_equal`` against a variant agrees with enumeration.
"""

from __future__ import annotations

import random
from itertools import product
from typing import Any, ClassVar, Final

from benchmarks.fuzz import mutate
from benchmarks.fuzz.harness import Case, Target, WrongResultError
from quorem import QuoremError
from quorem.evaluation import evaluate
from quorem.indexing import IndexingMap, parse_map, print_map
from quorem.indexing.compare import in_domain
from quorem.indexing.simplify import maps_equal, simplify_map

_ENUMERATE: Final = 4000
_DIVISORS: Final = (1, 2, 3, 4, 5, 8, 16, 7, 32, -2, -3)


class _MapGen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        nd = rng.randint(0, 3)
        ns = rng.choice((0, 0, 0, 1, 2))
        nr = rng.choice((0, 0, 0, 0, 1))
        self.vars: dict[str, tuple[int, int]] = {}
        for prefix, count in (("d", nd), ("s", ns), ("rt", nr)):
            for i in range(count):
                self.vars[f"{prefix}{i}"] = self.interval()
        self.dims = [f"d{i}" for i in range(nd)]
        self.ranges = [f"s{i}" for i in range(ns)]
        self.rts = [f"rt{i}" for i in range(nr)]

    def interval(self) -> tuple[int, int]:
        rng = self.rng
        pick = rng.random()
        if pick < 0.6:
            return 0, rng.choice((0, 1, 3, 5, 7, 9, 15, 20))
        if pick < 0.75:
            lo = rng.randint(-20, 10)
            return lo, lo + rng.randint(0, 12)
        if pick < 0.85:
            return rng.randint(-5, 5), rng.randint(-5, 5)  # sometimes empty
        if pick < 0.95:
            return 0, rng.choice((63, 255, 1023, 2**31 - 1))
        return -(2**63), 2**63 - 1

    def expr(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25 or not self.vars:
            if self.vars and rng.random() < 0.7:
                return rng.choice(list(self.vars))
            return str(rng.choice((0, 1, 2, 3, 7, 16, 100, rng.randint(-50, 50))))
        pick = rng.random()
        a = self.expr(depth - 1)
        if pick < 0.3:
            return f"{a} {rng.choice('+-')} {self.expr(depth - 1)}"
        if pick < 0.45:
            return f"{a} * {rng.choice(_DIVISORS)}"
        if pick < 0.75:
            op = rng.choice(("floordiv", "/", "mod", "mod", "ceildiv"))
            d = rng.choice(_DIVISORS) if rng.random() < 0.97 else self.expr(0)
            return f"({a}) {op} {d}"
        if pick < 0.85:
            return f"{rng.choice(('min', 'max'))}({a}, {self.expr(depth - 1)})"
        if pick < 0.95:
            return f"-({a})"
        return f"({a})"

    def text(self) -> str:
        rng = self.rng
        results = ", ".join(self.expr(rng.randint(0, 3)) for _ in range(rng.randint(0, 3)))
        head = f"({', '.join(self.dims)})"
        if self.ranges or rng.random() < 0.1:
            head += f"[{', '.join(self.ranges)}]"
        if self.rts:
            head += "{" + ", ".join(self.rts) + "}"
        entries = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in self.vars.items()]
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            lo = rng.randint(-10, 20)
            entries.append(f"{self.expr(rng.randint(1, 3))} in [{lo}, {lo + rng.randint(0, 20)}]")
        rng.shuffle(entries)
        domain = f", domain: {', '.join(entries)}" if entries else ""
        return f"{head} -> ({results}){domain}"


def box_points(m: IndexingMap) -> list[dict[str, int]] | None:
    """Every point of ``m``'s variables' box (constraints ignored), or None if too many."""
    vs = list(m.variables())
    size = 1
    for v in vs:
        size *= max(0, v.hi - v.lo + 1)
    if size > _ENUMERATE:
        return None
    names = [v.name for v in vs]
    return [dict(zip(names, p, strict=True)) for p in product(*(range(v.lo, v.hi + 1) for v in vs))]


def _at(m: IndexingMap, point: dict[str, int], what: str) -> tuple[bool, tuple[int, ...]]:
    """Whether ``point`` is in ``m``'s domain, and the results there."""
    try:
        if not in_domain(m, point):
            return False, ()
        return True, tuple(evaluate(t, point) for t in m.results)
    except QuoremError as exc:
        raise WrongResultError(f"{what} map cannot be evaluated", f"{point}: {exc}") from None


def _differs(a: IndexingMap, b: IndexingMap, pts: list[dict[str, int]]) -> dict[str, Any] | None:
    for p in pts:
        if _at(a, p, "first") != _at(b, p, "second"):
            return p
    return None


class MapText(Target):
    """Generated and mutated map text through ``parse_map``, ``simplify_map``, ``maps_equal``."""

    name: ClassVar[str] = "map-text"

    def generate(self, rng: random.Random) -> Case:
        gen = _MapGen(rng)
        text = gen.text()
        case: Case = {"text": text, "variant": None}
        if rng.random() < 0.35:
            case["text"] = mutate.mutate_text(rng, text, rng.randint(1, 4))
        elif rng.random() < 0.3:
            # A second map: the same one, with one result or bound changed (or not).
            other = _MapGen(rng)
            other.vars, other.dims, other.ranges, other.rts = (
                gen.vars,
                gen.dims,
                gen.ranges,
                gen.rts,
            )
            variant = text
            if rng.random() < 0.7:
                variant = other.text()
            case["variant"] = variant
        return case

    def check(self, case: Case) -> int:
        m = parse_map(case["text"])
        printed = print_map(m)
        if parse_map(printed) != m:
            raise WrongResultError("print_map does not parse back", printed)
        s = simplify_map(m, remove_unused=False)
        again = simplify_map(s, remove_unused=False)
        if print_map(again) != print_map(s):
            raise WrongResultError(
                "simplify_map is not idempotent", f"{print_map(s)}  ->  {print_map(again)}"
            )
        if parse_map(print_map(s)) != s:
            raise WrongResultError("simplified map does not parse back", print_map(s))
        pts = box_points(m)
        if pts is not None:
            bad = _differs(m, s, pts)
            if bad is not None:
                raise WrongResultError(
                    "simplify_map changed the map",
                    f"{printed}  =>  {print_map(s)}  differ at {bad}: "
                    f"{_at(m, bad, 'input')} vs {_at(s, bad, 'simplified')}",
                )
        simplify_map(m)
        if case.get("variant"):
            self._compare(m, parse_map(case["variant"]))
        return 1

    @staticmethod
    def _compare(a: IndexingMap, b: IndexingMap) -> None:
        verdict = maps_equal(a, b)
        if a.range_vars or a.rt_vars or b.range_vars or b.rt_vars:
            return  # range variables are existential: enumeration here would not say
        if [v.name for v in a.dims] != [v.name for v in b.dims] or a.n_results != b.n_results:
            return  # maps_equal is False by arity; nothing to enumerate
        pa, pb = box_points(a), box_points(b)
        if pa is None or pb is None:
            return
        seen = {tuple(sorted(p.items())) for p in pa}
        union = pa + [p for p in pb if tuple(sorted(p.items())) not in seen]
        truth = _differs(a, b, union) is None
        if verdict != truth:
            raise WrongResultError(
                "maps_equal is wrong",
                f"maps_equal({print_map(a)!r}, {print_map(b)!r}) = {verdict}, enumeration "
                f"says {truth}",
            )
