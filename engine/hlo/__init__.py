"""XLA HLO text: parsing, layouts, and each instruction's indexing maps."""
