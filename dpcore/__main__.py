"""``python -m dpcore``: the command line (see :mod:`dpcore.cli`)."""

from .cli import main

raise SystemExit(main())
