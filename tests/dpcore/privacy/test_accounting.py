"""GDP accounting (spec cvar.md §4.2, §5.5) and the privacy ledger, in memory and durable.

The durable ledger's tests take ``new_ledger`` (tests/conftest.py): each runs on an SQLite
file and on a PostgreSQL database of a real server.
"""

import dataclasses
import hashlib
import pickle
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ledger_races import (
    CheckOutsideTransactionLedger,
    SlowLedger,
    key_of,
    race_processes,
    race_threads,
    record_once,
    registered,
)
from scipy import stats

from dpcore.privacy.accounting import (
    BudgetExceededError,
    LedgerEntry,
    PrivacyLedger,
    dataset_key,
    default_ledger_path,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
)
from tests.dpcore.privacy.ledger_schema import RELEASES_COLUMNS


@pytest.mark.parametrize(
    "eps,delta,mu",
    [(1.0, 1e-5, 0.2681), (0.5, 1e-6, 0.1241), (2.0, 1e-5, 0.5016), (0.1, 1e-5, 0.0325)],
)
def test_calibrated_mu_matches_the_spec_and_inverts_delta(eps, delta, mu):
    m = gdp_mu(eps, delta)
    assert m == pytest.approx(mu, abs=1e-4)
    assert gdp_delta(eps, m) == pytest.approx(delta, rel=1e-10, abs=1e-16)
    assert gdp_epsilon(m, delta) == pytest.approx(eps, rel=1e-10)


@pytest.mark.parametrize("T,z,eps", [(1, 1.0, 4.3772), (500, 30.0, 3.1246), (200, 5.0, 15.4562)])
def test_composed_gaussian_epsilon_matches_the_spec(T, z, eps):
    assert gdp_epsilon(gdp_compose(*[1.0 / z] * T), 1e-5) == pytest.approx(eps, abs=1e-4)


def test_exact_calibration_beats_the_classic_gaussian_multiplier():
    # sigma/Delta for one release at (1, 1e-5): exact 1/mu = 3.731 against sqrt(2 ln(1.25/delta)).
    assert 1.0 / gdp_mu(1.0, 1e-5) == pytest.approx(3.731, abs=1e-3)
    assert np.sqrt(2 * np.log(1.25 / 1e-5)) == pytest.approx(4.845, abs=1e-3)


def test_gdp_delta_is_the_tradeoff_of_two_gaussians():
    """Independent check: delta(eps) = sup_S P(N(mu,1) in S) - e^eps P(N(0,1) in S), attained
    by S = {z > t}, maximised numerically over t."""
    mu, eps = 0.7, 0.4
    t = np.linspace(-10, 10, 200_001)
    hockey = np.max(stats.norm.sf(t - mu) - np.exp(eps) * stats.norm.sf(t))
    assert gdp_delta(eps, mu) == pytest.approx(hockey, rel=1e-8)


@given(st.floats(0.01, 5.0), st.floats(1e-9, 0.1))
def test_calibration_round_trip(eps, delta):
    assert gdp_delta(eps, gdp_mu(eps, delta)) == pytest.approx(delta, rel=1e-8)


def test_google_dp_accounting_agrees_with_the_closed_form():
    """Google's PLD accountant (dp-accounting, maintained) on T Gaussian steps, sigma = z."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    T, z = 500, 30.0
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier=z), T)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event)
    # the PLD bound is pessimistic by its discretisation only; GDP is exact for the Gaussian
    assert acc.get_epsilon(1e-5) == pytest.approx(gdp_epsilon(np.sqrt(T) / z, 1e-5), abs=1e-3)


@pytest.mark.parametrize(
    "bad,exc", [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError), ("1", TypeError)]
)
def test_calibration_rejects_bad_epsilon(bad, exc):
    with pytest.raises(exc, match="epsilon"):
        gdp_mu(bad, 1e-5)


# --------------------------------------------------------------------------------------------
# Ledger


def test_ledger_records_entries_and_composes():
    ledger = PrivacyLedger()
    assert ledger.total() == (0.0, 0.0) and ledger.entries == ()
    before = datetime.now(UTC)
    ledger.record("private CVaR", 0.5)
    ledger.record("DP-GD", 1.0, delta=1e-5)
    eps, delta = ledger.total()
    assert eps == pytest.approx(1.5) and delta == pytest.approx(1e-5)
    first, second = ledger.entries
    assert (first.mechanism, first.epsilon, first.delta) == ("private CVaR", 0.5, 0.0)
    assert second.mechanism == "DP-GD" and isinstance(second, LedgerEntry)
    assert before <= first.timestamp <= second.timestamp and first.timestamp.tzinfo is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.epsilon = 0.0
    assert isinstance(ledger.entries, tuple)


def test_budget_refusal_names_budget_spent_and_request_and_records_nothing():
    ledger = PrivacyLedger(budget=1.0)
    ledger.record("a", 0.7)
    with pytest.raises(
        BudgetExceededError, match=r"epsilon=1\b.*0\.7 already spent.*0\.4 requested"
    ):
        ledger.record("b", 0.4)
    assert len(ledger.entries) == 1 and ledger.total() == (0.7, 0.0)
    assert issubclass(BudgetExceededError, ValueError)
    ledger.record("c", 0.3)  # exactly the budget is allowed, despite 0.7 + 0.3 rounding
    assert ledger.total()[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "eps,delta,exc,word",
    [
        (0.0, 0.0, ValueError, "epsilon"),
        (-1.0, 0.0, ValueError, "epsilon"),
        (np.inf, 0.0, ValueError, "epsilon"),
        (np.nan, 0.0, ValueError, "epsilon"),
        ("1", 0.0, TypeError, "epsilon"),
        (1.0, -0.1, ValueError, "delta"),
        (1.0, 1.0, ValueError, "delta"),
        (1.0, np.nan, ValueError, "delta"),
    ],
)
def test_ledger_validation(eps, delta, exc, word):
    ledger = PrivacyLedger()
    with pytest.raises(exc, match=word):
        ledger.record("m", eps, delta)
    assert ledger.entries == ()


def test_ledger_rejects_bad_names_and_budgets():
    with pytest.raises(TypeError, match="mechanism"):
        PrivacyLedger().record("", 1.0)
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=0.0)
    assert "budget=2.0" in repr(PrivacyLedger(budget=2.0))


@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=20))
def test_ledger_never_exceeds_its_budget(spends):
    ledger = PrivacyLedger(budget=2.0)
    for e in spends:
        try:
            ledger.record("m", e)
        except BudgetExceededError:
            pass
    assert ledger.total()[0] <= 2.0 * (1 + 1e-12)
    assert sum(e.epsilon for e in ledger.entries) == pytest.approx(ledger.total()[0])


def test_total_through_an_index_and_the_entry_returned():
    ledger = PrivacyLedger()
    first = ledger.record("a", 0.5)
    assert (first.index, first.epsilon, first.parts) == (1, 0.5, ())
    assert ledger.record("b", 0.25, delta=1e-6).index == 2
    assert ledger.total(through=1) == (0.5, 0.0) and ledger.total() == (0.75, 1e-6)


# --------------------------------------------------------------------------------------------
# Parallel composition (issue 16 §3): disjoint parts of one dataset cost their largest ε


@pytest.mark.parametrize(
    "new_ledger,durable",
    [("sqlite", False), ("sqlite", True), ("postgresql", True)],
    indirect=["new_ledger"],
)
def test_parallel_parts_cost_their_largest_epsilon_and_sequential_releases_add(durable, new_ledger):
    where = new_ledger() if durable else None
    make = (lambda: PrivacyLedger.open(where, key_of(where, "k"))) if durable else PrivacyLedger
    parallel, sequential = (
        make(),
        (PrivacyLedger.open(where, key_of(where, "other")) if durable else PrivacyLedger()),
    )
    entry = parallel.record_parallel("rule + evaluation", {"fit": 1.0, "evaluation": 1.0})
    assert parallel.total() == (1.0, 0.0)
    assert entry.epsilon == 1.0 and entry.parts == (("fit", 1.0), ("evaluation", 1.0))
    sequential.record("rule", 1.0)
    sequential.record("evaluation", 1.0)
    assert sequential.total() == (2.0, 0.0)
    second = parallel.record_parallel("again", {"fit": 0.5, "evaluation": 0.25}, delta=1e-6)
    assert second.index == 2 and parallel.total() == (1.5, 1e-6)
    reread = PrivacyLedger.open(where, key_of(where, "k")) if durable else parallel
    assert [e.parts for e in reread.entries] == [entry.parts, second.parts]


def test_a_parallel_release_is_checked_against_the_cap_by_its_largest_part():
    ledger = PrivacyLedger(budget=1.0)
    ledger.record_parallel("r", {"a": 0.6, "b": 0.6})  # costs 0.6, not 1.2
    with pytest.raises(BudgetExceededError):
        ledger.record_parallel("s", {"a": 0.1, "b": 0.5})
    assert ledger.total() == (0.6, 0.0)


@pytest.mark.parametrize(
    "parts,exc,word",
    [
        ({}, TypeError, "parts"),
        ([1.0], TypeError, "parts"),
        ({"": 1.0}, TypeError, "name"),
        ({"a": 0.0}, ValueError, "part 'a'"),
        ({"a": np.inf}, ValueError, "finite"),
    ],
)
def test_parallel_validation(parts, exc, word):
    ledger = PrivacyLedger()
    with pytest.raises(exc, match=word):
        ledger.record_parallel("m", parts)
    assert ledger.entries == ()


# --------------------------------------------------------------------------------------------
# The durable ledger (SQLite and PostgreSQL)


def test_durable_ledger_survives_reopening_and_keeps_datasets_apart(new_ledger):
    path = new_ledger()
    ledger = PrivacyLedger.open(path, key_of(path, "dataset-a"))
    ledger.record("DP-OWL rule", 1.0)
    ledger.record("private CVaR", 0.5, delta=1e-6)
    PrivacyLedger.open(path, key_of(path, "dataset-b")).record("other file", 3.0)
    again = PrivacyLedger.open(path, key_of(path, "dataset-a"))
    assert again.total() == (1.5, 1e-6) and [e.index for e in again.entries] == [1, 2]
    assert [(e.mechanism, e.epsilon, e.delta) for e in again.entries] == [
        ("DP-OWL rule", 1.0, 0.0),
        ("private CVaR", 0.5, 1e-6),
    ]
    assert again.entries[0].timestamp.tzinfo is not None
    assert PrivacyLedger.open(path, key_of(path, "dataset-b")).total() == (3.0, 0.0)
    assert again.dataset[:12] in repr(again)


def test_an_sqlite_ledger_is_one_file_in_wal_mode(tmp_path):
    path = tmp_path / "sub" / "ledger.sqlite"  # folder and file created on first use
    again = PrivacyLedger.open(path, key_of(path, "dataset-a"))
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [c[1] for c in con.execute("PRAGMA table_info(releases)")]
    assert columns == RELEASES_COLUMNS
    assert "path" not in repr(again) and again.dataset[:12] in repr(again)


def test_a_cap_is_stored_per_dataset_and_only_lowered_without_allow_raise(new_ledger):
    path = new_ledger()
    ledger = PrivacyLedger.open(path, key_of(path, "k"))
    assert ledger.budget is None
    ledger.set_budget(2.0)  # the first time
    ledger.set_budget(1.5)  # lowering
    for higher in (1.6, None):
        with pytest.raises(ValueError, match="only be lowered.*dpcore ledger cap"):
            PrivacyLedger.open(path, key_of(path, "k")).set_budget(higher)
    assert (
        PrivacyLedger.open(path, key_of(path, "k"), budget=5.0).budget == 1.5
    )  # opening never raises it
    assert PrivacyLedger.open(path, key_of(path, "k"), budget=1.0).budget == 1.0  # but lowers it
    assert PrivacyLedger.open(path, key_of(path, "other")).budget is None
    with pytest.raises(AttributeError):
        ledger.budget = None  # no switching the cap off by assignment
    ledger.record("a", 1.0)
    with pytest.raises(BudgetExceededError):
        PrivacyLedger.open(path, key_of(path, "k")).record("b", 0.1)
    ledger.set_budget(3.0, allow_raise=True)  # the command line's path
    assert PrivacyLedger.open(path, key_of(path, "k")).record("b", 0.1).index == 2
    memory = PrivacyLedger(budget=1.0)
    with pytest.raises(ValueError, match="only be lowered"):
        memory.set_budget(2.0)


def test_dataset_key_is_salted_per_ledger_and_depends_on_bytes_and_name(new_ledger, monkeypatch):
    a, b = new_ledger(), new_ledger()
    data = b"age,arm,y\n40,1,0.5\n"
    key = dataset_key(data, path=a)
    assert key == dataset_key(data, path=a) and len(key) == 64
    assert key != dataset_key(data, path=b)  # another ledger, another salt
    assert key != hashlib.sha256(data).hexdigest()  # not the public digest of the file
    assert key != dataset_key(data + b"41,0,0.1\n", path=a)
    assert key != dataset_key(data, "trial 2", path=a)
    monkeypatch.setenv("DPCORE_LEDGER", str(a))
    assert dataset_key(data, path=None) == key
    with pytest.raises(TypeError, match="bytes"):
        dataset_key("age,arm", path=a)


def test_default_ledger_path_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "x.sqlite"))
    assert default_ledger_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("DPCORE_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_ledger_path() == tmp_path / "dpcore" / "ledger.sqlite"


def test_the_ledger_never_stores_the_data(new_ledger, tmp_path):
    path = new_ledger()
    data = b"id,arm,y\nzqxj_secret,1,0.5\n"
    PrivacyLedger.open(path, dataset_key(data, path=path)).record("DP-OWL rule", 1.0)
    PrivacyLedger.for_file(data, path=path).record("DP-OWL rule", 1.0)
    stored = _everything_stored(path, tmp_path)
    for secret in (b"zqxj_secret", hashlib.sha256(data).hexdigest().encode()):
        assert secret not in stored and secret.hex().encode() not in stored  # bytea shows as hex
    assert len(stored) > 100


def _everything_stored(where, folder):
    """Every byte the ledger holds: its files (SQLite), or every row of its tables as text."""
    if isinstance(where, str):
        import psycopg

        with psycopg.connect(where) as con:
            tables = [
                t
                for (t,) in con.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                )
            ]
            return b"".join(
                con.execute(f"SELECT coalesce(string_agg(t::text, ' '), '') FROM {t} t")
                .fetchone()[0]
                .encode()
                for t in tables
            )
    return b"".join(p.read_bytes() for p in folder.iterdir())


# --------------------------------------------------------------------------------------------
# Concurrent releases against a cap: the check and the record are one transaction

RACES = pytest.mark.parametrize(
    "new_ledger,race",
    [("sqlite", race_threads), ("sqlite", race_processes), ("postgresql", race_threads)],
    indirect=["new_ledger"],
)


@RACES
def test_twenty_concurrent_releases_against_a_cap_of_five_record_exactly_five(race, new_ledger):
    path = new_ledger()
    assert race(SlowLedger, path) == 5
    ledger = PrivacyLedger.open(path, key_of(path, "shared trial"))
    assert ledger.total() == (5.0, 0.0) and [e.index for e in ledger.entries] == [1, 2, 3, 4, 5]


@RACES
def test_the_concurrency_test_catches_a_check_outside_the_transaction(race, new_ledger):
    path = new_ledger()
    assert race(CheckOutsideTransactionLedger, path) > 5
    assert PrivacyLedger.open(path, key_of(path, "shared trial")).total()[0] > 5.0


def test_the_cap_holds_whatever_isolation_the_server_defaults_to(postgres_server):
    """A server whose default is REPEATABLE READ would give each transaction a snapshot older
    than the lock it waited for; the ledger asks for READ COMMITTED itself."""
    url = postgres_server.new_database("default_transaction_isolation = 'repeatable read'")
    assert race_threads(SlowLedger, url) == 5
    assert PrivacyLedger.open(url, key_of(url, "shared trial")).total() == (5.0, 0.0)


def test_releases_on_two_datasets_sharing_rows_queue_on_both_rows_without_deadlock(postgres_server):
    """20 attempts alternating between two linked datasets (each release charged to both),
    against a cap of 5 on the first: the rows are locked in key order, so no two attempts
    wait for each other (a deadlock would fail one after a second) and exactly 5 are in."""
    url = postgres_server.new_ledger()
    first = SlowLedger.for_cells({"id": [str(i) for i in range(10)]}, path=url, budget=5.0)
    second = registered(SlowLedger.for_cells({"id": [str(i) for i in range(5, 15)]}, path=url))
    assert second.linked() == (first.dataset,)
    barrier = threading.Barrier(20)
    ledgers = [SlowLedger.open(url, (first, second)[i % 2].dataset) for i in range(20)]
    with ThreadPoolExecutor(20) as pool:
        assert sum(pool.map(lambda ledger: record_once(ledger, barrier), ledgers)) == 5
    assert first.total() == second.total() == (5.0, 0.0)


class CheckTogetherLedger(PrivacyLedger):
    """The real ledger, waiting after its check (inside the transaction) until a second
    release has checked too, or for half a second when a lock keeps the second out."""

    barrier = threading.Barrier(2)

    @staticmethod
    def _admit(*args):
        rows = PrivacyLedger._admit(*args)
        try:
            CheckTogetherLedger.barrier.wait(timeout=0.5)
        except threading.BrokenBarrierError:
            pass
        return rows


def test_without_the_row_lock_two_releases_overspend_the_cap(postgres_server, monkeypatch):
    """The deliberately broken twin of PostgreSQL's locking: the check and the record in one
    transaction as before, but no row held (what BEGIN IMMEDIATE does for SQLite, a plain
    BEGIN does not do here). A release on the whole dataset and a parallel one (other part
    names, so the unique index does not stop the second) both pass their check on the same
    total; the real ledger makes the second wait, then refuses it."""
    from dpcore.privacy.ledger.postgres import PostgresTransaction

    def race(url):
        CheckTogetherLedger.barrier = threading.Barrier(2)
        key = key_of(url, "shared trial")
        whole = CheckTogetherLedger.open(url, key, budget=1.0)
        split = CheckTogetherLedger.open(url, key)
        with ThreadPoolExecutor(2) as pool:
            jobs = [
                pool.submit(whole.record, "rule", 1.0),
                pool.submit(
                    split.record_parallel, "rule and evaluation", {"fit": 1.0, "evaluation": 1.0}
                ),
            ]
        refused = [j.exception() for j in jobs if j.exception() is not None]
        assert all(isinstance(e, BudgetExceededError) for e in refused), refused
        return 2 - len(refused), len(whole.entries)

    assert race(postgres_server.new_ledger()) == (1, 1)
    monkeypatch.setattr(PostgresTransaction, "hold", lambda self, datasets: None)
    # Both in: 2 spent on a cap of 1, both numbered release 1 (the record even reads as one).
    assert race(postgres_server.new_ledger()) == (2, 1)


def test_two_writers_of_one_release_index_fail_loudly(new_ledger):
    path = new_ledger()
    ledger = PrivacyLedger.open(path, key_of(path, "k"))
    ledger.record("a", 1.0)
    integrity = (
        sqlite3.IntegrityError
        if not isinstance(path, str)
        else __import__("psycopg").IntegrityError
    )
    with pytest.raises(integrity), ledger._store.transaction() as tx:
        tx.insert([(1, "b", 1.0, 0.0, "", "2026-01-01T00:00:00+00:00", "")])


def test_memory_ledger_threads_cannot_overspend():
    ledger = PrivacyLedger(budget=5.0)
    barrier = threading.Barrier(20)
    with ThreadPoolExecutor(20) as pool:
        assert sum(pool.map(lambda _: record_once(ledger, barrier), range(20))) == 5


def test_ledgers_pickle_with_their_records(new_ledger):
    memory = PrivacyLedger(budget=2.0)
    memory.record("a", 1.0)
    copy = pickle.loads(pickle.dumps(memory))
    assert copy.total() == (1.0, 0.0) and copy.budget == 2.0
    copy.record("b", 1.0)  # the copy has a working lock of its own
    where = new_ledger()
    durable = PrivacyLedger.open(where, key_of(where, "k"))
    durable.record("a", 0.5)
    assert pickle.loads(pickle.dumps(durable)).total() == (0.5, 0.0)
