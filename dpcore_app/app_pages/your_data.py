"""Your data: upload a trial CSV, leave with a private treatment rule and an honest account."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from dpcore_app.ui.common.link import check_link
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.upload import explain
from dpcore_app.ui.upload.controls import CONTROLS
from dpcore_app.ui.upload.flow import Flow
from dpcore_app.ui.upload.steps.data import data
from dpcore_app.ui.upload.steps.files import files
from dpcore_app.ui.upload.steps.privacy import privacy
from dpcore_app.ui.upload.steps.release import release
from dpcore_app.ui.upload.steps.table import table

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator


@st.fragment
@guarded("The Your data page", sensitive=True)
def study(verdict: DeltaGenerator) -> None:
    """The five steps, each handing on what the next needs (ui/upload/steps/)."""
    flow = Flow()
    try:
        flow.at(1)
        source = data()
        if source is None:
            verdict.info(explain.upload_verdict("none"), icon=":material/upload_file:")
            return
        ready = table(source, verdict, flow)
        if ready is None:
            return
        chosen = privacy(ready, verdict, flow)
        last = chosen and release(ready, chosen, verdict, flow)
        if last:
            files(last, ready.source, flow)
    finally:
        flow.close()


st.title("Your data: a private treatment rule from your trial")
st.markdown(
    "Upload a randomized trial (covariates, treatment arm, outcome) and release a rule "
    "*treat when …* with ε-differential privacy: what it recommends, what it spent, and "
    "files to share."
)
st.caption(
    "Unit of privacy: one patient (one row); neighbouring trials differ by replacing one "
    "patient. Every release is recorded in the privacy ledger in the sidebar."
)
check_link(CONTROLS)
study(st.empty())
