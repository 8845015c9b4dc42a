"""Links in a real browser: the app's own links reproduce the view, Back and Forward restore
it, hostile values render as text and fetch nothing, and nothing leaves the machine."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

GAMMA_LABEL = "Regularization γ"
EPS_LABEL = "Privacy budget ε"
FAST = "reps=20&compare=200"


def remote_requests(page):
    """Record every request that would leave this machine."""
    seen = []
    page.on(
        "request",
        lambda r: (
            seen.append(r.url)
            if not re.match(r"^(https?|wss?)://(127\.0\.0\.1|localhost)(:\d+)?/", r.url)
            and not r.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    return seen


def test_a_link_the_app_writes_reproduces_the_view(app):
    """Clear the comparison, move free γ to its minimum, reload the address: same view."""
    app.goto(f"/dp-owl?{FAST}")
    app.page.get_by_role("radio", name="fixed", exact=True).click()
    app.wait_rerun()
    thumb = app.slider_thumb(GAMMA_LABEL)
    thumb.focus()
    app.page.keyboard.press("Home")  # γ = 1, the slider's minimum
    app.wait_rerun()
    expect(app.slider_value(GAMMA_LABEL)).to_have_text("1")
    clear = app.page.locator("[data-testid='stMultiSelect']").get_by_role(
        "button", name=re.compile("Clear all")
    )
    clear.click()
    app.wait_rerun()
    shared = app.page.url
    assert "gamma=1" in shared and "compare=" in shared and "gamma_mode=fixed" in shared
    app.goto(shared.removeprefix(app.base_url))
    expect(app.slider_value(GAMMA_LABEL)).to_have_text("1")
    expect(app.link_notices()).to_have_count(0)  # γ = 1 is a coin flip: its verdict warns
    caption = app.page.get_by_text(re.compile(r"γ in use: 1\b"))
    expect(caption).to_be_visible()
    assert app.page.url == shared
    app.expect_no_exception()
    app.screenshot("dp-owl-reproduced-link.png", full=False)


def test_back_and_forward_restore_the_view_and_keep_the_users_link(app):
    """Moving a slider replaces the history entry (Streamlit's bound widgets); moving between
    pages adds one. Back to the page shows the link's view, with no defaults written in."""
    app.goto(f"/dp-owl?eps=5&{FAST}")
    app.page.locator("[data-testid='stSidebarNav']").get_by_role(
        "link", name=re.compile("Overview")
    ).click()
    app.wait_rerun()
    expect(app.page.locator("h1").first).to_have_text(re.compile("privacy", re.I))
    app.page.go_back()
    app.wait_idle()
    expect(app.slider_value(EPS_LABEL)).to_have_text("5")
    assert "eps=5" in app.page.url and "n=" not in app.page.url and "seed=" not in app.page.url
    expect(app.warnings()).to_have_count(0)
    app.page.go_forward()
    app.wait_idle()
    expect(app.page.locator("h1").first).to_have_text(re.compile("privacy", re.I))
    app.page.go_back()
    app.wait_idle()
    expect(app.slider_value(EPS_LABEL)).to_have_text("5")
    app.expect_no_exception()


HOSTILE = {
    "eps": "`` [Log in again](https://evil.example/login) ``",
    "gamma": "![x](https://evil.example/beacon.png)",
    "W": "<img src=https://evil.example/w.png>",
    "esp": "0.5",
}


def test_hostile_values_render_as_text_and_fetch_nothing(app):
    remote = remote_requests(app.page)
    query = "&".join(f"{k}={quote(v)}" for k, v in HOSTILE.items())
    app.goto(f"/dp-owl?{query}&{FAST}")
    alerts = app.page.locator("[data-testid='stAlert']")
    expect(
        app.warnings().filter(has_text="eps=`` [Log in again](https://evil.examp…")
    ).to_have_count(1)
    expect(app.warnings().filter(has_text="unknown parameter “esp”")).to_have_count(1)
    assert alerts.locator("a, img, h1, h2, h3, script").count() == 0
    expect(app.slider_value(EPS_LABEL)).to_have_text("1")
    app.expect_no_exception()
    assert not remote, f"requests left the machine: {remote}"
    app.screenshot("dp-owl-hostile-link.png", full=False)


def test_overview_heading_injection_stays_one_line(app):
    app.goto("/?demo_eps=" + quote("x\n# Heading"))
    expect(app.warnings().filter(has_text="# Heading")).to_have_count(1)
    assert app.page.locator("[data-testid='stAlert'] h1").count() == 0
    app.expect_no_exception()


@pytest.mark.parametrize("path", ["/", "/dp-owl?" + FAST, "/limitations"])
def test_no_request_leaves_the_machine(app, path):
    remote = remote_requests(app.page)
    app.goto(path)
    app.page.wait_for_timeout(500)
    assert not remote, f"requests left the machine: {remote}"
