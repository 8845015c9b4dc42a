"""End-to-end: every page in a real browser, deep links, bad links, keyboard, navigation.

Run: python -m pytest -q tests/e2e -x   (with SCREENSHOT_DIR=DIR, screenshots land in DIR)
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

EPS_LABEL = "Privacy budget ε"
N_LABEL = "Patients in the trial (n)"
DEMO_EPS_LABEL = "Privacy budget ε for this release"

PAGES = [
    # path, screenshot, a word the page's h1 must contain
    pytest.param("/", "overview.png", re.compile(r"privacy", re.I), id="overview"),
    pytest.param("/dp-owl", "dp-owl.png", re.compile(r"DP-OWL"), id="dp-owl"),
    pytest.param(
        "/limitations", "limitations.png", re.compile(r"guarantee", re.I), id="limitations"
    ),
]


def expect_path(page, path):
    """The browser is on `path` (any query string), i.e. not redirected to another page."""
    expect(page).to_have_url(re.compile(r"^https?://[^/]+" + re.escape(path) + r"(\?.*)?$"))


def expect_charts_drawn(page):
    """Every Plotly chart on the page has at least one trace (no empty chart frames), and every
    chart not folded away in a closed expander has drawn."""
    charts = page.locator("[data-testid='stPlotlyChart']")
    for i in range(charts.count()):
        chart = charts.nth(i)
        if chart.is_visible():
            expect(chart.locator(".main-svg").first).to_be_visible()
        traces = chart.locator(".js-plotly-plot").evaluate("el => (el.data || []).length")
        assert traces > 0, f"Plotly chart #{i} has no data"


@pytest.mark.parametrize(("path", "shot", "title"), PAGES)
def test_page_opens_by_url(app, path, shot, title):
    app.goto(path)
    heading = app.page.locator("h1").first
    expect(heading).to_be_visible()
    expect(heading).to_have_text(title)
    expect_path(app.page, path)
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot(shot)


def test_deep_link_sets_widgets(app):
    app.goto("/dp-owl?eps=5&n=500&metric=value")
    expect(app.slider_value(EPS_LABEL)).to_have_text("5")
    expect(app.slider_value(N_LABEL)).to_have_text("500")
    expect(app.page.get_by_role("radio", name="value", exact=True)).to_be_checked()
    expect(app.warnings()).to_have_count(0)
    app.expect_no_exception()
    # The link still describes the view after the page has run.
    assert "eps=5" in app.page.url and "n=500" in app.page.url
    expect_charts_drawn(app.page)
    app.screenshot("dp-owl-deep-link.png")


def test_invalid_params_on_dp_owl_warn_and_fall_back(app):
    app.goto("/dp-owl?eps=-3&n=abc")
    warnings = app.warnings()
    expect(warnings.filter(has_text="eps").filter(has_text="-3")).to_have_count(1)
    expect(warnings.filter(has_text=re.compile(r"\bn\b")).filter(has_text="abc")).to_have_count(1)
    expect(app.slider_value(EPS_LABEL)).to_have_text("1")
    expect(app.slider_value(N_LABEL)).to_have_text("1000")
    app.expect_no_exception()
    expect_charts_drawn(app.page)  # the page still works with the defaults
    app.screenshot("dp-owl-invalid-params.png", full=False)


def test_invalid_param_on_overview_warns_and_falls_back(app):
    app.goto("/?demo_eps=abc")
    expect(app.warnings().filter(has_text="demo_eps").filter(has_text="abc")).to_have_count(1)
    expect(app.slider_value(DEMO_EPS_LABEL)).to_have_text("1")
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot("overview-invalid-params.png", full=False)


@pytest.mark.parametrize(
    ("path", "label", "param", "shot"),
    [
        pytest.param("/dp-owl", EPS_LABEL, "eps", "dp-owl-keyboard.png", id="dp-owl"),
        pytest.param("/", DEMO_EPS_LABEL, "demo_eps", "overview-keyboard.png", id="overview"),
    ],
)
def test_keyboard_moves_eps_slider(app, path, label, param, shot):
    app.goto(path)
    expect(app.slider_value(label)).to_have_text("1")
    thumb = app.slider_thumb(label)
    thumb.focus()
    expect(thumb).to_be_focused()
    for _ in range(2):  # 1 -> 2 -> 5
        app.page.keyboard.press("ArrowRight")
    app.wait_rerun()
    expect(app.slider_value(label)).to_have_text("5")
    expect(app.page).to_have_url(re.compile(rf"[?&]{param}=5(&|$)"))
    # The rerun used the new value: the explanation under the slider now speaks of ε = 5.
    expect(
        app.page.locator("[data-testid='stAlertContentInfo']")
        .filter(has_text=re.compile(r"ε = 5\b"))
        .first
    ).to_be_visible()
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot(shot, full=False)


def test_sidebar_link_reaches_dp_owl(app):
    app.goto("/")
    link = app.page.locator("[data-testid='stSidebarNav']").get_by_role(
        "link", name=re.compile("DP-OWL")
    )
    expect(link).to_be_visible()
    link.click()
    expect_path(app.page, "/dp-owl")
    app.wait_rerun()
    expect(app.page.locator("h1").first).to_have_text(re.compile("DP-OWL"))
    expect(app.slider(EPS_LABEL)).to_be_visible()
    app.expect_no_exception()


def test_link_written_by_the_page_reopens_without_warnings(app):
    """The link the page writes (here with the agreement metric) reopens unchanged and without
    a notice. Up to 11 s on 2 busy cores: it opens the default view at its full 200 repetitions
    twice, and the first test to reach that view simulates it (about 3.5 s of server time)."""
    app.goto("/dp-owl")
    app.page.get_by_role("radio", name="agreement", exact=True).click()
    app.wait_rerun()
    expect(app.page.get_by_role("radio", name="agreement", exact=True)).to_be_checked()
    shared = app.page.url
    app.goto(shared.removeprefix(app.base_url))
    expect(app.page.get_by_role("radio", name="agreement", exact=True)).to_be_checked()
    app.expect_no_exception()
    # The page is idle, so check at once rather than wait out a timeout on a known failure.
    notices = app.warnings().all_inner_texts()
    assert not notices, f"a link the page wrote itself was rejected: {notices}"
    assert app.page.url == shared, "the page rewrote the shared link"
