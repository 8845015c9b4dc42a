"""The dashboard's entry script: ``dpcore app`` runs this file, and ``streamlit run app.py`` from a
checkout runs the root ``app.py``, which calls :func:`main`."""

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # before numpy loads: sessions run at once, one BLAS thread each

import streamlit as st  # noqa: E402

from dpcore_app import APP_DIR, page  # noqa: E402
from dpcore_app.ui.common import access, ledger, ledger_sidebar  # noqa: E402
from dpcore_app.ui.common.link import history_guard  # noqa: E402
from dpcore_app.ui.common.safety import friendly_errors  # noqa: E402

ICON = str(APP_DIR / "assets" / "icon.png")  # local: nothing fetched online
#: The pages in the sidebar's order: (script in app_pages/, title, icon, URL path); the first
#: is the default page, at the app's root address.
PAGES = (
    ("overview", "Overview", ":material/home:", ""),
    ("dp_owl", "DP-OWL treatment rule", ":material/medication:", "dp-owl"),
    ("cvar", "Private CVaR (tail risk)", ":material/warning:", "cvar"),
    ("bounds", "Theory bounds", ":material/functions:", "bounds"),
    ("your_data", "Your data", ":material/upload_file:", "your-data"),
    ("lessons", "Lessons", ":material/school:", "lessons"),
    ("limitations", "Limitations", ":material/report:", "limitations"),
    ("glossary", "Glossary", ":material/menu_book:", "glossary"),
)


def main() -> None:
    """One run of the app: the page configuration, the navigation, the sidebar, then the page."""
    st.set_page_config(page_title="What privacy costs in learning", page_icon=ICON, layout="wide")
    pages = [
        st.Page(page(name), title=title, icon=icon, url_path=url_path, default=not url_path)
        for name, title, icon, url_path in PAGES
    ]
    current = st.navigation(pages)
    try:
        ledger.ledger_user()
    except ledger.NotSignedIn as exc:  # a replica's port reached past the proxy that signs in
        st.error(f"This server signs its users in, and {exc}: open it through its address.")
        st.stop()

    with st.sidebar:
        st.markdown("**What privacy costs in learning**")
        st.caption(
            "Differential privacy adds noise to protect each person in the data. "
            "These pages measure what that noise costs, live."
        )
        st.caption(f"You are on: **{current.title}**")
        st.divider()
        ledger_sidebar.sidebar()
    history_guard()  # one history entry per page visit
    access.install()  # chart text in the theme's colour, popovers reachable by keyboard

    with friendly_errors("This page", sensitive=current.url_path == "your-data"):
        current.run()


if __name__ == "__main__":
    main()
