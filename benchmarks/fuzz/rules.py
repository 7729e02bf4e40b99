"""The ``rules-file`` target: mutated shipped rules files, loaded and run on small terms."""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path
from typing import ClassVar, Final

import quorem
from benchmarks.fuzz import mutate
from benchmarks.fuzz.harness import Case, Target
from benchmarks.fuzz.terms import TreeGen, build
from quorem import RuleSet, Semantics
from quorem.rules import constraint_rule_files, lowering_rule_files, rule_files

_STEPS: Final = 2_000
_TERMS: Final = 4
_FIELD_RE: Final = re.compile(r"^  (doc|semantics|phase|pattern|let|guard|rewrite):", re.MULTILINE)
_GUARD_WORDS: Final = (
    "vmin(x)", "vmax(y)", "N", "M", "C", "D", "K", "0", "-1", "2**63", "9223372036854775807",
    "gcd(K, D)", "divides(N, M)", "fits_int64(x)", "abs(N)", "sum(K*t)", "all(K > 0)",
    "any(K < 0)", "floordiv(C, D)", "truncmod(C, D)", "euclidmod(C, D)", "ceildiv(x, N)",
    "x // N", "x % 0", "and", "or", "not",
    "max(N, M)", "min(N, M)", "==", "<", "<=", "!=", "(", ")", "y",
)  # fmt: skip
_PATTERNS: Final = (
    "x // N", "x % N", "(x // N) // M", "(x*M + y) // N", "(sum(K*t) + C) // D", "x * y",
    "max(x, y)", "min(x, N)", "x < y", "x == y", "x // y", "(x % N) * M + y", "x",
    "floordiv(x, N)", "truncmod(x, N)", "x + y", "N", "(a*M + y) % N",
)  # fmt: skip


@cache
def shipped_texts() -> tuple[tuple[str, str], ...]:
    """``(file name, text)`` of every shipped rules file."""
    files: list[Path] = [*rule_files(), *constraint_rule_files(), *lowering_rule_files()]
    return tuple((p.name, p.read_text()) for p in files)


def _blocks(text: str) -> list[str]:
    parts = re.split(r"(?m)^(?=rule )", text)
    return [p for p in parts if p.startswith("rule ")]


def _structural(rng: random.Random, blocks: list[str]) -> list[str]:
    """Edits that keep a rules file's shape: fields swapped, dropped, replaced."""
    if not blocks:
        return blocks
    i = rng.randrange(len(blocks))
    b = blocks[i]
    pick = rng.random()
    fields = list(_FIELD_RE.finditer(b))
    if pick < 0.2 and fields:
        # Drop one field (with its continuation lines).
        f = rng.choice(fields)
        end = _field_end(b, f.start())
        b = b[: f.start()] + b[end:]
    elif pick < 0.4:
        # Swap pattern and rewrite: a rule that may grow terms or loop.
        pat = re.search(r"(?m)^  pattern:(.*)$", b)
        rew = re.search(r"(?m)^  rewrite:(.*)$", b)
        if pat and rew:
            b = b.replace(pat.group(0), "  pattern:" + rew.group(1)).replace(
                rew.group(0), "  rewrite:" + pat.group(1)
            )
    elif pick < 0.55:
        word = rng.choice(("pattern", "guard", "rewrite", "let"))
        new = " ".join(rng.choice(_GUARD_WORDS) for _ in range(rng.randint(1, 6)))
        if word == "pattern":
            new = rng.choice(_PATTERNS)
        b = re.sub(rf"(?m)^  {word}:.*$", f"  {word}:   {new}", b, count=1)
    elif pick < 0.65:
        b = re.sub(r"(?m)^  semantics:.*$",
                   "  semantics: " + rng.choice(("floor", "trunc", "euclid", "any", "floor, trunc",
                                                 "floor, euclid", "")),
                   b, count=1)  # fmt: skip
    elif pick < 0.72:
        b = b.replace(
            "\n  doc:", "\n  phase:     " + rng.choice(("early", "main", "x")) + "\n  doc:"
        )
    elif pick < 0.8:
        blocks.append(b)  # a duplicate name
    elif pick < 0.9:
        j = rng.randrange(len(blocks))
        # Take one field from another rule.
        other = list(_FIELD_RE.finditer(blocks[j]))
        if other and fields:
            f = rng.choice(other)
            piece = blocks[j][f.start() : _field_end(blocks[j], f.start())]
            g = rng.choice(fields)
            b = b[: g.start()] + piece + b[_field_end(b, g.start()) :]
    else:
        # Drop the guard: the rule may be unsound, but it must load, run and stop.
        b = re.sub(r"(?m)^  guard:.*\n(    .*\n)*", "", b)
    blocks[i] = b
    return blocks


def _field_end(b: str, start: int) -> int:
    """The offset after the field that starts at ``start`` (its continuation lines too)."""
    nl = b.find("\n", start)
    while nl != -1 and nl + 1 < len(b) and b[nl + 1 : nl + 5] == "    ":
        nl = b.find("\n", nl + 1)
    return len(b) if nl == -1 else nl + 1


class RulesFile(Target):
    """Mutated shipped rules files through ``RuleSet.from_text``; loaded ones are run."""

    name: ClassVar[str] = "rules-file"

    def generate(self, rng: random.Random) -> Case:
        files = shipped_texts()
        fname, text = rng.choice(files)
        blocks = _blocks(text)
        if rng.random() < 0.6 and len(blocks) > 2:
            keep = rng.sample(blocks, rng.randint(1, min(4, len(blocks))))
            blocks = keep
        for _ in range(rng.randint(0, 3)):
            blocks = _structural(rng, blocks)
        out = "".join(blocks)
        if rng.random() < 0.3:
            out = mutate.mutate_text(rng, out, rng.randint(1, 3))
        return {"file": fname, "text": out, "terms_seed": rng.getrandbits(32)}

    def check(self, case: Case) -> int:
        # Arbitrary rules, run to see that the engine survives them: not proven.
        rs = RuleSet.from_text(case["text"], file="<fuzz.rules>", allow_unproven=True)
        rng = random.Random(case["terms_seed"])
        n = 0
        for _ in range(_TERMS):
            gen = TreeGen(rng, rng.randint(1, 3))
            tree = gen.tree(rng.randint(1, 4))
            for sem in (Semantics.FLOOR, Semantics.TRUNC):
                try:
                    t = build(tree, gen.bounds, sem)
                except quorem.TermError:
                    continue
                quorem.explain(t, rs, max_steps=_STEPS)
                n += 1
        return n
