"""The ``dpcore`` command lines that the tests run as a user would type them, and ``run``, which
runs one in this process."""

from __future__ import annotations

import subprocess
from os import PathLike


def fit_command(
    data: str | PathLike[str],
    dictionary: str | PathLike[str],
    ledger: str | PathLike[str],
    out: str | PathLike[str],
    epsilon: str = "1",
) -> list[str]:
    """``dpcore fit DATA --dictionary D --epsilon E --ledger L --out OUT``, as a list of strings
    (for ``dpcore.cli.main`` or a subprocess; more options may follow it)."""
    return [
        "fit",
        str(data),
        "--dictionary",
        str(dictionary),
        "--epsilon",
        epsilon,
        "--ledger",
        str(ledger),
        "--out",
        str(out),
    ]


def run(*args: object) -> subprocess.CompletedProcess[str]:
    """``dpcore ARGS`` in this process (``cli.main``): no interpreter to start."""
    import contextlib
    import io

    from dpcore import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            code = exc.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())
