"""Indexing maps (XLA's ``IndexingMap``): a function of bounded variables, with its domain.

A map sends a point ``(d...)[s...]{rt...}`` to an index ``(e_1, ..., e_n)``:

* dimension variables ``d_i`` index the tensor (or grid) the map starts from;
* range variables ``s_j`` enumerate the several elements one point reads (a reduction);
* runtime variables ``rt_k`` stand for values known only when the program runs (a
  dynamic-slice offset).

Each variable has an inclusive interval; the *domain* is that box intersected with the
constraints ``e in [lo, hi]``. A map whose domain is provably empty is *known empty*.
Results and constraint expressions are quorem terms with floor semantics, built over
variables that carry their own bounds, so every subterm knows its value range.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..ops import Op
from ..term import Term, as_term, var
from ..walk import free_names, substitute
from .errors import IndexingMapError

__all__ = ["IndexingMap", "IndexingMapError", "Variable", "internal_names"]

# Internal variables start with a letter outside ASCII: an identifier, so a valid term
# variable, but not a name the map syntax reads (names there are ASCII).
_INTERNAL_MARK = "\u01c2"  # LATIN LETTER ALVEOLAR CLICK, a letter that prints as a double dagger


@dataclasses.dataclass(frozen=True, slots=True)
class Variable:
    """A map variable: its name and inclusive bounds ``[lo, hi]``.

    ``source`` says where a runtime variable's value comes from (the HLO operand that
    holds it, for a reader telling ``rt0`` from ``rt1``); it is not part of the map's
    meaning, so it takes no part in comparisons and is never printed in map text.
    """

    name: str
    lo: int
    hi: int
    source: str = dataclasses.field(default="", compare=False)

    def term(self) -> Term:
        """The quorem variable with these bounds."""
        return var(self.name, self.lo, self.hi)

    @property
    def is_empty(self) -> bool:
        """Whether the interval has no value."""
        return self.lo > self.hi


def internal_names(stem: str, taken: Iterable[str]) -> Iterator[str]:
    """Endless fresh variable names for internal use, none of them in ``taken``.

    No parsed map can use them (they are not ASCII), and skipping ``taken`` keeps them
    apart from a map built in code with any identifier: give every name in sight.
    """
    avoid = set(taken)
    i = 0
    while True:
        name = f"{_INTERNAL_MARK}{stem}{i}"
        i += 1
        if name not in avoid:
            yield name


Constraint = tuple[Term, int, int]  # expression in [lo, hi]
_Builder = Callable[[list[Term], list[Term], list[Term]], Sequence[Term | int]]
_ConstraintBuilder = Callable[[list[Term], list[Term], list[Term]], Sequence[tuple[Term, int, int]]]


@dataclasses.dataclass(frozen=True, slots=True)
class IndexingMap:
    """A map ``(dims)[range_vars]{rt_vars} -> (results)`` with its domain.

    Attributes:
        dims: the dimension variables, in order.
        range_vars: the range variables ``s_j``.
        rt_vars: the runtime variables ``rt_k``.
        results: one term per index of the target, over the variables above.
        constraints: ``(expression, lo, hi)``: the expression lies in ``[lo, hi]`` on the
            domain. Kept in canonical order (see :meth:`normalized`).
        known_empty: the domain was shown empty; such a map reads nothing.

    Variable names are unique across the three lists. Build maps with :meth:`build`
    (terms made for you) or :func:`quorem.indexing.parse_map`.

    """

    dims: tuple[Variable, ...]
    range_vars: tuple[Variable, ...] = ()
    rt_vars: tuple[Variable, ...] = ()
    results: tuple[Term, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    known_empty: bool = False

    def __post_init__(self) -> None:
        names = [v.name for v in self.variables()]
        if len(set(names)) != len(names):
            raise IndexingMapError(f"variable names must be unique: {', '.join(names)}")
        declared = set(names)
        for i, t in enumerate(self.results):
            unknown = free_names(t) - declared
            if unknown:
                raise IndexingMapError(f"result {i} uses undeclared {', '.join(sorted(unknown))}")
        for t, _, _ in self.constraints:
            unknown = free_names(t) - declared
            if unknown:
                raise IndexingMapError(f"a constraint uses undeclared {', '.join(sorted(unknown))}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        dims: Sequence[tuple[int, int]],
        results: _Builder,
        *,
        range_vars: Sequence[tuple[int, int]] = (),
        rt_vars: Sequence[tuple[int, int]] = (),
        constraints: _ConstraintBuilder | None = None,
        rt_sources: Sequence[str] = (),
    ) -> IndexingMap:
        """A map with variables named ``d0.., s0.., rt0..`` from their inclusive bounds.

        ``results(d, s, rt)`` returns the result terms (or ints) from the variables as
        terms; ``constraints(d, s, rt)`` returns ``(expression, lo, hi)`` triples;
        ``rt_sources`` (when given, one per runtime variable) are their sources.
        """
        dv = tuple(Variable(f"d{i}", lo, hi) for i, (lo, hi) in enumerate(dims))
        sv = tuple(Variable(f"s{i}", lo, hi) for i, (lo, hi) in enumerate(range_vars))
        sources = list(rt_sources) or [""] * len(rt_vars)
        rv = tuple(
            Variable(f"rt{i}", lo, hi, src)
            for i, ((lo, hi), src) in enumerate(zip(rt_vars, sources, strict=True))
        )
        # A variable with an empty interval gets a one-point term: the map is known
        # empty anyway (normalized() below), but its results are still built.
        d, s, rt = ([var(v.name, v.lo, max(v.lo, v.hi)) for v in vs] for vs in (dv, sv, rv))
        res = tuple(as_term(r) for r in results(d, s, rt))
        cons = tuple(
            (as_term(e), lo, hi) for e, lo, hi in (constraints(d, s, rt) if constraints else ())
        )
        return cls(dv, sv, rv, res, cons).normalized()

    @classmethod
    def empty(cls, n_dims: int, n_results: int) -> IndexingMap:
        """The known-empty map with ``n_dims`` dimensions and ``n_results`` zero results."""
        dv = tuple(Variable(f"d{i}", 0, -1) for i in range(n_dims))
        return cls(dv, (), (), tuple(as_term(0) for _ in range(n_results)), (), True)

    # ------------------------------------------------------------------ queries
    def variables(self) -> Iterator[Variable]:
        """Every variable: dims, then range variables, then runtime variables."""
        yield from self.dims
        yield from self.range_vars
        yield from self.rt_vars

    def bounds(self) -> dict[str, tuple[int, int]]:
        """Each variable's name and inclusive bounds."""
        return {v.name: (v.lo, v.hi) for v in self.variables()}

    @property
    def n_dims(self) -> int:
        """The number of dimension variables."""
        return len(self.dims)

    @property
    def n_results(self) -> int:
        """The number of results (the rank of the target)."""
        return len(self.results)

    def __str__(self) -> str:
        from .mapprint import print_map  # noqa: PLC0415

        return print_map(self)

    # ------------------------------------------------------------------ rebuilding
    def normalized(self) -> IndexingMap:
        """The map with terms rebuilt over its variables' bounds and constraints merged.

        A constraint on a bare variable narrows its interval, a constant one is dropped
        when it holds (XLA's ``AddConstraint``); constraints on one expression are
        intersected and kept in a canonical order (by their printed form). An empty
        interval, or a constraint that cannot hold, makes the map known empty.
        """
        if self.known_empty or any(v.is_empty for v in self.variables()):
            return IndexingMap.empty(self.n_dims, self.n_results)
        b = self.bounds()
        # One table of bounded variables for every term (not one per term: maps with
        # many variables and constraints would be quadratic).
        bounded = {n: var(n, lo, hi) for n, (lo, hi) in b.items()}
        narrowed = dict(b)
        merged: dict[Term, tuple[int, int]] = {}
        for expr, lo0, hi0 in self.constraints:
            if expr.is_const:
                if not lo0 <= expr.value <= hi0:
                    return IndexingMap.empty(self.n_dims, self.n_results)
                continue
            if expr.op is Op.VAR:
                plo, phi = narrowed[expr.arg[0]]
                narrowed[expr.arg[0]] = (max(lo0, plo), min(hi0, phi))
                continue
            e = substitute(expr, bounded)
            plo, phi = merged.get(e, (lo0, hi0))
            merged[e] = (max(lo0, plo), min(hi0, phi))
        if narrowed != b:
            kept = tuple((e, lo, hi) for e, (lo, hi) in merged.items())
            return dataclasses.replace(self, constraints=kept).with_bounds(narrowed)
        if any(lo > hi for lo, hi in merged.values()):
            return IndexingMap.empty(self.n_dims, self.n_results)
        from .mapprint import print_expr  # noqa: PLC0415

        results = tuple(substitute(t, bounded) for t in self.results)
        cons = sorted(
            ((e, lo, hi) for e, (lo, hi) in merged.items()), key=lambda c: print_expr(c[0])
        )
        return dataclasses.replace(self, results=results, constraints=tuple(cons))

    def with_bounds(self, bounds: dict[str, tuple[int, int]]) -> IndexingMap:
        """The map with some variables' bounds replaced (then :meth:`normalized`)."""

        def upd(vs: tuple[Variable, ...]) -> tuple[Variable, ...]:
            return tuple(Variable(v.name, *bounds.get(v.name, (v.lo, v.hi)), v.source) for v in vs)

        return dataclasses.replace(
            self, dims=upd(self.dims), range_vars=upd(self.range_vars), rt_vars=upd(self.rt_vars)
        ).normalized()
