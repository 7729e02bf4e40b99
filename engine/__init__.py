"""The quorem engine: terms, patterns, rules and the rewriter (no Z3 needed)."""
