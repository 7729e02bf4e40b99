"""The fixed-point rewriter: applies a rule set bottom-up until nothing changes.

Terms are interned, so a memo keyed on nodes simplifies every shared subterm once. The
traversal uses an explicit stack: depth is limited by memory, not by Python's recursion
limit. Every run terminates: it stops at a fixed point, or when its step budget is
spent, or when a rule sequence leads back to a term being rewritten (a cycle), and the
result says which.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import gc
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from itertools import filterfalse

from .batch import BATCH_ATOMS, BatchRule, batch_hook, batch_rules
from .compiler.dispatch import Dispatch
from .context import in_context, knowledge, restore_variables, safe_outside
from .errors import DivisionByZeroError, TermError
from .evaluation import count_divmod
from .junction import (
    ChainRules,
    PairRule,
    apply_pair_rules,
    chain_rules,
    is_long_chain,
)
from .matcher import JUNCTION_CLAUSES
from .ops import Op
from .overflow import term_fits_int64
from .ruleset import CompiledRule, RuleSet
from .term import (
    Term,
    conjunction,
    const,
    disjunction,
    junction_clauses,
    logic_built,
    logical_not,
    point_variables_built,
    rebuild,
)
from .walk import free_names, nodes, pin_point_variables, postorder

_CONST_OP, _ADD_OP, _VAR_OP = Op.CONST, Op.ADD, Op.VAR

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Budget",
    "RewriteResult",
    "Step",
    "StopReason",
    "budget_for",
    "rewrite",
    "rewrite_given",
    "rewrite_stop",
    "rewrite_term",
]

DEFAULT_MAX_STEPS = 1_000_000  # the most rule applications any run makes
# A run's budget grows with its input: the shipped rules take less than one step per input
# node on every benchmark corpus (0.75 at most), so these leave two orders of magnitude.
_BASE_STEPS, _STEPS_PER_NODE = 10_000, 100
_BASE_NODES, _NODES_PER_NODE = 100_000, 100
_BASE_BITS, _BITS_FACTOR = 256, 4


class StopReason(enum.Enum):
    """Why a rewrite run stopped."""

    FIXED_POINT = "fixed point"  # no rule applies anywhere: the result is normal
    STEP_LIMIT = "step limit"  # the step budget ran out; the result is sound but not normal
    SIZE_LIMIT = "size limit"  # terms or constants grew past what the input justifies
    CYCLE = "cycle"  # rules led back to a term being rewritten; it was kept as it was


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """How much work one run may do before it stops and says so.

    Attributes:
        steps: rule applications.
        nodes: distinct terms a phase may visit (the input's and those rules build).
        bits: the bit length of any integer a rule application may build (a constant, a
            coefficient): a rule that squares a constant doubles it at every step.

    """

    steps: int
    nodes: int
    bits: int


def budget_for(term: Term, max_steps: int | None = None) -> Budget:
    """The budget :func:`rewrite` gives ``term``: relative to its size and its integers.

    Steps and visited terms are allowed a base plus a hundred per distinct node of the
    input (``max_steps``, when given, replaces the step allowance), and integers four
    times the bits of the input's widest integer (at least 256 bits). No shipped rule
    comes near these on any benchmark corpus; a rule set that grows the term stops at
    them with :attr:`StopReason.SIZE_LIMIT` or :attr:`StopReason.STEP_LIMIT`.
    """
    size, bits = _measure(term)
    steps = min(DEFAULT_MAX_STEPS, _BASE_STEPS + _STEPS_PER_NODE * size)
    return Budget(
        steps=steps if max_steps is None else max_steps,
        nodes=_BASE_NODES + _NODES_PER_NODE * size,
        bits=max(_BASE_BITS, _BITS_FACTOR * bits),
    )


def _int_bits(t: Term) -> int:
    """The bit length of the widest integer a node holds itself (not its operands')."""
    op = t.op
    if op is _CONST_OP:
        return int(t.arg).bit_length()
    if op is _ADD_OP:
        coefs, constant = t.arg
        widest: int = max(int(constant).bit_length(), *(int(c).bit_length() for c in coefs))
        return widest
    if op is _VAR_OP:
        lo: int | None = t.arg[1]
        hi: int | None = t.arg[2]
        return max(0 if lo is None else lo.bit_length(), 0 if hi is None else hi.bit_length())
    return 0


def _measure(term: Term) -> tuple[int, int]:
    """The number of distinct nodes of ``term`` and the bit length of its widest integer."""
    size = bits = 0
    for t in nodes(term):
        size += 1
        bits = max(bits, _int_bits(t))
    return size, bits


def _builds_wide_integer(out: Term, memo: dict[Term, Term], bits: int) -> bool:
    """Whether a node of ``out`` not seen before (built by the rule) holds a wider integer."""
    stack = [out]
    seen = set()
    while stack:
        t = stack.pop()
        if _int_bits(t) > bits:
            return True
        for c in t.args:
            if c not in memo and c not in seen:
                seen.add(c)
                stack.append(c)
    return False


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One rule application: ``before`` was rewritten to ``after`` by rule ``rule``."""

    rule: str
    before: Term
    after: Term


@dataclasses.dataclass(slots=True)
class RewriteResult:
    """The outcome of :func:`rewrite`.

    Attributes:
        term: the rewritten term, equal to the input at every point of its domain.
        reason: why rewriting stopped.
        steps: number of rule applications.
        counts: applications per rule name.
        trace: the applications in order (only when tracing was requested).
        given: the conditions the result was simplified under: it equals the input at
            every point of the box where all of them hold (none: everywhere).
        given_never_hold: the conditions contradict each other, so every result meets
            that promise; the term was then simplified without them.
        culprits: when rewriting stopped before a fixed point, the rules to blame, in
            order: for a cycle, the rules applied from the term that came back to its
            return; for a step or size limit, the most applied rules that together made
            at least half of the steps. Empty at a fixed point.
        unproven_rules: the rules applied that are not proven for their semantics
            (possible only with a rule set that allows them, see
            :class:`~quorem.ruleset.RuleSet`), in order of first application.

    """

    term: Term
    reason: StopReason
    steps: int
    counts: Counter[str]
    trace: list[Step]
    given: tuple[Term, ...] = ()
    given_never_hold: bool = False
    culprits: tuple[str, ...] = ()
    unproven_rules: tuple[str, ...] = ()

    @property
    def rules(self) -> list[str]:
        """Names of the rules applied, in order of first application."""
        return list(self.counts)


# Enum attribute access is slow: the stop reasons as module constants.
_FIXED_POINT, _STEP_LIMIT, _CYCLE = StopReason.FIXED_POINT, StopReason.STEP_LIMIT, StopReason.CYCLE
_SIZE_LIMIT = StopReason.SIZE_LIMIT

# Work-stack frames: (term, state, target). VISIT pushes the children; REDUCE rebuilds
# the node and tries the rules; LINK records memo[term] = memo[target] once the
# replacement `target` has itself been rewritten.
_VISIT, _REDUCE, _LINK = 0, 1, 2
_FEW = 8  # operands; a node with more (a long sum) is scanned with C-level iterators


def _run(  # noqa: PLR0915  (one loop, inlined for speed)
    term: Term,
    dispatch: dict[Op, Dispatch | None],
    budget: Budget,
    counts: dict[str, int],
    steps: list[Step] | None,
    *,
    n_steps: int = 0,
    batch: dict[str, BatchRule] | None = None,
    cycles: list[tuple[Term, int]] | None = None,
    chains: ChainRules | None = None,
) -> tuple[Term, StopReason, int]:
    """The work loop: one frame at a time, with VISIT and REDUCE inlined for speed.

    A leaf (no operands; no rule is indexed under CONST or VAR) is its own normal form at
    once, even when met as an operand, and a node whose operands are all rewritten already
    is reduced without a round trip through the stack: the rules are applied in the same
    order as when every frame goes through the stack.

    Applications are added to ``counts`` (and ``steps``, when tracing); ``n_steps`` is the
    budget already spent, so that phases share ``budget.steps``. A rule application
    that would build an integer wider than ``budget.bits``, or one made when the phase has
    visited more than ``budget.nodes`` terms, is not taken and ends the rewriting (the
    rest is only rebuilt). Returns the result, why the run stopped, and the steps spent.

    ``batch``: the local sum rules (:mod:`quorem.batch`); when the dispatcher
    applies one to a sum of more than ``BATCH_ATOMS`` atoms, all its disjoint matches
    there are applied at once, as one step.

    ``cycles``: when given (with ``steps``), each cycle found is added as the term that
    came back and the number of steps traced when it did.

    ``chains``: the ``and``/``or`` rules (:mod:`quorem.junction`); when given, an
    ``and``/``or`` chain of more than ``LONG_CHAIN`` clauses is one node whose operands
    are its clauses (its tails are never rewritten on their own), rebuilt canonically,
    and its pair rules apply to every disjoint pair of clauses at once, as one step per
    pair.
    """
    max_steps, max_nodes, max_bits = budget.steps, budget.nodes, budget.bits
    memo: dict[Term, Term] = {}
    active: set[Term] = set()
    stack: list[tuple[Term, int, Term | None]] = []
    reason = _FIXED_POINT
    in_memo, memo_get = memo.__contains__, memo.get
    push, pop = stack.append, stack.pop
    push((term, _VISIT, None))
    while stack:
        t, state, target = pop()
        if state == _LINK:
            assert target is not None
            memo[t] = memo[target]
            active.discard(t)
            continue
        if t in memo:
            continue
        args = t.args
        chain = (
            chains is not None
            and (t.op is _AND_OP or t.op is _OR_OP)
            and args[1].op is t.op
            and is_long_chain(t)
        )
        if chain:
            args = tuple(junction_clauses(t))
        if state == _VISIT:
            if t in active:
                # A rewrite led back to a term being rewritten: keep it, report the cycle.
                reason = _CYCLE
                memo[t] = t
                if cycles is not None and steps is not None:
                    cycles.append((t, len(steps)))
                continue
            if not args and dispatch[t.op] is None:
                memo[t] = t
                continue
            # Operands first: the REDUCE frame goes under the first one to visit. ``t``
            # is active (cycle detection) from here until it is rewritten; while no
            # frame is pushed nothing can look, so it is added only when one is.
            waiting = False
            changed = False  # an operand already rewritten to another term
            if len(args) <= _FEW:
                for c in args:
                    m = memo_get(c)
                    if m is None:
                        if c.args or dispatch[c.op] is not None:
                            if not waiting:
                                waiting = True
                                active.add(t)
                                push((t, _REDUCE, None))
                            push((c, _VISIT, None))
                        else:
                            memo[c] = c  # a leaf: its own normal form
                    elif m is not c:
                        changed = True
            else:
                changed = True  # (not tracked: the check below decides)
                for c in filterfalse(in_memo, args):
                    if c.args or dispatch[c.op] is not None:
                        if not waiting:
                            waiting = True
                            active.add(t)
                            push((t, _REDUCE, None))
                        push((c, _VISIT, None))
                    else:
                        memo[c] = c
            if waiting:
                continue
        else:
            changed = True  # operands were rewritten since the visit: check them
        # REDUCE: rebuild from the rewritten operands, then try the rules.
        u = t
        if args and changed:
            new_args: tuple[Term, ...]
            if len(args) == 2:  # most operators
                a, b = args
                new_args = (memo[a], memo[b])
            elif len(args) <= _FEW:
                new_args = tuple([memo[c] for c in args])
            else:
                new_args = tuple(map(memo.__getitem__, args))
            if new_args != args:  # Term has no __eq__: this compares identities
                try:
                    u = (
                        (conjunction if t.op is _AND_OP else disjunction)(new_args)
                        if chain
                        else rebuild(t, new_args)
                    )
                except DivisionByZeroError:
                    # A divisor simplified to the constant 0: the node is undefined
                    # everywhere. Keep it as it was rather than build a division by zero.
                    memo[t] = t
                    active.discard(t)
                    continue
                if not u.fits64 and t.fits64:
                    # Each operand's rewrite kept it in int64, but the canonical form of
                    # the parent can scale or merge it (8*(x - 2**62) is 8*x - 2**65, a
                    # constant -2**63 absorbs a folded -1): take only the rewrites that
                    # keep the parent in int64.
                    u = _rebuild_fitting(t, args, new_args)
                    if u in memo:
                        memo[t] = memo[u]
                        active.discard(t)
                        continue
                if u in memo:
                    memo[t] = memo[u]
                    active.discard(t)
                    continue
        rules = dispatch[u.op]
        many = 1  # applications the step makes (a long chain's pairs: one each)
        pairs: tuple[CompiledRule | PairRule, ...] = ()
        if chains is not None and (u.op is _AND_OP or u.op is _OR_OP) and is_long_chain(u):
            pairs = chains[u.op]
        if rules is not None:
            if n_steps < max_steps:
                found: tuple[Term, str] | None
                if pairs:
                    got = apply_pair_rules(u, pairs, _JUNCTION_BUILDERS[u.op])
                    found = None if got is None else (got[0], got[1])
                    many = 1 if got is None else got[2]
                else:
                    found = rules(u)
                # --- batch hook (issue 14): long sums, local rules; see engine/batch.py
                if found is not None and batch and u.op is _ADD_OP and len(u.args) > BATCH_ATOMS:
                    found = batch_hook(batch, u, found)
                # ---
                if found is not None and not term_fits_int64(found[0]) and term_fits_int64(u):
                    # The rules' int64 proofs cover their templates; building canonical
                    # terms can scale a matched sum (-(a - 2*b) is 2*b - a). Never trade
                    # an input that provably fits in int64 for a result that may not. (The
                    # result is asked first: it usually fits, and is smaller than the input.)
                    found = None
                if found is not None and (
                    len(memo) > max_nodes or _builds_wide_integer(found[0], memo, max_bits)
                ):
                    # The rules grow the term past what the input justifies: stop here
                    # (a sound result) rather than run the budget out on ever larger terms.
                    found = None
                    reason = _SIZE_LIMIT
                    max_steps = n_steps
                if found is not None:
                    out, name = found
                    n_steps += many
                    counts[name] = counts.get(name, 0) + many
                    if steps is not None:
                        steps.append(Step(name, u, out))
                    done = memo_get(out)
                    if done is None and not out.args and dispatch[out.op] is None:
                        done = memo[out] = out  # a leaf (never active): its own normal form
                    if done is not None:
                        # The replacement needs no work: what its visit and the links
                        # below would do, done at once.
                        memo[u] = done
                        active.discard(u)
                        if u is not t:
                            memo[t] = done
                            active.discard(t)
                        continue
                    active.add(t)
                    if u is not t:
                        active.add(u)
                        push((t, _LINK, u))
                    push((u, _LINK, out))
                    push((out, _VISIT, None))
                    continue
            elif reason is _FIXED_POINT and (
                apply_pair_rules(u, pairs, _JUNCTION_BUILDERS[u.op]) if pairs else rules(u)
            ):
                # Out of budget: only a rule that would still apply makes the result
                # non-normal.
                reason = _STEP_LIMIT
        memo[u] = u
        memo[t] = u
        active.discard(t)
    return memo[term], reason, n_steps


_PAUSE_GC_NODES = 5_000  # distinct input nodes from which a run pauses the collector


@contextlib.contextmanager
def _collector_paused(budget: Budget) -> Iterator[None]:
    """The cyclic garbage collector paused for a run over a large term.

    A long sum or chain makes many objects per step, none in a reference cycle, and
    the collector would scan the live ones (every interned term) again and again: it
    made long sums superlinear (benchmarks/README.md, issue 20). Pausing it frees
    nothing later than it would be freed anyway, except cyclic garbage, which the next
    collection after the run takes. The collector is left as it was found.
    """
    if budget.nodes < _BASE_NODES + _NODES_PER_NODE * _PAUSE_GC_NODES or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _zero_everywhere(exc: DivisionByZeroError, t: Term) -> DivisionByZeroError:
    """The error for the division ``t`` whose divisor was proven 0 at every point."""
    from .printer import brief  # noqa: PLC0415  (printer imports rewrite's deps)

    return DivisionByZeroError(
        f"{exc}: its divisor {brief(t.args[1])} is 0 at every point of the variables' ranges"
    )


def _chains(dispatch: dict[Op, Dispatch | None]) -> ChainRules | None:
    """The junction rules of a rule set's dispatcher table, for long chains (or None)."""
    by_op = getattr(dispatch, "by_op", None)
    return None if by_op is None else chain_rules(by_op, dispatch)


_GREEDY_ARGS = 16  # operands; with more, a parent that leaves int64 keeps all of its own


def _rebuild_fitting(t: Term, args: tuple[Term, ...], new_args: tuple[Term, ...]) -> Term:
    """``t`` rebuilt from as many rewritten operands as keep it in int64 (``t.fits64``).

    Operands are taken left to right, each only if the rebuilt node still fits; a node
    with many operands (a long sum) keeps its own operands rather than pay a rebuild
    per operand. The result fits in int64 whenever ``t`` does (``t`` itself at worst).
    """
    if len(args) > _GREEDY_ARGS:
        return t
    chosen = list(args)
    best = t
    for i, (old, new) in enumerate(zip(args, new_args, strict=True)):
        if new is old:
            continue
        chosen[i] = new
        try:
            candidate = rebuild(t, chosen)
        except TermError:
            candidate = None
        if candidate is not None and candidate.fits64:
            best = candidate
        else:
            chosen[i] = old
    return best


def rewrite(
    term: Term,
    ruleset: RuleSet,
    *,
    max_steps: int | None = None,
    trace: bool = False,
) -> RewriteResult:
    """Rewrite ``term`` with ``ruleset`` bottom-up to a fixed point.

    Every node is first rebuilt from its rewritten children, then the rules indexed
    under its operator are tried in priority order; the first that applies replaces the
    node, and the replacement is rewritten in turn. Never loops: at most ``max_steps``
    rule applications are made (default: relative to the input, see :func:`budget_for`),
    rules that grow terms or integers past what the input justifies are stopped, and a
    rewrite that leads back to a term being rewritten stops there. The result says which
    of these ended the run.

    Rules marked ``phase: early`` first run alone to a fixed point. They are identities
    that only remove divisions (recombining ``(x // n)*n + x % n``); run before the rules
    that rewrite ``x % n`` or ``x // n`` into another numerator each, they still find the
    two halves with the same ``x``.
    """
    return _rewrite(term, ruleset, max_steps=max_steps, trace=trace, strict=True)


def _rewrite(
    term: Term, ruleset: RuleSet, *, max_steps: int | None, trace: bool, strict: bool
) -> RewriteResult:
    """:func:`rewrite`; ``strict``: over the whole box (see :func:`_context_pass`)."""
    counts: dict[str, int] = {}
    steps: list[Step] | None = [] if trace else None
    cycles: list[tuple[Term, int]] = []
    budget = budget_for(term, max_steps)
    with _collector_paused(budget):
        out, reason, n_steps = _phases(
            term, ruleset, budget, counts, steps, cycles=cycles, strict=strict
        )
    culprits: tuple[str, ...] = ()
    if reason is _CYCLE:
        seen = steps
        if seen is None:
            # Rare (the shipped rules never cycle): run again traced to see the cycle.
            seen = []
            _phases(term, ruleset, budget, {}, seen, cycles=cycles, strict=strict)
        culprits = _cycle_rules(seen, cycles)
    elif reason is not _FIXED_POINT:
        culprits = _busiest_rules(counts, n_steps)
    unproven = unproven_applied(ruleset, counts)
    return RewriteResult(
        out,
        reason,
        n_steps,
        Counter(counts),
        steps or [],
        culprits=culprits,
        unproven_rules=unproven,
    )


def unproven_applied(ruleset: RuleSet, counts: Iterable[str]) -> tuple[str, ...]:
    """The rules of ``counts`` (names, in order) that ``ruleset`` holds unproven."""
    names = ruleset.unproven_names
    return tuple(n for n in counts if n in names) if names else ()


# The unproven rules applied within track_unproven() blocks, per thread and task.
_UNPROVEN_SEEN: ContextVar[dict[str, None] | None] = ContextVar("unproven_seen", default=None)


@contextlib.contextmanager
def track_unproven() -> Iterator[dict[str, None]]:
    """Within the block, every unproven rule any rewrite applies is added to the dict.

    In order of first application (the dict's keys). For passes that return terms
    only (indexing maps, emission), so that each result they touch can say so.
    """
    seen: dict[str, None] = {}
    outer = _UNPROVEN_SEEN.get()
    token = _UNPROVEN_SEEN.set(seen)
    try:
        yield seen
    finally:
        _UNPROVEN_SEEN.reset(token)
        if outer is not None:
            outer.update(seen)


def _cycle_rules(steps: list[Step], cycles: list[tuple[Term, int]]) -> tuple[str, ...]:
    """The rules of the first cycle: applied from the returning term's rewrite to its return.

    A term is rewritten from its last step as ``before`` until it is done; when a rewrite
    leads back to it, the steps since that one made the cycle.
    """
    if not cycles:
        return ()
    back, end = cycles[0]
    start = end - 1
    for i in range(end - 1, -1, -1):
        if steps[i].before is back:
            start = i
            break
    return tuple(dict.fromkeys(step.rule for step in steps[max(start, 0) : end]))


def _busiest_rules(counts: dict[str, int], n_steps: int) -> tuple[str, ...]:
    """The most applied rules that together made at least half of ``n_steps``."""
    out: list[str] = []
    total = 0
    for name, n in sorted(counts.items(), key=lambda item: -item[1]):
        if 2 * total >= n_steps:
            break
        out.append(name)
        total += n
    return tuple(out)


def rewrite_given(
    term: Term,
    ruleset: RuleSet,
    given: Sequence[Term],
    *,
    max_steps: int | None = None,
    trace: bool = False,
) -> RewriteResult:
    """:func:`rewrite` knowing that every condition of ``given`` holds (is non-zero).

    The variables' ranges are narrowed by the conditions (linear bounds, divisions by
    constants: :func:`quorem.context.narrow`, never wider than they were), the
    term is rewritten with the narrowed variables, and the variables are given their own
    ranges back. The result equals ``term`` at every point of the box where all of
    ``given`` hold. Outside them it may differ, but it is defined and fits int64
    wherever ``term`` is and does (a gated index is computed before its gate masks it);
    a result that could not promise that is not taken (the term is then rewritten
    without the conditions).
    If the conditions cannot all hold, ``given_never_hold`` is set and the term is
    rewritten without them.
    """
    given = tuple(given)
    plain = rewrite(term, ruleset, max_steps=max_steps, trace=trace)
    if not given:
        return plain
    known = knowledge(given, {})
    if known is None:
        return dataclasses.replace(plain, given=given, given_never_hold=True)
    narrowed, back = in_context(term, known)
    if not back:
        return dataclasses.replace(plain, given=given)
    result = _rewrite(narrowed, ruleset, max_steps=max_steps, trace=trace, strict=False)
    restored = restore_variables(result.term, back)
    if not safe_outside(restored, term):
        return dataclasses.replace(plain, given=given)
    return dataclasses.replace(result, term=restored, given=given)


def rewrite_term(term: Term, ruleset: RuleSet, *, max_steps: int | None = None) -> Term:
    """``rewrite(term, ruleset, max_steps=max_steps).term``, without the report."""
    budget = budget_for(term, max_steps)
    with _collector_paused(budget):
        return _phases(term, ruleset, budget, {}, None, strict=True)[0]


def rewrite_stop(
    term: Term, ruleset: RuleSet, *, max_steps: int | None = None
) -> tuple[Term, StopReason]:
    """``rewrite(term, ruleset, max_steps=max_steps)``: its term and stop reason only."""
    budget = budget_for(term, max_steps)
    with _collector_paused(budget):
        result, reason, _ = _phases(term, ruleset, budget, {}, None, strict=True)
    return result, reason


def _phases(
    term: Term,
    ruleset: RuleSet,
    budget: Budget,
    counts: dict[str, int],
    steps: list[Step] | None,
    *,
    cycles: list[tuple[Term, int]] | None = None,
    strict: bool = False,
) -> tuple[Term, StopReason, int]:
    """The early phase, then all rules (see :func:`rewrite`; ``strict``: :func:`_context_pass`).

    Raises UnprovenRuleError first when a rule the rule set refuses is in use for
    ``term`` (:meth:`~quorem.ruleset.RuleSet.check_term`).
    """
    if ruleset.refused:
        ruleset.check_term(term)
    if point_variables_built():
        term = pin_point_variables(term)
    early = ruleset.early_dispatchers()
    reason = _FIXED_POINT
    n_steps = 0
    if early is not None:
        batch = batch_rules(ruleset, early=True)
        term, reason, n_steps = _run(
            term,
            early,
            budget,
            counts,
            steps,
            batch=batch,
            cycles=cycles,
            chains=_chains(early),
        )
    if reason is not _STEP_LIMIT and reason is not _SIZE_LIMIT:
        dispatch = ruleset.dispatchers()
        batch = batch_rules(ruleset, early=False)
        chains = _chains(dispatch)
        term, last, n_steps = _run(
            term,
            dispatch,
            budget,
            counts,
            steps,
            n_steps=n_steps,
            batch=batch,
            cycles=cycles,
            chains=chains,
        )
        if last is not _FIXED_POINT:
            reason = last
        if reason is _FIXED_POINT and logic_built():
            in_context, spent = _context_pass(
                term, ruleset, budget, counts, steps, cycles=cycles, strict=strict
            )
            n_steps += spent  # the clauses' rewrites are steps of this run too
            if in_context is not term:
                term, reason, more = _run(
                    in_context,
                    dispatch,
                    budget,
                    counts,
                    steps,
                    batch=batch,
                    cycles=cycles,
                    chains=chains,
                )
                n_steps += more
        while reason is _FIXED_POINT and point_variables_built():
            # A variable of one value is pinned only where the term stays defined: in
            # ``a + a // a`` with ``a == 0`` not before ``a // a`` is rewritten to 1. Each
            # round pins at least one more variable (rules make none), so this ends.
            pinned = pin_point_variables(term)
            if pinned is term:
                break
            term, reason, more = _run(
                pinned,
                dispatch,
                budget,
                counts,
                steps,
                batch=batch,
                cycles=cycles,
                chains=chains,
            )
            n_steps += more
    if ruleset.unproven_names:
        seen = _UNPROVEN_SEEN.get()
        if seen is not None:  # inside track_unproven(): say which unproven rules applied
            seen.update(dict.fromkeys(unproven_applied(ruleset, counts)))
    return term, reason, n_steps


_JUNCTION_CLAUSES = JUNCTION_CLAUSES  # longer chains are left as the rules leave them
_AND_OP, _OR_OP = Op.AND, Op.OR
_JUNCTION_BUILDERS = {_AND_OP: conjunction, _OR_OP: disjunction}


def _context_pass(
    term: Term,
    ruleset: RuleSet,
    budget: Budget,
    counts: dict[str, int],
    steps: list[Step] | None,
    *,
    cycles: list[tuple[Term, int]] | None = None,
    strict: bool = False,
) -> tuple[Term, int]:
    """Each ``and``/``or`` node's clauses simplified in their context, bottom-up.

    A clause of a conjunction matters only where the other clauses hold, and a clause of
    a disjunction only where the others fail: the clause is rewritten with its variables'
    ranges narrowed by that context (:mod:`quorem.context`), and the conjunction
    keeps its value at every point. Contexts that cannot hold decide the junction (a
    conjunction whose other clauses contradict each other is 0). A clause's rewrite is
    kept only if it is defined and fits int64 with the variables' full ranges wherever
    the clause is and does (:func:`quorem.context.safe_outside`), since the clause
    is still computed where the context fails. Also returns the rule applications made.

    A divisor the pass decides to be 0 (``x // (w < 0 and 0 < w)``) leaves its division
    as it was under a context (a clause's rewrite: undefined only where the context
    holds), and over the term's whole box (``strict``) raises
    :class:`DivisionByZeroError`, the error the parser raises for ``x // 0``: the input
    has no value at any point. (A divisor the rules fold to 0, ``x // (i % 1)``, is
    left in place by the rewrite loop, as it always was.)
    """
    spent = 0
    memo: dict[Term, Term] = {}
    tails = _chain_tails(term)
    for t in postorder(term):
        if not t.args:
            memo[t] = t
            continue
        new_args = tuple(memo[a] for a in t.args)
        new = t
        if any(a is not b for a, b in zip(new_args, t.args, strict=True)):
            try:
                new = rebuild(t, new_args)
            except DivisionByZeroError as exc:
                if strict:
                    raise _zero_everywhere(exc, t) from None
                memo[t] = t
                continue
            if t.fits64 and not new.fits64:
                new = _rebuild_fitting(t, t.args, new_args)
        if (new.op is _AND_OP or new.op is _OR_OP) and t not in tails:
            new, more = _junction_in_context(new, ruleset, budget, counts, steps, cycles=cycles)
            spent += more
        memo[t] = new
    return memo[term], spent


def _chain_tails(term: Term) -> set[Term]:
    """The junction nodes that occur only as the rest of a longer chain of their operator.

    The pass over a chain's head sees every clause, so passing over its tails too
    (each a shorter chain) would only repeat the work, quadratically in the clauses.
    """
    tails: set[Term] = set()
    elsewhere: set[Term] = {term}
    for u in nodes(term):
        for i, a in enumerate(u.args):
            if i == 1 and a.op is u.op and (u.op is _AND_OP or u.op is _OR_OP):
                tails.add(a)
            else:
                elsewhere.add(a)
    return tails - elsewhere


def _junction_in_context(
    t: Term,
    ruleset: RuleSet,
    budget: Budget,
    counts: dict[str, int],
    steps: list[Step] | None,
    *,
    cycles: list[tuple[Term, int]] | None = None,
) -> tuple[Term, int]:
    conj = t.op is _AND_OP
    clauses = junction_clauses(t)
    spent = 0
    # The clauses with the most divisions first: where two clauses imply each other
    # (``x < 8`` and ``x // 8 == 0`` on x >= 0), the one dropped is the costlier.
    clauses.sort(key=count_divmod, reverse=True)
    for _ in range(2):
        changed = False
        contexts = _Contexts(clauses, conj)
        for i, clause in enumerate(clauses):
            known = knowledge(contexts.of(i), {})
            if known is None:  # the others cannot all hold (conj) / all fail (disj)
                return const(0 if conj else 1), spent
            narrowed, back = in_context(clause, known)
            if not back and narrowed is clause:
                continue
            result, _, more = _phases(narrowed, ruleset, budget, counts, steps, cycles=cycles)
            spent += more
            result = restore_variables(result, back)
            if result is not clause and safe_outside(result, clause):
                clauses[i] = result
                contexts.replace(i, result)
                changed = True
        if not changed:
            break
    return (conjunction if conj else disjunction)(clauses), spent


# What a context clause can say (quorem.context reads nothing else).
_INFORMATIVE = frozenset({Op.LT, Op.LE, Op.EQ, Op.NE, Op.AND})


def _informs(c: Term) -> bool:
    return c.op in _INFORMATIVE or (c.op is Op.CONST and c.arg == 0)


class _Contexts:
    """The context of each clause of a junction: what the other clauses say.

    A clause of a conjunction is simplified knowing the others hold; of a disjunction,
    knowing they fail (their negations hold). Only the conditions
    :func:`quorem.context.knowledge` reads are kept (comparisons, conjunctions, a
    constant 0). Up to :data:`JUNCTION_CLAUSES` of them, a clause's context is all the
    others, as it always was; in a longer junction it is the others linked to the clause
    by shared variables, nearest first (at most ``_ROUNDS`` links away, at most
    ``JUNCTION_CLAUSES`` of them): the only ones the propagation can carry a bound from
    in its rounds, found through an index instead of reading the whole junction per
    clause (quadratic). Fewer conditions only ever narrow less: sound either way.
    """

    def __init__(self, clauses: list[Term], conj: bool) -> None:
        self.conj = conj
        self.conditions = [c if conj else logical_not(c) for c in clauses]
        self.informs = [_informs(c) for c in self.conditions]
        self.whole = len(clauses) <= _JUNCTION_CLAUSES
        self.names: list[set[str]] = []
        # Only conditions that say something are indexed: a bound travels through them
        # alone (the others add nothing to the propagation, so link nothing).
        self.holding: dict[str, list[int]] = {}
        if not self.whole:
            for i, c in enumerate(clauses):
                names = free_names(c)
                self.names.append(names)
                if self.informs[i]:
                    for n in names:
                        self.holding.setdefault(n, []).append(i)

    def replace(self, i: int, clause: Term) -> None:
        """Clause ``i`` became ``clause`` (its variables are among the old one's)."""
        cond = clause if self.conj else logical_not(clause)
        self.conditions[i] = cond
        self.informs[i] = _informs(cond)

    def of(self, i: int) -> list[Term]:
        """The conditions clause ``i`` is simplified under."""
        conds, informs = self.conditions, self.informs
        if self.whole:
            return [c for j, c in enumerate(conds) if j != i and informs[j]]
        seen = {i}
        names_seen: set[str] = set()
        frontier = [i]
        out: list[Term] = []
        for _ in range(_CONTEXT_LINKS):
            nxt: list[int] = []
            for k in frontier:
                for n in self.names[k]:
                    if n in names_seen:
                        continue
                    names_seen.add(n)
                    for j in self.holding.get(n, ()):
                        if j in seen or not informs[j]:
                            continue
                        seen.add(j)
                        nxt.append(j)
                        out.append(conds[j])
                        if len(out) >= _JUNCTION_CLAUSES:
                            return out
            if not nxt:
                break
            frontier = nxt
        return out


_CONTEXT_LINKS = 4  # shared-variable links a long junction's context reaches (the rounds)
