"""A parser for the HLO text that indexing analysis reads: modules, computations, instructions.

The accepted text is what XLA's printer writes (its parser, ``xla/hlo/parser/``, is the
reference) and the hand-written subset XLA's documentation and tests use:

* an optional ``HloModule name`` line (its attributes are skipped), then optionally the
  debug-info tables ``FileNames``, ``FunctionNames``, ``FileLocations`` and
  ``StackFrames`` (skipped);
* computations ``name { ... }`` and ``ENTRY name { ... }`` (an optional signature
  ``(p: f32[2]) -> f32[2]`` before the brace is skipped), or a bare list of instructions
  with no braces at all, read as one computation;
* instructions ``[ROOT] name = SHAPE opcode(OPERANDS), attr=value, ...``, spread over
  as many lines as they like. Names may start with ``%``. An operand is written bare
  (``p0``) or typed (``f32[2,5] p0``). ``parameter(N)`` and ``constant(...)`` hold a
  literal instead of operands.
* shapes ``f32[10,20]`` with an optional layout ``{1,0}`` (minor-to-major order) whose
  tiles ``:T(8,128)(2,1)`` are read and whose other items (``E(16)``, ``S(1)``, ...)
  are skipped, bounded dynamic sizes ``f32[<=16,8]``, scalars ``f32[]`` and tuples
  ``(f32[10], s32[10])``;
* attribute values skipped structurally (see ``_Parser.attr_value``): balanced groups,
  strings with escapes, words, and pieces glued together (``outfeed_shape=f32[2]{0}``,
  ``sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}``,
  ``#sdy.mesh<["data"=2]>``), so an attribute quorem does not know never breaks a
  module.

The attributes indexing needs are checked while parsing (``dimensions``, ``slice``,
``padding``, ``window``, the gather and dot attributes, ...), so a malformed one is an
error that names its line. Every error is an :class:`HloError`; nothing is evaluated.

Integers (dimension sizes, layouts, attribute values) must fit in int64, as in XLA; a
digit run longer than Python converts (:data:`~quorem.hlo.attrs.MAX_DIGITS`)
is refused where it is written ("integer literal too long"). Nesting is bounded
(tuple shapes) or read without recursion (brace groups), and fusions calling each other
in a cycle are refused, so malformed text is an :class:`HloError`, never a crash.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Final

from ..errors import QuoremError
from .attrs import (
    CHECKERS,
    MAX_DIGITS,
    ConvLabels,
    PadDim,
    SliceDim,
    WindowDim,
    int64_literal,
    parse_dim_labels,
    parse_int,
    parse_int_list,
    parse_padding,
    parse_slice,
    parse_window,
    unknown_window_fields,
)

__all__ = [
    "COMBINED_TILE_DIM",
    "Computation",
    "ConvLabels",
    "HloError",
    "Instruction",
    "Module",
    "PadDim",
    "Shape",
    "SliceDim",
    "WindowDim",
    "parse_hlo",
    "parse_padding",
    "parse_slice",
    "parse_window",
]


COMBINED_TILE_DIM: Final = -1
"""A tile size written ``*``: XLA's combined dimension (its ``kCombineDimension``)."""


class HloError(QuoremError):
    """HLO text that cannot be read or analysed: ``source:line:col: reason``.

    Attributes:
        reason: what is wrong, in one sentence.
        line: 1-based line of the offending text (0 when there is none).
        col: 1-based column (0 when unknown).
        source: the text's origin, e.g. a file name.

    """

    def __init__(self, reason: str, line: int = 0, col: int = 0, source: str = "<hlo>") -> None:
        self.reason = reason
        self.line = line
        self.col = col
        self.source = source
        where = source
        if line:
            where += f":{line}" + (f":{col}" if col else "")
        super().__init__(f"{where}: {reason}")


# ---------------------------------------------------------------------------- shapes
@dataclasses.dataclass(frozen=True, slots=True)
class Shape:
    """An HLO shape: an array ``f32[10,20]{1,0}`` or a tuple of shapes.

    Attributes:
        dtype: the element type (``f32``, ``s32``, ``pred``, ...); ``"tuple"`` for tuples.
        dims: the logical dimension sizes (empty for scalars and tuples); a bounded
            dynamic dimension ``<=16`` has its bound, 16, as XLA's indexing reads it.
        layout: the minor-to-major dimension order, or None when the text gave none.
        elements: the element shapes of a tuple; None for an array.
        tiles: the layout's tiling ``T(8,128)(2,1)``, outermost tile first (empty when
            untiled; a ``*`` size is :data:`COMBINED_TILE_DIM`); see
            :mod:`quorem.hlo.layout`.
        dynamic: per dimension, whether it was written ``<=N`` (empty when none was).

    """

    dtype: str
    dims: tuple[int, ...] = ()
    layout: tuple[int, ...] | None = None
    elements: tuple[Shape, ...] | None = None
    tiles: tuple[tuple[int, ...], ...] = ()
    dynamic: tuple[bool, ...] = ()

    @property
    def is_tuple(self) -> bool:
        """Whether this is a tuple shape."""
        return self.elements is not None

    @property
    def rank(self) -> int:
        """The number of dimensions of an array shape."""
        return len(self.dims)

    @property
    def num_elements(self) -> int:
        """The product of the dimension sizes."""
        n = 1
        for d in self.dims:
            n *= d
        return n

    def minor_to_major(self) -> tuple[int, ...]:
        """The layout, or the default ``{rank-1, ..., 0}`` (row-major) when none was given."""
        if self.layout is not None:
            return self.layout
        return tuple(range(self.rank - 1, -1, -1))

    def physical_order(self) -> tuple[int, ...]:
        """The logical dimensions in major-to-minor memory order (the reversed layout)."""
        return tuple(reversed(self.minor_to_major()))

    def physical_dims(self) -> tuple[int, ...]:
        """The dimension sizes in major-to-minor memory order."""
        return tuple(self.dims[k] for k in self.physical_order())

    def arrays(self) -> tuple[Shape, ...]:
        """The array shapes an instruction of this shape produces: its elements, or itself."""
        return self.elements if self.elements is not None else (self,)

    def __str__(self) -> str:
        if self.elements is not None:
            return "(" + ", ".join(str(e) for e in self.elements) + ")"
        sizes = [
            f"<={n}" if k < len(self.dynamic) and self.dynamic[k] else str(n)
            for k, n in enumerate(self.dims)
        ]
        text = f"{self.dtype}[{','.join(sizes)}]"
        if self.layout is not None:
            tiling = "".join(
                "(" + ",".join("*" if n == COMBINED_TILE_DIM else str(n) for n in t) + ")"
                for t in self.tiles
            )
            tiling = "T" + tiling if tiling else ""
            text += "{" + ",".join(map(str, self.layout)) + (f":{tiling}" if tiling else "") + "}"
        return text


# ---------------------------------------------------------------------------- instructions
@dataclasses.dataclass(frozen=True, slots=True)
class Instruction:
    """One HLO instruction.

    Attributes:
        name: the instruction's name (without a leading ``%``).
        shape: its result shape.
        opcode: e.g. ``add``, ``dynamic-slice``, ``fusion``.
        operands: the operand names, in order.
        operand_shapes: each operand's shape as written (None for a bare operand).
        attrs: attribute name to its raw text (checked when the name is one of the known).
        payload: the literal of ``parameter(N)`` and ``constant(...)`` ('' otherwise).
        is_root: written with ``ROOT``.
        line: the 1-based line where the instruction starts.
        source: the text's origin, for error messages.
        col: the 1-based column where the instruction starts (0 when unknown).

    """

    name: str
    shape: Shape
    opcode: str
    operands: tuple[str, ...] = ()
    operand_shapes: tuple[Shape | None, ...] = ()
    attrs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    payload: str = ""
    is_root: bool = False
    line: int = 0
    source: str = "<hlo>"
    col: int = 0

    def error(self, reason: str) -> HloError:
        """An :class:`HloError` about this instruction, naming it, its line and column."""
        return HloError(f"{self.name} ({self.opcode}): {reason}", self.line, self.col, self.source)

    def _attr(self, name: str) -> str:
        if name not in self.attrs:
            raise self.error(f"needs the attribute {name}=")
        return self.attrs[name]

    def int_list(self, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """The attribute ``name={...}`` as ints; ``default`` when absent (else an error)."""
        if name not in self.attrs and default is not None:
            return default
        try:
            return parse_int_list(self._attr(name))
        except ValueError as exc:
            raise self.error(f"{name}=: {exc}") from None

    def int_attr(self, name: str, default: int | None = None) -> int:
        """The integer attribute ``name=N``; ``default`` when absent (else an error)."""
        if name not in self.attrs and default is not None:
            return default
        try:
            return parse_int(self._attr(name))
        except ValueError as exc:
            raise self.error(f"{name}=: {exc}") from None

    def slice_dims(self) -> tuple[SliceDim, ...]:
        """The ``slice=`` attribute."""
        try:
            return parse_slice(self._attr("slice"))
        except ValueError as exc:
            raise self.error(f"slice=: {exc}") from None

    def padding(self) -> tuple[PadDim, ...]:
        """The ``padding=`` attribute."""
        try:
            return parse_padding(self._attr("padding"))
        except ValueError as exc:
            raise self.error(f"padding=: {exc}") from None

    def window(self) -> tuple[WindowDim, ...]:
        """The ``window=`` attribute."""
        try:
            return parse_window(self._attr("window"))
        except ValueError as exc:
            raise self.error(f"window=: {exc}") from None

    def window_unknown_fields(self) -> tuple[str, ...]:
        """The fields of ``window=`` that indexing does not read (see ``hlo_attrs``)."""
        try:
            return unknown_window_fields(self._attr("window"))
        except ValueError as exc:
            raise self.error(f"window=: {exc}") from None

    def conv_labels(self) -> ConvLabels:
        """The ``dim_labels=`` attribute of a convolution."""
        try:
            return parse_dim_labels(self._attr("dim_labels"))
        except ValueError as exc:
            raise self.error(f"dim_labels=: {exc}") from None

    def parameter_number(self) -> int:
        """N of ``parameter(N)``."""
        try:
            return parse_int(self.payload)
        except ValueError as exc:
            if re.fullmatch(r"-?[0-9]+", self.payload):
                raise self.error(f"parameter(N): {exc}") from None
            shown = self.payload if len(self.payload) <= 40 else self.payload[:40] + "..."
            raise self.error(f"expected parameter(N), found parameter({shown})") from None

    def scalar_int_constant(self) -> int | None:
        """The value of an integer scalar ``constant(N)``, or None for anything else."""
        if self.opcode != "constant" or self.shape.is_tuple or self.shape.rank != 0:
            return None
        try:
            return parse_int(self.payload)
        except ValueError:
            return None


@dataclasses.dataclass(frozen=True, slots=True)
class Computation:
    """A named list of instructions with one root.

    Attributes:
        name: the computation's name.
        instructions: in the order written; names are unique.
        is_entry: written with ``ENTRY``.
        line: where it starts.
        col: the column where it starts (0 when unknown).
        source: the text's origin, for error messages.

    """

    name: str
    instructions: tuple[Instruction, ...]
    is_entry: bool = False
    line: int = 0
    col: int = 0
    source: str = "<hlo>"
    _by_name: dict[str, Instruction] = dataclasses.field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self._by_name.update((i.name, i) for i in self.instructions)

    @property
    def root(self) -> Instruction:
        """The ``ROOT`` instruction, or the last one when none is marked."""
        for inst in self.instructions:
            if inst.is_root:
                return inst
        return self.instructions[-1]

    def error(self, reason: str) -> HloError:
        """An :class:`HloError` about this computation, at the line and column it starts."""
        return HloError(reason, self.line, self.col, self.source)

    def get(self, name: str) -> Instruction:
        """The instruction called ``name`` (KeyError when there is none)."""
        return self._by_name[name]

    def operands_of(self, inst: Instruction) -> tuple[Instruction, ...]:
        """The instructions defining ``inst``'s operands, in order."""
        return tuple(self._by_name[n] for n in inst.operands)

    def parameters(self) -> dict[int, Instruction]:
        """The ``parameter(N)`` instructions by N."""
        return {i.parameter_number(): i for i in self.instructions if i.opcode == "parameter"}


@dataclasses.dataclass(frozen=True, slots=True)
class Module:
    """An HLO module: its computations, the entry one marked (or the last).

    Attributes:
        name: the module's name.
        computations: in the order written.
        source: the text's origin, for error messages.

    """

    name: str
    computations: tuple[Computation, ...]
    source: str = "<hlo>"
    _by_name: dict[str, Computation] = dataclasses.field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        # The first of a repeated name, as a search in order finds (the parser refuses
        # repeats).
        for c in self.computations:
            self._by_name.setdefault(c.name, c)

    @property
    def entry(self) -> Computation:
        """The ``ENTRY`` computation, or the last one when none is marked."""
        for c in self.computations:
            if c.is_entry:
                return c
        return self.computations[-1]

    def computation(self, name: str) -> Computation:
        """The computation called ``name``; raises :class:`HloError` when there is none."""
        found = self._by_name.get(name)
        if found is not None:
            return found
        names = [c.name for c in self.computations]
        known = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
        raise HloError(
            f"no computation named {name[:80]!r} (the module has {known})", source=self.source
        )


# ---------------------------------------------------------------------------- tokens
# The characters of XLA's HLO lexer (xla/hlo/parser/hlo_lexer.cc), plus the lone '<' and
# '>' of MLIR attributes that real modules carry in skipped values (Shardy's
# `#sdy.mesh<["data"=2]>`). Strings may be in double or single quotes, with escapes.
_TOKEN_RE: Final = re.compile(
    r"""
    (?P<space>\s+|/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<arrow>->)
  | (?P<word>(?:[A-Za-z0-9_.%$+]|-(?!>))+)
  | (?P<punct><=|[=,()\[\]{}:<>#*~?!|])
    """,
    re.VERBOSE | re.DOTALL,
)
_DTYPE_RE: Final = re.compile(r"pred|token|opaque|[suf]\d+|bf16|c64|c128|f8e\w+|f4e\w+|tf32")
_NAME_RE: Final = re.compile(r"%?[A-Za-z_][A-Za-z0-9_.\-]*")
_LITERAL_OPCODES: Final = frozenset({"parameter", "constant"})
_SECTIONS: Final = frozenset({"FileNames", "FunctionNames", "FileLocations", "StackFrames"})
_MAX_TUPLE_DEPTH: Final = 64
_LONG_DIGITS_RE: Final = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")


@dataclasses.dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    pos: int
    line: int
    col: int


def _tokenize(text: str, source: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos, line, line_start = 0, 1, 0
    n = len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.lastgroup is None:
            raise HloError(
                f"unexpected character {text[pos]!r}", line, pos - line_start + 1, source
            )
        kind = m.lastgroup
        if kind == "word" and m.end() - pos > MAX_DIGITS:
            # Refused here, where the column is known, rather than by int() later.
            run = _LONG_DIGITS_RE.search(m.group())
            if run is not None:
                raise HloError(
                    f"integer literal too long ({len(run.group())} digits; the limit is "
                    f"{MAX_DIGITS})",
                    line,
                    pos + run.start() - line_start + 1,
                    source,
                )
        if kind != "space":
            out.append(_Tok(kind, m.group(), pos, line, pos - line_start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            line_start = m.start() + m.group().rfind("\n") + 1
        pos = m.end()
    out.append(_Tok("end", "", n, line, n - line_start + 1))
    return out


def _strip(name: str) -> str:
    return name[1:] if name.startswith("%") else name


# ---------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.toks = _tokenize(text, source)
        self.i = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def error(self, reason: str, tok: _Tok | None = None) -> HloError:
        t = tok or self.tok
        found = f"found {t.text!r}" if t.kind != "end" else "found the end of the text"
        return HloError(f"{reason}, {found}", t.line, t.col, self.source)

    def at(self, text: str) -> bool:
        return self.tok.kind in ("punct", "arrow") and self.tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str = "") -> _Tok:
        tok = self.tok
        if not self.accept(text):
            raise self.error(f"expected {text!r}" + (f" {what}" if what else ""))
        return tok

    def word(self, what: str) -> _Tok:
        tok = self.tok
        if tok.kind != "word":
            raise self.error(f"expected {what}")
        self.i += 1
        return tok

    def name(self, what: str) -> str:
        tok = self.word(what)
        if not _NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected {what}", tok)
        return _strip(tok.text)

    def int64(self, tok: _Tok) -> int:
        """The int64 value of the digit token ``tok`` (an error at it when out of range)."""
        try:
            return int64_literal(tok.text)
        except ValueError as exc:
            raise HloError(str(exc), tok.line, tok.col, self.source) from None

    def skip_group(self) -> str:
        """Skip a balanced (), [], {} or <> group starting at the current token; its text.

        Inside a group only (), [] and {} must balance: a lone '<' or '>' in a value
        (``<=`` is its own token, ``->`` too) does not confuse the skip. Angle brackets
        count only for a group opened by '<', where they are MLIR's nesting.
        """
        pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
        start = self.tok
        angles = start.text == "<"
        stack = [pairs[start.text]]
        self.i += 1
        while stack:
            t = self.tok
            if t.kind == "end":
                raise self.error(f"unclosed {start.text!r} opened on line {start.line}")
            closers = (")", "]", "}", ">") if angles else (")", "]", "}")
            if t.kind == "punct" and t.text in pairs and (angles or t.text != "<"):
                stack.append(pairs[t.text])
            elif t.kind == "punct" and t.text in closers:
                if t.text != stack[-1]:
                    raise self.error(f"expected {stack[-1]!r} to close {start.text!r}")
                stack.pop()
            self.i += 1
        end = self.toks[self.i - 1]
        return self.text[start.pos : end.pos + 1]

    # ---------------------------------------------------------------- shapes
    def shape(self, depth: int = 0) -> Shape:
        if self.at("("):
            if depth >= _MAX_TUPLE_DEPTH:
                raise self.error(f"tuple shapes nested deeper than {_MAX_TUPLE_DEPTH}")
            self.i += 1
            elements: list[Shape] = []
            if not self.accept(")"):
                while True:
                    elements.append(self.shape(depth + 1))
                    if self.accept(")"):
                        break
                    self.expect(",", "between tuple elements")
            return Shape("tuple", elements=tuple(elements))
        tok = self.tok
        if tok.kind != "word" or not _DTYPE_RE.fullmatch(tok.text):
            raise self.error("expected a shape like f32[10,20]")
        self.i += 1
        self.expect("[", f"after the element type {tok.text}")
        dims: list[int] = []
        dynamic: list[bool] = []
        if not self.accept("]"):
            while True:
                bounded = self.accept("<=")
                d = self.tok
                if d.kind == "punct" and d.text == "?":
                    # XLA prints an unbounded dynamic size as '?': no index space to map.
                    raise self.error(
                        "an unbounded dynamic dimension '?' has no size to index; "
                        "quorem reads bounded ones ('<=N')"
                    )
                if d.kind != "word" or not d.text.isascii() or not d.text.isdigit():
                    raise self.error("expected a dimension size (a non-negative integer)")
                dims.append(self.int64(d))
                dynamic.append(bounded)
                self.i += 1
                if self.accept("]"):
                    break
                if not self.at(","):
                    raise self.error("expected ',' or ']' in the dimension sizes")
                self.i += 1
        layout: tuple[int, ...] | None = None
        tiles: tuple[tuple[int, ...], ...] = ()
        if self.at("{"):
            layout, tiles = self.layout(len(dims))
        return Shape(
            tok.text, tuple(dims), layout, None, tiles, tuple(dynamic) if any(dynamic) else ()
        )

    def layout(self, rank: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """``{1,0:T(8,128)(2,1)E(16)S(1)}``: the minor-to-major order and the tiles.

        After the ':' come XLA's layout items, each a capital letter code and its
        parenthesised arguments (``D``, ``T``, ``L``, ``E``, ``S``, ``SC``, ``P``,
        ``M``, ...). Only the tiles change where an element lives in its buffer's
        index space; the others (element size, memory space, ...) are skipped.
        """
        start = self.tok
        self.i += 1
        order: list[int] = []
        tiles: list[tuple[int, ...]] = []
        while not self.accept("}"):
            t = self.tok
            if t.kind == "punct" and t.text == ":":
                self.i += 1
                tiles = self.layout_items()
                self.expect("}", "to close the layout")
                break
            if t.kind != "word" or not t.text.isascii() or not t.text.isdigit():
                raise self.error("expected a dimension number in the layout")
            order.append(self.int64(t))
            self.i += 1
            if not self.at("}") and not self.at(":"):
                self.expect(",", "between layout dimensions")
        if sorted(order) != list(range(rank)):
            shown = ",".join(map(str, order[:10])) + (",..." if len(order) > 10 else "")
            raise HloError(
                f"layout {{{shown}}} is not a permutation of the {rank} dimensions",
                start.line,
                start.col,
                self.source,
            )
        return tuple(order), tuple(tiles)

    def layout_items(self) -> list[tuple[int, ...]]:
        """The items after a layout's ':' up to its '}': the tiles, the rest skipped."""
        tiles: list[tuple[int, ...]] = []
        while not self.at("}"):
            t = self.tok
            if t.kind == "end":
                raise self.error("unclosed layout")
            if t.kind == "word" and t.text == "T" and self.at_group("(", 1):
                self.i += 1
                while self.at("("):  # T(8,128)(2,1): one group per tiling level
                    tiles.append(self.tile())
                continue
            if t.kind in ("punct", "string") and t.text in (")", "]", ",", "{", "["):
                raise self.error("expected a layout item like T(8,128) or S(1)")
            self.i += 1
            if self.at("("):
                self.skip_group()
        return tiles

    def at_group(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind == "punct" and t.text == text

    def tile(self) -> tuple[int, ...]:
        """``(8,128)``: one tile's sizes; ``*`` (XLA's combined dimension) is read as -1.

        Only physical indexing needs the tiles; it refuses a ``*`` (see ``hlo_layout``),
        so a module holding one still parses.
        """
        self.expect("(")
        sizes: list[int] = []
        while True:
            d = self.tok
            if d.kind == "punct" and d.text == "*":
                sizes.append(COMBINED_TILE_DIM)
                self.i += 1
                if self.accept(")"):
                    break
                self.expect(",", "between tile sizes")
                continue
            if d.kind != "word" or not d.text.isascii() or not d.text.isdigit():
                raise self.error("expected a tile size (a positive integer)")
            size = self.int64(d)
            if size == 0:
                raise self.error("a tile size must be positive")
            sizes.append(size)
            self.i += 1
            if self.accept(")"):
                break
            self.expect(",", "between tile sizes")
        return tuple(sizes)

    # ---------------------------------------------------------------- instructions
    def starts_instruction(self) -> bool:
        t = self.tok
        if t.kind == "word" and t.text == "ROOT":
            return True
        return t.kind == "word" and self.peek().kind == "punct" and self.peek().text == "="

    def _instruction_follows(self) -> bool:
        nxt, after = self.peek(), self.peek(2)
        if nxt.kind == "word" and nxt.text == "ROOT":
            return True
        return nxt.kind == "word" and after.kind == "punct" and after.text == "="

    def instruction(self) -> Instruction:
        first = self.tok
        is_root = False
        if first.kind == "word" and first.text == "ROOT":
            is_root = True
            self.i += 1
        name = self.name("an instruction name")
        self.expect("=", f"after the instruction name {name}")
        shape = self.shape()
        op_tok = self.word("an opcode")
        opcode = op_tok.text
        if not re.fullmatch(r"[a-z][a-z0-9\-]*", opcode):
            raise self.error("expected an opcode", op_tok)
        if not self.at("("):
            raise self.error(f"expected '(' after the opcode {opcode}")
        operands: list[str] = []
        operand_shapes: list[Shape | None] = []
        payload = ""
        if opcode in _LITERAL_OPCODES:
            payload = self.skip_group()[1:-1].strip()
        else:
            self.i += 1
            if not self.accept(")"):
                while True:
                    typed: Shape | None = None
                    if self.at("(") or (self.tok.kind == "word" and self.peek().text == "["):
                        typed = self.shape()
                    operands.append(self.name("an operand name"))
                    operand_shapes.append(typed)
                    if self.accept(")"):
                        break
                    self.expect(",", "between operands")
        attrs: dict[str, str] = {}
        while self.at(","):
            self.i += 1
            key_tok = self.word("an attribute name")
            key = key_tok.text
            self.expect("=", f"after the attribute name {key}")
            value_tok = self.tok
            value = self.attr_value()
            if key in attrs:
                raise HloError(
                    f"attribute {key}= given twice", key_tok.line, key_tok.col, self.source
                )
            checker = CHECKERS.get(key)
            if checker is not None:
                try:
                    checker(value)
                except ValueError as exc:
                    raise HloError(
                        f"{name}: {key}=: {exc}", value_tok.line, value_tok.col, self.source
                    ) from None
            attrs[key] = value
        return Instruction(
            name,
            shape,
            opcode,
            tuple(operands),
            tuple(operand_shapes),
            attrs,
            payload,
            is_root,
            first.line,
            self.source,
            first.col,
        )

    def attr_value(self) -> str:
        """An attribute value, skipped structurally; its text.

        A value is one or more pieces written without blanks between them: a balanced
        (), [] or {} group, a string, a word or a punctuation mark, and after a word a
        balanced <...> group (MLIR's ``#sdy.mesh<["a"=2]>``). So a shape
        ``f32[2]{0}``, ``dim_labels=b01f_01io->b01f`` or an attribute XLA adds later is
        read whole without knowing its grammar; a blank, ',' or a closing bracket ends
        it (``a -> b`` with blanks is also one value, as earlier quorem read it).
        """
        start = self.tok
        if start.kind == "end" or (start.kind == "punct" and start.text in ",)]}>="):
            raise self.error("expected an attribute value")
        while True:
            t = self.tok
            opens = t.kind == "punct" and t.text in ("{", "[", "(")
            if opens or (t.kind == "punct" and t.text == "<" and self._glued()):
                self.skip_group()
            else:
                self.i += 1
            nxt = self.tok
            if nxt.kind == "arrow":
                self.i += 1
                if self.tok.kind == "end" or self.at(",") or self.at("}"):
                    raise self.error("expected a word after '->'")
                continue
            if not self._glued() or nxt.kind == "end":
                break
            if nxt.kind == "punct" and nxt.text in ",)]}>=":
                break
        end = self.toks[self.i - 1]
        return self.text[start.pos : end.pos + len(end.text)]

    def _glued(self) -> bool:
        """Whether the current token follows the previous one with no blank between."""
        prev, cur = self.toks[self.i - 1], self.tok
        return prev.pos + len(prev.text) == cur.pos

    def instructions_until(self, closing: str | None) -> list[Instruction]:
        out: list[Instruction] = []
        while True:
            if closing is not None and self.at(closing):
                return out
            if self.tok.kind == "end":
                if closing is not None:
                    raise self.error(f"expected {closing!r} to end the computation")
                return out
            if not self.starts_instruction():
                raise self.error("expected an instruction 'name = shape opcode(operands)'")
            out.append(self.instruction())

    # ---------------------------------------------------------------- module
    def module(self) -> Module:
        name = "module"
        if self.tok.kind == "word" and self.tok.text == "HloModule":
            self.i += 1
            name = self.name("a module name")
            while self.accept(","):
                self.word("a module attribute name")
                self.expect("=")
                self.attr_value()
        self.stack_frame_sections()
        if self.tok.kind == "end":
            raise self.error("expected a computation or instructions")
        if self.starts_instruction():
            first = self.tok
            insts = self.instructions_until(None)
            return Module(name, (self._computation("main", insts, True, first),), self.source)
        comps: list[Computation] = []
        while self.tok.kind != "end":
            comps.append(self.computation())
        return Module(name, tuple(comps), self.source)

    def stack_frame_sections(self) -> None:
        """Skip the debug-info tables XLA prints after the ``HloModule`` line.

        ``FileNames``, ``FunctionNames``, ``FileLocations`` and ``StackFrames``, each a
        keyword then entries ``ID "text"`` or ``ID {key=value ...}`` (XLA's lexer makes
        the four names keywords, so no computation has them). Instructions refer to
        them by ``stack_frame_id`` in their metadata, which indexing does not read.
        """
        while (
            self.tok.kind == "word"
            and self.tok.text in _SECTIONS
            and not (self.peek().kind == "punct" and self.peek().text in "{(=")
        ):
            self.i += 1
            while self.tok.kind == "word" and self.tok.text.isdigit():
                self.i += 1
                if self.tok.kind == "string":
                    self.i += 1
                elif self.at("{"):
                    self.skip_group()
                else:
                    raise self.error("expected a string or {...} after a table entry's number")

    def computation(self) -> Computation:
        first = self.tok
        is_entry = first.kind == "word" and first.text == "ENTRY"
        if is_entry:
            self.i += 1
        name = self.name("a computation name (or an instruction)")
        if self.at("("):
            self.skip_group()  # signature: the parameters are read from the body
            if self.accept("->"):
                # The result shape may end in a layout brace: the body's brace is the
                # one an instruction follows.
                while not (self.at("{") and self._instruction_follows()):
                    if self.tok.kind == "end":
                        raise self.error(f"expected '{{' to open the computation {name}")
                    self.i += 1
        self.expect("{", f"to open the computation {name}")
        insts = self.instructions_until("}")
        self.expect("}")
        while self.accept(","):  # e.g. execution_thread="main"
            self.word("a computation attribute name")
            self.expect("=")
            self.attr_value()
        return self._computation(name, insts, is_entry, first)

    def _computation(
        self, name: str, insts: list[Instruction], is_entry: bool, first: _Tok
    ) -> Computation:
        if not insts:
            raise HloError(
                f"computation {name} has no instructions", first.line, first.col, self.source
            )
        return Computation(name, tuple(insts), is_entry, first.line, first.col, self.source)


# ---------------------------------------------------------------------------- checks
def _check_computation(comp: Computation, source: str) -> None:
    roots = [i for i in comp.instructions if i.is_root]
    if len(roots) > 1:
        r = roots[1]
        raise HloError(
            f"computation {comp.name} has a second ROOT ({r.name})", r.line, r.col, source
        )
    by_name: dict[str, Instruction] = {}
    for inst in comp.instructions:
        if inst.name in by_name:
            raise inst.error(f"the name is already used on line {by_name[inst.name].line}")
        by_name[inst.name] = inst
    numbers: dict[int, Instruction] = {}
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            k = inst.parameter_number()
            if k in numbers:
                raise inst.error(f"parameter({k}) is also {numbers[k].name}")
            numbers[k] = inst
        for opname, typed in zip(inst.operands, inst.operand_shapes, strict=True):
            if opname not in by_name:
                raise inst.error(f"operand {opname!r} is not defined in computation {comp.name}")
            defined = by_name[opname].shape
            if typed is not None and _dims_of(typed) != _dims_of(defined):
                raise inst.error(f"operand {opname} is written {typed} but defined as {defined}")
    if sorted(numbers) != list(range(len(numbers))):
        raise HloError(
            f"computation {comp.name}: parameter numbers {sorted(numbers)} are not "
            f"0..{len(numbers) - 1}",
            comp.line,
            comp.col,
            source,
        )
    _check_acyclic(comp)


def _dims_of(s: Shape) -> object:
    return tuple(_dims_of(e) for e in s.elements) if s.elements is not None else s.dims


def _check_acyclic(comp: Computation) -> None:
    by_name = {i.name: i for i in comp.instructions}
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    for start in comp.instructions:
        if start.name in state:
            continue
        stack: list[tuple[Instruction, Iterator[str]]] = [(start, iter(start.operands))]
        state[start.name] = 1
        while stack:
            inst, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[inst.name] = 2
                stack.pop()
                continue
            s = state.get(nxt)
            if s == 1:
                raise inst.error(f"uses {nxt}, which depends on {inst.name} (a cycle)")
            if s is None:
                state[nxt] = 1
                stack.append((by_name[nxt], iter(by_name[nxt].operands)))


def _check_calls(module: Module, source: str) -> None:
    by_name: dict[str, Computation] = {}
    for c in module.computations:
        if c.name in by_name:
            raise HloError(f"computation name {c.name} is used twice", c.line, c.col, source)
        by_name[c.name] = c
    # The fusion instructions of each computation and the computation each one calls.
    calls: dict[str, list[tuple[Instruction, str]]] = {}
    for c in module.computations:
        edges = calls.setdefault(c.name, [])
        for inst in c.instructions:
            if inst.opcode != "fusion":
                continue
            if "calls" not in inst.attrs:
                raise inst.error("a fusion needs calls=COMPUTATION")
            callee = inst.attrs["calls"].lstrip("%")
            if callee not in by_name:
                raise inst.error(f"calls={callee[:80]}, which is not a computation of the module")
            edges.append((inst, callee))
    _check_call_cycles(calls)


def _check_call_cycles(calls: dict[str, list[tuple[Instruction, str]]]) -> None:
    """Refuse fusions that call, through other fusions, their own computation.

    Depth-first with an explicit stack: a chain of nested fusions may be as long as the
    module is, far deeper than Python's recursion allows.
    """
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for start, first in calls.items():
        if start in state:
            continue
        path: list[tuple[str, Iterator[tuple[Instruction, str]]]] = [(start, iter(first))]
        state[start] = 1
        while path:
            name, edges = path[-1]
            step = next(edges, None)
            if step is None:
                state[name] = 2
                path.pop()
                continue
            inst, callee = step
            if state.get(callee) == 1:
                names = [n for n, _ in path]
                cycle = [*names[names.index(callee) :], callee]
                shown = " -> ".join(cycle if len(cycle) <= 8 else [*cycle[:4], "...", *cycle[-3:]])
                raise inst.error(f"calls {callee}, which calls it back (a cycle: {shown})")
            if callee not in state:
                state[callee] = 1
                path.append((callee, iter(calls[callee])))


def parse_hlo(text: str, source: str = "<hlo>") -> Module:
    """Parse HLO text (see the module docstring) into a :class:`Module`.

    Checks that names are unique, operands are defined in their computation (and match
    their written shape), parameter numbers are 0..n-1, there is no cycle, fusions call
    existing computations, and known attributes are well formed. Raises
    :class:`HloError` naming the line and the reason otherwise.
    """
    parser = _Parser(text, source)
    module = parser.module()
    for comp in module.computations:
        _check_computation(comp, source)
    _check_calls(module, source)
    return module
