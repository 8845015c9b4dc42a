"""One treated arm everywhere: the dictionary's (or the caller's) `treated`, never a sort order.

docs/architecture.md, privacy rule 11: the treated arm decides which arm is +1 for the weights, the
propensity P(treated) of an unequal design, W, the rule and the files.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from dpcore import DPOWL
from dpcore.data import read_dictionary, read_trial
from dpcore.owl.owl import default_weight_bound, owl_weights
from tests.dpcore.cli.commands import fit_command

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"
CORPUS = Path(__file__).resolve().parents[2] / "data" / "dictionaries"


def two_to_one(n=300, seed=4):
    """A 2:1 trial whose treated arm, 'drug', sorts before the control, 'placebo'."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    A = np.where(rng.random(n) < 2 / 3, 1.0, -1.0)
    B = np.clip(2 + X[:, 0] * A + rng.normal(0, 0.5, n), 0, 5)
    labels = np.where(A > 0, "drug", "placebo").astype(object)
    return X, A, B, labels


KW = dict(epsilon=1.0, gamma=5.0, outcome_bounds=(0, 5), feature_bounds=([-1, -1], [1, 1]))


def test_labels_other_than_plus_minus_one_need_treated():
    X, _, B, labels = two_to_one()
    with pytest.raises(ValueError, match=r"say which is the treated arm.*treated='placebo'"):
        DPOWL(**KW, larger_is_better=True).fit(X, labels, B, 2 / 3)
    with pytest.raises(ValueError, match="treated="):
        DPOWL(**KW, larger_is_better=True).fit(
            X, (labels == "drug").astype(int), B, 2 / 3
        )  # 0/1: say it too
    DPOWL(**KW, rng=0, larger_is_better=True).fit(
        X, np.where(labels == "drug", 1, -1), B, 2 / 3
    )  # ±1: +1 is treated


def test_a_2_to_1_design_with_labels_sorting_against_the_treated_arm_matches_plus_minus_one():
    X, A, B, labels = two_to_one()
    W = default_weight_bound((0, 5), 2 / 3)
    by_sign = DPOWL(**KW, rng=7, larger_is_better=True).fit(X, A, B, 2 / 3)
    by_label = DPOWL(**KW, rng=7, larger_is_better=True).fit(X, labels, B, 2 / 3, treated="drug")
    assert by_label.weight_bound_ == by_sign.weight_bound_ == W
    np.testing.assert_array_equal(by_label.coef_, by_sign.coef_)
    assert by_label.intercept_ == by_sign.intercept_
    assert by_label.arms_ == ("drug", "placebo")
    np.testing.assert_array_equal(by_label.recommend(X) == "drug", by_sign.predict(X) == 1)
    # the weights: P(treated) = 2/3 on the drug rows, 1/3 on the placebo rows
    w, _ = owl_weights(B, A, 2 / 3, W, (0, 5), True)
    np.testing.assert_allclose(w[A > 0], B[A > 0] / (2 / 3))
    np.testing.assert_allclose(w[A < 0], B[A < 0] / (1 / 3))
    # and the opposite choice is a different rule: the test can fail
    swapped = DPOWL(**KW, rng=7, larger_is_better=True).fit(X, labels, B, 2 / 3, treated="placebo")
    assert not np.allclose(swapped.coef_, by_sign.coef_)


def test_through_read_trial_and_a_dictionary_the_same_rule():
    X, A, B, labels = two_to_one()
    text = "x1,x2,arm,y\n" + "".join(
        f"{a:.6f},{b:.6f},{lab},{y:.6f}\n" for (a, b), lab, y in zip(X, labels, B)
    )
    d = read_dictionary(
        {
            "treatment": "arm",
            "treated": "drug",
            "outcome": "y",
            "outcome_bounds": [0, 5],
            "larger_is_better": True,
            "randomization": "2:1",
            "columns": [
                {"name": "x1", "bounds": [-1, 1]},
                {"name": "x2", "bounds": [-1, 1]},
                {"name": "arm", "role": "treatment", "levels": ["placebo", "drug"]},
            ],
        }
    )
    assert d.propensity == pytest.approx(2 / 3) and d.column("arm").levels == ("drug", "placebo")
    trial = read_trial(text.encode(), dictionary=d, incomplete="keep")
    assert trial.arms == ("drug", "placebo")
    np.testing.assert_array_equal(trial.A, A)
    fitted = DPOWL(**KW, rng=7, larger_is_better=True).fit_trial(trial, d.propensity)
    by_sign = DPOWL(**KW, rng=7, larger_is_better=True).fit(
        np.round(X, 6), A, np.round(B, 6), d.propensity
    )
    np.testing.assert_allclose(fitted.coef_, by_sign.coef_)
    assert fitted.arms_ == ("drug", "placebo")


def run_fit(tmp_path, capsys, data, dictionary):
    from dpcore.cli import main

    out = tmp_path / "rule.json"
    code = main(fit_command(data, dictionary, tmp_path / "ledger.sqlite", out))
    assert code == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def test_cli_csv_dictionary_with_levels_minus_1_and_1_treats_with_1(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "t.csv"
    data.write_text(
        "x1,A,B\n"
        + "".join(f"{rng.uniform(-3, 3):.3f},{(-1, 1)[i % 2]},{i % 9}\n" for i in range(60))
    )
    rule = run_fit(tmp_path, capsys, data, CORPUS / "levels_semicolon.csv")
    assert rule["rule"].startswith("treat with '1' when")


def test_actg175_names_zidovudine_plus_didanosine_treated(tmp_path, capsys):
    d = read_dictionary(DEMO / "actg175_trial.json")
    assert d.treated == "zidovudine+didanosine"
    assert read_dictionary(d.to_csv()).treated == "zidovudine+didanosine"
    trial = read_trial(DEMO / "actg175_trial.csv", dictionary=d, incomplete="keep")
    assert trial.arms == ("zidovudine+didanosine", "zidovudine")
    rule = run_fit(tmp_path, capsys, DEMO / "actg175_trial.csv", DEMO / "actg175_trial.json")
    assert rule["rule"].startswith("treat with 'zidovudine+didanosine' when")
