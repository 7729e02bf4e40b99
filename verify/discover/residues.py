"""What the rules leave undone: residues of a corpus, generalised to rule patterns.

Rule discovery (``quorem discover``) starts here. Every case of a corpus is simplified
with the rule set under study; in each result, the *residues* are the places a ``//`` or
``%`` is left:

* every division or remainder node (``x // n``, ``x % n``, ``ceildiv``), and
* every sum holding two or more such addends, as the whole sum and as each pair of its
  division addends (an identity such as ``x % n + (x // n)*n == x`` needs both halves).

Each residue is *generalised* to a pattern of the rules-file syntax that keeps its shape:
each distinct literal becomes a constant variable (``C0``, ``C1``, ...: equal literals
share one, so a pattern states the coincidences its instances show), each distinct
division-free subterm a term variable (``a``, ``b``, ...), and the division-free rest of
a sum one bare term variable (``y``, matching the rest of any larger sum). Residues with
the same pattern form a :class:`Group`, ranked by how many residues (and cases) share it.

Each residue keeps its :class:`Instance`: what every pattern variable stands for in it,
and sample points of its variables' ranges. The candidate search evaluates pattern and
candidate rewrite there (fingerprints) before anything is proven.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

from quorem.coverage.collect import Case
from quorem.errors import EvaluationError
from quorem.evaluation import count_divmod, division_counts, evaluate
from quorem.ops import DIVISION_OPS, SEMANTICS_OF, Op, Semantics
from quorem.rewrite import StopReason, rewrite_given
from quorem.ruleset import RuleSet
from quorem.term import Term, linear

__all__ = [
    "Group",
    "Instance",
    "Node",
    "Pattern",
    "Residues",
    "collect_residues",
    "generalise",
    "sample_points",
]

# Past this depth a subterm becomes a term variable even if it holds a division: patterns
# stay small enough to enumerate rewrites for, and deep shapes rarely repeat.
_MAX_DEPTH: Final = 3
# A sum with more division addends than this is generalised by its pairs only.
_MAX_WHOLE_SUM: Final = 3
# Pairs of a sum's division addends taken as residues: only pairs sharing a variable (an
# identity relates two divisions of one quantity), at most this many per sum, so that a
# sum of thousands of divisions costs linear time, not quadratic.
_MAX_PAIRS: Final = 64
_POINTS_PER_INSTANCE: Final = 48
# Where a variable is unbounded on a side, points are drawn this far from the other side.
_UNBOUNDED_SPAN: Final = 64
_PATTERN_OPS: Final = {
    Op.LT: "<",
    Op.LE: "<=",
    Op.EQ: "==",
    Op.NE: "!=",
    Op.AND: "and",
    Op.OR: "or",
}
_QUOTIENTS: Final = {Op.FLOORDIV, Op.TRUNCDIV, Op.EUCLIDDIV}
_TERM_NAMES: Final = "abcdefghkmnpqrstuvw"  # y is the rest of a sum; x, z stay free

# A pattern's core or a candidate rewrite, as a tree to evaluate: ("t", name) a term
# variable, ("k", name) a constant variable, ("lit", value), or (operator, left, right)
# with operator one of + - * // % and neg (right unused).
Node = tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A generalised residue: rules-file pattern text, its semantics, its shape's facts.

    ``rest`` is the bare term variable standing for the rest of a sum (``y``), or "".
    ``divisions`` counts the ``//`` and ``%`` the pattern itself holds (not inside its
    term variables): a rewrite is worth proposing only with fewer. ``core`` is the
    pattern without its rest as a tree (None if it uses more than ``+ - * // %``): the
    candidate search evaluates it at random values of its names.
    """

    text: str
    semantics: Semantics
    rest: str
    divisions: int
    term_names: tuple[str, ...]
    const_names: tuple[str, ...]
    core: Node | None = None


@dataclasses.dataclass(frozen=True)
class Instance:
    """One residue of one case: the term, what each pattern name stands for, its points.

    ``terms`` maps each term variable (and the rest, if any) to the subterm it stands
    for; ``consts`` each constant variable to its literal. ``points`` are assignments of
    the residue's variables inside their ranges.
    """

    case: str
    term: Term
    terms: dict[str, Term]
    consts: dict[str, int]
    points: tuple[dict[str, int], ...]


@dataclasses.dataclass
class Group:
    """Residues sharing one pattern, with the cases they come from."""

    pattern: Pattern
    instances: list[Instance] = dataclasses.field(default_factory=list)
    cases: set[str] = dataclasses.field(default_factory=set)

    @property
    def weight(self) -> int:
        """How many residues the group has (its rank in the to-do list)."""
        return len(self.instances)


@dataclasses.dataclass
class Residues:
    """The outcome of simplifying a corpus: op counts and the residue groups, ranked."""

    cases: int
    ops_before: int
    ops_after: int
    not_fixed_point: list[str]
    groups: list[Group]


class _Generaliser:
    """Writes one residue as a pattern, naming its literals and division-free parts."""

    def __init__(self, semantics: Semantics, divisions: dict[Term, int]) -> None:
        self.semantics = semantics
        self.has = divisions  # the division count of every subterm of the residue
        self.terms: dict[Term, str] = {}
        self.consts: dict[int, str] = {}
        self.divisions = 0
        self.nodes: dict[str, Node | None] = {}  # pattern text -> its tree

    def const(self, value: int) -> str:
        name = self.consts.get(value)
        if name is None:
            name = self.consts[value] = f"C{len(self.consts)}"
        self.nodes[name] = ("k", name)
        return name

    def term(self, t: Term) -> str | None:
        name = self.terms.get(t)
        if name is None:
            if len(self.terms) >= len(_TERM_NAMES):
                return None
            name = self.terms[t] = _TERM_NAMES[len(self.terms)]
        self.nodes[name] = ("t", name)
        return name

    def node(self, text: str, tree: Node | None) -> str:
        self.nodes[text] = tree
        return text

    def tree(self, text: str) -> Node | None:
        return self.nodes.get(text)

    def text(self, t: Term, depth: int, *, top: bool = False) -> str | None:
        """``t`` as pattern text (None: not expressible); ``top`` keeps a leaf's shape."""
        if t.op is Op.CONST:
            return self.const(t.value)
        if not top and (self.has[t] == 0 or depth >= _MAX_DEPTH):
            return self.term(t)
        if t.op is Op.ADD:
            return self.sum_text(list(zip(t.args, t.arg[0], strict=True)), depth)
        if len(t.args) != 2:
            return None
        a = self.text(t.args[0], depth + 1)
        b = self.text(t.args[1], depth + 1)
        if a is None or b is None:
            return None
        op = t.op
        ta, tb = self.tree(a), self.tree(b)
        both = ta is not None and tb is not None
        if op in DIVISION_OPS:
            if SEMANTICS_OF[op] is not self.semantics:
                return None
            self.divisions += 1
            symbol = "//" if op in _QUOTIENTS else "%"
            return self.node(f"({a}) {symbol} ({b})", (symbol, ta, tb) if both else None)
        if op is Op.CEILDIV:
            self.divisions += 1
            return f"ceildiv({a}, {b})"
        if op is Op.MUL:
            return self.node(f"({a}) * ({b})", ("*", ta, tb) if both else None)
        if op in (Op.MAX, Op.MIN):
            return f"{'max' if op is Op.MAX else 'min'}({a}, {b})"
        logic = _PATTERN_OPS.get(op)
        return None if logic is None else f"({a}) {logic} ({b})"

    def sum_text(self, addends: list[tuple[Term, int]], depth: int) -> str | None:
        """A sum keeping its division addends; the rest (any constant too) is one ``y``.

        A division-free addend never gets a term variable of its own: a bare term
        variable in a sum pattern matches the rest of the sum.
        """
        parts = []
        core: Node | None = ("lit", 0)
        for atom, coef in addends:
            if self.has[atom] == 0:
                continue
            inner = self.text(atom, depth + 1, top=True)
            if inner is None:
                return None
            # An explicit coefficient even when it is 1: a rewrite may compute with it
            # (x*c + (x // n)*(e - c*n) needs e), and the pattern still matches 1.
            k = self.const(coef)
            parts.append(f"({inner})*{k}")
            tree = self.tree(inner)
            core = None if core is None or tree is None else ("+", core, ("*", tree, ("k", k)))
        # The rest variable matches the constant too.
        return self.node(" + ".join([*parts, "y"]), core)


def generalise(
    t: Term, semantics: Semantics, divisions: dict[Term, int] | None = None
) -> tuple[Pattern, dict[str, Term], dict[str, int]] | None:
    """``t`` generalised to a pattern, with what each of its names stands for in ``t``.

    None when ``t`` has no shape the rules-file syntax can state (a product of three
    factors, a division of another semantics inside, too many distinct subterms).
    ``divisions`` (the division count of each subterm, as :func:`division_counts` gives)
    saves recounting when many residues of one term are generalised.
    """
    counts = divisions if divisions is not None else division_counts(t)
    g = _Generaliser(semantics, counts)
    text = g.text(t, 0, top=True)
    if text is None or g.divisions == 0:
        return None
    terms = {name: sub for sub, name in g.terms.items()}
    rest = ""
    if t.op is Op.ADD:
        rest = "y"
        pairs, constant = t.addends()
        terms["y"] = linear([(a, c) for a, c in pairs if counts[a] == 0], constant)
    consts = {name: value for value, name in g.consts.items()}
    pattern = Pattern(
        text=text,
        semantics=semantics,
        rest=rest,
        divisions=g.divisions,
        term_names=tuple(n for n in terms if n != rest),
        const_names=tuple(consts),
        core=g.tree(text),
    )
    return pattern, terms, consts


def _units(t: Term, divisions: dict[Term, int]) -> Iterator[Term]:
    """The residues of one result: every division node, and sums of division addends."""
    seen: set[Term] = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if u in seen or u.op in (Op.CONST, Op.VAR):
            continue
        seen.add(u)
        stack.extend(u.args)
        if u.op in DIVISION_OPS or u.op is Op.CEILDIV:
            yield u
        elif u.op is Op.ADD:
            pairs, constant = u.addends()
            divs = [(a, c) for a, c in pairs if divisions[a] > 0]
            if len(divs) < 2:
                continue
            if len(divs) <= _MAX_WHOLE_SUM:
                yield u
            if len(divs) > 2:
                rest = [(a, c) for a, c in pairs if divisions[a] == 0]
                for two in itertools.islice(_related_pairs(divs), _MAX_PAIRS):
                    yield linear([*two, *rest], constant)


def _related_pairs(
    divs: list[tuple[Term, int]],
) -> Iterator[tuple[tuple[Term, int], tuple[Term, int]]]:
    """Pairs of division addends that share a variable, in the sum's order."""
    by_name: dict[str, list[int]] = {}
    for i, (a, _) in enumerate(divs):
        for v in _variables(a):
            by_name.setdefault(v.name, []).append(i)
    done: set[tuple[int, int]] = set()
    for i, (a, _) in enumerate(divs):
        for v in _variables(a):
            for j in by_name[v.name]:
                if j > i and (i, j) not in done:
                    done.add((i, j))
                    yield divs[i], divs[j]


def _variables(t: Term) -> list[Term]:
    out: dict[Term, None] = {}
    stack = [t]
    while stack:
        u = stack.pop()
        if u.op is Op.VAR:
            out[u] = None
        else:
            stack.extend(u.args)
    return sorted(out, key=lambda v: v.name)


def sample_points(
    t: Term, count: int = _POINTS_PER_INSTANCE, seed: int = 0
) -> tuple[dict[str, int], ...]:
    """Assignments of ``t``'s variables inside their ranges: corners first, then random ones.

    Deterministic for a given ``seed``. An unbounded side is sampled within
    ``_UNBOUNDED_SPAN`` of the other side (or of 0).
    """
    rng = random.Random(seed)
    spans = []
    for v in _variables(t):
        _, lo, hi = v.arg
        lo2 = (
            lo if lo is not None else (hi - _UNBOUNDED_SPAN if hi is not None else -_UNBOUNDED_SPAN)
        )
        hi2 = hi if hi is not None else lo2 + 2 * _UNBOUNDED_SPAN
        spans.append((v.name, lo2, hi2))
    points: list[dict[str, int]] = []
    seen: set[tuple[int, ...]] = set()
    corner_sides = itertools.product(*[(lo, hi) for _, lo, hi in spans])
    for values in itertools.islice(corner_sides, count // 2):
        if values not in seen:
            seen.add(values)
            points.append(dict(zip([n for n, _, _ in spans], values, strict=True)))
    tries = 0
    while len(points) < count and tries < 4 * count:
        tries += 1
        values = tuple(rng.randint(lo, hi) for _, lo, hi in spans)
        if values not in seen:
            seen.add(values)
            points.append(dict(zip([n for n, _, _ in spans], values, strict=True)))
    return tuple(points)


def _defined_points(t: Term, points: Iterable[dict[str, int]]) -> tuple[dict[str, int], ...]:
    """The points where ``t`` evaluates (no division by zero)."""
    out = []
    for p in points:
        try:
            evaluate(t, p)
        except EvaluationError:  # a division by zero there: not a sample
            continue
        out.append(p)
    return tuple(out)


def _semantics_of(t: Term, default: Semantics) -> Semantics:
    stack = [t]
    while stack:
        u = stack.pop()
        if u.op in DIVISION_OPS:
            return SEMANTICS_OF[u.op]
        stack.extend(u.args)
    return default


def collect_residues(cases: Sequence[Case], ruleset: RuleSet) -> Residues:
    """Simplify ``cases`` with ``ruleset``; the residues of the results, grouped and ranked.

    Groups are ordered by how many residues they have, then by how many cases, then by
    pattern text (deterministic). A case whose rewriting did not reach a fixed point is
    listed in ``not_fixed_point`` (its result still counts).
    """
    groups: dict[tuple[str, Semantics], Group] = {}
    before = after = 0
    stuck = []
    for case in cases:
        result = rewrite_given(case.term, ruleset, case.given)
        before += count_divmod(case.term)
        counts = division_counts(result.term)
        after += counts[result.term]
        if result.reason is not StopReason.FIXED_POINT:
            stuck.append(case.label)
        sem = _semantics_of(result.term, case.semantics)
        seen_here: set[str] = set()
        for unit in _units(result.term, counts):
            found = generalise(unit, sem, counts)
            if found is None:
                continue
            pattern, terms, consts = found
            if pattern.text in seen_here:
                continue  # one instance per case and pattern: a case is one vote
            seen_here.add(pattern.text)
            points = _defined_points(unit, sample_points(unit, seed=len(seen_here)))
            if not points:
                continue
            group = groups.setdefault((pattern.text, sem), Group(pattern))
            group.instances.append(Instance(case.label, unit, terms, consts, points))
            group.cases.add(case.label)
    ranked = sorted(groups.values(), key=lambda g: (-g.weight, -len(g.cases), g.pattern.text))
    return Residues(len(cases), before, after, stuck, ranked)
