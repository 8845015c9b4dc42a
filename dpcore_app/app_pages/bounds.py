"""Theory bounds: every term of both papers' bounds, live, held against what the mechanisms do."""

import streamlit as st

from dpcore_app.ui.bounds import compute, explain
from dpcore_app.ui.bounds.controls import CONTROLS
from dpcore_app.ui.bounds.panels import (
    coverage,
    cvar_panel,
    sample_size_panel,
    settings_panel,
    verdict_detail,
    verdict_panel,
    werm_panel,
)
from dpcore_app.ui.common import address
from dpcore_app.ui.common.link import check_link
from dpcore_app.ui.common.safety import guarded


@st.fragment
@guarded("The theory-bounds study")
def study() -> None:
    """The page's study: the settings, the measured releases, then the verdict and every panel."""
    verdict_slot = st.container()  # filled once the numbers are in: the first thing under the title
    s, G, seed = settings_panel()
    with st.expander(
        "What is compared"
    ):  # one line, after the controls: the charts start on the first screen and the presets are the first stop
        st.markdown(explain.BOUNDS_INTRO)
    notice = compute.draws_per_trial(s["n"])[1]
    if notice:
        st.info(notice, icon=":material/speed:")
    waiting = " (waiting for other users' simulations)" if compute.busy() else ""
    with st.spinner(f"Simulating releases{waiting}…"):
        m = compute.measure(s["n"], s["eps"], s["gamma"], s["h"], s["W"], s["C"], s["rho"], seed)
    terms = compute.terms(
        s["n"], s["eps"], s["gamma"], s["h"], s["W"], s["C"], s["rho"], m.norms
    )  # Theorem 10; the charts add Theorem 11's 2G
    cover = coverage(s, m)  # how often each form held: once, for the verdict and its full form
    with verdict_slot:  # one line; in full under the Theorem 10 charts
        verdict_panel(s, terms, m, cover)
    werm_panel(s, G, m, terms)
    verdict_detail(s, terms, m, cover)
    sample_size_panel(s, m.theta0_norm)
    cvar_panel(s, seed)
    address.share("bounds")


st.title(
    "Theory bounds: what the bounds say, next to what the mechanisms do", anchor=False
)  # presets: first stop
check_link(CONTROLS, page="bounds")
study()
