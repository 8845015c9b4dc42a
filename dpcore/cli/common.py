"""What every ``dpcore`` command shares: its errors and exit codes, the ledger it opens, the
optional parts it needs."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_INPUT, EXIT_MISSING = 1, 3


class CliError(Exception):
    """A one-line message for the user and the exit code to end with."""

    def __init__(self, message: str, code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.code = code


def need(module: str, names: Sequence[str], what: str) -> list[Any]:
    """Names from a part of dpcore that may not be in this version, or a clear error."""
    import importlib

    try:
        mod = importlib.import_module(module)
        return [getattr(mod, n) for n in names]
    except (ImportError, AttributeError):
        raise CliError(
            f"{what} needs {module}.{'/'.join(names)}, which this version of dpcore does not have",
            EXIT_MISSING,
        ) from None


def open_ledger(path: str | None, data: bytes, name: str) -> Any:
    """The dataset's durable ledger (SQLite or PostgreSQL), keyed by the file's rows over all
    its columns, like the app's: whatever columns or dictionary a release uses.

    ``name`` is the label stored with the dataset, not part of the key, and ``path`` the
    keeper's ledger (a file or a ``postgresql://`` URL): neither makes a fresh budget for data
    the ledger has seen.
    """
    PrivacyLedger, default_path = need(
        "dpcore.privacy.accounting",
        ("PrivacyLedger", "default_ledger_path"),
        "the durable privacy ledger",
    )
    if not hasattr(PrivacyLedger, "for_file"):
        raise CliError(
            "the durable privacy ledger (PrivacyLedger.for_file) is not in this version "
            "of dpcore; refusing to release without recording it",
            EXIT_MISSING,
        )
    where = path or default_path()
    with ledger_errors(where):
        return PrivacyLedger.for_file(data, path=where, name=name)


@contextlib.contextmanager
def ledger_errors(where: Any) -> Iterator[None]:
    """The ledger's storage failures as one line naming ``where`` (its password hidden)."""
    from ..privacy.ledger.location import shown_location
    from ..privacy.ledger.sql import LedgerUnavailableError

    try:
        yield
    except ImportError as exc:  # a postgresql:// ledger without the server extra
        raise CliError(f"{exc} (--ledger, or $DPCORE_LEDGER)", EXIT_MISSING) from None
    except LedgerUnavailableError as exc:  # its message names the server already
        raise CliError(f"{exc} (--ledger, or $DPCORE_LEDGER)") from None
    except OSError as exc:
        raise CliError(
            f"cannot open the ledger {shown_location(where)} (--ledger, or "
            f"$DPCORE_LEDGER): {exc.strerror or exc}"
        ) from None


def read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None


def dataset_name(args: argparse.Namespace) -> str:
    """The name stored with the dataset: --name, else the data file's name."""
    return args.name or Path(args.data).name


def ignored_key_options(args: argparse.Namespace) -> None:
    if getattr(args, "dictionary", None) or getattr(args, "columns", None):
        print(
            "dpcore ledger: --dictionary and --columns no longer change the dataset: a file "
            "is keyed by all its rows, whatever columns a release uses",
            file=sys.stderr,
        )


def total_text(eps: float) -> str:
    return "no guarantee (inf)" if eps == float("inf") else f"{eps:g}"


def has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def check_room(ledger: Any, cost: float, no_guarantee: bool) -> None:
    """Refuse before anything is written when the cap cannot take the release (the record
    itself checks again, in its transaction)."""
    from ..privacy.composition import within_cap

    cap, spent = ledger.budget, ledger.total()[0]
    if not within_cap(spent, math.inf if no_guarantee else cost, cap):
        asked = "a release without a guarantee (total inf)" if no_guarantee else f"epsilon={cost:g}"
        raise CliError(
            f"privacy budget epsilon={cap:g} exceeded: {total_text(spent)} already "
            f"spent on this dataset, {asked} requested; nothing was written. Release "
            "with a smaller --epsilon, or raise the cap as the ledger's keeper: dpcore "
            "ledger cap DATA EPSILON --allow-raise"
        )


def new_ledger_file(where: Any) -> bool:
    """Whether ``where`` is an SQLite ledger that does not exist yet (reading it would make it)."""
    from ..privacy.ledger.location import server_url

    return server_url(where) is None and not Path(where).expanduser().exists()


def ledger_location(path: str | None) -> Any:
    (default_path,) = need(
        "dpcore.privacy.accounting", ("default_ledger_path",), "the durable privacy ledger"
    )
    return path or default_path()


def epsilon_arg(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"epsilon must be > 0 (or inf), got {text}")
    return value
