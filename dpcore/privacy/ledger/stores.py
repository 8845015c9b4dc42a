"""The ledger's three stores behind one transaction API: the memory store here, the SQLite
and PostgreSQL stores beside it, and :func:`open_store`, the durable one a location names."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .location import server_url
from .postgres import PostgresStore
from .sqlite import SQLiteStore

__all__ = ["DurableStore", "MemoryStore", "open_store"]

DurableStore = SQLiteStore | PostgresStore


def open_store(location: str | os.PathLike[str], dataset: str) -> DurableStore:
    """The durable store of ``dataset`` at ``location``: PostgreSQL for a ``postgresql://``
    URL (:func:`~dpcore.privacy.ledger.location.server_url`), else the SQLite file at that
    path."""
    url = server_url(location)
    if url is None:
        return SQLiteStore(location, dataset)
    return PostgresStore(url, dataset)


class MemoryStore:
    """Rows in a list, for simulations and tests; gone with the process."""

    def __init__(self, cap: float | None = None) -> None:
        self._rows: list[tuple[Any, ...]] = []
        self._cap = cap
        self._lock = threading.Lock()
        self.dataset = ""

    def __getstate__(self):  # a ledger inside a cached result is pickled; a lock cannot be
        return {"_rows": list(self._rows), "_cap": self._cap, "dataset": self.dataset}

    def __setstate__(self, state):
        self.__dict__.update({"dataset": ""}, **state, _lock=threading.Lock())

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[MemoryStore]:
        with self._lock:
            yield self

    def rows(self, dataset: str | None = None) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def cap(self, dataset: str | None = None) -> float | None:
        return self._cap

    def insert(self, rows: Iterable[tuple[Any, ...]], dataset: str | None = None) -> None:
        self._rows.extend(rows)

    def set_cap(self, cap: float | None, when: str) -> None:
        self._cap = cap

    def linked(self) -> list[str]:
        return []

    def registered(self, dataset: str | None = None) -> bool:
        """A memory store holds one dataset, there from the start."""
        return True

    def hold(self, datasets: Iterable[str | None]) -> None:
        """Nothing to lock: the whole store is already held (see :meth:`transaction`)."""

    def hold_linked(self, keep: Callable[[list[str]], list[str]] | None = None) -> list[str]:
        return []
