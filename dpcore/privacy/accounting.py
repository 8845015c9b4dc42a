"""Privacy accounting: the privacy ledger, and Gaussian differential privacy's conversions
(defined in :mod:`dpcore.privacy.gdp`, importable from here too).

The ledger records each release on a dataset and refuses one past the dataset's cap; its rows
live in memory or, durably, in an SQLite file or a PostgreSQL database
(:mod:`dpcore.privacy.ledger`).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_epsilon, check_real
from .composition import parallel_cost, within_cap
from .gdp import gdp_compose, gdp_delta, gdp_epsilon, gdp_mu
from .identity import (
    DatasetIdentity,
    cells_from_trial,
    dataset_identity,
    is_dataset_key,
)
from .identity_legacy import byte_key, legacy_identity
from .ledger import keeper
from .ledger.keeper import RAISE_HINT, check_keepers, check_user, default_cap_of
from .ledger.location import default_ledger_path, shown_location
from .ledger.records import DatasetSummary, LedgerEntry, entries_of
from .ledger.stores import DurableStore, MemoryStore, open_store

__all__ = [
    "BudgetExceededError",
    "DatasetSummary",
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


@dataclass(frozen=True)
class _Pending:
    """A dataset keyed but not yet in the ledger: registered (its row digests stored) by its
    first release or cap, never by keying alone (privacy rule 12)."""

    identity: DatasetIdentity
    name: str
    also: tuple[str, ...]  # byte keys of these very bytes (the first ledgers)
    legacy: tuple[DatasetIdentity, ...]  # its ds2 identities, for the ledger's ds2 column sets


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

    A durable ledger is opened for a user (``user=None``: the local single user, who sees
    every dataset of the ledger; a user name on a department server). What it shows, links
    and enforces for that user depends only on the datasets the user registered or was
    granted (:meth:`grant`), or on every dataset for a user among ``keepers``: a file that
    shares rows with someone else's dataset gives its uploader no signal.

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

    _store: MemoryStore | DurableStore
    dataset: str | None
    path: Path | str | None
    user: str | None
    keepers: frozenset[str]
    _pending: _Pending | None
    _links_memo: tuple | None

    def __init__(self, budget: float | None = None) -> None:
        budget = None if budget is None else check_real(budget, "budget", low=0.0)
        self._store = MemoryStore(budget)
        self.dataset = None
        self.path = None
        self.user = None
        self.keepers = frozenset()
        self._pending = None
        self._links_memo = None

    @classmethod
    def _new(
        cls,
        store: DurableStore,
        user: str | None,
        keepers: Iterable[str] | None,
    ) -> PrivacyLedger:
        ledger = cls.__new__(cls)
        ledger._store, ledger.dataset, ledger.path = store, store.dataset, store.path
        ledger.user, ledger.keepers = check_user(user), check_keepers(keepers)
        ledger._pending = None
        ledger._links_memo = None
        return ledger

    @property
    def registered(self) -> bool:
        """Whether the dataset is in the ledger: something was released on it or a cap set.

        Keying a file (:meth:`for_file`) stores nothing; the first release or cap registers
        the dataset with its rows' keyed digests. Until then its total, entries, cap and links
        are what registering would give it (the releases of the datasets it shares rows
        with, the keeper's default cap).
        """
        if self._pending is None:
            return True
        store: Any = self._store
        with store.transaction(write=False) as tx:
            if tx.registered():
                self._pending = None
        return self._pending is None

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        dataset: str,
        *,
        budget: float | None = None,
        user: str | None = None,
        keepers: Iterable[str] | None = None,
    ) -> PrivacyLedger:
        """The durable ledger of ``dataset`` at ``path``, a dataset already in it.

        Parameters
        ----------
        path : str or Path
            The ledger: an SQLite file, or a ``postgresql://user@host/database`` URL (a
            string); the app uses :func:`default_ledger_path`. Any other URL is refused.
        dataset : str
            A dataset key this ledger holds: from :meth:`for_file`, :meth:`for_cells`,
            :meth:`for_trial` (once something was released or capped on it) or (byte keys)
            :func:`dataset_key`, computed with this ledger's salt.
        budget : float, optional
            A cap to apply: it sets the dataset's cap if none is stored and lowers a higher
            one; a lower stored cap stays (opening never raises a cap).
        user : str, optional
            Who opens it (None: the local single user). A dataset the user may not see is
            refused exactly as one the ledger does not hold.
        keepers : iterable of str, optional
            The users who see every dataset.

        Raises
        ------
        TypeError
            ``dataset`` not a string.
        ValueError
            ``dataset`` is not a dataset key of this ledger that the user may see (a file
            name, say): the ledger would otherwise open an empty budget that no cap covers;
            or ``path`` is a URL the ledger cannot serve.
        ImportError
            ``path`` is a PostgreSQL URL and psycopg (``dpcore[server]``) is not installed.
        """
        if not isinstance(dataset, str) or not dataset:
            raise TypeError(f"dataset must be a non-empty key string, got {dataset!r}")
        if not is_dataset_key(dataset):
            raise ValueError(
                f"dataset={dataset[:40]!r} is not a dataset key: compute it from the "
                "data with PrivacyLedger.for_file(csv) (or for_cells, for_trial), never "
                "from a file name"
            )
        store = open_store(path, dataset)
        ledger = cls._new(store, user, keepers)
        with store.transaction(write=False) as tx:
            known = tx.registered() and bool(ledger._visible(tx, [dataset]))
        if not known:
            raise ValueError(
                f"dataset={dataset[:16]}... is not a dataset of the ledger "
                f"{shown_location(store.path)!r} that you may see: keys are salted "
                "per ledger and a dataset is in it once something was released or capped on "
                "it; compute the key with PrivacyLedger.for_file(csv, path=that ledger)"
            )
        if budget is not None:
            ledger._lower_cap(budget)
        return ledger

    def _lower_cap(self, budget: float) -> None:
        budget = check_real(budget, "budget", low=0.0)
        with self._store.transaction() as tx:
            self._register(tx)
            tx.hold([None])
            current = tx.cap()
            if current is None or budget < current:
                tx.set_cap(budget, _now().isoformat())
        self._pending = None

    @classmethod
    def for_cells(
        cls,
        cells: Mapping[str, Sequence[object]],
        *,
        path: str | os.PathLike[str] | None = None,
        name: str = "",
        budget: float | None = None,
        user: str | None = None,
        keepers: Iterable[str] | None = None,
        _also: Sequence[str] = (),
    ) -> PrivacyLedger:
        """The durable ledger of the dataset made of these cells.

        The key is :func:`dpcore.privacy.identity.dataset_identity` of ``cells`` under the
        ledger file's salt and the user's scope: the same rows re-saved (another encoding,
        delimiter, quoting, line ends, column names or order, row order, label case or
        binary coding) are the same dataset. Keying stores nothing: the dataset is registered,
        with its rows' keyed digests and the keeper's default cap (:meth:`set_default_cap`,
        ``$DPCORE_LEDGER_DEFAULT_CAP``), by its first release or cap. When it registers, the
        datasets the user may see that share rows with it are linked to it: their releases
        so far are copied into its record, and from then on every release on it is recorded
        against them too and checked against their caps.

        Parameters
        ----------
        cells : mapping of str to sequence
            ``{column: [cell, ...]}`` (text, read by
            :func:`dpcore.privacy.identity.row_cell`); the names are not part of the key.
        path : str or Path, optional
            The ledger (an SQLite file or a ``postgresql://`` URL, as in :meth:`open`);
            default :func:`default_ledger_path`.
        name : str, optional
            A label for the dataset (the file's name, say), stored when it registers. It is
            not part of the key: a new name is the same dataset, with the same cap.
        budget : float, optional
            A cap to apply, as in :meth:`open` (it can only lower a stored cap); a cap
            registers the dataset.
        user : str, optional
            Who keys it: None for the local single user (who sees every dataset), a user name
            on a department server. Recorded as the dataset's owner and on every release.
        keepers : iterable of str, optional
            The users who see every dataset of the ledger (its keepers).

        Returns
        -------
        PrivacyLedger
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        user = check_user(user)
        path = default_ledger_path() if path is None else path
        salt = open_store(path, "").salt()
        identity = dataset_identity(cells, salt, scope=user or "")
        store = open_store(path, identity.key)
        ledger = cls._new(store, user, keepers)
        with store.transaction(write=False) as tx:
            info = tx.info()
            older = [] if info is not None else ledger._legacy_columns(tx)
        if info is None:
            legacy = tuple(
                legacy_identity({c: cells[c] for c in columns}, salt)
                for columns in older
                if set(columns) <= set(cells)
            )
            ledger._pending = _Pending(identity, name, tuple(_also), legacy)
        elif name and not info[1]:
            with store.transaction() as tx:
                tx.set_name(name)
        if budget is not None:
            ledger._lower_cap(budget)
        return ledger

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
        user: str | None = None,
        keepers: Iterable[str] | None = None,
    ) -> PrivacyLedger:
        """The durable ledger of a trial CSV, keyed by all its rows' content.

        Every column of the file is part of its rows, whatever columns a release uses: a
        release from a file always has the file's bytes, so a cap set on the file binds every
        release from it, with or without a dictionary, whatever its columns.

        Parameters
        ----------
        source : str, Path or bytes
            The CSV file (or its bytes), read with :func:`dpcore.data.csv_io.read_table`.
        columns : sequence of str, optional
            Deprecated and ignored (a DeprecationWarning): the dataset is the file's rows over
            all its columns.
        path, name, budget, user, keepers
            As in :meth:`for_cells`.
        encoding : str
            The file's declared encoding (as :func:`dpcore.read_trial` reads it): a file not
            valid in it is refused.

        Returns
        -------
        PrivacyLedger
            Not registered until its first release or cap (:attr:`registered`); it is then
            linked with the byte-keyed record (:func:`dataset_key`) of these exact bytes and
            ``name`` and with the ``ds2-`` records of an earlier dpcore for this file.
        """
        from ..data.csv_io import normalised_cells

        if columns is not None:
            warnings.warn(
                "PrivacyLedger.for_file(source, columns): columns is ignored; a file is keyed "
                "by all its rows, whatever columns a release uses. Drop the argument.",
                DeprecationWarning,
                stacklevel=2,
            )
        data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
        # Each cell on its own, as the trial reader reads it: no cell can change how another
        # row is keyed (a whole-column typing would let one patient re-key every other row).
        cells = normalised_cells(bytes(data), encoding=encoding)
        ledger_path = default_ledger_path() if path is None else path
        salt = open_store(ledger_path, "").salt()
        legacy = [byte_key(salt, bytes(data), n) for n in dict.fromkeys((name, ""))]
        return cls.for_cells(
            cells,
            path=ledger_path,
            name=name,
            budget=budget,
            user=user,
            keepers=keepers,
            _also=legacy,
        )

    @classmethod
    def for_trial(
        cls,
        trial: object,
        *,
        path: str | os.PathLike[str] | None = None,
        name: str = "",
        budget: float | None = None,
        user: str | None = None,
        keepers: Iterable[str] | None = None,
    ) -> PrivacyLedger:
        """The durable ledger of a :class:`dpcore.Trial` (its used columns, rebuilt as cells).

        A library call without the file: the dataset is the trial's rows over the columns
        it holds (:func:`dpcore.privacy.identity.cells_from_trial`), read as the file's are.
        It is the file's dataset (:meth:`for_file`) when the file has no other column, and
        otherwise linked with it only through rows that agree: release from the file when
        you have it.
        """
        return cls.for_cells(
            cells_from_trial(trial), path=path, name=name, budget=budget, user=user, keepers=keepers
        )

    # The keeper's acts on the ledger as a whole (dpcore.privacy.ledger.keeper).
    default_cap = staticmethod(keeper.default_cap)
    set_default_cap = staticmethod(keeper.set_default_cap)
    grant = staticmethod(keeper.grant)
    list_datasets = staticmethod(keeper.list_datasets)

    # ----------------------------------------------------------------------------------------
    # What the user may see, and a dataset's registration

    def _visible(self, tx, keys):
        """Those of ``keys`` the ledger's user may see (all for the local user and keepers)."""
        keys = list(keys)
        if self.user is None or self.user in self.keepers:
            return keys
        return tx.visible(keys, self.user)

    def _legacy_columns(self, tx):
        """The column lists of the ``ds2-`` datasets the user may see (an earlier identity)."""
        if not hasattr(tx, "legacy_columns"):
            return []
        lists = tx.legacy_columns()
        if not lists or self.user is None or self.user in self.keepers:
            return [json.loads(c) for c in lists]
        return []  # an earlier version's datasets belong to the local user (or a keeper)

    def _links(self, tx, memo=False):
        """(linked, whole): the datasets the user may see that a pending dataset shares rows
        with, and among them those that are these very rows under an earlier key.

        With ``memo`` (a read), the last answer is reused while no dataset registered and no
        grant was made since: the sidebar reads a pending file's total, entries and cap on
        every rerun, and each fresh answer looks up every row's digest.
        """
        p = self._pending
        assert p is not None
        stamp = tx.generation()
        if memo and self._links_memo is not None and self._links_memo[0] == stamp:
            return self._links_memo[1]
        found_links = self._find_links(tx, p)
        self._links_memo = (stamp, found_links)
        return found_links

    def _find_links(self, tx, p):
        key = p.identity.key
        found = tx.sharing(p.identity.row_hashes, key) if p.identity.row_hashes else []
        whole = [k for k in p.also if k != key and tx.registered(k)]
        for old in p.legacy:
            if tx.registered(old.key):
                whole.append(old.key)
            if old.row_hashes:
                found += tx.sharing(old.row_hashes, key)
        whole = self._visible(tx, dict.fromkeys(whole))
        linked = self._visible(tx, sorted(set(found) | set(whole)))
        return linked, whole

    def _register(self, tx):
        """Register a pending dataset in the write transaction ``tx`` (its first release or
        cap): its row digests, its owner, its links and the keeper's default cap."""
        p = self._pending
        if p is None:
            return
        identity, when = p.identity, _now().isoformat()
        new = tx.register(
            identity.key,
            "content",
            p.name,
            identity.columns,
            identity.row_hashes,
            when,
            owner=self.user or "",
        )
        if not new:  # the same user registered it meanwhile (another session)
            return
        linked, whole = self._links(tx)
        # Their releases are copied (and their links made) while no release on them runs.
        tx.hold(linked)
        for key in whole:  # an earlier key of these rows learns today's row digests
            tx.add_rows(key, identity.row_hashes)
        for other in linked:
            tx.link(identity.key, other)
            tx.insert(_copied(tx, other, tx.rows()), identity.key)
        default = default_cap_of(tx)
        if default is not None:
            tx.set_cap(default, when)

    def _view(self):
        """(rows, cap, linked): as stored, or as registering a pending dataset would make them."""
        with self._store.transaction(write=False) as tx:
            if self._pending is not None and tx.registered():
                self._pending = None
            if self._pending is None:
                return tx.rows(), tx.cap(), self._visible(tx, tx.linked())
            linked, _ = self._links(tx, memo=True)
            rows: list = []
            for other in linked:
                rows += _copied(tx, other, rows)
            return rows, default_cap_of(tx), linked

    def linked(self) -> tuple[str, ...]:
        """Keys of the other datasets, among those the user may see, that share rows with
        this one (each release on this dataset is recorded against them too)."""
        return tuple(self._view()[2])

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
        return self._view()[1]

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """The recorded releases, oldest first, as a tuple of frozen :class:`LedgerEntry`."""
        return entries_of(self._view()[0])

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
            self._register(tx)
            tx.hold([None])
            current = tx.cap()
            raising = current is not None and (cap is None or cap > current)
            if raising and not allow_raise:
                wanted = "removed" if cap is None else f"raised to {cap:g}"
                raise ValueError(
                    f"the budget cap epsilon={current:g} can only be lowered here, "
                    f"not {wanted}: {RAISE_HINT} (allow_raise=True)"
                )
            tx.set_cap(cap, _now().isoformat())
        self._pending = None

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
        # A release is charged to this dataset and to every dataset sharing rows with it that
        # its user may see, each against its own cap; one the user may not see is neither
        # read, nor locked, nor charged (no signal about it, privacy rule 12). A dataset keyed
        # but not yet in the ledger registers here, in the same transaction: a refused
        # release stores nothing.
        who = self.user or ""
        with self._store.transaction() as tx:
            self._register(tx)
            targets = [None, *tx.hold_linked(lambda keys: self._visible(tx, keys))]
            plans = []
            for other in targets:
                label = (
                    mechanism
                    if other is None
                    else (f"{mechanism} [on dataset {str(self.dataset)[:14]}, which shares rows]")
                )
                plans.append(
                    (
                        other,
                        self._admit(tx.rows(other), tx.cap(other), label, parts, delta, other, who),
                    )
                )
            for other, rows in plans:
                tx.insert(rows, other)
        self._pending = None
        return entries_of(plans[0][1])[0]

    @staticmethod
    def _admit(rows, cap, mechanism, parts, delta, other=None, who=""):
        """The rows that record the release, or BudgetExceededError; reads nothing itself."""
        entries = entries_of(rows)
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
                f"release with a smaller epsilon, or {RAISE_HINT}"
            )
        index = max((e.index for e in entries), default=0) + 1
        when = _now().isoformat()
        return [(index, mechanism, eps, delta, part, when, who) for part, eps in parts]


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
        tx.register(key, "bytes", name, (), None, _now().isoformat())
    return key


def _copied(tx, source, target_rows):
    """The releases recorded on ``source`` as rows to copy into a new dataset's record after
    ``target_rows`` (it shares rows with ``source``: those patients already had them)."""
    base = max((e.index for e in entries_of(target_rows)), default=0)
    rows = []
    for e in entries_of(tx.rows(source)):
        label = f"{e.mechanism} [on dataset {source[:14]}, which shares rows]"
        when = e.timestamp.isoformat()
        if e.parts:
            rows += [
                (base + e.index, label, eps, e.delta, part, when, e.who) for part, eps in e.parts
            ]
        else:
            rows.append((base + e.index, label, e.epsilon, e.delta, "", when, e.who))
    return rows


def _now():
    return datetime.now(UTC)


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
