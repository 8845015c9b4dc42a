"""What a ledger's keeper does to the ledger as a whole: the cap every new dataset gets, the
datasets a user may see besides their own, the list of datasets; and who its users are.

A user is ``None`` (the local single user, who sees every dataset) or a name on a department
server; the keepers see every dataset. :class:`dpcore.PrivacyLedger` offers these acts as its
static methods (``PrivacyLedger.list_datasets``, ``grant``, ``default_cap``,
``set_default_cap``), as ``dpcore ledger`` does on the command line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..._validation import check_real
from .location import default_ledger_path, env_default_cap, shown_location
from .records import DatasetSummary, entries_of
from .stores import open_store

__all__ = [
    "RAISE_HINT",
    "check_keepers",
    "check_user",
    "default_cap",
    "default_cap_of",
    "grant",
    "list_datasets",
    "set_default_cap",
]

#: How a cap is raised: only the keeper does it, on the command line.
RAISE_HINT = (
    "raise it on the command line, as the ledger's keeper: dpcore ledger cap DATA "
    "EPSILON --allow-raise"
)


def default_cap(path: str | os.PathLike[str] | None = None) -> float | None:
    """The cap every new dataset of the ledger gets: the lower of the keeper's stored
    default (:func:`set_default_cap`) and ``$DPCORE_LEDGER_DEFAULT_CAP``; None if neither."""
    store = open_store(default_ledger_path() if path is None else path, "")
    with store.transaction(write=False) as tx:
        return default_cap_of(tx)


def set_default_cap(
    path: str | os.PathLike[str] | None, cap: float | None, *, allow_raise: bool = False
) -> None:
    """Set the cap given to every dataset the ledger sees from now on (the keeper's).

    Parameters
    ----------
    path : str or Path or None
        The ledger (a file or a ``postgresql://`` URL); None for
        :func:`default_ledger_path`.
    cap : float or None
        The default cap on a new dataset's total ε; None removes it.
    allow_raise : bool
        Raising or removing a stored default needs it (``dpcore ledger default-cap
        --allow-raise``), as for a dataset's cap.
    """
    cap = None if cap is None else check_real(cap, "cap", low=0.0)
    store = open_store(default_ledger_path() if path is None else path, "")
    with store.transaction() as tx:
        tx.hold_ledger()
        stored = tx.setting("default_cap")
        current = None if stored is None else float(stored)
        if current is not None and (cap is None or cap > current) and not allow_raise:
            raise ValueError(
                f"the default cap epsilon={current:g} can only be lowered "
                f"here: {RAISE_HINT.replace('cap DATA', 'default-cap')}"
            )
        tx.set_setting("default_cap", None if cap is None else repr(cap))


def grant(path: str | os.PathLike[str] | None, dataset: str, user: str) -> None:
    """Let ``user`` see ``dataset`` (the keeper's act, on a department server).

    From then on the dataset is linked, when they share rows, to the datasets ``user``
    registers, and ``user`` may open it and release on it.

    Raises
    ------
    ValueError
        ``dataset`` is not a dataset of the ledger.
    """
    user = check_user(user)
    if user is None:
        raise TypeError("user must be a user name (the local user sees every dataset)")
    store = open_store(default_ledger_path() if path is None else path, "")
    with store.transaction() as tx:
        if not isinstance(dataset, str) or not tx.registered(dataset):
            raise ValueError(
                f"dataset={str(dataset)[:16]}... is not a dataset of the ledger "
                f"{shown_location(store.path)!r}"
            )
        tx.grant(dataset, user, datetime.now(UTC).isoformat())


def list_datasets(
    path: str | os.PathLike[str] | None = None,
    *,
    user: str | None = None,
    keepers: Iterable[str] | None = None,
) -> tuple[DatasetSummary, ...]:
    """Every dataset of the ledger that ``user`` may see, oldest first, with its name, who
    registered it, its total and its cap (``dpcore ledger list``)."""
    user, keepers = check_user(user), check_keepers(keepers)
    store = open_store(default_ledger_path() if path is None else path, "")
    out = []
    with store.transaction(write=False) as tx:
        rows = tx.datasets()
        if user is not None and user not in keepers:
            seen = set(tx.visible([r[0] for r in rows], user))
            rows = [r for r in rows if r[0] in seen]
        for key, kind, name, owner, n, when in rows:
            entries = entries_of(tx.rows(key))
            out.append(
                DatasetSummary(
                    key,
                    name,
                    owner,
                    kind,
                    n,
                    datetime.fromisoformat(when),
                    len(entries),
                    float(sum(e.epsilon for e in entries)),
                    float(sum(e.delta for e in entries)),
                    tx.cap(key),
                )
            )
    return tuple(out)


def default_cap_of(tx: Any) -> float | None:
    """The cap a new dataset gets: the lower of the stored default and the environment's."""
    stored = tx.setting("default_cap")
    caps = [
        c for c in (None if stored is None else float(stored), env_default_cap()) if c is not None
    ]
    return min(caps) if caps else None


def check_user(user: Any) -> str | None:
    """None (the local single user) or a user name, stripped."""
    if user is None:
        return None
    if not isinstance(user, str) or not user.strip():
        raise TypeError(f"user must be a user name or None (the local user), got {user!r}")
    return user.strip()


def check_keepers(keepers):
    """The users who see every dataset (none by default), each name checked."""
    if keepers is None:
        return frozenset()
    if isinstance(keepers, str):
        raise TypeError(f"keepers must be a set of user names, not one string: {keepers!r}")
    return frozenset(check_user(k) for k in keepers)
