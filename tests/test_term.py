"""Unit tests of hash-consed canonical terms (quorem.term) and their evaluation."""

from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Generator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem import EvaluationError, Op, Semantics, TermError, count_divmod, evaluate
from quorem import term as term_module
from quorem.printer import to_text
from quorem.term import (
    Term,
    compare,
    const,
    div,
    linear,
    maximum,
    minimum,
    mod,
    mul,
    product,
    sum_of,
    var,
)

FLOOR = Semantics.FLOOR
TRUNC = Semantics.TRUNC


@pytest.fixture
def a() -> Term:
    return var("a", 0, 15)


@pytest.fixture
def b() -> Term:
    return var("b", -4, 4)


@pytest.fixture
def c() -> Term:
    return var("c", 1, 8)


# ----------------------------------------------------------------- hash-consing


def test_structurally_equal_terms_are_the_same_object(a: Term, b: Term) -> None:
    """Two separately built, structurally equal terms are the identical object."""
    assert var("a", 0, 15) is a
    assert const(7) is const(7)
    assert (a * 3 + b) // 4 is (a * 3 + b) // 4
    assert maximum(a % 5, b) is maximum(a % 5, b)
    assert div(a, b, TRUNC) is div(a, b, TRUNC)


def test_parse_and_build_give_the_same_object(a: Term, b: Term) -> None:
    """Parsing text and building with functions give the identical term."""
    built = (a * 4 + b) // 8 % 3 + maximum(a, b)
    parsed = quorem.parse("(4*a + b)//8 % 3 + max(b, a)", {"a": (0, 15), "b": (-4, 4)})
    assert parsed is built


def test_same_name_other_bounds_is_another_variable() -> None:
    """var(name) with other bounds is a different term, and unbounded sides are kept."""
    assert var("x", 0, 3) is not var("x", 0, 4)
    assert var("x") is var("x", None, None)
    assert var("x", None, 3) is not var("x")
    assert var("x", 0, 3) - var("x", 0, 4) is not const(0)


def test_division_semantics_are_distinct_ops(a: Term) -> None:
    """Floor and truncating division of the same operands are different terms."""
    assert div(a, const(3), FLOOR) is not div(a, const(3), TRUNC)
    assert mod(a, const(3), FLOOR).op is Op.FLOORMOD
    assert mod(a, const(3), TRUNC).op is Op.TRUNCMOD
    assert (a // 3).op is Op.FLOORDIV


def test_minus_one_and_minus_two_are_distinct() -> None:
    """Constants -1 and -2 (equal CPython hashes) are distinct terms, also inside sums."""
    x = var("x", 0, 9)
    assert const(-1) is not const(-2)
    assert x - 1 is not x - 2
    assert (x - 1).addends()[1] == -1
    assert (x - 2).addends()[1] == -2
    assert x * -1 is not x * -2


def _build_and_drop(i: int) -> None:
    """Build a few terms no one keeps: unique constants make every one a new node."""
    w = var("w_weak", 0, 1000)
    t = (w * (10**6 + i) + i) // 7 % (i + 3)
    assert t.vmin is not None


def test_intern_table_is_weak() -> None:
    """Terms that are no longer referenced leave the intern table: it does not keep growing."""
    gc.collect()
    base = len(term_module._TABLE)
    for i in range(3000):
        _build_and_drop(i)
    gc.collect()
    assert len(term_module._TABLE) <= base + 20


def test_simplify_does_not_keep_terms_alive() -> None:
    """Simplifying many distinct terms and dropping them leaves the intern table bounded."""
    gc.collect()
    base = len(term_module._TABLE)
    w = var("w_simp", 0, 1000)
    for i in range(300):
        quorem.simplify((w * (8 * i + 8) + 4 * i + 1) // 4 % (i + 2))
    gc.collect()
    assert len(term_module._TABLE) <= base + 50


def test_live_terms_stay_interned() -> None:
    """A term that is still referenced is found again by structure after a collection."""
    t = var("live", 0, 5) * 12345 + 678
    gc.collect()
    assert var("live", 0, 5) * 12345 + 678 is t


# ---------------------------------------------------------------- canonical form


def test_canonical_order_is_independent_of_construction_order(a: Term, b: Term, c: Term) -> None:
    """Sums, products, max/min and ==/!= are the same term whatever order they are built in."""
    atoms = [a, b // 2, c % 3, maximum(a, c), a * b]

    sums = {id(sum_of(p)) for p in itertools.permutations(atoms)}
    assert len(sums) == 1
    prods = {id(product(list(p))) for p in itertools.permutations([a, b, c, a // 3])}
    assert len(prods) == 1
    assert a * b * c is c * (b * a)


_ORDER_SCRIPT = textwrap.dedent(
    """
    import sys
    import quorem
    names = sys.argv[1:]
    made = {n: quorem.var(n, 0, 9) for n in names}
    x, y, z = made["x"], made["y"], made["z"]
    eq = quorem.compare(quorem.Op.EQ, y, z)
    t = z // 3 + y * 2 + x % 4 + quorem.maximum(x, z) * eq + (x < y)
    print(quorem.to_text(t))
    print(quorem.to_text(quorem.simplify((x * 8 + y * 4 + z) // 4 % 2)))
    """
)


@pytest.mark.slow
def test_canonical_order_is_the_same_in_fresh_processes() -> None:
    """Printed canonical order does not depend on creation order or PYTHONHASHSEED."""
    outputs = set()
    for seed, names in [("0", "x y z"), ("1", "z y x"), ("12345", "y z x")]:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", _ORDER_SCRIPT, *names.split()],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1, outputs


def test_sums_are_flat(a: Term, b: Term, c: Term) -> None:
    """a + (b + c) is (a + b) + c: one ADD node whose atoms are not sums."""
    left = a + (b + c)
    right = (a + b) + c
    assert left is right
    assert left.op is Op.ADD
    assert len(left.args) == 3
    assert all(t.op is not Op.ADD for t in left.args)
    nested = (a + 1) // 2 + ((b + 2) + (c + 3))
    assert all(t.op is not Op.ADD for t in nested.args)
    assert nested.addends()[1] == 5


def test_identity_elements_normalise(a: Term) -> None:
    """x + 0 is x, x*1 is x, x*0 is 0, x - x is 0, 0 + x is x, 1*x is x."""
    assert a + 0 is a
    assert 0 + a is a
    assert a * 1 is a
    assert 1 * a is a
    assert a * 0 is const(0)
    assert 0 * a is const(0)
    assert a - a is const(0)
    assert (a // 3) - (a // 3) is const(0)
    assert +a is a
    neg = -a
    assert -neg is a


def test_scaling_distributes_over_sums(a: Term, b: Term) -> None:
    """c*(a + b) is c*a + c*b, and like atoms are collected."""
    assert 3 * (a + b) is a * 3 + b * 3
    assert (a + b) * 3 is 3 * a + 3 * b
    assert -(a - b) is b - a
    assert 2 * (a + 1) - 2 is 2 * a
    assert a + a + a is 3 * a
    assert linear([(a, 2), (b, 1), (a, -2)]) is b
    assert linear([(a, 0)], 5) is const(5)


def test_products_are_flat_with_lifted_coefficients(a: Term, b: Term, c: Term) -> None:
    """(a*b)*c is a*(b*c); constant factors are lifted out: (2a)*(3b) is 6*(a*b)."""
    assert (a * b) * c is a * (b * c)
    assert (2 * a) * (3 * b) is 6 * (a * b)
    assert mul(a, b).op is Op.MUL
    core = (2 * a) * (3 * b)
    assert core.op is Op.ADD and core.arg[0] == (6,)
    assert product([a]) is a
    assert product([const(2), const(3)]) is const(6)
    assert product([]) is const(1)


def test_addends_view(a: Term, b: Term) -> None:
    """addends() views any term as a sum of (atom, coefficient) pairs and a constant."""
    assert const(4).addends() == ([], 4)
    assert a.addends() == ([(a, 1)], 0)
    pairs, k = (2 * a - b + 7).addends()
    assert dict(pairs) == {a: 2, b: -1}
    assert k == 7


# --------------------------------------------------------------- division by zero


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda x: div(x + 1, const(0), FLOOR), "(a + 1) // 0"),
        (lambda x: mod(x * 3, const(0), FLOOR), "(a*3) % 0"),
        (lambda x: div(x - 2, const(0), TRUNC), "(a - 2) truncdiv 0"),
        (lambda x: mod(x, const(0), TRUNC), "(a) truncmod 0"),
        (lambda x: x // 0, "(a) // 0"),
        (lambda x: x % 0, "(a) % 0"),
        (lambda x: (x + 5) // (x - x), "(a + 5) // 0"),
    ],
)
def test_division_by_constant_zero_raises(build: Callable[[Term], Term], text: str) -> None:
    """Dividing by the constant 0 raises TermError naming the numerator and operator."""
    x = var("a", 0, 15)
    with pytest.raises(TermError, match="division by zero") as info:
        build(x)
    assert text in str(info.value)


def test_parse_of_division_by_zero_is_a_parse_error() -> None:
    """Parsing text that divides by a zero constant raises ParseError with its position."""
    with pytest.raises(quorem.ParseError, match="division by zero") as info:
        quorem.parse("b + a // (3 - 3)", {"a": (0, 9), "b": (0, 9)})
    assert info.value.line == 1


def test_division_by_a_variable_is_allowed(a: Term, b: Term) -> None:
    """Dividing by a variable term (even one whose range contains 0) builds a term."""
    t = a // b
    assert t.op is Op.FLOORDIV
    assert mod(a, b, TRUNC).op is Op.TRUNCMOD


# ------------------------------------------------------- operand order of operators


def test_commutative_operands_are_sorted(a: Term, b: Term) -> None:
    """max, min, == and != sort their operands: both orders give the same term."""
    for op in (maximum, minimum):
        assert op(a, b) is op(b, a)
        assert op(a // 2, b) is op(b, a // 2)
    for cmp_op in (Op.EQ, Op.NE):
        assert compare(cmp_op, a, b) is compare(cmp_op, b, a)
    assert maximum(a, b).args == minimum(b, a).args


def test_ordered_comparisons_are_not_commuted(a: Term, b: Term) -> None:
    """a < b and b < a are different terms (< and <= keep their operand order)."""
    assert compare(Op.LT, a, b) is not compare(Op.LT, b, a)
    assert compare(Op.LT, a, b).args == (a, b)
    assert compare(Op.LE, b, a).args == (b, a)


def test_greater_than_is_flipped_less_than(a: Term, b: Term) -> None:
    """a > b is b < a and a >= b is b <= a, also against ints."""
    assert (a > b) is (b < a)
    assert (a >= b) is (b <= a)
    assert (a > 3) is compare(Op.LT, const(3), a)
    assert (a >= 3) is compare(Op.LE, const(3), a)
    assert quorem.parse("a > b", {"a": (0, 15), "b": (-4, 4)}) is (b < a)


def test_compare_rejects_non_comparisons(a: Term, b: Term) -> None:
    """compare() with a non-comparison operator raises TermError."""
    with pytest.raises(TermError):
        compare(Op.ADD, a, b)


# ------------------------------------------------------------ misuse of terms


def test_term_has_no_truth_value(a: Term, b: Term) -> None:
    """bool(t) raises TypeError, so `if a < b:` cannot silently mean something else."""
    with pytest.raises(TypeError, match="truth value"):
        bool(a)
    with pytest.raises(TypeError):
        bool(a < b)
    left: object = a  # as a Term, mypy knows its truth value raises: `and b` unreachable
    with pytest.raises(TypeError):
        _ = left and b  # `and` asks for the truth value of a
    with pytest.raises(TypeError):
        _ = 1 if a < b else 0


def test_terms_cannot_be_constructed(a: Term) -> None:
    """Term() raises TypeError (terms pickle: tests/test_term_pickle.py)."""
    with pytest.raises(TypeError):
        Term()


@pytest.mark.parametrize("value", [True, 1.0, "3", None])
def test_const_rejects_non_integers(value: object) -> None:
    """const() accepts only ints (not bool, float, str or None)."""
    with pytest.raises(TermError):
        const(value)  # type: ignore[arg-type]


def test_var_rejects_bad_names_and_bounds() -> None:
    """var() rejects non-identifiers, non-int bounds and empty ranges."""
    for name in ("1x", "a b", "", "x-y"):
        with pytest.raises(TermError):
            var(name)
    with pytest.raises(TermError, match="empty range"):
        var("x", 5, 4)
    with pytest.raises(TermError):
        var("x", 0.0, 4)  # type: ignore[arg-type]
    with pytest.raises(TermError):
        var("x", False, 4)


def test_value_and_name_accessors(a: Term) -> None:
    """.value works on constants only, .name on variables only (TermError otherwise)."""
    assert const(-3).value == -3
    assert const(-3).is_const
    assert not a.is_const
    assert a.name == "a"
    with pytest.raises(TermError):
        _ = a.value
    with pytest.raises(TermError):
        _ = const(3).name
    with pytest.raises(TermError):
        _ = (a + 1).name


def test_str_and_repr(a: Term, b: Term) -> None:
    """str() prints the text syntax and repr() wraps it."""
    t = a * 2 - b + 1
    assert quorem.parse(str(t), {"a": (0, 15), "b": (-4, 4)}) is t
    assert repr(t) == f"Term({str(t)!r})"


def test_value_ranges_of_leaves_and_sums(a: Term, b: Term) -> None:
    """vmin/vmax of constants, variables and sums; None marks an unbounded side."""
    assert (const(5).vmin, const(5).vmax) == (5, 5)
    assert (a.vmin, a.vmax) == (0, 15)
    t = 2 * a - 3 * b + 1
    assert (t.vmin, t.vmax) == (-11, 43)
    u = var("u", 0, None)
    assert (u.vmin, u.vmax) == (0, None)
    assert ((a - u).vmin, (a - u).vmax) == (None, 15)
    assert (var("f").vmin, var("f").vmax) == (None, None)


# ------------------------------------------------------------------- evaluation


def test_evaluate_floor_and_trunc(a: Term, b: Term) -> None:
    """evaluate follows floor semantics for FLOOR ops and truncation for TRUNC ops."""
    env = {"a": 7, "b": -2}
    assert evaluate(a // b, env) == -4
    assert evaluate(a % b, env) == -1
    assert evaluate(div(a, b, TRUNC), env) == -3
    assert evaluate(mod(a, b, TRUNC), env) == 1
    assert evaluate(maximum(a, b) * minimum(a, b), env) == -14
    assert evaluate((a < b) + (b <= a) * 10 + compare(Op.NE, a, b) * 100, env) == 110


def test_evaluate_missing_variable(a: Term, b: Term) -> None:
    """evaluate raises EvaluationError naming a variable with no value."""
    with pytest.raises(EvaluationError, match="no value for variable b"):
        evaluate(a + b, {"a": 1})


def test_evaluate_out_of_range(a: Term) -> None:
    """A value outside the variable's bounds raises EvaluationError unless check_bounds=False."""
    with pytest.raises(EvaluationError, match="outside its range"):
        evaluate(a + 1, {"a": 16})
    with pytest.raises(EvaluationError, match="outside its range"):
        evaluate(a + 1, {"a": -1})
    assert evaluate(a + 1, {"a": 16}, check_bounds=False) == 17


def test_evaluate_division_by_zero_at_a_point(a: Term, b: Term) -> None:
    """A divisor that is 0 at the point raises EvaluationError, for every division op."""
    for t in (a // b, a % b, div(a, b, TRUNC), mod(a, b, TRUNC)):
        with pytest.raises(EvaluationError, match="division by zero"):
            evaluate(t, {"a": 3, "b": 0})
        assert isinstance(evaluate(t, {"a": 3, "b": 1}), int)


def test_evaluate_big_integers_exactly() -> None:
    """evaluate computes with unbounded Python integers, no overflow."""
    x = var("x", -(2**62), 2**62)
    t = (x * 2**40 + 1) // 3 % (2**70 + 1)
    v = 2**62 - 1
    assert evaluate(t, {"x": v}) == ((v * 2**40 + 1) // 3) % (2**70 + 1)


def test_count_divmod_counts_the_written_tree(a: Term, b: Term) -> None:
    """count_divmod counts every // and % (any semantics), shared subterms once per use."""
    q = a // 4
    assert count_divmod(a + b) == 0
    assert count_divmod(q) == 1
    assert count_divmod(maximum(q, b) + q * b) == 2
    assert count_divmod(mod(div(a, b, TRUNC), const(3), TRUNC)) == 2
    assert count_divmod(compare(Op.LT, a % 3, b % 3)) == 2


@pytest.mark.slow
def test_deep_terms_need_no_recursion() -> None:
    """Terms nested far beyond the recursion limit build, print, parse, evaluate and simplify."""
    x = var("x", 0, 10**6)
    t = x
    depth = 2 * sys.getrecursionlimit()
    for i in range(depth):
        t = maximum(t // 2 + i, x) if i % 2 else (t + 1) % 1000
    text = to_text(t)
    assert quorem.parse(text, {"x": (0, 10**6)}) is t
    v = evaluate(t, {"x": 12345})
    assert evaluate(quorem.simplify(t), {"x": 12345}) == v
    assert count_divmod(t) == depth


def test_brief_text_stays_short_for_terms_exponential_as_text() -> None:
    """A term sharing its subterms prints each use; ``brief`` (for errors) stops early."""
    from quorem.printer import brief

    x = var("x", 0, 9)
    t = x
    for i in range(60):  # 2**60 leaves as text, 60 levels of nodes
        t = maximum(t, var(f"y{i}", 0, 9)) - t // 3
    short = brief(t)
    assert short.endswith("...") and len(short) < 200
    assert short.startswith("max(y59, max(y58, ")
    small = (x + 1) // 2
    assert brief(small) == to_text(small) == "(x + 1)//2"
    assert to_text(small, limit=3) == "(x ..."


def test_tree_size_counts_every_use_of_a_shared_subterm() -> None:
    from quorem.walk import nodes, tree_size

    x, y = var("x", 0, 9), var("y", 0, 9)
    assert tree_size(x) == 1
    assert tree_size((x + 1) // 2) == 4  # //, x + 1, x, 2 (a sum keeps its constant)
    t = x
    for _ in range(40):
        t = maximum(t, y) - t // 3  # t used twice per level
    assert len(list(nodes(t))) < 400
    assert tree_size(t) > 2**40
    assert tree_size(t, t) == 2 * tree_size(t)


def test_rebuilt_while_its_dead_entry_awaits_removal() -> None:
    """A term rebuilt while the table is iterated (so its dead entry is not yet removed)
    is interned once, and the deferred removal leaves the new entry in place."""
    keep = var("keep_iterating", 0, 1)
    values = iter(term_module._TABLE.values())
    assert isinstance(values, Generator)  # WeakValueDictionary.values() is a generator
    assert next(values) is not None  # the table is being iterated: removals are deferred from here
    t = var("dying", 0, 9) * 7919 + 31
    key = (t.op, t.args, t.arg)
    del t
    gc.collect()
    assert term_module._DATA[key]() is None  # dead, still in the table
    again = var("dying", 0, 9) * 7919 + 31
    assert term_module._DATA[key]() is again
    assert var("dying", 0, 9) * 7919 + 31 is again
    values.close()  # the iteration ends: the deferred removals run
    assert term_module._DATA[key]() is again
    assert var("dying", 0, 9) * 7919 + 31 is again
    assert var("keep_iterating", 0, 1) is keep


# --------------------------------------------------- products: one term per expression
_FACTOR_ATOMS = [var("w"), var("y", 0, 9), var("z", -3, 3)]


@st.composite
def _factors(draw: st.DrawFn) -> Term:
    """A product factor: an atom, a constant, or a small sum with a common factor."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.sampled_from(_FACTOR_ATOMS))
    if kind == 1:
        return const(draw(st.integers(-6, 6)))
    atoms = draw(st.lists(st.sampled_from(_FACTOR_ATOMS), min_size=1, max_size=3))
    scale = draw(st.sampled_from([1, -1, 2, -3, 4]))
    return linear(
        [(a, scale * draw(st.integers(1, 3))) for a in atoms], scale * draw(st.integers(-2, 2))
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_factors(), min_size=2, max_size=5), st.randoms(use_true_random=False))
def test_a_product_is_one_term_however_it_is_grouped(factors: list[Term], rnd: Any) -> None:
    """Flat, left-nested and shuffled right-nested products of the same factors are one term."""
    flat = product(factors)
    left = factors[0]
    for f in factors[1:]:
        left = left * f
    shuffled = list(factors)
    rnd.shuffle(shuffled)
    right = shuffled[-1]
    for f in reversed(shuffled[:-1]):
        right = f * right
    assert left is flat, (str(left), str(flat))
    assert right is flat, (str(right), str(flat))


def test_the_fuzzers_product() -> None:
    w, y = var("w"), var("y")
    assert w * ((w - w + 2) * (w + y)) is w * (2 * (w + y)) is product([w, const(2), w + y])
    assert (w * (w + y)) * -8 is w * ((w + y) * -8)
