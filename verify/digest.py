"""The prover's code digest (see :mod:`quorem.proofdigest`, where it lives).

It lives in the engine because the engine checks proof records against it at run time,
without Z3; the prover's modules import it from here.
"""

from __future__ import annotations

from quorem.proofdigest import PROOF_ROOTS, code_digest, proof_modules, proof_sources

__all__ = ["PROOF_ROOTS", "code_digest", "proof_modules", "proof_sources"]
