"""Parse and print times of long and deeply nested expressions, at 1k, 10k and 100k.

    .venv/bin/python benchmarks/parse_ladder.py              # sizes 1000 10000 100000
    .venv/bin/python benchmarks/parse_ladder.py 1000 10000   # chosen sizes

Each shape is built at each size ``n`` (factors, addends or nesting levels) and timed
through ``quorem.parse`` (tokenize, parse, build the canonical term) and ``to_text``.
The last column is the parse time's growth over the previous size: about 10 for each
tenfold step when the cost is linear (or n log n), about 100 when it is quadratic.
The best of ``--repeats`` runs is kept; terms are interned weakly and each run drops
its term, so no run is a cache lookup.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import quorem
from quorem.printer import to_text


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


def _flat_product(n: int) -> str:
    return "*".join(_names(n))


def _left_nested_product(n: int) -> str:
    return "(" * (n - 1) + "x" + "*y)" * (n - 1) + "*y"


def _right_nested_product(n: int) -> str:
    names = _names(n)
    return "*(".join(names) + ")" * (n - 1)


def _scaled_product(n: int) -> str:
    return "*".join(f"{name}*-3" for name in _names(n))


def _flat_sum(n: int) -> str:
    return " + ".join(_names(n))


def _right_nested_difference(n: int) -> str:
    names = _names(n)
    return " - (".join(names) + ")" * (n - 1)


def _negated_sum(n: int) -> str:
    return "-(" * n + _flat_sum(n) + ")" * n


def _parentheses(n: int) -> str:
    return "(" * n + "x" + ")" * n


def _minus_chain(n: int) -> str:
    return "-" * n + "x"


def _nested_max(n: int) -> str:
    return "max(" * n + "x" + "".join(f", x{i})" for i in range(n))


def _nested_divisions(n: int) -> str:
    return "(" * n + "x" + "".join(f" // 2 + x{i})" for i in range(n))


SHAPES: dict[str, Callable[[int], str]] = {
    "x0*x1*...": _flat_product,
    "((x*y)*y)*...": _left_nested_product,
    "x0*(x1*(...))": _right_nested_product,
    "x0*-3*x1*-3...": _scaled_product,
    "x0 + x1 + ...": _flat_sum,
    "x0 - (x1 - (...))": _right_nested_difference,
    "-(-(...sum...))": _negated_sum,
    "((((x))))": _parentheses,
    "----x": _minus_chain,
    "max(max(...))": _nested_max,
    "(((x//2 + x0)//2 ...": _nested_divisions,
}


def _time(text: str, repeats: int) -> tuple[float, float]:
    """Best parse and print seconds of ``text`` over ``repeats`` runs."""
    best_parse = best_print = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        term = quorem.parse(text)
        parsed = time.perf_counter()
        to_text(term)
        printed = time.perf_counter()
        best_parse = min(best_parse, parsed - start)
        best_print = min(best_print, printed - parsed)
        del term
    return best_parse, best_print


def main(argv: list[str] | None = None) -> None:
    """Print one row per shape and size: characters, parse and print seconds, growth."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'shape':24} {'n':>7} {'chars':>9} {'parse s':>9} {'print s':>9} {'growth':>7}")
    for label, make in SHAPES.items():
        previous: float | None = None
        for n in args.sizes:
            text = make(n)
            parse_s, print_s = _time(text, args.repeats)
            growth = f"{parse_s / previous:7.1f}" if previous else f"{'':7}"
            print(f"{label:24} {n:7} {len(text):9} {parse_s:9.4f} {print_s:9.4f} {growth}")
            previous = parse_s


if __name__ == "__main__":
    main()
