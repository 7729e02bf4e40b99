"""Benchmark corpora: the index expressions tensor compilers produce, as JSON lines.

Each case is a ``quorem simplify --batch`` input line,
``{"id", "vars": {name: [lo, hi]}, "expr", "semantics": "floor" | "trunc"}``, plus
``"family"``, a ``"source"`` saying how it was built, ``"ideal_ops"`` (the least number of
``//`` and ``%`` an equal quasi-affine expression needs) where it is *proven*, and for
the size ladders ``"size"``. ``ideal_ops`` is absent where it is not known: a benchmark
then reports the count reached but cannot say whether it is the best.

Families (every generated expression appears once with ``//``/``%`` meaning floor
division and once meaning truncation; index variables are non-negative, and so is
every numerator, so both are natural):

* ``tiled``: a loop split into nested tiles, its flat index unflattened into a shape, each
  index and the re-flattened address (``layouts.tiled``); a one-level tiling is a single
  unflattened index;
* ``reshape_aba``: each index of A read back through reshapes A -> B -> A (ideal 0);
* ``reshape_abc``: each index of C after reshapes A -> B -> C;
* ``transpose``: a transposed view flattened, reshaped and read back (ideal 0), and a
  reshape of a transpose read from the original tensor (its address);
* ``strided``: ``(x*s + o)//d`` and ``(x*s + o)%d`` and sums of a few such terms;
* ``seeds``: the shared seed corpus, copied (its ``ideal_ops`` are the seeds' results);
* ``ladder_sum``, ``ladder_nest``: size ladders (a long sum under ``//`` and ``%``; deep
  nesting), ``size`` from 10 to 10 000, for how the cost grows; ``ideal_ops`` by
  construction.

The generated families' ``ideal_ops`` come from :mod:`benchmarks.ideal`, which proves a
value on the case's whole box or gives none, so boxes are kept at most 1024 points
(4096 for ``strided``). Usage::

    python -m benchmarks.corpora --out benchmarks/corpora --seed 0
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

import quorem
from benchmarks.classes import class_cases, class_families
from benchmarks.ideal import ideal_ops
from benchmarks.layouts import Bounds, affine_form, flat, loop_vars, reshape_chain, tiled, unflat

SEEDS = Path(__file__).resolve().parent / "data" / "seed_cases.jsonl"
SEMANTICS = ("floor", "trunc")
LADDER = (10, 30, 100, 300, 1000, 3000, 10000)
DEFAULT_COUNT = 300
FACTORS = (2, 3, 4, 5, 6, 8)
MAX_LAYOUT = 1024  # points of a layout family's box: the ideal is checked on all of them
MAX_REPEATS = 10_000  # draws in a row that repeat earlier expressions before giving up


class Case(TypedDict):
    """One corpus line (the ``--batch`` fields, then the benchmark's own)."""

    id: str
    family: str
    semantics: str
    vars: dict[str, list[int]]
    expr: str
    ideal_ops: NotRequired[int]
    size: NotRequired[int]
    expected: NotRequired[str]
    source: NotRequired[str]


class Expression(TypedDict):
    """An expression a family draws, before it is made a case per semantics."""

    expr: str
    bounds: Bounds
    source: str


# --------------------------------------------------------------------------- shapes
def factorization(rng: random.Random, size: int, max_dim: int = 12) -> tuple[int, ...]:
    """A random shape of ``size`` elements with dimensions of at least 2 (a prime factor
    above ``max_dim`` is one dimension): the reshapes a size admits."""
    dims: list[int] = []
    rest = size
    while rest > 1:
        choices = [d for d in range(2, min(rest, max_dim) + 1) if rest % d == 0]
        d = rng.choice(choices) if choices else rest
        dims.append(d)
        rest //= d
    return tuple(dims) or (1,)


def draw_shape(
    rng: random.Random, max_rank: int = 4, max_size: int = MAX_LAYOUT
) -> tuple[int, ...]:
    """A random shape of rank 1 to ``max_rank`` and at most ``max_size`` elements, dims
    from :data:`FACTORS` (the small sizes tiling and vectorisation use)."""
    while True:
        rank = rng.randint(1, max_rank)
        shape = tuple(rng.choice(FACTORS) for _ in range(rank))
        if math.prod(shape) <= max_size:
            return shape


# ----------------------------------------------------------------------- the driver
def _json_vars(bounds: Bounds) -> dict[str, list[int]]:
    """Bounds as JSON ``[lo, hi]`` pairs, in name order (stable output)."""
    return {n: [bounds[n][0], bounds[n][1]] for n in sorted(bounds)}


def make_case(family: str, index: int, semantics: str, e: Expression, ideal: int | None) -> Case:
    """A case for ``e`` in one semantics; ``ideal`` None leaves ``ideal_ops`` out."""
    case: Case = {
        "id": f"{family}-{index:04d}-{semantics}",
        "family": family,
        "semantics": semantics,
        "vars": _json_vars(e["bounds"]),
        "expr": e["expr"],
    }
    if ideal is not None:
        case["ideal_ops"] = ideal
    case["source"] = e["source"]
    return case


def cases_from(family: str, draws: Iterable[Expression], count: int) -> Iterator[Case]:
    """The first ``count`` cases of the distinct expressions in ``draws``, each in floor
    then truncating semantics, with ``ideal_ops`` where :func:`ideal_ops` proves it."""
    seen: set[tuple[str, tuple[tuple[str, tuple[int, int]], ...]]] = set()
    made = index = repeats = 0
    for e in draws:
        key = (e["expr"], tuple(sorted(e["bounds"].items())))
        if key in seen:
            repeats += 1
            if repeats > MAX_REPEATS:  # the family has fewer distinct expressions
                break
            continue
        seen.add(key)
        repeats = 0
        for semantics in SEMANTICS:
            if made == count:
                return
            term = quorem.parse(e["expr"], e["bounds"], semantics)
            yield make_case(family, index, semantics, e, ideal_ops(term, e["bounds"], semantics))
            made += 1
        index += 1
    if made < count:
        raise ValueError(f"{family}: the draws ran out after {made} of {count} cases")


def _forever(
    draw: Callable[[random.Random], list[Expression]], rng: random.Random
) -> Iterator[Expression]:
    """The expressions of one random layout after another, without end."""
    while True:
        yield from draw(rng)


# ------------------------------------------------------------------------ families
def draw_tiled(rng: random.Random) -> list[Expression]:
    """One shape and one tiling of its loop: each index, and the re-flattened address."""
    shape = draw_shape(rng)
    size = math.prod(shape)
    tiles = (size,) if rng.random() < 0.25 else factorization(rng, size)
    indices, bounds = tiled(tiles, shape)
    where = f"tiles {list(tiles)} into shape {list(shape)}"
    out = [
        Expression(expr=ix, bounds=bounds, source=f"{where}: index {k}")
        for k, ix in enumerate(indices)
    ]
    out.append(Expression(expr=flat(indices, shape), bounds=bounds, source=f"{where}: address"))
    return out


def draw_reshape_aba(rng: random.Random) -> list[Expression]:
    """Each index of A read back through A -> B -> A (each is its loop variable)."""
    a = draw_shape(rng)
    b = factorization(rng, math.prod(a))
    indices, bounds = reshape_chain([a, b, a])
    where = f"reshape {list(a)} -> {list(b)} -> {list(a)}"
    return [
        Expression(expr=ix, bounds=bounds, source=f"{where}: index {k}")
        for k, ix in enumerate(indices)
    ]


def draw_reshape_abc(rng: random.Random) -> list[Expression]:
    """Each index of C reached through A -> B -> C."""
    a = draw_shape(rng)
    b = factorization(rng, math.prod(a))
    c = factorization(rng, math.prod(a))
    indices, bounds = reshape_chain([a, b, c])
    where = f"reshape {list(a)} -> {list(b)} -> {list(c)}"
    return [
        Expression(expr=ix, bounds=bounds, source=f"{where}: index {k}")
        for k, ix in enumerate(indices)
    ]


def _permutation(rng: random.Random, rank: int) -> list[int]:
    """A permutation of ``range(rank)`` other than the identity (rank >= 2)."""
    while True:
        perm = rng.sample(range(rank), rank)
        if perm != sorted(perm):
            return perm


def draw_transpose(rng: random.Random) -> list[Expression]:
    """A transpose of A (dims permuted by ``perm``: ``A'[k] = A[perm[k]]``), as two kernels:

    * round trip: loop over A, index the transposed view, flatten it, reshape it to B and
      back, unflatten into A' and permute back: each index (its loop variable) and the
      address in A (the flat index);
    * a reshape of the transpose read from A: loop over B, unflatten into A', permute
      back to A, and the address in A.
    """
    a = draw_shape(rng, max_rank=4)
    while len(a) < 2:
        a = draw_shape(rng, max_rank=4)
    perm = _permutation(rng, len(a))
    at = [a[p] for p in perm]
    b = factorization(rng, math.prod(a))
    names, bounds = loop_vars(a)
    f = flat(unflat(flat([names[p] for p in perm], at), b), b)
    back_t = unflat(f, at)
    back = [""] * len(a)
    for k, p in enumerate(perm):
        back[p] = back_t[k]
    where = f"transpose {list(a)} by {perm} (via {list(b)})"
    out = [
        Expression(expr=ix, bounds=bounds, source=f"{where}: round trip, index {k}")
        for k, ix in enumerate(back)
    ]
    out.append(
        Expression(expr=flat(back, a), bounds=bounds, source=f"{where}: round trip, address")
    )
    bnames, bbounds = loop_vars(b, "b")
    read_t = unflat(flat(bnames, b), at)
    read = [""] * len(a)
    for k, p in enumerate(perm):
        read[p] = read_t[k]
    out.append(
        Expression(
            expr=flat(read, a),
            bounds=bbounds,
            source=f"reshape {list(b)} of transpose {list(a)} by {perm}: address in A",
        )
    )
    return out


def _strided_numerator(rng: random.Random, var: str, n: int) -> str:
    """``var*s + o`` for ``var`` in ``[0, n - 1]``; sometimes a reversed access
    ``o - var*s`` with ``o`` large enough that it stays non-negative."""
    s = rng.choice((1, 2, 3, 4, 6, 8, 12, 16))
    o = rng.randrange(33)
    if rng.random() < 0.15:
        return f"{o + s * (n - 1)} - {var}*{s}"
    return f"{var}*{s} + {o}" if o else f"{var}*{s}"


def _strided_sum(rng: random.Random, names: Sequence[str], bounds: Bounds) -> str:
    """Two or three scaled ``//``/``%`` terms of strided numerators; about one time in
    three the ``//`` and ``%`` of one numerator by one divisor (a split index put back
    together, as unrolling and vectorisation leave it)."""
    terms = []
    for _ in range(rng.randint(2, 3)):
        var = rng.choice(names)
        num = _strided_numerator(rng, var, bounds[var][1] + 1)
        d = rng.randint(2, 16)
        k = rng.choice((1, 1, 2, 3))
        if rng.random() < 0.35:
            terms.append(f"(({num})//{d})*{d * k} + (({num})%{d})*{k}")
            continue
        op = rng.choice(("//", "%"))
        c = rng.choice((1, 1, 2, d))
        terms.append(f"(({num}){op}{d})*{c}" if c != 1 else f"({num}){op}{d}")
    return " + ".join(terms)


def draw_strided(rng: random.Random) -> list[Expression]:
    """One strided numerator under ``//`` and under ``%``, and a sum of a few such terms,
    over one or two index variables (at most 4096 points)."""
    n = rng.randint(2, 64)
    bounds: Bounds = {"x": (0, n - 1)}
    if rng.random() < 0.5:
        bounds["y"] = (0, rng.randint(2, 4096 // n) - 1)
    num = _strided_numerator(rng, "x", n)
    d = rng.randint(2, 16)
    x_in = f"x in [0, {n - 1}]"
    both = x_in + (f", y in [0, {bounds['y'][1]}]" if "y" in bounds else "")
    return [
        Expression(expr=f"({num})//{d}", bounds={"x": (0, n - 1)}, source=f"strided //, {x_in}"),
        Expression(expr=f"({num})%{d}", bounds={"x": (0, n - 1)}, source=f"strided %, {x_in}"),
        Expression(
            expr=_strided_sum(rng, sorted(bounds), bounds),
            bounds=bounds,
            source=f"sum of strided terms, {both}",
        ),
    ]


GENERATED: dict[str, Callable[[random.Random], list[Expression]]] = {
    "tiled": draw_tiled,
    "reshape_aba": draw_reshape_aba,
    "reshape_abc": draw_reshape_abc,
    "transpose": draw_transpose,
    "strided": draw_strided,
}


def generated_cases(family: str, rng: random.Random, count: int = DEFAULT_COUNT) -> Iterator[Case]:
    """The first ``count`` cases of a generated family (``GENERATED``), drawn from ``rng``."""
    return cases_from(family, _forever(GENERATED[family], rng), count)


# ---------------------------------------------------------------------------- seeds
def seed_cases(path: Path = SEEDS) -> Iterator[Case]:
    """Every case of the shared seed corpus, with its ids prefixed ``seeds-`` (ids stay
    unique across families) and its ``ideal_ops`` (the count of the seeds' results)."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            raw = json.loads(line)
            case: Case = {
                "id": f"seeds-{raw['id']}",
                "family": "seeds",
                "semantics": raw.get("semantics", "floor"),
                "vars": {n: [b[0], b[1]] for n, b in raw["vars"].items()},
                "expr": raw["expr"],
            }
            if "ideal_ops" in raw:
                case["ideal_ops"] = raw["ideal_ops"]
            case["expected"] = raw["expected"]
            case["source"] = raw["source"]
            yield case


# -------------------------------------------------------------------------- ladders
def _ladder_case(
    family: str, kind: str, size: int, semantics: str, e: Expression, *, ideal: int
) -> Case:
    """A ladder case: its ``size`` and ``ideal_ops`` known by construction."""
    return {
        "id": f"{family}-{kind}-{size:05d}-{semantics}",
        "family": family,
        "semantics": semantics,
        "vars": _json_vars(e["bounds"]),
        "expr": e["expr"],
        "ideal_ops": ideal,
        "size": size,
        "source": e["source"],
    }


def ladder_sum_expression(rng: random.Random, n: int) -> Expression:
    """``n`` terms ``x_i*c_i`` dealt in turn to a plain sum, to ``(8*T + y)//8`` and to
    ``(8*U + z)%8``: one long sum under a division and one under a remainder.

    Its value is ``plain + T + z`` (``0 <= y, z <= 7``), affine, so ``ideal_ops`` is 0;
    truncation agrees, every numerator being non-negative.
    """
    parts: list[list[str]] = [[], [], []]
    bounds: Bounds = {"y": (0, 7), "z": (0, 7)}
    for i in range(n):
        c = rng.randint(1, 7)
        bounds[f"x{i}"] = (0, 3)
        parts[i % 3].append(f"x{i}*{c if i % 3 == 0 else 8 * c}")
    plain, div, mod = (" + ".join(p) for p in parts)
    pieces = [plain] if plain else []
    pieces.append(f"({div + ' + ' if div else ''}y)//8")
    pieces.append(f"({mod + ' + ' if mod else ''}z)%8")
    return Expression(expr=" + ".join(pieces), bounds=bounds, source=f"sum of {n} terms")


def ladder_sum_cases(rng: random.Random, sizes: Sequence[int] = LADDER) -> Iterator[Case]:
    """One :func:`ladder_sum_expression` per size, in each semantics (``size``: terms)."""
    for n in sizes:
        e = ladder_sum_expression(rng, n)
        for semantics in SEMANTICS:
            yield _ladder_case("ladder_sum", "terms", n, semantics, e, ideal=0)


NEST_BOUND = 4095  # x in [0, NEST_BOUND]: the halving chain is checked on every x


def nest_identity_expression(rng: random.Random, depth: int) -> Expression:
    """``((...)*m + r)//m`` nested ``depth`` deep around ``x``, ``0 <= r < m``.

    Each level is the identity (``floor((m*y + r)/m) = y``; truncation agrees on the
    non-negative numerators), so the whole is ``x``: ``ideal_ops`` 0.
    """
    levels = []
    for _ in range(depth):
        m = rng.randint(2, 9)
        levels.append(f")*{m} + {rng.randrange(m)})//{m}")
    text = "((" * depth + "x" + "".join(levels)
    return Expression(
        expr=text, bounds={"x": (0, NEST_BOUND)}, source=f"identity nest {depth} deep"
    )


def _halving_values(consts: Sequence[int]) -> list[int]:
    """The halving chain's value at each ``x`` in ``[0, NEST_BOUND]``, computed from the
    construction (not the text); once constant, one value carries the rest."""
    values = list(range(NEST_BOUND + 1))
    for k, c in enumerate(consts):
        if values[0] == values[-1]:
            v = values[0]
            for c2 in consts[k:]:
                v = (v + c2) // 2
            return [v] * len(values)
        values = [(v + c) // 2 for v in values]
    return values


def halving_ideal(consts: Sequence[int]) -> int:
    """``ideal_ops`` of the halving chain with constants ``consts``.

    0 where its table is affine. Otherwise at least 1 (an expression without ``//`` is
    affine) and at most 1: ``floor((floor(u / 2**k) + c) / 2) = floor((u + c*2**k) / 2**(k+1))``,
    so the chain is ``(x + K)//2**depth`` with ``K = sum(c_k * 2**k)`` (truncation agrees,
    the numerators being non-negative), checked here on every ``x``.
    """
    values = _halving_values(consts)
    if affine_form({(x,): v for x, v in enumerate(values)}, {"x": (0, NEST_BOUND)}):
        return 0
    big_k = sum(c << k for k, c in enumerate(consts))
    scale = 1 << len(consts)
    if any(v != (x + big_k) // scale for x, v in enumerate(values)):
        raise AssertionError("the halving chain is not (x + K)//2**depth")
    return 1


def nest_halving_expression(rng: random.Random, depth: int) -> tuple[Expression, int]:
    """``(...(x + c1)//2 + c2)//2 ...`` ``depth`` deep, ``0 <= c <= 3``, and its ideal."""
    consts = [rng.randrange(4) for _ in range(depth)]
    text = "(" * depth + "x" + "".join(f" + {c})//2" for c in consts)
    e = Expression(expr=text, bounds={"x": (0, NEST_BOUND)}, source=f"halving nest {depth} deep")
    return e, halving_ideal(consts)


def ladder_nest_cases(rng: random.Random, sizes: Sequence[int] = LADDER) -> Iterator[Case]:
    """Per depth, the identity nest and the halving nest, in each semantics (``size``:
    the nesting depth)."""
    for depth in sizes:
        identity = nest_identity_expression(rng, depth)
        for semantics in SEMANTICS:
            yield _ladder_case("ladder_nest", "identity", depth, semantics, identity, ideal=0)
        halving, ideal = nest_halving_expression(rng, depth)
        for semantics in SEMANTICS:
            yield _ladder_case("ladder_nest", "halving", depth, semantics, halving, ideal=ideal)


# ------------------------------------------------------------------------------ all
CLASSES = class_families()  # issue 15's classes, one module each in benchmarks/classes
FAMILIES = (*GENERATED, "seeds", "ladder_sum", "ladder_nest", *CLASSES)


def family_rng(family: str, seed: int) -> random.Random:
    """The random stream of one family: families do not shift each other's cases."""
    return random.Random(f"quorem-corpora:{seed}:{family}")


def family_cases(
    family: str, seed: int = 0, count: int = DEFAULT_COUNT, sizes: Sequence[int] = LADDER
) -> Iterator[Case]:
    """The cases of ``family`` for ``seed`` (``count`` for generated families, ``sizes``
    for the ladders; the seed corpus is copied whole)."""
    rng = family_rng(family, seed)
    if family in GENERATED:
        return generated_cases(family, rng, count)
    if family == "seeds":
        return seed_cases()
    if family == "ladder_sum":
        return ladder_sum_cases(rng, sizes)
    if family == "ladder_nest":
        return ladder_nest_cases(rng, sizes)
    if family in CLASSES:
        return class_cases(family, rng)  # type: ignore[return-value]  # a superset of Case
    raise ValueError(f"unknown family {family!r}: one of {', '.join(FAMILIES)}")


def to_line(case: Case) -> str:
    """One JSON line, compact (the ladders' long lines stay small)."""
    return json.dumps(case, separators=(",", ":")) + "\n"


def write_family(out: Path, family: str, cases: Iterable[Case]) -> tuple[int, int]:
    """Write ``out/<family>.jsonl``; return the number of cases and of them with ideal_ops."""
    total = with_ideal = 0
    with (out / f"{family}.jsonl").open("w", encoding="utf-8") as f:
        for case in cases:
            f.write(to_line(case))
            total += 1
            with_ideal += "ideal_ops" in case
    return total, with_ideal


def _sizes(text: str) -> tuple[int, ...]:
    """``--sizes``: comma-separated positive integers."""
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of sizes: {text!r}") from None
    if any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.corpora``: write the corpora, print a line per family."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.corpora", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "corpora")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--count", type=int, default=DEFAULT_COUNT, help="cases per generated family"
    )
    parser.add_argument(
        "--sizes", type=_sizes, default=LADDER, help="ladder sizes, e.g. 10,100,1000"
    )
    parser.add_argument(
        "--families", default=",".join(FAMILIES), help=f"comma-separated, of {', '.join(FAMILIES)}"
    )
    args = parser.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for family in families:
        total, with_ideal = write_family(
            args.out, family, family_cases(family, args.seed, args.count, args.sizes)
        )
        size = (args.out / f"{family}.jsonl").stat().st_size
        print(f"{family}: {total} cases, {with_ideal} with ideal_ops, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
