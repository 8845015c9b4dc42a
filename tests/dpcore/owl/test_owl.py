import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore import (
    DPOWL,
    DPWeightedERM,
    NotFittedError,
    PrivacyWarning,
    agreement_test,
    concordance,
    ipw_value,
    reference_values,
    treatment_accuracy,
)
from dpcore.owl.owl import (
    benefit,
    default_weight_bound,
    fit_logistic_propensity,
    logistic_propensity_H,
    owl_weights,
)
from dpcore.owl.simulate import PAPER_TRIAL


def ipw_loop(A_hat, A, B, p_plus):
    """The Hajek IPW value written as the authors' loop, independently of dpcore."""
    top = bottom = 0.0
    for a_hat, a, b, p in zip(A_hat, A, B, np.broadcast_to(p_plus, len(A))):
        pi = p if a == 1 else 1 - p
        if a_hat == a:
            top += b / pi
            bottom += 1 / pi
    return top / bottom


def test_ipw_value_matches_the_direct_formula():
    rng = np.random.default_rng(0)
    A = rng.choice([-1.0, 1.0], 300)
    B = rng.normal(3, 2, 300)
    p = rng.uniform(0.2, 0.8, 300)
    rules = rng.choice([-1.0, 1.0], (4, 300))
    got = ipw_value(rules, A, B, p)
    assert got.shape == (4,)
    for r in range(4):
        assert got[r] == pytest.approx(ipw_loop(rules[r], A, B, p), rel=1e-12)
    assert ipw_value(rules[0], A, B, 0.5) == pytest.approx(ipw_loop(rules[0], A, B, 0.5), rel=1e-12)
    # Shifting outcomes shifts the (normalised) value by the same constant.
    assert ipw_value(rules[0], A, B + 7.0, p) == pytest.approx(got[0] + 7.0, rel=1e-12)


def test_ipw_value_is_nan_when_the_rule_matches_nobody():
    A = np.array([1.0, 1.0, -1.0])
    assert np.isnan(ipw_value(-A, A, np.ones(3)))


def test_accuracy_and_concordance():
    a = np.array([1, 1, -1, -1])
    assert treatment_accuracy(a, np.array([1, -1, -1, -1])) == 0.75
    assert concordance(a, a) == 1.0


def test_agreement_test_against_scipy_and_kappa_by_hand():
    rng = np.random.default_rng(1)
    a = rng.choice([-1, 1], 200)
    b = np.where(rng.random(200) < 0.8, a, -a)
    res = agreement_test(a, b)
    table = np.array(
        [
            [np.sum((a > 0) & (b > 0)), np.sum((a > 0) & (b < 0))],
            [np.sum((a < 0) & (b > 0)), np.sum((a < 0) & (b < 0))],
        ]
    )
    po = np.trace(table) / 200
    pe = (table[0].sum() * table[:, 0].sum() + table[1].sum() * table[:, 1].sum()) / 200**2
    assert res["kappa"] == pytest.approx((po - pe) / (1 - pe))
    assert res["concordance"] == pytest.approx(po)
    # The p-value is the hypergeometric upper tail of the (+,+) cell given the margins.
    k, K, m = table[0, 0], table[:, 0].sum(), table[0].sum()
    assert res["p_value"] == pytest.approx(stats.hypergeom.sf(k - 1, 200, K, m), rel=1e-9)
    assert res["p_value"] < 1e-10
    independent = agreement_test(rng.choice([-1, 1], 200), rng.choice([-1, 1], 200))
    assert independent["p_value"] > 1e-3


def test_agreement_test_with_constant_rules():
    one_constant = agreement_test(np.ones(10), np.array([1, -1] * 5))
    assert one_constant["kappa"] == 0.0 and one_constant["p_value"] == pytest.approx(1.0)
    both = agreement_test(np.ones(10), np.ones(10))  # chance agreement is already 1
    assert np.isnan(both["kappa"]) and both["p_value"] == pytest.approx(1.0)


def test_reference_values():
    A = np.array([1.0, -1.0, 1.0, -1.0])
    B = np.array([4.0, 1.0, 2.0, 3.0])
    refs = reference_values(np.array([1.0, 1.0, -1.0, -1.0]), A, B)
    assert refs == pytest.approx({"oracle": 3.5, "treat_all": 3.0, "treat_none": 2.0})


def test_benefit_from_public_bounds():
    B = np.array([-5.0, 0.0, 5.0, 20.0])
    np.testing.assert_allclose(benefit(B, (-2, 10)), [0, 2, 7, 12])
    np.testing.assert_allclose(benefit(B, (-2, 10), larger_is_better=False), [12, 10, 5, 0])
    with pytest.raises(ValueError, match="OWL needs B >= 0"):
        benefit(B)
    with pytest.raises(ValueError, match="needs outcome_bounds"):
        benefit(np.abs(B), larger_is_better=False)
    assert default_weight_bound((0, 12), 2 / 3) == pytest.approx(36.0)


def test_dpowl_is_dpwerm_with_owl_weights():
    data = PAPER_TRIAL.sample(300, rng=2)
    X, A, B = data["X"], data["A"], data["B"]
    bounds = (np.zeros(4), np.ones(4))
    with pytest.warns(
        UserWarning, match="some OWL weights \\(benefit / propensity\\) exceed"
    ) as caught:
        owl = DPOWL(
            epsilon=1.0,
            gamma=20.0,
            weight_bound=30.0,
            feature_bounds=bounds,
            outcome_bounds=(-12, 12),
            rng=5,
            larger_is_better=True,
        ).fit(X, A, B, propensity=0.5)
    w = (np.clip(B, -12, 12) + 12) / 0.5
    erm = DPWeightedERM(epsilon=1.0, gamma=20.0, weight_bound=30.0, feature_bounds=bounds, rng=5)
    with pytest.warns(UserWarning, match="clipped to W"):
        erm.fit(X, A, w)
    np.testing.assert_allclose(owl.theta_, erm.theta_, atol=1e-12)
    assert owl.sensitivity_ == pytest.approx(60 / 20)
    assert owl.diagnostics_["clipped_share"] == pytest.approx(np.mean(w > 30))
    # The warning says that clipping happened, never how many weights or how large.
    message = str(caught[0].message)
    assert str(int(np.sum(w > 30))) not in message.replace("W=30", "")
    assert f"{w.max():.4g}"[:4] not in message


def fit_without_noise(data, larger_is_better):
    """DP-OWL at ε = inf (γ = 1, the paper's bounds) fitted on ``data`` at propensity 0.5."""
    return DPOWL(
        epsilon=np.inf,
        gamma=1.0,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        outcome_bounds=(-12, 12),
        larger_is_better=larger_is_better,
    ).fit(data["X"], data["A"], data["B"], 0.5)


def test_dpowl_learns_the_paper_rule_without_noise():
    data = PAPER_TRIAL.sample(2000, rng=3)
    test = PAPER_TRIAL.sample(5000, rng=4)
    owl = fit_without_noise(data, larger_is_better=True)
    assert treatment_accuracy(owl.predict(test["X"]), np.sign(test["f"])) > 0.9


def test_smaller_is_better_flips_the_rule():
    data = PAPER_TRIAL.sample(2000, rng=3)
    larger = fit_without_noise(data, larger_is_better=True).predict(data["X"])
    smaller = fit_without_noise(data, larger_is_better=False).predict(data["X"])
    assert np.mean(larger == -smaller) > 0.9


def test_propensity_options():
    rng = np.random.default_rng(6)
    X = rng.uniform(0, 1, (400, 2))
    A = np.where(rng.random(400) < 2 / 3, 1.0, -1.0)
    B = rng.uniform(0, 5, 400)
    kw = dict(
        gamma=5.0, feature_bounds=(np.zeros(2), np.ones(2)), outcome_bounds=(0, 5), epsilon=np.inf
    )
    const = DPOWL(**kw, larger_is_better=True).fit(X, A, B, propensity=2 / 3)
    assert const.weight_bound_ == pytest.approx(15.0)  # (5 - 0) / min(2/3, 1/3)
    per_row = DPOWL(weight_bound=15.0, **kw, larger_is_better=True).fit(
        X, A, B, propensity=np.full(400, 2 / 3)
    )
    np.testing.assert_allclose(const.theta_, per_row.theta_, atol=1e-10)
    with pytest.raises(ValueError, match="weight_bound is required"):
        DPOWL(**kw, larger_is_better=True).fit(X, A, B, propensity=np.full(400, 2 / 3))
    with pytest.raises(ValueError, match="C > 0"):
        DPOWL(weight_bound=20.0, **kw, larger_is_better=True).fit(X, A, B, propensity="logistic")
    with pytest.warns(PrivacyWarning, match="C='worst-case'"):
        DPOWL(weight_bound=20.0, C=0.01, **kw, larger_is_better=True).fit(
            X, A, B, propensity="logistic"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # worst-case C covers any propensity model: no warning
        est = DPOWL(weight_bound=20.0, C="worst-case", **kw, larger_is_better=True).fit(
            X, A, B, propensity="logistic"
        )
    assert est.sensitivity_ == pytest.approx((400 * 20 + 40) / 5)
    p_hat = fit_logistic_propensity(X, A)
    assert (
        abs(p_hat.mean() - np.mean(A > 0)) < 1e-6
    )  # logistic MLE with intercept matches the share
    with pytest.raises(ValueError, match="propensity must lie strictly between 0 and 1"):
        DPOWL(weight_bound=20.0, **kw, larger_is_better=True).fit(
            X, A, B, propensity=np.r_[1.0, np.full(399, 0.5)]
        )
    with pytest.raises(ValueError, match="propensity must be"):
        DPOWL(weight_bound=20.0, **kw, larger_is_better=True).fit(X, A, B, propensity="known")


def test_logistic_propensity_H_formula():
    assert logistic_propensity_H(2.0, 1.0, 0.0, 0.5) == pytest.approx(2 * 2 * 1 * 4 / 0.5)


def test_dpowl_input_errors():
    X = np.random.default_rng(0).uniform(0, 1, (10, 2))
    A = np.array([1.0, -1.0] * 5)
    kw = dict(feature_bounds=(np.zeros(2), np.ones(2)), weight_bound=10.0)
    with pytest.raises(ValueError, match="A contains only one class"):
        DPOWL(**kw, larger_is_better=True).fit(X, np.ones(10), np.ones(10), 0.5)
    with pytest.raises(ValueError, match="Only binary classification"):
        DPOWL(**kw, larger_is_better=True).fit(X, np.arange(10) % 3, np.ones(10), 0.5)
    with pytest.raises(ValueError, match="B contains 1 NaN"):
        DPOWL(**kw, larger_is_better=True).fit(X, A, np.r_[np.nan, np.ones(9)], 0.5)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        DPOWL(epsilon=-3, **kw, larger_is_better=True).fit(X, A, np.ones(10), 0.5)
    with pytest.raises(ValueError, match="outcome_bounds: lower bound 5 > upper bound 1"):
        DPOWL(outcome_bounds=(5, 1), **kw, larger_is_better=True).fit(X, A, np.ones(10), 0.5)
    with pytest.raises(TypeError, match="propensity"):
        DPOWL(**kw, larger_is_better=True).fit(X, A, np.ones(10))  # never a silent 1:1
    with pytest.raises(TypeError, match="propensity is required"):
        DPOWL(**kw, larger_is_better=True).fit(X, A, np.ones(10), None)
    with pytest.raises(ValueError, match="treated='x' is not a label of A"):
        DPOWL(**kw, larger_is_better=True).fit(X, A, np.ones(10), 0.5, treated="x")


def test_owl_weights_options():
    B = np.array([[-1.0, 0.0, 20.0]])
    A = np.array([[1.0, -1.0, 1.0]])
    w, clipped = owl_weights(B, A, 0.5, 30.0, outcome="paper")
    np.testing.assert_allclose(w, [[0.002, 2.002, 30.0]])
    assert clipped[0] == pytest.approx(1 / 3)
    w, _ = owl_weights(B, A, 0.5, 30.0, outcome=(-2.0, 10.0))
    np.testing.assert_allclose(w, [[2.0, 4.0, 24.0]])


def test_owl_weights_divide_by_the_propensity_of_the_arm_received():
    # 2:1 randomization: P(A = +1) = 2/3, so a treated row has weight benefit / (2/3) and an
    # untreated one benefit / (1/3), by hand.
    B = np.array([4.0, 4.0, 1.0, 7.0])
    A = np.array([1.0, -1.0, 1.0, -1.0])
    w, clipped = owl_weights(B, A, 2 / 3, 100.0, outcome=(0.0, 10.0))
    np.testing.assert_allclose(w, [4 * 1.5, 4 * 3.0, 1 * 1.5, 7 * 3.0])
    assert clipped == 0.0
    # Per-row propensities P(A = +1 | x_i): the weight uses p_i for treated rows, 1 - p_i otherwise.
    p = np.array([0.2, 0.9, 0.6, 0.25])
    w, _ = owl_weights(B, A, p, 100.0, outcome=(0.0, 10.0))
    np.testing.assert_allclose(w, [4 / 0.2, 4 / 0.1, 1 / 0.6, 7 / 0.75])
    # Smaller-is-better outcomes: benefit hi - B.
    w, _ = owl_weights(B, A, 0.5, 100.0, outcome=(0.0, 10.0), larger_is_better=False)
    np.testing.assert_allclose(w, [12.0, 12.0, 18.0, 6.0])


def test_dpowl_uses_the_weights_of_owl_weights_with_per_row_propensities():
    trial = PAPER_TRIAL.sample(300, rng=4)
    p = np.clip(0.3 + 0.4 * trial["X"][:, 0], 0.05, 0.95)
    rule = DPOWL(
        epsilon=np.inf,
        gamma=10.0,
        weight_bound=200.0,
        outcome_bounds=(-12, 12),
        feature_bounds=PAPER_TRIAL.feature_bounds,
        larger_is_better=True,
    ).fit(trial["X"], trial["A"], trial["B"], p)
    by_hand = np.where(trial["A"] > 0, np.clip(trial["B"], -12, 12) + 12, np.nan) / p
    by_hand = np.where(trial["A"] > 0, by_hand, (np.clip(trial["B"], -12, 12) + 12) / (1 - p))
    direct = DPWeightedERM(
        epsilon=np.inf, gamma=10.0, weight_bound=200.0, feature_bounds=PAPER_TRIAL.feature_bounds
    ).fit(trial["X"], trial["A"], by_hand)
    np.testing.assert_allclose(rule.theta_, direct.theta_, atol=1e-10)


def test_estimators_follow_scikit_learn_conventions():
    with pytest.raises(TypeError):
        DPOWL(1.0)  # hyper-parameters are keyword-only
    rule = DPOWL(epsilon=0.5, gamma=75, outcome_bounds=(-12, 12), larger_is_better=True)
    assert rule.get_params()["gamma"] == 75 and set(rule.get_params()) >= {"epsilon", "rng", "C"}
    assert (
        repr(rule)
        == "DPOWL(epsilon=0.5, gamma=75, outcome_bounds=(-12, 12), larger_is_better=True)"
    )
    assert repr(DPWeightedERM()) == "DPWeightedERM()"
    assert rule.set_params(gamma=10).gamma == 10
    with pytest.raises(ValueError, match="'gama' is not a parameter of DPOWL"):
        rule.set_params(gama=1)
    for est in (rule, DPWeightedERM()):
        with pytest.raises(NotFittedError, match="not fitted yet: call fit first"):
            est.predict(np.zeros((2, 4)))
        with pytest.raises(NotFittedError):
            est.decision_function(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="larger_is_better=False needs outcome_bounds"):
        DPOWL(larger_is_better=False, weight_bound=5.0).fit(
            np.zeros((4, 1)), [1, -1, 1, -1], np.ones(4), 0.5
        )


def test_released_attributes_are_apart_from_the_analyst_only_diagnostics():
    data = PAPER_TRIAL.sample(200, rng=1)
    rule = DPOWL(
        epsilon=1.0,
        gamma=20.0,
        outcome_bounds=(-12, 12),
        feature_bounds=PAPER_TRIAL.feature_bounds,
        rng=2,
        larger_is_better=True,
    ).fit(data["X"], data["A"], data["B"], 0.5)
    assert set(rule.diagnostics_) == {
        "n_iter",
        "grad_norm",
        "clipped_share",
        "outside_bounds_share",
    }
    assert not hasattr(rule, "n_iter_") and not hasattr(rule, "clipped_share_")


DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"


def hospital_trial(**kw):
    """The hospital demo trial (2:1, drug against placebo) read with its four covariates;
    ``kw`` go to ``read_trial``."""
    from dpcore import read_trial

    return read_trial(
        DEMO / "hospital_trial.csv",
        treatment="arm",
        outcome="days_in_hospital",
        covariates=["age", "biomarker", "severity", "frailty"],
        treated="drug",
        **kw,
    )


def test_fit_trial_needs_the_design_and_recommends_arm_labels():
    """The 2:1 demo trial: no silent 1:1 (W would be 40 instead of 60), arms by their names."""
    import json

    d = json.loads((DEMO / "hospital_trial.json").read_text())
    trial = hospital_trial()
    bounds = trial.feature_bounds({c["name"]: c["bounds"] for c in d["columns"] if "bounds" in c})
    rule = DPOWL(
        epsilon=1.0,
        gamma=50.0,
        feature_bounds=bounds,
        outcome_bounds=(0, 20),
        larger_is_better=False,
        rng=0,
    )
    with pytest.raises(TypeError, match="no propensity column"):
        rule.fit_trial(trial)
    rule.fit_trial(trial, propensity=d["propensity"])
    assert rule.weight_bound_ == pytest.approx(60.0)  # (20 - 0) / min(2/3, 1/3)
    assert rule.arms_ == ("drug", "placebo")
    assert rule.feature_names_in_.tolist() == list(trial.covariates)
    labels = rule.recommend(pd.DataFrame(trial.X[:20], columns=trial.covariates))
    assert set(labels) <= {"drug", "placebo"}
    signs = rule.predict(pd.DataFrame(trial.X[:20], columns=trial.covariates))
    np.testing.assert_array_equal(labels == "drug", signs > 0)


def test_treated_label_decides_the_sign():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (200, 2))
    A = np.where(rng.random(200) < 0.5, "drug", "placebo")
    B = rng.uniform(0, 1, 200)
    kw = dict(epsilon=np.inf, weight_bound=10.0, feature_bounds=([0, 0], [1, 1]))
    a = DPOWL(**kw, larger_is_better=True).fit(X, A, B, 0.5, treated="drug")
    b = DPOWL(**kw, larger_is_better=True).fit(X, np.where(A == "drug", 1, -1), B, 0.5)
    np.testing.assert_allclose(a.theta_, b.theta_)
    assert a.classes_.tolist() == ["placebo", "drug"] and a.arms_ == ("drug", "placebo")


def test_fit_trial_gives_incomplete_rows_weight_zero():
    """A trial read with incomplete="keep" (public n): fit_trial uses outcomes_for_fit."""
    trial = hospital_trial(incomplete="keep")
    assert trial.n_incomplete > 0
    kw = dict(
        epsilon=np.inf,
        gamma=50.0,
        feature_bounds=([40, 0, 0, 0], [80, 1, 10, 1]),
        outcome_bounds=(0, 20),
        larger_is_better=False,
    )
    by_trial = DPOWL(**kw).fit_trial(trial, propensity=2 / 3)
    B = trial.outcomes_for_fit((0, 20), larger_is_better=False)
    by_hand = DPOWL(**kw).fit(trial.X, trial.A, B, 2 / 3)
    np.testing.assert_allclose(by_trial.theta_, by_hand.theta_)
    with pytest.raises(ValueError, match="missing value"):
        DPOWL(
            epsilon=np.inf,
            weight_bound=60.0,
            gamma=50.0,
            feature_bounds=kw["feature_bounds"],
            larger_is_better=True,
        ).fit_trial(trial, propensity=2 / 3)


def _flat_bounds_doors():
    """Each public door that takes outcome bounds, called with lo = hi = 5."""
    from dpcore import KArmOWL, evaluate_arms_rule, evaluate_rule
    from dpcore.owl.evaluation_aipw import evaluate_rule_aipw
    from dpcore.owl.simulate import TwinDesign

    rng = np.random.default_rng(0)
    X, A, B = rng.uniform(-1, 1, (40, 2)), rng.integers(0, 2, 40), rng.uniform(0, 1, 40)
    A3 = np.arange(40) % 3
    flat, guess = (5.0, 5.0), np.full((40, 2), 5.0)
    learner = dict(epsilon=1.0, outcome_bounds=flat, larger_is_better=True, feature_bounds=(-1, 1))
    evaluation = dict(outcome_bounds=flat, epsilon=1.0, rng=0)
    return {
        "benefit": lambda: benefit(B, flat),
        "default_weight_bound": lambda: default_weight_bound(flat, 0.5),
        "DPOWL": lambda: DPOWL(**learner).fit(X, A, B, propensity=0.5, treated=1),
        "KArmOWL": lambda: KArmOWL(**learner).fit(X, A3, B, [1 / 3] * 3, arms=(0, 1, 2)),
        "evaluate_rule": lambda: evaluate_rule(A, A, B, 0.5, arms=(0, 1), **evaluation),
        "evaluate_rule_aipw": lambda: evaluate_rule_aipw(A, A, B, 0.5, guess, **evaluation),
        "evaluate_arms_rule": lambda: evaluate_arms_rule(
            A, A, B, [0.5, 0.5], arms=(0, 1), **evaluation
        ),
        "TwinDesign": lambda: TwinDesign(n=40, lower=(0,), upper=(1,), outcome_bounds=flat),
    }


@pytest.mark.parametrize("door", list(_flat_bounds_doors()))
def test_every_door_refuses_outcome_bounds_that_cannot_vary(door):
    """lo = hi would clip every outcome to one value: a weight bound of 0, evaluations whose
    intervals are one point whatever the data. Each public door says why, in the same words."""
    with pytest.raises(ValueError, match=r"outcome_bounds must have lo < hi, got \(5, 5\)"):
        _flat_bounds_doors()[door]()
