"""Guard synthesis: the weakest guard, from a small grammar, that makes a rule proven.

``quorem verify --suggest-guard`` calls :func:`suggest_guard` on each rule it could not
prove. The search is counterexample-guided (CEGIS):

1. **Atoms.** A small grammar over the rule's constants (``C``, ``D``, constant lets)
   and the ranges of its term variables: signs (``C > 0``, ``C >= 0``, ``C != 0``, ...),
   comparisons between two constants, ``divides(A, B)``, ``vmin(x) >= 0``,
   ``vmax(x) < C``, ..., and ``fits_int64(...)`` of the rewrite and of its compound
   parts (:func:`candidate_atoms`).
2. **Counterexamples prune.** Each counterexample the prover confirmed is evaluated by
   the engine's own guard interpreter: an atom *blocks* it when the engine would not
   fire there with the atom in the guard. A candidate guard (a conjunction of atoms) is
   tried only if it blocks every counterexample found so far, and only if each of its
   atoms blocks one the others let through (no atom is redundant).
3. **Z3 proves the survivors.** The candidate rule (the existing guard ``and`` the
   atoms) is proven by :func:`~quorem.verify.prove.prove`, every obligation; a new
   counterexample joins the list, and the search goes on.

Candidates are tried with fewer atoms first and, among as many atoms, weakest first:
weakness is measured on a fixed sample of small values of the constants and ranges
(the conjunction true at more sample points is weaker).

4. **Widening.** A proven conjunction is then widened by disjunction: other proven
   conjunctions, true at sample points where the ones found are false, are ``or``-ed to
   it (a disjunction of proven guards is proven; the whole is proven again anyway). This
   reaches guards no conjunction states (``C > 0 and vmin(x) > 0 or C < 0 and
   vmax(x) < 0``) and joins two incomparable guards into one weaker than both.

The existing guard is never dropped or weakened, only conjoined with. Nothing is
reported as a suggestion unless every obligation of the suggested rule is proven
(``proven`` or ``proven-int64``: a vacuous guard, one that makes the rule never fire,
is not a proof).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from quorem.errors import QuoremError
from quorem.interpret import Binding, Undetermined, evaluate_expr
from quorem.ops import Semantics
from quorem.rule import (
    AGGREGATES,
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
    Pattern,
    POp,
    PSum,
    PTerm,
    Rule,
    Unary,
    expr_names,
)
from quorem.rulefile import parse_rules
from quorem.term import Term, var

from .mutate import conjuncts, render_expr, render_pattern, walk_tree
from .prove import (
    PROVEN_STATUSES,
    Obligation,
    ProofResult,
    obligation_kind,
    obligations_of,
    private_z3_context,
    prove,
)
from .replay import _bindings

__all__ = [
    "Atom",
    "Counterexample",
    "Suggestion",
    "candidate_atoms",
    "rule_text_with_guard",
    "suggest_for_results",
    "suggest_guard",
    "suggestion_json",
]

# The search's budget is deterministic -- candidates tried, and Z3's resource count per
# query -- so that its answer does not depend on the machine's load. The wall-clock
# limits are safety nets only: a search that reaches one says so.
DEFAULT_MAX_CANDIDATES: Final = 120
DEFAULT_QUERY_RLIMIT: Final = 2 * 10**7
DEFAULT_TIME_LIMIT: Final = 300.0
DEFAULT_QUERY_TIMEOUT: Final = 10.0
DEFAULT_MAX_ATOMS: Final = 3
# A proven candidate is proven again with this many times the budget before it is kept.
_CONFIRM_FACTOR: Final = 5
# Sample points for the weakness order, and the range of their values.
_SAMPLES: Final = 400
_SPAN: Final = 9
# How many of the weakest useful atoms a conjunction of 2 (3, ...) atoms draws from.
_COMBO_POOL: Final = {2: 160, 3: 48}
# How far a proven guard is widened by disjunction: conjunctions kept, candidates tried.
_MAX_DISJUNCTS: Final = 3
_WIDEN_TRIES: Final = 24
_WIDEN_MIN_NEW: Final = _SAMPLES // 50


@dataclasses.dataclass(frozen=True)
class Atom:
    """One candidate conjunct: its expression and its rules-file text."""

    expr: Expr
    text: str


@dataclasses.dataclass(frozen=True)
class Counterexample:
    """A confirmed counterexample: which obligation it refutes, the values, the report."""

    obligation: str
    semantics: Semantics | None
    arity: int
    kind: str
    values: dict[str, int]
    report: str

    def short(self) -> str:
        """One line: the obligation and the values."""
        shown = ", ".join(f"{k}={v}" for k, v in self.values.items())
        return f"({self.obligation}) {shown}"


@dataclasses.dataclass
class Suggestion:
    """The outcome of a guard search for one rule.

    ``status`` is ``found`` (``guard``/``text`` hold the proven rule), ``already-proven``
    (the rule needs no new guard) or ``not-found`` (``note`` says why). ``added`` are
    the atoms conjoined to the existing guard; ``lets_through`` maps each added atom's
    text to the counterexample the rule would admit without it.
    """

    rule: Rule
    status: str
    guard: Expr | None = None
    text: str = ""
    added: list[Atom] = dataclasses.field(default_factory=list)
    lets_through: dict[str, Counterexample] = dataclasses.field(default_factory=dict)
    counterexamples: list[Counterexample] = dataclasses.field(default_factory=list)
    candidates_tried: int = 0
    seconds: float = 0.0
    note: str = ""

    def render(self) -> str:
        """The human report: the rule block with the suggested guard, and why each atom."""
        head = f"{self.rule.location}: rule {self.rule.name}"
        if self.status == "already-proven":
            return f"{head}: already proven, no guard to suggest"
        if self.status != "found":
            return (
                f"{head}: no guard found ({self.note}; {self.candidates_tried} candidates, "
                f"{len(self.counterexamples)} counterexamples, {self.seconds:.1f} s)"
            )
        lines = [
            f"{head}: suggested guard, proven (every obligation; "
            f"{self.candidates_tried} candidates, {len(self.counterexamples)} "
            f"counterexamples, {self.seconds:.1f} s):",
            "",
            *(f"    {line}" for line in self.text.rstrip("\n").splitlines()),
            "",
        ]
        for atom in self.added:
            cex = self.lets_through.get(atom.text)
            why = cex.short() if cex else "(no counterexample recorded)"
            lines.append(f"  without `{atom.text}` it is unsound: {why}")
        return "\n".join(lines)


# ------------------------------------------------------------------------- grammar
def _const_names(rule: Rule) -> list[str]:
    """The rule's scalar constants: matched constants, then lets computed from them."""
    names = [n for n, k in rule.names.items() if k is NameKind.CONST]
    known = set(names)
    for name, e in rule.lets:
        # A let reading only constants is a constant; one reading a term is a term.
        if _is_scalar(e) and expr_names(e) <= known:
            names.append(name)
            known.add(name)
    return names


def _is_scalar(e: Expr) -> bool:
    """Whether ``e`` is one value (not per addend of a sequence, not an aggregate)."""
    return not (isinstance(e, Call) and e.func in AGGREGATES)


def _name(n: str) -> Name:
    return Name(n, NameKind.CONST)


def _cmp(op: str, a: Expr, b: Expr) -> Expr:
    return Binary(op, a, b)


def candidate_atoms(rule: Rule) -> list[Atom]:
    """The grammar's atoms for ``rule``, without duplicates or ones already in its guard.

    Signs of each constant; each ordered pair of constants compared (``<``, ``<=``,
    ``==``, ``!=``, ``== -``) and ``divides``; each term variable's range against zero
    and against each constant; ``fits_int64`` of the rewrite and of its compound
    arithmetic parts.
    """
    consts = _const_names(rule)
    terms = [n for n, k in rule.names.items() if k is NameKind.TERM]
    out: list[Expr] = []
    zero, one = Lit(0), Lit(1)
    for c in consts:
        x = _name(c)
        out += [
            _cmp(">", x, zero),
            _cmp(">=", x, zero),
            _cmp("<", x, zero),
            _cmp("<=", x, zero),
            _cmp("!=", x, zero),
            _cmp(">", x, one),
        ]
    for a, b in itertools.permutations(consts, 2):
        x, y = _name(a), _name(b)
        out += [_cmp("<", x, y), _cmp("<=", x, y), Call("divides", (x, y))]
        if a < b:
            out += [_cmp("==", x, y), _cmp("!=", x, y), _cmp("==", x, Unary("-", y))]
    for t in terms:
        lo = Call("vmin", (Name(t, NameKind.TERM),))
        hi = Call("vmax", (Name(t, NameKind.TERM),))
        out += [_cmp(">=", lo, zero), _cmp(">", lo, zero), _cmp("<=", hi, zero)]
        out += [_cmp("<", hi, zero)]
        for c in consts:
            out += [_cmp("<", hi, _name(c)), _cmp(">", lo, Unary("-", _name(c)))]
    out += [Call("fits_int64", (e,)) for e in _compound_parts(rule.rewrite)]
    out += _arithmetic_atoms(consts, terms)
    present = {render_expr(c) for c in conjuncts(rule.guard)} if rule.guard else set()
    atoms: dict[str, Atom] = {}
    for atom in [*(Atom(e, render_expr(e)) for e in out), *_pattern_constancy_atoms(rule)]:
        if atom.text not in present and atom.text not in atoms:
            atoms[atom.text] = atom
    return list(atoms.values())


def _arithmetic_atoms(consts: Sequence[str], terms: Sequence[str]) -> list[Expr]:
    """Products, differences, parities and bounds the shipped guards are made of.

    ``A * B == C`` (a recombination's radix), ``A == B + 1``, ``A == B - 1``,
    ``divides(A, B - C)``, ``floormod(A - B, 2) == 1``, ``fits_int64`` of a product of
    constants, of a constant and of its negation, and for a term ``t``: ``fits_int64(t)``,
    ``tdivides(C, t)``, ``vmin(t + C) >= 0``, ``vmax(t + C) <= 0``, and between two terms
    ``vmin(x) >= vmax(y)``.
    """
    out: list[Expr] = []
    two = Lit(2)
    for c in consts:
        x = _name(c)
        out += [_cmp("==", x, two), _cmp("==", Call("abs", (x,)), two)]
        out += [_cmp("==", Call("floormod", (x, two)), Lit(1))]
        out += [Call("fits_int64", (x,)), Call("fits_int64", (Unary("-", x),))]
    for a, b in itertools.combinations(consts, 2):
        x, y = _name(a), _name(b)
        out += [Call("fits_int64", (Binary("*", x, y),))]
        out += [_cmp("==", Call("floormod", (Binary("-", x, y), two)), Lit(1))]
        for c in consts:
            if c not in (a, b):
                out += [_cmp("==", Binary("*", x, y), _name(c))]
                out += [Call("divides", (_name(c), Binary("-", x, y)))]
    for a, b in itertools.permutations(consts, 2):
        x, y = _name(a), _name(b)
        out += [_cmp("==", x, Binary("+", y, Lit(1))), _cmp("==", x, Binary("-", y, Lit(1)))]
    for t in terms:
        n = Name(t, NameKind.TERM)
        out += [Call("fits_int64", (n,))]
        for c in consts:
            shifted = Binary("+", n, _name(c))
            out += [Call("tdivides", (_name(c), n))]
            out += [_cmp(">=", Call("vmin", (shifted,)), Lit(0))]
            out += [_cmp("<=", Call("vmax", (shifted,)), Lit(0))]
    for a, b in itertools.permutations(terms, 2):
        lo = Call("vmin", (Name(a, NameKind.TERM),))
        out += [_cmp(">=", lo, Call("vmax", (Name(b, NameKind.TERM),)))]
    return out


def _pattern_constancy_atoms(rule: Rule) -> list[Atom]:
    """``vmin(p) == vmax(p)`` for compound parts ``p`` of the pattern (no sums) and of ranges.

    The fold rules fire when a sub-term's whole range is one value. The pattern part is
    written as rule text and parsed back with the rule, so that it means what a guard
    author's text would; a part the guard syntax cannot state is skipped.
    """
    out = []
    for part in _pattern_parts(rule.pattern):
        text = render_pattern(part)
        parsed = _parse_guard(rule, f"vmin({text}) == vmax({text})")
        if parsed is not None:
            out.append(parsed)
    # A compound term whose range the rewrite or guard reads (`vmin(x // y)` in the
    # rewrite of x % y) is as good a candidate for being one value.
    for e in walk_tree((rule.rewrite, rule.guard, rule.lets)):
        if isinstance(e, Call) and e.func in ("vmin", "vmax") and len(e.args) == 1:
            arg = e.args[0]
            if isinstance(arg, Binary | Call):
                lo, hi = Call("vmin", (arg,)), Call("vmax", (arg,))
                atom = _cmp("==", lo, hi)
                out.append(Atom(atom, render_expr(atom)))
    return out


def _pattern_parts(p: Pattern) -> Iterator[Pattern]:
    """Compound operator sub-patterns without sums (pre-order)."""
    if isinstance(p, POp) and not any(isinstance(x, PSum) for x in walk_tree(p)):
        if any(isinstance(c, PTerm | POp) for c in p.children):
            yield p
        for c in p.children:
            yield from _pattern_parts(c)


def _parse_guard(rule: Rule, text: str) -> Atom | None:
    """The atom ``text`` as the rules-file parser reads it in ``rule``, or None if refused."""
    lines = rule_text_with_guard(rule, Lit(1)).split("\n")
    lines = [re.sub(r"guard:(\s*)1$", f"guard:\\g<1>{text}", ln) for ln in lines]
    try:
        [parsed] = parse_rules("\n".join(lines), rule.file)
    except (QuoremError, ValueError):
        return None
    if parsed.guard is None:
        return None
    return Atom(parsed.guard, render_expr(parsed.guard))


def _compound_parts(e: Expr) -> Iterator[Expr]:
    """Each arithmetic sub-expression of ``e`` with an operator, ``e`` last (post-order).

    Inner parts first: ``fits_int64`` is true at every small sample point, so these
    atoms tie on weakness and keep this order; the measure on the guard mutants showed
    the shipped guards bound the intermediate that overflows, not the whole rewrite.
    """
    if isinstance(e, Binary) and e.op in ("+", "-", "*", "//", "%"):
        yield from _compound_parts(e.left)
        yield from _compound_parts(e.right)
        yield e
    elif isinstance(e, Binary):
        # A comparison or junction is no value to bound; its operands are
        # (``x <= C*D + D - 1``: the shipped guard is ``fits_int64(C*D + D - 1)``).
        yield from _compound_parts(e.left)
        yield from _compound_parts(e.right)
    elif isinstance(e, Unary):
        yield from _compound_parts(e.operand)
    elif isinstance(e, Call) and e.func not in AGGREGATES and e.func not in ("vmin", "vmax"):
        for a in e.args:
            yield from _compound_parts(a)
        yield e


# ---------------------------------------------------------------- evaluation
def _holds(e: Expr, env: dict[str, Binding], sem: Semantics | None) -> bool:
    """Whether the engine's guard interpreter finds ``e`` true (undetermined: false)."""
    try:
        return evaluate_expr(e, env, sem) is True
    except (Undetermined, QuoremError, ArithmeticError, KeyError, TypeError, ValueError):
        return False


def _with_lets(rule: Rule, env: dict[str, Binding], sem: Semantics | None) -> bool:
    """Add the rule's lets to ``env``, in order; False when one is undetermined."""
    for name, e in rule.lets:
        try:
            value = evaluate_expr(e, env, sem)
        except (Undetermined, QuoremError, ArithmeticError, KeyError, TypeError, ValueError):
            return False
        if not isinstance(value, int | Term):
            return False  # an unbounded range: no sample or counterexample value
        env[name] = value
    return True


def _cex_env(rule: Rule, cex: Counterexample) -> dict[str, Binding] | None:
    """The engine's bindings at a counterexample (as the replay builds them)."""
    bound, _ = _bindings(rule, cex.arity, cex.values)
    env: dict[str, Binding] = dict(bound)  # type: ignore[arg-type]
    return env if _with_lets(rule, env, cex.semantics) else None


def _sample_envs(
    rule: Rule, arity: int, count: int
) -> list[tuple[dict[str, Binding], Semantics | None]]:
    """Fixed pseudo-random small bindings where the rule's existing guard holds."""
    rng = random.Random(18)
    sems: list[Semantics | None] = [*rule.semantics] or [None]
    out: list[tuple[dict[str, Binding], Semantics | None]] = []
    for i in range(count * 4):
        if len(out) >= count:
            break
        sem = sems[i % len(sems)]
        env: dict[str, Binding] = {}
        for name, kind in rule.names.items():
            if kind is NameKind.CONST:
                env[name] = rng.randint(-_SPAN, _SPAN)
            elif kind is NameKind.TERM:
                env[name] = _sample_var(rng, name)
            elif kind is NameKind.SEQ_CONST:
                env[name] = [rng.randint(-_SPAN, _SPAN) or 1 for _ in range(arity)]
            else:
                env[name] = [_sample_var(rng, f"{name}_{k + 1}") for k in range(arity)]
        _solve_equations(rule, env, sem)
        if not _with_lets(rule, env, sem):
            continue
        if rule.guard is not None and not _holds(rule.guard, env, sem):
            continue
        out.append((env, sem))
    return out


def _solve_equations(rule: Rule, env: dict[str, Binding], sem: Semantics | None) -> None:
    """Set each constant the guard defines (``T == S * M1``) from the values drawn.

    Random small values satisfy such an equation about once in a hundred draws, which
    left a recombination rule a handful of sample points, too few to order its
    candidates by weakness or to widen them.
    """
    if rule.guard is None:
        return
    for c in conjuncts(rule.guard):
        if not (isinstance(c, Binary) and c.op == "=="):
            continue
        for name, e in ((c.left, c.right), (c.right, c.left)):
            if isinstance(name, Name) and name.kind is NameKind.CONST:
                if name.name in expr_names(e):
                    continue
                try:
                    value = evaluate_expr(e, env, sem)
                except (Undetermined, QuoremError, ArithmeticError, KeyError, TypeError):
                    continue
                if isinstance(value, int) and not isinstance(value, bool):
                    env[name.name] = value
                    break


def _sample_var(rng: random.Random, name: str) -> Term:
    lo = rng.randint(-_SPAN, _SPAN)
    return var(name, lo, lo + rng.randint(0, _SPAN))


def _mask(bits: Sequence[bool]) -> int:
    return sum(1 << i for i, b in enumerate(bits) if b)


# --------------------------------------------------------------------- proving
def _conjoin(guard: Expr | None, atoms: Sequence[Atom]) -> Expr | None:
    out = guard
    for a in atoms:
        out = a.expr if out is None else Binary("and", out, a.expr)
    return out


_GUARD_RE: Final = re.compile(r"^(?P<indent>[ \t]+)guard:[ \t]*")
_FIELD_RE: Final = re.compile(r"^(?P<indent>[ \t]+)(?P<key>[a-z]+):")


def rule_text_with_guard(rule: Rule, guard: Expr) -> str:
    """``rule``'s source block with its ``guard:`` field replaced by ``guard`` (or added).

    Comments and the other fields are kept as written; a guard continued on further lines
    is replaced whole. Without a guard field, one is added before ``rewrite:``.
    """
    lines = rule.text.rstrip("\n").split("\n")
    out: list[str] = []
    skipping = -1  # indentation of the replaced guard's key while skipping its continuation
    placed = False
    for line in lines:
        indent = len(line) - len(line.lstrip(" \t"))
        if skipping >= 0:
            if line.strip() and indent > skipping and not _FIELD_RE.match(line):
                continue
            skipping = -1
        m = _GUARD_RE.match(line)
        if m:
            out.append(f"{m['indent']}guard:     {render_expr(guard)}")
            skipping, placed = len(m["indent"]), True
            continue
        field = _FIELD_RE.match(line)
        if not placed and field and field["key"] == "rewrite":
            out.append(f"{field['indent']}guard:     {render_expr(guard)}")
            placed = True
        out.append(line)
    return "\n".join(out) + "\n"


def _candidate(rule: Rule, atoms: Sequence[Atom]) -> Rule:
    guard = _conjoin(rule.guard, atoms)
    assert guard is not None
    return dataclasses.replace(rule, guard=guard, text=rule_text_with_guard(rule, guard))


@dataclasses.dataclass
class _Outcome:
    proven: bool
    counterexample: Counterexample | None
    why: str


@dataclasses.dataclass(frozen=True)
class _Budget:
    """What one Z3 query may spend: Z3 resources (deterministic) and seconds (safety)."""

    timeout: float
    rlimit: int | None

    def confirming(self) -> _Budget:
        """The larger budget a proven candidate is proven again with."""
        rlimit = None if self.rlimit is None else self.rlimit * _CONFIRM_FACTOR
        return _Budget(self.timeout * _CONFIRM_FACTOR, rlimit)


def _prove_all(rule: Rule, arity: int, budget: _Budget) -> _Outcome:
    """Prove every obligation of ``rule`` (equivalence ones first); stop at the first failure."""
    obs = sorted(obligations_of(rule, arity), key=lambda ob: ob.kind != "equivalence")
    for ob in obs:
        try:
            r = prove(ob, budget.timeout, rlimit=budget.rlimit)
        except Exception as exc:  # a candidate the encoder rejects is not a proof
            return _Outcome(False, None, f"{ob.label}: {type(exc).__name__}: {exc}")
        if r.ok:
            continue
        if r.status == "unsound" and r.counterexample is not None:
            return _Outcome(False, _counterexample(ob, r), "")
        return _Outcome(False, None, f"{ob.label}: {r.method} {r.report.splitlines()[:1]}")
    return _Outcome(True, None, "")


def _counterexample(ob: Obligation, r: ProofResult) -> Counterexample:
    assert r.counterexample is not None
    return Counterexample(
        ob.label, ob.semantics, ob.arity, ob.kind, dict(r.counterexample), r.report
    )


# ----------------------------------------------------------------------- search
class _Search:
    """The CEGIS state of one rule: atoms, their sample truth, counterexamples, blocks."""

    def __init__(self, rule: Rule, arity: int) -> None:
        self.rule = rule
        self.atoms = candidate_atoms(rule)
        samples = _sample_envs(rule, arity, _SAMPLES)
        self.truth = [_mask([_holds(a.expr, env, sem) for env, sem in samples]) for a in self.atoms]
        self.cexes: list[Counterexample] = []
        self.blocks = [0] * len(self.atoms)  # bit j: the atom blocks counterexample j
        self.tried: set[tuple[int, ...]] = set()

    def add(self, cex: Counterexample) -> None:
        env = _cex_env(self.rule, cex)
        j = len(self.cexes)
        self.cexes.append(cex)
        for i, a in enumerate(self.atoms):
            if env is None or not _holds(a.expr, env, cex.semantics):
                self.blocks[i] |= 1 << j

    def viable(self, combo: tuple[int, ...]) -> bool:
        """Blocks every counterexample, each atom one the others let through."""
        everything = (1 << len(self.cexes)) - 1
        union = 0
        for i in combo:
            union |= self.blocks[i]
        if union != everything:
            return False
        for i in combo:
            others = 0
            for k in combo:
                if k != i:
                    others |= self.blocks[k]
            if others == everything and self.cexes:
                return False
        return True

    def ordered(self, size: int) -> list[tuple[int, ...]]:
        """Viable untried combos of ``size`` atoms, weakest first (then grammar order)."""
        useful = [i for i in range(len(self.atoms)) if self.blocks[i] or not self.cexes]
        # Conjunctions of several atoms: only the weakest atoms, or the combinations
        # of a rule with hundreds of atoms outnumber what the time limit could try.
        cap = _COMBO_POOL.get(size, min(_COMBO_POOL.values())) if size > 1 else None
        if cap is not None and len(useful) > cap:
            useful = sorted(sorted(useful, key=lambda i: -self.truth[i].bit_count())[:cap])
        combos = [
            c
            for c in itertools.combinations(useful, size)
            if c not in self.tried and self.viable(c)
        ]

        def weakness(c: tuple[int, ...]) -> int:
            m = -1
            for i in c:
                m &= self.truth[i]
            return bin(m & ((1 << _SAMPLES) - 1)).count("1")

        return sorted(combos, key=lambda c: (-weakness(c), c))

    def lets_through(self, combo: Sequence[int]) -> dict[str, Counterexample]:
        """For each atom of ``combo``: a counterexample only it blocks."""
        out = {}
        for i in combo:
            others = 0
            for k in combo:
                if k != i:
                    others |= self.blocks[k]
            for j, cex in enumerate(self.cexes):
                if self.blocks[i] >> j & 1 and not others >> j & 1:
                    out[self.atoms[i].text] = cex
                    break
        return out


def suggest_guard(
    rule: Rule,
    *,
    arity: int = 2,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    rlimit: int | None = DEFAULT_QUERY_RLIMIT,
    timeout: float = DEFAULT_QUERY_TIMEOUT,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_atoms: int = DEFAULT_MAX_ATOMS,
    progress: Callable[[str], None] | None = None,
) -> Suggestion:
    """Search for the weakest guard (the existing one ``and`` atoms) that makes ``rule`` proven.

    The budget is deterministic, so the same rule gets the same answer at any machine
    load: ``max_candidates`` candidate guards are proven at most, each Z3 query with
    ``rlimit`` resources (None: unbounded, ``timeout`` alone bounds it). ``timeout``
    (seconds per query) and ``time_limit`` (the whole search, checked between
    candidates) are safety nets; a search stopped by one says so in its note.
    ``max_atoms`` bounds the atoms added. The returned suggestion's rule text parses
    back to the rule that was proven (checked).
    """
    with private_z3_context():
        return _search_guard(
            rule,
            arity=arity,
            max_candidates=max_candidates,
            budget=_Budget(timeout, rlimit),
            time_limit=time_limit,
            max_atoms=max_atoms,
            progress=progress,
        )


def _search_guard(
    rule: Rule,
    *,
    arity: int,
    max_candidates: int,
    budget: _Budget,
    time_limit: float,
    max_atoms: int,
    progress: Callable[[str], None] | None,
) -> Suggestion:
    start = time.perf_counter()
    first = _prove_all(rule, arity, budget)
    if first.proven:
        return Suggestion(rule, "already-proven", seconds=time.perf_counter() - start)
    search = _Search(rule, arity)
    if first.counterexample is not None:
        search.add(first.counterexample)
    tried = 0
    note = "no conjunction of up to {max_atoms} atoms of the grammar is proven"
    for size in range(1, max_atoms + 1):
        while True:
            combos = search.ordered(size)
            if not combos:
                break
            progressed = False
            for combo in combos:
                if tried >= max_candidates:
                    note = f"{max_candidates} candidates tried (--candidates)"
                    return _give_up(rule, search, tried, start, note)
                if time.perf_counter() - start > time_limit:
                    note = f"wall-clock safety limit of {time_limit:g} s reached"
                    return _give_up(rule, search, tried, start, note)
                search.tried.add(combo)
                tried += 1
                atoms = [search.atoms[i] for i in combo]
                cand = _candidate(rule, atoms)
                if progress:
                    progress(f"trying {render_expr(cand.guard) if cand.guard else ''}")
                outcome = _prove_all(cand, arity, budget)
                if outcome.proven:
                    # Confirmed with a larger budget before it is reported: the int64
                    # prover answered proven-int64 at 2 s and unsound (an overflow the
                    # engine confirms) at 10 s for the same rule (the known_bugs test).
                    outcome = _prove_all(cand, arity, budget.confirming())
                if outcome.proven:
                    tried, combos_found = _widen(
                        rule,
                        search,
                        combo,
                        arity=arity,
                        budget=budget,
                        tried=tried,
                        deadline=start + time_limit,
                    )
                    return _found(rule, search, combos_found, tried=tried, start=start)
                if outcome.counterexample is not None:
                    search.add(outcome.counterexample)
                    progressed = True
                    break  # the new counterexample re-orders and prunes the rest
            if not progressed:
                break
    return _give_up(rule, search, tried, start, note.format(max_atoms=max_atoms))


def _give_up(rule: Rule, search: _Search, tried: int, start: float, note: str) -> Suggestion:
    return Suggestion(
        rule,
        "not-found",
        counterexamples=search.cexes,
        candidates_tried=tried,
        seconds=time.perf_counter() - start,
        note=note,
    )


def _either(search: _Search, combos: Sequence[tuple[int, ...]]) -> Atom:
    """One atom: the disjunction of the conjunctions ``combos``."""
    alternatives: list[Expr] = []
    for combo in combos:
        conj = _conjoin(None, [search.atoms[i] for i in combo])
        assert conj is not None
        alternatives.append(conj)
    either = alternatives[0]
    for alt in alternatives[1:]:
        either = Binary("or", either, alt)
    return Atom(either, render_expr(either))


def _widen(
    rule: Rule,
    search: _Search,
    first: tuple[int, ...],
    *,
    arity: int,
    budget: _Budget,
    tried: int,
    deadline: float,
) -> tuple[int, list[tuple[int, ...]]]:
    """Weaken the proven conjunction ``first`` by disjoining other proven conjunctions.

    A disjunction of proven guards is proven (the rule is sound wherever either holds), so
    the search goes on, within :data:`_WIDEN_TRIES` candidates (and ``deadline``), for
    conjunctions true at sample points where the guards found so far are false -- most
    new points first. A dropped conjunct such as ``C > 0 and vmin(x) > 0 or C < 0 and
    vmax(x) < 0`` is out of reach of one conjunction; so is a shipped guard incomparable
    to the first one found. The disjunction is proven again as a whole before it is kept.
    Returns the candidates tried so far and the conjunctions kept (``first`` first).
    """
    found = [first]
    covered = _conjunction_mask(search, first)
    attempts = 0
    for size in range(1, DEFAULT_MAX_ATOMS + 1):
        while len(found) < _MAX_DISJUNCTS and attempts < _WIDEN_TRIES:
            new = {
                c: (_conjunction_mask(search, c) & ~covered).bit_count()
                for c in search.ordered(size)
            }
            # An alternative true at a handful of points (``B == C + 1 and divides(B, C)``)
            # is proven but widens nothing a reader would want: it must add a few percent.
            combos = sorted(
                (c for c, n in new.items() if n >= _WIDEN_MIN_NEW), key=lambda c: -new[c]
            )
            progressed = False
            for combo in combos:
                if time.perf_counter() > deadline or attempts >= _WIDEN_TRIES:
                    break
                search.tried.add(combo)
                tried += 1
                attempts += 1
                cand = _candidate(rule, [search.atoms[i] for i in combo])
                outcome = _prove_all(cand, arity, budget)
                if outcome.proven:
                    whole = _candidate(rule, [_either(search, [*found, combo])])
                    outcome = _prove_all(whole, arity, budget.confirming())
                    if outcome.proven:
                        found.append(combo)
                        covered |= _conjunction_mask(search, combo)
                        progressed = True
                        break
                if outcome.counterexample is not None:
                    search.add(outcome.counterexample)
                    progressed = True
                    break
            if not progressed:
                break
    return tried, found


def _conjunction_mask(search: _Search, combo: Sequence[int]) -> int:
    """The sample points where every atom of ``combo`` holds."""
    m = (1 << _SAMPLES) - 1
    for i in combo:
        m &= search.truth[i]
    return m


def _found(
    rule: Rule,
    search: _Search,
    combos: Sequence[tuple[int, ...]],
    *,
    tried: int,
    start: float,
) -> Suggestion:
    if len(combos) == 1:
        [combo] = combos
        cand = _candidate(rule, [search.atoms[i] for i in combo])
        added = [search.atoms[i] for i in combo]
        lets_through = search.lets_through(combo)
    else:
        either = _either(search, combos)
        cand = _candidate(rule, [either])
        added = [either]
        # Every alternative blocks every counterexample: the first stands for them all.
        lets_through = {either.text: search.cexes[0]} if search.cexes else {}
    # What is printed must be what was proven: parse the text back and compare.
    parsed = parse_rules(cand.text, rule.file)
    if len(parsed) != 1 or parsed[0].guard != cand.guard:
        raise AssertionError(f"suggested text does not parse to the proven rule:\n{cand.text}")
    return Suggestion(
        rule,
        "found",
        guard=cand.guard,
        text=cand.text,
        added=added,
        lets_through=lets_through,
        counterexamples=search.cexes,
        candidates_tried=tried,
        seconds=time.perf_counter() - start,
    )


def suggest_for_results(
    rules: Sequence[Rule],
    results: Sequence[dict[str, object]],
    *,
    arity: int = 2,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    rlimit: int | None = DEFAULT_QUERY_RLIMIT,
    timeout: float = DEFAULT_QUERY_TIMEOUT,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> list[Suggestion]:
    """A search for each rule whose equivalence or int64 obligation is not proven in ``results``.

    ``results`` are ``quorem verify``'s JSON results; termination and interval results
    are not a guard's business and are ignored.
    """
    failed = {
        r["name"]
        for r in results
        if obligation_kind(r) in ("equivalence", "int64") and r.get("status") not in PROVEN_STATUSES
    }
    return [
        suggest_guard(
            rule,
            arity=arity,
            max_candidates=max_candidates,
            rlimit=rlimit,
            timeout=timeout,
            time_limit=time_limit,
        )
        for rule in rules
        if rule.name in failed
    ]


def suggestion_json(s: Suggestion) -> dict[str, object]:
    """The JSON form of a suggestion (``quorem verify --suggest-guard --json``)."""
    return {
        "name": s.rule.name,
        "file": s.rule.file,
        "line": s.rule.line,
        "status": s.status,
        "guard": render_expr(s.guard) if s.guard is not None else None,
        "added": [a.text for a in s.added],
        "lets_through": {k: c.values for k, c in s.lets_through.items()},
        "text": s.text,
        "candidates": s.candidates_tried,
        "counterexamples": len(s.counterexamples),
        "seconds": round(s.seconds, 3),
        "note": s.note,
    }
