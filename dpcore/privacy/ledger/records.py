"""A release and a dataset as the privacy ledger reports them, and its rows read back as
releases."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["DatasetSummary", "LedgerEntry", "entries_of"]


@dataclass(frozen=True)
class LedgerEntry:
    """One private release: which mechanism, its (epsilon, delta) and when (UTC).

    ``index`` numbers the releases on the dataset from 1. ``parts`` is empty for a release
    computed on the whole dataset; for a release made of disjoint parts of it (each patient in
    one part) it holds ``(part name, epsilon)`` pairs, and ``epsilon`` is their largest.
    ``who`` is the user who released it (``""``: the local single user).
    """

    mechanism: str
    epsilon: float
    delta: float
    timestamp: datetime
    index: int = 1
    parts: tuple = ()
    who: str = ""


@dataclass(frozen=True)
class DatasetSummary:
    """One dataset of a ledger, as :meth:`dpcore.PrivacyLedger.list_datasets` lists it.

    ``owner`` is the user who registered it (``""``: the local single user, or a ledger of an
    earlier version); ``kind`` is ``"content"`` (keyed by its rows) or ``"bytes"`` (a byte key
    of the first ledgers); ``epsilon``/``delta`` its total over ``releases`` releases.
    """

    dataset: str
    name: str
    owner: str
    kind: str
    rows: int | None
    registered: datetime
    releases: int
    epsilon: float
    delta: float
    cap: float | None


def entries_of(rows) -> tuple[LedgerEntry, ...]:
    """Rows (index, mechanism, epsilon, delta, part, time, who) grouped into one entry per
    release."""
    grouped: dict = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row)
    out = []
    for index, group in grouped.items():
        _, mechanism, _, _, part, when, *who = group[0]
        parts = tuple((r[4], float(r[2])) for r in group) if part else ()
        out.append(
            LedgerEntry(
                mechanism,
                max(float(r[2]) for r in group),
                max(float(r[3]) for r in group),
                datetime.fromisoformat(when),
                int(index),
                parts,
                who[0] if who else "",
            )
        )
    return tuple(out)
