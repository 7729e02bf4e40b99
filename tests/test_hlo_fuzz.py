"""Mutated HLO text (issue 14): an HloError naming line and column, or maps; never a crash.

The seeds are the HLO examples of the HLO test modules. A mutant deletes, duplicates,
swaps or replaces tokens or lines, truncates the text, removes brackets, or turns numbers
negative or huge; it is parsed and every analysis (both directions, logical and
physical, each computation as a fusion, the CLI) is run on it. Only an
:class:`~quorem.hlo.parse.HloError` naming ``file:line:col`` may come out.

Run as a script for a longer campaign, each mutant under an alarm::

    .venv/bin/python tests/test_hlo_fuzz.py 20000 [SEED]
"""

from __future__ import annotations

import argparse
import ast
import io
import random
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from pathlib import Path
from types import TracebackType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

from quorem.cli.hlo import add_parser
from quorem.errors import QuoremError
from quorem.hlo.indexing import (
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from quorem.hlo.parse import HloError, Module, parse_hlo

_SEED_MODULES = ("test_hlo_indexing", "test_hlo_parse", "test_hlo_cli")
_NESTED = """
HloModule nested
inner {
  p0 = f32[4,6]{0,1} parameter(0)
  p1 = s32[] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  ROOT d = f32[2,4] dynamic-slice(t, p1, p1), dynamic_slice_sizes={2,4}
}
outer {
  q0 = f32[4,6] parameter(0)
  q1 = s32[] parameter(1)
  f = f32[2,4] fusion(q0, q1), kind=kLoop, calls=inner
  ROOT r = f32[8] reshape(f)
}
ENTRY e {
  a = f32[4,6] parameter(0)
  i = s32[] constant(1)
  ROOT o = f32[8] fusion(a, i), kind=kLoop, calls=outer
}
"""
_TUPLES = """
ENTRY e {
  p0 = f32[8,3] parameter(0)
  p1 = f32[8,3] parameter(1)
  c = f32[] constant(0)
  r = (f32[3], f32[3]) reduce(p0, p1, c, c), dimensions={0}, to_apply=add
  g = f32[3] get-tuple-element(r), index=1
  s = f32[2] slice(g), slice={[0:3:2]}
  w = f32[5] pad(s, c), padding=1_1_1
  v = f32[4] reduce-window(w, c), window={size=2 stride=1 pad=0_0}, to_apply=add
  ROOT t = (f32[4], f32[2]) tuple(v, s)
}
"""


@cache
def seeds() -> tuple[str, ...]:
    """The HLO texts written in the HLO test modules (string literals that parse), two more."""
    found: dict[str, None] = {_NESTED: None, _TUPLES: None}
    here = Path(__file__).resolve().parent
    for name in _SEED_MODULES:
        # Read as syntax, not imported or run: only the literal strings are wanted.
        tree = ast.parse((here / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and "parameter(" in text:
                with suppress(HloError):
                    parse_hlo(text)
                    found[text] = None
    return tuple(found)


# ---------------------------------------------------------------------------- mutation
_TOKEN_RE = re.compile(r"\s+|[A-Za-z0-9_.%$+\-]+|.", re.DOTALL)
_NUMBER_RE = re.compile(r"-?[0-9]+")
_BRACKETS = "()[]{}"
_NUMBERS = ("0", "1", "-1", "-7", "2", "3", "9999", str(10**30), str(2**63), str(2**63 - 1))
_PIECES = (
    "(", ")", "[", "]", "{", "}", ",", "=", ":", "->", "\n", "ROOT", "ENTRY", "fusion",
    "calls=e", "parameter(0)", "f32[]", "s32[2]", "(f32[2], f32[2])", "{0}", "{1,0}", "x",
    "get-tuple-element", "index=1", "dimensions={0}", "dimensions={1,0}", "slice={[0:2:1]}",
    "padding=0_0_0", "window={size=2}", "tuple", "reshape", "bitcast", "dot", "%", "/*",
)  # fmt: skip


def mutate(text: str, rng: random.Random) -> str:
    """``text`` after one to four random edits of its tokens, lines or numbers."""
    for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
        text = _edit(text, rng)
    return text


def _edit(text: str, rng: random.Random) -> str:
    toks = _TOKEN_RE.findall(text)
    words = [i for i, t in enumerate(toks) if not t.isspace()]
    if not words:
        return text + rng.choice(_PIECES)
    i, j = rng.choice(words), rng.choice(words)
    # Number edits and word-for-word swaps most often: they keep the text parseable.
    kind = rng.choice((0, 1, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 7, 8, 9, 10, 11))
    if kind == 0:
        del toks[i]
    elif kind == 1:
        toks.insert(i, toks[i])
    elif kind == 2:
        toks[i], toks[j] = toks[j], toks[i]
    elif kind == 3:
        alike = [k for k in words if toks[k][:1].isalpha() == toks[i][:1].isalpha()]
        toks[i] = toks[rng.choice(alike)]
    elif kind in (4, 5):
        numbers = [k for k in words if _NUMBER_RE.fullmatch(toks[k])] or [i]
        k = rng.choice(numbers)
        toks[k] = rng.choice((*_NUMBERS, "-" + toks[k], toks[k] * 3, "7" * 4400))
    elif kind == 6:
        brackets = [k for k in words if toks[k] in _BRACKETS] or [i]
        del toks[rng.choice(brackets)]
    elif kind == 7:
        toks.insert(i, rng.choice(_PIECES))
    elif kind == 8:
        return text[: rng.randrange(len(text) + 1)]
    else:
        lines = text.split("\n")
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        if kind == 9:
            del lines[a]
        elif kind == 10:
            lines.insert(a, lines[b])
        else:
            lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines)
    return "".join(toks)


# ---------------------------------------------------------------------------- analysis
def _cli(text: str, *argv: str) -> None:
    parser = argparse.ArgumentParser(prog="quorem")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["hlo", "-", *argv])
    stdin, sys.stdin = sys.stdin, io.StringIO(text)
    try:
        args.handler(args, io.StringIO(), io.StringIO())
    finally:
        sys.stdin = stdin


class _Refusal:
    """Let through an HloError that names the mutant's file, line and column.

    A class, not a generator: its ``__exit__`` returning ``bool`` tells the type checker
    that the error may be swallowed, so the code after ``with`` may run with the body cut
    short.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if not isinstance(exc, QuoremError):
            return False  # no error, or one that is no refusal: it goes on
        assert isinstance(exc, HloError), repr(exc)
        assert exc.source in ("mutant.hlo", "<stdin>"), repr(exc)
        assert exc.line >= 1, repr(exc)
        assert exc.col >= 1, repr(exc)
        return True


def analyse(text: str) -> Module | None:
    """Parse ``text`` and run every analysis on it; None when it does not parse.

    Only an :class:`HloError` naming ``file:line:col`` may come out of any of them.
    """
    module: Module | None = None
    with _Refusal():
        module = parse_hlo(text, "mutant.hlo")
    if module is None:
        return None
    calls: list[tuple[Callable[..., object], tuple[object, ...]]] = []
    for comp in module.computations[:3]:
        root = comp.root
        for k in range(min(len(root.shape.arrays()), 2)):
            calls += [(output_to_input, (module, comp, root, k))]
            calls += [(fused_output_to_input, (module, comp, k))]
        calls += [(input_to_output, (module, comp, root, i)) for i in range(len(root.operands[:3]))]
        params = len(comp.parameters())  # the parser checked the numbers: no error
        calls += [(fused_input_to_output, (module, comp, n)) for n in range(min(params, 3))]
    for physical in (False, True):
        for fn, args in calls:
            with _Refusal():
                fn(*args, physical=physical)
    for argv in (
        ["--json"],
        ["--input-to-output", "--operand", "0", "--no-simplify"],
        ["--fused", "--physical", "--output", "1"],
    ):
        with _Refusal():
            _cli(text, *argv)
    return module


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_seeds_give_hlo_errors_or_maps(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(seeds()), label="seed")
    mutant = mutate(text, data.draw(st.randoms(use_true_random=False), label="rng"))
    analyse(mutant)


@pytest.mark.slow
def test_the_seeds_are_analysed() -> None:
    # The mutants start from text that parses: a fuzzer of parse errors alone would miss
    # every bug past the parser.
    assert len(seeds()) >= 30
    assert all(analyse(text) is not None for text in seeds())


# ---------------------------------------------------------------------------- campaign
class _TimeoutError(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _TimeoutError


def campaign(count: int, seed: int, limit: float = 20.0) -> int:
    """Analyse ``count`` mutants; print each failure (crash or hang); the number of them."""
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    failures = errors = 0
    start = time.monotonic()
    for n in range(count):
        mutant = mutate(rng.choice(seeds()), rng)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            if analyse(mutant) is None:
                errors += 1
        except _TimeoutError:
            failures += 1
            print(f"--- mutant {n}: no answer in {limit} s\n{mutant}", flush=True)
        except Exception:  # anything else is the bug being looked for
            failures += 1
            print(f"--- mutant {n}\n{mutant}\n{traceback.format_exc()}", flush=True)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    took = time.monotonic() - start
    print(
        f"{count} mutants of {len(seeds())} seeds in {took:.0f} s: {errors} refused with "
        f"HloError, {count - errors - failures} parsed, {failures} failures"
    )
    return failures


if __name__ == "__main__":
    sys.exit(1 if campaign(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0) else 0)
