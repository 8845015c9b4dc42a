"""Where the privacy ledger keeps its rows: in memory, in one SQLite file, or in PostgreSQL.

A row is ``(dataset key, release index, mechanism, epsilon, delta, part, time, who)``; nothing
of the data itself is ever stored. Every store exposes the same transaction, so the ledger's cap
check and its insert run in one transaction whatever the storage: a lock in memory,
``BEGIN IMMEDIATE`` in SQLite (the write lock is taken before the check reads anything, so
two processes can never both pass the check on the same total), and in PostgreSQL a row lock
on each dataset the release is charged to (:mod:`dpcore.privacy.ledger_pg`).

Where: :func:`default_ledger_path` (``$DPCORE_LEDGER``, else a per-user file) or the
``path=``/``--ledger`` a caller gives. A file path is an SQLite ledger; a
``postgresql://user@host/database`` URL is a PostgreSQL ledger (several app processes or
machines, one budget); any other URL is refused, never taken for a file name
(:func:`server_url`).

A dataset is keyed by its rows (:mod:`dpcore.privacy.identity`: a keyed digest of each row's
normalised cells, whatever the file's encoding, delimiter, column names, order or label case),
with a random salt created once per ledger and stored in it. A dataset enters the ledger (its
``datasets`` row, its owner and one keyed digest per row) with its first release or cap, never
when a file is merely keyed; a new dataset sharing rows with an earlier one its user may see
is then linked to it: every release on it is recorded against both and checked against both
caps. ``grants`` lets a user see a dataset someone else registered. Keys of ledgers written
before (HMAC of the file's bytes, :func:`dataset_key`; ``ds2-`` content keys) keep working.

The file is private to its keeper: created 0600 (its WAL files follow), in a directory
created 0700; an older ledger is narrowed to 0600 when opened. With the salt and the row
digests, a guessed row can be tested for membership, so nobody else may read it (in
PostgreSQL: nobody but the ledger's role may read its tables).

Schema. ``schema_version`` holds the version (:data:`SCHEMA_VERSION`); the migrations are one
list per backend, applied in order from the ledger's version, in the transaction that opens
it (:func:`pending`). Version 1 had ``releases``, ``caps`` and ``settings`` (and no
``schema_version``); version 2 adds ``datasets``, ``row_hashes`` and ``links`` and registers
version 1's datasets as byte-keyed ones; version 3 adds who: ``datasets.owner`` (the user
who registered it, ``''`` for the local single user and every earlier dataset),
``releases.who`` and the ``grants`` table. A ledger of a later version than this code knows
is refused, so an older dpcore never writes rows a newer schema would misread.

Settings: ``$DPCORE_LEDGER`` the location; ``$DPCORE_LEDGER_DEFAULT_CAP`` a cap on the total ε
given to every new dataset (with ``dpcore ledger default-cap``'s stored value, the lower one
applies).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ledger_pg import PostgresStore

__all__ = [
    "LedgerUnavailableError",
    "MemoryStore",
    "SQLiteStore",
    "dataset_key",
    "default_ledger_path",
    "env_default_cap",
    "open_store",
    "server_url",
    "shown_location",
]

ENV = "DPCORE_LEDGER"
DEFAULT_CAP_ENV = "DPCORE_LEDGER_DEFAULT_CAP"
SCHEMA_VERSION = 3
# Seconds a connection waits for another one's write lock before it gives up.
BUSY_TIMEOUT_S = 30.0
#: URL schemes of a PostgreSQL ledger (libpq's two spellings).
SERVER_SCHEMES = ("postgresql", "postgres")
# "scheme:/": a URL, or what pathlib made of one ("postgresql://h/db" -> "postgresql:/h/db").
# Two letters at least, so that a Windows drive ("C:/") stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")


class LedgerUnavailableError(OSError):
    """The ledger's storage cannot be reached (a PostgreSQL server down, refusing the role)."""


#: A migration step: one SQL statement, or a function of the open connection and the time.
Step = str | Callable[[Any, str], None]


def backfill(sql: str) -> Callable[[Any, str], None]:
    """A migration step running ``sql`` with the migration's time as its one parameter."""

    def step(con: Any, when: str) -> None:
        con.execute(sql, (when,))

    return step


_MIGRATIONS: tuple[tuple[int, tuple[Step, ...]], ...] = (
    (
        1,
        (
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
        ),
    ),
    # Datasets known to the ledger (a key is opened only once registered) and the keyed
    # digests of their rows, which link datasets that share patients.
    (
        2,
        (
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
            """CREATE TABLE IF NOT EXISTS datasets (
            dataset TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            columns TEXT NOT NULL,
            rows INTEGER,
            time TEXT NOT NULL)""",
            "CREATE TABLE IF NOT EXISTS row_hashes (dataset TEXT NOT NULL, hash BLOB NOT NULL)",
            "CREATE INDEX IF NOT EXISTS row_hashes_by_hash ON row_hashes (hash)",
            "CREATE INDEX IF NOT EXISTS row_hashes_by_dataset ON row_hashes (dataset)",
            # Datasets that share at least one row, both ways, found when the later one registers.
            """CREATE TABLE IF NOT EXISTS links (
            dataset TEXT NOT NULL, other TEXT NOT NULL, PRIMARY KEY (dataset, other))""",
            # Every dataset a version-1 ledger knows was keyed by its bytes: register it as such.
            backfill(
                "INSERT OR IGNORE INTO datasets (dataset, kind, name, columns, rows, time) "
                "SELECT DISTINCT dataset, 'bytes', '', '[]', NULL, ? FROM "
                "(SELECT dataset FROM releases UNION SELECT dataset FROM caps)"
            ),
        ),
    ),
    # Who: the user who registered each dataset and who made each release ('' the local
    # single user, and every dataset and release of an earlier ledger), and the datasets a
    # keeper granted to other users (what a user may see: privacy rule 12).
    (
        3,
        (
            "ALTER TABLE datasets ADD COLUMN owner TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE releases ADD COLUMN who TEXT NOT NULL DEFAULT ''",
            """CREATE TABLE IF NOT EXISTS grants (
            dataset TEXT NOT NULL,
            grantee TEXT NOT NULL,
            time TEXT NOT NULL,
            PRIMARY KEY (dataset, grantee))""",
        ),
    ),
)
_READY: set[Path | str] = set()  # ledgers this process has already created or checked
_READY_LOCK = threading.Lock()


def pending(
    version: int, migrations: Sequence[tuple[int, tuple[Step, ...]]], where: str
) -> list[tuple[int, tuple[Step, ...]]]:
    """The migrations a ledger at ``version`` needs, in order (0: a new ledger).

    Raises
    ------
    RuntimeError
        The ledger is of a later version than this code knows (a newer dpcore wrote it).
    """
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the ledger {where} has schema version {version}, newer than this "
            f"dpcore knows ({SCHEMA_VERSION}): upgrade dpcore to use it"
        )
    return [(v, steps) for v, steps in migrations if v > version]


def run_migrations(
    con: Any, version: int, migrations: Sequence[tuple[int, tuple[Step, ...]]], where: str
) -> None:
    """Apply the pending migrations on ``con`` (inside the caller's transaction) and record
    the new version; nothing when the ledger is current."""
    todo = pending(version, migrations, where)
    if not todo:
        return
    when = _utc_now()
    for _, steps in todo:
        for step in steps:
            if callable(step):
                step(con, when)
            else:
                con.execute(step)
    con.execute("DELETE FROM schema_version")
    # The version as a literal: the one statement both backends' placeholders agree on.
    con.execute(f"INSERT INTO schema_version (version) VALUES ({int(SCHEMA_VERSION)})")


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


def open_store(location: str | os.PathLike[str], dataset: str) -> SQLiteStore | PostgresStore:
    """The durable store of ``dataset`` at ``location``: PostgreSQL for a ``postgresql://``
    URL (:func:`server_url`), else the SQLite file at that path."""
    url = server_url(location)
    if url is None:
        return SQLiteStore(location, dataset)
    from .ledger_pg import PostgresStore

    return PostgresStore(url, dataset)


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


def dataset_key(data: bytes, name: str = "", *, path: str | os.PathLike[str] | None = None) -> str:
    """The byte key of a file: HMAC-SHA-256 of its bytes (and name) under the ledger's salt.

    Kept for ledgers written before the content identity and for links to them: a trailing
    newline or a re-saved file gives another byte key. Key datasets by their content with
    :meth:`dpcore.PrivacyLedger.for_file` (or ``for_cells``/``for_trial``) instead.

    Parameters
    ----------
    data : bytes
        The file's bytes, exactly as uploaded (the same bytes give the same key).
    name : str, optional
        A name the analyst gives the dataset; different names give different keys.
    path : str or Path, optional
        The ledger (a file, or a ``postgresql://`` URL) whose salt is used (created on first
        use); default :func:`default_ledger_path`.

    Returns
    -------
    str
        64 hexadecimal characters, registered in the ledger as a byte-keyed dataset.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be the file's bytes, got {type(data).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r}")
    store = open_store(default_ledger_path() if path is None else path, "")
    key = byte_key(store.salt(), data, name)
    with store.transaction() as tx:
        tx.register(key, "bytes", name, (), None, _utc_now())
    return key


def byte_key(salt: bytes, data: bytes, name: str = "") -> str:
    """HMAC-SHA-256 of ``name`` and ``data`` under ``salt`` (the version-1 dataset key)."""
    label = name.encode("utf-8")
    mac = hmac.new(salt, len(label).to_bytes(8, "big") + label, hashlib.sha256)
    mac.update(bytes(data))
    return mac.hexdigest()


def _utc_now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat()


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

    def hold(self, datasets: Iterable[str | None]) -> None:
        """Nothing to lock: the whole store is already held (see :meth:`transaction`)."""

    def hold_linked(self, keep: Callable[[list[str]], list[str]] | None = None) -> list[str]:
        return []


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
            _private_file(self.path)
            con = self._connect()
            try:
                _set_wal(con)
                con.execute("BEGIN IMMEDIATE")
                try:
                    run_migrations(con, _version(con), _MIGRATIONS, repr(str(self.path)))
                    con.execute(
                        "INSERT OR IGNORE INTO settings VALUES ('salt', ?)",
                        (secrets.token_bytes(32),),
                    )
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
            finally:
                con.close()
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    _narrow(side)
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
            ((value,),) = tx.con.execute("SELECT value FROM settings WHERE name = 'salt'")
        return bytes(value)


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


class _DatasetQueries:
    """The dataset table's reads and its name, written once for both stores: ``P`` is the
    driver's parameter placeholder (``?`` for sqlite3, ``%s`` for psycopg)."""

    P = "?"
    con: Any
    dataset: str

    def info(self, dataset=None):
        """(kind, name, owner, rows, time) of a registered dataset, or None."""
        return self.con.execute(
            f"SELECT kind, name, owner, rows, time FROM datasets WHERE dataset = {self.P}",
            (dataset or self.dataset,),
        ).fetchone()

    def set_name(self, name, dataset=None):
        self.con.execute(
            f"UPDATE datasets SET name = {self.P} WHERE dataset = {self.P}",
            (name, dataset or self.dataset),
        )

    def datasets(self):
        """Every registered dataset: (dataset, kind, name, owner, rows, time), oldest first."""
        return self.con.execute(
            "SELECT dataset, kind, name, owner, rows, time FROM datasets ORDER BY time, dataset"
        ).fetchall()

    def legacy_columns(self):
        """The distinct column lists of the ``ds2-`` datasets (an earlier identity)."""
        rows = self.con.execute(
            f"SELECT DISTINCT columns FROM datasets WHERE dataset LIKE {self.P} ORDER BY columns",
            ("ds2-%",),
        ).fetchall()
        return [c for (c,) in rows]


class _SQLiteTransaction(_DatasetQueries):
    """The statements of one SQLite transaction. ``BEGIN IMMEDIATE`` took the file's write
    lock before anything was read, so :meth:`hold` has nothing left to lock."""

    def __init__(self, con, dataset):
        self.con = con
        self.dataset = dataset

    def rows(self, dataset=None):
        return self.con.execute(
            "SELECT release, mechanism, epsilon, delta, part, time, who FROM releases "
            "WHERE dataset = ? ORDER BY release, id",
            (dataset or self.dataset,),
        ).fetchall()

    def cap(self, dataset=None):
        row = self.con.execute(
            "SELECT epsilon FROM caps WHERE dataset = ?", (dataset or self.dataset,)
        ).fetchone()
        return None if row is None else row[0]

    def insert(self, rows, dataset=None):
        self.con.executemany(
            "INSERT INTO releases (dataset, release, mechanism, epsilon, delta, part, time, who) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(dataset or self.dataset, *row) for row in rows],
        )

    def set_cap(self, cap, when, dataset=None):
        dataset = dataset or self.dataset
        if cap is None:
            self.con.execute("DELETE FROM caps WHERE dataset = ?", (dataset,))
        else:
            self.con.execute("INSERT OR REPLACE INTO caps VALUES (?, ?, ?)", (dataset, cap, when))

    def registered(self, dataset=None):
        return (
            self.con.execute(
                "SELECT 1 FROM datasets WHERE dataset = ?", (dataset or self.dataset,)
            ).fetchone()
            is not None
        )

    def register(self, dataset, kind, name, columns, row_hashes, when, owner=""):
        """Add a dataset (and its row digests) once; returns True when it is new."""
        if self.registered(dataset):
            return False
        self.con.execute(
            "INSERT INTO datasets (dataset, kind, name, columns, rows, time, owner) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                dataset,
                kind,
                name,
                json.dumps(list(columns)),
                None if row_hashes is None else len(row_hashes),
                when,
                owner,
            ),
        )
        if row_hashes:
            self.con.executemany(
                "INSERT INTO row_hashes VALUES (?, ?)", [(dataset, h) for h in set(row_hashes)]
            )
        return True

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

    def linked(self, dataset=None):
        """The other datasets that share at least one row with this one."""
        return [
            d
            for (d,) in self.con.execute(
                "SELECT other FROM links WHERE dataset = ? ORDER BY other",
                (dataset or self.dataset,),
            )
        ]

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

    def visible(self, datasets, user):
        """Those of ``datasets`` that ``user`` registered or was granted, in their order."""
        if not datasets:
            return []
        marks = ",".join("?" * len(datasets))
        seen = {
            d
            for (d,) in self.con.execute(
                f"SELECT dataset FROM datasets WHERE dataset IN ({marks}) AND (owner = ? OR "
                "dataset IN (SELECT dataset FROM grants WHERE grantee = ?))",
                (*datasets, user, user),
            )
        }
        return [d for d in datasets if d in seen]

    def generation(self):
        """What changes when a dataset registers or a grant is made (links and what a user
        may see can change only then): the numbers of datasets and of grants."""
        return tuple(
            self.con.execute(
                "SELECT (SELECT count(*) FROM datasets), (SELECT count(*) FROM grants)"
            ).fetchone()
        )

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
