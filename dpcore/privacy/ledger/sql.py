"""What the ledger's two SQL stores share: the statements both write alike, a store's
first-open preparation once per process, the lock timeout and the error of a store out of reach.

:class:`Transaction` holds the statements of one transaction that read the same in SQLite and
PostgreSQL but for the driver's parameter placeholder (``?`` for sqlite3, ``%s`` for psycopg);
each store's transaction (:class:`~dpcore.privacy.ledger.sqlite.SQLiteTransaction`,
:class:`~dpcore.privacy.ledger.postgres.PostgresTransaction`) adds those its dialect writes
otherwise (an upsert, a set of keys, a bulk insert) and its locking.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BUSY_TIMEOUT_S", "LedgerUnavailableError", "Transaction", "prepare_once"]

# Seconds a connection waits for another one's write lock before it gives up.
BUSY_TIMEOUT_S = 30.0

_PREPARED: set[Path | str] = set()  # ledgers this process has already created or checked
_PREPARED_LOCK = threading.Lock()


class LedgerUnavailableError(OSError):
    """The ledger's storage cannot be reached (a PostgreSQL server down, refusing the role)."""


def prepare_once(
    location: Path | str,
    prepare: Callable[[], None],
    still_there: Callable[[], bool] = lambda: True,
) -> None:
    """Run ``prepare`` (tables, migrations, salt) the first time this process opens the ledger
    at ``location``, and again only when ``still_there`` says it is gone (a deleted file)."""
    with _PREPARED_LOCK:
        if location in _PREPARED and still_there():
            return
        prepare()
        _PREPARED.add(location)


class Transaction:
    """The statements of one ledger transaction that both SQL dialects write alike.

    ``P`` is the driver's parameter placeholder; a subclass gives :meth:`_among` (a column
    among several values), :meth:`_executemany`, :meth:`add_rows` and :meth:`hold_ledger`.
    """

    P = "?"

    def __init__(self, con: Any, dataset: str) -> None:
        self.con = con
        self.dataset = dataset

    def _marks(self, k: int) -> str:
        return ", ".join([self.P] * k)

    def _among(self, values: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """SQL that a column is one of ``values`` (after the column's name), and its parameters."""
        raise NotImplementedError

    def _executemany(self, sql: str, params: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def add_rows(self, dataset: str, row_hashes: Iterable[bytes]) -> None:
        raise NotImplementedError

    def hold_ledger(self) -> None:
        raise NotImplementedError

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

    def rows(self, dataset=None):
        return self.con.execute(
            "SELECT release, mechanism, epsilon, delta, part, time, who FROM releases "
            f"WHERE dataset = {self.P} ORDER BY release, id",
            (dataset or self.dataset,),
        ).fetchall()

    def cap(self, dataset=None):
        row = self.con.execute(
            f"SELECT epsilon FROM caps WHERE dataset = {self.P}", (dataset or self.dataset,)
        ).fetchone()
        return None if row is None else row[0]

    def insert(self, rows, dataset=None):
        self._executemany(
            "INSERT INTO releases (dataset, release, mechanism, epsilon, delta, part, time, who) "
            f"VALUES ({self._marks(8)})",
            [(dataset or self.dataset, *row) for row in rows],
        )

    def registered(self, dataset=None):
        return (
            self.con.execute(
                f"SELECT 1 FROM datasets WHERE dataset = {self.P}", (dataset or self.dataset,)
            ).fetchone()
            is not None
        )

    def register(self, dataset, kind, name, columns, row_hashes, when, owner=""):
        """Add a dataset (and its row digests) once; returns True when it is new."""
        self.hold_ledger()  # one registration at a time: each sees every earlier one's rows
        if self.registered(dataset):
            return False
        self.con.execute(
            "INSERT INTO datasets (dataset, kind, name, columns, rows, time, owner) "
            f"VALUES ({self._marks(7)})",
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
            self.add_rows(dataset, row_hashes)
        return True

    def linked(self, dataset=None):
        """The other datasets that share at least one row with this one."""
        return [
            d
            for (d,) in self.con.execute(
                f"SELECT other FROM links WHERE dataset = {self.P} ORDER BY other",
                (dataset or self.dataset,),
            ).fetchall()
        ]

    def visible(self, datasets, user):
        """Those of ``datasets`` that ``user`` registered or was granted, in their order."""
        if not datasets:
            return []
        among, params = self._among(list(datasets))
        seen = {
            d
            for (d,) in self.con.execute(
                f"SELECT dataset FROM datasets WHERE dataset {among} AND (owner = {self.P} OR "
                f"dataset IN (SELECT dataset FROM grants WHERE grantee = {self.P}))",
                (*params, user, user),
            ).fetchall()
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
