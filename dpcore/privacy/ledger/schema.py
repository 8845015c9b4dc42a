"""The privacy ledger's tables, their version and the migrations of both backends.

``schema_version`` holds the version (:data:`SCHEMA_VERSION`); the migrations are one list per
backend (:data:`SQLITE_MIGRATIONS`, :data:`POSTGRES_MIGRATIONS`: the same tables, in each
one's types), applied in order from the ledger's version, in the transaction that opens it
(:func:`pending`). Version 1 had ``releases``, ``caps`` and ``settings`` (and no
``schema_version``); version 2 adds ``datasets``, ``row_hashes`` and ``links`` and registers
version 1's datasets as byte-keyed ones; version 3 adds who: ``datasets.owner`` (the user
who registered it, ``''`` for the local single user and every earlier dataset),
``releases.who`` and the ``grants`` table. A ledger of a later version than this code knows
is refused, so an older dpcore never writes rows a newer schema would misread.

PostgreSQL has the tables of every SQLite version in its own types (``BYTEA`` for the salt and
the digests, ``DOUBLE PRECISION`` for ε and δ, ε = ∞ kept as ``Infinity``); its migrations run
under the ledger-wide advisory lock, by the first process that opens the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "POSTGRES_MIGRATIONS",
    "SCHEMA_VERSION",
    "SQLITE_MIGRATIONS",
    "Step",
    "backfill",
    "pending",
    "run_migrations",
]

SCHEMA_VERSION = 3

#: A migration step: one SQL statement, or a function of the open connection and the time.
Step = str | Callable[[Any, str], None]
Migrations = tuple[tuple[int, tuple[Step, ...]], ...]


def backfill(sql: str) -> Callable[[Any, str], None]:
    """A migration step running ``sql`` with the migration's time as its one parameter."""

    def step(con: Any, when: str) -> None:
        con.execute(sql, (when,))

    return step


# The statements both backends write alike (the others differ in their types or syntax).
# One row per (release, part): a second writer of the same release index fails loudly.
_RELEASES_INDEX = (
    "CREATE UNIQUE INDEX IF NOT EXISTS releases_by_dataset ON releases (dataset, release, part)"
)
_SCHEMA_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
_DATASETS = """CREATE TABLE IF NOT EXISTS datasets (
            dataset TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            columns TEXT NOT NULL,
            rows INTEGER,
            time TEXT NOT NULL)"""
_ROW_HASH_INDEXES = (
    "CREATE INDEX IF NOT EXISTS row_hashes_by_hash ON row_hashes (hash)",
    "CREATE INDEX IF NOT EXISTS row_hashes_by_dataset ON row_hashes (dataset)",
)
# Datasets that share at least one row, both ways, found when the later one registers.
_LINKS = """CREATE TABLE IF NOT EXISTS links (
            dataset TEXT NOT NULL, other TEXT NOT NULL, PRIMARY KEY (dataset, other))"""
_GRANTS = """CREATE TABLE IF NOT EXISTS grants (
            dataset TEXT NOT NULL,
            grantee TEXT NOT NULL,
            time TEXT NOT NULL,
            PRIMARY KEY (dataset, grantee))"""


SQLITE_MIGRATIONS: Migrations = (
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
            _RELEASES_INDEX,
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
            _SCHEMA_VERSION_TABLE,
            _DATASETS,
            "CREATE TABLE IF NOT EXISTS row_hashes (dataset TEXT NOT NULL, hash BLOB NOT NULL)",
            *_ROW_HASH_INDEXES,
            _LINKS,
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
            _GRANTS,
        ),
    ),
)

POSTGRES_MIGRATIONS: Migrations = (
    (
        1,
        (
            """CREATE TABLE IF NOT EXISTS releases (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            dataset TEXT NOT NULL,
            release INTEGER NOT NULL,
            mechanism TEXT NOT NULL,
            epsilon DOUBLE PRECISION NOT NULL,
            delta DOUBLE PRECISION NOT NULL,
            part TEXT NOT NULL,
            time TEXT NOT NULL)""",
            _RELEASES_INDEX,
            """CREATE TABLE IF NOT EXISTS caps (
            dataset TEXT PRIMARY KEY,
            epsilon DOUBLE PRECISION NOT NULL,
            time TEXT NOT NULL)""",
            "CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value BYTEA NOT NULL)",
        ),
    ),
    (
        2,
        (
            _SCHEMA_VERSION_TABLE,
            # One row per dataset: the row a release locks (dpcore.privacy.ledger.postgres).
            _DATASETS,
            "CREATE TABLE IF NOT EXISTS row_hashes (dataset TEXT NOT NULL, hash BYTEA NOT NULL)",
            *_ROW_HASH_INDEXES,
            _LINKS,
            backfill(
                "INSERT INTO datasets (dataset, kind, name, columns, rows, time) "
                "SELECT DISTINCT dataset, 'bytes', '', '[]', NULL::integer, %s::text FROM "
                "(SELECT dataset FROM releases UNION SELECT dataset FROM caps) AS known "
                "ON CONFLICT (dataset) DO NOTHING"
            ),
        ),
    ),
    (
        3,
        (
            "ALTER TABLE datasets ADD COLUMN IF NOT EXISTS owner TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE releases ADD COLUMN IF NOT EXISTS who TEXT NOT NULL DEFAULT ''",
            _GRANTS,
        ),
    ),
)


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
    when = datetime.now(UTC).isoformat()
    for _, steps in todo:
        for step in steps:
            if callable(step):
                step(con, when)
            else:
                con.execute(step)
    con.execute("DELETE FROM schema_version")
    # The version as a literal: the one statement both backends' placeholders agree on.
    con.execute(f"INSERT INTO schema_version (version) VALUES ({int(SCHEMA_VERSION)})")
