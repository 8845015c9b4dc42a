"""End-to-end: the DP-OWL page at 1440 px and 390 px, its non-private state and its presets."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_pages import expect_charts_drawn

pytestmark = pytest.mark.e2e

EPS_LABEL = "Privacy budget ε"
FAST = "reps=40&compare=200"
TITLES_FIT = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
    .filter((c) => c.getClientRects().length)
    .map((c) => {
        const svg = c.querySelector(".main-svg"), t = c.querySelector(".gtitle");
        if (!svg || !t) return 0;
        return t.getBoundingClientRect().right - svg.getBoundingClientRect().right;
    })"""


def verdict(app):
    return app.page.locator("[data-testid='stAlertContentSuccess']")


@pytest.mark.parametrize("width,shot", [(1440, "dp-owl-1440.png"), (390, "dp-owl-390.png")])
def test_the_page_fits_both_widths(app, width, shot):
    app.page.set_viewport_size({"width": width, "height": 900})
    app.goto(f"/dp-owl?{FAST}")
    expect(verdict(app)).to_have_text(re.compile(r"At ε = 1 and 1000 patients, the private rule picks "
                                                 r"the better treatment for \d+ of 100 new patients"))
    expect(app.page.locator("[data-testid='stPlotlyChart'] .main-svg").first).to_be_visible()
    app.wait_idle()  # the charts draw after the text: measure them once they are there
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    overflow = app.page.evaluate(
        "() => document.querySelector(\"[data-testid='stMain']\").scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than the window"
    assert max(app.page.evaluate(TITLES_FIT)) <= 1, "a chart title runs past its chart"
    slider = app.slider(EPS_LABEL).bounding_box()
    assert slider["x"] >= 0 and slider["x"] + slider["width"] <= width  # both slider ends visible
    app.screenshot(shot)


def test_the_nonprivate_state(app):
    app.goto(f"/dp-owl?eps=non-private&{FAST}")
    expect(verdict(app)).to_have_text(re.compile(r"Without privacy, a rule learned from 1000 patients"))
    body = app.page.locator("[data-testid='stMain']").inner_text()
    for absent in ("ε = inf", "+0.0", "< 1e-300", "Noise radius"):
        assert absent not in body
    app.expect_no_exception()
    app.screenshot("dp-owl-nonprivate.png")


def test_presets_move_epsilon(app):
    app.goto(f"/dp-owl?{FAST}")
    app.page.get_by_role("button", name="Strong privacy (ε = 0.1)").click()
    app.wait_rerun()
    expect(app.slider_value(EPS_LABEL)).to_have_text("0.1")
    expect(verdict(app)).to_have_text(re.compile(r"At ε = 0\.1 and 1000 patients"))
    assert "eps=0.1" in app.page.url
    app.expect_no_exception()
    app.screenshot("dp-owl-strong-privacy.png", full=False)
