"""Building terms from text: one n-ary product or sum per chain, the same term as before.

quorem.build collects a chain of ``*`` (in any association, parenthesised or not)
into one call of ``product`` and a chain of ``+``/``-``/negations/constant factors into
one ``linear`` call, instead of one binary operation per operator (which re-flattened and
re-sorted the growing product each time: quadratic, issue 14). The canonical form must
not notice: every text gives the term that building it one operator at a time gives.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

import quorem
from quorem import term as tm
from quorem.ops import Op, Semantics

BOUNDS = {"x": (0, 7), "y": (-3, 5), "z": (None, None)}
VARS = {name: tm.var(name, lo, hi) for name, (lo, hi) in BOUNDS.items()}

# A tree is ("leaf", text) or (operator, children); rendered fully parenthesised (or not)
# and built bottom-up with the binary functions of quorem.term.
Tree = tuple[str, object]

_BINARY: dict[str, Callable[[tm.Term, tm.Term], tm.Term]] = {
    "+": lambda a, b: tm.linear([(a, 1), (b, 1)]),
    "-": lambda a, b: tm.linear([(a, 1), (b, -1)]),
    "*": tm.mul,
    "//": lambda a, b: tm.div(a, b, Semantics.FLOOR),
}


def _leaves() -> st.SearchStrategy[Tree]:
    consts = st.sampled_from(["0", "1", "2", "3", "7", "0x10"])
    names = st.sampled_from(sorted(VARS))
    return st.tuples(st.just("leaf"), st.one_of(consts, names))


def _extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    binary = st.tuples(st.sampled_from(["+", "-", "*", "*", "*"]), st.tuples(children, children))
    divided = st.tuples(st.just("//"), st.tuples(children, st.just(("leaf", "3"))))
    unary = st.tuples(st.sampled_from(["neg", "pos"]), st.tuples(children))
    maximum = st.tuples(st.just("max"), st.tuples(children, children))
    return st.one_of(binary, binary, divided, unary, maximum)


TREES = st.recursive(_leaves(), _extend, max_leaves=24)


def _text(tree: Tree, parens: bool) -> str:
    op, payload = tree
    if op == "leaf":
        assert isinstance(payload, str)
        return payload
    kids = [_text(k, parens) for k in payload]  # type: ignore[attr-defined]
    if op == "neg":
        return f"-({kids[0]})"
    if op == "pos":
        return f"+({kids[0]})"
    if op == "max":
        return f"max({kids[0]}, {kids[1]})"
    if parens or op != "*":
        return f"({kids[0]}) {op} ({kids[1]})"
    # Unparenthesised, a product of products is one chain: the association changes.
    loose = [k[0] in ("*", "leaf", "max") for k in payload]  # type: ignore[attr-defined]
    return " * ".join(k if bare else f"({k})" for k, bare in zip(kids, loose, strict=True))


def _build(tree: Tree) -> tm.Term:
    op, payload = tree
    if op == "leaf":
        assert isinstance(payload, str)
        return VARS[payload] if payload in VARS else tm.const(int(payload, 0))
    kids = [_build(k) for k in payload]  # type: ignore[attr-defined]
    if op == "neg":
        return tm.linear([(kids[0], -1)])
    if op == "pos":
        return kids[0]
    if op == "max":
        return tm.maximum(kids[0], kids[1])
    return _BINARY[op](kids[0], kids[1])


@settings(max_examples=examples(400), deadline=None)
@given(TREES, st.booleans())
def test_chains_build_the_binary_term(tree: Tree, parens: bool) -> None:
    """Text parsed in one go is the term built one binary operation at a time."""
    text = _text(tree, parens)
    want = _build(tree)
    assert quorem.parse(text, BOUNDS) is want, text


def test_long_product_in_every_association() -> None:
    """A product of 10 000 distinct factors, flat, left- and right-nested: one MUL node."""
    n = 10_000
    names = [f"v{i}" for i in range(n)]
    flat = "*".join(names)
    left = "(" * (n - 1) + names[0] + "".join(f"*{v})" for v in names[1:])
    right = "*(".join(names) + ")" * (n - 1)
    scaled = "*".join(f"{v}*-1" for v in names) + "*3"
    want = tm.product([tm.var(v) for v in names])
    assert quorem.parse(flat) is want
    assert quorem.parse(left) is want
    assert quorem.parse(right) is want
    assert quorem.parse(scaled) is tm.linear([(want, 3)])
    assert want.op is Op.MUL and len(want.args) == n


def test_long_sum_in_every_association() -> None:
    """A sum of 10 000 addends: flat, right-nested differences, negated 10 000 times."""
    n = 10_000
    names = [f"v{i}" for i in range(n)]
    atoms = [tm.var(v) for v in names]
    flat = " + ".join(names)
    assert quorem.parse(flat) is tm.linear((a, 1) for a in atoms)
    # v0 - (v1 - (v2 - ...)): signs alternate.
    nested = " - (".join(names) + ")" * (n - 1)
    assert quorem.parse(nested) is tm.linear((a, (-1) ** i) for i, a in enumerate(atoms))
    negated = "-(" * n + flat + " + 5" + ")" * n  # an even number of negations
    assert quorem.parse(negated) is tm.linear(((a, 1) for a in atoms), 5)
    scaled = "2*(" * 20 + flat + ")" * 20 + " - v0"
    want = tm.linear([(atoms[0], 2**20 - 1), *((a, 2**20) for a in atoms[1:])])
    assert quorem.parse(scaled) is want
