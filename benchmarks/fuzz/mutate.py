"""Text mutations: byte and token edits, splices, repeats, hostile characters."""

from __future__ import annotations

import random
from typing import Final

_INTERESTING: Final = (
    "0", "-1", "1", "2147483647", "2147483648", "-2147483648", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "18446744073709551616", "0x7fffffff",
    "1" * 50, "", " ", "\n", "\t", "(", ")", "[", "]", "{", "}", ",", ":", "=", "-", "+",
    "*", "//", "%", "#", "\"", "'", "\\", "\x00", "\ufeff", "\u200b", "é", "\U0001d465", "\ud800",
    "max", "min", "floordiv", "mod", "in", "domain:", "->", "rule", "pattern:", "guard:",
)  # fmt: skip


def mutate_text(rng: random.Random, text: str, count: int = 1) -> str:
    """``text`` with ``count`` random edits."""
    for _ in range(count):
        text = _edit(rng, text)
    return text


def _edit(rng: random.Random, text: str) -> str:
    n = len(text)
    i = rng.randint(0, n)
    j = min(n, i + rng.choice((1, 1, 2, 4, 16)))
    pick = rng.random()
    if pick < 0.2 and n:
        return text[:i] + text[j:]  # delete
    if pick < 0.4:
        return text[:i] + rng.choice(_INTERESTING) + text[i:]  # insert a token
    if pick < 0.55 and n:
        return (
            text[:i]
            + chr(rng.choice((rng.randint(32, 126), rng.randint(0, 0x2FFF))))
            + text[i + 1 :]
        )
    if pick < 0.65 and n:
        return text[:i] + text[i:j] * rng.choice((2, 3, 10, 100)) + text[j:]  # repeat
    if pick < 0.75 and n:
        k = rng.randint(0, n)
        return text[:i] + text[k : k + rng.randint(1, 30)] + text[i:]  # splice from itself
    if pick < 0.85:
        # Replace a number with an interesting one.
        digits = [m for m in range(n) if text[m].isdigit()]
        if digits:
            m = rng.choice(digits)
            e = m
            while e < n and (text[e].isalnum() or text[e] == "_"):
                e += 1
            return text[:m] + rng.choice(_INTERESTING[:11]) + text[e:]
        return text
    if pick < 0.92 and n:
        k = rng.randint(0, n)
        a, b = sorted((i, k))
        return text[:a] + text[b:] + text[a:b]  # rotate a slice
    if n:
        return text[:i] + text[i:j].swapcase() + text[j:]
    return text
