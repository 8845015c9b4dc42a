"""The one door releases go through: the durable privacy ledger of the dataset in use, its key,
its standing, the record of a release and the receipt every release shows (the sidebar's view
of it: :mod:`dpcore_app.ui.common.ledger_sidebar`).

The ledger is one SQLite file or PostgreSQL database (``$DPCORE_LEDGER``, else a per-user
data path; see :func:`dpcore.privacy.accounting.default_ledger_path`) shared by every session
and kept across restarts. Each dataset has its own total, keyed by a salted digest of the
file's rows (:meth:`dpcore.PrivacyLedger.for_file`); ``st.session_state`` holds that key and
the keyed ledger (the rows' salted digests), never the data. Keying a file on upload stores
nothing: the dataset enters the ledger with its first release or cap.

Who: :func:`ledger_user` is the user the ledger answers for (None, the local single user, who
sees every dataset; on a department server the signed-in user, who sees only the datasets
they registered or were granted, unless among :func:`ledger_keepers`). The signed-in user is
read from the header an authenticating proxy sets (``$DPCORE_AUTH_HEADER``, which
``dpcore serve --auth`` sets for its replicas, with ``$DPCORE_PROXY_SECRET``); without that
environment no header is trusted.

The demo files shipped with the app are practice data that every session shares: their totals
add up like any file's (:func:`is_demo` tells them apart).
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from dpcore.privacy import accounting
from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger

if TYPE_CHECKING:
    from pathlib import Path

    from dpcore.release import Release
    from dpcore_app.ui.common.demos import Source

IN_USE = "ledger_dataset"  # the key of the dataset in use (a salted digest), never the data
_MEMO = "ledger_key_memo"  # (file digest, name, ledger path, key): the file is hashed once
_KEYED = "ledger_keyed"  # the file's PrivacyLedger (row digests in memory until it registers)
RAISE_WHERE = (
    "A cap is raised only on the command line, by whoever keeps the ledger: `dpcore ledger cap …`."
)


@dataclass(frozen=True)
class Receipt:
    """A recorded release: its index on the dataset and the dataset's totals once it is in."""

    index: int
    epsilon: float
    delta: float
    epsilon_total: float
    delta_total: float
    dataset: str


def ledger_path() -> Path | str:
    """The ledger file every session uses (read at each call, so a test can point it elsewhere)."""
    return accounting.default_ledger_path()


class NotSignedIn(RuntimeError):
    """The server authenticates its users, but this session's request names none."""


#: The header with the proxy's secret (dpcore._serve.nginx.PROXY_HEADER).
PROXY_HEADER = "X-Dpcore-Proxy"


def ledger_user() -> str | None:
    """The user the ledger answers for: None, the local single user (who sees every dataset).

    On a department server this is the signed-in user: ``$DPCORE_AUTH_HEADER`` names the
    header the authenticating proxy sets (``dpcore serve --auth``: ``X-Dpcore-User``), read
    from this session's request (``st.context.headers``), and trusted only beside the proxy's
    secret (``$DPCORE_PROXY_SECRET``, when set). The ledger then shows, links and enforces
    only the datasets that user registered or was granted (privacy rule 12). Without
    ``$DPCORE_AUTH_HEADER`` no header is read: a client cannot name itself.

    Raises
    ------
    NotSignedIn
        The server authenticates, but the request names no user (or lacks the secret).
    """
    header = os.environ.get("DPCORE_AUTH_HEADER", "").strip()
    if not header:
        return None
    headers = st.context.headers
    secret = os.environ.get("DPCORE_PROXY_SECRET", "")
    if secret and not hmac.compare_digest(headers.get(PROXY_HEADER, "").encode(), secret.encode()):
        raise NotSignedIn("this request did not come through the server's proxy")
    user = headers.get(header, "").strip()
    if not user:
        raise NotSignedIn("the server's proxy named no signed-in user")
    return user


def ledger_keepers() -> frozenset[str]:
    """The users who see every dataset (``$DPCORE_KEEPERS``, comma-separated: ``dpcore serve
    --keeper``); none without authentication, where the local user sees everything."""
    if not os.environ.get("DPCORE_AUTH_HEADER", "").strip():
        return frozenset()
    return frozenset(
        k.strip() for k in os.environ.get("DPCORE_KEEPERS", "").split(",") if k.strip()
    )


def dataset_ledger(key: str) -> PrivacyLedger:
    """The durable ledger of the dataset with this key, for :func:`ledger_user`: the file
    keyed in this session (in the ledger or not yet), else a dataset already in the ledger."""
    keyed = st.session_state.get(_KEYED)
    if keyed is not None and keyed.dataset == key and str(keyed.path) == str(ledger_path()):
        return keyed
    return PrivacyLedger.open(ledger_path(), key, user=ledger_user(), keepers=ledger_keepers())


#: Ledger keys of the shipped demo files, as every session of this process has keyed them.
_DEMO_KEYS: set[str] = set()


@st.cache_data(show_spinner=False, max_entries=8)
def _shipped_demo_keys(path, user, keepers):
    """The demo files' keys, known before any session keys them."""
    from dpcore_app.ui.common.demos import DEMOS, demo_source

    return frozenset(
        PrivacyLedger.for_file(
            demo_source(name).data, path=path, user=user, keepers=keepers
        ).dataset
        for name in DEMOS
    )


def is_demo(key: str) -> bool:
    """Whether the dataset with this key is, or shares rows with, a demo file shipped with the
    app (public practice data)."""
    demos = _DEMO_KEYS | _shipped_demo_keys(
        str(ledger_path()), ledger_user(), tuple(sorted(ledger_keepers()))
    )
    return bool(demos & ({key} | set(dataset_ledger(key).linked())))


def dataset_key(source: Source, name: str = "") -> str:
    """The ledger key of ``source`` (a Source with ``.data`` and ``.digest``), now the one in use.

    The key is the file's rows over all its columns (:meth:`dpcore.PrivacyLedger.for_file`),
    whatever columns the release uses: the same trial re-saved, with renamed columns or
    re-cased labels, is the same dataset, and a file sharing rows with an earlier one the user
    may see is charged to both. ``name`` (the uploaded file's name) is stored with the dataset
    when it enters the ledger. It is computed once per file and session, and stores nothing;
    when the dataset in use changes, the app reruns so that the sidebar, drawn before the
    page, shows the new one.
    """
    path = str(ledger_path())
    memo = st.session_state.get(_MEMO)
    keyed = st.session_state.get(_KEYED)
    if memo is not None and memo[:3] == (source.digest, name, path) and keyed is not None:
        key = memo[3]
    else:
        keyed = PrivacyLedger.for_file(
            source.data, path=path, name=name, user=ledger_user(), keepers=ledger_keepers()
        )
        key = keyed.dataset
        assert key is not None  # for_file keys the ledger it returns
        st.session_state[_KEYED] = keyed
        st.session_state[_MEMO] = (source.digest, name, path, key)
    if getattr(source, "demo", False):
        _DEMO_KEYS.add(key)
    if st.session_state.get(IN_USE) != key:
        st.session_state[IN_USE] = key
        st.rerun()
    return key


def standing(key: str) -> tuple[float, float | None]:
    """(ε spent so far, cap or None) of the dataset with this key, over every session."""
    ledger = dataset_ledger(key)
    return ledger.total()[0], ledger.budget


def record(dataset_key: str, made: Release, where: str = "") -> tuple[Release, Receipt] | str:
    """Record a release (:class:`dpcore.release.Release`, computed, nothing of it shown yet)
    on the dataset with this key, as every surface records one (its plan's parts; without a
    guarantee when it has none).

    Returns
    -------
    (Release, Receipt) or str
        The recorded release and its receipt, or the refusal message (then nothing of the
        release may be shown).
    """
    ledger = dataset_ledger(dataset_key)
    try:
        made = made.record(ledger, where)
    except BudgetExceededError:
        return refusal(ledger, made.plan.cost if made.private else float("inf"))
    st.session_state[IN_USE] = dataset_key
    entry, totals = made.entry, made.totals
    assert totals is not None  # a recorded release carries the dataset's totals
    return made, Receipt(entry.index, entry.epsilon, entry.delta, *totals, dataset_key)


def eps_text(eps: float) -> str:
    """ε as the sidebar, the receipts and the files say it: ∞ is "no guarantee"."""
    return "∞ (no guarantee)" if eps == float("inf") else f"{eps:g}"


def refusal(ledger: PrivacyLedger, epsilon: float) -> str:
    """Why a release of ``epsilon`` is refused under the dataset's cap, in plain words."""
    spent = ledger.total()[0]
    if epsilon == float("inf"):
        return (
            f"Refused: a NOT PRIVATE release leaves this dataset no guarantee, and its budget "
            f"cap is ε = {ledger.budget:g}, which no such release fits in. Nothing was "
            f"computed. Enter public bounds and levels, or ask whoever keeps the ledger. "
            f"{RAISE_WHERE}"
        )
    return (
        f"Refused: this release would spend ε = {epsilon:g}, but this dataset's budget cap "
        f"is ε = {ledger.budget:g} and ε = {eps_text(spent)} is already spent on it, over "
        f"every session (the total would be {eps_text(spent + epsilon)}). Nothing was "
        f"computed. Release with a smaller ε, or ask whoever keeps the ledger. {RAISE_WHERE}"
    )


def receipt_sentence(receipt: Receipt) -> str:
    """What every release shows: its index and the dataset's cumulative spend."""
    delta = f", δ = {receipt.delta_total:g}" if receipt.delta_total else ""
    return (
        f"Release no. {receipt.index} on this dataset; with it the dataset's cumulative "
        f"spend is ε = {eps_text(receipt.epsilon_total)}{delta}, over every session."
    )


def release_number(receipt: Receipt) -> str:
    """The short form, beside a sentence that already gives the total: which release this is."""
    return f"Release no. {receipt.index} on this dataset."
