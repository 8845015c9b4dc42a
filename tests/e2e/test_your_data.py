"""End-to-end: upload a demo CSV, map it, release a rule, download and check the three files.

Run: python -m pytest -q tests/e2e/test_your_data.py   (with SCREENSHOT_DIR=DIR, screenshots in DIR)
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from dpcore.data.csv_io import read_table
from dpcore_app.ui.upload.files import apply_rule
from tests.releases import run_script

pytestmark = pytest.mark.e2e

DEMO = Path(__file__).resolve().parents[2] / "dpcore_app" / "demo_data" / "paper_trial.csv"

LINKS = []


def download(app, label):
    with app.page.expect_download() as info:
        app.page.get_by_role("button", name=label).click()
    LINKS.append(info.value.url)
    return Path(info.value.path()).read_bytes()


@pytest.mark.slow
def trial_csv_input(app):
    """The trial CSV's uploader (the dictionary's sits beside it)."""
    return (
        app.page.locator("[data-testid='stFileUploader']")
        .filter(has_text="Trial CSV")
        .locator("[data-testid='stFileUploaderDropzoneInput']")
    )


def test_upload_map_release_and_download(app, browser):
    """An analyst's whole path in the browser: upload, map, bounds, release, the downloads.
    Over 10 s: each step reruns the Your-data page in the real server and the browser."""
    app.page.set_viewport_size({"width": 1440, "height": 1000})
    app.goto("/your-data")
    expect(app.page.locator("h1").first).to_have_text(re.compile("Your data"))
    trial_csv_input(app).set_input_files(str(DEMO))
    app.wait_rerun()
    app.expect_no_exception()
    expect(app.page.get_by_text("1000 patients read")).to_be_visible()

    # Map: the treated arm is 1; covariates x1..x4 were guessed. The file is the demo's, so
    # its public dictionary fills the metadata table (bounds, units) in one click.
    app.page.get_by_role("radiogroup").filter(has_text="0").get_by_text("1", exact=True).click()
    app.wait_rerun()
    expect(app.page.locator("[data-testid='stDataFrame']").last).to_be_visible()
    app.page.get_by_role("button", name="Fill in from the data dictionary").click()
    app.wait_rerun()
    expect(app.page.get_by_text("A rule can be released at ε = 1")).to_be_visible()
    app.screenshot("your-data-before-release.png")

    app.page.get_by_role("button", name="Release private rule at ε = 1").click()
    app.wait_rerun()
    app.expect_no_exception()
    expect(app.page.get_by_role("heading", name="Private treatment rule (ε = 1)")).to_be_visible()
    expect(app.page.get_by_text("ε = 1 over 1 release")).to_be_visible()
    shown = app.page.locator("[data-testid='stMetric']").first.inner_text()
    share = float(re.search(r"([\d.]+)%", shown)[1])

    rule = json.loads(download(app, "Rule (JSON)"))
    rows = pd.read_csv(io.BytesIO(download(app, "Per-row recommendations (CSV)")))
    report = download(app, "Report (HTML, opens offline)").decode()

    # The JSON rule, applied to the file elsewhere, gives the screen's share and the CSV's rows.
    labels, score = apply_rule(rule, read_table(DEMO))
    treated = labels == rule["treated"]
    assert f"{100 * treated.mean():.1f}" == f"{share:.1f}"
    assert rows["data_row"].tolist() == list(range(1, 1001))
    np.testing.assert_array_equal(rows["recommendation"].to_numpy() == 1, treated)
    np.testing.assert_allclose(rows["score"], score, rtol=1e-8, atol=1e-12)
    assert rule["epsilon"] == 1.0 and rule["private"] and rule["lower"] == [0.0] * 4
    for analyst_only in ("clipped_share", "diagnostics", "value_private"):
        assert analyst_only not in json.dumps(rule) and analyst_only not in report

    # The page's caption is true: a download link answers a request from outside the session.
    assert (
        "share the downloaded files, not the links"
        in app.page.get_by_text("A download link is an unguessable address").first.inner_text()
    )
    outsider = browser.new_context()
    assert outsider.request.get(LINKS[-1]).status == 200

    # The report opens with the network cut off and draws its chart.
    offline = browser.new_context()
    offline.route(
        "**/*",
        lambda route: (
            route.abort()
            if not route.request.url.startswith(("data:", "about:"))
            else route.continue_()
        ),
    )
    page = offline.new_page()
    page.set_content(report)
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible()
    expect(page.locator("h1")).to_have_text("Private treatment rule (ε = 1)")
    offline.close()

    app.screenshot("your-data.png")
    app.page.set_viewport_size({"width": 390, "height": 900})
    app.wait_idle()
    app.screenshot("your-data-390.png")
    app.expect_no_exception()

    # A clicked download stays served until the server has finished two more page runs (the
    # window the page and the Limitations page state; here two visits of the page), then the
    # per-row file and the others are gone.
    assert (
        "two more page runs"
        in app.page.get_by_text("A download is built when you click").first.inner_text()
    )
    assert outsider.request.get(LINKS[-2]).status == 200
    for _ in range(2):
        app.goto("/your-data")
    assert [outsider.request.get(link).status for link in LINKS[-3:]] == [404, 404, 404]
    outsider.close()


@pytest.mark.slow
def test_csv_and_dictionary_preview_evaluated_release_and_files_that_work(app, tmp_path):
    """The analyst's path: a CSV and its dictionary, the preview, a release with its private
    evaluation, the four files; the script runs and load_rule reproduces the per-row file.
    Over 10 s: the whole analyst path in the browser, and the script's release in a subprocess."""

    from dpcore import load_rule, read_dictionary

    root = Path(__file__).resolve().parents[2]
    hospital = root / "dpcore_app" / "demo_data" / "hospital_trial.csv"
    trial = tmp_path / "trial.csv"
    trial.write_bytes(hospital.read_bytes().replace(b"\n", b"\r\n"))  # not the demo's bytes
    dictionary = tmp_path / "trial_dictionary.csv"
    dictionary.write_text(
        read_dictionary(root / "dpcore_app" / "demo_data" / "hospital_trial.json").to_csv()
    )
    app.page.set_viewport_size({"width": 1440, "height": 1000})
    app.goto("/your-data")
    trial_csv_input(app).set_input_files(str(trial))
    app.wait_rerun()
    # Without a dictionary the outcome and the covariates are the analyst's: the page asks.
    expect(
        app.page.get_by_test_id("stAlertContentInfo").get_by_text("Choose the treatment and")
    ).to_be_visible()
    app.page.locator("[data-testid='stFileUploader']").filter(
        has_text="Public data dictionary"
    ).locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(dictionary))
    app.wait_rerun()
    expect(app.page.get_by_text("trial_dictionary.csv")).to_be_visible()
    app.page.get_by_role("button", name="Fill in from the data dictionary").click()
    app.wait_rerun()
    app.expect_no_exception()
    app.page.get_by_text("Preview on a simulated twin of 960 patients").click()
    app.wait_rerun()
    expect(app.page.get_by_text("Simulated, no privacy spent").first).to_be_visible()
    app.page.get_by_role("button", name=re.compile("evaluated at ε_eval = 1")).click()
    app.wait_rerun()
    app.expect_no_exception()
    expect(app.page.get_by_text("Private evaluation on held-out patients")).to_be_visible()
    rule = download(app, "Rule (JSON)")
    rows = pd.read_csv(io.BytesIO(download(app, "Per-row recommendations (CSV)")))
    report = download(app, "Report (HTML, opens offline)").decode()
    script = download(app, "Python script (redoes the release: spends ε again)").decode()
    (tmp_path / "trial_dictionary.json").write_bytes(
        download(app, "Download this dictionary (JSON)")
    )
    assert "Private evaluation on held-out patients" in report
    assert json.loads(rule)["evaluation"]["patients"] == 240
    (tmp_path / "rule_released.json").write_bytes(rule)
    table = pd.read_csv(hospital).iloc[rows["data_row"] - 1]
    scored = rows["recommendation"].notna().to_numpy()
    got = load_rule(tmp_path / "rule_released.json").recommend(table[scored])
    assert got.tolist() == rows["recommendation"][scored].tolist()
    assert run_script(tmp_path, script, timeout=300).settings["n"] == 960
    app.screenshot("your-data-evaluated.png")
