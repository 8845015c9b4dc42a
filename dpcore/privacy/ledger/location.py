"""Where a privacy ledger is: a file path (SQLite) or a ``postgresql://`` URL, never another URL.

Settings: ``$DPCORE_LEDGER`` the location; ``$DPCORE_LEDGER_DEFAULT_CAP`` a cap on the total ε
given to every new dataset (with ``dpcore ledger default-cap``'s stored value, the lower one
applies).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

__all__ = [
    "DEFAULT_CAP_ENV",
    "ENV",
    "SERVER_SCHEMES",
    "default_ledger_path",
    "env_default_cap",
    "server_url",
    "shown_location",
]

ENV = "DPCORE_LEDGER"
DEFAULT_CAP_ENV = "DPCORE_LEDGER_DEFAULT_CAP"
#: URL schemes of a PostgreSQL ledger (libpq's two spellings).
SERVER_SCHEMES = ("postgresql", "postgres")
# "scheme:/": a URL, or what pathlib made of one ("postgresql://h/db" -> "postgresql:/h/db").
# Two letters at least, so that a Windows drive ("C:/") stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")


def server_url(location: str | os.PathLike[str]) -> str | None:
    """The PostgreSQL URL that ``location`` is, or None when it is a file path.

    Raises
    ------
    ValueError
        ``location`` is a URL of another kind (``mysql://``, ``file:``, ``sqlite://``), or a
        PostgreSQL URL that went through :class:`pathlib.Path` (which drops one of its
        slashes): the ledger refuses it rather than create a file of that name.
    """
    text = os.fspath(location)
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if (
        scheme in SERVER_SCHEMES
        and isinstance(location, str)
        and text[len(scheme) + 1 :].startswith("//")
    ):
        return text
    hint = (
        " (pass it as a string: a Path drops one of its slashes)"
        if scheme in SERVER_SCHEMES
        else ""
    )
    raise ValueError(
        f"the ledger location {shown_location(text)!r} is not one the ledger can "
        f"serve{hint}: give a file path (an SQLite ledger) or a "
        "postgresql://user@host/database URL (a PostgreSQL ledger)"
    )


def shown_location(location: str | os.PathLike[str]) -> str:
    """``location`` as messages and reprs show it: a URL's password replaced by ``***``."""
    text = os.fspath(location)
    text = re.sub(r"(://[^:/@?#]*:)[^@/?#]*@", r"\1***@", text)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", text, flags=re.IGNORECASE)


def default_ledger_path() -> Path | str:
    """The ledger: ``$DPCORE_LEDGER`` if set, else a file in a per-user data directory.

    Linux ``$XDG_DATA_HOME/dpcore/ledger.sqlite`` (``~/.local/share`` by default), macOS
    ``~/Library/Application Support/dpcore``, Windows ``%LOCALAPPDATA%\\dpcore``.

    Returns
    -------
    Path or str
        The SQLite file, or ``$DPCORE_LEDGER`` itself (a string) when it is a
        ``postgresql://`` URL; any other URL there is refused (:func:`server_url`).
    """
    chosen = os.environ.get(ENV)
    if chosen:
        return server_url(chosen) or Path(chosen).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "dpcore" / "ledger.sqlite"


def env_default_cap() -> float | None:
    """The default cap of ``$DPCORE_LEDGER_DEFAULT_CAP``, or None when unset.

    Raises
    ------
    ValueError
        The variable is set but not a positive number.
    """
    text = os.environ.get(DEFAULT_CAP_ENV, "").strip()
    if not text:
        return None
    try:
        cap = float(text)
    except ValueError:
        cap = float("nan")
    if not cap > 0:
        raise ValueError(f"{DEFAULT_CAP_ENV} must be a positive number (a cap on ε), got {text!r}")
    return cap
