"""The dashboard's entry script: ``dpcore app`` runs this file, and ``streamlit run app.py`` from a
checkout runs the root ``app.py``, which calls :func:`main`."""

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # before numpy loads: sessions run at once, one BLAS thread each

import streamlit as st  # noqa: E402

from dpcore_app import APP_DIR, page  # noqa: E402
from dpcore_app.ui.common import ledger  # noqa: E402
from dpcore_app.ui.common.controls import history_guard  # noqa: E402
from dpcore_app.ui.common.safety import friendly_errors  # noqa: E402

ICON = str(APP_DIR / "assets" / "icon.png")  # local: nothing fetched online


def main() -> None:
    """One run of the app: the page configuration, the navigation, the sidebar, then the page."""
    st.set_page_config(page_title="What privacy costs in learning", page_icon=ICON,
                       layout="wide")
    pages = [
        st.Page(page("overview"), title="Overview", icon=":material/home:", default=True),
        st.Page(page("dp_owl"), title="DP-OWL treatment rule", icon=":material/medication:",
                url_path="dp-owl"),
        st.Page(page("cvar"), title="Private CVaR (tail risk)", icon=":material/warning:",
                url_path="cvar"),
        st.Page(page("bounds"), title="Theory bounds", icon=":material/functions:",
                url_path="bounds"),
        st.Page(page("your_data"), title="Your data", icon=":material/upload_file:",
                url_path="your-data"),
        st.Page(page("lessons"), title="Lessons", icon=":material/school:", url_path="lessons"),
        st.Page(page("limitations"), title="Limitations", icon=":material/report:",
                url_path="limitations"),
        st.Page(page("glossary"), title="Glossary", icon=":material/menu_book:",
                url_path="glossary"),
    ]
    current = st.navigation(pages)

    with st.sidebar:
        st.markdown("**What privacy costs in learning**")
        st.caption("Differential privacy adds noise to protect each person in the data. "
                   "These pages measure what that noise costs, live.")
        st.caption(f"You are on: **{current.title}**")
        st.divider()
        ledger.sidebar()
    history_guard()  # one history entry per page visit

    with friendly_errors("This page", sensitive=current.url_path == "your-data"):
        current.run()


if __name__ == "__main__":
    main()
