"""The ``quorem`` command line: one module per command, dispatched by :mod:`quorem.cli.main`."""
