"""The ``dpcore`` command line: batch use of the science core (``dpcore --help``).

One module per command (:mod:`.fit`, :mod:`.apply`, :mod:`.ledger`, :mod:`.dictionary`,
:mod:`.sweep`, :mod:`.serve`), what they share in :mod:`.common`, the argument parser in
:mod:`.parser` and the dispatch in :mod:`.main`. Every subcommand documents itself with
``--help``. Errors are one line on standard error with an exit code: 1 for bad input, 2 for bad
arguments (argparse), 3 when a needed part of dpcore or an optional extra is missing. Private
releases made here are recorded in the same durable ledger as the dashboard's, so the budget of
a dataset counts both.
"""

from __future__ import annotations

import subprocess  # noqa: F401 - the commands' processes (tests replace subprocess.call)

from .common import EXIT_INPUT, EXIT_MISSING, CliError
from .main import app_main, main
from .parser import build_parser
from .serve import app_files

__all__ = ["EXIT_INPUT", "EXIT_MISSING", "CliError", "app_main", "build_parser", "main"]
__all__ += ["app_files"]
