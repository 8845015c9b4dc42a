"""The privacy ledger's rows in one SQLite file (WAL mode), private to its keeper.

The cap check and the record run in one ``BEGIN IMMEDIATE`` transaction: the file's write
lock is taken before the check reads anything, so two processes can never both pass the check
on the same total. The file is created 0600 (its WAL files follow) in a directory created
0700, and an older file is narrowed to 0600 when opened.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .schema import SQLITE_MIGRATIONS, run_migrations
from .sql import BUSY_TIMEOUT_S, Transaction, prepare_once

__all__ = ["SQLiteStore", "SQLiteTransaction"]


class SQLiteStore:
    """Rows of one dataset in an SQLite file (WAL mode), created with its tables on first use.

    Every transaction opens its own connection, so one store may be used from any thread and
    every process or thread that opens the file has its own connection.
    """

    def __init__(self, path: str | os.PathLike[str], dataset: str) -> None:
        self.path = Path(path).expanduser()
        self.dataset = dataset
        prepare_once(self.path, self._create, still_there=self.path.exists)

    def __repr__(self):
        return f"SQLiteStore({str(self.path)!r}, {self.dataset[:12]!r})"

    def _connect(self):
        # isolation_level=None: no implicit transactions, so BEGIN IMMEDIATE below is the only one.
        return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)

    def _create(self) -> None:
        _private_file(self.path)
        con = self._connect()
        try:
            _set_wal(con)
            with _begun(con, "BEGIN IMMEDIATE"):
                run_migrations(con, _version(con), SQLITE_MIGRATIONS, repr(str(self.path)))
                con.execute(
                    "INSERT OR IGNORE INTO settings VALUES ('salt', ?)",
                    (secrets.token_bytes(32),),
                )
        finally:
            con.close()
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                _narrow(side)

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[SQLiteTransaction]:
        """One transaction on a fresh connection; ``write`` takes the write lock at BEGIN."""
        con = self._connect()
        try:
            with _begun(con, "BEGIN IMMEDIATE" if write else "BEGIN"):
                yield SQLiteTransaction(con, self.dataset)
        finally:
            con.close()

    def salt(self) -> bytes:
        with self.transaction(write=False) as tx:
            ((value,),) = tx.con.execute("SELECT value FROM settings WHERE name = 'salt'")
        return bytes(value)


@contextmanager
def _begun(con: sqlite3.Connection, begin: str) -> Iterator[None]:
    """``begin``, then COMMIT when the block ends, ROLLBACK when it raises."""
    con.execute(begin)
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _private_file(path: Path) -> None:
    """Create the ledger file 0600 in a directory created 0700; narrow an older file to 0600.

    SQLite gives the WAL and shared-memory files the database file's mode, so they follow.
    """
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _narrow(path.parent, 0o700)
    if path.exists():
        _narrow(path)
    else:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
        _narrow(path)


def _narrow(path: Path, mode: int = 0o600) -> None:
    if sys.platform == "win32":  # POSIX modes do not apply; the user profile is private
        return
    try:
        if path.stat().st_mode & 0o777 & ~mode:
            os.chmod(path, mode)
    except OSError:  # not ours to change (a keeper's shared file): leave it as it is
        pass


def _version(con) -> int:
    """The file's schema version: 0 for a new file, 1 before ``schema_version`` existed."""
    tables = {
        name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if "schema_version" in tables:
        ((version,),) = con.execute("SELECT max(version) FROM schema_version")
        if version is not None:
            return int(version)
    return 1 if "releases" in tables else 0


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


class SQLiteTransaction(Transaction):
    """The statements of one SQLite transaction. ``BEGIN IMMEDIATE`` took the file's write
    lock before anything was read, so :meth:`hold` has nothing left to lock."""

    def _among(self, values):
        return f"IN ({self._marks(len(values))})", tuple(values)

    def _executemany(self, sql: str, params: list[tuple[Any, ...]]) -> None:
        self.con.executemany(sql, params)

    def set_cap(self, cap, when, dataset=None):
        dataset = dataset or self.dataset
        if cap is None:
            self.con.execute("DELETE FROM caps WHERE dataset = ?", (dataset,))
        else:
            self.con.execute("INSERT OR REPLACE INTO caps VALUES (?, ?, ?)", (dataset, cap, when))

    def sharing(self, row_hashes, dataset=None):
        """The other datasets holding at least one of ``row_hashes``."""
        dataset = dataset or self.dataset
        self.con.execute("CREATE TEMP TABLE IF NOT EXISTS probe (hash BLOB PRIMARY KEY)")
        self.con.execute("DELETE FROM probe")
        self.con.executemany("INSERT OR IGNORE INTO probe VALUES (?)", [(h,) for h in row_hashes])
        found = self.con.execute(
            "SELECT DISTINCT r.dataset FROM row_hashes r JOIN probe p ON r.hash = p.hash "
            "WHERE r.dataset != ? ORDER BY r.dataset",
            (dataset,),
        ).fetchall()
        self.con.execute("DELETE FROM probe")
        return [d for (d,) in found]

    def link(self, a, b):
        self.con.executemany("INSERT OR IGNORE INTO links VALUES (?, ?)", [(a, b), (b, a)])

    def hold(self, datasets):
        """Lock these datasets' rows until the end of the transaction: here a no-op."""

    def hold_ledger(self):
        """Lock the whole ledger (registrations, settings): here a no-op."""

    def hold_linked(self, keep=None):
        """:meth:`linked` (those ``keep`` keeps), every one of them (and this dataset) held:
        here the file is."""
        linked = self.linked()
        return linked if keep is None else keep(linked)

    def grant(self, dataset, grantee, when):
        self.con.execute("INSERT OR IGNORE INTO grants VALUES (?, ?, ?)", (dataset, grantee, when))

    def add_rows(self, dataset, row_hashes):
        self.con.executemany(
            "INSERT INTO row_hashes VALUES (?, ?)", [(dataset, h) for h in set(row_hashes)]
        )

    def setting(self, name):
        row = self.con.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def set_setting(self, name, value):
        if value is None:
            self.con.execute("DELETE FROM settings WHERE name = ?", (name,))
        else:
            self.con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", (name, value))
