"""Public fill-in values: a covariate's missing cell takes the dictionary's value and a
"<column> is missing" covariate says so, so the row keeps its other information; the value is
public input (never read from the data), the rule file applies it to new patients, and two
files that differ in one patient's missing cell publish the same fields."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from dpcore import load_rule, read_dictionary, read_trial
from dpcore.data.dictionary import DictionaryError
from dpcore.release import ReleasePlan, release
from tests.dpcore.data.fill_trial import DICTIONARY, trial_csv
from tests.releases import seeded_noise


def test_a_filled_cell_keeps_its_row_with_an_indicator_and_an_unfilled_one_does_not():
    trial = read_trial(trial_csv(), dictionary=DICTIONARY)
    assert trial.covariates == (
        "age",
        "age is missing",
        "site=B",
        "site=C",
        "site is missing",
        "bmi",
    )
    assert trial.fills == {"age": 50, "site": "B"}
    x = dict(zip(trial.covariates, trial.X[3]))  # row 4: no age
    assert x["age"] == 50 and x["age is missing"] == 1
    x = dict(zip(trial.covariates, trial.X[5]))  # row 6: no site, read as the fill B
    assert (x["site=B"], x["site=C"], x["site is missing"]) == (1, 0, 1)
    assert trial.covariates_complete[3] and trial.covariates_complete[5]
    assert not trial.covariates_complete[7]  # bmi has no fill: weight 0 as before
    lower, upper = trial.feature_bounds(read_dictionary(DICTIONARY).bounds)
    assert lower[1] == 0 and upper[1] == 1  # an indicator is 0/1 by definition


def test_the_rule_file_applies_the_fill_to_new_patients():
    with seeded_noise(3):
        made = release(trial_csv(), read_dictionary(DICTIONARY), ReleasePlan(epsilon=5.0))
    rule = load_rule(made.to_dict())
    assert made.to_dict()["fill"] == {"age": 50, "site": "B"}
    patients = pd.DataFrame(
        {"age": [None, 40], "site": ["", "C"], "bmi": [25.0, 30.0], "arm": ["x", "x"]}
    )
    out = rule.recommendations(patients)
    assert out["not_scored"].tolist() == ["", ""]  # a filled column's missing cell is scored
    as_filled = pd.DataFrame({"age": [50, 40], "site": ["B", "C"], "bmi": [25.0, 30.0]})
    x = rule.design(patients)
    assert x[0, 1] == 1 and x[0, 4] == 1 and x[1, 1] == 0  # the indicators
    np.testing.assert_array_equal(x[:, [0, 2, 3, 5]], rule.design(as_filled)[:, [0, 2, 3, 5]])
    scope: dict = {"recipe": made.to_dict()}
    code = made.to_dict()["apply_python"].replace("json.load(open(RULE_FILE))", "recipe")
    exec(code, scope)
    records = patients.astype(object).where(patients.notna(), None).to_dict("records")
    assert list(scope["recommend"](records)) == list(rule.recommend(patients))


@pytest.mark.parametrize("evaluate", [None, 1.0])
def test_neighbouring_files_differ_in_one_patients_filled_cell_and_publish_the_same_fields(
    evaluate,
):
    """Privacy rule 10 with fill-in values: row 12 with and without its age (and site)."""
    d = read_dictionary(DICTIONARY)
    plan = ReleasePlan(epsilon=1.0, epsilon_eval=evaluate)
    a = release(trial_csv(), d, plan).to_dict()
    b = release(trial_csv({"age": "", "site": ""}), d, plan).to_dict()
    assert a.keys() == b.keys()
    assert {k for k in a if a[k] != b[k]} <= {"coef", "intercept", "evaluation"}
    assert a["n"] == b["n"] and a["covariates"] == b["covariates"] and a["fill"] == b["fill"]


@pytest.mark.parametrize(
    "entry,says",
    [
        ({"name": "age", "bounds": [18, 90], "missing": {"fill": 120}}, "outside the bounds"),
        ({"name": "site", "type": "categorical", "levels": ["A", "B"], "fill": "Z"}, "levels"),
        ({"name": "age", "bounds": [18, 90], "missing": {"fill": "old"}}, "not a number"),
        ({"name": "y2", "role": "ignore", "fill": 1}, "for a covariate"),
        ({"name": "age", "bounds": [18, 90], "missing": 50}, "must be an object"),
    ],
)
def test_a_fill_the_dictionary_cannot_use_is_a_problem_with_its_fix(entry, says):
    d = json.loads(json.dumps(DICTIONARY))
    d["columns"] = [entry, *d["columns"][2:]]
    with pytest.raises(DictionaryError, match=says):
        read_dictionary(d)


@pytest.mark.parametrize(
    "levels,fill,level",
    [([0, 1, 2], 1.0, 1), ([0, 1, 2], "01", 1), (["Bar", "Café", "Zoo"], "Cafe\u0301", "Café")],
)
def test_a_fill_is_one_of_the_levels_as_the_reader_compares_labels(levels, fill, level):
    """The dictionary accepts a fill that the trial reader reads as one of the levels (1.0 and
    01 as 1, a decomposed é as é), and the reader fills the missing cell with that level."""
    d = json.loads(json.dumps(DICTIONARY))
    d["columns"][1] = {"name": "site", "type": "categorical", "levels": levels, "fill": fill}
    text = trial_csv().decode()
    for old, new in zip("ABC", levels):
        text = text.replace(f",{old},", f",{new},")
    trial = read_trial(text.encode(), dictionary=d)
    x = dict(zip(trial.covariates, trial.X[5]))  # row 6: no site, read as the fill
    assert x["site is missing"] == 1
    assert {lev: x[f"site={lev}"] for lev in levels[1:]} == {
        lev: float(lev == level) for lev in levels[1:]
    }


def test_the_fill_survives_a_round_trip_through_the_dictionary_file():
    d = read_dictionary(DICTIONARY)
    again = read_dictionary(json.loads(json.dumps(d.to_dict())))
    assert again.read_trial_kwargs()["fill"] == {"age": 50, "site": "B"}
    t = read_trial(io.BytesIO(trial_csv()), dictionary=again)
    assert "age is missing" in t.covariates
