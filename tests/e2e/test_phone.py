"""End-to-end: every page on a phone (390 px, touch): no traceback, nothing wider than the
screen, every option of every segmented control on screen, Plotly's toolbar off the titles."""

from __future__ import annotations

import pytest

from .test_dp_owl import OVERLAPS, phone

pytestmark = pytest.mark.e2e

OPTIONS_CUT = """() => [...document.querySelectorAll("[data-testid='stButtonGroup'] button")]
    .filter((b) => b.getClientRects().length)
    .map((b) => b.getBoundingClientRect())
    .filter((r) => r.left < 0 || r.right > window.innerWidth).length"""

PAGES = [
    pytest.param("/", id="overview"),
    pytest.param("/cvar?reps=20", id="cvar"),
    pytest.param("/bounds", id="bounds"),
    pytest.param("/your-data?file=demo%3A+paper%27s+trial+%281%3A1%29", id="your-data"),
    pytest.param("/lessons", id="lessons"),
    pytest.param("/limitations", id="limitations"),
    pytest.param("/glossary", id="glossary"),
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_fits_a_phone(browser, streamlit_server, screenshot_dir, path):
    context, app = phone(browser, streamlit_server, screenshot_dir)
    try:
        app.goto(path, timeout=180_000)
        app.expect_no_exception()
        overflow = app.page.evaluate(
            "() => document.querySelector(\"[data-testid='stMain']\").scrollWidth - window.innerWidth"
        )
        assert overflow <= 0, f"{path} is {overflow}px wider than the phone"
        covered = [c["title"] for c in app.page.evaluate(OVERLAPS) if c["toolbar"]]
        assert not covered, f"Plotly's toolbar covers the titles {covered}"
        assert app.page.evaluate(OPTIONS_CUT) == 0, "an option of a segmented control is off-screen"
    finally:
        context.close()
