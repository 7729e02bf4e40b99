"""The int64 guard ``fits_int64(e)`` and the promise it serves: no rewrite introduces overflow."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import expressions
from support import examples

import quorem
from quorem import overflow
from quorem.errors import RuleError
from quorem.ops import Op, Semantics
from quorem.overflow import (
    INT64_MAX,
    INT64_MIN,
    Binding,
    compile_fits,
    fits_int64,
    term_fits_int64,
)
from quorem.rule import Binary, Call, Expr, Name, NameKind, Unary
from quorem.rulefile import parse_rules
from quorem.ruleset import RuleSet, default_ruleset
from quorem.term import Term


def _template(text: str) -> Expr:
    """The rewrite of a one-rule file with pattern ``(x + C)//D`` and ``text`` as its rewrite."""
    head = "rule t\n  doc: t\n  semantics: floor\n  pattern: (x + C)//D\n"
    (r,) = parse_rules(f"{head}  rewrite: {text}\n")
    return r.rewrite


def test_bounded_template_fits() -> None:
    x = quorem.var("x", 0, 2**40)
    assert fits_int64(_template("x*D + C"), {"x": x, "C": 5, "D": 2**20}, Semantics.FLOOR)


def test_each_node_is_checked_not_only_the_result() -> None:
    # x*D overflows although x*D - x*D + C would not.
    x = quorem.var("x", 0, 2**40)
    env: dict[str, Binding] = {"x": x, "C": 5, "D": 2**30}
    assert not fits_int64(_template("x*D - x*D + C"), env, Semantics.FLOOR)
    assert fits_int64(_template("x + C"), env, Semantics.FLOOR)


def test_constants_are_checked() -> None:
    x = quorem.var("x", 0, 1)
    assert not fits_int64(_template("x // (D*D)"), {"x": x, "C": 0, "D": 2**32}, Semantics.FLOOR)
    assert fits_int64(_template("x // (D*D)"), {"x": x, "C": 0, "D": 2**31}, Semantics.FLOOR)


def test_a_matched_term_counts_as_computed_by_the_input() -> None:
    # x itself is a value of the input: where the input fits, so does x, and so x // 2.
    env: dict[str, Binding] = {"x": quorem.var("x"), "C": 1, "D": 2}
    assert fits_int64(_template("x // D"), env, Semantics.FLOOR)
    assert not fits_int64(_template("x * D"), env, Semantics.FLOOR)
    # A rest of two addends is a partial sum the input never computed alone.
    rest: dict[str, Binding] = {"x": quorem.var("a") + quorem.var("b"), "C": 1, "D": 2}
    assert not fits_int64(_template("x // D"), rest, Semantics.FLOOR)
    bounded: dict[str, Binding] = {
        "x": quorem.var("a", 0, 9) + quorem.var("b", 0, 9),
        "C": 1,
        "D": 2,
    }
    assert fits_int64(_template("x // D"), bounded, Semantics.FLOOR)
    # One scaled addend is computed (c*a is an intermediate of the input); c*a + k is not.
    scaled: dict[str, Binding] = {"x": quorem.var("a") * 3, "C": 1, "D": 2}
    assert fits_int64(_template("x // D"), scaled, Semantics.FLOOR)
    offset: dict[str, Binding] = {"x": quorem.var("a") * 3 + 1, "C": 1, "D": 2}
    assert not fits_int64(_template("x // D"), offset, Semantics.FLOOR)


def test_term_lets_are_not_trusted() -> None:
    text = (
        "rule bad\n  doc: d\n  semantics: floor\n  pattern: x // N\n"
        "  let: y = x + 1\n  guard: fits_int64(y // N)\n  rewrite: x\n"
    )
    with pytest.raises(RuleError, match="a term the rule builds"):
        parse_rules(text, "bad.rules")


def test_limits_are_inclusive() -> None:
    x = quorem.var("x", INT64_MIN, INT64_MAX)
    assert fits_int64(_template("x"), {"x": x, "C": 0, "D": 1}, Semantics.FLOOR)
    assert not fits_int64(_template("x + 1"), {"x": x, "C": 0, "D": 1}, Semantics.FLOOR)
    assert not fits_int64(_template("-x"), {"x": x, "C": 0, "D": 1}, Semantics.FLOOR)


def test_division_by_a_range_containing_zero() -> None:
    x = quorem.var("x", -(2**62), 2**62)
    env: dict[str, Binding] = {"x": x, "C": 0, "D": 0}
    assert not fits_int64(_template("x // D"), env, Semantics.FLOOR)  # no value at all


@pytest.mark.parametrize(
    ("guard", "reason"),
    [
        ("fits_int64(C > 0)", "not a condition"),
        ("fits_int64(K*t)", "must not range over a sequence"),
        ("fits_int64(C, C)", "exactly one argument"),
    ],
)
def test_rules_checker_rejects_misuse(guard: str, reason: str) -> None:
    text = (
        "rule bad\n  doc: d\n  semantics: floor\n  pattern: (sum(K*t) + C) // D\n"
        f"  guard: {guard}\n  rewrite: C\n"
    )
    with pytest.raises(RuleError, match=reason):
        parse_rules(text, "bad.rules")


def _intermediates(t: Term, env: dict[str, int]) -> list[int]:
    """Every value machine code for ``t`` holds: subterms, scaled addends, constants."""
    out: list[int] = []
    seen: set[int] = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if id(u) in seen:
            continue
        seen.add(id(u))
        out.append(quorem.evaluate(u, env))
        if u.op is Op.ADD:
            coefs, offset = u.arg
            out += [offset, *coefs]
            out += [c * quorem.evaluate(a, env) for a, c in zip(u.args, coefs, strict=True)]
        stack.extend(u.args)
    return out


def _fits(values: list[int]) -> bool:
    return all(INT64_MIN <= v <= INT64_MAX for v in values)


_THIRD = 3074457345618258603  # the least x with 3*x > INT64_MAX
_BIG = st.sampled_from([2**31, 2**40, 2**52, 2**61, 2**62, 2**63 - 1, _THIRD])
_FACTOR = st.sampled_from([-3, -1, 2, 3, 4, 8, 2**20, 2**31, 2**40])
_SHAPES = [
    "(x % {a})*{b} + (x // {a})*{c} + y",
    "(x // {a} + y) // {b}",
    "(x*{a} + y) // {b}",
    "(x*{a} + y*{b} + {c}) // {a}",
    "(x*{a} + y*{b} + {c}) % {a}",
    "(x + {c}) % {a}",
    "(x // {a}) // {b}",
    "x % y",
    "(-x*{a} + {c}) // -1",
    "(-y + {c}) % {a}",
]


@settings(max_examples=examples(600), deadline=None)
@given(
    shape=st.sampled_from(_SHAPES),
    a=_FACTOR,
    b=_FACTOR,
    c=st.one_of(_FACTOR, _BIG),
    xr=_BIG,
    yr=_BIG,
    sem=st.sampled_from([Semantics.FLOOR, Semantics.TRUNC]),
    data=st.data(),
)
def test_simplify_introduces_no_overflow(  # noqa: PLR0917  (one parameter per drawn part)
    shape: str,
    a: int,
    b: int,
    c: int,
    xr: int,
    yr: int,
    sem: Semantics,
    data: st.DataObject,
) -> None:
    """Where the input provably fits in int64 by its ranges, so does every value of the result.

    An input whose ranges exceed int64 is out of scope: rule templates are proven
    relative to the input's values, but canonical forms can scale a matched sum (``-(4*x
    - 2)`` is ``4*x - 2``), which overflows only where ``-4*x`` is exactly -2**63, and
    the rewriter can only see that by ranges.
    """
    box = {"x": (-xr, xr), "y": (1, yr)}
    try:
        t = quorem.parse(shape.format(a=a, b=b, c=c), box, sem)
    except quorem.QuoremError:
        return
    assume(term_fits_int64(t))
    out = quorem.simplify(t)
    for _ in range(5):
        point = {
            "x": data.draw(st.sampled_from([-xr, -xr + 1, -1, 0, 1, xr - 1, xr])),
            "y": data.draw(st.sampled_from([1, 2, yr - 1, yr])),
        }
        try:
            before = _intermediates(t, point)
        except quorem.EvaluationError:
            continue
        if _fits(before):
            after = _intermediates(out, point)
            assert _fits(after), (str(t), str(out), point)
            assert quorem.evaluate(out, point) == quorem.evaluate(t, point)


def test_compiled_and_reference_agree_on_the_guard() -> None:
    reference = RuleSet(list(default_ruleset()), compiled=False)
    cases: list[tuple[str, dict[str, tuple[int | None, int | None]]]] = [
        ("(x % 3)*5 + (x // 3)*15", {"x": (0, 2**58)}),
        ("(x % 3)*5 + (x // 3)*15", {"x": (0, 2**62)}),
        ("(x % 3)*5 + (x // 3)*15", {"x": (0, None)}),
        ("(x*4 + y*6 + 3) % 4", {"x": (0, 10), "y": (0, 2**61)}),
        ("(x*4 + y*6 + 3) % 4", {"x": (0, 10), "y": (0, 2**62)}),
    ]
    for text, box in cases:
        t = quorem.parse(text, box)
        assert quorem.simplify(t) is quorem.simplify(t, reference), text


@pytest.mark.parametrize(
    ("text", "box"),
    [
        # div-by-minus-one's template -x fits, but its canonical form scales x's addends.
        ("(-x*2 + 6) // -1", {"x": (0, 2**62)}),
        # mod-reduce-coefficients would turn -y into 3*y.
        ("(-y + 3) % 4", {"y": (1, 2**62)}),
        # divmod-recombine-scaled would compute x*3 where the input never does.
        ("(x % 2)*3 + (x // 2)*6 + y", {"x": (_THIRD - 2, _THIRD), "y": (-9, -3)}),
    ],
)
def test_no_overflow_near_the_limits(text: str, box: dict[str, tuple[int, int]]) -> None:
    t = quorem.parse(text, box)
    assert _fits(_intermediates(t, {n: hi for n, (lo, hi) in box.items()}))
    out = quorem.simplify(t)
    for point in ({n: lo for n, (lo, hi) in box.items()}, {n: hi for n, (lo, hi) in box.items()}):
        assert _fits(_intermediates(out, point)), str(out)
        assert quorem.evaluate(out, point) == quorem.evaluate(t, point)


def _names_in(e: Expr) -> dict[str, NameKind]:
    if isinstance(e, Name):
        return {e.name: e.kind}
    kids: tuple[Expr, ...] = ()
    if isinstance(e, Unary):
        kids = (e.operand,)
    elif isinstance(e, Binary):
        kids = (e.left, e.right)
    elif isinstance(e, Call):
        kids = e.args
    return {k: v for c in kids for k, v in _names_in(c).items()}


def _fits_templates(e: Expr | None) -> list[Expr]:
    if isinstance(e, Call) and e.func == "fits_int64":
        return [e.args[0]]
    if isinstance(e, Unary):
        return _fits_templates(e.operand)
    if isinstance(e, Binary):
        return _fits_templates(e.left) + _fits_templates(e.right)
    if isinstance(e, Call):
        return [t for a in e.args for t in _fits_templates(a)]
    return []


SHIPPED_TEMPLATES = sorted(
    {
        (t, sem)
        for r in default_ruleset()
        for t in _fits_templates(r.guard)
        for sem in r.semantics or (Semantics.FLOOR,)
    },
    key=str,
)
_MAGNITUDE = st.one_of(
    st.integers(-40, 40),
    st.sampled_from([0, 2**31, 2**32, 3037000499, 3037000500, 2**62, INT64_MAX]),
    st.integers(-(2**63), 2**63 - 1),
)


@st.composite
def _range(draw: st.DrawFn) -> tuple[int | None, int | None]:
    a, b = draw(_MAGNITUDE), draw(_MAGNITUDE)
    lo, hi = min(a, b), max(a, b)
    return (None if draw(st.integers(0, 15)) == 0 else lo, hi)


@settings(max_examples=examples(500), deadline=None)
@given(st.sampled_from(SHIPPED_TEMPLATES), st.integers(1, 4), st.data())
def test_the_magnitude_fast_path_answers_as_the_interval_walk(
    template: tuple[Expr, Semantics], n: int, data: st.DataObject
) -> None:
    """compile_fits settles most checks by magnitudes; it must answer what the walk does."""
    e, sem = template
    env: dict[str, Any] = {}
    for name, kind in _names_in(e).items():
        items: list[Term] | list[int]
        if kind in (NameKind.TERM, NameKind.SEQ_TERM):
            items = [quorem.var(f"{name}{i}", *data.draw(_range())) for i in range(n)]
        else:
            items = [data.draw(_MAGNITUDE) for _ in range(n)]
        seq = kind in (NameKind.SEQ_TERM, NameKind.SEQ_CONST)
        env[name] = tuple(items) if seq else items[0]
    assert compile_fits(e, sem)(env) == overflow._interval_walk(e, sem)(env), (str(e), env)


def _fits_by_definition(t: Term) -> bool:
    """The definition ``Term.fits64`` caches: every node's range, a sum's parts, in int64."""

    def inside(v: int | None) -> bool:
        return v is not None and INT64_MIN <= v <= INT64_MAX

    if not (inside(t.vmin) and inside(t.vmax)):
        return False
    if t.op is Op.ADD:
        coefs, constant = t.arg
        if not inside(constant):
            return False
        for a, c in zip(t.args, coefs, strict=True):
            if a.vmin is None or a.vmax is None:
                return False
            if not (inside(c * a.vmin) and inside(c * a.vmax)):
                return False
    return all(_fits_by_definition(a) for a in t.args)


_EDGES = st.sampled_from([0, 1, 2**31, 2**61, 2**62, 2**63 - 1, 2**63, 2**64])


@settings(max_examples=examples(400), deadline=None)
@given(
    st.tuples(st.one_of(st.none(), _EDGES), _EDGES),
    st.tuples(st.one_of(st.none(), _EDGES), _EDGES),
    st.sampled_from([Semantics.FLOOR, Semantics.TRUNC]),
    st.data(),
)
def test_fits64_set_at_construction_meets_its_definition(
    xr: tuple[int | None, int], yr: tuple[int | None, int], sem: Semantics, data: st.DataObject
) -> None:
    box = {"x": (None if xr[0] is None else -xr[0], xr[1]), "y": (yr[0], yr[1])}
    box = {k: (lo, hi) for k, (lo, hi) in box.items() if lo is None or lo <= hi}
    assume(box)
    t = data.draw(expressions(box, sem))
    for node in _subterms(t):
        assert term_fits_int64(node) == _fits_by_definition(node), str(node)


def _subterms(t: Term) -> list[Term]:
    out, stack, seen = [], [t], set()
    while stack:
        u = stack.pop()
        if id(u) not in seen:
            seen.add(id(u))
            out.append(u)
            stack.extend(u.args)
    return out


def test_a_sum_whose_addends_overflow_does_not_fit_though_its_total_does() -> None:
    x = quorem.var("x", 2**62, 2**62 + 1)
    y = quorem.var("y", 2**62, 2**62 + 1)
    t = x * 4 - y * 4  # total in [-4, 4]; each addend near 2**64
    assert t.vmin == -4 and t.vmax == 4
    assert not term_fits_int64(t) and not _fits_by_definition(t)
    assert term_fits_int64(x - y) and _fits_by_definition(x - y)
    assert not term_fits_int64((x * 4 - y * 4) // 2)  # an operand that does not fit


def test_a_product_of_divisors_takes_the_magnitude_fast_path() -> None:
    # Nested divisions merge into one by a product (nested-div-offset): the walk costs
    # tens of microseconds per application, the magnitude bound a few.
    divisors: set[str] = set()
    assert overflow._bound(_template("(x + C) // (D*C*-2)"), divisors) is not None
    assert divisors == {"C", "D"}
    assert overflow._bound(_template("x // (D + C)"), set()) is None
    x = quorem.var("x", 0, 100)
    fits = compile_fits(_template("(x + C) // (D*C)"), Semantics.FLOOR)
    assert fits({"x": x, "C": 3, "D": 2**40})
    assert not fits({"x": x, "C": 0, "D": 2**40})  # a zero divisor: no value at all
    assert not fits({"x": x, "C": 2**32, "D": 2**32})  # the divisor itself overflows


# ----------------------------------------------------- the parent a rewrite is merged into
@pytest.mark.parametrize(
    ("text", "box"),
    [
        # mod-of-one-bucket turns x%16 into x - 2**62, which fits; the enclosing 8*(...)
        # would be rebuilt as x*8 - 2**65.
        ("(x % 16)*8", {"x": (2**62, 2**62 + 15)}),
        # y//2 folds to -1, which the enclosing sum's constant -2**63 would absorb.
        ("x - 9223372036854775808 + y//2", {"x": (10, 20), "y": (-2, -1)}),
        ("(x % 16)*8 + z % 4", {"x": (2**62, 2**62 + 15), "z": (4, 7)}),
    ],
)
def test_a_rewrite_is_not_taken_where_the_parent_would_leave_int64(
    text: str, box: dict[str, tuple[int, int]]
) -> None:
    t = quorem.parse(text, box)
    assert term_fits_int64(t)
    r = quorem.explain(t)
    assert term_fits_int64(r.term), str(r.term)
    for step in r.trace:  # every step taken stays in int64 too
        assert term_fits_int64(step.after), (step.rule, str(step.after))
    for point in ({n: lo for n, (lo, hi) in box.items()}, {n: hi for n, (lo, hi) in box.items()}):
        assert _fits(_intermediates(r.term, point)), str(r.term)
        assert quorem.evaluate(r.term, point) == quorem.evaluate(t, point)


def test_other_operands_keep_their_rewrites() -> None:
    # Only the operand whose rewrite would take the parent out of int64 is left as it was.
    t = quorem.parse("(x % 16)*8 + z % 4", {"x": (2**62, 2**62 + 15), "z": (4, 7)})
    assert str(quorem.simplify(t)) == "z + (x%16)*8 - 4"


_NEAR = st.sampled_from([2**31, 2**32, 2**61, 2**62, 2**62 + 2**61, INT64_MAX])


@st.composite
def _boxes_near_the_limit(draw: st.DrawFn) -> dict[str, tuple[int, int]]:
    box = {}
    for name in ("x", "y", "z")[: draw(st.integers(1, 3))]:
        edge = draw(_NEAR) * draw(st.sampled_from([1, -1]))
        width = draw(st.sampled_from([0, 1, 7, 15, 255, 2**20]))
        lo = max(min(edge, edge - width), INT64_MIN)
        box[name] = (lo, min(lo + width, INT64_MAX))
    return box


@settings(max_examples=examples(400), deadline=None)
@given(box=_boxes_near_the_limit(), sem=st.sampled_from(list(Semantics)), data=st.data())
def test_an_input_that_fits_gives_a_result_that_fits(
    box: dict[str, tuple[int, int]], sem: Semantics, data: st.DataObject
) -> None:
    """By value ranges: whatever rules fire and however parents are rebuilt around them."""
    t = data.draw(expressions(box, sem, max_depth=3, term_divisors=False))
    assume(term_fits_int64(t))
    r = quorem.explain(t)
    assert term_fits_int64(r.term), (str(t), str(r.term))
    for point in ({n: lo for n, (lo, _) in box.items()}, {n: hi for n, (_, hi) in box.items()}):
        try:
            want = quorem.evaluate(t, point)
        except quorem.EvaluationError:
            continue
        assert quorem.evaluate(r.term, point) == want, (str(t), str(r.term), point)
