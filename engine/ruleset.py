"""A rule set: rules instantiated per semantics, indexed by the operator they match."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from .compiler.cache import rule_cache
from .compiler.dispatch import (
    Applier,
    Dispatch,
    DispatchEntry,
    RuleCode,
    compile_rule,
    sum_needs,
)
from .compiler.prebuilt import dispatcher
from .errors import RuleError, UnprovenRule, UnprovenRuleError
from .interpret import Undetermined, evaluate_expr, evaluate_to_term
from .matcher import Bindings, match
from .matcher import child_cost as _child_cost
from .ops import COMMUTATIVE, SEMANTICS_OF, Op, Semantics
from .proofrecord import PROVEN, proofs_from_record, semantics_key
from .rule import (
    Name,
    Pattern,
    PConst,
    PLit,
    POp,
    PSum,
    PTerm,
    Rule,
    Unary,
    expr_names,
    pattern_op,
)
from .rulefile import check_unique_names, load_rule_files, parse_rules, raise_all
from .term import Term
from .walk import nodes

__all__ = [
    "CompiledRule",
    "RuleSet",
    "constraint_ruleset",
    "constraint_ruleset_for",
    "default_ruleset",
]


# A shape is a cheap necessary condition for a match: the op a node must have (None: any
# term; CONST_SHAPE: a literal) and, for operator nodes, the shapes of its operands.
Shape = tuple[Op | None, tuple["Shape", ...]]
CONST_SHAPE: Shape = (Op.CONST, ())
ANY_SHAPE: Shape = (None, ())


def _shape(p: Pattern, sem: Semantics | None) -> Shape:
    if isinstance(p, PConst | PLit):
        return CONST_SHAPE
    if isinstance(p, POp):
        op = pattern_op(p.op, sem)
        kids = tuple(_shape(c, sem) for c in p.children)
        if op in COMMUTATIVE and kids[0] != kids[1]:
            return (op, ())  # either operand order may match: check the op only
        return (op, kids)
    return ANY_SHAPE


def fits(shape: Shape, t: Term) -> bool:
    """Whether ``t`` has the operators ``shape`` requires (a necessary match condition)."""
    op, kids = shape
    if op is not None and t.op is not op:
        return False
    if kids:
        if len(kids) != len(t.args):
            return False
        for k, a in zip(kids, t.args, strict=True):
            if k[0] is not None and not fits(k, a):
                return False
    return True


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule instantiated for one semantics (``None`` for rules without division).

    ``code`` is the rule compiled to a specialised function (:mod:`quorem.compiler.dispatch`),
    or None to run it on the reference interpreter; both give the same results. ``fn`` is
    what :meth:`apply` calls: the compiled function, or :meth:`reference_apply`.
    """

    rule: Rule
    semantics: Semantics | None
    root: Op
    shape: Shape = ANY_SHAPE
    code: RuleCode | None = None
    fn: Applier = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fn = self.reference_apply if self.code is None else self.code.fn
        object.__setattr__(self, "fn", fn)

    @property
    def name(self) -> str:
        """The rule's name."""
        return self.rule.name

    def apply(self, t: Term) -> Term | None:
        """The rewrite of ``t`` by this rule, or None if no match satisfies the guard."""
        return self.fn(t)

    def reference_apply(self, t: Term) -> Term | None:
        """:meth:`apply` by the reference matcher and interpreter (the compiled code's spec)."""
        fired = self.reference_fire(t)
        return None if fired is None else fired[1]

    def reference_fire(self, t: Term) -> tuple[Bindings, Term] | None:
        """The bindings (lets included) and the rewrite of the match that fires, or None."""
        if not fits(self.shape, t):
            return None
        rule = self.rule
        sem = self.semantics
        for found in match(rule.pattern, t, {}, sem):
            try:
                env = dict(found) if rule.lets else found
                for name, e in rule.lets:
                    value = evaluate_expr(e, env, sem)
                    if not isinstance(value, int | Term) or isinstance(value, bool):
                        raise Undetermined
                    env[name] = value
                if rule.guard is not None and evaluate_expr(rule.guard, env, sem) is not True:
                    continue
                out = evaluate_to_term(rule.rewrite, env, sem)
            except Undetermined:
                continue
            if out is not t:
                return env, out
        return None

    def matches(self, t: Term) -> list[Bindings]:
        """Every match of the pattern in ``t`` (guard not checked), for tools and tests."""
        return list(match(self.rule.pattern, t, {}, self.semantics))


def _root_op(p: Pattern, sem: Semantics | None) -> Op:
    if isinstance(p, POp):
        return pattern_op(p.op, sem)
    assert isinstance(p, PSum)
    return Op.ADD


def _check_binding_order(rule: Rule) -> None:
    """Coefficients like ``-N`` are compared, not solved: their names must be bound first.

    Simulates the matcher's order (constant children first, addends left to right).
    """
    bound: set[str] = set()

    def visit(p: Pattern) -> None:
        if isinstance(p, PTerm | PConst):
            bound.add(p.name)
        elif isinstance(p, POp):
            order = sorted(
                p.children,
                key=_child_cost,
            )
            for c in order:
                visit(c)
        elif isinstance(p, PSum):
            for e in [a.coef for a in p.addends] + ([p.const] if p.const is not None else []):
                names = expr_names(e)
                simple = isinstance(e, Name) or (
                    isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, Name)
                )
                if not simple and not names <= bound:
                    missing = ", ".join(sorted(names - bound))
                    raise RuleError(
                        f"rule {rule.name!r}: coefficient uses {missing} before it is bound",
                        rule.line,
                        1,
                        rule.file,
                    )
                bound.update(names)
            for a in p.addends:
                visit(a.pattern)
            if p.rest:
                bound.add(p.rest)
            if p.seq:
                bound.update((p.seq.coef, p.seq.term))

    visit(rule.pattern)


def instance_problem(rule: Rule, semantics: Semantics | None) -> UnprovenRule | None:
    """Why ``rule`` is not proven for ``semantics``, or None when its proof record says it is."""
    proof = rule.proof
    if proof is not None and proof.proves(semantics):
        return None  # the common case, first: no message is built
    in_file = rule.file not in ("", "<rules>") and not rule.file.startswith("<")
    command = (
        f"quorem verify {rule.file}"
        if in_file
        else "write the rules to FILE and run quorem verify FILE (then load FILE, or "
        "pass proofs=FILE.proof.json)"
    )
    if proof is None:
        status, why = "unproven", "no proof record was read for it"
    else:
        status, why = proof.status(semantics), proof.why(semantics)
    if status == PROVEN:
        return None
    return UnprovenRule(rule.name, rule.location, semantics_key(semantics), status, why, command)


def _has_division(p: Pattern) -> bool:
    """Whether pattern ``p`` holds a ``//`` or ``%`` of the rule's semantics."""
    if isinstance(p, POp):
        return p.op in ("div", "mod") or any(_has_division(c) for c in p.children)
    if isinstance(p, PSum):
        return any(_has_division(a.pattern) for a in p.addends)
    return False


def dispatch_entries(rules: Sequence[CompiledRule]) -> list[DispatchEntry]:
    """What :func:`~quorem.compiler.dispatch.compile_dispatch` is given for ``rules``."""
    return [
        DispatchEntry(
            c.fn,
            c.name,
            sum_needs(c.rule, c.semantics),
            c.rule if c.code is not None else None,
            c.semantics,
        )
        for c in rules
    ]


class _Dispatchers(dict[Op, Dispatch | None]):
    """Per operator, its dispatcher (see :meth:`RuleSet.dispatchers`), made on first use."""

    def __init__(self, by_op: dict[Op, tuple[CompiledRule, ...]]) -> None:
        super().__init__()
        self.by_op = by_op

    def __missing__(self, op: Op) -> Dispatch | None:
        # Threads may meet a missing operator at once: one compiles it, the others wait
        # and take its dispatcher (the rewriter reads this dict without a lock; a
        # present key never calls Python code).
        with _LOCK:
            if op in self:
                return self[op]
            return self._compile(op)

    def _compile(self, op: Op) -> Dispatch | None:
        entries = dispatch_entries(self.by_op[op])
        # The build's generated dispatcher when it has this one (quorem.compiler.prebuilt).
        dispatch = dispatcher(op, entries) if entries else None
        self[op] = dispatch
        return dispatch


class RuleSet:
    """Rules in priority order, each instantiated for the semantics it is stated for.

    Each instance is compiled to a specialised function unless ``compiled`` is False (then
    every rule runs on the reference matcher and interpreter, e.g. to compare the two).

    ``rules_for(op)`` gives, in priority order, the instances that can match a node
    whose operator is ``op``: the rewriter never tries the others.
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        compiled: bool = True,
        reuse: RuleSet | None = None,
        allow_unproven: bool = False,
    ) -> None:
        """Check and compile ``rules``.

        ``reuse``: a rule set whose instances of the very same rule objects are taken
        as they are instead of compiled again (compiling is most of the start-up
        time; an instance does not depend on the set it is in).

        Only rule instances proven for their semantics (:attr:`Rule.proof`, from the
        rules file's proof record) are applied. The others are listed in
        :attr:`unproven`; unless ``allow_unproven``, they are left out of the rewriter
        (:attr:`refused`), and rewriting a term they could apply to raises
        :class:`~quorem.errors.UnprovenRuleError` naming them (see
        :meth:`check_term`). With ``allow_unproven`` they are applied, and each result
        they touch says so (``RewriteResult.unproven_rules``).
        """
        check_unique_names(rules)
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.allow_unproven = allow_unproven
        self.unproven: tuple[UnprovenRule, ...] = ()
        self.refused: tuple[UnprovenRule, ...] = ()
        self.unproven_names: frozenset[str] = frozenset()
        unproven: list[UnprovenRule] = []
        # The semantics under which a refused instance can match a term without a
        # division of its own semantics (its pattern holds no ``//`` or ``%``).
        self._refused_anywhere: set[Semantics | None] = set()
        self.compiled: list[CompiledRule] = []
        by_op: dict[Op, list[CompiledRule]] = {op: [] for op in Op}
        self.is_compiled: bool = compiled
        done: dict[int, list[CompiledRule]] = {}
        if reuse is not None and reuse.is_compiled == compiled:
            for c in reuse.compiled:
                done.setdefault(id(c.rule), []).append(c)
        errors: list[RuleError] = []
        for rule in self.rules:
            try:
                known = done.get(id(rule))
                # id() alone could name a rule since freed: the instance holds its rule.
                if known is not None and known[0].rule is rule:
                    instances = known
                else:
                    instances = self._instances(rule, compiled=compiled)
            except RuleError as exc:
                errors.append(exc)  # every rule is checked: all problems are reported
                continue
            except RecursionError:
                # Only reachable when the caller raised the recursion limit past what
                # parse_rules checks with: the rule is still too deep to compile.
                errors.append(
                    RuleError(
                        f"rule {rule.name!r} is nested too deeply to compile",
                        rule.line,
                        1,
                        rule.file,
                    )
                )
                continue
            for c in self._admitted(instances, unproven, allow_unproven):
                self.compiled.append(c)
                by_op[c.root].append(c)
        raise_all(errors)
        self.unproven = tuple(unproven)
        if allow_unproven:
            # The rules a result may have been rewritten by without a proof (a rule
            # proven for one semantics and not another counts: reports err on the safe side).
            self.unproven_names = frozenset(u.name for u in unproven)
        else:
            self.refused = self.unproven
        if compiled:
            rule_cache().save()  # what was compiled here, for the next process
        self._by_op = {op: tuple(rs) for op, rs in by_op.items()}
        self._dispatch = _Dispatchers(self._by_op)
        early = {op: tuple(c for c in rs if c.rule.early) for op, rs in self._by_op.items()}
        has_early = any(early.values())
        self._early_dispatch = _Dispatchers(early) if has_early else None

    def _admitted(
        self, instances: list[CompiledRule], unproven: list[UnprovenRule], allow: bool
    ) -> list[CompiledRule]:
        """The instances the rewriter may apply: proven ones, and the others if ``allow``.

        Each instance not proven is added to ``unproven``.
        """
        out = []
        for c in instances:
            problem = instance_problem(c.rule, c.semantics)
            if problem is not None:
                unproven.append(problem)
                if not allow:
                    if not _has_division(c.rule.pattern):
                        self._refused_anywhere.add(c.semantics)
                    continue
            out.append(c)
        return out

    @staticmethod
    def _instances(rule: Rule, *, compiled: bool) -> list[CompiledRule]:
        """The rule checked and instantiated (and compiled) for each of its semantics."""
        _check_binding_order(rule)
        out = []
        for sem in rule.semantics or (None,):
            root = _root_op(rule.pattern, sem)
            code = compile_rule(rule, sem) if compiled else None
            out.append(CompiledRule(rule, sem, root, _shape(rule.pattern, sem), code))
        return out

    def require_proven(self, semantics: Iterable[Semantics | None]) -> None:
        """Raise UnprovenRuleError naming the refused rule instances of ``semantics``.

        Rules without division (semantics None) are always in use. Does nothing when
        unproven rules are allowed or there are none.
        """
        if not self.refused:
            return
        using = {semantics_key(s) for s in semantics} | {"any"}
        hit = [u for u in self.refused if u.semantics in using]
        if hit:
            raise UnprovenRuleError(hit)

    def check_term(self, term: Term) -> None:
        """Raise UnprovenRuleError if a refused rule instance is in use for ``term``.

        In use: rules without division, rules of a semantics ``term`` divides in, and
        rules whose pattern holds no division (they can match anywhere). Rewriting
        calls this first; it costs nothing when every rule is proven.
        """
        if not self.refused:
            return
        using: set[Semantics | None] = {None, *self._refused_anywhere}
        using.update(SEMANTICS_OF[n.op] for n in nodes(term) if n.op in SEMANTICS_OF)
        self.require_proven(using)

    def rules_for(self, op: Op) -> tuple[CompiledRule, ...]:
        """The rule instances that may match a node with operator ``op``, by priority."""
        return self._by_op[op]

    def dispatchers(self) -> dict[Op, Dispatch | None]:
        """Per operator, a function applying :meth:`rules_for`'s instances in order.

        ``dispatch(t)`` (for ``t`` with that operator) is ``(rewrite, rule name)`` of the
        first instance that applies, or None; an operator no rule is indexed under maps to
        None. This is the rewriter's inner loop. An operator's dispatcher is compiled the
        first time it is looked up (a floor-only workload never compiles the truncating
        ones).
        """
        return self._dispatch

    def dispatch_entries(self, *, early: bool) -> dict[Op, list[DispatchEntry]]:
        """Per operator, the entries its dispatcher (plain, or ``early`` only) is made of."""
        table = self._early_dispatch if early else self._dispatch
        if table is None:
            return {}
        return {op: dispatch_entries(rs) for op, rs in table.by_op.items()}

    def early_dispatchers(self) -> dict[Op, Dispatch | None] | None:
        """Like :meth:`dispatchers`, for the ``phase: early`` rules only; None if none is."""
        return self._early_dispatch

    def rule(self, name: str) -> Rule:
        """The rule called ``name``. Raises KeyError if there is none."""
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(name)

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def extend(
        self, rules: Iterable[Rule], *, first: bool = False, allow_unproven: bool | None = None
    ) -> RuleSet:
        """A new rule set: this one's rules and ``rules`` (after them, or before if ``first``).

        The rule set itself is not changed (rule sets are shared between threads, the
        shipped one by every caller); its compiled instances are reused. Rule names must
        stay unique: a RuleError names each rule of ``rules`` whose name is taken.
        ``allow_unproven``: as for the constructor; by default allowed when this rule
        set or ``rules`` (when a RuleSet) allows them.
        """
        allow = (
            allow_unproven
            if allow_unproven is not None
            else self.allow_unproven or bool(getattr(rules, "allow_unproven", False))
        )
        added = tuple(rules)
        taken = {r.name: r for r in self.rules}
        raise_all(
            [
                RuleError(
                    f"rule name {r.name!r} is already used by {taken[r.name].location}",
                    r.line,
                    1,
                    r.file,
                )
                for r in added
                if r.name in taken
            ]
        )
        ordered = (*added, *self.rules) if first else (*self.rules, *added)
        return RuleSet(ordered, compiled=self.is_compiled, reuse=self, allow_unproven=allow)

    @classmethod
    def shipped(cls) -> RuleSet:
        """The rules shipped in ``quorem.rules`` (the default of every function); shared."""
        return default_ruleset()

    @classmethod
    def from_files(
        cls,
        paths: Iterable[str | Path],
        *,
        with_shipped: bool = False,
        allow_unproven: bool = False,
    ) -> RuleSet:
        """Load and check rules files (names unique across them), in the order given.

        With ``with_shipped``, the shipped rules follow the files' rules: the files' rules
        are tried first wherever both match, as ``quorem simplify --rules FILE`` does.
        Every problem of every file is reported (a RuleErrors when there are several).
        Each file's proof record (``FILE.proof.json``, written by ``quorem verify
        FILE``) says which of its rules are proven; see the constructor for the others.
        """
        loaded = load_rule_files(paths)
        if with_shipped:
            return default_ruleset().extend(loaded, first=True, allow_unproven=allow_unproven)
        return cls(loaded, allow_unproven=allow_unproven)

    @classmethod
    def from_text(
        cls,
        text: str,
        file: str = "<rules>",
        *,
        proofs: str | Path | None = None,
        allow_unproven: bool = False,
    ) -> RuleSet:
        """A rule set from the text of one rules file.

        ``proofs``: a proof record (``X.proof.json`` written by ``quorem verify X``) that
        vouches for the rules whose text it proved; without one, every rule is unproven
        and is applied only with ``allow_unproven`` (see the constructor).
        """
        rules = parse_rules(text, file)
        if proofs is not None:
            rules = proofs_from_record(rules, Path(proofs))
        return cls(rules, allow_unproven=allow_unproven)

    def __bool__(self) -> bool:
        # An empty rule set is a rule set, not "no rule set": ``rules or default`` must
        # never replace RuleSet([]) by the shipped rules.
        return True


_DEFAULT: list[RuleSet] = []
_CONSTRAINT: list[RuleSet] = []
# Serialises the lazy loads below and the dispatchers' compilation. Reentrant: loading
# the constraint rules loads the default ones.
_LOCK = threading.RLock()


def default_ruleset() -> RuleSet:
    """The rules shipped in ``quorem.rules``, loaded once (every thread gets the same set)."""
    if not _DEFAULT:
        with _LOCK:
            if not _DEFAULT:
                from quorem.rules import rule_files  # noqa: PLC0415  (rules is data)

                _DEFAULT.append(RuleSet.from_files(rule_files()))
    return _DEFAULT[0]


def constraint_ruleset_for(rules: RuleSet) -> RuleSet:
    """``rules`` followed by the constraint rules: :func:`constraint_ruleset` for other rules.

    For the shipped rules this is :func:`constraint_ruleset` itself (loaded once).
    """
    if rules is default_ruleset():
        return constraint_ruleset()
    return rules.extend(constraint_ruleset().rules[len(default_ruleset()) :])


def constraint_ruleset() -> RuleSet:
    """The shipped rules followed by the constraint rules (``quorem.rules`` ``constraints/``).

    The indexing-map simplifier rewrites comparisons with it; loaded once (every thread
    gets the same set).
    """
    if not _CONSTRAINT:
        with _LOCK:
            if not _CONSTRAINT:
                from quorem.rules import constraint_rule_files  # noqa: PLC0415  (data)

                default = default_ruleset()
                rules = [*default.rules, *load_rule_files(constraint_rule_files())]
                _CONSTRAINT.append(RuleSet(rules, reuse=default))
    return _CONSTRAINT[0]
