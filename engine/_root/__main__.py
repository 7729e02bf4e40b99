"""``python -m quorem``: the command-line tool."""

from quorem.engine.cli import main

raise SystemExit(main())
