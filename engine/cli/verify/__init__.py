"""``quorem verify``: prove rule files sound, for people writing rules and for CI.

Exit status, as every quorem command: 0 every obligation proven; 1 some rule unsound,
or the confirming solver disagreeing with Z3 (``--confirm``); 2 usage or input errors
(a bad rules file, say; ``quorem`` exits 2 too when Z3 is missing, and ``--confirm
cvc5`` without cvc5); 3 some obligation unknown, or seed-dependent (``--seeds``; unless
``--allow-unknown``); 130 interrupted.

The command's parts, one module each: ``options`` (the parser), ``select`` (the rules
proven), ``run`` (the proofs, on an executor), ``cached`` (the proof cache),
``outcome`` (a result with its checks), ``summary``, the reports (``text``,
``json_report``, ``junit``), ``proof_records``, ``smt2``, ``suggest``, and ``command``
(the run, in order). This package re-exports what other code and the tests use.
"""

from __future__ import annotations

from .command import main
from .exits import EXIT_PROVEN, EXIT_UNKNOWN, EXIT_UNSOUND, EXIT_USAGE
from .options import LABELS_EPILOG, OBLIGATIONS_ALL
from .run import verify_rules
from .select import slowest_rules

__all__ = [
    "EXIT_PROVEN",
    "EXIT_UNKNOWN",
    "EXIT_UNSOUND",
    "EXIT_USAGE",
    "LABELS_EPILOG",
    "OBLIGATIONS_ALL",
    "main",
    "slowest_rules",
    "verify_rules",
]
