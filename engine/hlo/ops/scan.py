"""Maps of ``scan``: an output depends on the inputs up to its position.

Only rank-1 inputs scanned along dimension 0 with scalar carries are modelled; other
forms are unknown indexing.
"""

from __future__ import annotations

from typing import Final

from ...indexing.map import IndexingMap
from ...term import Term
from .context import OpContext, OpMaps
from .maps import OperandMaps, copies, scalar_read_map, scalar_write_map


def _scan_check(c: OpContext) -> tuple[int, int, int, bool] | None:
    """``(inputs, outputs, length, reverse)`` of a scan quorem models, else None.

    Modelled: one scanned dimension of rank-1 inputs, scalar carries, array outputs of
    the inputs' shape. Other forms (higher ranks, whose body may mix the other
    dimensions) are unknown indexing.
    """
    carries = c.inst.int_attr("num_carries")
    outs = c.outputs()
    n_in, n_out = len(c.operands) - carries, len(outs) - carries
    if carries < 0 or n_in < 0 or n_out < 0:
        raise c.error(f"num_carries={carries} but {len(c.operands)} operands, {len(outs)} outputs")
    dims = c.inst.int_list("dimensions")
    arrays = [c.arg(i).dims for i in range(n_in)] + [o.dims for o in outs[:n_out]]
    scalars = [c.arg(i).dims for i in range(n_in, len(c.operands))] + [o.dims for o in outs[n_out:]]
    if dims != (0,) or not arrays or any(len(a) != 1 or a != arrays[0] for a in arrays):
        return None
    if any(scalars):
        return None
    reverse = c.inst.attrs.get("is_reverse", "false") == "true"
    return n_in, n_out, arrays[0][0], reverse


_SCAN_FORM: Final = (
    "only a scan of rank-1 inputs along dimension 0 with scalar carries is modelled "
    "(its body may mix the other dimensions)"
)


def _scan_out(c: OpContext, k: int) -> list[OperandMaps]:
    """Scan along dimension 0: output ``d`` depends on the inputs up to ``d``.

    The carry after step ``d`` has seen inputs ``0..d`` (``d..n-1`` with
    ``is_reverse=true``) and the initial carries, and the body makes output ``d`` from
    it: the input maps are ``s`` in that prefix (range variable and constraint), the
    carries are read whole. A final carry (a scalar output) has seen every input.
    XLA's map reads input ``d`` only, which leaves out what the carry brings.
    """
    shape = _scan_check(c)
    if shape is None:
        return [c.unknown(_SCAN_FORM)] * len(c.operands)
    n_in, n_out, length, reverse = shape
    c.out(k)
    carries = len(c.operands) - n_in
    if k < n_out:
        bound = (0, length - 1)

        def constraints(
            d: list[Term], s: list[Term], rt: list[Term]
        ) -> list[tuple[Term, int, int]]:
            # s <= d (forward) or s >= d (reverse).
            return [(s[0] - d[0], 0, length - 1) if reverse else (d[0] - s[0], 0, length - 1)]

        prefix = IndexingMap.build(
            [bound], lambda d, s, rt: [s[0]], range_vars=[bound], constraints=constraints
        )
        return copies(prefix, n_in) + copies(scalar_read_map([length]), carries)
    everything = IndexingMap.build([], lambda d, s, rt: [s[0]], range_vars=[(0, length - 1)])
    return copies(everything, n_in) + copies(scalar_read_map([]), carries)


def _scan_in(c: OpContext, i: int) -> list[OperandMaps]:
    """The inverse of :func:`_scan_out`: input ``d`` reaches outputs ``d..n-1``.

    (``0..d`` with ``is_reverse=true``) and every final carry; an initial carry reaches
    every output.
    """
    shape = _scan_check(c)
    if shape is None:
        return [c.unknown(_SCAN_FORM)] * len(c.outputs())
    n_in, n_out, length, reverse = shape
    carries = len(c.outputs()) - n_out
    bound = (0, length - 1)
    if i >= n_in:
        return copies(scalar_write_map([length]), n_out) + copies(scalar_read_map([]), carries)

    def constraints(d: list[Term], s: list[Term], rt: list[Term]) -> list[tuple[Term, int, int]]:
        # Output s has seen input d: s >= d (forward) or s <= d (reverse).
        return [(d[0] - s[0], 0, length - 1) if reverse else (s[0] - d[0], 0, length - 1)]

    later = IndexingMap.build(
        [bound], lambda d, s, rt: [s[0]], range_vars=[bound], constraints=constraints
    )
    return copies(later, n_out) + copies(scalar_read_map([length]), carries)


# The opcodes this module maps, per direction (quorem.hlo.ops.dispatch merges them).
OUT_TO_IN: Final[dict[str, OpMaps]] = {
    "scan": _scan_out,
}
IN_TO_OUT: Final[dict[str, OpMaps]] = {
    "scan": _scan_in,
}
