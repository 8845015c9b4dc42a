"""The privacy ledger's rows in PostgreSQL: one budget for several app processes or machines.

A ledger location ``postgresql://user@host:port/database`` (libpq's URL, with its query
parameters: ``?sslmode=verify-full``, ``?host=/run/postgresql`` for a socket, ...) keeps the
same tables, the same rows and the same keyed digests as the SQLite file
(:mod:`dpcore.privacy.ledger.sqlite`), behind the same transaction API. The password is best
kept out of the URL (``~/.pgpass`` or ``$PGPASSFILE``, which libpq reads); messages and reprs
show a URL's password as ``***``.

The driver is psycopg 3 (the ``server`` extra), imported only when a PostgreSQL
ledger is opened, so an SQLite ledger never needs it.

Locking. The cap check and the record are one transaction that holds a row lock on every
dataset the release is charged to: ``SELECT ... FROM datasets WHERE dataset = ANY(...) ORDER
BY dataset FOR UPDATE``, taken before the releases are read. A dataset's row is inserted
when it registers (``INSERT ... ON CONFLICT DO NOTHING``), so every dataset a release can
name has one. Two releases on one dataset queue on its row; releases on unrelated datasets
run side by side. The rows are locked in key order, so two releases on datasets that share
rows (each charged to both) wait for each other instead of deadlocking. Transactions run at
READ COMMITTED whatever the server's default: each statement after the lock sees the
releases that the previous holder committed (at REPEATABLE READ the transaction's snapshot
would predate them, and the check would read a stale total).

Why a row lock and not SERIALIZABLE with retry: the transaction's body is the ledger's own
Python code (:meth:`dpcore.PrivacyLedger._spend` reads, checks and writes between ``BEGIN``
and ``COMMIT``), which a context manager cannot run a second time; under SERIALIZABLE every
concurrent release but one would fail with a serialization error to be retried by the caller,
where the row lock simply makes it wait its turn, as ``BEGIN IMMEDIATE`` does in SQLite.
A waiter gives up after ``BUSY_TIMEOUT_S`` (``lock_timeout``) with an error, never a release.

Registrations (a new dataset, its row digests and its links to earlier datasets sharing
rows), schema migrations and the ledger-wide settings take one transaction-scoped advisory
lock instead (:data:`LEDGER_LOCK`): a dataset registering must see every dataset registered
before it, which no row lock on rows not yet written can promise. Registrations are rare
(once per dataset), so serializing them costs nothing; releases never take that lock.

Schema and migrations: :mod:`dpcore.privacy.ledger.schema` (the tables of every SQLite
version, in PostgreSQL types), applied under the advisory lock by the first process that opens
the database.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..._extras import install_hint
from .location import shown_location
from .schema import POSTGRES_MIGRATIONS, run_migrations
from .sql import BUSY_TIMEOUT_S, LedgerUnavailableError, Transaction, prepare_once

__all__ = ["LEDGER_LOCK", "PostgresStore", "PostgresTransaction"]

#: Key of the ledger-wide advisory lock (per database): migrations, registrations, settings.
LEDGER_LOCK = int.from_bytes(
    hashlib.sha256(b"dpcore privacy ledger").digest()[:8], "big", signed=True
)
CONNECT_TIMEOUT_S = 10


def _driver() -> Any:
    """psycopg 3, or an ImportError naming the extra that brings it."""
    try:
        import psycopg
    except ImportError as err:
        raise ImportError(
            "a PostgreSQL ledger (postgresql://...) needs psycopg 3: " + install_hint("server")
        ) from err
    return psycopg


class PostgresStore:
    """Rows of one dataset in a PostgreSQL database, its tables created on first use.

    Every transaction opens its own connection (nothing is kept between them), so one store
    may be used from any thread, pickled with a ledger, and every process has its own.

    Parameters
    ----------
    url : str
        A ``postgresql://`` (or ``postgres://``) URL, as libpq reads it.
    dataset : str
        The dataset key ("" for ledger-wide work: the salt, settings, registrations).
    """

    def __init__(self, url: str, dataset: str) -> None:
        self.path = url  # the ledger's location, as SQLiteStore.path is the file's
        self.dataset = dataset
        prepare_once(self.path, self._create)

    def __repr__(self) -> str:
        return f"PostgresStore({shown_location(self.path)!r}, {self.dataset[:12]!r})"

    def _connect(self) -> Any:
        psycopg = _driver()
        params = psycopg.conninfo.conninfo_to_dict(self.path)
        params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
        params.setdefault("application_name", "dpcore ledger")
        options = str(params.get("options") or "")
        if "lock_timeout" not in options:  # a waiter gives up, as SQLite's busy timeout does
            params["options"] = f"{options} -c lock_timeout={int(BUSY_TIMEOUT_S * 1000)}".strip()
        try:
            con = psycopg.connect(**params, autocommit=True)
        except psycopg.OperationalError as exc:
            detail = " ".join(str(exc).split())
            raise LedgerUnavailableError(
                f"cannot connect to the ledger {shown_location(self.path)}: {detail}"
            ) from None
        # Explicit, whatever default_transaction_isolation the server has: see the module.
        con.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return con

    def _create(self) -> None:
        con = self._connect()
        try:
            with con.transaction():
                con.execute("SELECT pg_advisory_xact_lock(%s)", (LEDGER_LOCK,))
                run_migrations(con, _version(con), POSTGRES_MIGRATIONS, shown_location(self.path))
                con.execute(
                    "INSERT INTO settings VALUES ('salt', %s) ON CONFLICT (name) DO NOTHING",
                    (secrets.token_bytes(32),),
                )
        finally:
            con.close()

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[PostgresTransaction]:
        """One READ COMMITTED transaction on a fresh connection (READ ONLY unless ``write``);
        a writer locks what it reads with :meth:`PostgresTransaction.hold` first."""
        con = self._connect()
        try:
            con.read_only = not write
            with con.transaction():
                yield PostgresTransaction(con, self.dataset)
        finally:
            con.close()

    def salt(self) -> bytes:
        with self.transaction(write=False) as tx:
            value = tx.setting("salt")
        return bytes(value)


def _version(con: Any) -> int:
    """The database's schema version: 0 when it has no ledger, 1 before ``schema_version``."""
    ((versions, releases),) = con.execute(
        "SELECT to_regclass('schema_version'), to_regclass('releases')"
    )
    if versions is not None:
        ((version,),) = con.execute("SELECT max(version) FROM schema_version")
        if version is not None:
            return int(version)
    return 1 if releases is not None else 0


class PostgresTransaction(Transaction):
    """The statements of one PostgreSQL transaction, as
    :class:`~dpcore.privacy.ledger.sqlite.SQLiteTransaction`.

    Unlike SQLite's ``BEGIN IMMEDIATE``, beginning locks nothing: a transaction that checks
    and then writes holds its rows first (:meth:`hold`, :meth:`hold_linked`,
    :meth:`hold_ledger`).
    """

    P = "%s"

    def _among(self, values):
        return f"= ANY({self.P})", (list(values),)

    def _executemany(self, sql: str, params: list[tuple[Any, ...]]) -> None:
        with self.con.cursor() as cur:
            cur.executemany(sql, params)

    def set_cap(self, cap, when, dataset=None):
        dataset = dataset or self.dataset
        if cap is None:
            self.con.execute("DELETE FROM caps WHERE dataset = %s", (dataset,))
        else:
            self.con.execute(
                "INSERT INTO caps VALUES (%s, %s, %s) ON CONFLICT (dataset) DO "
                "UPDATE SET epsilon = EXCLUDED.epsilon, time = EXCLUDED.time",
                (dataset, cap, when),
            )

    def sharing(self, row_hashes, dataset=None):
        """The other datasets holding at least one of ``row_hashes``."""
        found = self.con.execute(
            "SELECT DISTINCT dataset FROM row_hashes WHERE hash = ANY(%s) AND dataset <> %s "
            "ORDER BY dataset",
            (list(set(row_hashes)), dataset or self.dataset),
        ).fetchall()
        return [d for (d,) in found]

    def link(self, a, b):
        self.con.execute(
            "INSERT INTO links VALUES (%s, %s), (%s, %s) ON CONFLICT DO NOTHING", (a, b, b, a)
        )

    def grant(self, dataset, grantee, when):
        self.con.execute(
            "INSERT INTO grants VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (dataset, grantee, when),
        )

    def add_rows(self, dataset, row_hashes):
        with (
            self.con.cursor() as cur,
            cur.copy("COPY row_hashes (dataset, hash) FROM STDIN") as copy,
        ):
            for h in set(row_hashes):
                copy.write_row((dataset, bytes(h)))

    def setting(self, name):
        row = self.con.execute("SELECT value FROM settings WHERE name = %s", (name,)).fetchone()
        return None if row is None else bytes(row[0])

    def set_setting(self, name, value):
        if value is None:
            self.con.execute("DELETE FROM settings WHERE name = %s", (name,))
        else:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            self.con.execute(
                "INSERT INTO settings VALUES (%s, %s) ON CONFLICT (name) DO "
                "UPDATE SET value = EXCLUDED.value",
                (name, data),
            )

    def hold(self, datasets: Iterable[str | None]) -> None:
        """Lock these datasets' rows (None: this one) until the transaction ends, in key order.

        Raises
        ------
        ValueError
            One of them is not registered in the ledger: it has no row to lock, so nothing
            may be checked or recorded on it.
        """
        wanted = sorted({d or self.dataset for d in datasets})
        if not wanted:
            return
        got = [
            d
            for (d,) in self.con.execute(
                "SELECT dataset FROM datasets WHERE dataset = ANY(%s) ORDER BY dataset FOR UPDATE",
                (wanted,),
            ).fetchall()
        ]
        if got != wanted:
            missing = ", ".join(d[:14] for d in wanted if d not in got)
            raise ValueError(
                f"dataset(s) {missing} are not registered in the ledger "
                f"{shown_location(self.con.info.dsn)}"
            )

    def hold_ledger(self) -> None:
        """Take the ledger-wide lock (registrations, settings) until the transaction ends."""
        self.con.execute("SELECT pg_advisory_xact_lock(%s)", (LEDGER_LOCK,))

    def hold_linked(self, keep=None) -> list[str]:
        """:meth:`linked` (those ``keep`` keeps: the ones the releaser may see), with this
        dataset and every one of them held; a linked dataset ``keep`` drops is never locked,
        so a release never waits on a dataset its user may not see.

        The links are read, then all the rows locked in one statement (key order); then read
        again, since a dataset that registered meanwhile may have linked itself (it held
        this dataset's row to do so, so once that row is held the links cannot change).
        """
        held: set[str] = set()
        while True:
            linked = self.linked() if keep is None else keep(self.linked())
            wanted = {self.dataset, *linked} - held
            if not wanted:
                return linked
            self.hold(wanted)
            held |= wanted
