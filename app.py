"""Entry point: `streamlit run app.py`."""

import importlib
import os
import threading
import time
from pathlib import Path

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # before numpy loads: sessions run at once, one BLAS thread each

import streamlit as st  # noqa: E402

from ui.common import ledger  # noqa: E402
from ui.common.controls import history_guard  # noqa: E402
from ui.common.safety import friendly_errors  # noqa: E402

ICON = str(Path(__file__).parent / "assets" / "icon.png")  # local: nothing fetched online
WARM_FIGURES = "DPCORE_WARM_FIGURES"  # "off": figures are built only when a page asks


def _warm_figures():
    time.sleep(1.0)  # the first page's last messages go out before these imports hold the GIL
    importlib.import_module("ui.warm").warm_figures(quiet=0.3)


@st.cache_resource(show_spinner=False)
def warm_up():
    """Once per server process, after its first page has answered: build the figures a class
    needs first in a background thread (``ui.warm.warm_figures``: stored views only, never a
    simulation; each figure waits for a quiet moment of the sessions). ``ui.warm`` is imported
    in that thread, so no page waits for its imports."""
    if os.environ.get(WARM_FIGURES, "on").lower() in ("off", "0", "no"):
        return None
    thread = threading.Thread(target=_warm_figures, daemon=True, name="dpcore-warm-figures")
    thread.start()
    return thread

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
warm_up()
