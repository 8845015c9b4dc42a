"""The session's privacy ledger: every private release on a user's data, and the composed total.

One :class:`dpcore.accounting.PrivacyLedger` per browser session lives in ``st.session_state``
(never in a cache, so no other session can see it). The sidebar shows it on every page: the
total ε always, each release (mechanism, ε, δ, time) in a table, and an optional budget cap
that makes the ledger refuse a release past it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger

_KEY = "privacy_ledger"
CAP_ON = "ledger_cap_on"
CAP = "ledger_cap"


def session_ledger():
    """This session's ledger, created empty on first use."""
    if _KEY not in st.session_state:
        st.session_state[_KEY] = PrivacyLedger()
    return st.session_state[_KEY]


def record_release(mechanism, epsilon, delta=0.0):
    """Record a release before it is shown; returns None, or the refusal message.

    The release must not be computed or shown when a message is returned.
    """
    try:
        session_ledger().record(mechanism, epsilon, delta)
    except BudgetExceededError:
        return refusal(epsilon)
    return None


def refusal(epsilon):
    """Why a release of ``epsilon`` is refused under the session's cap, in plain words."""
    ledger = session_ledger()
    spent = ledger.total()[0]
    return (f"Refused: this release would spend ε = {epsilon:g}, but the session's budget cap is "
            f"ε = {ledger.budget:g} and ε = {spent:g} is already spent (the total would be "
            f"{spent + epsilon:g}). Nothing was computed. Raise the cap in the sidebar if "
            "your data's owner allows it, or release with a smaller ε.")


def entries_table():
    """The releases as a table (mechanism, ε, δ, time in UTC), oldest first."""
    rows = [{"mechanism": e.mechanism, "ε": e.epsilon, "δ": e.delta,
             "time (UTC)": e.timestamp.strftime("%H:%M:%S")} for e in session_ledger().entries]
    return pd.DataFrame(rows, columns=["mechanism", "ε", "δ", "time (UTC)"])


def _apply_cap():
    ledger = session_ledger()
    on = st.session_state.get(CAP_ON, False)
    ledger.budget = float(st.session_state.get(CAP, 1.0)) if on else None


def sidebar():
    """The ledger in the sidebar: total always visible, releases and the optional cap."""
    ledger = session_ledger()
    eps, delta = ledger.total()
    n = len(ledger.entries)
    st.markdown("**Privacy spent this session**")
    total = f"ε = {eps:g}" + (f", δ = {delta:g}" if delta else "")
    if n:
        st.markdown(f"{total} over {n} release{'s' if n != 1 else ''}"
                    + (f" (cap ε = {ledger.budget:g})" if ledger.budget is not None else ""))
        with st.expander("Releases"):
            st.dataframe(entries_table(), hide_index=True, width="stretch")
            st.caption("Total by basic composition: the ε of every release add up. Releases on "
                       "different files share no patients, so for each file the total is an "
                       "upper bound.")
    else:
        st.markdown(f"{total}: no private release on your data yet"
                    + (f" (cap ε = {ledger.budget:g})" if ledger.budget is not None else ""))
    st.toggle("Cap this session's ε", key=CAP_ON, on_change=_apply_cap,
              help="With a cap, a release that would take the total past it is refused.")
    if st.session_state.get(CAP_ON):
        st.number_input("Budget cap ε", min_value=0.01, max_value=1000.0, value=1.0, step=0.5,
                        key=CAP, on_change=_apply_cap)
        _apply_cap()
        if eps > ledger.budget:
            st.caption(f"Already ε = {eps:g} spent, past the cap: every further release is refused.")
