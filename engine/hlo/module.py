"""Every computation of an HLO module analysed in one run: ``quorem hlo FILE --all``.

A real module has hundreds of fusions; starting a process per fusion costs far more
than the analysis. :func:`analyse_module` reads each computation as a fusion body (as
:func:`~quorem.hlo.indexing.fused_output_to_input` does): for each
output of its root, the maps from an output index to each parameter. One computation's
error (an inconsistent shape, ...) is reported with it and the others go on.

:meth:`ComputationIndexing.to_json` is the record ``quorem hlo --all --jsonl`` writes,
one line per computation.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any, Final

from ..errors import QuoremError
from ..indexing.map import IndexingMap
from ..indexing.mapsyntax import print_map
from .indexing import OperandMaps, fused_output_to_input
from .parse import Computation, HloError, Module

__all__ = ["ComputationIndexing", "analyse_module", "callers", "is_unknown"]

# A value naming computations: `%name` or `{%a, %b}` (branch_computations=, ...).
_NAMES_RE: Final = re.compile(r"\{?\s*%?[A-Za-z_][\w.\-]*(?:\s*,\s*%?[A-Za-z_][\w.\-]*)*\s*\}?")
_NAME_RE: Final = re.compile(r"%?([A-Za-z_][\w.\-]*)")


def is_unknown(m: object) -> bool:
    """Whether ``m`` stands for unknown indexing: anything but an :class:`IndexingMap`.

    (None, or an object saying why the map is unknown.)
    """
    return not isinstance(m, IndexingMap)


@dataclasses.dataclass(frozen=True, slots=True)
class ComputationIndexing:
    """The maps of one computation read as a fusion body, or the error that stopped them.

    Attributes:
        computation: its name.
        kind: ``entry``, ``fusion`` (called by a fusion's ``calls=``), the opcode of the
            first instruction calling it otherwise (``reduce``, ``call``, ``while``, ...),
            or ``unused``.
        line: the line it starts on.
        outputs: per output of its root, per parameter number, the distinct maps
            (``None`` for unknown indexing); empty when ``error`` is set.
        error: why it could not be analysed, or None.

    """

    computation: str
    kind: str
    line: int
    outputs: tuple[tuple[OperandMaps, ...], ...] = ()
    error: QuoremError | None = None

    @property
    def unknown_maps(self) -> int:
        """How many of its maps are unknown indexing."""
        return sum(is_unknown(m) for per in self.outputs for maps in per for m in maps)

    @property
    def known(self) -> bool:
        """Analysed without error, every map known."""
        return self.error is None and self.unknown_maps == 0

    def to_json(self) -> dict[str, Any]:
        """The JSON record ``quorem hlo --all --jsonl`` writes.

        ``computation``, ``kind``, ``line``, ``known``, then either ``outputs``
        (``[{"output": k, "operands": [{"operand": i, "maps": [...],
        "runtime_variables": [...]}]}]``, a map being XLA's text or null when unknown,
        with ``reasons`` beside ``maps`` when an unknown map says why) or ``error``.
        """
        record: dict[str, Any] = {
            "computation": self.computation,
            "kind": self.kind,
            "line": self.line,
            "known": self.known,
        }
        if self.error is not None:
            record["error"] = str(self.error)
            return record
        record["outputs"] = [
            {"output": k, "operands": [_operand_json(i, ms) for i, ms in enumerate(per)]}
            for k, per in enumerate(self.outputs)
        ]
        return record


def _operand_json(i: int, maps: OperandMaps) -> dict[str, Any]:
    out: dict[str, Any] = {
        "operand": i,
        "maps": [print_map(m) if isinstance(m, IndexingMap) else None for m in maps],
        "runtime_variables": [
            [{"name": v.name, "source": v.source} for v in m.rt_vars]
            if isinstance(m, IndexingMap)
            else None
            for m in maps
        ],
    }
    reasons = [getattr(m, "reason", None) if is_unknown(m) else None for m in maps]
    if any(reasons):
        out["reasons"] = reasons
    return out


def callers(module: Module) -> dict[str, list[tuple[str, str]]]:
    """Per computation name, the ``(opcode, attribute)`` of each instruction calling it.

    A call is an attribute whose whole value names computations: ``calls=%f``,
    ``to_apply=add``, ``branch_computations={%a, %b}``, ...
    """
    names = {c.name for c in module.computations}
    found: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    for comp in module.computations:
        for inst in comp.instructions:
            for key, value in inst.attrs.items():
                if not _NAMES_RE.fullmatch(value):
                    continue
                for name in _NAME_RE.findall(value):
                    if name in names:
                        found[name].append((inst.opcode, key))
    return found


def _kind(module: Module, comp: Computation, called: list[tuple[str, str]]) -> str:
    if comp is module.entry:
        return "entry"
    if any(op == "fusion" and key == "calls" for op, key in called):
        return "fusion"
    return called[0][0] if called else "unused"


def analyse_module(
    module: Module,
    *,
    fusions_only: bool = False,
    physical: bool = False,
    simplify: bool = True,
    remove_unused: bool = True,
) -> Iterator[ComputationIndexing]:
    """Each computation of ``module`` (in the order written) read as a fusion body.

    With ``fusions_only``, only the computations a fusion calls. The options are those
    of :func:`~quorem.hlo.indexing.fused_output_to_input`. An
    :class:`~quorem.errors.QuoremError` in one computation is its record's
    ``error``; the next computations are still analysed.
    """
    called = callers(module)
    for comp in module.computations:
        kind = _kind(module, comp, called[comp.name])
        if fusions_only and kind != "fusion":
            continue
        try:
            outputs = tuple(
                tuple(
                    fused_output_to_input(
                        module,
                        comp,
                        k,
                        physical=physical,
                        simplify=simplify,
                        remove_unused=remove_unused,
                    )
                )
                for k in range(len(comp.root.shape.arrays()))
            )
        except QuoremError as exc:
            error = exc if isinstance(exc, HloError) else comp.error(str(exc))
            yield ComputationIndexing(comp.name, kind, comp.line, (), error)
            continue
        yield ComputationIndexing(comp.name, kind, comp.line, outputs)
