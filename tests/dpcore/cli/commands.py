"""The ``dpcore`` command lines that the tests run as a user would type them."""

from __future__ import annotations

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
