"""What a user can get wrong in a trial file or a column choice, and how messages quote it.

:class:`TrialDataError` carries a message meant for the person who uploaded the file; the
helpers here quote what they wrote (a column name, a label, a value) short and printable, so a
message never carries more of the data than the one value it names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

__all__ = ["TrialDataError", "column_name", "duplicates", "file_bytes", "name_list", "quote"]


class TrialDataError(ValueError):
    """A CSV file or a column choice that cannot be read as a two-arm randomized trial.

    The message is plain text meant for the person who uploaded the file; it quotes at most a
    short excerpt of the data (a column name, a label or one value).
    """


def column_name(value: Any, name: str) -> str:
    """``value`` when it names one column (a str), else a TypeError that says ``name`` must.

    Examples
    --------
    >>> column_name("arm", "treatment")
    'arm'
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a column name (str), got {type(value).__name__}")
    return value


def duplicates(values: Iterable[Any]) -> list[Any]:
    """The values that occur more than once, each once, in the order of their second occurrence."""
    seen, dup = set(), []
    for v in values:
        if v in seen and v not in dup:
            dup.append(v)
        seen.add(v)
    return dup


def quote(value: Any, limit: int = 40) -> str:
    """A short, printable, quoted excerpt of a user value."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"


def name_list(names: Iterable[Any], limit: int = 10) -> str:
    """Up to ``limit`` names, each quoted (:func:`quote`), and how many more."""
    names = list(names)
    shown = ", ".join(quote(c) for c in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def file_bytes(
    path: str | os.PathLike[str],
    what: str = "",
    error: type[Exception] = TrialDataError,
    limit: int | None = None,
) -> bytes:
    """The bytes of a file a user named (its first ``limit``), or ``error`` saying that
    ``what`` (``"the dictionary "``, say) cannot be opened, with its name quoted and why."""
    try:
        with open(path, "rb") as fh:
            return fh.read(-1 if limit is None else limit)
    except OSError as exc:
        raise error(f"cannot open {what}{quote(os.fspath(path))}: {exc.strerror}") from None
