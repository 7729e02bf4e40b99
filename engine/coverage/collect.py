"""Rule coverage over a corpus: where each rule fires, what it removes, what is left.

:func:`coverage` rewrites every case of a corpus with a rule set, as ``quorem simplify``
does, and reads the trace of each run:

* per rule: its applications (they sum to the steps of the runs), the cases in which it
  fired, the ``//`` and ``%`` its steps removed (counted in each step's own term written
  out as a tree, before minus after; negative when a step adds some), and its first
  application (input -> output of that step);
* shadowing: at each step, the rules indexed under the same operator that the dispatcher
  would have tried after the rule that fired are tried on the same term. A rule that
  never fired, but would have applied at some step, is *shadowed* on this corpus: an
  earlier rule always took the term first. Only the rewritten-away terms are tried, so
  this costs a few rule calls per step, not per node;
* residues: in each result, the outermost divisions (a ``//``, ``%`` or ``ceildiv`` not
  inside another one) printed with every literal replaced by ``C`` and the variables
  renamed ``a``, ``b``, ... in order of appearance. Cases are grouped by these shapes,
  most frequent first: the to-do list of the next rule.

The renderers are in :mod:`quorem.coverage.render`, the command line in
:mod:`quorem.cli.coverage`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections import Counter
from collections.abc import Iterable
from typing import Final

from ..compiler.dispatch import Applier
from ..errors import UnprovenRuleError
from ..ops import DIVISION_FUNCTIONS, DIVISION_OPS, QUOTIENT_OPS, Op, Semantics
from ..printer import to_text
from ..rewrite import Step, rewrite_given
from ..ruleset import RuleSet
from ..term import Term

__all__ = [
    "Case",
    "Coverage",
    "Example",
    "ResidueGroup",
    "RuleStats",
    "coverage",
    "residue_shape",
]

_EXAMPLES_PER_GROUP: Final = 3
_EXAMPLE_CHARS: Final = 200  # an example's text is cut here (a term can print very long)
# Function names of the text syntax: the words of a printed term that are not variables.
_NOT_VARIABLES: Final = frozenset({*DIVISION_FUNCTIONS, "ceildiv", "max", "min"})
_TOKEN_RE: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|0[xX][0-9a-fA-F_]+|[0-9][0-9_]*")
_RESIDUE_ROOTS: Final = DIVISION_OPS | {Op.CEILDIV}
# Cases sent to a worker process at a time: at most _MAX_CHUNK, and fewer when there are
# few cases, so that each worker gets several chunks (cases differ much in cost).
_MAX_CHUNK: Final = 32
_CHUNKS_PER_WORKER: Final = 16
_INTERNAL: Final = "\u01c2"  # starts the names of quorem.context's stand-in variables


@dataclasses.dataclass(frozen=True, slots=True)
class Case:
    """One corpus case: a term to simplify, its semantics and the conditions it is given.

    ``label`` names the case in reports (its ``id``, or ``file:line``).
    """

    label: str
    term: Term
    semantics: Semantics
    given: tuple[Term, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Example:
    """One rule application or one residue, as text in its case's semantics."""

    case: str
    before: str
    after: str


@dataclasses.dataclass(slots=True)
class RuleStats:
    """What one rule did over the corpus.

    Attributes:
        name, file, line: the rule and where it is written.
        applications: its steps over all cases.
        cases: the cases in which it took at least one step.
        divs_removed, mods_removed: quotients (``//``, ``ceildiv``) and remainders
            (``%``) its steps removed, each step's term counted as a tree (negative:
            added).
        first: its first application (None if it never fired).
        preempted_by: per earlier rule, the steps at which that rule took a term this
            one would also have rewritten.

    """

    name: str
    file: str
    line: int
    applications: int = 0
    cases: int = 0
    divs_removed: int = 0
    mods_removed: int = 0
    first: Example | None = None
    preempted_by: Counter[str] = dataclasses.field(default_factory=Counter)

    @property
    def ops_removed(self) -> int:
        """``divs_removed + mods_removed``."""
        return self.divs_removed + self.mods_removed

    @property
    def shadowed(self) -> bool:
        """It never fired, but matched a term an earlier rule took first."""
        return self.applications == 0 and bool(self.preempted_by)


@dataclasses.dataclass(slots=True)
class ResidueGroup:
    """Cases whose results keep a division of one shape.

    ``cases`` counts the cases (a case with two shapes is in two groups), ``occurrences``
    the divisions of that shape over them; ``examples`` the first few (the residue
    itself in ``before``, the whole result in ``after``).
    """

    shape: str
    cases: int = 0
    occurrences: int = 0
    examples: list[Example] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(slots=True)
class Coverage:
    """The coverage of a rule set over a corpus (see the module docstring).

    ``rules`` are in priority order (every rule of the set, fired or not); ``residues``
    most frequent first. ``steps`` is the sum of every case's rule applications,
    equal to the sum of ``applications`` over ``rules``. ``failed``: the cases whose
    rewrite raised (an engine bug), with the error; they count in ``cases`` only.
    """

    cases: int
    steps: int
    ops_before: int
    ops_after: int
    cases_with_divisions: int
    stop_reasons: Counter[str]
    rules: list[RuleStats]
    residues: list[ResidueGroup]
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def never_fired(self) -> list[RuleStats]:
        """The rules with no application, in priority order."""
        return [r for r in self.rules if r.applications == 0]

    @property
    def shadowed(self) -> list[RuleStats]:
        """The rules that never fired but matched a term an earlier rule took first."""
        return [r for r in self.rules if r.shadowed]


@dataclasses.dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    early: bool
    apply: Applier


class _Shadows:
    """Per operator, the rule instances in the dispatcher's order, to try after a step."""

    def __init__(self, ruleset: RuleSet) -> None:
        self._ruleset = ruleset
        self._by_op: dict[Op, tuple[tuple[_Candidate, ...], dict[str, int]]] = {}

    def _table(self, op: Op) -> tuple[tuple[_Candidate, ...], dict[str, int]]:
        table = self._by_op.get(op)
        if table is None:
            instances = tuple(
                _Candidate(c.name, c.rule.early, c.fn) for c in self._ruleset.rules_for(op)
            )
            first: dict[str, int] = {}
            for i, c in enumerate(instances):
                first.setdefault(c.name, i)
            table = self._by_op[op] = (instances, first)
        return table

    def also_matching(self, step: Step) -> list[str]:
        """The rules that would also have rewritten ``step.before`` had ``step.rule`` not.

        The dispatcher tries the instances in order, so those before the one that fired
        failed on this term, except in the early phase, which tries only early rules:
        an early rule's step is checked against every other instance but the early ones
        before it. (An instance tried again that failed simply fails again.)
        """
        instances, first = self._table(step.before.op)
        at = first.get(step.rule)
        if at is None:  # not indexed under this operator (cannot happen for a step)
            return []
        early = instances[at].early
        found: list[str] = []
        seen: set[str] = set()
        for i, c in enumerate(instances):
            if c.name == step.rule or c.name in seen:
                continue
            if i < at and (not early or c.early):
                continue
            if c.apply(step.before) is not None:
                seen.add(c.name)
                found.append(c.name)
        return found


class _DivCounts:
    """Quotients and remainders of a term written out as a tree, memoised across terms."""

    def __init__(self) -> None:
        self._memo: dict[Term, tuple[int, int]] = {}

    def __call__(self, term: Term) -> tuple[int, int]:
        memo = self._memo
        stack: list[tuple[Term, bool]] = [(term, False)]
        while stack:
            t, ready = stack.pop()
            if t in memo:
                continue
            if not ready:
                stack.append((t, True))
                stack.extend((c, False) for c in t.args if c not in memo)
                continue
            divs = 1 if t.op in QUOTIENT_OPS or t.op is Op.CEILDIV else 0
            mods = 1 if t.op in DIVISION_OPS and t.op not in QUOTIENT_OPS else 0
            for c in t.args:
                d, m = memo[c]
                divs += d
                mods += m
            memo[t] = (divs, mods)
        return memo[term]


def _clip(text: str) -> str:
    return text if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 3] + "..."


def residue_shape(term: Term, semantics: Semantics) -> str:
    """``term``'s text with every literal replaced by ``C`` and variables renamed.

    Variables become ``a``, ``b``, ... in order of first appearance (``v26``, ``v27``, ...
    after ``z``), so ``(x*4 + y) // 8`` and ``(i*2 + j) // 3`` have the same shape
    ``(a*C + b) // C``.
    """
    names: dict[str, str] = {}

    def abstract(m: re.Match[str]) -> str:
        token = m.group(0)
        if token[0].isdigit():
            return "C"
        if token in _NOT_VARIABLES:
            return token
        if token not in names:
            n = len(names)
            names[token] = chr(ord("a") + n) if n < 26 else f"v{n}"
        return names[token]

    return _TOKEN_RE.sub(abstract, to_text(term, semantics))


def _outermost_divisions(term: Term) -> list[Term]:
    """The division subterms of ``term`` not inside another one, each once, in order."""
    found: list[Term] = []
    seen: set[Term] = set()
    stack = [term]
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if t.op in _RESIDUE_ROOTS:
            found.append(t)
        else:
            stack.extend(reversed(t.args))
    return found


def _earlier_example(first: Example | None, later: Example | None) -> Example | None:
    """A rule's example over two runs of cases, ``first``'s before ``later``'s.

    The first application made without the engine's stand-in variables, else the first:
    what one run over all the cases keeps (see ``_Collector._step``).
    """
    if first is None:
        return later
    if later is not None and _INTERNAL in first.before and _INTERNAL not in later.before:
        return later
    return first


@dataclasses.dataclass(slots=True)
class _Tally:
    """What a run over some cases counted; runs over consecutive chunks add up in order.

    ``stats`` holds only the rules a step touched (fired, or matched a term another
    rule took): the tally of a chunk is sent back from a worker process.
    """

    cases: int = 0
    steps: int = 0
    ops_before: int = 0
    ops_after: int = 0
    with_divisions: int = 0
    stop_reasons: Counter[str] = dataclasses.field(default_factory=Counter)
    stats: dict[str, RuleStats] = dataclasses.field(default_factory=dict)
    groups: dict[str, ResidueGroup] = dataclasses.field(default_factory=dict)
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def merge(self, later: _Tally) -> None:
        """Add ``later``, the tally of the cases after this one's: as if run in one go.

        Counts add; the first application and the examples of a residue are taken in
        case order; counters keep their first-seen order (ties in reports follow it).
        """
        self.cases += later.cases
        self.steps += later.steps
        self.ops_before += later.ops_before
        self.ops_after += later.ops_after
        self.with_divisions += later.with_divisions
        self.stop_reasons.update(later.stop_reasons)
        self.failed.extend(later.failed)
        for name, theirs in later.stats.items():
            mine = self.stats.get(name)
            if mine is None:
                self.stats[name] = theirs
                continue
            mine.applications += theirs.applications
            mine.cases += theirs.cases
            mine.divs_removed += theirs.divs_removed
            mine.mods_removed += theirs.mods_removed
            mine.first = _earlier_example(mine.first, theirs.first)
            mine.preempted_by.update(theirs.preempted_by)
        for shape, group in later.groups.items():
            own = self.groups.get(shape)
            if own is None:
                self.groups[shape] = group
                continue
            own.cases += group.cases
            own.occurrences += group.occurrences
            own.examples = (own.examples + group.examples)[:_EXAMPLES_PER_GROUP]


class _Collector:
    """Accumulates the statistics of one coverage run, case by case."""

    def __init__(self, ruleset: RuleSet) -> None:
        self.ruleset = ruleset
        self.where = {r.name: (r.file, r.line) for r in ruleset.rules}
        self.shadows = _Shadows(ruleset)
        self.div_counts = _DivCounts()
        self.tally = _Tally()

    def _stats(self, name: str) -> RuleStats:
        stats = self.tally.stats.get(name)
        if stats is None:
            file, line = self.where[name]
            stats = self.tally.stats[name] = RuleStats(name, file, line)
        return stats

    def add(self, case: Case, max_steps: int | None) -> None:
        tally = self.tally
        tally.cases += 1
        try:
            result = rewrite_given(
                case.term, self.ruleset, case.given, max_steps=max_steps, trace=True
            )
        except UnprovenRuleError:
            raise  # the rules, not the case, are at fault: the command fails
        except Exception as exc:  # an engine bug must not end the report (as in a batch)
            tally.failed.append((case.label, f"{type(exc).__name__}: {exc}"))
            return
        tally.steps += result.steps
        tally.stop_reasons[result.reason.value] += 1
        for name, n in result.counts.items():
            stats = self._stats(name)
            stats.applications += n
            stats.cases += 1
        for step in result.trace:
            self._step(case, step)
        before, after = self.div_counts(case.term), self.div_counts(result.term)
        tally.ops_before += sum(before)
        tally.ops_after += sum(after)
        if sum(after):
            tally.with_divisions += 1
            self._residues(case, result.term)

    def _step(self, case: Case, step: Step) -> None:
        stats = self._stats(step.rule)
        d0, m0 = self.div_counts(step.before)
        d1, m1 = self.div_counts(step.after)
        stats.divs_removed += d0 - d1
        stats.mods_removed += m0 - m1
        if stats.first is None or _INTERNAL in stats.first.before:
            # A step made under ``given`` conditions may show the engine's stand-in
            # variables (named with a character no text can write): a later plain step
            # makes a better example.
            sem = case.semantics
            example = Example(
                case.label, _clip(to_text(step.before, sem)), _clip(to_text(step.after, sem))
            )
            if stats.first is None or _INTERNAL not in example.before:
                stats.first = example
        for other in self.shadows.also_matching(step):
            self._stats(other).preempted_by[step.rule] += 1

    def _residues(self, case: Case, result: Term) -> None:
        shapes: Counter[str] = Counter()
        first: dict[str, Term] = {}
        for t in _outermost_divisions(result):
            shape = residue_shape(t, case.semantics)
            shapes[shape] += 1
            first.setdefault(shape, t)
        groups = self.tally.groups
        for shape, n in shapes.items():
            group = groups.get(shape)
            if group is None:
                group = groups[shape] = ResidueGroup(shape)
            group.cases += 1
            group.occurrences += n
            if len(group.examples) < _EXAMPLES_PER_GROUP:
                sem = case.semantics
                group.examples.append(
                    Example(
                        case.label, _clip(to_text(first[shape], sem)), _clip(to_text(result, sem))
                    )
                )


def _report(tally: _Tally, ruleset: RuleSet) -> Coverage:
    """The coverage of ``ruleset`` from the tally of every case."""
    residues = sorted(tally.groups.values(), key=lambda g: (-g.cases, -g.occurrences, g.shape))
    stats = tally.stats
    return Coverage(
        cases=tally.cases,
        steps=tally.steps,
        ops_before=tally.ops_before,
        ops_after=tally.ops_after,
        cases_with_divisions=tally.with_divisions,
        stop_reasons=tally.stop_reasons,
        rules=[stats.get(r.name) or RuleStats(r.name, r.file, r.line) for r in ruleset.rules],
        residues=residues,
        failed=tally.failed,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Chunk:
    """Consecutive cases of a corpus, sent to a worker process."""

    cases: list[Case]
    max_steps: int | None


def _tally_chunk(chunk: _Chunk) -> _Tally:
    """In a worker process: the tally of one chunk, with the pool's rule set."""
    from ..jobs import worker_ruleset  # noqa: PLC0415  (see _tally_in_workers)

    collector = _Collector(worker_ruleset())
    for case in chunk.cases:
        collector.add(case, chunk.max_steps)
    return collector.tally


def _tally_in_workers(
    cases: list[Case], ruleset: RuleSet, max_steps: int | None, jobs: int
) -> _Tally:
    """The tally of ``cases`` computed in ``jobs`` worker processes, chunk by chunk."""
    # Imported here: multiprocessing is a sizeable share of every command's start-up.
    from ..jobs import chunks, ordered_results, start_pool  # noqa: PLC0415

    size = max(1, min(_MAX_CHUNK, -(-len(cases) // (jobs * _CHUNKS_PER_WORKER))))
    parts = (_Chunk(part, max_steps) for part in chunks(cases, size))
    # The first chunk is tallied here, before the workers start: the dispatchers it
    # compiles are inherited by forked workers, which would each compile them again.
    collector = _Collector(ruleset)
    for case in next(parts, _Chunk([], max_steps)).cases:
        collector.add(case, max_steps)
    tally = collector.tally
    with contextlib.closing(
        ordered_results(start_pool(jobs, ruleset), _tally_chunk, parts, jobs)
    ) as results:
        for part in results:
            tally.merge(part)
    return tally


def coverage(
    cases: Iterable[Case], ruleset: RuleSet, *, max_steps: int | None = None, jobs: int = 1
) -> Coverage:
    """Rewrite every case with ``ruleset`` (as ``quorem simplify`` does) and report.

    Each case is rewritten by :func:`~quorem.rewrite.rewrite_given` with its
    conditions, tracing the steps; the result's applications per rule sum to the steps
    of those runs. See the module docstring for what is counted. ``jobs`` > 1 rewrites
    the cases in that many worker processes (their terms are pickled), chunk by chunk:
    the report is the same as in this process.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if jobs > 1:
        return _report(_tally_in_workers(list(cases), ruleset, max_steps, jobs), ruleset)
    collector = _Collector(ruleset)
    for case in cases:
        collector.add(case, max_steps)
    return _report(collector.tally, ruleset)
