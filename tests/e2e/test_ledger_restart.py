"""End-to-end: the privacy ledger survives a server restart.

Release once on a demo file, stop the `streamlit run` server, start a fresh one on the same
DPCORE_LEDGER file, reload the page: the sidebar shows the same cumulative ε for that file.
Over 10 s: it starts two servers of its own (one restart), which is what it tests.
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import SERVER_START_TIMEOUT_S, AppDriver
from tests.e2e.servers import REPO_ROOT, running_streamlit

pytestmark = pytest.mark.e2e


def server(ledger_file, log_path):
    """A `streamlit run app.py` of its own on `ledger_file`; a context that yields its base URL."""
    env = dict(
        os.environ,
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        DPCORE_LEDGER=str(ledger_file),
        PYTHONPATH=str(REPO_ROOT),
    )
    return running_streamlit(log_path, env, SERVER_START_TIMEOUT_S)


def open_demo(app, reload=False):
    """Open (or reload) Your data on the paper's demo and fill in its public dictionary."""
    if reload:
        app.page.reload()
        app.wait_idle()
    else:
        app.goto("/your-data")
    app.page.get_by_text("demo: paper's trial (1:1)").click()
    app.wait_rerun()
    app.page.get_by_role("button", name="Fill in from the data dictionary").click()
    app.wait_rerun()
    app.wait_idle()


def release(app, total):
    """Release at ε = 1; the sidebar and the verdict then state the dataset's running total."""
    app.page.get_by_role("button", name="Release private rule at ε = 1").click()
    app.wait_rerun()
    plural = "s" if total > 1 else ""
    sidebar = app.page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_text(f"ε = {total} over {total} release{plural}")).to_be_visible()
    expect(app.page.get_by_text(f"Release no. {total} on this dataset")).to_be_visible()


@pytest.mark.slow
def test_the_ledger_total_survives_a_server_restart(page, tmp_path, screenshot_dir):
    ledger_file, log = tmp_path / "ledger.sqlite", tmp_path / "server.log"
    sidebar = page.locator("[data-testid='stSidebar']")
    with server(ledger_file, log) as url:
        app = AppDriver(page, url, screenshot_dir)
        open_demo(app)
        expect(sidebar.get_by_text("ε = 0: no private release on this dataset yet")).to_be_visible()
        release(app, 1)
        open_demo(app, reload=True)  # a reload is a new session
        expect(sidebar.get_by_text("ε = 1 over 1 release")).to_be_visible()
    with server(ledger_file, log) as url:  # a fresh process: nothing in memory survives
        app = AppDriver(page, url, screenshot_dir)
        open_demo(app)
        expect(sidebar.get_by_text("ε = 1 over 1 release")).to_be_visible()
        release(app, 2)
        app.expect_no_exception()
