"""Hostile and broken rules files: each is a RuleError naming file, line and column.

Regression tests for issue 14 (byte-order mark, binary bytes, NUL, truncation, huge
constants, keyword names, deep nesting), then a Hypothesis test that mutates the shipped
rules files and loads the result: it must load, or fail with a RuleError, never with
another exception.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

from quorem.errors import RuleError
from quorem.ops import Op
from quorem.rulefile import MAX_LITERAL_BITS, load_rule_files, parse_rules
from quorem.ruleset import RuleSet

RULES = Path(__file__).resolve().parent.parent / "rules"
SHIPPED = sorted([*RULES.glob("*.rules"), *RULES.glob("constraints/*"), *RULES.glob("lowering/*")])
SHIPPED = [p for p in SHIPPED if p.suffix == ".rules"]

GOOD = """\
rule mod-small
  doc:       x % N is x when 0 <= x < N
  semantics: floor
  pattern:   x % N
  guard:     vmin(x) >= 0 and vmax(x) < N
  rewrite:   x
"""


def _error(text: str) -> RuleError:
    with pytest.raises(RuleError) as info:
        parse_rules(text, "t.rules")
    return info.value


def test_shipped_files_are_found() -> None:
    assert len(SHIPPED) >= 8
    assert all(parse_rules(p.read_text(encoding="utf-8"), str(p)) for p in SHIPPED)


def test_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    """Editors on Windows start UTF-8 files with a BOM; the file still loads."""
    path = tmp_path / "bom.rules"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert [r.name for r in load_rule_files([path])] == ["mod-small"]
    assert [r.name for r in parse_rules("\ufeff" + GOOD)] == ["mod-small"]
    assert [r.name for r in RuleSet.from_text("\ufeff" + GOOD, allow_unproven=True)] == [
        "mod-small"
    ]


def test_crlf_lines_load_and_other_breaks_do_not_split_lines() -> None:
    assert [r.name for r in parse_rules(GOOD.replace("\n", "\r\n"))] == ["mod-small"]
    # A form feed is not a line break (str.splitlines thinks so): it is refused in place.
    err = _error(GOOD.replace("  guard:", "\x0c  guard:"))
    assert (err.line, err.col, "U+000C" in err.reason) == (5, 1, True)


def test_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "bin.rules"
    path.write_bytes(GOOD.encode().replace(b"vmax(x)", b"vm\xffax(x)"))
    with pytest.raises(RuleError) as info:
        load_rule_files([path])
    err = info.value
    assert (err.source, err.line, err.col) == (str(path), 5, GOOD.splitlines()[4].index("vmax") + 3)
    assert "0xff" in err.reason


@pytest.mark.parametrize(
    ("old", "new", "line", "col"),
    [
        ("vmin(x)", "vmin(\x00x)", 5, 19),
        ("x % N is", "x % N \u202eis", 2, 20),
        ("rewrite:   x", "rewrite:   x\r+ 1", 6, 15),
        ("rewrite:   x", "rewrite:   x\u2028", 6, 15),
    ],
)
def test_hidden_characters_are_refused_where_they_stand(
    old: str, new: str, line: int, col: int
) -> None:
    err = _error(GOOD.replace(old, new))
    assert (err.line, err.col) == (line, col), err
    assert "not allowed in a rules file" in err.reason


@pytest.mark.parametrize("cut", [10, 40, 80, 120, len(GOOD) - 3])
def test_truncated_file(cut: int) -> None:
    """A file cut anywhere loads or says what is missing; never another exception."""
    try:
        parse_rules(GOOD[:cut], "t.rules")
    except RuleError as err:
        assert err.source == "t.rules"


def test_huge_constants_are_refused_at_the_literal() -> None:
    big = 2**MAX_LITERAL_BITS
    for literal in [str(big), hex(big), "9" * 5000, "0x" + "f" * 5000]:
        text = GOOD.replace("vmax(x) < N", f"vmax(x) < N + {literal}")
        err = _error(text)
        assert (err.line, err.col) == (5, text.splitlines()[4].index(literal) + 1)
        assert ("too large" in err.reason or "limit" in err.reason) and len(str(err)) < 200
    assert parse_rules(GOOD.replace("< N", f"< N + {big - 1}"))


@pytest.mark.parametrize("name", ["True", "None", "if", "lambda"])
def test_keywords_are_not_rule_names(name: str) -> None:
    err = _error(GOOD.replace("pattern:   x % N", f"pattern:   {name} % N"))
    assert (err.line, err.col) == (4, 14)
    assert "keyword" in err.reason
    err = _error(GOOD.replace("  rewrite:", f"  let:       {name} = x\n  rewrite:"))
    assert (err.line, err.col) == (6, 14)
    assert "keyword" in err.reason


def test_hostile_names_are_only_names() -> None:
    """Names that mean something to Python or to the compiled code are just names here."""
    template = GOOD.replace("(x)", "(@)").replace("   x", "   @").replace("mod-small", "m")
    for name in ["__import__", "_apply", "t", "linear", "namespace", "exec", "self"]:
        rules = RuleSet.from_text(template.replace("@", name), allow_unproven=True)
        assert [r.name for r in rules] == ["m"]
        assert rules.dispatchers()[Op.FLOORMOD] is not None


@pytest.mark.parametrize(
    "guard",
    [
        "(" * 100_000 + "vmin(x) >= 0" + ")" * 100_000,
        "not " * 100_000 + "vmin(x) >= 0",
        "vmin(" + "-" * 100_000 + "x) >= 0",
        "max(" * 10_000 + "0" + ", 1)" * 10_000 + " >= 0",
        " + ".join(["vmin(x)"] * 10_000) + " >= 0",
    ],
)
def test_deep_or_long_fields_are_refused_quickly(guard: str) -> None:
    """Deep nesting is a RuleError at the node past the limit, not a RecursionError."""
    text = GOOD.replace("vmin(x) >= 0 and vmax(x) < N", guard)
    if guard.startswith("("):
        assert parse_rules(text)  # parentheses make no nodes
        return
    err = _error(text)
    assert "nested too deeply" in err.reason
    assert err.line == 5


# --------------------------------------------------------------------- mutation fuzz
SNIPPETS = [
    *("\x00", "\ufeff", "\xff", "\u0661", "\u202e", "é", "\r", "\r\n", "\t", "\x0c"),
    *("(", ")", "((((", "))))", ",", ":", ";", "=", "==", "//", "%", "*", "-", "#", "\n"),
    *("x", "N", "K", "t", "_", "__import__", "True", "if", "and", "not", "sum", "all"),
    *("sum(K*t)", "gcd(K, D)", "vmin(x)", "fits_int64(y)", "floordiv(a, b)", "0x_", "1__0"),
    *("9" * 5000, "0x" + "f" * 3000, str(2**300), "(" * 300, "-" * 300, "not " * 300),
    *("rule ", "rule x-y\n", "\nrule dup\n", "  doc: d\n", "  guard: ", "  let: A = 1\n"),
    *("  semantics: any\n", "  semantics: floor\n", "  phase: early\n", "  rewrite: ", "  "),
]


# Read once: a file changing while Hypothesis replays an example would make it flaky.
SHIPPED_TEXTS = [p.read_text(encoding="utf-8") for p in SHIPPED]
NUMBERS = ["0x" + "f" * 4000, "9" * 4300, str(2**256), "-" * 200 + "1", "0", "1_0"]
NAMES = ["True", "if", "_", "__class__", "_apply", "linear", "K", "C", "D", "sum", "x1"]
_TOKEN_RE = re.compile(r"\b(?:[0-9]+|[a-z])\b")


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A shipped rules file after a few random edits.

    Cut, insert, repeat, truncate or swap lines, or put a hostile literal or name in
    place of a number or a one-letter name (so the rule often stays well-formed and
    reaches the later checks and the compiler).
    """
    text = draw(st.sampled_from(SHIPPED_TEXTS))
    if draw(st.booleans()):
        text = "\ufeff" + text
    # Half the time only replace tokens: the file stays well-formed more often.
    only_tokens = draw(st.booleans())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(6, 7) if only_tokens else st.integers(0, 7))
        if kind >= 6:
            tokens = [m for m in _TOKEN_RE.finditer(text) if m.group()[0].isdigit() == (kind == 6)]
            if tokens:
                m = draw(st.sampled_from(tokens))
                new = draw(st.sampled_from(NUMBERS if kind == 6 else NAMES))
                text = text[: m.start()] + new + text[m.end() :]
            continue
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 200)))
        if kind == 0:
            text = text[:i] + text[j:]
        elif kind == 1:
            text = text[:i] + draw(st.sampled_from(SNIPPETS)) + text[i:]
        elif kind == 2:
            text = text[:i] + draw(st.text(max_size=8)) + text[j:]
        elif kind == 3:
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 4:
            text = text[:i]
        else:
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_rules_files_load_or_raise_rule_error(text: str) -> None:
    """Loading (parsing, checking, compiling every dispatcher) succeeds or is a RuleError."""
    try:
        rules = RuleSet.from_text(text, "m.rules", allow_unproven=True)
        dispatchers = rules.dispatchers()
        for op in Op:
            dispatchers[op]  # compiled on first use
    except RuleError as err:
        assert err.source == "m.rules"
        assert err.line >= 1 and err.col >= 1
