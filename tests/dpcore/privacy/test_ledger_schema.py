"""The ledger's schema version and its migrations, on SQLite and PostgreSQL.

The tables of each earlier version are written out by hand in ``ledger_schema.py``, as the
code of that time created them (not imported from the code of today), so a later change of the
migrations cannot quietly change what an existing ledger looks like in these tests.
"""

import json
import sqlite3

import pytest

from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger
from dpcore.privacy.identity_legacy import byte_key, legacy_identity
from dpcore.privacy.ledger.schema import (
    POSTGRES_MIGRATIONS,
    SCHEMA_VERSION,
    SQLITE_MIGRATIONS,
    pending,
)
from tests.dpcore.privacy.ledger_schema import (
    POSTGRES_VERSION_1,
    SQLITE_VERSION_2,
)

SALT = bytes(range(32))
WHEN = "2026-11-30T12:00:00+00:00"
CELLS = {"arm": ["0", "1", "1", "0"], "y": ["1.5", "2.5", "0.5", "3"]}


def test_the_migrations_run_in_order_from_the_ledger_s_version():
    for migrations in (SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS):
        assert [v for v, _ in migrations] == list(range(1, SCHEMA_VERSION + 1))
        assert [v for v, _ in pending(0, migrations, "x")] == list(range(1, SCHEMA_VERSION + 1))
        assert [v for v, _ in pending(1, migrations, "x")] == list(range(2, SCHEMA_VERSION + 1))
        assert pending(SCHEMA_VERSION, migrations, "x") == []
    with pytest.raises(RuntimeError, match="newer than this dpcore knows.*upgrade dpcore"):
        pending(SCHEMA_VERSION + 1, SQLITE_MIGRATIONS, "x")


def test_a_version_2_sqlite_ledger_opens_with_its_datasets_releases_caps_and_links(tmp_path):
    """Today's schema, written as dpcore wrote it: a content-keyed dataset with its row
    digests, a release, a cap, a second dataset linked to it and the keeper's default cap."""
    path = tmp_path / "ledger.sqlite"
    first = legacy_identity(CELLS, SALT)
    shared = {"arm": CELLS["arm"] + ["1"], "y": CELLS["y"] + ["4"]}
    second = legacy_identity(shared, SALT)
    with sqlite3.connect(path) as con:
        con.executescript(SQLITE_VERSION_2)
        con.executemany(
            "INSERT INTO settings VALUES (?, ?)", [("salt", SALT), ("default_cap", "3.0")]
        )
        for identity in (first, second):
            con.execute(
                "INSERT INTO datasets VALUES (?, 'content', '', ?, ?, ?)",
                (identity.key, json.dumps(sorted(CELLS)), identity.n, WHEN),
            )
            con.executemany(
                "INSERT INTO row_hashes VALUES (?, ?)",
                [(identity.key, h) for h in set(identity.row_hashes)],
            )
            con.execute(
                "INSERT INTO releases VALUES (NULL, ?, 1, 'DP-OWL rule', 0.5, 0, '', ?)",
                (identity.key, WHEN),
            )
        con.execute("INSERT INTO caps VALUES (?, 1.0, ?)", (first.key, WHEN))
        con.executemany(
            "INSERT INTO links VALUES (?, ?)", [(first.key, second.key), (second.key, first.key)]
        )
    con.close()
    assert PrivacyLedger.open(path, first.key).total() == (0.5, 0.0)
    # Today's key of the same cells (ds3) is another key, linked to both ds2 datasets: the
    # first is these very rows (its ds2 key), the second shares them.
    ledger = PrivacyLedger.for_cells(CELLS, path=path)
    assert ledger.dataset.startswith("ds3-") and ledger.dataset != first.key
    assert ledger.linked() == tuple(sorted((first.key, second.key)))
    assert ledger.total() == (1.0, 0.0)  # both earlier releases reached these patients
    assert ledger.budget == 3.0 and PrivacyLedger.default_cap(path) == 3.0
    with pytest.raises(BudgetExceededError):  # the first dataset's cap holds: 0.5 + 0.75 > 1
        ledger.record("private CVaR", 0.75)
    assert ledger.record("private CVaR", 0.5).index == 3
    assert PrivacyLedger.open(path, first.key).total() == (1.0, 0.0)  # charged to both
    assert PrivacyLedger.open(path, second.key).total() == (1.0, 0.0)
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert con.execute("SELECT count(*) FROM datasets").fetchone() == (3,)
        assert con.execute("SELECT count(*) FROM settings WHERE name = 'salt'").fetchone() == (1,)
        # Version 3: who registered each dataset and who made each release ('' before).
        assert {o for (o,) in con.execute("SELECT owner FROM datasets")} == {""}
        assert {w for (w,) in con.execute("SELECT who FROM releases")} == {""}
    con.close()


def _newer(where):
    """Give the new ledger at ``where`` a schema version this dpcore does not know."""
    if isinstance(where, str):
        import psycopg

        with psycopg.connect(where) as con:
            con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            con.execute("INSERT INTO schema_version VALUES (%s)", (SCHEMA_VERSION + 1,))
    else:
        with sqlite3.connect(where) as con:
            con.executescript(
                SQLITE_VERSION_2.replace("VALUES (2)", f"VALUES ({SCHEMA_VERSION + 1})")
            )
        con.close()


def test_a_ledger_of_a_newer_schema_is_refused_and_left_as_it_is(new_ledger):
    where = new_ledger()
    _newer(where)
    with pytest.raises(RuntimeError, match=f"schema version {SCHEMA_VERSION + 1}, newer"):
        PrivacyLedger.for_cells(CELLS, path=where)
    if isinstance(where, str):
        import psycopg

        with psycopg.connect(where) as con:  # not a table added, no salt written
            assert con.execute("SELECT to_regclass('settings')").fetchone() == (None,)
    else:
        with sqlite3.connect(where) as con:
            assert con.execute("SELECT count(*) FROM settings").fetchone() == (0,)
        con.close()


def test_a_version_1_postgresql_ledger_is_migrated_and_its_byte_keys_registered(postgres_server):
    import psycopg

    url = postgres_server.new_ledger()
    data = b"arm,y\n0,1.5\n1,2.5\n"
    old_key = byte_key(SALT, data, "")
    with psycopg.connect(url) as con:
        for statement in POSTGRES_VERSION_1:
            con.execute(statement)
        con.execute("INSERT INTO settings VALUES ('salt', %s)", (SALT,))
        con.execute(
            "INSERT INTO releases (dataset, release, mechanism, epsilon, delta, part, "
            "time) VALUES (%s, 1, 'DP-OWL rule', 0.75, 0, '', %s)",
            (old_key, WHEN),
        )
        con.execute("INSERT INTO caps VALUES (%s, 1.0, %s)", (old_key, WHEN))
    old = PrivacyLedger.open(url, old_key)  # registered by the migration
    assert old.total() == (0.75, 0.0) and old.budget == 1.0
    same = PrivacyLedger.for_file(data, path=url)  # these bytes: the byte key joins the content key
    assert old_key in same.linked() and same.total() == (0.75, 0.0)
    with psycopg.connect(url) as con:
        assert con.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert con.execute(
            "SELECT kind FROM datasets WHERE dataset = %s", (old_key,)
        ).fetchone() == ("bytes",)
