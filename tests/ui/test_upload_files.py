"""The three downloads: the JSON rule reproduces DPOWL's recommendations, the CSV is safe to
open in a spreadsheet, the report opens offline and holds nothing analyst-only."""

import io
import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.data.trial import read_table
from ui.charts.upload import rule_effects
from ui.compute import upload as compute
from ui.compute import upload_files as files

DEMO = pathlib.Path(__file__).resolve().parents[2] / "demo_data"
HOSPITAL = DEMO / "hospital_trial.csv"


@pytest.fixture(scope="module")
def released():
    d = json.loads((DEMO / "hospital_trial.json").read_text())
    trial = compute.read_trial(HOSPITAL, treatment="arm", outcome="days_in_hospital", treated="drug",
                               covariates=["site", "age", "biomarker", "severity", "frailty"],
                               categorical={"site": ["A", "B", "C"]})
    bounds = {c["name"]: c["bounds"] for c in d["columns"] if "bounds" in c}
    W = compute.weight_bound((0.0, 20.0), 2 / 3, 0.05)
    settings = dict(bounds=bounds, outcome_bounds=(0.0, 20.0), larger_is_better=False, gamma=20.0,
                    W=W, propensity=2 / 3)
    release, rec, _ = compute.fit_release(trial, "=evil.csv", eps=50.0, gamma_source="a test",
                                          private=True, rng=0, **settings)
    return trial, release, rec, compute.compare_nonprivate(trial, rec, **settings)


def test_json_rule_reproduces_the_recommendations(released):
    trial, release, rec, _ = released
    rule = json.loads(files.rule_json(release))
    table = read_table(HOSPITAL).iloc[trial.rows - 1]
    labels, _ = files.apply_rule(rule, table)
    np.testing.assert_array_equal(labels == "drug", rec > 0)
    assert 0 < np.mean(rec > 0) < 1  # both arms recommended: the check has teeth
    assert rule["one_hot"] == ["site=B", "site=C"] and rule["W"] == pytest.approx(60.0)


def test_the_python_recipe_in_the_file_runs_and_agrees(released, tmp_path, monkeypatch):
    trial, release, rec, _ = released
    (tmp_path / "rule.json").write_text(files.rule_json(release))
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(json.loads(files.rule_json(release))["apply_python"], scope)
    table = read_table(HOSPITAL).iloc[trial.rows - 1]
    np.testing.assert_array_equal(scope["recommend"](table.to_dict("records")) == "drug", rec > 0)


def test_nothing_analyst_only_in_the_downloads(released):
    trial, release, rec, analyst = released
    text = files.rule_json(release) + files.report_html(release, rule_effects(
        release.names, release.effects(), release.treated, release.control))
    for word in ("clipped_share", "weights clipped", "diagnos", "n_iter", "grad_norm", "kappa", "IPW", "non-private rule"):
        assert word not in text
    for number in (analyst.value_private, analyst.value_nonprivate):
        assert f"{number:.6g}" not in text
    assert analyst.agreement["concordance"] > 0.5  # the comparison itself is computed


def test_report_is_one_offline_page_with_escaped_user_text(released):
    _, release, _, _ = released
    html = files.report_html(release, rule_effects(release.names, release.effects(),
                                                   release.treated, release.control))
    assert not re.search(r"<script[^>]+src=", html) and not re.search(r"<link[^>]+href=", html)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    assert "=evil.csv" in html and "<h1>Private treatment rule (ε = 50)</h1>" in html
    assert "e^50" in html


def test_csv_neutralises_formulas_and_keeps_numbers(released):
    trial, release, rec, _ = released
    ids = {"patient_id": np.array(["=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "P5"]
                                  * (trial.n // 5) + ["P"] * (trial.n % 5), dtype=object)}
    out = pd.read_csv(io.StringIO(files.rows_csv(release, trial, rec, ids)), dtype={"patient_id": str})
    assert out["patient_id"].head(5).tolist() == ["'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", "P5"]
    assert out["data_row"].tolist() == trial.rows.tolist()
    assert (out["score"] < 0).any()  # negative numbers are numbers, not neutralised text
    assert set(out["recommendation"]) <= {"drug", "placebo"}
    np.testing.assert_array_equal(out["recommendation"] == "drug", rec > 0)


@pytest.mark.parametrize("cell,expected", [("=1+1", "'=1+1"), ("+1", "'+1"), ("-x", "'-x"),
                                           ("@x", "'@x"), ("\tx", "'\tx"), ("ok", "ok"), (-1.5, -1.5)])
def test_neutral(cell, expected):
    assert files.neutral(cell) == expected


def test_headers_are_neutralised_too(released):
    trial, release, rec, _ = released
    head = files.rows_csv(release, trial, rec, {"=cmd": np.zeros(trial.n)}).splitlines()[0]
    assert "'=cmd" in head.split(",")
