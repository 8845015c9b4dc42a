"""Entry point: `streamlit run app.py`."""

import streamlit as st

from ui import ledger
from ui.safety import friendly_errors

st.set_page_config(page_title="What privacy costs in learning", page_icon=":material/shield_lock:",
                   layout="wide")

pages = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("app_pages/dp_owl.py", title="DP-OWL treatment rule", icon=":material/medication:",
            url_path="dp-owl"),
    st.Page("app_pages/limitations.py", title="Limitations", icon=":material/report:",
            url_path="limitations"),
    st.Page("app_pages/your_data.py", title="Your data", icon=":material/upload_file:",
            url_path="your-data"),
]
page = st.navigation(pages)

with st.sidebar:
    st.markdown("**What privacy costs in learning**")
    st.caption("Differential privacy adds noise to protect each person in the data. "
               "These pages measure what that noise costs, live.")
    st.caption(f"You are on: **{page.title}**")
    st.divider()
    ledger.sidebar()

with friendly_errors("This page"):
    page.run()
