"""The private plug-in rule: the optimal rule without noise, the outcome's direction, its
sensitivity on designed and random neighbours, DP audits with a broken twin, neighbouring
files and its rule file."""

import dataclasses
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore import (
    ClippingWarning,
    NotFittedError,
    PrivacyLedger,
    PrivacyWarning,
    PrivatePlugInRule,
    load_rule,
    read_trial,
    write_rule,
)
from dpcore.owl.outcome_model import design_rows, statistics_sensitivity
from dpcore.owl.plugin import plugin_statistics, score_from_statistics
from dpcore.owl.release import rule_from_plugin
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.mechanisms import PLUG_IN_STATISTICS
from tests.dpcore.owl.plugin_audit import HI, LO, laplace_ratio, neighbours

ALPHA = 1e-3  # false-alarm probability of each audit of a correct mechanism
PAPER = dict(
    feature_bounds=PAPER_TRIAL.feature_bounds, outcome_bounds=(-12.0, 12.0), larger_is_better=True
)
#: The paper's contrast: treated minus control mean outcome is 6 f(x), f = 1 + x1 + x2 - 1.8 x3 - 2.2 x4
TRUE_SCORE = 6.0 * np.array([1.0, 1.0, 1.0, -1.8, -2.2])


@pytest.fixture(scope="module")
def paper():
    return PAPER_TRIAL.sample(2000, rng=11), PAPER_TRIAL.sample(5000, rng=12)


def test_without_noise_or_ridge_it_is_least_squares_per_arm_and_the_papers_rule(paper):
    """epsilon = inf, ridge = 0: each arm's model is ordinary least squares, so the score is
    the difference of two OLS fits; the paper's outcome model is linear in each arm, so that
    difference estimates 6 f(x) without bias: within 4.5 standard errors (from OLS's own
    covariance, noise sd 0.5) coefficient by coefficient; and it gives nearly every test
    patient the better arm (the misses lie within a standard error of the boundary)."""
    train, test = paper
    X, A, B = train["X"], train["A"], train["B"]
    rule = PrivatePlugInRule(epsilon=np.inf, ridge=0.0, **PAPER).fit(X, A, B)
    design = np.column_stack([np.ones(len(X)), X])
    fits, cov = [], 0.0
    for arm in (1.0, -1.0):
        rows = A == arm
        beta, *_ = np.linalg.lstsq(design[rows], B[rows], rcond=None)
        fits.append(beta)
        cov = cov + 0.5**2 * np.linalg.inv(design[rows].T @ design[rows])
    ols = fits[0] - fits[1]
    got = np.concatenate(([rule.intercept_], rule.coef_))
    np.testing.assert_allclose(got, ols, rtol=1e-6, atol=1e-8)
    se = np.sqrt(np.diag(cov))
    assert np.all(np.abs(got - TRUE_SCORE) < 4.5 * se), (got, se)
    agree = np.mean(rule.predict(test["X"]) == optimal_treatment(test["f"]))
    assert agree > 0.98


def test_the_score_is_the_predicted_difference_of_the_two_arms_in_original_units(paper):
    """coef_ and intercept_ rewrite sign * (mu_treated - mu_control) exactly, with a subset of
    the covariates, a column whose bounds are equal and covariates outside their bounds."""
    train, _ = paper
    X = np.column_stack([train["X"][:400], np.full(400, 3.0)]) * 2.0 - 0.5  # beyond [0, 1]
    bounds = (np.array([0.0, 0.0, 0.0, 0.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0, 2.0]))
    for larger in (True, False):
        rule = PrivatePlugInRule(
            epsilon=2.0,
            feature_bounds=bounds,
            outcome_bounds=(-10.0, 14.0),
            larger_is_better=larger,
            columns=[0, 3, 4],
            rng=np.random.default_rng(1),
        )
        with pytest.warns(ClippingWarning, match="covariate outside"):  # analyst-only
            rule.fit(X, train["A"][:400], train["B"][:400])
        Z = design_rows(X, bounds, rule.columns_)
        predicted = 2.0 + 12.0 * Z @ rule.arm_coef_.T  # midpoint + half-range * (1, z)'theta
        expected = (predicted[:, 0] - predicted[:, 1]) * (1 if larger else -1)
        np.testing.assert_allclose(rule.decision_function(X), expected, atol=1e-9)
        assert rule.coef_[1] == rule.coef_[2] == rule.coef_[4] == 0.0


def test_a_smaller_is_better_outcome_flips_the_rule(paper):
    """The same data with the other direction: the same noise, the score negated. And a
    length-of-stay-like outcome (the paper's outcome mirrored) learns the paper's rule when
    told that smaller is better, from the trial's dictionary field too."""
    train, test = paper
    X, A, B = train["X"], train["A"], train["B"]
    kw = dict(feature_bounds=PAPER_TRIAL.feature_bounds, outcome_bounds=(-12.0, 12.0))
    up = PrivatePlugInRule(epsilon=1.0, larger_is_better=True, rng=3, **kw).fit(X, A, B)
    down = PrivatePlugInRule(epsilon=1.0, larger_is_better=False, rng=3, **kw).fit(X, A, B)
    np.testing.assert_allclose(down.decision_function(X), -up.decision_function(X))
    np.testing.assert_array_equal(up.statistics_, down.statistics_)

    worse = PrivatePlugInRule(epsilon=np.inf, larger_is_better=False, **kw).fit(X, A, -B)
    best = optimal_treatment(test["f"])
    assert np.mean(worse.predict(test["X"]) == best) > 0.98
    assert np.mean(up.predict(test["X"]) == best) > 0.7  # epsilon = 1 at n = 2000

    csv = pd.DataFrame({"x1": X[:, 0], "arm": np.where(A > 0, "drug", "placebo"), "stay": -B})
    trial = read_trial(io.StringIO(csv.to_csv(index=False)), treatment="arm", outcome="stay")
    trial = dataclasses.replace(trial, larger_is_better=False)
    kw1 = dict(feature_bounds=([0.0], [1.0]), outcome_bounds=(-12.0, 12.0), epsilon=np.inf)
    with pytest.raises(ValueError, match="larger_is_better is not set"):
        PrivatePlugInRule(**kw1).fit(trial.X, trial.A, trial.B)
    from_trial = PrivatePlugInRule(**kw1).fit_trial(trial)
    told = PrivatePlugInRule(larger_is_better=False, **kw1).fit(trial.X, trial.A, trial.B)
    assert from_trial.larger_is_better_ is False
    np.testing.assert_allclose(from_trial.coef_, told.coef_)


def test_the_propensity_is_not_needed_a_known_one_is_ignored_an_estimated_one_refused(paper):
    train, _ = paper
    args = train["X"][:300], train["A"][:300], train["B"][:300]
    fits = [
        PrivatePlugInRule(epsilon=1.0, rng=4, **PAPER).fit(*args, propensity=p)
        for p in (None, 0.5, 2 / 3, np.full(300, 0.4))
    ]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.coef_, fits[0].coef_)
    assert fits[0].propensity_ is None and fits[2].propensity_ == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="needs no propensity"):
        PrivatePlugInRule(epsilon=1.0, **PAPER).fit(*args, propensity="logistic")


def test_estimator_conventions(paper):
    train, _ = paper
    rule = PrivatePlugInRule(epsilon=2.0, ridge=0.1, **PAPER)
    assert rule.get_params()["ridge"] == 0.1 and "ridge=0.1" in repr(rule)
    with pytest.raises(NotFittedError):
        rule.predict(train["X"][:3])
    for bad, match in (
        (dict(epsilon=-1.0), "epsilon"),
        (dict(ridge=-0.1), "ridge"),
        (dict(outcome_bounds=(1.0, 1.0)), "lo < hi"),
        (dict(columns=[0, 0]), "twice"),
        (dict(columns=[7]), "position"),
        (dict(sampler="exact"), "sampler"),
    ):
        with pytest.raises(ValueError, match=match):
            PrivatePlugInRule(**{**PAPER, **bad}).fit(
                train["X"][:50], train["A"][:50], train["B"][:50]
            )
    labels = np.where(train["A"][:200] > 0, "drug", "placebo")
    with pytest.raises(ValueError, match="treated"):
        PrivatePlugInRule(epsilon=1.0, **PAPER).fit(train["X"][:200], labels, train["B"][:200])
    X = pd.DataFrame(train["X"][:200], columns=["a", "b", "c", "d"])
    named = PrivatePlugInRule(epsilon=1.0, columns=["b", "d"], rng=0, **PAPER).fit(
        X, labels, train["B"][:200], treated="drug"
    )
    assert named.columns_ == (1, 3) and named.sensitivity_ == statistics_sensitivity(3) == 18.0
    assert set(named.recommend(X)) <= {"drug", "placebo"} and named.arms_ == ("drug", "placebo")
    B = np.clip(train["B"][:200], -12.0, 12.0) + 12.0  # the benefit of the IPW value
    match = (named.predict(X) == labels).astype(float)
    assert named.score(X, labels, train["B"][:200], 0.5) == pytest.approx(
        np.sum(match * B) / np.sum(match)
    )


def test_bounds_read_from_the_data_warn_and_void_the_guarantee(paper):
    train, _ = paper
    args = train["X"][:200], train["A"][:200], train["B"][:200]
    with pytest.warns(PrivacyWarning, match="outcome_bounds"):
        rule = PrivatePlugInRule(
            epsilon=1.0, feature_bounds=PAPER_TRIAL.feature_bounds, larger_is_better=True
        ).fit(*args)
    assert rule.bounds_from_data_
    ledger = PrivacyLedger()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        PrivatePlugInRule(epsilon=1.0, larger_is_better=True).fit(*args, ledger=ledger)
    (entry,) = ledger.entries
    assert "feature bounds read" in entry.mechanism and "outcome bounds read" in entry.mechanism
    assert ledger.total()[0] == np.inf


# --------------------------------------------------------------------------------------------
# Sensitivity and the empirical DP audit

ONE = dict(feature_bounds=(np.zeros(1), np.ones(1)), outcome_bounds=(LO, HI), larger_is_better=True)


class WrongSensitivity(PrivatePlugInRule):
    """The broken twin: noise scaled with d, the size of a design row, instead of d (d + 3)."""

    @staticmethod
    def _sensitivity(d):
        return float(d)


def test_sensitivity_attained_on_designed_neighbours_and_never_exceeded():
    D, Dp = neighbours()
    exact = [PrivatePlugInRule(epsilon=np.inf, **ONE).fit(*data) for data in (D, Dp)]
    assert exact[0].sensitivity_ == statistics_sensitivity(2) == 10.0
    assert np.abs(exact[0].statistics_ - exact[1].statistics_).sum() == pytest.approx(10.0)
    rng = np.random.default_rng(4)
    X, A, B = rng.random((30, 3)), np.where(rng.random(30) < 0.5, 1.0, -1.0), rng.normal(0, 5, 30)
    bounds = (np.zeros(3), np.ones(3))
    base = plugin_statistics(X, A, B, bounds, (LO, HI))
    for _ in range(300):  # any replacement, covariates and outcome far outside the bounds
        X2, A2, B2 = X.copy(), A.copy(), B.copy()
        i = rng.integers(30)
        X2[i], A2[i], B2[i] = rng.uniform(-2, 3, 3), rng.choice([-1.0, 1.0]), rng.uniform(-50, 50)
        moved = np.abs(plugin_statistics(X2, A2, B2, bounds, (LO, HI)) - base).sum()
        assert moved <= statistics_sensitivity(4) * (1 + 1e-12)


def test_the_estimator_adds_exactly_laplace_noise_of_its_sensitivity_over_epsilon():
    D, _ = neighbours()
    exact = PrivatePlugInRule(epsilon=np.inf, **ONE).fit(*D).statistics_
    for cls in (PrivatePlugInRule, WrongSensitivity):
        fit = cls(epsilon=0.7, rng=np.random.default_rng(9), **ONE).fit(*D)
        noise = np.random.default_rng(9).laplace(0.0, fit.sensitivity_ / 0.7, exact.size)
        np.testing.assert_allclose(fit.statistics_, exact + noise, rtol=0, atol=1e-12)
    assert WrongSensitivity(epsilon=1.0, **ONE).fit(*D).sensitivity_ == 2.0


def statistics_release(cls, data, eps):
    """Sampler of the noisy statistics' log-likelihood ratio between the designed neighbours
    (at the true scale): the most telling scalar of a Laplace vector, whose largest value is
    the privacy loss; a fixed function of the release, so any twin's audit is valid with it.
    The statistics and the noise's scale are the estimator's (see the test above)."""
    fit = cls(epsilon=np.inf, **ONE).fit(*data)
    a, b = (PrivatePlugInRule(epsilon=np.inf, **ONE).fit(*x).statistics_ for x in neighbours())
    return laplace_ratio(
        fit.statistics_, a, b, fit.sensitivity_ / eps, statistics_sensitivity(2) / eps
    )


def test_dp_audit_of_the_statistics_passes_and_the_wrong_sensitivity_fails():
    """200,000 samples a side: the correct mechanism's lower bound is near 0.6 (the audit sees
    most of the loss), the twin's near 3.5 (its noise is 5 times too small) against 1."""
    eps = 1.0
    D, Dp = neighbours()
    args = dict(epsilon=eps, n_samples=200_000, alpha=ALPHA)
    ok = audit_epsilon(
        statistics_release(PrivatePlugInRule, D, eps),
        statistics_release(PrivatePlugInRule, Dp, eps),
        rng=12,
        **args,
    )
    assert ok.passed and ok.epsilon_lb > 0.5 * eps
    broken = audit_epsilon(
        statistics_release(WrongSensitivity, D, eps),
        statistics_release(WrongSensitivity, Dp, eps),
        rng=13,
        **args,
    )
    assert not broken.passed


def published_score(cls, data, eps):
    """Sampler of what the rule file publishes at x = 1: intercept + coef, computed from the
    noisy statistics by the estimator's own post-processing."""
    fit = cls(epsilon=np.inf, **ONE).fit(*data)

    def draw(size, rng):
        noisy = fit.statistics_ + rng.laplace(0.0, fit.sensitivity_ / eps, (size, 10))
        intercept, coef, _ = score_from_statistics(noisy, n=len(data[1]), epsilon=eps, **ONE)
        return intercept + coef[:, 0]

    return draw


def test_dp_audit_of_the_published_score_passes_and_the_wrong_sensitivity_fails():
    """End to end on the published number at epsilon = 2: a linear combination of the noisy
    statistics (through the ridge solve) shows the audit less of the loss than their
    likelihood ratio does, so the correct mechanism's bound is near 0.15 epsilon; the twin's
    is near 1.15 epsilon with 100,000 samples a side (1.09 to 1.18 over ten audit seeds),
    above the claimed epsilon."""
    eps = 2.0
    D, Dp = neighbours()
    args = dict(epsilon=eps, n_samples=100_000, alpha=ALPHA, rng=1)
    ok = audit_epsilon(
        published_score(PrivatePlugInRule, D, eps),
        published_score(PrivatePlugInRule, Dp, eps),
        **args,
    )
    assert ok.passed
    broken = audit_epsilon(
        published_score(WrongSensitivity, D, eps),
        published_score(WrongSensitivity, Dp, eps),
        **args,
    )
    assert not broken.passed


# --------------------------------------------------------------------------------------------
# Neighbouring files and the rule file


def trial_csv(change=None):
    """A 300-row trial file; ``change`` replaces row 7's cells."""
    data = PAPER_TRIAL.sample(300, rng=21)
    table = pd.DataFrame(data["X"], columns=["x1", "x2", "x3", "x4"])
    table.insert(0, "arm", np.where(data["A"] > 0, "drug", "placebo"))
    table["y"] = data["B"].round(3)
    table = table.astype(object)
    for column, value in (change or {}).items():
        table.loc[7, column] = value
    return table.to_csv(index=False)


def plugin_file(csv, ledger=None, **settings):
    trial = read_trial(io.StringIO(csv), treatment="arm", outcome="y", treated="drug")
    model = PrivatePlugInRule(epsilon=1.0, rng=np.random.default_rng(5), **PAPER)
    model.fit_trial(trial, ledger=ledger)
    return model, trial, rule_from_plugin(model, trial, **settings)


@pytest.mark.parametrize(
    "change",
    [
        {"arm": "placebo", "x1": 5.0, "x2": 0.0, "x3": -3.0, "x4": 1.0, "y": 40.0},
        {"y": ""},  # the patient's outcome missing: kept, contributing nothing
    ],
    ids=["replaced", "outcome-missing"],
)
def test_neighbouring_files_publish_the_same_fields_but_the_noisy_coefficients(change):
    files, records = [], []
    for csv in (trial_csv(), trial_csv(change)):
        ledger = PrivacyLedger()
        _, _, rule = plugin_file(csv, ledger)
        files.append(rule.to_dict())
        records.append([(e.mechanism, e.epsilon, e.delta) for e in ledger.entries])
    assert files[0].keys() == files[1].keys()
    assert {k for k in files[0] if files[0][k] != files[1][k]} == {"coef", "intercept"}
    assert records[0] == records[1] == [(PLUG_IN_STATISTICS.name, 1.0, 0.0)]
    assert files[0]["n"] == 300 and files[0]["mechanism"] == PLUG_IN_STATISTICS.sentence()


def test_the_rule_file_round_trips_and_recommends_as_the_estimator_does(tmp_path):
    model, trial, rule = plugin_file(trial_csv())
    path = tmp_path / "private_rule.json"
    write_rule(rule, path)
    loaded = load_rule(path)
    patients = pd.DataFrame(
        PAPER_TRIAL.sample(500, rng=22)["X"] * 1.4 - 0.2, columns=["x1", "x2", "x3", "x4"]
    )  # some beyond the bounds: both clip them
    assert list(loaded.recommend(patients)) == list(model.recommend(patients))
    np.testing.assert_allclose(
        loaded.decision_function(patients), model.decision_function(patients), atol=1e-12
    )
    assert loaded.settings["mechanism"] == PLUG_IN_STATISTICS.sentence()
    assert loaded.settings["private"] is True and "plug-in" in loaded.settings["learner"]
    assert loaded.settings["sensitivity_l1"] == 40.0 and loaded.settings["ridge"] == 0.01
    scope: dict = {"recipe": rule.to_dict()}  # the file's plain-Python recipe agrees too
    exec(rule.to_dict()["apply_python"].replace("json.load(open(RULE_FILE))", "recipe"), scope)
    assert list(scope["recommend"](patients.to_dict("records"))) == list(model.recommend(patients))


def test_a_rule_file_without_a_guarantee_says_why():
    csv = trial_csv()
    trial = read_trial(io.StringIO(csv), treatment="arm", outcome="y", treated="drug")
    with pytest.warns(PrivacyWarning):
        model = PrivatePlugInRule(
            epsilon=1.0, feature_bounds=PAPER_TRIAL.feature_bounds, larger_is_better=True
        ).fit_trial(trial)
    data = rule_from_plugin(model, trial).to_dict()
    assert data["private"] is False
    assert data["not_private_because"] == ["outcome bounds read from the data"]
    assert data["title"].startswith("NOT PRIVATE")
