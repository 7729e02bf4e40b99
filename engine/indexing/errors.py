"""The error of malformed indexing maps, shared by the map, its parser and its printer."""

from __future__ import annotations

from ..errors import QuoremError

__all__ = ["IndexingMapError"]


class IndexingMapError(QuoremError):
    """A map that is malformed: an unknown variable, an empty interval given as a bound..."""
