"""``python -m quorem``: the command-line tool."""

from .cli.main import main

raise SystemExit(main())
