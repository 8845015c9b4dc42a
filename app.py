"""Entry point: `streamlit run app.py`."""

from pathlib import Path

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # before numpy loads: sessions run at once, one BLAS thread each

import streamlit as st  # noqa: E402

from ui.common import ledger  # noqa: E402
from ui.common.controls import history_guard  # noqa: E402
from ui.common.safety import friendly_errors  # noqa: E402

ICON = str(Path(__file__).parent / "assets" / "icon.png")  # local: nothing fetched online

st.set_page_config(page_title="What privacy costs in learning", page_icon=ICON,
                   layout="wide")

pages = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("app_pages/dp_owl.py", title="DP-OWL treatment rule", icon=":material/medication:",
            url_path="dp-owl"),
    st.Page("app_pages/cvar.py", title="Private CVaR (tail risk)", icon=":material/warning:",
            url_path="cvar"),
    st.Page("app_pages/bounds.py", title="Theory bounds", icon=":material/functions:",
            url_path="bounds"),
    st.Page("app_pages/your_data.py", title="Your data", icon=":material/upload_file:",
            url_path="your-data"),
    st.Page("app_pages/lessons.py", title="Lessons", icon=":material/school:", url_path="lessons"),
    st.Page("app_pages/limitations.py", title="Limitations", icon=":material/report:",
            url_path="limitations"),
    st.Page("app_pages/glossary.py", title="Glossary", icon=":material/menu_book:", url_path="glossary"),
]
page = st.navigation(pages)

with st.sidebar:
    st.markdown("**What privacy costs in learning**")
    st.caption("Differential privacy adds noise to protect each person in the data. "
               "These pages measure what that noise costs, live.")
    st.caption(f"You are on: **{page.title}**")
    st.divider()
    ledger.sidebar()
history_guard()  # one history entry per page visit

with friendly_errors("This page", sensitive=page.url_path == "your-data"):
    page.run()
