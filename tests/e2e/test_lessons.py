"""End-to-end: walk every lesson from the Lessons page, and open the handouts offline."""

from __future__ import annotations

import re
from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from dpcore_app.ui.common.controls import ascii_form
from dpcore_app.ui.lessons.catalog import LESSONS

pytestmark = pytest.mark.e2e


@pytest.mark.slow
def test_every_lesson_opens_its_experiment(app):
    """Each lesson's link, from the Lessons page, opens its page with its settings. Over 10 s:
    six pages, each drawn in full by the browser."""
    for number, lesson in enumerate(LESSONS, start=1):
        app.goto("/lessons")
        app.page.get_by_role("link", name="Open the experiment").nth(number - 1).click()
        app.wait_rerun(timeout=180_000)
        assert f"/{lesson.url_path}" in app.page.url, app.page.url
        shown = parse_qs(urlparse(app.page.url).query, keep_blank_values=True)
        for key, values in shown.items():  # what the address keeps is what the lesson set
            assert lesson.params[key] in (values[0], ascii_form(values[0])), (
                key,
                values,
                lesson.params,
            )
        for key, value in lesson.params.items():  # a parameter dropped only at its default
            assert key in shown or value in ("1", "2000", "paper-tuned"), (key, app.page.url)
        app.expect_no_exception()
        expect(
            app.page.locator("[data-testid='stAlertContentWarning']").filter(
                has_text="Ignored the link"
            )
        ).to_have_count(0)


def _download(app, name, folder):
    with app.page.expect_download() as info:
        app.page.get_by_role("button", name=name).click()
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path


@contextmanager
def offline(browser, path):
    """The downloaded file in a browser context with no network."""
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto(f"file://{path}")
    try:
        yield page
    finally:
        context.close()


@pytest.mark.slow
def test_the_handouts_open_offline(app, browser, tmp_path):
    """The lessons' handout and two pages' handouts, each opened in a browser with no network.
    Over 10 s: three pages, three downloads, and three offline tabs that each run the inlined
    plotly.js (4.8 MB) to draw the charts."""
    app.goto("/lessons")
    with offline(
        browser, _download(app, "Printable handout of the lessons (HTML, works offline)", tmp_path)
    ) as page:
        expect(page.locator("h2")).to_have_count(len(LESSONS))
        expect(page.get_by_role("link").first).to_have_attribute("href", re.compile(r"/dp-owl\?"))
    app.goto("/dp-owl?reps=40&compare=200")
    with offline(browser, _download(app, "Handout (HTML, offline)", tmp_path)) as page:
        expect(page.locator(".verdict")).to_contain_text("At ε = 1 and 1000 patients")
        expect(page.locator(".main-svg").first).to_be_visible()  # plotly drew without a network
        expect(page.get_by_text("At what ε can we publish?")).to_be_visible()
    app.goto("/cvar")
    with offline(browser, _download(app, "Handout of this view (HTML, offline)", tmp_path)) as page:
        expect(page.locator(".verdict")).to_contain_text("With 2000 patients")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_lessons_fit_a_phone(browser, streamlit_server, screenshot_dir, scheme):
    from .test_dp_owl import phone

    context, app = phone(browser, streamlit_server, screenshot_dir, scheme)
    try:
        app.goto("/lessons")
        app.expect_no_exception()
        overflow = app.page.evaluate(
            "() => document.querySelector(\"[data-testid='stMain']\").scrollWidth - window.innerWidth"
        )
        assert overflow <= 0
        expect(app.page.get_by_role("link", name="Open the experiment")).to_have_count(len(LESSONS))
        app.screenshot(f"lessons-390-{scheme}.png")
    finally:
        context.close()
