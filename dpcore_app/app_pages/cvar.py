"""Private CVaR: what privacy costs when the quantity of interest is the worst τ share."""

import streamlit as st

from dpcore_app.ui.common import address
from dpcore_app.ui.common.link import check_link
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.cvar import compute, explain
from dpcore_app.ui.cvar import handout as cvar_handout
from dpcore_app.ui.cvar.controls import CONTROLS
from dpcore_app.ui.cvar.panels import (
    class_panel,
    convex_panel,
    error_panel,
    formulas_panel,
    numbers_panel,
    rule_panel,
    settings_panel,
    verdict_panel,
)


@st.fragment
@guarded("The private CVaR study")
def study() -> None:
    """The page's study: the settings, the scalar sweep, then the verdict, every panel and the handout."""
    verdict_slot = st.container()  # filled once the numbers are in: the first thing under the title
    s = settings_panel()
    with st.expander(
        "What is simulated"
    ):  # one line, after the controls: the charts start on the first screen and the presets are the first stop
        st.markdown(explain.CVAR_INTRO)
    work = compute.workload(s["reps"])
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    with st.spinner("Simulating" + compute.waiting() + "…"):
        summary = compute.scalar_summary(s["kind"], s["bound"], work.reps, s["seed"])
    here = compute.cell(summary, s["n"], s["tau"], s["eps"])
    with verdict_slot:
        verdict_panel(s, here)
    error_panel(s, summary)
    numbers_panel(s, here)
    formulas_panel({**s, "reps": work.reps})
    class_panel(s)
    convex_panel(s)
    rule_panel(s)
    cvar_handout.download(CONTROLS)
    address.share("cvar")


st.title("Private CVaR: the privacy price of tail risk", anchor=False)  # presets: first stop
check_link(CONTROLS, page="cvar")
study()
