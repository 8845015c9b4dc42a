import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def app():
    """A fresh app session started from the entrypoint, as a user would."""
    return AppTest.from_file(APP, default_timeout=60)


@pytest.fixture
def open_page(app):
    """open_page(page, **query_params): run app.py with the link's parameters, then go to page."""
    return lambda page, **params: _open(app, page, **params)


@pytest.fixture
def open_fresh():
    """open_fresh(page, **query_params): like open_page, in a new session each call."""
    return lambda page, **params: _open(AppTest.from_file(APP, default_timeout=60), page, **params)


def _open(at, page, **params):
    """Open a deep link to ``page`` (app.py runs first, as with a shared link). AppTest knows
    st.navigation's pages only after a first run; that run also sends the history guard, so a
    correction is written at once (a tab's very first run corrects it one run later:
    tests/app/test_history.py)."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page != "dpcore_app/app_pages/overview.py":
        at.switch_page(page)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def words():
    """words(elements): the text of notices as a user reads it (markdown escapes removed)."""
    return lambda elements: " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)
