"""``python -m quorem``: the command-line tool."""

from quorem.cli.main import main

raise SystemExit(main())
