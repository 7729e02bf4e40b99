"""Prove rules sound with Z3, and turn failures into replayed counterexamples.

For each rule instance (rule x semantics x arity) there are two obligations:

* ``equivalence``: over unbounded integers, wherever the left-hand side is defined and
  the guard holds, the rewrite is defined and equal to it. Status ``proven``.
* ``int64``: assuming every intermediate value of the left-hand side fits in int64, the
  guard holds and the two sides are equal (the ``equivalence`` obligation, proven on its
  own), every intermediate of the rewrite fits too and it divides by no zero: the
  rewrite introduces no overflow. Status ``proven-int64``. The two obligations together
  make a rule safe for machine code.

A ``sat`` answer is a counterexample; it is shrunk toward small magnitudes and replayed
through the engine (the rule is applied to a concrete term built from the model) before
it is reported as ``unsound``. Z3's ``unknown`` (timeout) is reported as ``unknown`` and
never counted as proven; so is a counterexample the engine does not reproduce.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import time
from collections.abc import Iterator
from typing import Any, Final

import z3

from quorem.ops import Semantics
from quorem.rule import NameKind, Rule

from .encode import INT64_MAX, INT64_MIN, Encoding, encode_rule, has_sequence
from .lemmas import instances
from .replay import Replay, replay

__all__ = [
    "DEFAULT_ARITY",
    "DEFAULT_TIMEOUT",
    "ENCODINGS",
    "OBLIGATIONS",
    "PROVEN_STATUSES",
    "SPLIT_METHOD",
    "Obligation",
    "ProofResult",
    "check_query",
    "counterexample_report",
    "fresh_z3_context",
    "obligation_kind",
    "obligation_query",
    "obligations_of",
    "private_z3_context",
    "prove",
    "replay_model",
    "split_queries",
    "verdict",
]

DEFAULT_ARITY: Final = 4
DEFAULT_TIMEOUT: Final = 20.0
OBLIGATIONS: Final = ("equivalence", "int64")
# How an obligation is stated (quorem verify --encoding):
# * "purify": division purified into fresh quotient and remainder, with the quotient
#   lemmas of quorem.verify.division (Z3's fastest);
# * "native": SMT-LIB div/mod terms, no lemmas (quorem.verify.division.native_division);
# * "native-split": native, the equivalence obligation split into one query per sign of
#   each symbolic name a divisor holds (quorem.verify.split), with lemma instances
#   (quorem.verify.lemmas), every case proven; where Z3 does not refute every case,
#   the purified statement as by default. What cvc5 decides as well as Z3 on most
#   non-linear rules (benchmarks/nonlinear.py, benchmarks/README.md).
ENCODINGS: Final = ("purify", "native", "native-split")
_PROVEN: Final = {"equivalence": "proven", "int64": "proven-int64"}
# Statuses that count as proofs; ``proven-on-grid(...)`` is shown but is not one.
PROVEN_STATUSES: Final = frozenset(_PROVEN.values())


def verdict(status: str) -> str:
    """``proven`` for every proven status (of any strength), else ``status`` itself."""
    return "proven" if status in PROVEN_STATUSES else status


@dataclasses.dataclass(frozen=True)
class Obligation:
    """One proof obligation of a rule.

    It names the semantics the rule is instantiated for, the arity of its ``sum(K*t)``
    (0 when it has none) and the kind (``equivalence`` or ``int64``).
    """

    rule: Rule
    semantics: Semantics | None
    arity: int
    kind: str
    encoding: str = "purify"

    @property
    def label(self) -> str:
        """Short text naming the obligation, e.g. ``floor equivalence k=2``."""
        sem = self.semantics.value if self.semantics else "any"
        arity = f" k={self.arity}" if self.arity else ""
        return f"{sem} {self.kind}{arity}"


@dataclasses.dataclass
class ProofResult:
    """The outcome of one obligation."""

    obligation: Obligation
    status: str  # proven, proven-int64, unknown, unsound
    method: str
    seconds: float
    counterexample: dict[str, int] | None = None
    report: str = ""

    @property
    def ok(self) -> bool:
        """Whether the obligation is proven."""
        return self.status in PROVEN_STATUSES


def obligation_kind(result: dict[str, Any]) -> str:
    """The kind of the obligation a result's JSON names (``termination k=2``: ``termination``)."""
    return str(result.get("obligation", "")).split(" ", 1)[0]


def obligations_of(
    rule: Rule, max_arity: int = DEFAULT_ARITY, encoding: str = "purify"
) -> list[Obligation]:
    """Every obligation of ``rule``: per semantics, per arity 1..max_arity, per kind."""
    arities = range(1, max_arity + 1) if has_sequence(rule) else range(0, 1)
    return [
        Obligation(rule, sem, k, kind, encoding)
        for sem in (rule.semantics or (None,))
        for k in arities
        for kind in OBLIGATIONS
    ]


def _in64(v: z3.ArithRef) -> z3.BoolRef:
    return z3.And(v >= INT64_MIN, v <= INT64_MAX)


def _query(enc: Encoding, kind: str) -> tuple[list[z3.BoolRef], z3.BoolRef]:
    premises = list(enc.premises)
    if kind == "int64":
        # No new overflow, given equality: that is the equivalence obligation, proven on
        # its own (quorem verify runs both; a rule is safe for machine code when both are
        # proven). Assuming it, rather than proving it again, keeps Z3 from timing out
        # on queries it proves in a second in another process.
        premises += [_in64(v) for v in enc.lhs_nodes]
        premises.append(enc.lhs == enc.rhs)
        return premises, z3.And(*enc.obligations, *[_in64(v) for v in enc.rhs_nodes])
    return premises, z3.And(*enc.obligations, enc.lhs == enc.rhs)


def _solver(
    timeout: float, strategy: str = "default", seed: int = 0, rlimit: int | None = None
) -> z3.Solver:
    """A fresh solver of ``strategy`` with Z3's random seed ``seed``.

    With ``rlimit``, each check is also bounded by Z3's resource count (a deterministic
    budget: the same answer at any machine load); ``timeout`` stays a safety net.
    """
    if strategy == "expand":
        # Substitute the variables equations define (a division's numerator is
        # d*q + r), then multiply products out into sums of monomials: the recombination
        # and coefficient-reduction rules become linear facts about the same monomials.
        expand = z3.With("simplify", som=True, arith_lhs=True)
        s = z3.Then("simplify", "propagate-values", "solve-eqs", expand, "smt").solver()
    else:
        s = z3.Solver()
    s.set("timeout", max(1, int(timeout * 1000)))
    s.set("random_seed", seed)
    if rlimit is not None:
        s.set("rlimit", max(1, rlimit))
    return s


# Z3's time on one query is heavy-tailed: the same query takes half a second or times
# out depending on the random seed, and the "expand" strategy proves at once some rules
# the default finds hard (and times out on others). So a query gets short runs of both,
# with new seeds and longer budgets each round: (strategy, seed, share of the timeout).
# Any ``unsat`` is a proof, whichever strategy found it; so is any model a model.
_SCHEDULE: Final = (
    ("default", 0, 0.1),
    ("expand", 0, 0.1),
    ("default", 1, 0.25),
    ("expand", 1, 0.25),
    ("default", 2, 0.5),
)
# ``prove(..., seed=n)`` runs the whole schedule with seeds moved by n strides: seed 0 is
# the schedule above, and no two seeds share a step's seed.
_SEED_STRIDE: Final = 1000


def check_query(
    premises: list[z3.BoolRef], timeout: float, seed: int = 0, rlimit: int | None = None
) -> tuple[Any, z3.Solver]:
    """Z3's answer on ``premises`` by the restart schedule above, and the deciding solver."""
    for strategy, step_seed, share in _SCHEDULE:
        step_rlimit = None if rlimit is None else int(rlimit * share)
        s = _solver(timeout * share, strategy, step_seed + seed * _SEED_STRIDE, step_rlimit)
        s.add(*premises)
        answer = s.check()
        if answer != z3.unknown:
            break
    return answer, s


def _model_values(model: z3.ModelRef, enc: Encoding) -> dict[str, int]:
    values: dict[str, int] = {}
    for name, sym in enc.symbols.items():
        values[name] = model.eval(sym, model_completion=True).as_long()
    for label, (lo, hi) in enc.bounds.items():
        values[f"vmin({label})"] = model.eval(lo, model_completion=True).as_long()
        values[f"vmax({label})"] = model.eval(hi, model_completion=True).as_long()
    return values


def _shrink(
    s: z3.Solver, enc: Encoding, timeout: float, rlimit: int | None = None
) -> z3.ModelRef | None:
    """A model with all named values as small as possible (searching |v| <= 2^k).

    With ``rlimit`` the search is bounded by Z3's resource count alone (each box gets
    the solver's own per-check limit), so the model found does not depend on the load.
    """
    names = _values_of(enc)
    deadline = time.monotonic() + timeout
    for k in (1, 2, 4, 8, 16, 64, 256, 4096, 2**20, 2**40, 2**64):
        if rlimit is None and time.monotonic() > deadline:
            break
        s.push()
        s.add(*[z3.And(v >= -k, v <= k) for v in names])
        if s.check() == z3.sat:
            model = s.model()
            s.pop()
            return model
        s.pop()
    return None


_BOUNDED_METHOD: Final = ", values in int64"


def _bounded(enc: Encoding) -> list[z3.BoolRef]:
    """The extra premises of the portfolio's second step: every value in int64."""
    return [_in64(v) for v in _values_of(enc)]


def _assertions(
    premises: list[z3.BoolRef], extra: list[z3.BoolRef], goal: z3.BoolRef
) -> list[z3.BoolRef]:
    """What Z3 is asked to refute: ``unsat`` proves the goal under the premises."""
    return [*premises, *extra, z3.Not(goal)]


def obligation_query(ob: Obligation, method: str = "") -> list[z3.BoolRef]:
    """The assertions whose ``unsat`` proves ``ob`` (a model of them refutes it).

    The query :func:`prove` sends to Z3 first, or with ``method`` a result's method,
    the query that decided it: the same with every value bounded to int64 for a method
    ending ``, values in int64``. Built as :func:`prove` builds it, by the same code.
    """
    enc = encode_rule(ob.rule, ob.semantics, ob.arity, int64=ob.kind == "int64")
    premises, goal = _query(enc, ob.kind)
    extra = _bounded(enc) if method.endswith(_BOUNDED_METHOD) else []
    return _assertions(premises, extra, goal)


def prove(
    ob: Obligation, timeout: float = DEFAULT_TIMEOUT, seed: int = 0, rlimit: int | None = None
) -> ProofResult:
    """Discharge one obligation with Z3 and report the strongest result reached.

    A fixed portfolio, stopping at the first definite answer: the IntAux encoding over
    unbounded integers (``proven``, or ``proven-int64`` for the int64 obligation); then,
    for equivalence only, the same with every value bounded to int64 (``proven-int64``:
    holds for machine integers, shown by its method); then the rule's constants pinned
    over a small grid (``proven-on-grid(...)``: weaker, never counted as proven). A
    counterexample any
    step finds is replayed through the engine before it is reported ``unsound``.

    ``seed`` moves every Z3 random seed the portfolio uses (0: the default schedule).
    ``rlimit`` bounds each query by Z3's resource count, shared out as ``timeout`` is:
    the answer is then the same at any machine load (``timeout`` stays a safety net,
    set it well above what ``rlimit`` takes). About 10**7 is a second's work here.
    """
    if ob.encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {ob.encoding!r} (one of {', '.join(ENCODINGS)})")
    # "native-split" proves the equivalence obligation by its sign cases when Z3 refutes
    # every one; otherwise (and for int64) the obligation is stated as by default, so
    # Z3 proves what it proved before (the method says which statement it proved).
    native = ob.encoding == "native"
    enc = encode_rule(
        ob.rule,
        ob.semantics,
        ob.arity,
        int64=ob.kind == "int64",
        encoding="native" if native else "purify",
        lemmas=not native,
    )
    premises, goal = _query(enc, ob.kind)
    q = _Query(ob, enc, premises, goal, time.perf_counter(), seed, rlimit)
    method = "IntAux" if ob.kind == "equivalence" else "IntAux64"
    if native:
        method += ", native"
    if ob.encoding == "native-split" and ob.kind == "equivalence":
        split = _prove_split(q, timeout)
        if split is not None:
            return split
    r = q.attempt([], timeout, method, _PROVEN[ob.kind])
    if r.status != "unknown" or r.method in _VACUOUS:
        return r
    if ob.kind == "int64":
        # Bounding the names to int64 would assume what this obligation must show: a
        # rest of a sum pattern, or a range bound, is a value the input need not compute
        # (``y`` in ``(x*M + y) // N`` may be a partial sum outside int64 whose total
        # fits). Found by the guard search: "proven" at 2 s, a replayed overflow at 10 s.
        grid = q.grid(timeout)
        return grid if grid is not None else r
    r64 = q.attempt(_bounded(enc), timeout, method + _BOUNDED_METHOD, "proven-int64")
    if r64.status != "unknown":
        return r64
    grid = q.grid(timeout)
    if grid is not None:
        return grid
    return dataclasses.replace(r, seconds=time.perf_counter() - q.start)


_VACUOUS: Final = ("vacuous", "vacuity-unknown")


def split_queries(
    ob: Obligation, lemmas: bool = True, bounds: bool = True
) -> list[tuple[dict[str, str], list[z3.BoolRef]]]:
    """``ob`` as one query (assertions to refute) per sign case, in the native encoding.

    The cases are every combination of signs of :func:`quorem.verify.split.split_plan`:
    together they cover every integer assignment (checked), so ``ob`` holds if and only
    if every query is unsatisfiable. One case and no names: the unsplit native query.
    ``lemmas``: add the instances of :mod:`quorem.verify.lemmas` to each query (with
    ``bounds``, those on the bounds of divided ranges too).
    """
    from .split import exhaustive, sign_cases, split_plan  # noqa: PLC0415

    cases = sign_cases(split_plan(ob.rule, ob.semantics, ob.arity))
    if not exhaustive(cases):
        raise AssertionError(f"sign cases do not cover every assignment: {cases}")
    out = []
    for case in cases:
        enc = encode_rule(
            ob.rule,
            ob.semantics,
            ob.arity,
            int64=ob.kind == "int64",
            encoding="native",
            signs=case,
            lemmas=False,
        )
        premises, goal = _query(enc, ob.kind)
        refute = [*premises, z3.Not(goal)]
        if lemmas:
            # Valid facts about div/mod (quorem.verify.lemmas), instantiated on the
            # query's own divisions.
            refute = [*instances(refute, bounds), *refute]
        out.append((case, refute))
    return out


_SPLIT_SHARE: Final = 0.5
# The method of a proof by sign cases names it so (``IntAux, native-split (4 cases: ...)``).
SPLIT_METHOD: Final = "native-split"


def _prove_split(q: _Query, timeout: float) -> ProofResult | None:
    """``proven`` when every sign case is refuted (and the premises are satisfiable).

    None when some case is not refuted: the caller then runs the default (purified)
    query, whose counterexamples are replayed as usual.
    """
    cases = split_queries(q.ob)
    for _, assertions in cases:
        # A share of the budget: the cases Z3 refutes take well under a second
        # (benchmarks/nonlinear.py), and a case it cannot refute delays the default.
        answer, _ = check_query(assertions, timeout * _SPLIT_SHARE, q.seed, _share(q.rlimit, 2))
        if answer != z3.unsat:
            return None
    # Vacuity on the default statement's premises (q's): the cases' premises together
    # are the same statement, split.
    names = sorted({n for case, _ in cases for n in case})
    signs = ", ".join(names) or "-"
    method = f"IntAux, {SPLIT_METHOD} ({len(cases)} cases: sign of {signs})"
    r = q.attempt_vacuity(timeout)
    if r is not None:
        return r
    return ProofResult(q.ob, _PROVEN[q.ob.kind], method, q.elapsed())


# Models that satisfied recent vacuity checks. A rule's equivalence and int64 obligations
# (and often its other arities) share most premises, so a model found for one usually
# satisfies the next: checking that costs a few evaluations instead of a Z3 search.
_WITNESSES: Final[collections.deque[z3.ModelRef]] = collections.deque(maxlen=4)


def fresh_z3_context() -> None:
    """Replace Z3's main context with a new one, and forget the models remembered in it.

    Work run after this runs as if alone: models remembered from earlier proofs steer
    the search for a model of the premises (merge-residues, proven alone in 0.6 s, stayed
    unknown after the termination proofs had run in the same process).
    """
    z3.z3._main_ctx = None
    _WITNESSES.clear()


@contextlib.contextmanager
def private_z3_context() -> Iterator[None]:
    """Run the body in a new Z3 main context, with no remembered models; restore both after.

    Z3's answers (which model, sometimes whether ``unknown``) depend on what its context
    has seen: a search run inside this does not depend on what ran before it in the
    process (the models Z3 picks may still vary a little from run to run). Z3 objects
    made outside stay valid (their context is put back); objects made inside must not
    outlive it.
    """
    saved_ctx, saved = z3.z3._main_ctx, list(_WITNESSES)
    fresh_z3_context()
    try:
        yield
    finally:
        z3.z3._main_ctx = saved_ctx
        _WITNESSES.clear()
        _WITNESSES.extend(saved)


def _witnessed(premises: list[z3.BoolRef]) -> bool:
    """Whether a recent model satisfies every premise (completed with defaults)."""
    for model in _WITNESSES:
        if all(z3.is_true(model.eval(p, model_completion=True)) for p in premises):
            return True
    return False


def _satisfiable(
    premises: list[z3.BoolRef],
    names: list[z3.ArithRef],
    timeout: float,
    seed: int = 0,
    rlimit: int | None = None,
) -> Any:
    """Whether the premises have a model: Z3's answer, retried on small boxes if unknown.

    Finding *some* model is what matters here, and non-linear constraints (gcds,
    products of constants) that stall the unbounded search are often easy in a box.
    """
    if _witnessed(premises):
        return z3.sat
    answer, v = check_query(premises, timeout, seed, rlimit)
    for k in (8, 64, 4096):
        if answer != z3.unknown:
            break
        v = _solver(timeout / 4, seed=seed * _SEED_STRIDE, rlimit=_share(rlimit, 4))
        v.add(*premises, *[z3.And(x >= -k, x <= k) for x in names])
        answer = z3.sat if v.check() == z3.sat else z3.unknown
    if answer == z3.sat:
        _WITNESSES.appendleft(v.model())
    return answer


# How many further models a query asks for, with other constants, when the engine does
# not reproduce one (see _Query.attempt).
_MAX_BLOCKED_MODELS: Final = 4


def _constant_symbols(ob: Obligation, enc: Encoding) -> list[z3.ArithRef]:
    """The Z3 symbols of the rule's matched constants (``C``, ``K[1]``, ...)."""
    out = []
    for name, kind in ob.rule.names.items():
        if kind is NameKind.CONST and name in enc.symbols:
            out.append(enc.symbols[name])
        elif kind is NameKind.SEQ_CONST:
            out += [enc.symbols[f"{name}[{i}]"] for i in range(1, ob.arity + 1)]
    return out


def _values_of(enc: Encoding) -> list[z3.ArithRef]:
    """Every symbol of an encoding: the rule's names and the range bounds it reads."""
    out = list(enc.symbols.values())
    for lo, hi in enc.bounds.values():
        out += [lo, hi]
    return out


def _share(rlimit: int | None, parts: int) -> int | None:
    """A ``parts``-th of a resource budget (None: unbounded stays unbounded)."""
    return None if rlimit is None else max(1, rlimit // parts)


# The grid a portfolio pins constants to, and how many constants it pins at most.
_GRID: Final = (-3, -2, -1, 1, 2, 3, 4)
_GRID_MAX_CONSTANTS: Final = 3


@dataclasses.dataclass(frozen=True)
class _Query:
    """One obligation's encoded query, for each step of the portfolio."""

    ob: Obligation
    enc: Encoding
    premises: list[z3.BoolRef]
    goal: z3.BoolRef
    start: float
    seed: int = 0
    rlimit: int | None = None

    def grid(self, timeout: float) -> ProofResult | None:
        """Every combination of the rule's constants on the grid; None if undecided."""
        names = self.ob.rule.names
        consts = [
            n
            for n in self.enc.symbols
            if names.get(n.split("[")[0]) in (NameKind.CONST, NameKind.SEQ_CONST)
        ]
        if not consts or len(consts) > _GRID_MAX_CONSTANTS:
            return None
        for combo in itertools.product(_GRID, repeat=len(consts)):
            pins = [self.enc.symbols[n] == v for n, v in zip(consts, combo, strict=True)]
            r = self.attempt(pins, timeout / 10, "grid", "proven", _share(self.rlimit, 10))
            if r.status == "unsound":
                return r
            if r.status == "unknown" and r.method not in _VACUOUS:
                return None
        label = f"proven-on-grid({', '.join(consts)} in {_GRID[0]}..{_GRID[-1]} but 0)"
        return ProofResult(self.ob, label, "IntAux, constants pinned", self.elapsed())

    def elapsed(self) -> float:
        """Seconds since the obligation's first query started."""
        return time.perf_counter() - self.start

    def attempt_vacuity(
        self, timeout: float, extra: list[z3.BoolRef] | None = None, rlimit: int | None = None
    ) -> ProofResult | None:
        """None if the premises (and ``extra``) have a model, else the vacuous result.

        Premises that can never hold would prove anything.
        """
        satisfiable = _satisfiable(
            self.premises + (extra or []),
            _values_of(self.enc),
            timeout,
            self.seed,
            self.rlimit if rlimit is None else rlimit,
        )
        if satisfiable == z3.sat:
            return None
        # Never counted as proven: a shipped rule that can never fire is a bug too.
        never = satisfiable == z3.unsat
        return ProofResult(
            self.ob,
            "unknown",
            _VACUOUS[0] if never else _VACUOUS[1],
            self.elapsed(),
            None,
            "the guard and premises are unsatisfiable: the rule can never fire"
            if never
            else "the guard and premises cannot be shown satisfiable: the proof may be vacuous",
        )

    def attempt(
        self,
        extra: list[z3.BoolRef],
        timeout: float,
        method: str,
        proven: str,
        rlimit: int | None = None,
    ) -> ProofResult:
        """One query with ``extra`` premises: ``proven``, a replayed counterexample, or unknown."""
        ob, enc = self.ob, self.enc
        rlimit = self.rlimit if rlimit is None else rlimit
        # Fresh solvers per query: Z3's incremental mode is much weaker on these.
        answer, s = check_query(
            _assertions(self.premises, extra, self.goal), timeout, self.seed, rlimit
        )
        if answer == z3.unsat:
            vacuous = self.attempt_vacuity(timeout, extra, rlimit)
            return vacuous or ProofResult(ob, proven, method, self.elapsed())
        if answer == z3.unknown:
            why = s.reason_unknown()
            return ProofResult(
                ob, "unknown", method, self.elapsed(), None, f"Z3 answered unknown ({why})"
            )
        model = s.model()
        model = _shrink(s, enc, timeout, rlimit) or model
        values, rep = replay_model(ob, _model_values(model, enc))
        constants = _constant_symbols(ob, enc)
        for _ in range(_MAX_BLOCKED_MODELS):
            if rep.confirmed or not constants:
                break
            # Z3 picks the bounds of a compound term freely; with the same constants the
            # next model tends to repeat that choice. Ask for other constants instead.
            s.add(z3.Or([c != model.eval(c, model_completion=True) for c in constants]))
            if s.check() != z3.sat:
                break
            model = s.model()
            values, rep = replay_model(ob, _model_values(model, enc))
        if rep.confirmed:
            return ProofResult(
                ob,
                "unsound",
                method,
                self.elapsed(),
                values,
                counterexample_report(ob, values, rep),
            )
        return ProofResult(
            ob,
            "unknown",
            method,
            self.elapsed(),
            values,
            "Z3 found a model but the engine did not reproduce it (an over-approximated"
            f" range or gcd?): {rep.note}\n" + counterexample_report(ob, values, rep),
        )


# Ranges (below, above the model's value) tried for the term variables when the model's
# own bounds do not reproduce: Z3 picks the bounds of a compound term (vmin(x // y)) freely,
# which the engine derives from the variables' ranges instead.
_MAX_CORNERS: Final = 27
_RANGE_SHAPES: Final = (
    (0, 0),
    (1, 1),
    (0, 1),
    (1, 0),
    (2, 2),
    (0, 3),
    (3, 0),
    (10, 10),
    (100, 100),
)


def replay_model(ob: Obligation, values: dict[str, int]) -> tuple[dict[str, int], Replay]:
    """Replay Z3's model; failing that, the same point with nearby variable ranges.

    Every variant is a concrete point the engine confirms on its own, so a confirmed one
    is a genuine counterexample whichever variant it is.
    """
    int64 = ob.kind == "int64"
    rep = replay(ob.rule, ob.semantics, ob.arity, values, int64=int64)
    names = [n for n, k in ob.rule.names.items() if k is NameKind.TERM and n in values]
    names += [
        f"{n}[{i}]"
        for n, k in ob.rule.names.items()
        if k is NameKind.SEQ_TERM
        for i in range(1, ob.arity + 1)
        if f"{n}[{i}]" in values
    ]
    if rep.confirmed or not names:
        return values, rep
    # Z3's bounds of compound terms mean nothing at another range: leave them out.
    plain = {k: v for k, v in values.items() if not k.startswith(("vmin(", "vmax("))}
    for below, above in _RANGE_SHAPES:
        # The model's point, then each corner of the widened box (the value of a
        # compound term at the model's point may be one its range does not reach).
        corners = itertools.product(
            *[(0, -below, above)[: 3 if below or above else 1]] * len(names)
        )
        for offsets in itertools.islice(corners, _MAX_CORNERS):
            variant = dict(plain)
            for n, d in zip(names, offsets, strict=True):
                variant[n] = values[n] + d
                variant[f"vmin({n})"] = values[n] - below
                variant[f"vmax({n})"] = values[n] + above
            tried = replay(ob.rule, ob.semantics, ob.arity, variant, int64=int64)
            if tried.confirmed:
                return variant, tried
    return values, rep


def counterexample_report(ob: Obligation, values: dict[str, int], rep: Replay) -> str:
    """A replayed model as a report: ``file:line: rule NAME (obligation): verdict``."""
    rule = ob.rule
    if not rep.confirmed:
        verdict = "not proven"
    elif rep.kind == "overflow":
        # Not a wrong value: a value machine code cannot hold (the obligation still fails).
        verdict = "OVERFLOW (equal values, an intermediate of the rewrite leaves int64)"
    else:
        verdict = "UNSOUND"
    lines = [
        f"{rule.location}: rule {rule.name} ({ob.label}): {verdict}",
        f"  doc: {rule.doc}",
        "  example:",
    ]
    width = max((len(k) for k in values), default=1)
    lines += [f"    {k:<{width}} = {v}" for k, v in values.items()]
    lines += [f"  {line}" for line in rep.lines]
    return "\n".join(lines)


def result_json(r: ProofResult) -> dict[str, Any]:
    """The JSON form of a result (``quorem verify --json``)."""
    ob = r.obligation
    return {
        "name": ob.rule.name,
        "file": ob.rule.file,
        "line": ob.rule.line,
        "semantics": ob.semantics.value if ob.semantics else "any",
        "obligation": ob.kind + (f" k={ob.arity}" if ob.arity else ""),
        "status": r.status,
        "method": r.method,
        "seconds": round(r.seconds, 4),
        "counterexample": r.counterexample,
    }
