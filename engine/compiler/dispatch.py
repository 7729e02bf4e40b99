"""Rule instances compiled to specialised Python functions: the fast path of rule application.

:func:`compile_rule` turns one rule instantiated for one semantics into the source text of
a single Python function ``apply(t) -> Term | None`` and executes that text once. The
function does exactly what the reference does -- :func:`quorem.matcher.match`, then
:func:`quorem.interpret.evaluate_expr` on the lets, the guard and the rewrite, as in
:meth:`quorem.ruleset.CompiledRule.reference_apply` -- with the same result on every
term, only faster:

* the pattern becomes straight-line code and nested loops: no generators, no dispatch on
  pattern classes, bindings in local variables; matches are enumerated in the reference's
  order (commutative operand orders, sum addends left to right, atoms in term order);
* each let and each top-level conjunct of the guard is evaluated as soon as the names it
  uses are bound, cheapest first. This only abandons matches the reference would reject
  (a false conjunct or an undetermined value vetoes a match whatever the order), so the
  first match that fires is the same;
* expressions are compiled for their static types: plain ``int`` arithmetic where no value
  can be infinite, the reference's extended arithmetic (``±inf``, :class:`Undetermined`)
  where an unbounded ``vmin``/``vmax`` may flow;
* ``vmin``/``vmax`` of a term the pattern matched read that term's range; of another
  division, remainder, comparison, ``max`` or ``min`` they compute the range without building
  the term; a rewrite that is a sum is built by one call to :func:`~quorem.term.linear`
  (canonical forms make this the same term), and the rest of a sum pattern is never built
  when the rewrite only adds it.

The rewriter does not call these functions one by one: :func:`compile_dispatch` makes one
function per operator holding the code of every rule indexed under it, in priority
order, with the node's operands unpacked once, and rules skipped whose sum patterns need
operators the node's sums lack (:func:`sum_needs`).

A rule using a construct outside what the compiler handles is not compiled
(:func:`compile_rule` returns None) and runs on the reference interpreter.
Expressions are compiled by :mod:`quorem.compiler.expr`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..ops import COMMUTATIVE, Op, Semantics
from ..rule import (
    Binary,
    Call,
    Expr,
    Lit,
    Name,
    NameKind,
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
from ..term import Term
from .cache import key_of, rule_cache, shipped
from .expr import (
    BIG_SUM,
    BOOL,
    INT,
    NON_COMMUTATIVE_BINARY,
    RUNTIME,
    TERM,
    Binding,
    Ctx,
    ExprCompiler,
    Path,
    Rest,
    State,
    Unsupported,
    fits_check,
    fits_refs,
    lit,
)

__all__ = [
    "Applier",
    "Dispatch",
    "DispatchEntry",
    "Needs",
    "RuleCode",
    "compile_dispatch",
    "compile_rule",
    "dispatch_lines",
    "sum_needs",
]

Applier = Callable[[Term], "Term | None"]

Dispatch = Callable[[Term], "tuple[Term, str] | None"]

# Compiling a rule registers its int64 checks in a table shared by all rules
# (quorem.compiler.expr, find-then-append): one compilation at a time, so two
# threads never give two checks one index. Reentrant for safety; compiling is rare.
_LOCK = threading.RLock()


@dataclasses.dataclass(frozen=True, slots=True)
class RuleCode:
    """A compiled rule instance: the function and the Python source it was made from."""

    fn: Applier
    source: str


def compile_rule(rule: Rule, semantics: Semantics | None) -> RuleCode | None:
    """Compile ``rule`` instantiated for ``semantics``.

    Returns None if the rule uses a construct the compiler does not handle; the caller
    then runs it on the reference interpreter. The generated code is looked up in (and
    added to) :func:`~quorem.compiler.cache.rule_cache` first: a process need not
    generate again what an earlier one did.
    """
    cache = rule_cache() if shipped(rule.file) else None
    key = key_of(rule, semantics) if cache is not None else ""
    found, entry = cache.get(key) if cache is not None else (False, None)
    namespace: dict[str, Any] = dict(RUNTIME)
    if found and entry is None:
        return None
    if entry is not None:
        source, code, refs = entry
        try:
            # The code was generated in another process: its _FITS_CHECKS[i] are that
            # process's checks, rebuilt here from their keys under the same indices.
            namespace["_FITS_CHECKS"] = {i: fits_check(k) for i, k in refs}
        except (TypeError, ValueError):
            entry = None  # an entry of another shape: generated again below
    if entry is None:
        try:
            with _LOCK:
                source = _RuleCompiler(rule, semantics).source()
        except Unsupported:
            if cache is not None:
                cache.put(key, None)
            return None
        code = compile(source, f"<rule {rule.name}>", "exec")
        if cache is not None:
            cache.put(key, (source, code, fits_refs(source)))
    exec(code, namespace)
    fn: Applier = namespace["_apply"]
    return RuleCode(fn, source)


Needs = tuple[tuple[int | None, frozenset[Op]], ...]


def sum_needs(rule: Rule, semantics: Semantics | None) -> Needs:
    """Operators a node's sums must include for ``rule`` to match it.

    Every operator addend of a sum pattern (``x % N`` in ``x % N + (x // N)*N + y``) matches
    a distinct atom with that operator. Returns ``(where, operators)`` pairs: ``where`` is
    None for a sum pattern at the root, or ``i`` for one that is operand ``i`` of a
    non-commutative root (``(a // C1 + y) // C3``); a term that is not a sum counts as the
    sum of itself.
    """

    def ops_of(p: PSum) -> frozenset[Op]:
        return frozenset(
            pattern_op(a.pattern.op, semantics) for a in p.addends if isinstance(a.pattern, POp)
        )

    p = rule.pattern
    out: list[tuple[int | None, frozenset[Op]]] = []
    if isinstance(p, PSum):
        out.append((None, ops_of(p)))
    elif isinstance(p, POp) and pattern_op(p.op, semantics) not in COMMUTATIVE:
        out.extend((i, ops_of(c)) for i, c in enumerate(p.children) if isinstance(c, PSum))
    return tuple((where, ops) for where, ops in out if ops)


@dataclasses.dataclass(frozen=True, slots=True)
class DispatchEntry:
    """One rule instance for :func:`compile_dispatch`."""

    fn: Applier  # what applies the rule (compiled, or the reference)
    name: str
    needs: Needs  # see sum_needs
    rule: Rule | None = None  # to inline the rule's compiled code; None: call ``fn``
    semantics: Semantics | None = None


def compile_dispatch(op: Op, entries: Sequence[DispatchEntry]) -> Dispatch:
    """One function trying the rules of one operator in order.

    ``op`` is the operator of every node it is given. It returns the first rewrite and its
    rule's name, or None. Compiled rules are inlined (no call per rule; the node's parts
    unpacked once for all), others called. A rule whose ``needs`` (see :func:`sum_needs`)
    are not met is skipped: it cannot match. The operators of a sum's atoms are collected
    once per node, when first needed.
    """
    with _LOCK:
        return _compile_dispatch(op, entries)


def _compile_dispatch(op: Op, entries: Sequence[DispatchEntry]) -> Dispatch:
    namespace: dict[str, Any] = dict(RUNTIME)
    for i, entry in enumerate(entries):
        namespace[f"_f{i}"] = entry.fn
        namespace[f"_n{i}"] = entry.name
    source = "\n".join(dispatch_lines(op, entries)) + "\n"
    exec(compile(source, "<dispatch>", "exec"), namespace)
    dispatch: Dispatch = namespace["_dispatch"]
    return dispatch


def dispatch_lines(
    op: Op, entries: Sequence[DispatchEntry], function: str = "_dispatch", prefix: str = ""
) -> list[str]:
    """The source of :func:`compile_dispatch`'s function, named ``function``.

    Entry ``i``'s function and name are read from the globals ``{prefix}_f{i}`` and
    ``{prefix}_n{i}``, which whoever runs the source must set; every other global it
    reads is in :data:`~quorem.compiler.expr.RUNTIME`. Call with ``_LOCK`` held
    (compiling rule blocks registers their int64 checks).
    """
    lines = [f"def {function}(t):"]
    known: set[int | None] = set()
    parts: tuple[str, ...] = ()
    if op is Op.ADD:
        parts = ("_at", "_co", "_k")
        lines.append("    _at = t.args; _co, _k = t.arg")
    elif op is not Op.MUL:
        parts = ("_t0", "_t1")
        lines.append("    _t0, _t1 = t.args")
    for i, entry in enumerate(entries):
        fn, name = f"{prefix}_f{i}", f"{prefix}_n{i}"
        conds = []
        for where, ops in entry.needs:
            var = "ops" if where is None else f"ops{where}"
            if where not in known:
                known.add(where)
                source = "_atom_ops(t.args)" if where is None else f"_sum_ops(t.args[{where}])"
                lines.append(f"    {var} = {source}")
            conds += [f"_OP_{needed.name} in {var}" for needed in sorted(ops)]
        ind = 1
        if conds:
            lines.append(f"    if {' and '.join(conds)}:")
            ind = 2
        block = None
        if entry.rule is not None:
            try:
                compiler = _RuleCompiler(entry.rule, entry.semantics)
                compiler.prefix = f"r{i}_"
                block = compiler.block(ind, name, parts) if parts else None
            except Unsupported:
                block = None
        if block is None:
            lines.append(f"{'    ' * ind}out = {fn}(t)")
            lines.append(f"{'    ' * ind}if out is not None: return out, {name}")
        else:
            lines.append(f"{'    ' * ind}# {entry.name!r}")
            lines.extend(block)
    lines.append("    return None")
    return lines


_MAX_LINES = 4000  # a rule compiled to more is pathological: left to the reference


@dataclasses.dataclass(frozen=True, slots=True)
class _Item:
    """A guard conjunct or a let, placed where the names it uses are bound."""

    id: int
    expr: Expr
    let: str | None  # the name a let defines; None for a guard conjunct
    deps: frozenset[str]
    nodes: frozenset[Path]  # matched pattern nodes the expression refers to
    cost: int
    raises: bool


Cont = Callable[[State, int], None]  # emits the code that follows a match


@dataclasses.dataclass(frozen=True, slots=True)
class _Node:
    """A pattern node, where it is in the rule's pattern, and the local holding its term."""

    pattern: Pattern
    path: Path
    term: str
    op_checked: bool = False  # the term's operator is known to be the pattern's


@dataclasses.dataclass(frozen=True, slots=True)
class _Sum:
    """A sum pattern being matched: the locals of its term's atoms, coefficients, constant."""

    node: _Node
    pattern: PSum
    atoms: str
    coefs: str
    constant: str  # the constant left for the rest ("0" once a constant addend took it)
    pos: str | None  # local of the look-up state of _locate, if an addend is looked up
    k: Cont


def _pattern_names(p: Pattern) -> set[str]:
    if isinstance(p, PTerm | PConst):
        return {p.name}
    if isinstance(p, POp):
        return set().union(*(_pattern_names(c) for c in p.children))
    if isinstance(p, PSum):
        out = {p.rest} if p.rest else set()
        if p.seq is not None:
            out |= {p.seq.coef, p.seq.term}
        if p.const is not None:
            out |= expr_names(p.const)
        for a in p.addends:
            out |= expr_names(a.coef) | _pattern_names(a.pattern)
        return out
    return set()


def _names_outside_sums(e: Expr) -> set[str]:
    """The names ``e`` reads outside ``sum(...)`` (evaluated whatever the sequences' length)."""
    if isinstance(e, Name):
        return {e.name}
    if isinstance(e, Unary):
        return _names_outside_sums(e.operand)
    if isinstance(e, Binary):
        return _names_outside_sums(e.left) | _names_outside_sums(e.right)
    if isinstance(e, Call) and e.func not in ("sum", "all", "any"):
        return set().union(*(_names_outside_sums(a) for a in e.args))
    return set()


def _flatten_and(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "and":
        return _flatten_and(e.left) + _flatten_and(e.right)
    return [e]


def _child_cost(p: Pattern) -> int:
    if isinstance(p, PConst | PLit):
        return 0
    if isinstance(p, PTerm):
        return 1
    if isinstance(p, POp):
        return 2
    if p.seq is not None and p.seq.where is not None:
        return 4  # as quorem.matcher.child_cost: a filtered sum is matched last
    return 3


class _RuleCompiler(ExprCompiler):
    """Compiles one rule instance: the pattern to matching code, lets and guard placed in it."""

    def __init__(self, rule: Rule, sem: Semantics | None) -> None:
        super().__init__(rule, sem)
        self.lines: list[str] = []
        self.returns = ""  # what follows the rewrite in a return statement
        self.unpacked: dict[str, tuple[str, ...]] = {}  # term local -> locals of its parts
        self.let_exprs: dict[str, Expr] = {}
        self.cheap_lets: set[str] = set()  # lets that cannot fail: built when first needed
        self.items: list[_Item] = []
        self.unbounded_of: dict[str, str] = {}  # sum atoms local -> its counter local
        self._collect(rule.pattern, ())
        self._prepare()

    # ------------------------------------------------------------------ analysis
    def _kind(self, name: str, kind: NameKind) -> None:
        known = self.kinds.setdefault(name, kind)
        if known is not kind:
            raise Unsupported

    def _collect(self, p: Pattern, path: Path) -> None:
        if isinstance(p, PTerm):
            self._kind(p.name, NameKind.TERM)
        elif isinstance(p, PConst):
            self._kind(p.name, NameKind.CONST)
        elif isinstance(p, PLit):
            if isinstance(p.value, bool) or not isinstance(p.value, int):
                raise Unsupported
        elif isinstance(p, POp):
            if len(p.children) != 2 or p.op in ("and", "or"):
                # A junction pattern matches any two parts of a clause chain, which
                # only the reference matcher does (quorem.matcher).
                raise Unsupported
            try:
                pattern_op(p.op, self.sem)
            except (AssertionError, KeyError):
                raise Unsupported from None
            self.nodes[path] = p
            for i, c in enumerate(p.children):
                self._collect(c, (*path, i))
        elif isinstance(p, PSum):
            if p.rest is not None and p.seq is not None and p.seq.where is None:
                raise Unsupported
            for j, a in enumerate(p.addends):
                self._coef_names(a.coef)
                self._collect(a.pattern, (*path, "a", j))
            if p.const is not None:
                self._coef_names(p.const)
            if p.rest is not None:
                self._kind(p.rest, NameKind.TERM)
            if p.seq is not None:
                k, t = p.seq.coef, p.seq.term
                if k == t or k in self.kinds or t in self.kinds:
                    raise Unsupported  # a sequence bound twice is overwritten: not handled
                self._kind(k, NameKind.SEQ_CONST)
                self._kind(t, NameKind.SEQ_TERM)
                self.seq_of[k] = self.seq_of[t] = (k, t)
        else:
            raise Unsupported

    def _coef_names(self, e: Expr) -> None:
        """Coefficients are products of literals and (negated) constant names."""
        if isinstance(e, Lit):
            if isinstance(e.value, bool) or not isinstance(e.value, int):
                raise Unsupported
        elif isinstance(e, Name):
            if e.kind is not NameKind.CONST:
                raise Unsupported
            self._kind(e.name, NameKind.CONST)
        elif isinstance(e, Unary) and e.op == "-":
            self._coef_names(e.operand)
        elif isinstance(e, Binary) and e.op == "*":
            self._coef_names(e.left)
            self._coef_names(e.right)
        else:
            raise Unsupported

    def _prepare(self) -> None:
        rule = self.rule
        for name, e in rule.lets:
            if name in self.kinds or name in self.let_exprs:
                raise Unsupported
            ty = self._type(e, None)
            if ty == BOOL:
                raise Unsupported  # a condition as a let never fires: leave it to the reference
            self.let_exprs[name] = e
            self.let_types[name] = TERM if ty == TERM else INT
            raises = ty not in (TERM, INT) or self._raises(e, None)
            if raises:
                self._add_item(e, name, raises=True)
            else:
                self.cheap_lets.add(name)
        if rule.guard is not None:
            for conjunct in _flatten_and(rule.guard):
                if self._type(conjunct, None) != BOOL:
                    raise Unsupported
                self._add_item(conjunct, None, raises=self._raises(conjunct, None))
        if self._type(rule.rewrite, None) == BOOL:
            raise Unsupported

    def _add_item(self, e: Expr, let: str | None, *, raises: bool) -> None:
        deps = frozenset(expr_names(e))
        nodes = frozenset(self._identity_paths(e))
        self.items.append(_Item(len(self.items), e, let, deps, nodes, self._cost(e), raises))

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def check(self, st: State, ind: int, cond: str) -> int:
        if st.top:
            self.emit(ind, f"if not ({cond}): return None")
            return ind
        self.emit(ind, f"if {cond}:")
        return ind + 1

    def source(self) -> str:
        """The rule as a function ``_apply(t)``: the rewrite, or None."""
        self.emit(0, "def _apply(t):")
        st = State({}, frozenset(), {}, top=True)
        st, ind = self.flush(st, 1)
        self.match(_Node(self.rule.pattern, (), "t"), st, ind, self.finish)
        self.emit(1, "return None")
        if len(self.lines) > _MAX_LINES:
            raise Unsupported  # pathological pattern: not worth compiling
        return "\n".join(self.lines) + "\n"

    def block(self, ind: int, name: str, parts: tuple[str, ...]) -> list[str]:
        """The rule as statements at indentation ``ind`` inside a dispatcher of ``t``.

        ``t`` has the operator at the rule's root, and its parts are already in the
        ``parts`` locals (its two operands, or a sum's atoms, coefficients and constant).
        The statements return ``(rewrite, name)`` when the rule applies (``name`` is the
        local or global holding its name) and fall through otherwise.
        """
        self.returns = f", {name}"
        self.unpacked["t"] = parts
        st = State({}, frozenset(), {}, top=False)
        st, ind = self.flush(st, ind)
        self.match(_Node(self.rule.pattern, (), "t", op_checked=True), st, ind, self.finish)
        if len(self.lines) > _MAX_LINES:
            raise Unsupported
        return self.lines

    def match(self, node: _Node, st: State, ind: int, k: Cont) -> None:
        """Emit code matching ``node``'s pattern against its term; ``k`` emits what follows."""
        p, tv = node.pattern, node.term
        if isinstance(p, PTerm):
            b = st.binds.get(p.name)
            if b is None:
                st, ind = self.flush(st.bind(p.name, Binding("term", tv)), ind)
            else:
                st = self.materialise(p.name, st, ind)
                ind = self.check(st, ind, f"{tv} is {st.binds[p.name].code}")
            k(st, ind)
        elif isinstance(p, PConst):
            ind = self.check(st, ind, f"{tv}.op is _OP_CONST")
            b = st.binds.get(p.name)
            if b is None:
                v = self.fresh("n")
                self.emit(ind, f"{v} = {tv}.arg")
                st, ind = self.flush(st.bind(p.name, Binding("int", v, term=tv)), ind)
            else:
                ind = self.check(st, ind, f"{tv}.arg == {b.code}")
            k(st, ind)
        elif isinstance(p, PLit):
            ind = self.check(st, ind, f"{tv}.op is _OP_CONST and {tv}.arg == {lit(p.value)}")
            k(st, ind)
        elif isinstance(p, POp):
            self.match_op(node, p, st, ind, k)
        elif isinstance(p, PSum) and not (p.addends or p.rest or p.seq) and p.const is not None:
            # A sum of a constant alone (``x // -1``) matches a constant term only.
            ind = self.check(st, ind, f"{tv}.op is _OP_CONST")
            st, ind = self.bind_const(p.const, f"{tv}.arg", st, ind)
            st, ind = self.matched(node, st, ind)
            k(st, ind)
        else:
            assert isinstance(p, PSum)
            self.match_sum(node, p, st, ind, k)

    def matched(self, node: _Node, st: State, ind: int) -> tuple[State, int]:
        """Record that ``node`` matched (expressions may now read its term), then flush."""
        st = dataclasses.replace(st, complete={**st.complete, node.path: node.term})
        return self.flush(st, ind)

    def match_op(self, node: _Node, p: POp, st: State, ind: int, k: Cont) -> None:
        op = pattern_op(p.op, self.sem)
        tv = node.term
        cond = "" if node.op_checked else f"{tv}.op is _OP_{op.name}"
        if op is Op.MUL:
            cond += f"{' and ' if cond else ''}len({tv}.args) == 2"
        if cond:
            ind = self.check(st, ind, cond)
        known = self.unpacked.get(tv)
        if known is not None and op is not Op.MUL:
            args = (known[0], known[1])
        else:
            args = (self.fresh("a"), self.fresh("a"))
            self.emit(ind, f"{args[0]}, {args[1]} = {tv}.args")
        orders = [(0, 1), (1, 0)] if op in COMMUTATIVE else [(0, 1)]
        if len(orders) > 1:
            st = dataclasses.replace(st, top=False)
        for order in orders:
            kids = [_Node(p.children[i], (*node.path, i), args[j]) for i, j in enumerate(order)]
            kids.sort(key=lambda kid: _child_cost(kid.pattern))
            self.chain(node, kids, st, ind, k)

    def chain(self, node: _Node, kids: list[_Node], st: State, ind: int, k: Cont) -> None:
        """Match ``kids`` one after the other, then ``node`` is matched."""
        if not kids:
            st, ind = self.matched(node, st, ind)
            k(st, ind)
            return
        self.match(kids[0], st, ind, lambda st2, ind2: self.chain(node, kids[1:], st2, ind2, k))

    def match_sum(self, node: _Node, p: PSum, st: State, ind: int, k: Cont) -> None:
        tv = node.term
        known = self.unpacked.get(tv)
        if known is not None and node.op_checked:  # a sum whose parts a dispatcher unpacked
            at, co, kk = known
        else:
            at, co, kk = self.fresh("at"), self.fresh("co"), self.fresh("k")
            self.emit(ind, f"if {tv}.op is _OP_ADD:")
            self.emit(ind + 1, f"{at} = {tv}.args; {co} = {tv}.arg[0]; {kk} = {tv}.arg[1]")
            self.emit(ind, f"elif {tv}.op is _OP_CONST:")
            self.emit(ind + 1, f"{at} = (); {co} = (); {kk} = {tv}.arg")
            self.emit(ind, "else:")
            self.emit(ind + 1, f"{at} = ({tv},); {co} = (1,); {kk} = 0")
        constant = kk
        if p.const is not None:
            st, ind = self.bind_const(p.const, kk, st, ind)
            constant = "0"
        elif p.rest is None:
            ind = self.check(st, ind, f"{kk} == 0")
        n = len(p.addends)
        if p.rest is None and p.seq is None:
            ind = self.check(st, ind, f"len({at}) == {n}")
        elif p.seq is not None:
            ind = self.check(st, ind, f"len({at}) > {n}")
        elif n:
            ind = self.check(st, ind, f"len({at}) >= {n}")
        if p.rest is not None:
            # Counted at most once per match attempt, when a fits_int64 guard first asks
            # about a rest (see rest_unbounded).
            unb = self.fresh("unb")
            self.emit(ind, f"{unb} = -1")
            self.unbounded_of[at] = unb
        pos = None
        bound = set(st.binds)  # what may be bound when each addend is matched
        for a in p.addends:
            if self.is_ground(a.pattern, bound):  # an addend looked up, not searched for
                pos = self.fresh("pos")
                self.emit(ind, f"{pos} = 0")
                break
            bound |= expr_names(a.coef) | _pattern_names(a.pattern)
        self.addend(_Sum(node, p, at, co, constant, pos, k), (), st, ind)

    def is_ground(self, p: Pattern, bound: set[str] | dict[str, Binding]) -> bool:
        """Whether the reference instantiates ``p`` (every name bound, no sum inside)."""
        if isinstance(p, PTerm | PConst):
            return p.name in bound
        if isinstance(p, PLit):
            return True
        if isinstance(p, POp):
            return all(self.is_ground(c, bound) for c in p.children)
        return False

    def ground(self, p: Pattern, st: State, ind: int) -> tuple[State, str]:
        """Code for the term the reference instantiates for ``p`` (None if it is not live)."""
        if isinstance(p, PTerm):
            st = self.materialise(p.name, st, ind)
            return st, st.binds[p.name].code
        if isinstance(p, PConst):
            b = st.binds[p.name]
            return st, b.term if b.term is not None else f"const({b.code})"
        if isinstance(p, PLit):
            return st, f"const({lit(p.value)})"
        assert isinstance(p, POp)
        op = pattern_op(p.op, self.sem)
        st, left = self.ground(p.children[0], st, ind)
        st, right = self.ground(p.children[1], st, ind)
        helper = "_lookup2" if op in NON_COMMUTATIVE_BINARY else "_build2"
        return st, f"{helper}(_OP_{op.name}, {left}, {right})"

    def addend(self, sm: _Sum, used: tuple[str, ...], st: State, ind: int) -> None:
        """Match addend ``len(used)`` of a sum pattern to an atom not in ``used``."""
        i = len(used)
        if i == len(sm.pattern.addends):
            self.remainder(sm, used, st, ind)
            return
        add = sm.pattern.addends[i]
        sub = (*sm.node.path, "a", i)
        if self.is_ground(add.pattern, st.binds):
            st, g = self.ground(add.pattern, st, ind)
            gv, jv, cv = self.fresh("g"), self.fresh("j"), self.fresh("c")
            self.emit(ind, f"{gv} = {g}")
            assert sm.pos is not None
            self.emit(ind, f"{jv}, {sm.pos} = _locate({sm.atoms}, {gv}, {sm.pos})")
            cond = " and ".join([f"{jv} >= 0", *(f"{gv} is not {u}" for u in used)])
            ind = self.check(st, ind, cond)
            self.emit(ind, f"{cv} = {sm.coefs}[{jv}]")
            st, ind = self.bind_const(add.coef, cv, st, ind)
            if isinstance(add.pattern, POp):
                st, ind = self.matched(_Node(add.pattern, sub, gv), st, ind)
            self.addend(sm, (*used, gv), st, ind)
            return
        av, cv = self.fresh("e"), self.fresh("c")
        conds = []
        keyed = self.numerator_key(add.pattern, st, ind)
        if keyed is not None:
            # Numerator and divisor already bound: a long sum's index gives the only
            # atoms that can match (pairs of addends: linear, not quadratic, per sum).
            st, key, divisor, whole = keyed
            assert isinstance(add.pattern, POp)
            opname = f"_OP_{pattern_op(add.pattern.op, self.sem).name}"
            ats, cos = self.fresh("at"), self.fresh("co")
            self.emit(
                ind,
                f"{ats}, {cos} = ({sm.atoms}, {sm.coefs}) if len({sm.atoms}) <= {BIG_SUM}"
                f" else _keyed_slices({sm.atoms}, {sm.coefs}, {opname}, {key}, {divisor},"
                f" {whole})",
            )
            self.emit(ind, f"for {av}, {cv} in zip({ats}, {cos}):")
            conds.append(f"{av}.op is {opname}")
        elif isinstance(add.pattern, POp):
            # A long sum's atoms with one operator are contiguous: loop over those only.
            opname = f"_OP_{pattern_op(add.pattern.op, self.sem).name}"
            ats, cos = self.fresh("at"), self.fresh("co")
            self.emit(
                ind,
                f"{ats}, {cos} = ({sm.atoms}, {sm.coefs}) if len({sm.atoms}) <= {BIG_SUM}"
                f" else _op_slices({sm.atoms}, {sm.coefs}, {opname})",
            )
            self.emit(ind, f"for {av}, {cv} in zip({ats}, {cos}):")
            conds.append(f"{av}.op is {opname}")
        else:
            self.emit(ind, f"for {av}, {cv} in zip({sm.atoms}, {sm.coefs}):")
        ind += 1
        st = dataclasses.replace(st, top=False)
        conds += [f"{av} is not {u}" for u in used]
        if conds:
            ind = self.check(st, ind, " and ".join(conds))
        st, ind = self.bind_const(add.coef, cv, st, ind)
        self.match(
            _Node(add.pattern, sub, av, op_checked=True),
            st,
            ind,
            lambda st2, ind2: self.addend(sm, (*used, av), st2, ind2),
        )

    def numerator_key(self, p: Pattern, st: State, ind: int) -> tuple[State, str, str, bool] | None:
        """For ``op(x + C, D)`` (or ``op(x, D)``) with ``x`` and ``D`` bound: the lookup.

        The state, the code of the numerator's key (``x``), of the divisor, and whether
        the key is the whole numerator (no constant in the pattern); None for any other
        addend pattern, which is searched for among all atoms of its operator.
        """
        if not (isinstance(p, POp) and len(p.children) == 2):
            return None
        num, den = p.children
        if not (isinstance(num, PSum) and not num.addends and num.seq is None):
            return None
        if num.rest is None or num.rest not in st.binds or not self.is_ground(den, st.binds):
            return None
        if st.binds[num.rest].kind != "term":
            return None
        try:
            pattern_op(p.op, self.sem)
        except (AssertionError, KeyError):
            return None
        st = self.materialise(num.rest, st, ind)
        st, divisor = self.ground(den, st, ind)
        return st, st.binds[num.rest].code, divisor, num.const is None

    def bind_const(self, e: Expr, value: str, st: State, ind: int) -> tuple[State, int]:
        """Match a coefficient or constant expression against the int in ``value``."""
        if isinstance(e, Lit):
            return st, self.check(st, ind, f"{value} == {lit(e.value)}")
        if isinstance(e, Name) and e.name not in st.binds:
            return self.flush(st.bind(e.name, Binding("int", value)), ind)
        if isinstance(e, Unary) and isinstance(e.operand, Name) and e.operand.name not in st.binds:
            v = self.fresh("n")
            self.emit(ind, f"{v} = -{value}")
            return self.flush(st.bind(e.operand.name, Binding("int", v)), ind)
        if not expr_names(e) <= set(st.binds):
            raise Unsupported  # the reference never matches here (rejected when rules load)
        c = self.expr(e, Ctx(st))
        if c.ty != INT:
            raise Unsupported
        return st, self.check(st, ind, f"{value} == {c.code}")

    def remainder(self, sm: _Sum, used: tuple[str, ...], st: State, ind: int) -> None:
        """Bind what the addends left of the sum: the sequences, or the rest."""
        p, at, co = sm.pattern, sm.atoms, sm.coefs
        if p.seq is not None and p.seq.where is not None:
            st, ind = self.filtered(sm, used, st, ind)
        elif p.seq is not None:
            if used:
                ks, ts, a, c = self.fresh("ks"), self.fresh("ts"), self.fresh("x"), self.fresh("y")
                keep = " and ".join(f"{a} is not {u}" for u in used)
                self.emit(ind, f"{ks} = [{c} for {a}, {c} in zip({at}, {co}) if {keep}]")
                self.emit(ind, f"{ts} = [{a} for {a} in {at} if {keep}]")
            else:
                ks, ts = co, at
            st = st.bind(p.seq.coef, Binding("seq", ks)).bind(p.seq.term, Binding("seq", ts))
        if p.rest is not None and not (p.seq is not None and p.seq.where is not None):
            lazy = Rest(at, co, sm.constant, used, self.unbounded_of.get(at))
            b = st.binds.get(p.rest)
            if b is None:
                st = st.bind(p.rest, Binding("term", self.fresh("r"), rest=lazy))
            else:
                st = self.materialise(p.rest, st, ind)
                r = self.fresh("r")
                self.emit(ind, f"{r} = {self.rest_code(lazy)}")
                ind = self.check(st, ind, f"{st.binds[p.rest].code} is {r}")
        st, ind = self.matched(sm.node, st, ind)
        sm.k(st, ind)

    def filtered(self, sm: _Sum, used: tuple[str, ...], st: State, ind: int) -> tuple[State, int]:
        """Bind ``sum(K*t, cond) + y``: split the atoms left by ``cond``, in one pass.

        As the reference (:meth:`quorem.matcher._SumMatch.filtered`): the atoms
        where the condition holds, in term order, are the sequences (at least one), the
        others and the constant the rest, left unbuilt until needed.
        """
        p, at, co = sm.pattern, sm.atoms, sm.coefs
        assert p.seq is not None and p.seq.where is not None and p.rest is not None
        k_name, t_name = p.seq.coef, p.seq.term
        cond, group = p.seq.where, (k_name, t_name)
        if not expr_names(cond) - {k_name, t_name} <= set(st.binds):
            raise Unsupported  # a constant bound after the sum: left to the reference
        if self._type(cond, group) != BOOL or self._raises(cond, group):
            raise Unsupported
        kv, tv = self.fresh("k"), self.fresh("u")
        c = self.expr(cond, Ctx(st, {k_name: kv, t_name: tv}, None, {}, frozenset()))
        ks, ts, oa, oc = self.fresh("ks"), self.fresh("ts"), self.fresh("oa"), self.fresh("oc")
        self.emit(ind, f"{ks} = []; {ts} = []; {oa} = []; {oc} = []")
        skip = "".join(f" or {tv} is {u}" for u in used)
        self.emit(ind, f"for {tv}, {kv} in zip({at}, {co}):")
        if skip:
            self.emit(ind + 1, f"if {skip[4:]}: continue")
        self.emit(ind + 1, f"if {c.code}: {ks}.append({kv}); {ts}.append({tv})")
        self.emit(ind + 1, f"else: {oa}.append({tv}); {oc}.append({kv})")
        ind = self.check(st, ind, ks)
        st = st.bind(k_name, Binding("seq", ks)).bind(t_name, Binding("seq", ts))
        lazy = Rest(oa, oc, sm.constant, ())
        b = st.binds.get(p.rest)
        if b is None:
            return st.bind(p.rest, Binding("term", self.fresh("r"), rest=lazy)), ind
        st = self.materialise(p.rest, st, ind)
        r = self.fresh("r")
        self.emit(ind, f"{r} = {self.rest_code(lazy)}")
        return st, self.check(st, ind, f"{st.binds[p.rest].code} is {r}")

    def materialise(self, name: str, st: State, ind: int) -> State:
        """Build a rest that was left unbuilt, where it is first needed."""
        b = st.binds[name]
        if b.rest is None:
            return st
        self.emit(ind, f"{b.code} = {self.rest_code(b.rest)}")
        return st.bind(name, Binding("term", b.code))

    # ------------------------------------------------------------- lets and guard
    def available(self, name: str, st: State) -> bool:
        if name in st.binds:
            return True
        if name in self.cheap_lets:
            return all(self.available(n, st) for n in expr_names(self.let_exprs[name]))
        return False

    def ready(self, it: _Item, st: State, final: bool) -> bool:
        if not all(self.available(n, st) for n in it.deps):
            return False
        return final or it.nodes <= st.complete.keys()

    def flush(self, st: State, ind: int, final: bool = False) -> tuple[State, int]:
        """Emit every pending let and guard conjunct whose names are now bound.

        An item waits for the pattern nodes it refers to, so it can read their ranges;
        ``final`` (after the whole match) emits what is left.
        """
        while True:
            ready = [it for it in self.items if it.id not in st.done and self.ready(it, st, final)]
            if not ready:
                return st, ind
            it = min(ready, key=lambda it: (it.cost, it.id))
            st, ind = self.emit_item(it, st, ind)

    def ensure(self, names: Iterable[str], st: State, ind: int) -> State:
        """Build the rests and cheap lets among ``names`` that are not built yet."""
        for name in sorted(names):
            if name in st.binds:
                st = self.materialise(name, st, ind)
            elif name in self.cheap_lets:
                e = self.let_exprs[name]
                st = self.ensure(expr_names(e), st, ind)
                pre: list[str] = []
                c = self.expr(e, Ctx(st, pre=pre))
                v = self.fresh("L")
                for line in pre:
                    self.emit(ind, line)
                self.emit(ind, f"{v} = {c.code}")
                kind = "term" if self.let_types[name] == TERM else "int"
                st = st.bind(name, Binding(kind, v))
        return st

    def emit_item(self, it: _Item, st: State, ind: int) -> tuple[State, int]:
        if it.let is None and isinstance(it.expr, Call) and it.expr.func == "fits_int64":
            for name in sorted(_names_outside_sums(it.expr.args[0])):
                b = st.binds.get(name)
                if b is not None and b.rest is not None and b.rest.unbounded is not None:
                    ind = self.check(st, ind, f"not ({self.rest_unbounded(b.rest)})")
        st = self.ensure(it.deps, st, ind)
        pre: list[str] = []
        c = self.expr(it.expr, Ctx(st, pre=pre))
        if it.let is not None:
            v = self.fresh("L")
            code = self.finite(c)
            self.emit(ind, "try:")
            for line in pre:
                self.emit(ind + 1, line)
            self.emit(ind + 1, f"{v} = {code}")
            self.emit(ind, "except _ABORT:")
            self.emit(ind + 1, f"{v} = _FAIL")
            ind = self.check(st, ind, f"{v} is not _FAIL")
            st = st.bind(it.let, Binding("term" if self.let_types[it.let] == TERM else "int", v))
        elif it.raises:
            v = self.fresh("ok")
            self.emit(ind, "try:")
            for line in pre:
                self.emit(ind + 1, line)
            self.emit(ind + 1, f"{v} = {c.code}")
            self.emit(ind, "except _ABORT:")
            self.emit(ind + 1, f"{v} = False")
            ind = self.check(st, ind, v)
        else:
            for line in pre:
                self.emit(ind, line)
            ind = self.check(st, ind, c.code)
        return dataclasses.replace(st, done=st.done | {it.id}), ind

    def rest_unbounded(self, r: Rest) -> str:
        """Code: whether the rest ``r``, once built, is a partial sum with an unbounded side.

        Such a rest makes ``fits_int64`` of any template reading it (outside ``sum()``)
        false: the template walk checks the rest's own range, and a partial sum (a sum
        node of two or more atoms: atoms of a canonical sum are distinct, coefficients
        non-zero) does not count as computed by the input (quorem.overflow). Its
        range is the interval sum of its addends' (quorem.term), unbounded exactly
        when one of its atoms is. So the count over the whole sum, less the matched
        atoms', answers in O(matched) instead of building an O(n) term per candidate:
        ``(a*M + y) // N`` tried for each multiple ``M`` of a long unbounded sum.
        """
        assert r.unbounded is not None
        u = r.unbounded
        count = f"({u} if {u} >= 0 else ({u} := _n_unbounded({r.atoms})))"
        used = "".join(f" - _unbounded({g})" for g in r.used)
        return f"len({r.atoms}) - {len(r.used)} >= 2 and {count}{used} > 0"

    def finish(self, st: State, ind: int) -> None:
        """After a whole match: the remaining checks, then the rewrite."""
        st, ind = self.flush(st, ind, final=True)
        if len(st.done) != len(self.items):
            raise Unsupported  # cannot happen: every name is bound after a match
        rewrite = self.rule.rewrite
        fuse = frozenset(
            n for n, b in st.binds.items() if b.rest is not None and self.fusable(rewrite, n)
        )
        st = self.ensure(expr_names(rewrite) - fuse, st, ind)
        pre: list[str] = []
        c = self.expr(rewrite, Ctx(st, pre=pre, fuse=fuse))
        code = self.as_term(c)
        out = self.fresh("out")
        if self._raises(rewrite, None) or c.ty not in (TERM, INT):
            self.emit(ind, "try:")
            for line in pre:
                self.emit(ind + 1, line)
            self.emit(ind + 1, f"{out} = {code}")
            self.emit(ind, "except _ABORT:")
            self.emit(ind + 1, f"{out} = t")
        else:
            for line in pre:
                self.emit(ind, line)
            self.emit(ind, f"{out} = {code}")
        self.emit(ind, f"if {out} is not t: return {out}{self.returns}")

    def fusable(self, e: Expr, name: str) -> bool:
        """Whether every use of ``name`` in ``e`` is an addend of the top-level sum."""

        def ok(x: Expr, linear_position: bool) -> bool:
            if isinstance(x, Name):
                return x.name != name or linear_position
            if isinstance(x, Unary):
                return ok(x.operand, linear_position and x.op == "-")
            if isinstance(x, Binary):
                if x.op in ("+", "-"):
                    return ok(x.left, linear_position) and ok(x.right, linear_position)
                if x.op == "*":
                    lt = self._type(x.left, self._maybe_group(x.left))
                    rt = self._type(x.right, self._maybe_group(x.right))
                    return ok(x.left, linear_position and rt != TERM) and ok(
                        x.right, linear_position and lt != TERM
                    )
                return ok(x.left, False) and ok(x.right, False)
            if isinstance(x, Call):
                return all(ok(a, False) for a in x.args)
            return True

        return self._type(e, None) == TERM and ok(e, True)
