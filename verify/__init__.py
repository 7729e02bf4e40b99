"""The quorem prover (needs z3-solver): proves the rules of quorem.rules sound."""
