"""Write ``benchmarks/maps/xla_maps.jsonl``: the map classes of issue 16 with expected maps.

``python -m benchmarks.maps.xla_maps`` (deterministic, under a second). Each line is
``{"id", "family", "map", "options", "expected", "note"}``: ``map`` in XLA's textual
form, ``options`` keyword arguments of ``simplify_map`` (``rescale``,
``remove_unused_dims``), ``expected`` the map it must print as. The expected maps are
derived here, independently of the simplifier: residue classes and bounds by
enumerating the variable's interval, rescaled bounds by the class's formula, a
reshape chain back to its shape as the identity. ``tests/test_xla_maps_corpus.py``
checks every case reaches its expected map, and that the expected map reads what the
input reads at every point.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Protocol

OUT = Path(__file__).with_name("xla_maps.jsonl")


def _identity(shape: list[int]) -> str:
    names = [f"d{i}" for i in range(len(shape))]
    box = ", ".join(f"{n} in [0, {s - 1}]" for n, s in zip(names, shape, strict=True))
    return f"({', '.join(names)}) -> ({', '.join(names)}), domain: {box}"


def _class_values(lo: int, hi: int, classes: list[tuple[int, int]]) -> list[int]:
    return [x for x in range(lo, hi + 1) if all(x % n == r for n, r in classes)]


def _rescale_cases() -> list[dict[str, Any]]:
    out = []
    params = [
        (0, 11, [(6, 0)]),
        (0, 11, [(6, 2)]),
        (0, 59, [(2, 0), (3, 0)]),
        (0, 59, [(4, 1), (6, 3)]),
        (-7, 20, [(4, 3)]),
        (-9, -1, [(3, 2)]),
        (5, 100, [(8, 5), (2, 1)]),
        (0, 47, [(16, 15)]),
        (1, 30, [(5, 0), (3, 0)]),
        (0, 127, [(64, 0), (2, 0)]),
    ]
    for lo, hi, classes in params:
        big = math.lcm(*(n for n, _ in classes))
        vals = _class_values(lo, hi, classes)
        cons = ", ".join(f"s0 mod {n} in [{r}, {r}]" for n, r in classes)
        r = vals[0] % big
        text = (
            f"(d0)[s0] -> (d0, s0 floordiv {big}), domain: d0 in [0, 3], s0 in [{lo}, {hi}], {cons}"
        )
        # s0 = big*t + r with 0 <= r < big: s0 // big is t, which runs over the class.
        t_lo, t_hi = (vals[0] - r) // big, (vals[-1] - r) // big
        expected = f"(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [{t_lo}, {t_hi}]"
        out.append(
            {
                "family": "rescale",
                "map": text,
                "options": {"rescale": True},
                "expected": expected,
                "note": f"s0 = {big}*t + {r}",
            }
        )
    # Where it stops: a runtime variable, a dimension, a residue of a sum.
    out.append(
        {
            "family": "rescale",
            "map": "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 11],"
            " rt0 mod 6 in [0, 0]",
            "options": {"rescale": True},
            "expected": "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 6],"
            " rt0 mod 6 in [0, 0]",
            "note": "a runtime variable is the program's value: not rescaled",
        }
    )
    out.append(
        {
            "family": "rescale",
            "map": "(d0) -> (d0 floordiv 4), domain: d0 in [0, 15], d0 mod 4 in [1, 1]",
            "options": {"rescale": True},
            "expected": "(d0) -> (d0 / 4), domain: d0 in [1, 13], d0 mod 4 in [1, 1]",
            "note": "a dimension is an index: not rescaled",
        }
    )
    out.append(
        {
            "family": "rescale",
            "map": "(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 3], s0 in [0, 5],"
            " s1 in [0, 5], (s0 + s1) mod 2 in [0, 0]",
            "options": {"rescale": True},
            "expected": "(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 3], s0 in [0, 5],"
            " s1 in [0, 5], (s0 + s1) mod 2 in [0, 0]",
            "note": "a residue of a sum: no variable's class",
        }
    )
    return out


def _residue_cases() -> list[dict[str, Any]]:
    out = []
    params = [
        (0, 59, [(2, 0), (3, 0)]),
        (0, 59, [(2, 1), (3, 2)]),
        (0, 59, [(4, 1), (6, 3)]),
        (0, 59, [(4, 1), (6, 2)]),
        (0, 59, [(4, 1), (3, 2), (5, 0)]),
        (-20, 20, [(3, 1), (5, 4)]),
        (0, 50, [(7, 0), (11, 0)]),
        (0, 100, [(2, 0), (4, 2), (8, 6)]),
        (3, 90, [(9, 3), (6, 3)]),
        (0, 30, [(5, 2), (10, 3)]),
    ]
    for lo, hi, classes in params:
        vals = _class_values(lo, hi, classes)
        cons = ", ".join(f"s0 mod {n} in [{r}, {r}]" for n, r in classes)
        text = f"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [{lo}, {hi}], {cons}"
        if not vals:
            expected = "(d0) -> (0), domain: KNOWN EMPTY"
            note = "no integer has every residue"
        elif len(vals) == 1:
            expected = f"(d0) -> (d0{f' + {vals[0]}' if vals[0] else ''}), domain: d0 in [0, 3]"
            note = "one point of the interval: pinned"
        else:
            big = math.lcm(*(n for n, _ in classes))
            res = vals[0] % big
            expected = (
                f"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [{vals[0]}, {vals[-1]}],"
                f" s0 mod {big} in [{res}, {res}]"
            )
            note = f"one class modulo lcm {big}"
        out.append(
            {"family": "residues", "map": text, "options": {}, "expected": expected, "note": note}
        )
    return out


_RESHAPE_CHAINS = [
    [[4, 192], [4, 3, 64]],
    [[6, 64], [3, 128]],
    [[4, 192], [3, 256]],
    [[12, 16], [3, 64]],
    [[3, 4, 5], [5, 12]],
    [[8, 6], [6, 8]],
    [[2, 3, 64], [384]],
    [[2, 3, 2, 8, 2, 2], [4, 4, 2, 2, 3, 2], [2, 4, 2, 2, 3, 2, 2]],
    [[4, 4, 3, 2, 2, 2, 2], [16, 2, 2, 2, 6], [4, 2, 2, 4, 2, 3, 2]],
    [[3, 2, 3, 4, 5], [3, 2, 2, 2, 3, 5], [2, 4, 3, 3, 5]],
    [[6, 2, 2, 8, 2], [3, 4, 2, 2, 2, 2, 2], [2, 2, 2, 4, 3, 2, 2]],
    [[4, 192], [4, 3, 64], [12, 64]],
    [[2, 6, 4], [4, 12], [3, 16]],
    [[6, 64], [2, 192], [12, 32]],
    [[2, 3, 16, 2, 2, 2, 2], [2, 6, 8, 4, 2, 2], [3, 4, 4, 4, 2, 2, 2]],
    [[4, 12, 16], [4, 2, 2, 2, 2, 2, 2, 3], [2, 4, 3, 16, 2]],
]


def _reshape_cases() -> list[dict[str, Any]]:
    from quorem.hlo.ops import reshape_map  # noqa: PLC0415
    from quorem.indexing import print_map  # noqa: PLC0415  (package import on demand)
    from quorem.indexing.compose import compose  # noqa: PLC0415

    out = []
    for shapes in _RESHAPE_CHAINS:
        m = reshape_map(shapes[1], shapes[0])
        for src, dst in zip(shapes[1:], [*shapes[2:], shapes[0]], strict=True):
            m = compose(m, reshape_map(dst, src))
        chain = " -> ".join(str(s) for s in [*shapes, shapes[0]])
        out.append(
            {
                "family": "reshape-back",
                "map": print_map(m),
                "options": {},
                "expected": _identity(shapes[0]),
                "note": f"reshape {chain} (composed, not simplified)",
            }
        )
    # Bitcast and back, as its digits come out after the nested divisions merged: the
    # top division d0 // 768 is (d0*64 + d1) // 49152, written over another numerator.
    for wide, (a, b) in ((64, (32, 3)), (96, (32, 3))):
        outer = a * b
        top = outer * 512 // wide  # d0 // top is n // (outer*512) for d1 < wide
        text = (
            f"(d0, d1) -> ((d0 floordiv {top}) * {outer * 512 * 2}"
            f" + (((d0 * {wide} + d1) floordiv {outer}) mod 512) * {outer * 2}"
            f" + (((d0 * {wide} + d1) floordiv {a}) mod {b}) * {a * 2} + (d1 mod {a}) * 2),"
            f" domain: d0 in [0, {top * 2 - 1}], d1 in [0, {wide - 1}]"
        )
        out.append(
            {
                "family": "reshape-back",
                "map": text,
                "options": {},
                "expected": f"(d0, d1) -> (d0 * {wide * 2} + d1 * 2),"
                f" domain: d0 in [0, {top * 2 - 1}], d1 in [0, {wide - 1}]",
                "note": "bitcast and back: the digits of 2*(d0*wide + d1)",
            }
        )
    return out


def _minmax_cases() -> list[dict[str, Any]]:
    out = []
    for op, a, b in [("min", 0, 1), ("max", 0, -1), ("min", 3, -2), ("max", 3, -2), ("min", -1, 0)]:
        best = min(a, b) if op == "min" else max(a, b)

        def shifted(k: int) -> str:
            return "d0" if k == 0 else f"d0 + {k}" if k > 0 else f"d0 - {-k}"

        out.append(
            {
                "family": "min-max",
                "map": f"(d0) -> ({op}({shifted(a)}, {shifted(b)})), domain: d0 in [0, 20]",
                "options": {},
                "expected": f"(d0) -> ({shifted(best)}), domain: d0 in [0, 20]",
                "note": "one term shifted: decided by the shift",
            }
        )
    out.append(
        {
            "family": "min-max",
            "map": "(d0) -> (min(d0, 10 - d0)), domain: d0 in [0, 20]",
            "options": {},
            "expected": "(d0) -> (min(d0, -d0 + 10)), domain: d0 in [0, 20]",
            "note": "two different terms with overlapping ranges: kept",
        }
    )
    return out


class _Bound(Protocol):
    """One side of a constraint, as a test of a value.

    A protocol, not a ``Callable``: the cases pass lambdas that bind loop variables as
    defaults, and a ``Callable[[int], bool]`` context does not type such a lambda.
    """

    def __call__(self, v: int, /) -> bool: ...


def _one_side_exact(k: int, rest: list[int], box_d: range, holds: _Bound) -> bool:
    """Whether ``holds(k*d0 + rest)`` is, for every d0, the same for every rest value."""
    return all(len({holds(k * d + r) for r in rest}) == 1 for d in box_d)


def _constraint_cases() -> list[dict[str, Any]]:
    """``d0*k + rest in [lo, hi]``: a bound on d0 exactly when rest never straddles a step."""
    out = []
    head = "(d0)[s0, s1] -> (d0, s0, s1), domain: "
    for k, form, lo, hi in [
        (6, "d0 * 6 + s0 * 3 + s1", 0, 599),
        (6, "d0 * 6 + s0 * 3 + s1", 6, 599),
        (6, "d0 * 6 + s0 * 3 + s1", 7, 599),
        (6, "d0 * 6 + s1 * 5", 0, 599),
        (4, "d0 * 4 + s0 * 3 + s1", 0, 599),
        (8, "d0 * 8 + s0 * 3 + s1", 0, 799),
    ]:
        rest = [
            3 * s0 + s1 if "s0 * 3" in form else 5 * s1
            for s0 in range(2)
            for s1 in range(3)
            if "s0" in form or s0 == 0
        ]
        rest = sorted(set(rest))
        box = "d0 in [{}, {}], s0 in [0, 1], s1 in [0, 2]"
        text = head + box.format(0, 200) + f", {form} in [{lo}, {hi}]"
        box_d = range(0, 201)
        lo_exact = _one_side_exact(k, rest, box_d, lambda v, lo=lo: lo <= v)
        hi_exact = _one_side_exact(k, rest, box_d, lambda v, hi=hi: v <= hi)
        d_lo = min(d for d in box_d if lo <= k * d + rest[0]) if lo_exact else 0
        d_hi = max(d for d in box_d if k * d + rest[0] <= hi) if hi_exact else 200
        expected = head + box.format(d_lo, d_hi)
        if lo_exact and hi_exact:
            note = "the rest fits inside one step: a bound on d0"
        else:
            expected += f", {form} in [{lo}, {hi}]"
            note = "the rest straddles a step on one side at least: the constraint stays"
        out.append(
            {
                "family": "constraints",
                "map": text,
                "options": {},
                "expected": expected,
                "note": note,
            }
        )
    out.append(
        {
            "family": "unused-dims",
            "map": "(d0, d1) -> (d0), domain: d0 in [0, 200], d1 in [0, 5], d1 mod 2 in [1, 1]",
            "options": {"remove_unused_dims": True},
            "expected": "(d0) -> (d0), domain: d0 in [0, 200]",
            "note": "XLA's RemoveUnusedVars: the dim and its constraint go",
        }
    )
    out.append(
        {
            "family": "unused-dims",
            "map": "(d0, d1) -> (d0), domain: d0 in [0, 200], d1 in [0, 5], d1 mod 2 in [1, 1]",
            "options": {},
            "expected": "(d0, d1) -> (d0), domain: d0 in [0, 200], d1 in [1, 5],"
            " d1 mod 2 in [1, 1]",
            "note": "by default a dimension stays (XLA's Simplify and RemoveUnusedSymbols)",
        }
    )
    out.append(
        {
            "family": "unused-dims",
            "map": "(d0, d1, d2)[s0] -> (d2 + s0), domain: d0 in [0, 3], d1 in [0, 3],"
            " d2 in [0, 3], s0 in [0, 2], d0 + d2 in [0, 4], d1 mod 2 in [0, 0]",
            "options": {"remove_unused_dims": True},
            "expected": "(d0, d1)[s0] -> (d1 + s0), domain: d0 in [0, 3], d1 in [0, 3],"
            " s0 in [0, 2], d0 + d1 in [0, 4]",
            "note": "a dim tied to a used one by a constraint stays",
        }
    )
    out.append(
        {
            "family": "unused-dims",
            "map": "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 5], (d1 * 2) mod 4 in [1, 1]",
            "options": {"remove_unused_dims": True},
            "expected": "(d0, d1) -> (0), domain: KNOWN EMPTY",
            "note": "an unused dim's constraint that cannot hold: empty, not dropped",
        }
    )
    return out


def cases() -> list[dict[str, Any]]:
    """Every case, numbered per family."""
    out = []
    for fam in (_rescale_cases, _residue_cases, _reshape_cases, _minmax_cases, _constraint_cases):
        out += fam()
    counts: dict[str, int] = {}
    for c in out:
        i = counts.get(c["family"], 0)
        counts[c["family"]] = i + 1
        c["id"] = f"{c['family']}-{i:02d}"
    return [{"id": c.pop("id"), **c} for c in out]


def main() -> None:
    """Write the corpus."""
    with OUT.open("w", encoding="utf-8") as f:
        for c in cases():
            f.write(json.dumps(c) + "\n")


if __name__ == "__main__":
    main()
