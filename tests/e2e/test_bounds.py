"""End-to-end: the Theory bounds page in a real browser, wide and phone-sized."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_dp_owl import open_presets
from .test_pages import expect_charts_drawn, expect_path

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("width", [1440, 390])
def test_bounds_page_renders(app, width):
    app.page.set_viewport_size({"width": width, "height": 900})
    app.goto("/bounds")
    expect(app.page.locator("h1").first).to_have_text(re.compile("Theory bounds"))
    expect_path(app.page, "/bounds")
    app.expect_no_exception()
    expect(
        app.page.locator("[data-testid='stAlertContentInfo']")
        .filter(has_text="privacy-noise term")
        .first
    ).to_be_visible()
    expect_charts_drawn(app.page)
    app.screenshot(f"bounds-{width}.png")


def test_bounds_deep_link_shows_the_transcribed_formula_failing(app):
    app.goto("/bounds?eps=1&n=200&gamma_mode=fixed&gamma=1&h=2&W=1")
    errors = app.page.locator("[data-testid='stAlertContentError']")
    expect(errors.filter(has_text="transcribed formula fails by measurement")).to_have_count(1)
    expect(app.warnings()).to_have_count(0)
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot("bounds-printed-fails.png", full=False)


def test_bounds_preset_button_sets_the_link(app):
    app.goto("/bounds")
    open_presets(app.page)
    app.page.get_by_role("button", name="Large trial: n = 1000, ε = 5").click()
    app.wait_rerun()
    expect(app.page).to_have_url(re.compile(r"[?&]eps=5(&|$)"))
    expect(app.page).to_have_url(re.compile(r"[?&]n=1000(&|$)"))
    app.expect_no_exception()
