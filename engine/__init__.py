"""quorem: proven simplification of integer index arithmetic.

The public API lives in :mod:`quorem.api` and is re-exported here. Importing
``quorem`` never imports Z3; the prover is :mod:`quorem.verify`.
"""

from . import _native

# Before any engine module is imported: QUOREM_PURE_PYTHON=1, or a stale extension, loads
# the interpreted source instead of the compiled module.
_native.install()

from .api import *  # noqa: E402, F403
from .api import __all__ as __all__  # noqa: E402
