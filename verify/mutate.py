"""Mutation testing of the prover: break each shipped rule slightly and see it refuted.

A prover that proves everything is useless; this measures how often it catches a rule
that is *almost* right. Every rule yields mutants (:func:`mutants`):

* **guard**: each conjunct of the guard's top-level ``and`` chain dropped in turn (a
  guard with one conjunct: the guard dropped);
* **literal**: each integer literal of the pattern, lets, guard and rewrite moved by +1
  and by -1, one occurrence per mutant (this includes the implicit coefficient 1 of a
  bare sum addend, which is a literal of the rule's syntax tree);
* **semantics**: the rule restated for each semantics (floor, trunc, euclid) it is not
  stated for.

Each mutant's ``equivalence`` and ``int64`` obligations are proven (:func:`classify`)
and it is

* ``KILLED``: some obligation is ``unsound`` (the counterexample replayed and confirmed
  by the engine);
* ``SURVIVED-PROVEN``: every obligation is proven, so the mutant is still a sound rule
  (a redundant conjunct, say): not a miss of the prover. A mutant whose premises Z3
  shows unsatisfiable can never fire, which is sound too (``proven (never fires)``);
* ``UNKNOWN``: neither (a timeout, or a counterexample the engine does not reproduce).

Run ``python -m quorem.verify.mutate [--jobs N]``: the summary goes to stdout, one line
per mutant to stderr as it is classified. Exit status, as every quorem command: 0 when
no mutant is ``UNKNOWN``, 3 (inconclusive) otherwise, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Final, TypeVar, cast

from quorem.ops import Semantics
from quorem.rule import (
    Binary,
    Expr,
    Lit,
    Name,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Rule,
    Unary,
)
from quorem.ruleset import default_ruleset
from quorem.syntax import BINARY_PRECEDENCE

from .prove import PROVEN_STATUSES, Obligation, ProofResult, obligations_of, prove

__all__ = [
    "KILLED",
    "NEVER_FIRES",
    "SURVIVED",
    "UNKNOWN",
    "Mutant",
    "MutantResult",
    "MutationReport",
    "classify",
    "conjuncts",
    "main",
    "map_tree",
    "mutants",
    "render_expr",
    "render_pattern",
    "rule_source",
    "run_mutation_test",
    "walk_tree",
]

KILLED: Final = "KILLED"
SURVIVED: Final = "SURVIVED-PROVEN"
UNKNOWN: Final = "UNKNOWN"
NEVER_FIRES: Final = "proven (never fires)"
_SOUND: Final = frozenset({*PROVEN_STATUSES, NEVER_FIRES})
VERDICTS: Final = (KILLED, SURVIVED, UNKNOWN)
EXIT_USAGE: Final = 2
EXIT_UNKNOWN: Final = 3
_FIELDS: Final = ("pattern", "lets", "guard", "rewrite")

T = TypeVar("T")


# ------------------------------------------------------------------- tree rewriting
def walk_tree(node: object) -> Iterator[object]:
    """Every node of an IR tree, pre-order, left to right (through dataclasses and tuples)."""
    if isinstance(node, tuple):
        for item in node:
            yield from walk_tree(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        yield node
        for f in dataclasses.fields(node):
            yield from walk_tree(getattr(node, f.name))


def map_tree(node: T, fn: Callable[[object], object]) -> T:
    """``node`` rebuilt bottom-up: children first, then ``fn`` applied to each node.

    Frozen dataclasses are rebuilt with :func:`dataclasses.replace` (only where a child
    changed) and tuples item by item; anything else (str, int, enum, dict) is a leaf kept
    as is. Leaves are visited in the same order as :func:`walk_tree`.
    """
    if isinstance(node, tuple):
        items = tuple(map_tree(item, fn) for item in node)
        same = all(a is b for a, b in zip(items, node, strict=True))
        return cast(T, node if same else items)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            if f.init:
                old = getattr(node, f.name)
                new = map_tree(old, fn)
                if new is not old:
                    changes[f.name] = new
        rebuilt = dataclasses.replace(node, **changes) if changes else node
        return cast(T, fn(rebuilt))
    return node


# ------------------------------------------------------------------------ rendering
_PATTERN_INFIX: Final = {
    "div": "//",
    "mod": "%",
    "mul": "*",
    "lt": "<",
    "le": "<=",
    "eq": "==",
    "ne": "!=",
    "and": "and",
    "or": "or",
}


def _prec(e: Expr) -> int:
    if isinstance(e, Binary):
        return BINARY_PRECEDENCE[e.op]
    if isinstance(e, Unary) or (isinstance(e, Lit) and e.value < 0):
        return 3 if isinstance(e, Unary) and e.op == "not" else 7
    return 8


def render_expr(e: Expr) -> str:
    """Text of a rule expression in the rules-file syntax, parenthesised where needed."""
    if isinstance(e, Lit):
        return str(e.value)
    if isinstance(e, Name):
        return e.name
    if isinstance(e, Unary):
        inner = render_expr(e.operand)
        if _prec(e.operand) <= _prec(e):
            inner = f"({inner})"
        return f"not {inner}" if e.op == "not" else f"-{inner}"
    if isinstance(e, Binary):
        p = BINARY_PRECEDENCE[e.op]
        left, right = render_expr(e.left), render_expr(e.right)
        # Left-associative; comparisons do not chain, so they bracket both sides.
        if _prec(e.left) < p or (p == 4 and _prec(e.left) == p):
            left = f"({left})"
        if _prec(e.right) <= p:
            right = f"({right})"
        return f"{left} {e.op} {right}"
    return f"{e.func}({', '.join(render_expr(a) for a in e.args)})"


def _atomic(p: Pattern) -> bool:
    """Whether ``p`` prints without brackets as an operand (a name, a literal, a constant)."""
    if isinstance(p, PSum):
        return not (p.addends or p.rest or p.seq)
    return isinstance(p, PTerm | PConst | PLit)


def render_pattern(p: Pattern) -> str:
    """Text of a pattern in the rules-file syntax (``//``/``%`` for the rule's semantics)."""
    if isinstance(p, PTerm | PConst):
        return p.name
    if isinstance(p, PLit):
        return str(p.value)
    if isinstance(p, POp):
        kids = [render_pattern(c) for c in p.children]
        if p.op in _PATTERN_INFIX:
            kids = [k if _atomic(c) else f"({k})" for k, c in zip(kids, p.children, strict=True)]
            return f" {_PATTERN_INFIX[p.op]} ".join(kids)
        return f"{p.op}({', '.join(kids)})"
    return _render_sum(p)


def _render_sum(p: PSum) -> str:
    parts = []
    for a in p.addends:
        body = render_pattern(a.pattern)
        if a.coef != Lit(1):
            body = body if _atomic(a.pattern) else f"({body})"
            body = f"{body}*{render_expr(a.coef)}"
        parts.append(body)
    if p.seq is not None:
        where = "" if p.seq.where is None else f", {render_expr(p.seq.where)}"
        parts.append(f"sum({p.seq.coef}*{p.seq.term}{where})")
    if p.rest is not None:
        parts.append(p.rest)
    if p.const is not None:
        parts.append(render_expr(p.const))
    return " + ".join(parts) if parts else "0"


def _render_field(rule: Rule, field: str) -> str:
    if field == "pattern":
        return render_pattern(rule.pattern)
    if field == "lets":
        return "; ".join(f"{n} = {render_expr(e)}" for n, e in rule.lets)
    if field == "guard":
        return "(none)" if rule.guard is None else render_expr(rule.guard)
    return render_expr(rule.rewrite)


def rule_source(rule: Rule, name: str | None = None) -> str:
    """``rule`` as a rules-file block that parses back to the same rule (named ``name``).

    A mutant's ``text`` is its original's (reports point there); this is the text of the
    mutated rule itself, for writing mutants to a rules file of their own.
    """
    semantics = ", ".join(s.value for s in rule.semantics) or "any"
    lines = [
        f"rule {name or rule.name}",
        f"  doc:       {' '.join(rule.doc.split()) or 'a rule'}",
        f"  semantics: {semantics}",
    ]
    if rule.phase != "main":
        lines.append(f"  phase:     {rule.phase}")
    lines.append(f"  pattern:   {render_pattern(rule.pattern)}")
    if rule.lets:
        lines.append(f"  let:       {_render_field(rule, 'lets')}")
    if rule.guard is not None:
        lines.append(f"  guard:     {render_expr(rule.guard)}")
    lines.append(f"  rewrite:   {render_expr(rule.rewrite)}")
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------- mutants
@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutant of a rule: what was changed (``kind``, ``description``) and the mutated rule.

    ``kind`` is ``guard``, ``literal`` or ``semantics``. The mutated rule keeps the
    original's name and location (reports point at the rule it came from); its ``text``
    carries a ``# mutant:`` line so that nothing keyed by text mistakes it for the original.
    """

    description: str
    rule: Rule
    kind: str


def _mutant(kind: str, description: str, mutated: Rule) -> Mutant:
    text = f"{mutated.text.rstrip()}\n  # mutant: {description}\n"
    return Mutant(description, dataclasses.replace(mutated, text=text), kind)


def conjuncts(guard: Expr) -> list[Expr]:
    """The conjuncts of ``guard``'s top-level ``and`` chain (``[guard]`` if it is none)."""
    if isinstance(guard, Binary) and guard.op == "and":
        return conjuncts(guard.left) + conjuncts(guard.right)
    return [guard]


def _conjoin(parts: Sequence[Expr]) -> Expr | None:
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = Binary("and", out, p)
    return out


def _guard_mutants(rule: Rule) -> list[Mutant]:
    if rule.guard is None:
        return []
    parts = conjuncts(rule.guard)
    if len(parts) == 1:
        desc = f"drop the guard `{render_expr(parts[0])}`"
        return [_mutant("guard", desc, dataclasses.replace(rule, guard=None))]
    out = []
    for i, dropped in enumerate(parts):
        guard = _conjoin(parts[:i] + parts[i + 1 :])
        assert guard is not None
        desc = f"drop guard conjunct `{render_expr(dropped)}` (guard: {render_expr(guard)})"
        out.append(_mutant("guard", desc, dataclasses.replace(rule, guard=guard)))
    return out


def _shift_nth_literal(node: T, n: int, delta: int) -> tuple[T, int]:
    """``node`` with its ``n``-th literal (:func:`walk_tree` order) moved by ``delta``."""
    seen = 0
    old = 0

    def shift(x: object) -> object:
        nonlocal seen, old
        if isinstance(x, Lit | PLit):
            if seen == n:
                old = x.value
                x = dataclasses.replace(x, value=x.value + delta)
            seen += 1
        return x

    return map_tree(node, shift), old


def _literal_mutants(rule: Rule) -> list[Mutant]:
    out = []
    for field in _FIELDS:
        tree = getattr(rule, field)
        count = sum(isinstance(x, Lit | PLit) for x in walk_tree(tree))
        for n in range(count):
            for delta in (1, -1):
                new, old = _shift_nth_literal(tree, n, delta)
                mutated = dataclasses.replace(rule, **{field: new})
                desc = f"{field} literal {old} -> {old + delta}: {_render_field(mutated, field)}"
                out.append(_mutant("literal", desc, mutated))
    return out


def _semantics_mutants(rule: Rule) -> list[Mutant]:
    """The rule restated for each semantics it is not stated for (none for 'any')."""
    if not rule.semantics:
        return []
    stated = ", ".join(sem.value for sem in rule.semantics)
    return [
        _mutant(
            "semantics",
            f"semantics {stated} -> {other.value}",
            dataclasses.replace(rule, semantics=(other,)),
        )
        for other in Semantics
        if other not in rule.semantics
    ]


def mutants(rule: Rule) -> list[Mutant]:
    """Every mutant of ``rule``: guard conjuncts dropped, literals moved by one, semantics."""
    return [*_guard_mutants(rule), *_literal_mutants(rule), *_semantics_mutants(rule)]


# --------------------------------------------------------------------- classification
@dataclasses.dataclass(frozen=True)
class MutantResult:
    """How the prover fared on one mutant.

    ``obligations`` lists ``(label, status)`` of the obligations proven, in order (proving
    stops at the first ``unsound`` one); ``note`` says why the verdict was reached: the
    refuting obligation and its counterexample, or why each open obligation is open.
    """

    rule: str
    kind: str
    description: str
    verdict: str
    obligations: tuple[tuple[str, str], ...]
    note: str
    seconds: float


def _why_open(r: ProofResult) -> str:
    if r.method == "vacuous":
        return "vacuous (the mutant's premises are unsatisfiable: it can never fire)"
    if r.counterexample is not None:
        example = _example(r.counterexample)
        return f"Z3 model {example} not reproduced by the engine: {r.report.splitlines()[0]}"
    return r.report or r.status


def _example(values: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _prove_safely(ob: Obligation, timeout: float) -> tuple[str, str]:
    """``(status, note)`` of one obligation; an exception is an open obligation, not a crash."""
    try:
        r = prove(ob, timeout)
    except Exception as exc:  # a mutant the encoder or engine rejects is not a kill
        return "unknown", f"error: {type(exc).__name__}: {exc}"
    if r.status == "unsound":
        return r.status, f"refuted ({ob.label}): {_example(r.counterexample or {})}"
    if r.status == "unknown" and r.method == "vacuous":
        # Z3 showed the premises unsatisfiable: the mutant never fires, so it is sound.
        return NEVER_FIRES, f"{ob.label}: {_why_open(r)}"
    if r.status == "unknown":
        return r.status, f"{ob.label}: {_why_open(r)}"
    return r.status, ""


def classify(mutant: Mutant, arity: int = 2, timeout: float = 10.0) -> MutantResult:
    """Prove ``mutant``'s obligations (sums up to ``arity``) and judge it."""
    start = time.perf_counter()
    obs = obligations_of(mutant.rule, arity)
    statuses: list[tuple[str, str]] = []
    notes: list[str] = []
    for ob in obs:
        status, note = _prove_safely(ob, timeout)
        statuses.append((ob.label, status))
        if status == "unsound":
            notes = [note]
            break
        if note:
            notes.append(note)
    if any(s == "unsound" for _, s in statuses):
        verdict = KILLED
    elif all(s in _SOUND for _, s in statuses):
        verdict = SURVIVED
    else:
        verdict = UNKNOWN
    seconds = time.perf_counter() - start
    return MutantResult(
        mutant.rule.name,
        mutant.kind,
        mutant.description,
        verdict,
        tuple(statuses),
        "; ".join(notes),
        seconds,
    )


def _classify_job(args: tuple[Mutant, int, float]) -> MutantResult:
    return classify(*args)


# ----------------------------------------------------------------------------- report
def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


@dataclasses.dataclass
class MutationReport:
    """The results of a mutation test, in rule and mutant order, and how it was run."""

    results: list[MutantResult]
    seconds: float
    arity: int
    timeout: float
    jobs: int

    def count(self, verdict: str, kind: str | None = None) -> int:
        """How many mutants (of ``kind``, if given) got ``verdict``."""
        return sum(r.verdict == verdict and (kind is None or r.kind == kind) for r in self.results)

    @property
    def kill_rate(self) -> float:
        """Killed mutants over all mutants (0.0 when there are none)."""
        return self.count(KILLED) / len(self.results) if self.results else 0.0

    def headline(self) -> str:
        """One line: the counts and the kill rates."""
        total = len(self.results)
        killed, survived, unknown = (self.count(v) for v in VERDICTS)
        return (
            f"{total} mutants: {killed} killed, {survived} survived (proven sound), "
            f"{unknown} unknown; kill rate {_pct(killed, total)} of all mutants, "
            f"{_pct(killed, total - survived)} of those not proven sound; "
            f"{_pct(killed + survived, total)} resolved"
        )

    def summary(self) -> str:
        """The plain-text report: settings, counts per kind and per rule, open mutants."""
        lines = [
            "quorem mutation test of the prover",
            f"equivalence and int64 obligations, sums up to arity {self.arity}, timeout "
            f"{self.timeout:g} s per query, {self.jobs} job(s), {self.seconds:.0f} s",
            "",
            self.headline(),
            "",
            *self._table("kind", [r.kind for r in self.results]),
            "",
            *self._table("rule", [r.rule for r in self.results]),
        ]
        for verdict in (UNKNOWN, SURVIVED):
            chosen = [r for r in self.results if r.verdict == verdict]
            lines += ["", f"{verdict} ({len(chosen)}):"]
            for r in chosen:
                lines.append(f"  {r.rule}: {r.description}")
                if r.note:
                    lines.append(f"      {r.note}")
        return "\n".join(lines)

    def _table(self, title: str, keys: list[str]) -> list[str]:
        order = list(dict.fromkeys(keys))
        width = max([len(title), *(len(k) for k in order)])
        head = f"{title:<{width}}  mutants  killed  survived  unknown"
        rows = [head]
        for key in order:
            rs = [r for r, k in zip(self.results, keys, strict=True) if k == key]
            n = [sum(r.verdict == v for r in rs) for v in VERDICTS]
            rows.append(f"{key:<{width}}  {len(rs):>7}  {n[0]:>6}  {n[1]:>8}  {n[2]:>7}")
        return rows


def run_mutation_test(
    rules: Sequence[Rule],
    arity: int = 2,
    timeout: float = 10.0,
    jobs: int = 1,
    progress: Callable[[MutantResult], None] | None = None,
) -> MutationReport:
    """Generate every mutant of ``rules``, classify each, and report.

    With ``jobs > 1`` the mutants (plain frozen data, so picklable) are classified in a
    :class:`~concurrent.futures.ProcessPoolExecutor`; ``progress`` is called with each
    result, in order.
    """
    start = time.perf_counter()
    work = [(m, arity, timeout) for rule in rules for m in mutants(rule)]
    results: list[MutantResult] = []
    if jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for r in pool.map(_classify_job, work):
                results.append(r)
                if progress:
                    progress(r)
    else:
        for args in work:
            r = _classify_job(args)
            results.append(r)
            if progress:
                progress(r)
    return MutationReport(results, time.perf_counter() - start, arity, timeout, jobs)


# -------------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m quorem.verify.mutate",
        description="Mutation test of the prover over the shipped rules.",
    )
    p.add_argument("--rule", action="append", default=[], help="only the rule NAME (repeatable)")
    p.add_argument("--arity", type=int, default=2, help="prove sum(K*t) mutants for 1..K")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per query")
    p.add_argument("--jobs", "-j", type=int, default=1, help="parallel prover processes")
    return p


def _line(r: MutantResult) -> str:
    return f"{r.verdict:<15} {r.seconds:6.2f}s  {r.rule}: {r.description}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mutation test over the shipped rules; print the summary; exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    rules = list(default_ruleset().rules)
    missing = sorted(set(args.rule) - {r.name for r in rules})
    if missing or args.arity < 1 or args.jobs < 1 or args.timeout <= 0:
        why = f"no rule named {', '.join(missing)}" if missing else "bad --arity/--jobs/--timeout"
        print(f"mutate: error: {why}", file=sys.stderr)
        return EXIT_USAGE
    if args.rule:
        rules = [r for r in rules if r.name in args.rule]
    report = run_mutation_test(
        rules,
        arity=args.arity,
        timeout=args.timeout,
        jobs=args.jobs,
        progress=lambda r: print(_line(r), file=sys.stderr, flush=True),
    )
    print(report.summary())
    return EXIT_UNKNOWN if report.count(UNKNOWN) else 0


if __name__ == "__main__":
    raise SystemExit(main())
