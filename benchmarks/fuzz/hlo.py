"""The ``hlo-text`` target: mutated HLO modules through the parser and op indexing.

Seeds are the HLO texts of ``tests/test_hlo_*.py``, read as string literals with
``ast`` (never imported or run), a few written here, and snippets of the real modules
of ``benchmarks/data/hlo/`` (what XLA prints: stack-frame tables, shardings, Shardy
attributes, layouts, metadata): each computation of a module as a module of its own,
behind the module's header and tables. Some cases analyse the whole module
(``analyse_module``, as ``quorem hlo --all``).
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import ClassVar, Final

from benchmarks.fuzz import mutate
from benchmarks.fuzz.harness import Case, Target, WrongResultError
from quorem import QuoremError
from quorem.hlo.indexing import (
    OperandMaps,
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from quorem.hlo.module import analyse_module
from quorem.hlo.parse import parse_hlo
from quorem.indexing import parse_map, print_map

_TESTS: Final = Path(__file__).resolve().parents[2] / "tests"
_OWN_SEEDS: Final = (
    "p0 = f32[8,4] parameter(0)\nROOT r = f32[4,8] transpose(p0), dimensions={1,0}",
    "p0 = f32[12] parameter(0)\nROOT r = f32[3,4] reshape(p0)",
    "p0 = f32[10,20] parameter(0)\nROOT s = f32[5,10] slice(p0), slice={[0:10:2], [5:15]}",
    "p0 = f32[4] parameter(0)\nc = f32[] constant(0)\nROOT p = f32[9] pad(p0, c), padding=1_2_1",
    "p0 = f32[4,6] parameter(0)\nc = f32[] constant(0)\nROOT r = f32[4] reduce(p0, c), "
    "dimensions={1}, to_apply=add",
    # Issue 23's ops, as JAX prints them.
    "x = f32[8,16] parameter(0)\ni = s32[3,8,1] parameter(1)\nROOT g = f32[3,8,16] gather(x, i), "
    "offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
    "slice_sizes={1,16}",
    "x = f32[8,16] parameter(0)\ni = s32[3,1] parameter(1)\nu = f32[3,16] parameter(2)\n"
    "ROOT s = f32[8,16] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
    "x = f32[2,8,8,3] parameter(0)\ng = f32[2,4,4,3] parameter(1)\nc = f32[] constant(0)\n"
    "ROOT s = f32[2,8,8,3] select-and-scatter(x, g, c), window={size=1x2x2x1 stride=1x2x2x1}, "
    "select=ge, scatter=add",
    "x = f32[8,16] parameter(0)\ni = s32[8,16] iota(), iota_dimension=1\n"
    "ROOT s = (f32[8,16], s32[8,16]) sort(x, i), dimensions={1}, is_stable=true, to_apply=lt",
    "x = f32[8,16] parameter(0)\nROOT t = (f32[8,3], s32[8,3]) topk(x), k=3, largest=true",
    "x = f32[8,16] parameter(0)\nROOT a = f32[8,16] all-reduce(x), replica_groups={}, to_apply=add",
    "HloModule m\nrelu {\n  a = f32[4,16] parameter(0)\n  z = f32[] constant(0)\n"
    "  b = f32[4,16] broadcast(z), dimensions={}\n  ROOT m = f32[4,16] maximum(a, b)\n}\n"
    "ENTRY e {\n  x = f32[4,16] parameter(0)\n  ROOT c = f32[4,16] call(x), to_apply=relu\n}",
)
_OPCODES: Final = (
    "add", "broadcast", "transpose", "reshape", "bitcast", "copy", "slice", "reverse",
    "concatenate", "pad", "reduce", "reduce-window", "dot", "gather", "iota", "constant",
    "dynamic-slice", "dynamic-update-slice", "tuple", "get-tuple-element", "fusion",
    "convolution", "exponential", "parameter", "scaled-dot", "all-gather", "scan",
    "call", "scatter", "select-and-scatter", "sort", "topk", "all-reduce", "custom-call",
    "while",
)  # fmt: skip
_DIM_RE: Final = re.compile(r"\[([0-9,\s]*)\]")
_OP_RE: Final = re.compile(r"(?<=\] )([a-z][a-z\-]*)(?=\()")
_INT_RE: Final = re.compile(r"\d+")


_CORPUS: Final = Path(__file__).resolve().parents[1] / "data" / "hlo"
_COMPUTATION_RE: Final = re.compile(r"^(?:ENTRY )?%?[\w.\-]+ .*\{\n(?:.*\n)*?\}$", re.MULTILINE)
_MAX_SNIPPET: Final = 6000  # characters: a seed analysed thousands of times stays quick


def corpus_snippets() -> list[str]:
    """Each computation of each corpus module, behind its module's header and tables."""
    out: list[str] = []
    for path in sorted(_CORPUS.glob("*.hlo")):
        text = path.read_text(encoding="utf-8")
        comps = list(_COMPUTATION_RE.finditer(text))
        if not comps:
            continue
        header = text[: comps[0].start()]
        for m in comps:
            body = m.group()
            if len(body) <= _MAX_SNIPPET:
                out.append(header[:_MAX_SNIPPET] + body + "\n")
    return out


@cache
def seeds() -> tuple[str, ...]:
    """The HLO string literals of the HLO tests, this module's own, and corpus snippets."""
    found: list[str] = []
    for path in sorted(_TESTS.glob("test_hlo_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if "parameter(" in text or "HloModule" in text:
                    found.append(text)
    return tuple(found) + _OWN_SEEDS + tuple(corpus_snippets())


@cache
def valid_seeds() -> tuple[str, ...]:
    """The seeds that parse as they are."""
    out = []
    for text in seeds():
        try:
            parse_hlo(text)
        except QuoremError:
            continue
        out.append(text)
    return tuple(out)


def _hlo_edit(rng: random.Random, text: str) -> str:
    """An edit that keeps HLO's shape: a dimension size, an opcode, an integer changed."""
    pick = rng.random()
    if pick < 0.35:
        sizes = list(_DIM_RE.finditer(text))
        if sizes:
            m = rng.choice(sizes)
            dims = [rng.choice((0, 1, 2, 3, 5, 8, 10, 20, 64, 2**31, 2**40)) for _ in
                    range(rng.choice((0, 1, 2, 3, 4)))]  # fmt: skip
            return text[: m.start()] + f"[{','.join(map(str, dims))}]" + text[m.end() :]
    if pick < 0.55:
        ops = list(_OP_RE.finditer(text))
        if ops:
            m = rng.choice(ops)
            return text[: m.start()] + rng.choice(_OPCODES) + text[m.end() :]
    if pick < 0.85:
        ints = list(_INT_RE.finditer(text))
        if ints:
            m = rng.choice(ints)
            value = rng.choice((0, 1, 2, 3, 4, 7, 9, 10, 100, -1, 2**31, 2**63, 2**64))
            return text[: m.start()] + str(value) + text[m.end() :]
    # Splice a line from another seed.
    other = rng.choice(seeds()).strip().split("\n")
    lines = text.split("\n")
    lines.insert(rng.randint(0, len(lines)), rng.choice(other))
    return "\n".join(lines)


class HloText(Target):
    """HLO text through ``parse_hlo`` and the output-to-input / input-to-output maps."""

    name: ClassVar[str] = "hlo-text"

    def generate(self, rng: random.Random) -> Case:
        text = rng.choice(valid_seeds() if rng.random() < 0.9 else seeds())
        if "{}" in text and rng.random() < 0.8:
            text = text.replace("{}", str(rng.choice((0, 1, 5, 42, 99, -3, 2**40))))
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
            text = _hlo_edit(rng, text)
        if rng.random() < 0.1:
            text = mutate.mutate_text(rng, text, rng.randint(1, 3))
        return {
            "text": text,
            "physical": rng.random() < 0.25,
            "simplify": rng.random() < 0.85,
            "fused": rng.random() < 0.3,
            "output": 1 if rng.random() < 0.05 else 0,
            "all": rng.random() < 0.1,
        }

    def check(self, case: Case) -> int:
        module = parse_hlo(case["text"])
        comp = module.entry
        opts = {"physical": bool(case["physical"]), "simplify": bool(case["simplify"])}
        n = 0
        if case.get("all"):
            for record in analyse_module(module, **opts):
                for per in record.outputs:
                    n += self._maps(per)
            return n
        if case["fused"]:
            n += self._maps(fused_output_to_input(module, comp, case["output"], **opts))
            for p in sorted(comp.parameters())[:3]:
                n += self._maps(fused_input_to_output(module, comp, p, **opts))
            return n
        root = comp.root
        n += self._maps(output_to_input(module, comp, root, case["output"], **opts))
        for k in range(min(3, len(comp.operands_of(root)))):
            n += self._maps(input_to_output(module, comp, root, k, **opts))
        return n

    @staticmethod
    def _maps(per: Sequence[OperandMaps]) -> int:
        n = 0
        for maps in per:
            for m in maps:
                if not m:  # unknown indexing
                    continue
                text = print_map(m)
                if len(text) < 5000 and parse_map(text) != m:
                    raise WrongResultError("HLO map does not print and parse back", text)
                n += 1
        return n
