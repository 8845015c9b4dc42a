"""Concurrent releases against a cap, for tests/dpcore/privacy/test_accounting.py.

A module of its own, importing only the ledger: the process races start their workers with
``spawn``, and each worker imports this module (not the test module's pytest, hypothesis and
scipy), so a race's four interpreters start in a fraction of a second.
"""

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger


def key_of(path, name):
    """A registered dataset key of the ledger file ``path`` for a one-cell dataset ``name``."""
    return registered(PrivacyLedger.for_cells({"id": [name]}, path=path)).dataset


def registered(ledger):
    """``ledger`` with its dataset in the ledger, as its first release or cap would put it
    (keying alone stores nothing), with nothing released and no cap."""
    with ledger._store.transaction() as tx:
        ledger._register(tx)
    ledger._pending = None
    return ledger


PAUSE_S = 0.05  # widens the window between the check and the write, so a race shows


class SlowLedger(PrivacyLedger):
    """The real ledger, pausing after its check (inside the transaction) before it writes."""

    @staticmethod
    def _admit(*args):
        rows = PrivacyLedger._admit(*args)
        time.sleep(PAUSE_S)
        return rows


class CheckOutsideTransactionLedger(PrivacyLedger):
    """Deliberately broken twin: reads the total in one transaction and writes in another
    (numbering the release when it writes, so the unique index does not stop it)."""

    def _spend(self, mechanism, parts, delta):
        with self._store.transaction(write=False) as tx:
            rows = self._admit(tx.rows(), tx.cap(), mechanism, parts, delta)
        time.sleep(PAUSE_S)
        with self._store.transaction() as tx:
            tx.hold([None])  # the write itself serialized (PostgreSQL): only the check is outside
            index = len({row[0] for row in tx.rows()}) + 1
            tx.insert([(index, *row[1:]) for row in rows])
        return rows


def attempt(cls, path, barrier):
    """One release attempt on its own connection; True when recorded."""
    return record_once(cls.open(path, key_of(path, "shared trial")), barrier)


def record_once(ledger, barrier):
    barrier.wait(timeout=60)
    try:
        ledger.record("DP-OWL rule", 1.0)
    except BudgetExceededError:
        return False
    return True


def threads(cls, path, barrier, count):
    with ThreadPoolExecutor(count) as pool:
        return sum(pool.map(lambda _: attempt(cls, path, barrier), range(count)))


def process_main(cls, path, barrier, count, results):
    results.put(threads(cls, path, barrier, count))


def race_threads(cls, path):
    PrivacyLedger.open(path, key_of(path, "shared trial"), budget=5.0)
    return threads(cls, path, threading.Barrier(20), 20)


def race_processes(cls, path, processes=4):
    """20 attempts: 4 processes of 5 threads, every attempt with its own connection."""
    PrivacyLedger.open(path, key_of(path, "shared trial"), budget=5.0)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(20), ctx.Queue()
    workers = [
        ctx.Process(target=process_main, args=(cls, path, barrier, 20 // processes, results))
        for _ in range(processes)
    ]
    for w in workers:
        w.start()
    recorded = sum(results.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    return recorded


# Processes cost seconds to spawn: PostgreSQL's races run in threads, each attempt on its own
# connection, and test_ledger_pg.py has its cross-process test.
