"""Privacy accounting: Gaussian differential privacy and the privacy ledger.

GDP (Dong, Roth and Su 2022) accounts exactly for composed Gaussian mechanisms: T releases
that are each (Delta/sigma)-GDP compose to mu = sqrt(T) Delta / sigma, and mu-GDP is
equivalent to a whole curve of (epsilon, delta)-DP guarantees (spec cvar.md §4.2).

The ledger records each release on a dataset and refuses one past the dataset's cap; its rows
live in memory or, durably, in SQLite (:mod:`dpcore.privacy.ledger_store`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import overload

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from .._typing import FloatOrArray
from .._validation import check_epsilon, check_real
from .ledger_store import MemoryStore, SQLiteStore, dataset_key, default_ledger_path

__all__ = [
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyLedger",
    "dataset_key",
    "default_ledger_path",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
]


# --------------------------------------------------------------------------------------------
# Gaussian differential privacy


@overload
def gdp_delta(epsilon: float, mu: float) -> float: ...
@overload
def gdp_delta(epsilon: np.ndarray, mu: float) -> np.ndarray: ...
def gdp_delta(epsilon: FloatOrArray, mu: float) -> FloatOrArray:
    """The smallest delta with mu-GDP => (epsilon, delta)-DP (Balle and Wang 2018).

    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2).
    Vectorised over ``epsilon``. Computed with log-CDFs so that e^epsilon never overflows.
    """
    mu = check_real(mu, "mu", low=0.0)
    eps = np.asarray(epsilon, dtype=float)
    a = norm.logcdf(-eps / mu + mu / 2.0)
    b = eps + norm.logcdf(-eps / mu - mu / 2.0)
    # a >= b always; exp(a) (1 - exp(b - a)) keeps precision when both terms are tiny.
    delta = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return float(delta) if delta.ndim == 0 else delta


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon with mu-GDP => (epsilon, delta)-DP."""
    mu = check_real(mu, "mu", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-14, rtol=1e-14)


def gdp_mu(epsilon: float, delta: float) -> float:
    """Calibrate mu: the largest mu for which mu-GDP implies (epsilon, delta)-DP.

    Examples
    --------
    >>> round(gdp_mu(1.0, 1e-5), 4)
    0.2681
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    # delta(epsilon; mu) increases in mu from 0, so the root is bracketed once it exceeds delta.
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:
        hi *= 2.0
    return brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-15, rtol=1e-14)


def gdp_compose(*mus: float) -> float:
    """mu of the adaptive composition of mu_1-, mu_2-, ... GDP mechanisms: sqrt(sum mu_i^2)."""
    return float(np.sqrt(np.sum(np.square(np.asarray(mus, dtype=float)))))


# --------------------------------------------------------------------------------------------
# Privacy ledger (basic and parallel composition), in memory or durable


class BudgetExceededError(ValueError):
    """A release would take the composed privacy spend past the ledger's budget."""


@dataclass(frozen=True)
class LedgerEntry:
    """One private release: which mechanism, its (epsilon, delta) and when (UTC).

    ``index`` numbers the releases on the dataset from 1. ``parts`` is empty for a release
    computed on the whole dataset; for a release made of disjoint parts of it (each patient in
    one part) it holds ``(part name, epsilon)`` pairs, and ``epsilon`` is their largest.
    """

    mechanism: str
    epsilon: float
    delta: float
    timestamp: datetime
    index: int = 1
    parts: tuple = ()


class PrivacyLedger:
    """Record of the private releases made on one dataset, with their composed total.

    ``PrivacyLedger(budget)`` keeps the record in memory (simulations, tests);
    :meth:`PrivacyLedger.open` keeps it in an SQLite file, per dataset, across processes and
    restarts. Both have the same methods.

    Parameters
    ----------
    budget : float or None
        Largest total epsilon the ledger accepts; None for no limit.

    Notes
    -----
    Releases compose sequentially (basic composition): epsilons add and deltas add, valid
    for any mechanisms, adaptive or not, and loose for many Gaussian releases, whose exact
    GDP total is :func:`gdp_compose`. A release recorded with :meth:`record_parallel` is made
    of disjoint parts of the dataset, so by parallel composition it costs the dataset the
    largest of its parts' epsilons (McSherry 2009).

    The cap check and the record happen in one transaction (a lock in memory,
    ``BEGIN IMMEDIATE`` in SQLite), so concurrent releases cannot overspend the budget.

    Examples
    --------
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> ledger.record("private CVaR (Laplace)", 0.5).index
    1
    >>> ledger.record("DP-GD", 0.3, delta=1e-6).index
    2
    >>> ledger.total()
    (0.8, 1e-06)
    >>> ledger = PrivacyLedger()
    >>> ledger.record_parallel("rule and its evaluation", {"fit": 1.0, "evaluation": 1.0}).epsilon
    1.0
    """

    _store: MemoryStore | SQLiteStore
    dataset: str | None
    path: Path | None

    def __init__(self, budget: float | None = None) -> None:
        budget = None if budget is None else check_real(budget, "budget", low=0.0)
        self._store = MemoryStore(budget)
        self.dataset = None
        self.path = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], dataset: str, *,
             budget: float | None = None) -> PrivacyLedger:
        """The durable ledger of ``dataset`` in the SQLite file ``path`` (created on first use).

        Parameters
        ----------
        path : str or Path
            The ledger file (the app uses :func:`default_ledger_path`).
        dataset : str
            The dataset's key, from :func:`dataset_key`.
        budget : float, optional
            A cap to apply: it sets the dataset's cap if none is stored and lowers a higher
            one; a lower stored cap stays (opening never raises a cap).
        """
        if not isinstance(dataset, str) or not dataset:
            raise TypeError(f"dataset must be a non-empty key string, got {dataset!r}")
        ledger = cls.__new__(cls)
        store = SQLiteStore(path, dataset)
        ledger._store, ledger.dataset, ledger.path = store, dataset, store.path
        if budget is not None:
            budget = check_real(budget, "budget", low=0.0)
            with ledger._store.transaction() as tx:
                if tx.cap() is None or budget < tx.cap():
                    tx.set_cap(budget, _now().isoformat())
        return ledger

    def __repr__(self) -> str:
        eps, delta = self.total()
        where = "" if self.path is None else f"{str(self.path)!r}, {str(self.dataset)[:12]!r}, "
        return (f"PrivacyLedger({where}budget={self.budget!r}, releases={len(self.entries)}, "
                f"epsilon={eps:g}, delta={delta:g})")

    @property
    def budget(self) -> float | None:
        """The dataset's cap on the total epsilon, or None; change it with :meth:`set_budget`."""
        with self._store.transaction(write=False) as tx:
            return tx.cap()

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """The recorded releases, oldest first, as a tuple of frozen :class:`LedgerEntry`."""
        with self._store.transaction(write=False) as tx:
            return _entries(tx.rows())

    def total(self, through: int | None = None) -> tuple[float, float]:
        """(epsilon_total, delta_total) of releases 1..``through`` (all by default); (0.0, 0.0)
        when empty. Sequential releases add; a parallel release counts its largest part."""
        chosen = [e for e in self.entries if through is None or e.index <= through]
        return float(sum(e.epsilon for e in chosen)), float(sum(e.delta for e in chosen))

    def set_budget(self, cap: float | None, *, allow_raise: bool = False) -> None:
        """Set the dataset's cap on the total epsilon, or lower it.

        A cap, once set, is only lowered: raising it (or removing it with ``cap=None``) needs
        ``allow_raise=True``, which only the command line uses (``dpcore ledger cap``), never
        the page that releases. A cap below what is already spent refuses every further release.

        Raises
        ------
        ValueError
            ``cap`` not positive, or above the stored cap without ``allow_raise``.
        """
        cap = None if cap is None else check_real(cap, "budget", low=0.0)
        with self._store.transaction() as tx:
            current = tx.cap()
            raising = current is not None and (cap is None or cap > current)
            if raising and not allow_raise:
                wanted = "removed" if cap is None else f"raised to {cap:g}"
                raise ValueError(f"the budget cap epsilon={current:g} can only be lowered here, "
                                 f"not {wanted}: raise it with the command line "
                                 "(dpcore ledger cap), where allow_raise=True is passed")
            tx.set_cap(cap, _now().isoformat())

    def record(self, mechanism: str, epsilon: float, delta: float = 0.0) -> LedgerEntry:
        """Record a release on the whole dataset, or raise and record nothing.

        Returns
        -------
        LedgerEntry
            The release as recorded, with its index on the dataset.

        Raises
        ------
        TypeError, ValueError
            ``mechanism`` not a non-empty string; epsilon not in (0, inf); delta not in [0, 1).
        BudgetExceededError
            The release would take the total epsilon past the budget.
        """
        return self._spend(_check_mechanism(mechanism), (("", _check_spend(epsilon)),),
                           _check_delta(delta))

    def record_parallel(self, mechanism: str, parts: Mapping[str, float],
                        delta: float = 0.0) -> LedgerEntry:
        """Record one release made of disjoint parts of the dataset (each patient in one part).

        Parameters
        ----------
        mechanism : str
            What was released.
        parts : mapping of str to float
            Each part's name and the epsilon spent on it. The release costs the dataset the
            largest of them (parallel composition); each part's epsilon is stored.
        delta : float
            The delta of each part (the release's delta, by parallel composition).

        Returns
        -------
        LedgerEntry
            With ``epsilon`` the largest part's and ``parts`` the pairs as given.
        """
        mechanism = _check_mechanism(mechanism)
        if not hasattr(parts, "items") or not parts:
            raise TypeError(f"parts must be a non-empty mapping of part name to epsilon, got {parts!r}")
        for name in parts:
            if not isinstance(name, str) or not name.strip():
                raise TypeError(f"each part needs a non-empty name, got {name!r}")
        pairs = tuple((name, _check_spend(eps, f"epsilon of part {name!r}"))
                      for name, eps in parts.items())
        return self._spend(mechanism, pairs, _check_delta(delta))

    def _spend(self, mechanism, parts, delta):
        # The check reads the total inside the transaction that writes: one unit, never two.
        with self._store.transaction() as tx:
            rows = self._admit(tx.rows(), tx.cap(), mechanism, parts, delta)
            tx.insert(rows)
        return _entries(rows)[0]

    @staticmethod
    def _admit(rows, cap, mechanism, parts, delta):
        """The rows that record the release, or BudgetExceededError; reads nothing itself."""
        entries = _entries(rows)
        spent = float(sum(e.epsilon for e in entries))
        epsilon = max(eps for _, eps in parts)
        # A relative slack so that budgets like 0.1 + 0.2 == 0.3 are not refused by rounding.
        if cap is not None and spent + epsilon > cap * (1.0 + 1e-12):
            raise BudgetExceededError(
                f"privacy budget epsilon={cap:g} exceeded: {spent:g} already spent, "
                f"{epsilon:g} requested by {mechanism!r} (total would be {spent + epsilon:g})")
        index = max((e.index for e in entries), default=0) + 1
        when = _now().isoformat()
        return [(index, mechanism, eps, delta, part, when) for part, eps in parts]


def _now():
    return datetime.now(UTC)


def _entries(rows):
    """Rows (index, mechanism, epsilon, delta, part, time) grouped into one entry per release."""
    grouped = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row)
    out = []
    for index, group in grouped.items():
        _, mechanism, _, _, part, when = group[0]
        parts = tuple((r[4], float(r[2])) for r in group) if part else ()
        out.append(LedgerEntry(mechanism, max(float(r[2]) for r in group),
                               max(float(r[3]) for r in group), datetime.fromisoformat(when),
                               int(index), parts))
    return tuple(out)


def _check_mechanism(mechanism):
    if not isinstance(mechanism, str) or not mechanism.strip():
        raise TypeError(f"mechanism must be a non-empty name, got {mechanism!r}")
    return mechanism


def _check_spend(epsilon, name="epsilon"):
    epsilon = check_epsilon(epsilon, name)
    if np.isinf(epsilon):
        raise ValueError(f"{name} must be finite: a non-private release (epsilon=inf) is "
                         "not a privacy spend and is not recorded")
    return epsilon


def _check_delta(delta):
    delta = check_real(delta, "delta", low=0.0, low_open=False)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    return delta
