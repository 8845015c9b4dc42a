"""The sidebar's view of the durable privacy ledger, and the one door releases go through.

The ledger is one SQLite file or PostgreSQL database (``$DPCORE_LEDGER``, else a per-user
data path; see :func:`dpcore.privacy.accounting.default_ledger_path`) shared by every session
and kept across restarts. Each dataset has its own total, keyed by a salted digest of the
file's rows (:meth:`dpcore.PrivacyLedger.for_file`); ``st.session_state`` holds that key and
the keyed ledger (the rows' salted digests), never the data. Keying a file on upload stores
nothing: the dataset enters the ledger with its first release or cap. The sidebar shows the
dataset in use on the Your-data page: its cumulative ε (and δ) over every session, its
releases, and its cap, which the sidebar may set or lower but never raise or remove.

Who: :func:`ledger_user` is the user the ledger answers for (None, the local single user, who
sees every dataset; on a department server the signed-in user, who sees only the datasets
they registered or were granted, unless among :func:`ledger_keepers`). The signed-in user is
read from the header an authenticating proxy sets (``$DPCORE_AUTH_HEADER``, which
``dpcore serve --auth`` sets for its replicas, with ``$DPCORE_PROXY_SECRET``); without that
environment no header is trusted.

The demo files shipped with the app are practice data that every session shares: their totals
add up like any file's, but no cap can be set on them from the app (a cap cannot be undone
here, so one student could otherwise block the whole class). A cap on an uploaded file asks
for confirmation first.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from dpcore.privacy import accounting
from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger
from dpcore_app.ui.common.safety import plain

if TYPE_CHECKING:
    from pathlib import Path

    from dpcore.privacy.accounting import DatasetSummary

IN_USE = "ledger_dataset"  # the key of the dataset in use (a salted digest), never the data
_MEMO = "ledger_key_memo"  # (file digest, name, ledger path, key): the file is hashed once
_KEYED = "ledger_keyed"  # the file's PrivacyLedger (row digests in memory until it registers)
CAP = "ledger_cap"
_CAP_MESSAGE = "ledger_cap_message"
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
_DEMO_KEYS: set = set()


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


def dataset_key(source, name=""):
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


def record(dataset_key, made, where=""):
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
    entry = made.entry
    return made, Receipt(entry.index, entry.epsilon, entry.delta, *made.totals, dataset_key)


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


def entries_table(ledger: PrivacyLedger) -> pd.DataFrame:
    """The releases as a table (index, ε, time in UTC, mechanism, δ, parts, and who released
    each on a server), oldest first: what the sidebar's width shows first is what was spent
    and when."""
    entries = ledger.entries
    columns = ["no.", "ε", "time (UTC)", "mechanism", "δ", "parts"]
    if any(e.who for e in entries):  # a department server: every entry says who released it
        columns.append("by")
    rows = [
        {
            "no.": e.index,
            "ε": e.epsilon,
            "time (UTC)": e.timestamp.strftime("%m-%d %H:%M"),
            "mechanism": e.mechanism,
            "δ": e.delta,
            "parts": ", ".join(f"{name} ε = {eps:g}" for name, eps in e.parts),
            "by": e.who,
        }
        for e in entries
    ]
    return pd.DataFrame(rows, columns=columns)


def _summary(ledger):
    eps, delta = ledger.total()
    n = len(ledger.entries)
    cap = "" if ledger.budget is None else f" (cap ε = {ledger.budget:g})"
    if not n:
        return f"ε = 0: no private release on this dataset yet{cap}"
    total = f"ε = {eps_text(eps)}" + (f", δ = {delta:g}" if delta else "")
    return f"{total} over {n} release{'s' if n != 1 else ''}{cap}"


def _set_cap():
    """The sidebar's cap button: set the first cap or lower it; never raise it."""
    key = st.session_state[IN_USE]
    if is_demo(key) or st.session_state.get(CAP) is None:  # no widget offers it: a forged event
        return
    ledger = dataset_ledger(key)
    try:
        ledger.set_budget(float(st.session_state[CAP]))
    except ValueError:
        st.session_state[_CAP_MESSAGE] = (
            f"The cap stays at ε = {ledger.budget:g}: here it can only be lowered. {RAISE_WHERE}"
        )
    else:
        st.session_state[_CAP_MESSAGE] = None


def _cap_panel(ledger, eps, demo=False):
    cap = ledger.budget
    if demo:
        st.caption(
            "Practice data shipped with the app: its total is shared by every session, "
            "but no cap can be set on it here, so no one can block the others. "
            + ("" if cap is None else f"Its cap ε = {cap:g} was set by whoever keeps the ledger. ")
            + RAISE_WHERE
        )
        return
    if cap is None:
        st.number_input(
            "Budget cap ε for this dataset",
            min_value=0.01,
            max_value=1000.0,
            value=None,
            step=0.5,
            key=CAP,
            placeholder="type a cap, e.g. 3",
        )
        sure = st.checkbox(
            "I understand that the cap cannot be raised or removed from the app",
            key="ledger_cap_sure",
        )
        st.button(
            "Set the cap",
            key="ledger_set_cap",
            on_click=_set_cap,
            disabled=not sure or st.session_state.get(CAP) is None,
        )
        st.caption(
            "A release that would take this dataset's total past the cap is refused, in "
            "every session. Once set, the cap can be lowered here but never raised or "
            f"switched off. {RAISE_WHERE}"
        )
        return
    st.number_input(
        "Lower the cap to ε", min_value=0.01, max_value=1000.0, value=cap, step=0.1, key=CAP
    )
    st.button("Lower the cap", key="ledger_set_cap", on_click=_set_cap)
    if st.session_state.get(_CAP_MESSAGE):
        st.caption(st.session_state[_CAP_MESSAGE])
    else:
        st.caption(f"The cap can be lowered here, never raised. {RAISE_WHERE}")
    if eps > cap:
        st.caption(f"Already ε = {eps:g} spent, past the cap: every further release is refused.")


def visible_datasets(user: str | None, keepers: Iterable[str] | None) -> tuple[DatasetSummary, ...]:
    """The datasets of the ledger ``user`` may see (every one for a keeper), oldest first."""
    return PrivacyLedger.list_datasets(ledger_path(), user=user, keepers=keepers)


def _signed_in(user):
    """On a department server: who is signed in, and the datasets they may see."""
    keepers = ledger_keepers()
    st.caption(
        f"Signed in as **{plain(user)}**"
        + (
            ", a keeper of the ledger: you see every dataset."
            if user in keepers
            else ": you see and release on the datasets you registered or were granted."
        )
    )
    found = visible_datasets(user, keepers)
    with st.expander(f"Datasets you may see ({len(found)})"):
        if not found:
            st.caption("None yet: a dataset is yours from its first release or cap on it.")
        for d in found:
            cap = "" if d.cap is None else f", cap ε = {d.cap:g}"
            st.markdown(
                f"**{plain(d.name or '(no name)')}** ({d.dataset[:10]}), registered by "
                f"{plain(d.owner or 'the local user')}: ε = {eps_text(d.epsilon)} over "
                f"{d.releases} release{'s' if d.releases != 1 else ''}{cap}"
            )


def sidebar():
    """The ledger in the sidebar: the dataset's cumulative total, its releases and its cap;
    on a department server also who is signed in and the datasets they may see."""
    user = ledger_user()
    if user is not None:
        _signed_in(user)
    st.markdown("**Privacy spent on this dataset**")
    key = st.session_state.get(IN_USE)
    try:
        ledger = None if key is None else dataset_ledger(key)
    except ValueError:  # a key of another ledger file (DPCORE_LEDGER changed): not this one's
        ledger = st.session_state.pop(IN_USE, None) and None
    if ledger is None:
        st.markdown("ε = 0: no private release on your data yet")
        st.caption(
            "Once the columns of a file are chosen on the Your data page, its total over "
            "every session shows here; the ledger keeps it across reloads and restarts."
        )
        return
    st.markdown(_summary(ledger))
    st.caption(
        f"Dataset {key[:10]} (a salted digest of the file's rows: the same trial re-saved, "
        "with renamed columns or re-cased labels, is the same dataset). Kept in the durable "
        "ledger: every session, reload and restart adds to the same total."
        + (
            ""
            if ledger.registered
            else " Nothing about this file is stored until its first release or cap."
        )
    )
    if ledger.entries:
        with st.expander("Releases"):
            st.dataframe(entries_table(ledger), hide_index=True, width="stretch")
            st.caption(
                "Total by composition: the ε of releases on this dataset add up; a "
                "release made of disjoint parts (each patient in one part) counts its "
                "largest part's ε. A release on a file that shares rows with this one "
                "is counted here too; the ledger cannot see patients whose rows differ "
                "in a cell."
            )
    _cap_panel(ledger, ledger.total()[0], demo=is_demo(key))
