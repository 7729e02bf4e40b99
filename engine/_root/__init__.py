"""quorem: proven simplification of integer index arithmetic.

The public API lives in :mod:`quorem.engine.api` and is re-exported here. Importing
``quorem`` never imports Z3; the prover is :mod:`quorem.verify`.
"""

from quorem.engine.api import *  # noqa: F403
from quorem.engine.api import __all__ as __all__
