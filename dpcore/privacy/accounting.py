"""Privacy accounting: the privacy ledger, and Gaussian differential privacy's conversions
(defined in :mod:`dpcore.privacy.gdp`, importable from here too).

The ledger records each release on a dataset and refuses one past the dataset's cap; its rows
live in memory or, durably, in an SQLite file or a PostgreSQL database
(:mod:`dpcore.privacy.ledger_store`, :mod:`dpcore.privacy.ledger_pg`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_epsilon, check_real
from .composition import parallel_cost, within_cap
from .gdp import gdp_compose, gdp_delta, gdp_epsilon, gdp_mu
from .identity import cells_from_trial, dataset_identity, is_dataset_key
from .ledger_store import (
    MemoryStore,
    SQLiteStore,
    byte_key,
    dataset_key,
    default_ledger_path,
    env_default_cap,
    open_store,
    shown_location,
)

if TYPE_CHECKING:
    from .ledger_pg import PostgresStore

__all__ = [
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyLedger",
    "dataset_key",
    "default_ledger_path",
    "NO_GUARANTEE",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
]


# --------------------------------------------------------------------------------------------
# Privacy ledger (basic and parallel composition), in memory or durable


class BudgetExceededError(ValueError):
    """A release would take the composed privacy spend past the ledger's budget."""


#: The epsilon recorded for a release without a guarantee (NOT PRIVATE, or seeded noise):
#: it makes the dataset's total infinite, so no later total understates what was lost.
NO_GUARANTEE = float("inf")
_RAISE_HINT = (
    "raise it on the command line, as the ledger's keeper: dpcore ledger cap DATA "
    "EPSILON --allow-raise"
)


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
    :meth:`PrivacyLedger.open` (and :meth:`for_file`) keep it per dataset, across processes
    and restarts, in an SQLite file or, given a ``postgresql://`` URL, in a PostgreSQL
    database that several app processes share. All have the same methods.

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
    ``BEGIN IMMEDIATE`` in SQLite, a row lock per dataset in PostgreSQL), so concurrent
    releases cannot overspend the budget.

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

    _store: MemoryStore | SQLiteStore | PostgresStore
    dataset: str | None
    path: Path | str | None

    def __init__(self, budget: float | None = None) -> None:
        budget = None if budget is None else check_real(budget, "budget", low=0.0)
        self._store = MemoryStore(budget)
        self.dataset = None
        self.path = None

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], dataset: str, *, budget: float | None = None
    ) -> PrivacyLedger:
        """The durable ledger of ``dataset`` at ``path`` (created on first use).

        Parameters
        ----------
        path : str or Path
            The ledger: an SQLite file, or a ``postgresql://user@host/database`` URL (a
            string); the app uses :func:`default_ledger_path`. Any other URL is refused.
        dataset : str
            A dataset key this ledger knows: from :meth:`for_file`, :meth:`for_cells`,
            :meth:`for_trial` or (byte keys) :func:`dataset_key`, computed with this
            ledger's salt.
        budget : float, optional
            A cap to apply: it sets the dataset's cap if none is stored and lowers a higher
            one; a lower stored cap stays (opening never raises a cap).

        Raises
        ------
        TypeError
            ``dataset`` not a string.
        ValueError
            ``dataset`` is not a dataset key of this ledger (a file name, say): the ledger
            would otherwise open an empty budget that no cap covers; or ``path`` is a URL
            the ledger cannot serve.
        ImportError
            ``path`` is a PostgreSQL URL and psycopg (``dpcore[server]``) is not installed.
        """
        if not isinstance(dataset, str) or not dataset:
            raise TypeError(f"dataset must be a non-empty key string, got {dataset!r}")
        if not is_dataset_key(dataset):
            raise ValueError(
                f"dataset={dataset[:40]!r} is not a dataset key: compute it from the "
                "data with PrivacyLedger.for_file(csv, columns) (or for_cells, "
                "for_trial), never from a file name"
            )
        store = open_store(path, dataset)
        with store.transaction(write=False) as tx:
            known = tx.registered()
        if not known:
            raise ValueError(
                f"dataset={dataset[:16]}... is not a dataset of the ledger "
                f"{shown_location(store.path)!r}: keys are salted per ledger; "
                "compute it with PrivacyLedger.for_file(csv, columns, path=that "
                "ledger)"
            )
        return cls._attach(store, budget)

    @classmethod
    def _attach(cls, store: SQLiteStore | PostgresStore, budget: float | None) -> PrivacyLedger:
        ledger = cls.__new__(cls)
        ledger._store, ledger.dataset, ledger.path = store, store.dataset, store.path
        if budget is not None:
            budget = check_real(budget, "budget", low=0.0)
            with ledger._store.transaction() as tx:
                tx.hold([None])
                if tx.cap() is None or budget < tx.cap():
                    tx.set_cap(budget, _now().isoformat())
        return ledger

    @classmethod
    def for_cells(
        cls,
        cells: Mapping[str, Sequence[object]],
        *,
        path: str | os.PathLike[str] | None = None,
        name: str = "",
        budget: float | None = None,
        _also: Sequence[str] = (),
    ) -> PrivacyLedger:
        """The durable ledger of the dataset made of these used columns' cells.

        The key is :func:`dpcore.privacy.identity.dataset_identity` of ``cells`` under the
        ledger file's salt: the same trial re-saved (another encoding, delimiter, quoting,
        line ends, column or row order, other unused columns) is the same dataset. On first
        sight the dataset is registered with its rows' keyed digests and gets the keeper's
        default cap (:meth:`set_default_cap`, ``$DPCORE_LEDGER_DEFAULT_CAP``); if it shares
        rows with datasets already in the ledger, their releases so far are copied into its
        record, and from then on every release on either is recorded against both and checked
        against both caps.

        Parameters
        ----------
        cells : mapping of str to sequence
            ``{column: [cell, ...]}`` for the columns the release uses (text, normalised by
            :func:`dpcore.privacy.identity.normalise_cell`).
        path : str or Path, optional
            The ledger (an SQLite file or a ``postgresql://`` URL, as in :meth:`open`);
            default :func:`default_ledger_path`.
        name : str, optional
            A label the keeper gives the dataset (shown in the ledger). It is not part of the
            key: a new name is the same dataset, with the same cap.
        budget : float, optional
            A cap to apply, as in :meth:`open` (it can only lower a stored cap).

        Returns
        -------
        PrivacyLedger
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        path = default_ledger_path() if path is None else path
        salt = open_store(path, "").salt()
        identity = dataset_identity(cells, salt)
        store = open_store(path, identity.key)
        default = cls.default_cap(path)
        with store.transaction() as tx:
            new = tx.register(
                identity.key,
                "content",
                name,
                identity.columns,
                identity.row_hashes,
                _now().isoformat(),
            )
            earlier = tx.sharing(identity.row_hashes) if new else []
            # A byte-keyed dataset of an older ledger (these very bytes) shares every row.
            known = set(tx.linked())
            legacy = [k for k in _also if k != identity.key and k not in known and tx.registered(k)]
            # Their releases are copied (and their links made) while no release on them runs.
            tx.hold([*earlier, *legacy])
            for key in legacy:
                tx.add_rows(key, identity.row_hashes)
            for other in dict.fromkeys([*earlier, *legacy]):
                tx.link(identity.key, other)
                _copy_releases(tx, other, identity.key)
            if new and default is not None:
                tx.set_cap(default, _now().isoformat())
        return cls._attach(store, budget)

    @classmethod
    def for_file(
        cls,
        source: str | os.PathLike[str] | bytes,
        columns: Sequence[str] | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        name: str = "",
        budget: float | None = None,
        encoding: str = "utf-8",
    ) -> PrivacyLedger:
        """The durable ledger of a trial CSV, keyed by its used columns' content.

        Parameters
        ----------
        source : str, Path or bytes
            The CSV file (or its bytes), read with :func:`dpcore.data.csv_io.read_table`.
        columns : sequence of str, optional
            The columns the release uses (treatment, outcome, covariates, propensity). Give
            them: by default every column is used, so dropping or editing an unused column
            would make another dataset (still linked to this one by its other rows only when
            the rows agree in every column).
        path, name, budget
            As in :meth:`for_cells`.
        encoding : str
            The file's declared encoding (as :func:`dpcore.read_trial` reads it): a file not
            valid in it is refused.

        Returns
        -------
        PrivacyLedger
            Its dataset also absorbs the byte-keyed record (:func:`dataset_key`) an older
            ledger holds for these exact bytes and ``name``.
        """
        from ..data.csv_io import normalised_cells

        data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
        # Each cell on its own, as the trial reader reads it: no cell can change how another
        # row is keyed (a whole-column typing would let one patient re-key every other row).
        cells = normalised_cells(bytes(data), columns, encoding=encoding)
        ledger_path = default_ledger_path() if path is None else path
        salt = open_store(ledger_path, "").salt()
        legacy = [byte_key(salt, bytes(data), n) for n in dict.fromkeys((name, ""))]
        return cls.for_cells(cells, path=ledger_path, name=name, budget=budget, _also=legacy)

    @classmethod
    def for_trial(
        cls,
        trial: object,
        *,
        path: str | os.PathLike[str] | None = None,
        name: str = "",
        budget: float | None = None,
    ) -> PrivacyLedger:
        """The durable ledger of a :class:`dpcore.Trial` (its used columns, rebuilt).

        For a trial read with ``incomplete="keep"`` this is the dataset :meth:`for_file`
        gives for the file and the trial's columns (see
        :func:`dpcore.privacy.identity.cells_from_trial`).
        """
        return cls.for_cells(cells_from_trial(trial), path=path, name=name, budget=budget)

    @staticmethod
    def default_cap(path: str | os.PathLike[str] | None = None) -> float | None:
        """The cap every new dataset of the ledger gets: the lower of the keeper's stored
        default (:meth:`set_default_cap`) and ``$DPCORE_LEDGER_DEFAULT_CAP``; None if neither."""
        store = open_store(default_ledger_path() if path is None else path, "")
        with store.transaction(write=False) as tx:
            stored = tx.setting("default_cap")
        caps = [
            c
            for c in (None if stored is None else float(stored), env_default_cap())
            if c is not None
        ]
        return min(caps) if caps else None

    @staticmethod
    def set_default_cap(
        path: str | os.PathLike[str] | None, cap: float | None, *, allow_raise: bool = False
    ) -> None:
        """Set the cap given to every dataset the ledger sees from now on (the keeper's).

        Parameters
        ----------
        path : str or Path or None
            The ledger (a file or a ``postgresql://`` URL); None for
            :func:`default_ledger_path`.
        cap : float or None
            The default cap on a new dataset's total ε; None removes it.
        allow_raise : bool
            Raising or removing a stored default needs it (``dpcore ledger default-cap
            --allow-raise``), as for a dataset's cap.
        """
        cap = None if cap is None else check_real(cap, "cap", low=0.0)
        store = open_store(default_ledger_path() if path is None else path, "")
        with store.transaction() as tx:
            tx.hold_ledger()
            stored = tx.setting("default_cap")
            current = None if stored is None else float(stored)
            if current is not None and (cap is None or cap > current) and not allow_raise:
                raise ValueError(
                    f"the default cap epsilon={current:g} can only be lowered "
                    f"here: {_RAISE_HINT.replace('cap DATA', 'default-cap')}"
                )
            tx.set_setting("default_cap", None if cap is None else repr(cap))

    def linked(self) -> tuple[str, ...]:
        """Keys of the other datasets that share rows with this one (each release on this
        dataset is recorded against them too)."""
        with self._store.transaction(write=False) as tx:
            return tuple(tx.linked())

    def __repr__(self) -> str:
        eps, delta = self.total()
        where = (
            ""
            if self.path is None
            else f"{shown_location(self.path)!r}, {str(self.dataset)[:12]!r}, "
        )
        return (
            f"PrivacyLedger({where}budget={self.budget!r}, releases={len(self.entries)}, "
            f"epsilon={eps:g}, delta={delta:g})"
        )

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
            tx.hold([None])
            current = tx.cap()
            raising = current is not None and (cap is None or cap > current)
            if raising and not allow_raise:
                wanted = "removed" if cap is None else f"raised to {cap:g}"
                raise ValueError(
                    f"the budget cap epsilon={current:g} can only be lowered here, "
                    f"not {wanted}: {_RAISE_HINT} (allow_raise=True)"
                )
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
        return self._spend(
            _check_mechanism(mechanism), (("", _check_spend(epsilon)),), _check_delta(delta)
        )

    def record_no_guarantee(self, mechanism: str, reason: str) -> LedgerEntry:
        """Record a release that has no privacy guarantee: the dataset's total becomes ∞.

        A NOT PRIVATE release (bounds or levels read from the data) or one with seeded noise
        (anyone with the seed can remove the noise) voids the guarantee of every patient in
        it, so the ledger says so for good: the total, every later total and every file that
        states it read ``inf`` ("no guarantee").

        Parameters
        ----------
        mechanism : str
            What was released.
        reason : str
            Why there is no guarantee (kept in the ledger with the mechanism).

        Raises
        ------
        BudgetExceededError
            The dataset (or one sharing rows with it) has a cap: no cap can hold an infinite
            total, so the release is refused and nothing is recorded.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise TypeError(f"reason must say why there is no guarantee, got {reason!r}")
        text = f"{_check_mechanism(mechanism)} [no guarantee: {reason.strip()}]"
        return self._spend(text, (("", NO_GUARANTEE),), 0.0)

    def record_parallel(
        self, mechanism: str, parts: Mapping[str, float], delta: float = 0.0
    ) -> LedgerEntry:
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
            raise TypeError(
                f"parts must be a non-empty mapping of part name to epsilon, got {parts!r}"
            )
        for name in parts:
            if not isinstance(name, str) or not name.strip():
                raise TypeError(f"each part needs a non-empty name, got {name!r}")
        pairs = tuple(
            (name, _check_spend(eps, f"epsilon of part {name!r}")) for name, eps in parts.items()
        )
        return self._spend(mechanism, pairs, _check_delta(delta))

    def _spend(self, mechanism, parts, delta):
        # The check reads the totals inside the transaction that writes: one unit, never two.
        # A release is charged to this dataset and to every dataset sharing rows with it,
        # each against its own cap.
        with self._store.transaction() as tx:
            targets = [None, *tx.hold_linked()]
            plans = []
            for other in targets:
                label = (
                    mechanism
                    if other is None
                    else (f"{mechanism} [on dataset {str(self.dataset)[:14]}, which shares rows]")
                )
                plans.append(
                    (other, self._admit(tx.rows(other), tx.cap(other), label, parts, delta, other))
                )
            for other, rows in plans:
                tx.insert(rows, other)
        return _entries(plans[0][1])[0]

    @staticmethod
    def _admit(rows, cap, mechanism, parts, delta, other=None):
        """The rows that record the release, or BudgetExceededError; reads nothing itself."""
        entries = _entries(rows)
        spent = float(sum(e.epsilon for e in entries))
        epsilon = parallel_cost(dict(parts))
        where = (
            "" if other is None else f" of dataset {other[:14]}, which shares rows with this one,"
        )
        if cap is not None and np.isinf(epsilon):
            raise BudgetExceededError(
                f"privacy budget epsilon={cap:g}{where} cannot hold a release without a guarantee "
                f"({mechanism!r} makes the total infinite); release it privately, or remove the "
                f"cap as the ledger's keeper: dpcore ledger cap DATA --remove --allow-raise"
            )
        if not within_cap(spent, epsilon, cap):
            left = (
                "no guarantee is left (a release without one was recorded)"
                if np.isinf(spent)
                else f"{spent:g} already spent"
            )
            raise BudgetExceededError(
                f"privacy budget epsilon={cap:g}{where} exceeded: {left}, "
                f"{epsilon:g} requested by {mechanism!r} (total would be {spent + epsilon:g}); "
                f"release with a smaller epsilon, or {_RAISE_HINT}"
            )
        index = max((e.index for e in entries), default=0) + 1
        when = _now().isoformat()
        return [(index, mechanism, eps, delta, part, when) for part, eps in parts]


def _copy_releases(tx, source, target):
    """Copy the releases recorded on ``source`` into ``target``'s record (a new dataset that
    shares rows with it: those patients have already had these releases)."""
    base = max((e.index for e in _entries(tx.rows(target))), default=0)
    rows = []
    for e in _entries(tx.rows(source)):
        label = f"{e.mechanism} [on dataset {source[:14]}, which shares rows]"
        when = e.timestamp.isoformat()
        if e.parts:
            rows += [(base + e.index, label, eps, e.delta, part, when) for part, eps in e.parts]
        else:
            rows.append((base + e.index, label, e.epsilon, e.delta, "", when))
    tx.insert(rows, target)


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
        out.append(
            LedgerEntry(
                mechanism,
                max(float(r[2]) for r in group),
                max(float(r[3]) for r in group),
                datetime.fromisoformat(when),
                int(index),
                parts,
            )
        )
    return tuple(out)


def _check_mechanism(mechanism):
    if not isinstance(mechanism, str) or not mechanism.strip():
        raise TypeError(f"mechanism must be a non-empty name, got {mechanism!r}")
    return mechanism


def _check_spend(epsilon, name="epsilon"):
    epsilon = check_epsilon(epsilon, name)
    if np.isinf(epsilon):
        raise ValueError(
            f"{name} must be finite: a non-private release (epsilon=inf) is "
            "not a privacy spend and is not recorded"
        )
    return epsilon


def _check_delta(delta):
    delta = check_real(delta, "delta", low=0.0, low_open=False)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    return delta
