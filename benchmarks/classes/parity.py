"""Class 7c of issue 15, parity and neighbours, and common factors.

TVM folds ``x % 2 + (x + 1) % 2`` to ``1``, ``(x + 1) // 2 - x // 2`` to ``x % 2``,
``(x + 5) // 2 - (x - 3) // 2`` to ``4``, ``(x + 1) // 2 - x % 2`` to ``x // 2`` and
``y*(x % 8) + 10*(x % 8)`` to ``(y + 10)*(x % 8)``. The cases vary the offsets, the
divisor (any divisor of the offsets' difference, and 2 or -2 for parity), the scale of
the pair, the rest of the sum and the operand order, under floor and truncation
(where the identities need numerators of one sign: boxes on both sides of zero are
edges); and the edges: offsets whose difference the divisor does not divide, a lone
``(x + 1) % 2``, a common factor that is a plain variable or remainders by different
divisors.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from benchmarks.classes import ClassCase, cycle_templates

FAMILY = "parity"
DRAWS = 70
TVM = "TVM test_arith_rewrite_simplify TestFloorModTwo"

Bounds = dict[str, tuple[int, int]]
Draw = tuple[str, Bounds, str, str]


def _offset(c: int) -> str:
    """``(x + c)`` as text."""
    if c == 0:
        return "x"
    return f"(x + {c})" if c > 0 else f"(x - {-c})"


def _quotient(c: int, n: int, semantics: str) -> str:
    """``(x + c) // n`` for n > 0 as text, with a constant c >= n taken out under floor, as
    the simplifier has it: ``(x + 70)//8`` is ``(x + 6)//8 + 8``."""
    if semantics == "trunc" or c < n:
        return f"({_offset(c)}//{n})"
    return f"({_offset(c % n)}//{n} + {c // n})"


def _scaled(k: int, text: str) -> str:
    """``k*(text)`` as an addend, with its sign: ``+ (text)``, ``- 3*(text)``."""
    if k == 1:
        return f" + ({text})"
    if k == -1:
        return f" - ({text})"
    return f" + {k}*({text})" if k > 0 else f" - {-k}*({text})"


def _sum(addends: list[str], rest: str) -> str:
    """The addends (each ``" + t"`` or ``" - t"``) in order, and the rest, as a sum."""
    text = "".join(addends) + (f" + {rest}" if rest else "")
    text = text.strip()
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _box(rng: random.Random, c1: int, c2: int, kinds: tuple[str, ...]) -> tuple[Bounds, str]:
    """A box for x of one of ``kinds``: ``nonneg`` (x + c1 and x + c2 are never negative),
    ``nonpos`` (never positive) or ``both``, and its kind."""
    kind = rng.choice(kinds)
    if kind == "nonneg":
        low = -min(c1, c2)
        return {"x": (low, low + 40)}, kind
    if kind == "nonpos":
        high = -max(c1, c2)
        return {"x": (high - 40, high)}, kind
    return {"x": (-40, 40)}, kind


def _rest(rng: random.Random, bounds: Bounds) -> str:
    """Sometimes another addend, to show the pair is found inside a longer sum."""
    if rng.random() < 0.3:
        bounds["y"] = (-5, 5)
        return "y"
    return ""


def div_difference(rng: random.Random, semantics: str) -> Draw:
    """``k*((x + c1) // d) - k*((x + c2) // d)`` is ``k*(c1 - c2)/d`` when d | c1 - c2
    (under truncation where both numerators have one sign)."""
    d = rng.choice([-1, 1, 1]) * rng.randint(2, 12)
    c2 = rng.randint(-15, 15)
    c1 = c2 + d * rng.choice([-3, -2, -1, 1, 2, 3])
    k = rng.choice([1, 1, 1, -1, 2, 3])
    bounds, kind = _box(rng, c1, c2, ("nonneg", "nonpos", "both"))
    rest = _rest(rng, bounds)
    pair = [_scaled(k, f"{_offset(c1)}//{d}"), _scaled(-k, f"{_offset(c2)}//{d}")]
    rng.shuffle(pair)
    expr = _sum(pair, rest)
    value = k * ((c1 - c2) // d)
    expected = f"{rest} + {value}" if rest else str(value)
    holds = semantics == "floor" or kind != "both"
    return expr, bounds, expected if holds else expr, f"{TVM}: neighbour quotients by {d}"


def div_parity(rng: random.Random, semantics: str) -> Draw:
    """``(x + c1) // 2 - (x + c2) // 2`` for odd c1 - c2 > 0: ``(x + c2) % 2 + (c1 - c2) // 2``
    (floor; truncation where x + c2 >= 0), ``-((x + c1) % 2) + (c1 - c2) // 2`` (truncation
    where x + c1 <= 0); under floor also by -2."""
    d = 2 if semantics == "trunc" or rng.random() < 0.8 else -2
    c2 = rng.randint(-9, 9)
    c1 = c2 + rng.choice([1, 3, 5, 7])
    k = rng.choice([1, 1, 1, -1, 3])
    bounds, kind = _box(rng, c1, c2, ("nonneg", "nonpos", "both"))
    rest = _rest(rng, bounds)
    pair = [_scaled(k, f"{_offset(c1)}//{d}"), _scaled(-k, f"{_offset(c2)}//{d}")]
    rng.shuffle(pair)
    expr = _sum(pair, rest)
    tail = f" + {k * ((c1 - c2) // d)}" + (f" + {rest}" if rest else "")
    if semantics == "floor" or kind == "nonneg":
        expected = f"{k}*({_offset(c2)} % 2){tail}"
    elif kind == "nonpos":
        expected = f"{-k}*({_offset(c1)} % 2){tail}"
    else:
        expected = expr
    return expr, bounds, expected, f"{TVM}: parity of neighbour quotients"


def mod_parity(rng: random.Random, semantics: str) -> Draw:
    """``k*((x + c1) % d) + m*((x + c2) % d)`` for odd c1 - c2 and |d| = 2: one remainder,
    ``(m - k)*((x + c2) % d) + k*(d/2)`` (floor), ``+ k`` or ``- k`` under truncation
    where the numerators are never negative or never positive."""
    d = 2 if rng.random() < 0.8 else -2
    c2 = rng.randint(-9, 9)
    c1 = c2 + rng.choice([1, 3, 5])
    k, m = rng.choice([(1, 1), (1, 1), (2, 1), (1, -1), (3, 2), (-1, 2)])
    bounds, kind = _box(rng, c1, c2, ("nonneg", "nonpos", "both"))
    rest = _rest(rng, bounds)
    pair = [_scaled(k, f"{_offset(c1)} % {d}"), _scaled(m, f"{_offset(c2)} % {d}")]
    rng.shuffle(pair)
    expr = _sum(pair, rest)
    # the remainder that stays is 0 or d/2 (floor); 0 or 1, or 0 or -1 (trunc, by sign)
    constant = k * (d // 2) if semantics == "floor" else {"nonneg": k, "nonpos": -k}.get(kind, 0)
    expected = f"{m - k}*({_offset(c2)} % {d}) + {constant}" + (f" + {rest}" if rest else "")
    holds = semantics == "floor" or kind != "both"
    return expr, bounds, expected if holds else expr, f"{TVM}: parity of neighbour remainders"


def div_minus_mod(rng: random.Random, semantics: str) -> Draw:
    """``(x + c1) // 2 - (x + c2) % 2`` is ``(x + c2) // 2 + (c1 - c2) // 2`` for odd c1 - c2
    (under truncation where both numerators are never negative)."""
    c2 = rng.randint(-6, 6)
    c1 = c2 + rng.choice([1, 3, -1, 5])
    bounds, kind = _box(rng, c1, c2, ("nonneg", "nonneg", "both"))
    rest = _rest(rng, bounds)
    pair = [_scaled(1, f"{_offset(c1)}//2"), _scaled(-1, f"{_offset(c2)} % 2")]
    rng.shuffle(pair)
    expr = _sum(pair, rest)
    quotient = _quotient(c2, 2, semantics)
    expected = f"{quotient} + {(c1 - c2) // 2}" + (f" + {rest}" if rest else "")
    holds = semantics == "floor" or kind == "nonneg"
    return expr, bounds, expected if holds else expr, f"{TVM}: quotient minus parity"


def hermite(rng: random.Random, semantics: str) -> Draw:
    """Unrolled quotients ``sum((x + c + i) // n for i < n)`` are ``x + c`` (Hermite's
    identity, n a power of two; tinygrad's unrolled arange), paired into halves; a pair
    ``(x + c) // d + (x + c + d/2) // d`` is ``(x + c) // (d/2)``. Under truncation where
    the numerators are never negative; edges: across zero, or a pair not half apart."""
    c = rng.randint(-20, 40)
    k = rng.choice([1, 1, 1, 2, -1])
    low = max(0, -c) if rng.random() < 0.75 else -30
    bounds: Bounds = {"x": (low, low + 60)}
    holds = semantics == "floor" or low + c >= 0
    scale = "" if k == 1 else f"{k}*"
    if rng.random() < 0.5:
        n = rng.choice([2, 4, 8])
        parts = [f"{scale}({_offset(c + i)}//{n})" for i in range(n)]
        rng.shuffle(parts)
        expected = f"{k}*{_offset(c)}"
    else:
        n = 2 * rng.randint(2, 8)
        gap = n // 2 if rng.random() < 0.8 else n // 2 + 1
        holds = holds and gap == n // 2
        parts = [f"{scale}({_offset(c)}//{n})", f"{scale}({_offset(c + gap)}//{n})"]
        rng.shuffle(parts)
        expected = f"{k}*{_quotient(c, n // 2, semantics)}"
    expr = " + ".join(parts)
    source = "tinygrad test_uop_symbolic test_arange_unrolled: Hermite's identity"
    return expr, bounds, expected if holds else expr, source


def common_factor(rng: random.Random, semantics: str) -> Draw:
    """``y*(x % d) + k*(x % d)`` is ``(y + k)*(x % d)``, also with ``//``; two products
    sharing the division stay."""
    d = rng.randint(2, 9)
    op = rng.choice(["%", "//"])
    k = rng.choice([-7, -3, -1, 1, 2, 5, 10])
    bounds = {"x": (-10, 10), "y": (-6, 6), "z": (-6, 6)}
    atom = f"(x {op} {d})"
    form = rng.randrange(4)
    if form == 0:
        expr, expected = f"y*{atom}{_scaled(k, atom)}", f"(y + {k})*{atom}"
    elif form == 1:
        expr, expected = f"{k}*{atom} + {atom}*y", f"(y + {k})*{atom}"
    elif form == 2:  # kept: two products are not factored (quadratic matching, see the rules)
        expr = expected = f"y*{atom} + z*{atom}"
    else:  # edge: not one shared division
        expr = rng.choice([f"y*{atom}{_scaled(k, f'(x {op} {d + 1})')}", f"y*z{_scaled(k, 'z')}"])
        expected = expr
    return expr, bounds, expected, "TVM test_arith_rewrite_simplify TestAddIndex: common factor"


def edges(rng: random.Random, semantics: str) -> Draw:
    """Edges: a lone ``(x + 1) % 2``, divisors the offsets' difference is not a multiple of."""
    d = rng.randint(3, 9)
    c = rng.randint(1, d - 1)
    expr = rng.choice(
        [
            f"(x + {c}) % 2",
            f"x % {d} + (x + {c}) % {d}",
            f"(x + {c})//{d} - x//{d}",
            "(x + 2)//2 - x % 2" if semantics == "floor" else f"x % {d} - (x + {c}) % {d}",
        ]
    )
    return expr, {"x": (-40, 40)}, expr, "generated: edge, no neighbour identity"


TEMPLATES = (
    div_difference,
    div_parity,
    mod_parity,
    div_minus_mod,
    hermite,
    common_factor,
    edges,
)


def cases(rng: random.Random) -> Iterator[ClassCase]:
    """``DRAWS`` draws, each a floor and a trunc case."""
    return cycle_templates(FAMILY, TEMPLATES, DRAWS, rng)
