"""The ``emit`` target: emitted C compiled under UBSan and run, compared with evaluation.

A case is a batch of random trees over bounded variables (one compile per batch, as
``tests/test_emit.py`` does), each emitted as is or simplified first. Emitted Python
and CUDA are only emitted: no fuzz text is ever executed by Python. Skipped (every
case passes) when there is no C compiler.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Final

import quorem
from benchmarks.fuzz.expr import shrink_tree
from benchmarks.fuzz.harness import Case, Target, WrongResultError
from benchmarks.fuzz.terms import I63, TreeGen, build, random_points
from quorem.codegen.code import emit

CC: Final = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
_PER_CASE: Final = 12
_FLAGS: Final = ("-std=c99", "-O1", "-w", "-fsanitize=undefined", "-fno-sanitize-recover=all")


def _finite(lo: int | None, hi: int | None, rng: random.Random) -> tuple[int, int]:
    if lo is None:
        lo = rng.choice((-(2**31), -(2**63), -100, (hi or 0) - 50))
    if hi is None:
        hi = rng.choice((2**31 - 1, 2**63 - 1, 100, lo + 50))
    lo, hi = max(lo, -(2**63)), min(hi, 2**63 - 1)
    return (lo, hi) if lo <= hi else (hi, lo)


def _arg(v: int) -> str:
    return "INT64_MIN" if v == -(2**63) else f"INT64_C({v})"


class Emit(Target):
    """Random terms emitted as C, compiled with ``-fsanitize=undefined``, run, compared."""

    name: ClassVar[str] = "emit"

    def generate(self, rng: random.Random) -> Case:
        items = []
        for _ in range(_PER_CASE):
            gen = TreeGen(rng)
            gen.bounds = {n: _finite(lo, hi, rng) for n, (lo, hi) in gen.bounds.items()}
            tree = gen.tree(rng.randint(1, 4))
            items.append({
                "tree": tree,
                "vars": {n: list(b) for n, b in gen.bounds.items()},
                "semantics": rng.choice(("floor", "trunc", "euclid")),
                "simplify": rng.random() < 0.6,
                "points": random_points(rng, dict(gen.bounds), 5),
            })  # fmt: skip
        return {"items": items}

    def check(self, case: Case) -> int:
        functions: list[str] = []
        calls: list[str] = []
        expected: list[tuple[int, int, dict[str, int]]] = []
        for i, item in enumerate(case["items"]):
            bounds = {n: (lo, hi) for n, (lo, hi) in item["vars"].items()}
            try:
                t = build(item["tree"], bounds, quorem.Semantics(item["semantics"]))
                if item["simplify"]:
                    t = quorem.simplify(t)
                names = sorted(bounds)
                emit(t, names, "python", f"f_{i}")
                emit(t, names, "cuda", f"f_{i}")
                code = emit(t, names, "c", f"f_{i}")
            except quorem.QuoremError:
                continue  # documented refusals (more than 64 bits, zero divisor, ...)
            functions.append(code.replace("#include <stdint.h>\n", ""))
            for p in item["points"]:
                if any(not -(2**63) <= v < I63 for v in p.values()):
                    continue
                try:
                    value = quorem.evaluate(t, p)
                except quorem.EvaluationError:
                    continue
                calls.append(f"f_{i}({', '.join(_arg(p[n]) for n in names)})")
                expected.append((value, i, p))
        if not calls or CC is None:
            return len(functions)
        got = _run(functions, calls)
        for (value, i, p), line in zip(expected, got, strict=False):
            if line != value:
                raise WrongResultError(
                    "emitted C computes another value",
                    f"item {i} at {p}: C gives {line}, quorem.evaluate {value}",
                )
        return len(functions)

    def shrink(self, case: Case) -> Iterator[Case]:
        items = case["items"]
        if len(items) > 1:
            for item in items:
                yield {"items": [item]}
            return
        (item,) = items
        for tree in shrink_tree(item["tree"]):
            yield {"items": [{**item, "tree": tree}]}
        for p in item["points"]:
            yield {"items": [{**item, "points": [p]}]}


def _run(functions: list[str], calls: list[str]) -> list[int]:
    """Compile and run; raise WrongResultError if it does not build or UBSan stops it."""
    assert CC is not None
    lines = [f'    printf("%" PRId64 "\\n", {c});' for c in calls]
    source = (
        "#include <stdint.h>\n#include <inttypes.h>\n#include <stdio.h>\n"
        + "\n".join(functions)
        + "\nint main(void) {\n"
        + "\n".join(lines)
        + "\n    return 0;\n}\n"
    )
    with tempfile.TemporaryDirectory(prefix="quorem-fuzz-") as tmp:
        src, exe = Path(tmp) / "t.c", Path(tmp) / "t"
        src.write_text(source)
        build = subprocess.run([CC, *_FLAGS, str(src), "-o", str(exe)], capture_output=True,
                               text=True, check=False, timeout=120)  # fmt: skip
        if build.returncode != 0:
            first = next((ln for ln in build.stderr.splitlines() if "error" in ln), "")
            raise WrongResultError("emitted C does not compile", first[:300])
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=60)
        if run.returncode != 0:
            first = next((ln for ln in run.stderr.splitlines() if "runtime error" in ln), "")
            error = first.split("runtime error:")[-1].strip()
            kind = error.split(":")[0].split(" of ")[0][:60] or f"exit status {run.returncode}"
            raise WrongResultError(f"emitted C has undefined behaviour: {kind}", error[:300])
        return [int(x) for x in run.stdout.split()]
