"""Where the privacy ledger keeps its rows: in memory, or in one SQLite file that outlives the process.

A row is ``(dataset key, release index, mechanism, epsilon, delta, part, time)``; nothing of
the data itself is ever stored. Both stores expose the same transaction, so the ledger's cap
check and its insert run in one transaction whatever the storage: a lock in memory,
``BEGIN IMMEDIATE`` in SQLite (the write lock is taken before the check reads anything, so
two processes can never both pass the check on the same total).

The dataset key is a keyed SHA-256 (HMAC) of the file's bytes, with a random salt created
once per ledger file and stored in it: the key identifies a file inside this ledger and
reveals nothing about the file to anyone without the ledger.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["MemoryStore", "SQLiteStore", "dataset_key", "default_ledger_path"]

ENV = "DPCORE_LEDGER"
# Seconds a connection waits for another one's write lock before it gives up.
BUSY_TIMEOUT_S = 30.0

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS releases (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset TEXT NOT NULL,
        release INTEGER NOT NULL,
        mechanism TEXT NOT NULL,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        part TEXT NOT NULL,
        time TEXT NOT NULL)""",
    # One row per (release, part): a second writer of the same release index fails loudly.
    "CREATE UNIQUE INDEX IF NOT EXISTS releases_by_dataset ON releases (dataset, release, part)",
    """CREATE TABLE IF NOT EXISTS caps (
        dataset TEXT PRIMARY KEY,
        epsilon REAL NOT NULL,
        time TEXT NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
)
_READY: set[Path] = set()  # ledger files this process has already created or checked
_READY_LOCK = threading.Lock()


def default_ledger_path() -> Path:
    """The ledger file: ``$DPCORE_LEDGER`` if set, else a per-user data directory.

    Linux ``$XDG_DATA_HOME/dpcore/ledger.sqlite`` (``~/.local/share`` by default), macOS
    ``~/Library/Application Support/dpcore``, Windows ``%LOCALAPPDATA%\\dpcore``.
    """
    chosen = os.environ.get(ENV)
    if chosen:
        return Path(chosen).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "dpcore" / "ledger.sqlite"


def dataset_key(data: bytes, name: str = "", *, path: str | os.PathLike[str] | None = None) -> str:
    """The ledger's key for a dataset: HMAC-SHA-256 of its bytes (and name) under the ledger's salt.

    Parameters
    ----------
    data : bytes
        The file's bytes, exactly as uploaded (the same bytes give the same key).
    name : str, optional
        A name the analyst gives the dataset; different names give different keys.
    path : str or Path, optional
        The ledger file whose salt is used (created on first use); default
        :func:`default_ledger_path`.

    Returns
    -------
    str
        64 hexadecimal characters.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be the file's bytes, got {type(data).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r}")
    salt = SQLiteStore(default_ledger_path() if path is None else path, "").salt()
    label = name.encode("utf-8")
    mac = hmac.new(salt, len(label).to_bytes(8, "big") + label, hashlib.sha256)
    mac.update(data)
    return mac.hexdigest()


class MemoryStore:
    """Rows in a list, for simulations and tests; gone with the process."""

    def __init__(self, cap: float | None = None) -> None:
        self._rows: list[tuple[Any, ...]] = []
        self._cap = cap
        self._lock = threading.Lock()

    def __getstate__(self):  # a ledger inside a cached result is pickled; a lock cannot be
        return {"_rows": list(self._rows), "_cap": self._cap}

    def __setstate__(self, state):
        self.__dict__.update(state, _lock=threading.Lock())

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[MemoryStore]:
        with self._lock:
            yield self

    def rows(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def cap(self) -> float | None:
        return self._cap

    def insert(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self._rows.extend(rows)

    def set_cap(self, cap: float | None, when: str) -> None:
        self._cap = cap


class SQLiteStore:
    """Rows of one dataset in an SQLite file (WAL mode), created with its tables on first use.

    Every transaction opens its own connection, so one store may be used from any thread and
    every process or thread that opens the file has its own connection.
    """

    def __init__(self, path: str | os.PathLike[str], dataset: str) -> None:
        self.path = Path(path).expanduser()
        self.dataset = dataset
        self._create()

    def __repr__(self):
        return f"SQLiteStore({str(self.path)!r}, {self.dataset[:12]!r})"

    def _connect(self):
        # isolation_level=None: no implicit transactions, so BEGIN IMMEDIATE below is the only one.
        return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)

    def _create(self):
        with _READY_LOCK:
            if self.path in _READY and self.path.exists():
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = self._connect()
            try:
                _set_wal(con)
                con.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    con.execute(statement)
                con.execute("INSERT OR IGNORE INTO settings VALUES ('salt', ?)",
                            (secrets.token_bytes(32),))
                con.execute("COMMIT")
            finally:
                con.close()
            _READY.add(self.path)

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[_SQLiteTransaction]:
        """One transaction on a fresh connection; ``write`` takes the write lock at BEGIN."""
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield _SQLiteTransaction(con, self.dataset)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()

    def salt(self) -> bytes:
        with self.transaction(write=False) as tx:
            (value,), = tx.con.execute("SELECT value FROM settings WHERE name = 'salt'")
        return bytes(value)


class _SQLiteTransaction:
    def __init__(self, con, dataset):
        self.con = con
        self.dataset = dataset

    def rows(self):
        return self.con.execute(
            "SELECT release, mechanism, epsilon, delta, part, time FROM releases "
            "WHERE dataset = ? ORDER BY release, id", (self.dataset,)).fetchall()

    def cap(self):
        row = self.con.execute("SELECT epsilon FROM caps WHERE dataset = ?",
                               (self.dataset,)).fetchone()
        return None if row is None else row[0]

    def insert(self, rows):
        self.con.executemany(
            "INSERT INTO releases (dataset, release, mechanism, epsilon, delta, part, time) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", [(self.dataset, *row) for row in rows])

    def set_cap(self, cap, when):
        if cap is None:
            self.con.execute("DELETE FROM caps WHERE dataset = ?", (self.dataset,))
        else:
            self.con.execute("INSERT OR REPLACE INTO caps VALUES (?, ?, ?)",
                             (self.dataset, cap, when))


def _set_wal(con):
    """Switch the file to write-ahead logging (persistent), retrying while another opener holds it."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
            continue
        if mode.lower() != "wal":
            raise sqlite3.OperationalError(f"the ledger file cannot use WAL mode (got {mode!r})")
        return
