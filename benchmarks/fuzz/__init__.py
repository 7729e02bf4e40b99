"""Fuzz targets for each input surface of quorem (issue 14); run ``python -m benchmarks.fuzz``.

Targets: ``expr-soundness`` (random terms, simplified and evaluated), ``expr-text``,
``batch-json``, ``rules-file``, ``map-text``, ``hlo-text``, ``emit``. See
``benchmarks/results/NOTES.md`` (*Fuzzing*) for a run's counts.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.fuzz.emit import Emit
from benchmarks.fuzz.expr import BatchJson, ExprSoundness, ExprText
from benchmarks.fuzz.harness import Target
from benchmarks.fuzz.hlo import HloText
from benchmarks.fuzz.maps import MapText
from benchmarks.fuzz.rules import RulesFile

TARGETS: dict[str, Callable[[], Target]] = {
    ExprSoundness.name: ExprSoundness,
    ExprText.name: ExprText,
    BatchJson.name: BatchJson,
    RulesFile.name: RulesFile,
    MapText.name: MapText,
    HloText.name: HloText,
    Emit.name: Emit,
}

__all__ = ["TARGETS"]
