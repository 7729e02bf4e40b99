"""Candidate rewrites for a residue pattern, found by enumeration and filtered by fingerprints.

For a :class:`~quorem.verify.discover.residues.Group` (one pattern, its instances), the
search enumerates right-hand sides with fewer ``//`` and ``%`` than the pattern, over the
pattern's names, bottom up, as enumerative synthesisers do (Ruler, Enumo):

* leaves: the pattern's term variables, its constant variables, and constant
  expressions of two of them (``C0*C1``, ``C0 // C1``, ``C0 % C1``, ``C0 - C1``,
  ``C0 + C1``, ``-C0``), and the literals 0 and 1;
* one level up: ``t * K``, ``t // C``, ``t % C`` for a term variable ``t``, a leaf ``K``
  and a constant variable ``C``; two levels: ``(t // C) * K``, ``(t // C) // C'``,
  ``(t // C) % C'``, ``(t % C) * K``;
* a sum or difference of two of those.

Each candidate is evaluated at the sample points of every instance (its *fingerprint*:
the tuple of its values there); candidates with equal fingerprints are one, the smallest
kept, so the space stays small. The pattern's own values (minus the rest of a sum, which
every rewrite keeps: ``pattern + y -> rewrite + y``) are the target: a candidate equal to
the target at every point of an instance *explains* that instance. Nothing here is a
proof: the candidates go to the prover, ranked by how many instances they explain.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Sequence
from typing import Final

from quorem.arith import BINARY_EVALUATORS
from quorem.evaluation import evaluate
from quorem.ops import DIV_OF, MOD_OF, Semantics

from .residues import Group, Instance, Node

__all__ = ["Candidate", "Node", "candidates_for", "render"]

# Instances whose points are enumerated over (the rest only check the candidates found).
_ENUMERATED_INSTANCES: Final = 4
# Instances a candidate is checked on to rank it.
_CHECKED_INSTANCES: Final = 24
_MAX_CANDIDATES: Final = 6

# Random values of the pattern's names at which candidates are also evaluated: a rewrite
# equal to the pattern everywhere ranks before one equal only on the corpus's instances.
_RANDOM_ENVS: Final = 64
_RANDOM_TERM: Final = 40
_RANDOM_CONST: Final = 9

_Vec = tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A right-hand side, its text, its divisions and size, and the instances it explains."""

    node: Node
    text: str
    divisions: int
    size: int
    explains: int
    checked: int
    holds: float  # the share of random values of the names where it equals the pattern


def render(node: Node) -> str:
    """The rules-file text of ``node``."""
    kind = node[0]
    if kind in ("t", "k", "lit"):
        return str(node[1])
    assert len(node) == 3
    a, b = node[1], node[2]
    if kind == "neg":
        return f"-({render(a)})"
    return f"({render(a)}) {kind} ({render(b)})"


def _divisions(node: Node) -> int:
    if node[0] in ("t", "k", "lit") or _is_constant(node):
        return 0
    own = 1 if node[0] in ("//", "%") else 0
    return own + _divisions(node[1]) + _divisions(node[2])


def _size(node: Node) -> int:
    if node[0] in ("t", "k", "lit"):
        return 1
    return 1 + _size(node[1]) + _size(node[2])


def _is_constant(node: Node) -> bool:
    if node[0] == "t":
        return False
    if node[0] in ("k", "lit"):
        return True
    return _is_constant(node[1]) and _is_constant(node[2])


class _Evaluation:
    """Values of candidates at one instance's points (one fingerprint segment).

    Constant variables may differ from point to point (random values): each name maps
    to a vector.
    """

    def __init__(
        self, sem: Semantics, terms: dict[str, _Vec], consts: dict[str, _Vec], n: int
    ) -> None:
        self.div = BINARY_EVALUATORS[DIV_OF[sem]]
        self.mod = BINARY_EVALUATORS[MOD_OF[sem]]
        self.terms = terms
        self.consts = consts
        self.n = n
        self.target: _Vec | None = None

    @staticmethod
    def of_instance(group: Group, inst: Instance) -> _Evaluation:
        """The evaluation at ``inst``'s points, its target the instance's own values."""
        n = len(inst.points)
        terms = {
            name: tuple(evaluate(sub, p, check_bounds=False) for p in inst.points)
            for name, sub in inst.terms.items()
        }
        consts = {name: (v,) * n for name, v in inst.consts.items()}
        ev = _Evaluation(group.pattern.semantics, terms, consts, n)
        whole = tuple(evaluate(inst.term, p, check_bounds=False) for p in inst.points)
        rest = group.pattern.rest
        if rest:
            ev.target = tuple(w - r for w, r in zip(whole, terms[rest], strict=True))
        else:
            ev.target = whole
        return ev

    @staticmethod
    def at_random(group: Group, seed: int = 0) -> _Evaluation:
        """The evaluation at random values of the names (target: the pattern's core there)."""
        rng = random.Random(seed)
        p = group.pattern
        n = _RANDOM_ENVS
        terms = {
            t: tuple(rng.randint(-_RANDOM_TERM, _RANDOM_TERM) for _ in range(n))
            for t in p.term_names
        }
        consts = {
            c: tuple(rng.choice([-1, 1]) * rng.randint(1, _RANDOM_CONST) for _ in range(n))
            for c in p.const_names
        }
        ev = _Evaluation(p.semantics, terms, consts, n)
        ev.target = None if p.core is None else ev.value(p.core)
        return ev

    def value(self, node: Node) -> _Vec | None:
        """``node``'s values at the points, or None where it divides by zero somewhere."""
        kind = node[0]
        if kind == "t":
            return self.terms[str(node[1])]
        if kind == "k":
            return self.consts[str(node[1])]
        if kind == "lit":
            return (int(node[1]),) * self.n
        a = self.value(node[1])
        if a is None:
            return None
        if kind == "neg":
            return tuple(-x for x in a)
        b = self.value(node[2])
        if b is None:
            return None
        if kind == "+":
            return tuple(x + y for x, y in zip(a, b, strict=True))
        if kind == "-":
            return tuple(x - y for x, y in zip(a, b, strict=True))
        if kind == "*":
            return tuple(x * y for x, y in zip(a, b, strict=True))
        if any(y == 0 for y in b):
            return None
        fn = self.div if kind == "//" else self.mod
        return tuple(fn(x, y) for x, y in zip(a, b, strict=True))


def _const_leaves(names: Sequence[str]) -> list[Node]:
    leaves: list[Node] = [("k", n) for n in names]
    for a, b in itertools.permutations(names, 2):
        ka: Node = ("k", a)
        kb: Node = ("k", b)
        leaves += [("//", ka, kb), ("%", ka, kb), ("-", ka, kb)]
        if a < b:
            leaves += [("*", ka, kb), ("+", ka, kb)]
    leaves += [("neg", ("k", n), ("lit", 0)) for n in names]
    # A recombination's new coefficient is of three constants: e - c*n.
    for a, b, c in itertools.product(names, repeat=3):
        if b <= c:
            leaves.append(("-", ("k", a), ("*", ("k", b), ("k", c))))
    return leaves


def _enumerate(group: Group) -> list[Node]:
    """Every candidate of the grammar (before fingerprints), smallest first."""
    p = group.pattern
    terms: list[Node] = [("t", n) for n in p.term_names]
    base: list[Node] = [("k", n) for n in p.const_names]
    consts = _const_leaves(p.const_names)
    lits: list[Node] = [("lit", 0), ("lit", 1)]
    level1: list[Node] = []
    for t in terms:
        level1 += [("*", t, k) for k in consts]
        level1 += [("//", t, k) for k in base]
        level1 += [("%", t, k) for k in base]
    level2: list[Node] = []
    for t in terms:
        for c in base:
            q: Node = ("//", t, c)
            r: Node = ("%", t, c)
            level2 += [("*", q, k) for k in consts]
            level2 += [("*", r, k) for k in consts]
            level2 += [("//", q, c2) for c2 in base]
            level2 += [("%", q, c2) for c2 in base]
    return [*lits, *terms, *consts, *level1, *level2]


def _holds(ev: _Evaluation, node: Node) -> float:
    """The share of ``ev``'s points where ``node`` equals the target (0 if undefined)."""
    if ev.target is None:
        return 0.0
    vec = ev.value(node)
    if vec is None:
        return 0.0
    return sum(1 for x, y in zip(vec, ev.target, strict=True) if x == y) / ev.n


def candidates_for(group: Group) -> list[Candidate]:
    """The best few candidate rewrites for ``group``, the most promising first.

    A candidate has fewer divisions than the pattern and explains (equals the pattern at
    every sample point of) at least one instance. Candidates are ranked by the
    instances they explain, then by how often they equal the pattern at random values
    of its names (a rewrite true everywhere needs no guard, and one true on a wide part
    of the space a weak one), then by fewer divisions and smaller text. Two candidates
    with the same values at the instances' points and at the random values are one.
    """
    pattern = group.pattern
    budget = pattern.divisions  # strictly fewer than the pattern's own
    pool = [n for n in _enumerate(group) if _divisions(n) < budget]
    wide = _Evaluation.at_random(group)
    wide_values = {id(n): wide.value(n) for n in pool}
    found: dict[str, Node] = {}
    for inst in group.instances[:_ENUMERATED_INSTANCES]:
        ev = _Evaluation.of_instance(group, inst)
        assert ev.target is not None
        best: dict[tuple[_Vec, _Vec | None], Node] = {}
        for node in pool:
            vec = ev.value(node)
            if vec is None:
                continue
            key = (vec, wide_values[id(node)])
            old = best.get(key)
            if old is None or (_divisions(node), _size(node)) < (_divisions(old), _size(old)):
                best[key] = node
        by_values: dict[_Vec, list[Node]] = {}
        for (vec, _), node in best.items():
            by_values.setdefault(vec, []).append(node)
        for node in by_values.get(ev.target, []):
            found.setdefault(render(node), node)
        for vec, us in by_values.items():
            residual = tuple(t - x for t, x in zip(ev.target, vec, strict=True))
            for u in us:
                for v in by_values.get(residual, []):
                    if _divisions(u) + _divisions(v) >= budget:
                        continue
                    if ("lit", 0) in (u, v):
                        continue  # x + 0 is x, found on its own
                    # One order per pair (u + v and v + u are one candidate), constants last.
                    a, b = sorted((u, v), key=lambda n: (_is_constant(n), render(n)))
                    pair: Node = ("+", a, b)
                    found.setdefault(render(pair), pair)
    checked = group.instances[:_CHECKED_INSTANCES]
    evaluations = [_Evaluation.of_instance(group, inst) for inst in checked]
    out = []
    seen: set[tuple[_Vec | None, ...]] = set()
    for text, node in found.items():
        explains = sum(1 for ev in evaluations if ev.value(node) == ev.target)
        if not explains:
            continue
        fingerprint = (wide.value(node), *(ev.value(node) for ev in evaluations))
        if fingerprint in seen:
            continue  # equal to a candidate found before everywhere it was evaluated
        seen.add(fingerprint)
        out.append(
            Candidate(
                node,
                text,
                _divisions(node),
                _size(node),
                explains,
                len(checked),
                _holds(wide, node),
            )
        )
    out.sort(key=lambda c: (-c.explains, -c.holds, c.divisions, c.size, c.text))
    return out[:_MAX_CANDIDATES]
