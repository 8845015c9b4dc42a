"""The dashboard: the Streamlit entry script (``app.py``), its pages (``app_pages/``), their
parts (``ui/``), and the files they read (``assets/``, ``demo_data/``, ``deploy/``, the
Streamlit config in ``.streamlit/``).

``streamlit run app.py`` from a checkout runs the root ``app.py``, two lines that call
:func:`dpcore_app.app.main`; ``dpcore app`` runs ``dpcore_app/app.py`` itself. The two entry
scripts live in different folders, and Streamlit resolves a relative page path against the entry
script's folder, so every page is named by its absolute path (:func:`page`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["APP_DIR", "page", "root"]

APP_DIR = Path(__file__).resolve().parent


def root() -> Path:
    """The folder holding the dashboard's entry script ``app.py`` and its files."""
    return APP_DIR


def page(name: str) -> str:
    """The absolute path of the page script ``app_pages/<name>.py``, for ``st.Page`` and
    ``st.page_link`` under either entry script."""
    path = APP_DIR / "app_pages" / f"{name}.py"
    if not path.is_file():
        raise ValueError(f"no page named {name!r} in {path.parent}")
    return str(path)
