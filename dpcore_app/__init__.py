"""The dashboard as an installed package: ``app.py``, its pages, its parts and their files.

In the repository the dashboard lives at the root (``app.py``, ``app_pages/``, ``ui/``,
``assets/``, ``demo_data/``, ``.streamlit/config.toml``), where ``streamlit run app.py`` and the
tests use it; this folder holds only what makes those files one package in the wheel. The wheel
maps ``ui/`` and ``app_pages/`` to ``dpcore_app.ui`` and ``dpcore_app.app_pages`` and copies
the other files beside them (``setup.py``), so an installed dashboard is one top-level name,
whatever the install scheme. Streamlit runs ``dpcore_app/app.py`` with its own folder first on
``sys.path``, so the pages' ``import ui`` finds ``dpcore_app/ui``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["root"]


def root() -> Path:
    """The folder holding the dashboard's ``app.py``: the package when installed from a wheel,
    the repository's root in a source checkout (or an editable install of one)."""
    installed = Path(str(files(__name__)))
    if (installed / "app.py").is_file():
        return installed
    return Path(__file__).resolve().parent.parent
