"""End-to-end: the private CVaR page in a real browser at 1440 px and 390 px.

Run: python -m pytest -q tests/e2e/test_cvar.py   (with SCREENSHOT_DIR=DIR, screenshots in DIR)
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_pages import expect_charts_drawn, expect_path

pytestmark = pytest.mark.e2e

EPS_LABEL = "Privacy budget ε"
TAU_LABEL = "Tail level τ"


def other_warnings(app):
    """The amber notices other than the verdict (a caution in its colour, with the
    :material/groups: icon) and the notices about the link: tests/app's ``warnings(at)``."""
    verdict_icon = app.page.locator("[data-testid='stAlertDynamicIcon']").filter(
        has_text=re.compile(r"^groups$")
    )
    return app.warnings().filter(has_not=verdict_icon).filter(has_not_text=re.compile("the link's"))


def verdict(app):
    """The verdict, in whichever colour its severity gives it."""
    return app.page.locator("[data-testid^='stAlertContent']").filter(has_text="form the tail")


@pytest.mark.parametrize("width,shot", [(1440, "cvar-1440.png"), (390, "cvar-390.png")])
def test_page_opens_and_draws_at_both_widths(app, width, shot):
    app.page.set_viewport_size({"width": width, "height": 900})
    app.goto("/cvar")
    expect(app.page.locator("h1").first).to_have_text(re.compile("Private CVaR"))
    expect_path(app.page, "/cvar")
    expect(verdict(app)).to_have_text(
        re.compile(r"With 2000 patients and τ = 5%, only 100 patients")
    )
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    overflow = app.page.evaluate(
        "() => document.querySelector(\"[data-testid='stMain']\").scrollWidth - window.innerWidth"
    )
    assert overflow <= 0, f"the page is {overflow}px wider than the window"
    app.screenshot(shot)


def test_deep_link_to_the_collapse_view(app):
    app.goto("/cvar?eps=0.1&tau=0.01&x=εnτ&loss=hard+two-point")
    expect(app.slider_value(EPS_LABEL)).to_have_text("0.1")
    expect(app.slider_value(TAU_LABEL)).to_have_text("0.01")
    expect(app.link_notices()).to_have_count(0)
    expect(other_warnings(app)).to_have_count(0)
    expect(app.page.locator(".gtitle").filter(has_text="one curve for every τ")).to_have_count(1)
    expect(verdict(app)).to_have_text(re.compile(r"only 20 patients form the tail; at ε = 0\.1"))
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot("cvar-collapse.png", full=False)


def test_bad_link_warns_and_falls_back(app):
    app.goto("/cvar?tau=7&loss=normal")
    expect(app.warnings().filter(has_text="tau=7")).to_have_count(1)
    expect(app.warnings().filter(has_text="loss=normal")).to_have_count(1)
    expect(app.slider_value(TAU_LABEL)).to_have_text("0.05")
    app.expect_no_exception()
    expect_charts_drawn(app.page)


def test_keyboard_moves_eps_and_the_verdict_follows(app):
    app.goto("/cvar")
    thumb = app.slider_thumb(EPS_LABEL)
    thumb.focus()
    app.page.keyboard.press("ArrowRight")  # 1 -> 2
    app.wait_rerun()
    expect(app.slider_value(EPS_LABEL)).to_have_text("2")
    expect(app.page).to_have_url(re.compile(r"[?&]eps=2(&|$)"))
    expect(verdict(app)).to_have_text(re.compile(r"at ε = 2 the private estimate"))
    app.expect_no_exception()


def test_convex_study_runs_on_request(app):
    app.page.set_viewport_size({"width": 390, "height": 900})
    app.goto("/cvar?d=2&d=10")
    app.page.get_by_role("button", name=re.compile("Run DP-GD")).click()
    app.wait_rerun(timeout=90_000)
    expect(app.page.locator(".gtitle").filter(has_text="DP-GD: excess CVaR")).to_have_count(1)
    app.expect_no_exception()
    expect_charts_drawn(app.page)
    app.screenshot("cvar-390-convex.png")
