"""The sidebar's view of the durable privacy ledger: the dataset in use on the Your-data page,
its cumulative ε (and δ) over every session, its releases, and its cap, which the sidebar may
set or lower but never raise or remove; on a department server also who is signed in and the
datasets they may see. Releases themselves go through :mod:`dpcore_app.ui.common.ledger`.

The demo files shipped with the app are practice data that every session shares: no cap can be
set on them from the app (a cap cannot be undone here, so one student could otherwise block the
whole class). A cap on an uploaded file asks for confirmation first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from dpcore.privacy.accounting import PrivacyLedger
from dpcore_app.ui.common.ledger import (
    IN_USE,
    RAISE_WHERE,
    dataset_ledger,
    eps_text,
    is_demo,
    ledger_keepers,
    ledger_path,
    ledger_user,
)
from dpcore_app.ui.common.safety import plain

if TYPE_CHECKING:
    from dpcore.privacy.accounting import DatasetSummary

CAP = "ledger_cap"
_CAP_MESSAGE = "ledger_cap_message"


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


def _summary(ledger: PrivacyLedger) -> str:
    eps, delta = ledger.total()
    n = len(ledger.entries)
    cap = "" if ledger.budget is None else f" (cap ε = {ledger.budget:g})"
    if not n:
        return f"ε = 0: no private release on this dataset yet{cap}"
    total = f"ε = {eps_text(eps)}" + (f", δ = {delta:g}" if delta else "")
    return f"{total} over {n} release{'s' if n != 1 else ''}{cap}"


def _set_cap() -> None:
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


def _cap_panel(ledger: PrivacyLedger, eps: float, demo: bool = False) -> None:
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


def _signed_in(user: str) -> None:
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


def sidebar() -> None:
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
    if key is None or ledger is None:
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
