"""Rule discovery: proven rules proposed from what a rule set leaves undone on a corpus.

:func:`discover` closes the loop a rule author runs by hand (``quorem discover``):

1. **Residues.** The corpus is simplified with the rule set; the places a ``//`` or
   ``%`` is left are generalised to patterns and ranked by how often they occur
   (:mod:`quorem.verify.discover.residues`).
2. **Candidates.** For each of the most frequent patterns, right-hand sides with fewer
   divisions are enumerated and filtered by evaluation at the residues' sample points
   (:mod:`quorem.verify.discover.candidates`).
3. **Proofs.** Each candidate is proven, with a guard synthesised where it holds only on
   part of the space, and its termination proven against the shipped order
   (:mod:`quorem.verify.discover.prove`). The proofs run on an executor: a local
   process pool, or a Dask cluster.
4. **Selection.** The proven candidates are added to the rule set one at a time, best
   ranked first, each in the phase where it removes more: the main phase or the early
   one (where rules meet ``x % n`` and ``(x // n)*n`` before other rules rewrite
   either). A candidate is kept if it lowers the corpus's division count and no case's
   rewriting then stops short of a fixed point with it among the rules to blame (a loop
   with the other rules). What each kept rule removes is measured on the corpus.
5. **Rounds.** Discovery runs again on what the rule set and the rules kept leave,
   until a round keeps nothing new.

Nothing is reported as proven that the prover did not prove; candidates it could not
prove are listed apart, as comments.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final

from quorem.coverage.collect import Case
from quorem.evaluation import count_divmod
from quorem.proofrecord import RuleProof, semantics_key
from quorem.rewrite import StopReason, rewrite_given
from quorem.rule import Rule
from quorem.rulefile import parse_rules
from quorem.ruleset import RuleSet

from ..executor import Executor, LocalPool
from ..mutate import render_expr, render_pattern
from .candidates import Candidate, candidates_for
from .prove import PROVEN, prove_candidate
from .residues import Group, Residues, collect_residues

# Residue patterns whose candidates are enumerated per round (the most frequent).
_PATTERNS_LOOKED_AT: Final = 48

__all__ = [
    "Discovery",
    "Proposal",
    "Settings",
    "corpus_ops",
    "discover",
    "rules_text",
]


@dataclasses.dataclass(frozen=True)
class Settings:
    """How far discovery searches.

    ``patterns``: the most frequent residue patterns searched per round;
    ``per_pattern``: candidate rewrites proven per pattern; ``min_cases``: a pattern must
    occur in this many cases; ``rounds``: discovery runs again on what the rules kept so
    far leave, until a round keeps nothing or this many rounds have run.
    """

    patterns: int = 24
    per_pattern: int = 2
    min_cases: int = 2
    rounds: int = 3


@dataclasses.dataclass
class Proposal:
    """One candidate rule: where it comes from, its proof, what it does on the corpus.

    ``status`` is the prover's (``proven``, ``unproven``, ``not-terminating``), or
    ``loops`` / ``no-gain`` for a proven rule the selection did not keep; ``kept`` says
    whether it is among the proposed rules. ``removes`` is how many ``//`` and ``%`` the
    corpus loses when the rule joins the rules kept before it.
    """

    name: str
    pattern: str
    rewrite: str
    semantics: str
    residues: int
    cases: int
    explains: str
    status: str = "unproven"
    text: str = ""
    guard: str = ""
    why: str = ""
    phase: str = "main"
    removes: int = 0
    kept: bool = False

    def to_json(self) -> dict[str, Any]:
        """The proposal as a JSON object."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Discovery:
    """The outcome: the corpus totals before and after, and every proposal."""

    cases: int
    ops_input: int
    ops_before: int
    ops_after: int
    patterns: int
    proposals: list[Proposal]
    stuck_before: list[str]
    # Residue patterns of the first round occurring in at least ``min_cases`` cases.
    frequent: int = 0

    @property
    def proven(self) -> int:
        """How many candidates the prover proved (kept or not)."""
        return sum(1 for p in self.proposals if p.status not in ("unproven", "not-terminating"))

    @property
    def kept(self) -> list[Proposal]:
        """The proposals kept, in the order they join the rule set."""
        return [p for p in self.proposals if p.kept]


def corpus_ops(
    cases: Sequence[Case], ruleset: RuleSet, watch: frozenset[str] | set[str] = frozenset()
) -> tuple[int, list[str]]:
    """The ``//`` and ``%`` left in ``cases`` by ``ruleset``, and the cases that loop on ``watch``.

    A case *loops on* a watched rule when its rewriting stops short of a fixed point with
    that rule among the culprits.
    """
    total = 0
    looping = []
    for case in cases:
        result = rewrite_given(case.term, ruleset, case.given)
        total += count_divmod(result.term)
        if result.reason is not StopReason.FIXED_POINT and watch & set(result.culprits):
            looping.append(case.label)
    return total, looping


def _rule_text(name: str, group: Group, rewrite: str, doc: str, *, pattern: str = "") -> str:
    """The rule block ``pattern -> rewrite``; a rewrite given without the sum's rest gets it."""
    p = group.pattern
    rhs = rewrite
    if p.rest and not rewrite.endswith(f" + {p.rest}"):
        rhs = f"{rewrite} + {p.rest}"
    lines = [
        f"rule {name}",
        f"  doc:       {doc}",
        f"  semantics: {p.semantics.value}",
    ]
    lines += [f"  pattern:   {pattern or p.text}", f"  rewrite:   {rhs}"]
    return "\n".join(lines) + "\n"


def _with_phase(text: str, phase: str) -> str:
    """``text`` (one rule) with its ``phase:`` field set to ``phase``."""
    lines = [ln for ln in text.rstrip("\n").split("\n") if not ln.strip().startswith("phase:")]
    if phase != "main":
        at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("semantics:"))
        lines.insert(at + 1, f"  phase:     {phase}")
    return "\n".join(lines) + "\n"


def _tidy(rule: Rule) -> tuple[str, str]:
    """The rule's pattern and rewrite, printed back without the generator's parentheses."""
    return render_pattern(rule.pattern), render_expr(rule.rewrite)


def _proposals(
    residues: Residues,
    settings: Settings,
    start: int = 1,
    tried: set[tuple[str, str, str]] | None = None,
) -> list[Proposal]:
    """Candidate rules for the most frequent residue patterns, numbered from ``start``.

    A candidate in ``tried`` (pattern, rewrite, semantics: proven or refuted in an
    earlier round) is not proposed again.
    """
    tried = tried or set()
    out: list[Proposal] = []
    groups = [g for g in residues.groups if len(g.cases) >= settings.min_cases]
    # Patterns whose best rewrite equals them at every random point come first: those
    # are identities, proven without a guard search (seconds, not a minute each).
    scored: list[tuple[bool, int, int, Group, list[Candidate]]] = []
    for group in groups[:_PATTERNS_LOOKED_AT]:
        picked = [
            c
            for c in candidates_for(group)
            if (group.pattern.text, c.text, group.pattern.semantics.value) not in tried
        ]
        if picked:
            scored.append((picked[0].holds < 1.0, -group.weight, len(scored), group, picked))
    scored.sort(key=lambda s: s[:3])
    for _, _, _, group, picked in scored[: settings.patterns]:
        count = 1 if picked[0].holds == 1.0 else settings.per_pattern
        for cand in picked[:count]:
            tried.add((group.pattern.text, cand.text, group.pattern.semantics.value))
            name = f"discovered-{start + len(out)}"
            text = _rule_text(name, group, cand.text, "discovered")
            (rule,) = parse_rules(text, "<discovered>")
            pattern, rewrite = _tidy(rule)
            doc = f"{pattern} == {rewrite}"
            tidy = _rule_text(name, group, rewrite, doc, pattern=pattern)
            (again,) = parse_rules(tidy, "<discovered>")
            if _tidy(again) == (pattern, rewrite):
                text = tidy  # printed back, it reads as it parses: keep the tidy text
            else:
                text = _rule_text(name, group, cand.text, doc)
            out.append(
                Proposal(
                    name=name,
                    pattern=pattern,
                    rewrite=rewrite,
                    semantics=group.pattern.semantics.value,
                    residues=group.weight,
                    cases=len(group.cases),
                    explains=f"{cand.explains}/{cand.checked}",
                    text=text,
                )
            )
    return out


def discover(
    cases: Sequence[Case],
    ruleset: RuleSet,
    *,
    settings: Settings = Settings(),
    executor: Executor | None = None,
    progress: Callable[[str], None] | None = None,
) -> Discovery:
    """Propose proven rules that remove what ``ruleset`` leaves of ``cases``.

    ``executor`` runs the proofs (default: one after the other in this
    process); it must yield ``(index, fn(items[index]))`` for every item, in any order.
    Every kept proposal is proven (equivalence, int64, termination), lowers the corpus's
    division count when added after those kept before it, and makes no case loop.
    """
    say = progress or (lambda _: None)
    ops_input = sum(count_divmod(c.term) for c in cases)
    run = executor or LocalPool(1)
    proposals: list[Proposal] = []
    kept_rules: list[Rule] = []
    tried: set[tuple[str, str, str]] = set()
    first: Residues | None = None
    current = 0
    for round_no in range(1, settings.rounds + 1):
        rules_now = ruleset.extend(kept_rules, first=True) if kept_rules else ruleset
        residues = collect_residues(cases, rules_now)
        first = first or residues
        current = residues.ops_after
        say(
            f"round {round_no}: {residues.cases} cases, {ops_input} // and % in, "
            f"{residues.ops_after} left; {len(residues.groups)} residue patterns"
        )
        fresh = _proposals(residues, settings, start=len(proposals) + 1, tried=tried)
        if not fresh:
            break
        say(f"round {round_no}: {len(fresh)} candidate rules to prove")
        # Closed on any exit (Ctrl-C too), so that the tasks not started are cancelled.
        with contextlib.closing(run.map_items(prove_candidate, [p.text for p in fresh])) as proofs:
            for i, result in proofs:
                p = fresh[i]
                p.status = str(result["status"])
                p.text = str(result["text"])
                p.guard = str(result.get("guard", ""))
                p.why = str(result.get("why", "") or result.get("counterexample", ""))
                say(f"{p.name}: {p.status}{' (guard: ' + p.guard + ')' if p.guard else ''}")
        proposals += fresh
        gained = False
        for p in fresh:
            if p.status != PROVEN:
                continue
            best = _best_phase(p, cases, ruleset, kept_rules, current)
            if best is None:
                p.status = "loops" if p.why.startswith("loops") else "no-gain"
                continue
            ops, p.phase, rule = best
            p.removes = current - ops
            p.text = _with_phase(p.text, p.phase)
            p.kept, p.why, gained = True, "", True
            kept_rules.append(rule)
            current = ops
            say(f"{p.name}: kept ({p.phase} phase), removes {p.removes}")
        if not gained:
            break
    assert first is not None
    return Discovery(
        cases=first.cases,
        ops_input=ops_input,
        ops_before=first.ops_after,
        ops_after=current,
        patterns=len(first.groups),
        proposals=proposals,
        stuck_before=first.not_fixed_point,
        frequent=sum(len(g.cases) >= settings.min_cases for g in first.groups),
    )


def _best_phase(
    p: Proposal, cases: Sequence[Case], ruleset: RuleSet, kept: list[Rule], current: int
) -> tuple[int, str, Rule] | None:
    """The phase in which ``p`` removes most (ops left, phase, rule); None if neither gains.

    A phase in which some case loops with ``p`` among the culprits is never chosen
    (``p.why`` then says so).
    """
    best: tuple[int, str, Rule] | None = None
    for phase in ("main", "early"):
        (rule,) = parse_rules(_with_phase(p.text, phase), "<discovered>")
        rule = proven_here(rule)
        trial = ruleset.extend([*kept, rule], first=True)
        ops, looping = corpus_ops(cases, trial, {rule.name})
        if looping:
            p.why = f"loops with the other rules on {len(looping)} cases, e.g. {looping[0]}"
            continue
        if ops < current and (best is None or ops < best[0]):
            best = (ops, phase, rule)
    return best


def proven_here(rule: Rule) -> Rule:
    """``rule``, proven by this run for every semantics it states, with that proof attached.

    Only for a candidate whose every obligation (equivalence, int64, termination in both
    orders) this run proved: the rule set then applies it like a rule with a record.
    """
    statuses = tuple((semantics_key(s), PROVEN) for s in rule.semantics or (None,))
    return dataclasses.replace(rule, proof=RuleProof(statuses, "quorem discover (this run)"))


def _comment(text: str) -> str:
    return "\n".join(f"# {ln}" if ln else "#" for ln in text.rstrip("\n").split("\n"))


def rules_text(d: Discovery) -> str:
    """The proposals as a rules file: kept rules as rules, the others as comments.

    Each kept rule is headed by its proof status, guard, origin and what it removes on
    the corpus; the file parses as rules (and proves with ``quorem verify FILE``).
    """
    head = [
        "# Rules proposed by quorem discover.",
        f"# Corpus: {d.cases} cases, {d.ops_input} // and % in the input; the rules left "
        f"{d.ops_before}, with these {d.ops_after}.",
        "# Every rule below is proven (equivalence, int64, termination against the shipped "
        "order) and",
        "# made no case of the corpus loop. Check again with: quorem verify FILE",
        "",
    ]
    body: list[str] = []
    for p in d.kept:
        guard = f"guard {p.guard}" if p.guard else "no guard needed"
        body += [
            f"# proven; {guard}; from {p.residues} residues in {p.cases} cases; "
            f"removes {p.removes} // and % on the corpus",
            p.text.rstrip("\n"),
            "",
        ]
    rest = [p for p in d.proposals if not p.kept]
    if rest:
        body += [
            "# ---- Candidates not proposed (not proven, or proven but of no use here) ----",
            "",
        ]
        for p in rest:
            why = f": {p.why}" if p.why else ""
            body += [f"# {p.status}{why}", _comment(p.text), ""]
    return "\n".join([*head, *body])
