"""Indexing maps (XLA style) on quorem's proven simplifier: parse, print, compose, simplify."""

from .map import IndexingMap, IndexingMapError, Variable
from .mapsyntax import parse_expr, parse_map, print_expr, print_map

__all__ = [
    "IndexingMap",
    "IndexingMapError",
    "Variable",
    "parse_expr",
    "parse_map",
    "print_expr",
    "print_map",
]
