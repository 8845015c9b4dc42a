"""End-to-end: a lecturer follows the six lessons in order in one tab, then walks back with Back.

Each lesson: show its answer on the Lessons page, open its experiment, and check that the page's
controls are the lesson's (not the previous lesson's) and that the page shows the numbers the
answer quotes. Then Back, one press per view, returns through every page in the same states.
"""

from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import expect

from dpcore_app.ui.lessons.catalog import LESSONS

pytestmark = pytest.mark.e2e
SLOW_MS = 240_000  # a lesson's first answer runs its Monte-Carlo study on a shared machine


def _group(app, testid, label):
    return app.page.locator(f"[data-testid='{testid}']").filter(
        has=app.page.locator("[data-testid='stWidgetLabel']").get_by_text(label, exact=True)
    )


def _chosen(app, label):
    """The selected option of a segmented control."""
    return _group(app, "stButtonGroup", label).locator("button[aria-checked='true']").inner_text()


def _metric(app, label):
    card = app.page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return card.locator("[data-testid='stMetricValue']").inner_text().strip()


def _slider(app, label):
    return app.slider_value(label).first.inner_text().strip()


def _answer(app, number, pattern):
    """Show lesson ``number``'s answer and return the groups of ``pattern`` in it."""
    app.page.get_by_text(f"Show the answer to lesson {number}", exact=True).click()
    app.wait_rerun(timeout=SLOW_MS)
    text = app.page.locator("[data-testid='stMain']").inner_text()
    found = re.search(pattern, text)
    assert found, (number, pattern, text[-2000:])
    return found.groups()


def _eps_and_n(app):
    """The values the ε and n sliders of a DP-OWL-like page show."""
    return _slider(app, "Privacy budget ε"), _slider(app, "Patients in the trial (n)")


def check_noise(app, said):
    assert _eps_and_n(app) == ("0.5", "1000")
    assert _chosen(app, "γ") == "paper-tuned"
    assert _metric(app, "Accuracy") == f"{said[0]}%"


def check_small_n(app, said):
    assert _eps_and_n(app) == ("1", "200")
    assert _chosen(app, "γ") == "paper-tuned"
    assert _metric(app, "Accuracy") == f"{said[0]}%"


def check_eps_n_tau(app, said):
    assert [
        _slider(app, x) for x in ("Privacy budget ε", "Patients (records) n", "Tail level τ")
    ] == ["1", "2000", "0.05"]
    assert _chosen(app, "Error against") == "εnτ"
    verdict = app.page.get_by_text(
        re.compile("the private estimate of their mean loss is off by about")
    ).inner_text()
    shown, quoted = float(re.search(r"off by about ([\d.e-]+)", verdict).group(1)), float(said[0])
    assert abs(shown - quoted) <= 0.5 * 10 ** (math.floor(math.log10(quoted)) - 1) + 5e-5, (
        verdict,
        quoted,
    )


def check_theory(app, said):
    assert _eps_and_n(app) == ("1", "200")
    assert _chosen(app, "γ") == "fixed" and _slider(app, "Regularization γ") == "1"
    assert _metric(app, "Bound (re-derived)") == said[0]


def check_shift(app, said):
    # Lesson 4 left n = 200 and a fixed γ = 1 on the Theory page: none of it may reach DP-OWL.
    assert _eps_and_n(app) == ("1", "1000")
    assert _chosen(app, "γ") == "paper-tuned"
    assert app.page.get_by_role("radio", name="authors' shift").is_checked()
    assert _metric(app, "Accuracy") == f"{said[0]}%"


def check_ledger(app, said):
    assert app.page.get_by_role("radio", name="demo: paper's trial (1:1)").is_checked()
    if app.slider_value("Privacy budget ε").count():  # shown once the file's bounds are filled in
        assert _slider(app, "Privacy budget ε") == "1"


STEPS = {  # lesson key: (what its answer quotes, how its page must look)
    "noise": (r"ε = 0\.5: accuracy ([\d.]+)%", check_noise),
    "small_n": (r"n = 200: private ([\d.]+)%", check_small_n),
    "eps_n_tau": (r"τ = 0\.05, ε = 1: [^\n]*total ([\d.]+)\)", check_eps_n_tau),
    "theory": (r"At γ = 1, h = 2, W = 1, n = 200: the re-derived bound is ([^,]+),", check_theory),
    "shift": (r"authors' shift, W = 30: ([\d.]+)%", check_shift),
    "ledger": (r"(No dataset in use yet|private release)", check_ledger),
}


def _at(app, lesson):
    assert app.page.url.split("?")[0].endswith(f"/{lesson.url_path}"), app.page.url
    app.expect_no_exception()
    expect(app.link_notices()).to_have_count(0)


@pytest.mark.slow
def test_the_six_lessons_in_order_in_one_tab_and_back(app):
    """One tab, as a lecturer projects it: six answers (each a Monte-Carlo study the first
    time), six pages, then twelve Back presses. Over 10 s: it is the class's whole path, which
    the per-lesson tests (a fresh tab each) cannot see."""
    assert [lesson.key for lesson in LESSONS] == list(STEPS)
    app.goto("/lessons")
    said = {}
    for number, lesson in enumerate(LESSONS, start=1):
        pattern, check = STEPS[lesson.key]
        said[lesson.key] = _answer(app, number, pattern)
        app.page.get_by_role("link", name="Open the experiment").nth(number - 1).click()
        app.wait_rerun(timeout=SLOW_MS)
        _at(app, lesson)
        check(app, said[lesson.key])
        if number < len(LESSONS):
            app.page.get_by_role("link", name="Lessons").first.click()  # the sidebar, as in class
            app.wait_rerun()
    for lesson in reversed(LESSONS):  # one Back press per view
        if lesson is not LESSONS[-1]:
            app.page.go_back()
            app.wait_rerun()
            assert app.page.url.split("?")[0].endswith("/lessons"), app.page.url
            app.page.go_back()
            app.wait_rerun(timeout=SLOW_MS)
        _at(app, lesson)
        STEPS[lesson.key][1](app, said[lesson.key])
    app.page.go_back()
    app.wait_rerun()
    assert app.page.url.split("?")[0].endswith("/lessons"), app.page.url


def test_a_snapped_link_and_a_moved_slider_replace_the_history_entry(app):
    """A correction (demo_eps=0.3 snaps to 0.2) and a slider move each rewrite the address in
    place; one Back press leaves the app (the tab's blank start page)."""
    label = "Privacy budget ε for this release"
    app.goto("/?demo_eps=0.3")
    expect(app.link_notices()).to_have_count(1)
    assert "demo_eps=0.2" in app.page.url, app.page.url
    entries = app.page.evaluate("history.length")
    app.slider_thumb(label).focus()
    app.page.keyboard.press("ArrowRight")
    app.wait_rerun()
    expect(app.slider_value(label)).to_have_text("0.5")
    assert "demo_eps=0.5" in app.page.url and app.page.evaluate("history.length") == entries
    app.page.go_back()
    expect(app.page).to_have_url("about:blank")
