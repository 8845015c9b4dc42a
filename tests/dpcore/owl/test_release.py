"""The rule file: written, loaded, applied to new patients in original units, refusing misfits."""

import io
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import DPOWL, load_rule, read_dictionary, read_trial
from dpcore.owl.release import rule_from_dpowl
from dpcore.owl.rule_file import RuleFileError, rule_to_dict, write_rule

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"


def fitted(name, epsilon=1.0, rng=0):
    d = read_dictionary(DEMO / f"{name}.json")
    trial = read_trial(DEMO / f"{name}.csv", **d.read_trial_kwargs(), incomplete="drop")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPOWL(
            epsilon=epsilon,
            gamma=50.0,
            feature_bounds=trial.feature_bounds(d.bounds),
            outcome_bounds=d.outcome_bounds,
            larger_is_better=d.larger_is_better,
            rng=rng,
        ).fit(trial.X, trial.A, trial.B, d.propensity)
    return d, trial, model


def test_a_written_rule_loads_and_recommends_the_models_arms_from_the_csv(tmp_path):
    _, trial, model = fitted("paper_trial")
    rule = rule_from_dpowl(model, trial, gamma_source="fixed")
    path = tmp_path / "rule.json"
    write_rule(rule, path)
    loaded = load_rule(path)
    assert loaded == rule
    labels = loaded.recommend(DEMO / "paper_trial.csv")
    expected = np.where(model.predict(trial.X) > 0, 1, 0)
    assert labels.tolist() == expected.tolist()
    np.testing.assert_allclose(
        loaded.decision_function(DEMO / "paper_trial.csv"),
        model.decision_function(trial.X),
        atol=1e-12,
    )
    data = json.loads(path.read_text())
    assert data["package_version"] == dpcore.__version__ and data["format"] == "dpcore-rule/1"
    assert data["epsilon"] == 1.0 and data["n"] == 1000 and data["gamma_source"] == "fixed"


def test_labels_not_signs_for_a_categorical_trial_in_original_units():
    _, trial, model = fitted("hospital_trial")
    rule = load_rule(write_rule(rule_from_dpowl(model, trial), None))
    table = pd.read_csv(DEMO / "hospital_trial.csv").iloc[trial.rows - 1]
    got = rule.recommend(table)
    assert set(got) <= {"drug", "placebo"}
    assert got.tolist() == np.where(model.predict(trial.X) > 0, "drug", "placebo").tolist()


def test_the_pages_rule_file_and_per_row_csv_round_trip():
    """The page's download (dpcore_app.ui.upload.files) loads, and reproduces the per-row CSV."""
    from dpcore_app.ui.upload import files as upload_files
    from tests.releases import page_release

    d, trial, _ = fitted("hospital_trial")
    settings = dict(
        bounds=d.bounds,
        outcome_bounds=d.outcome_bounds,
        larger_is_better=d.larger_is_better,
        eps=1.0,
        gamma=60.0,
        gamma_source="fixed",
        W=60.0,
        propensity=d.propensity,
    )
    release, rec = page_release((DEMO / "hospital_trial.csv").read_bytes(), trial, settings)
    trial = release.made.trial
    rule = load_rule(upload_files.rule_json(release))
    rows = pd.read_csv(io.StringIO(upload_files.rows_csv(release, trial, rec)))
    rows = rows[trial.covariates_complete]  # the rows the rule can score
    table = pd.read_csv(DEMO / "hospital_trial.csv").iloc[rows["data_row"] - 1]
    assert rule.recommend(table).tolist() == rows["recommendation"].tolist()
    np.testing.assert_allclose(rule.decision_function(table), rows["score"], rtol=1e-12, atol=1e-12)


def test_refuses_patients_whose_columns_or_levels_do_not_match():
    _, trial, model = fitted("hospital_trial")
    rule = rule_from_dpowl(model, trial)
    table = pd.read_csv(DEMO / "hospital_trial.csv").dropna().head(5).reset_index(drop=True)
    with pytest.raises(RuleFileError, match="no column 'frailty'"):
        rule.recommend(table.drop(columns="frailty"))
    bad = table.assign(site=["A", "B", "D", "A", "C"])
    with pytest.raises(RuleFileError, match="'D' in row 3, which is not one of the rule's levels"):
        rule.recommend(bad)
    with pytest.raises(RuleFileError, match="row 2 has no value for 'age'"):
        rule.recommend(table.assign(age=[50, None, 60, 61, 62]))
    with pytest.raises(ValueError, match="not numeric"):
        rule.recommend(table.assign(age=["50", "old", "60", "61", "62"]))
    assert len(rule.recommend(table.assign(extra=1))) == 5  # extra columns are fine


def test_recommendations_report_the_rows_they_cannot_score():
    """Row 91 of the hospital demo has no age: it gets no recommendation and a reason, and
    every other row gets what recommend gives it on its own."""
    _, trial, model = fitted("hospital_trial")
    rule = rule_from_dpowl(model, trial)
    table = pd.read_csv(DEMO / "hospital_trial.csv").head(100).astype({"frailty": object})
    table.loc[2, "site"], table.loc[3, "frailty"] = "D", "frail"
    out = rule.recommendations(table)
    why = dict(
        zip(out.index[out["not_scored"] != ""] + 1, out["not_scored"][out["not_scored"] != ""])
    )
    assert why[91] == "no value for 'age'"
    assert why[3] == "'site' is 'D', not one of the rule's levels 'A', 'B', 'C'"
    assert why[4] == "'frailty' is 'frail', not a number"
    scored = out["not_scored"] == ""
    assert out["recommendation"][~scored].isna().all()
    assert (
        out["recommendation"][scored].tolist() == rule.recommend(table[scored.to_numpy()]).tolist()
    )
    assert list(out.columns) == [*table.columns, "recommendation", "not_scored"]


def test_rule_to_dict_keeps_settings_and_covariate_order():
    data = rule_to_dict(
        covariates=["b", "a"],
        intercept=0.5,
        coef=[1, 2],
        lower=[0, 0],
        upper=[1, 1],
        treated=1,
        control=0,
        epsilon=2.0,
        n=10,
    )
    assert data["covariates"] == ["b", "a"] and data["epsilon"] == 2.0
    rule = load_rule(data)
    assert rule.columns == ["b", "a"]
    assert rule.recommend(pd.DataFrame({"a": [0, 0], "b": [0, 1]})).tolist() == [1, 1]
    assert rule.recommend(pd.DataFrame({"a": [-1.0], "b": [-1.0]})).tolist() == [1]  # clipped


@pytest.mark.parametrize(
    "data, match",
    [
        (b"not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"covariates": ["a"]}, "has no 'intercept'"),
        (
            {
                "covariates": ["a"],
                "intercept": 0,
                "coef": [1, 2],
                "lower": [0],
                "upper": [1],
                "treated": 1,
                "control": 0,
            },
            "'coef' must hold 1",
        ),
        (
            {
                "covariates": ["a"],
                "intercept": 0,
                "coef": ["x"],
                "lower": [0],
                "upper": [1],
                "treated": 1,
                "control": 0,
            },
            "list of numbers",
        ),
        (
            {
                "covariates": ["a"],
                "intercept": 0,
                "coef": [1],
                "lower": [2],
                "upper": [1],
                "treated": 1,
                "control": 0,
            },
            "at most its upper",
        ),
        (
            {
                "covariates": ["s=B"],
                "intercept": 0,
                "coef": [1],
                "lower": [0],
                "upper": [1],
                "treated": 1,
                "control": 0,
                "categories": {"s": ["A", "B", "C"]},
            },
            "disagree",
        ),
    ],
)
def test_malformed_rule_files_get_a_message(data, match):
    with pytest.raises(RuleFileError, match=match):
        load_rule(data)


def test_a_missing_rule_file():
    with pytest.raises(RuleFileError, match="cannot open"):
        load_rule("no_such_rule.json")


@pytest.mark.parametrize("rule", [None, 3, ["a", "b"], "rule.json"])
def test_write_rule_refuses_what_is_not_a_rule_with_a_type_error(rule, tmp_path):
    with pytest.raises(TypeError, match="write_rule takes a Rule or ArmsRule"):
        write_rule(rule, tmp_path / "rule.json")
    assert not (tmp_path / "rule.json").exists()
