"""Indexing maps and their expressions printed in XLA's text syntax.

The inverse of :mod:`quorem.indexing.mapsyntax`'s parser: ``parse_map(print_map(m))`` is
``m``. Printing reads maps and terms and builds none, so this module needs
:mod:`quorem.indexing.map` only for its types (the map prints itself with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeAlias

from ..ops import Op
from ..walk import postorder, tree_size
from .errors import IndexingMapError

if TYPE_CHECKING:
    from ..term import Term
    from .map import IndexingMap

__all__ = ["DIGITS_PER_CHUNK", "print_expr", "print_map"]

DIGITS_PER_CHUNK: Final = 500  # digits per int() call: below the lowest limit Python allows (640)
_CHUNK: Final = DIGITS_PER_CHUNK
_ATOM, _PRODUCT, _SUM = 0, 1, 2  # precedence levels of printed expressions
_OPS: Final[dict[Op, str]] = {Op.FLOORDIV: "/", Op.FLOORMOD: "mod", Op.MUL: "*"}
_MAX_PRINTED_NODES: Final = 2**21  # a shared subterm is printed at each use: text can explode
_Piece: TypeAlias = "str | Term"  # text, or an operand whose text goes in its place
_POWERS: dict[int, int] = {}


def _digits(n: int, width: int = 0) -> str:
    """Non-negative ``n`` in decimal, zero-padded to ``width``, for any size.

    Split in halves rather than by ``str``: Python refuses ``str`` of an int of more
    than 4300 digits, and converting chunk by chunk from one end would be quadratic.
    """
    if n < 10**_CHUNK:
        return str(n).zfill(width)
    half = max(_CHUNK, int(n.bit_length() * 0.30103) // 2)
    power = _POWERS.get(half)
    if power is None:
        power = _POWERS[half] = 10**half
    high, low = divmod(n, power)
    return _digits(high, max(0, width - half)) + _digits(low, half)


def _int_text(n: int) -> str:
    """``n`` in decimal, however many digits it has."""
    return "-" + _digits(-n) if n < 0 else _digits(n)


def _scaled(t: Term, c: int, levels: dict[Term, int]) -> tuple[list[_Piece], int]:
    """``t * c`` (constants on the right of ``*``) as pieces, and its level."""
    level = levels[t]
    if c == 1:
        return [t], level
    inner: list[_Piece] = [t]
    if level == _SUM or (level == _PRODUCT and t.op is not Op.MUL):
        inner = ["(", t, ")"]
    if c == -1:
        return ["-", *inner], _PRODUCT
    return [*inner, f" * {_int_text(c)}"], _PRODUCT


def _layout(t: Term, levels: dict[Term, int]) -> tuple[list[_Piece], int]:
    """How ``t`` prints, its operands' texts left as terms, and its precedence level."""
    op = t.op
    if op is Op.CONST:
        return [_int_text(t.value)], (_ATOM if t.value >= 0 else _PRODUCT)
    if op is Op.VAR:
        return [t.arg[0]], _ATOM
    if op is Op.ADD:
        coefs, k = t.arg
        if len(coefs) == 1 and not k:
            return _scaled(t.args[0], coefs[0], levels)
        pieces: list[_Piece] = []
        for a, c in zip(t.args, coefs, strict=True):
            if pieces and c < 0:
                pieces += [" - ", *_scaled(a, -c, levels)[0]]
            else:
                pieces += [" + "] if pieces else []
                pieces += _scaled(a, c, levels)[0]
        if k:
            pieces.append(f" + {_int_text(k)}" if k > 0 else f" - {_int_text(-k)}")
        return pieces, _SUM
    if op in (Op.MAX, Op.MIN):
        left, right = t.args
        return [f"{'max' if op is Op.MAX else 'min'}(", left, ", ", right, ")"], _ATOM
    if op in _OPS:
        pieces = []
        for i, a in enumerate(t.args):
            if i:
                pieces.append(f" {_OPS[op]} ")
            level = levels[a]
            # XLA's parentheses: a chain of one operator reads left to right (and a
            # product in any order); any other operator of the same level is bracketed.
            chained = (i == 0 and a.op is op) or (op is Op.MUL and a.op is Op.MUL)
            if level == _SUM or (level == _PRODUCT and not chained):
                pieces += ["(", a, ")"]
            else:
                pieces.append(a)
        return pieces, _PRODUCT
    raise IndexingMapError(f"{op.name.lower()} has no XLA form (indexing maps use floor division)")


def print_expr(term: Term) -> str:
    """``term`` in XLA's syntax (floor semantics; raises on truncating division).

    Any depth and any size of integer prints. Raises :class:`IndexingMapError` when
    the text would have more than 2**21 operators and operands, which a term sharing
    its subterms can reach with few distinct nodes.
    """
    if tree_size(term) > _MAX_PRINTED_NODES:
        raise IndexingMapError(
            f"the expression is too large to print (over {_MAX_PRINTED_NODES} nodes as text)"
        )
    # Operands before the terms that use them, and the text written from an explicit
    # stack: a deep term (a long chain of mod) must not hit Python's recursion limit.
    levels: dict[Term, int] = {}
    layouts: dict[Term, list[_Piece]] = {}
    for t in postorder(term):
        layouts[t], levels[t] = _layout(t, levels)
    out: list[str] = []
    stack: list[_Piece] = [term]
    while stack:
        piece = stack.pop()
        if isinstance(piece, str):
            out.append(piece)
        else:
            stack.extend(reversed(layouts[piece]))
    return "".join(out)


def print_map(m: IndexingMap) -> str:
    """``m`` in XLA's textual form, canonically: equal maps print equal.

    A known-empty map prints as ``(d0, ...) -> (0, ...), domain: KNOWN EMPTY``, keeping
    how many dimensions and results it has, so that ``parse_map`` gives it back.
    """
    if m.known_empty:
        dims = ", ".join(f"d{i}" for i in range(m.n_dims))
        return f"({dims}) -> ({', '.join('0' for _ in m.results)}), domain: KNOWN EMPTY"
    head = f"({', '.join(v.name for v in m.dims)})"
    if m.range_vars:
        head += f"[{', '.join(v.name for v in m.range_vars)}]"
    if m.rt_vars:
        head += "{" + ", ".join(v.name for v in m.rt_vars) + "}"
    body = f"{head} -> ({', '.join(print_expr(t) for t in m.results)})"
    entries = [f"{v.name} in [{_int_text(v.lo)}, {_int_text(v.hi)}]" for v in m.variables()]
    entries += [
        f"{print_expr(e)} in [{_int_text(lo)}, {_int_text(hi)}]" for e, lo, hi in m.constraints
    ]
    if not entries:
        return body
    return body + ", domain: " + ", ".join(entries)
