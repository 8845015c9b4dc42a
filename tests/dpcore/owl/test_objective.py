"""Objective perturbation for DP-wERM / DP-OWL (docs/objective.md): exact formulas, the solver's
linear term, the estimator's release, an empirical DP audit with two broken twins, the rule
file of neighbouring trials and the parameters' messages."""

import io
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from dpcore import DPOWL, DPWeightedERM, read_dictionary, read_trial
from dpcore.owl.release import rule_from_dpowl
from dpcore.owl.rule_file import write_rule
from dpcore.owl.werm import solve_werm, werm_objective
from dpcore.owl.werm_release import (
    OBJECTIVE_SLACK_SHARE,
    RELEASE_TOL,
    objective_plan,
    objective_release,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.mechanisms import (
    OBJECTIVE_PERTURBATION,
    OUTPUT_PERTURBATION,
    l2_gamma_noise,
    objective_perturbation_budget,
)

ALPHA = 1e-3  # false-alarm probability of each audit of a correct mechanism
DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"


def problem(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.uniform(0, 2, n)


# --------------------------------------------------------------------------------------------
# The budget (CMS Algorithm 2 with G = W, K = W c) and the solver's linear term


def test_budget_is_cms_with_the_weight_bound_and_switches_to_the_extra_ridge_at_half():
    W, c, gamma, eps = 4.0, 1.0, 16.0, 1.0
    eps_noise, extra = objective_perturbation_budget(eps, gamma, W, W * c)
    assert extra == 0.0
    assert eps_noise == pytest.approx(eps - np.log(1 + 2 * W * c / gamma + (W * c / gamma) ** 2))
    # A correction above epsilon/2: the ridge rises until it is exactly epsilon/2.
    eps_noise, extra = objective_perturbation_budget(eps, 2.0, W, W * c)
    assert eps_noise == eps / 2
    assert extra == pytest.approx(W * c / np.expm1(eps / 4) - 2.0)
    assert 2 * np.log1p(W * c / (2.0 + extra)) == pytest.approx(eps / 2)
    # Continuous where the two branches meet; no noise and no ridge at epsilon = inf.
    ridge = W * c / np.expm1(eps / 4)
    assert objective_perturbation_budget(eps, ridge * (1 + 1e-9), W, W * c)[0] == pytest.approx(
        eps / 2
    )
    assert objective_perturbation_budget(np.inf, 1.0, W, W * c) == (np.inf, 0.0)


def test_the_plan_uses_the_huber_curvature_and_keeps_a_share_for_the_solver_slack():
    eps_noise, extra = objective_plan(2.0, 30.0, 5.0, "huber", 0.25)
    K = 5.0 * 1 / (2 * 0.25)
    expected = (1 - OBJECTIVE_SLACK_SHARE) * 2.0 - 2 * np.log1p(K / 30.0)
    assert extra == 0.0 and eps_noise == pytest.approx(expected)
    assert objective_plan(2.0, 30.0, 5.0, "logistic")[0] == pytest.approx(
        (1 - OBJECTIVE_SLACK_SHARE) * 2.0 - 2 * np.log1p(5.0 * 0.25 / 30.0)
    )


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_the_linear_term_keeps_the_solver_exact(loss):
    X, y, w = problem()
    b = np.array([3.0, -7.0, 1.5])
    theta, info = solve_werm(X, y, w, 2.0, loss, 0.5, linear=b)
    assert info["grad_norm"] <= 1e-9

    def fun(t):
        f, g, _ = werm_objective(t[None], X[None], y[None], w[None], np.array([2.0]), loss)
        return f[0] + b @ t, g[0] + b

    ref = minimize(fun, np.zeros(3), jac=True, method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(theta, ref.x, atol=1e-6)


def test_a_batch_of_linear_terms_solves_each_problem():
    X, y, w = problem(seed=1)
    b = np.random.default_rng(2).normal(0, 20, (5, 3))
    batch, _ = solve_werm(X, y, w, 3.0, linear=b)
    for k in range(5):
        np.testing.assert_allclose(batch[k], solve_werm(X, y, w, 3.0, linear=b[k])[0], atol=1e-10)


# --------------------------------------------------------------------------------------------
# The estimators


def test_without_noise_both_perturbations_give_the_same_minimiser():
    X, y, w = problem(seed=3)
    kw = dict(epsilon=np.inf, gamma=5.0, weight_bound=2.0, feature_bounds=(-np.ones(3), np.ones(3)))
    out = DPWeightedERM(**kw).fit(X, y, w)
    obj = DPWeightedERM(perturbation="objective", **kw).fit(X, y, w)
    np.testing.assert_array_equal(out.theta_, obj.theta_)
    assert obj.epsilon_noise_ == np.inf and obj.extra_ridge_ == 0.0


def test_dpowl_without_noise_both_perturbations_give_the_same_rule():
    rng = np.random.default_rng(4)
    X = rng.random((400, 4))
    A = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    B = 3 * A * (1 + X[:, 0] - 2 * X[:, 3]) + rng.normal(0, 0.5, 400)
    kw = dict(
        epsilon=np.inf,
        gamma=20.0,
        outcome_bounds=(-12, 12),
        feature_bounds=(np.zeros(4), np.ones(4)),
        larger_is_better=True,
    )
    out = DPOWL(**kw).fit(X, A, B, 0.5)
    obj = DPOWL(perturbation="objective", **kw).fit(X, A, B, 0.5)
    np.testing.assert_array_equal(out.coef_, obj.coef_)
    assert out.intercept_ == obj.intercept_


def test_the_estimator_releases_exactly_the_objective_release():
    X, y, w = problem(seed=5)
    model = DPWeightedERM(
        epsilon=2.0,
        gamma=8.0,
        weight_bound=2.0,
        perturbation="objective",
        feature_bounds=(-np.ones(3), np.ones(3)),
        fit_intercept=False,
        rng=7,
    ).fit(X, y, w)
    scaled = model.scaling_.transform(X)
    theta, info = objective_release(scaled, y, w, 8.0, "huber", 0.5, 2.0, 2.0, rng=7)
    np.testing.assert_array_equal(model.theta_, theta)
    assert model.epsilon_noise_ == info["epsilon_noise"] and model.extra_ridge_ == 0.0
    assert model.sensitivity_ == 4.0  # 2W: the objective's gradient, sum form


def test_the_slack_noise_covers_the_solver_tolerance_and_is_negligible():
    """The output noise that makes the solver's point (not only the exact minimiser) private
    has radius Gamma(d, 0.01 epsilon / (2 RELEASE_TOL / ridge)): around 1e-4 / epsilon here."""
    X, y, w = problem(seed=6)
    exact, _ = solve_werm(X, y, w, 8.0, linear=np.zeros(3))
    theta, _ = objective_release(X, y, w, 8.0, "huber", 0.5, 1e6, 2.0, rng=1)
    # epsilon = 1e6: b is tiny, so theta is the exact minimiser up to b's and the slack's noise
    scale = 3 * 2 * RELEASE_TOL / 8.0 / (OBJECTIVE_SLACK_SHARE * 1e6)
    assert np.linalg.norm(theta - exact) < 10 * (scale + 3 * 2 * 2.0 / 1e6 / 8.0)


# --------------------------------------------------------------------------------------------
# Empirical DP audit on designed neighbours: one weighted record x = 1 with y = +1 or y = -1


def one_record_release(y0, eps, gamma, W, h=0.5, noise_W=None, corrected=True):
    """Samplers of the released coefficient (d = 1) through :func:`objective_release`, the
    estimator's own function. Broken twins: ``noise_W`` (b's scale and the curvature bound
    computed with another weight bound than the record's weight W), ``corrected=False``
    (epsilon' = epsilon: no log correction, no extra ridge)."""
    X, y, w = np.array([[1.0]]), np.array([y0]), np.array([W])

    def draw(size, rng):
        if corrected:
            bound = W if noise_W is None else noise_W
            theta, _ = objective_release(X, y, w, gamma, "huber", h, eps, bound, (size,), rng)
        else:
            b = l2_gamma_noise(1, eps, 2 * W, (size,), rng)
            theta, _ = solve_werm(X, y, w, gamma, "huber", h, linear=b)
        return theta[:, 0]

    return draw


def test_objective_perturbation_passes_the_audit_and_a_twin_with_w_1_fails():
    eps, kw = 1.0, dict(gamma=16.0, W=4.0)
    ok = audit_epsilon(
        one_record_release(1.0, eps, **kw),
        one_record_release(-1.0, eps, **kw),
        eps,
        400_000,
        alpha=ALPHA,
        rng=2,
    )
    assert ok.passed and ok.epsilon_lb > 0.3  # the audit sees most of epsilon' = 0.54
    broken = audit_epsilon(
        one_record_release(1.0, eps, noise_W=1.0, **kw),
        one_record_release(-1.0, eps, noise_W=1.0, **kw),
        eps,
        400_000,
        alpha=ALPHA,
        rng=3,
    )
    assert not broken.passed and broken.epsilon_lb > 2.0


def test_the_log_correction_is_needed_a_twin_without_it_fails():
    """gamma = W c / 4: the Hessian's change moves the density by up to log 5. The statistic
    -|theta - 1| (post-processing, fixed in advance) puts the audit's events on the interval
    around theta = 1 where the Huber hinge's curved piece makes the Jacobian ratio largest."""
    eps, kw = 0.5, dict(gamma=0.25, W=1.0)

    def near_one(draw):
        return lambda size, rng: -np.abs(draw(size, rng) - 1.0)

    ok = audit_epsilon(
        near_one(one_record_release(1.0, eps, **kw)),
        near_one(one_record_release(-1.0, eps, **kw)),
        eps,
        300_000,
        alpha=ALPHA,
        rng=4,
    )
    assert ok.passed
    broken = audit_epsilon(
        near_one(one_record_release(1.0, eps, corrected=False, **kw)),
        near_one(one_record_release(-1.0, eps, corrected=False, **kw)),
        eps,
        300_000,
        alpha=ALPHA,
        rng=5,
    )
    assert not broken.passed and broken.epsilon_lb > 1.0


# --------------------------------------------------------------------------------------------
# The rule file, the ledger and the parameters


def paper_trials(change):
    d = read_dictionary(DEMO / "paper_trial.json")
    frame = pd.read_csv(DEMO / "paper_trial.csv")
    other = frame.copy()
    change(other)
    trials = [
        read_trial(io.StringIO(f.to_csv(index=False)), **d.read_trial_kwargs())
        for f in (frame, other)
    ]
    return d, trials


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.loc.__setitem__((0, "outcome"), -9.5),
        lambda f: f.loc.__setitem__((3, ["x1", "treatment"]), [0.99, 1 - f.loc[3, "treatment"]]),
    ],
)
def test_neighbouring_files_publish_the_same_fields_but_the_coefficients(change):
    d, trials = paper_trials(change)
    files = []
    for trial in trials:
        model = DPOWL(
            epsilon=1.0,
            perturbation="objective",
            feature_bounds=trial.feature_bounds(d.bounds),
            outcome_bounds=d.outcome_bounds,
            larger_is_better=d.larger_is_better,
        ).fit_trial(trial, d.propensity)
        files.append(json.loads(write_rule(rule_from_dpowl(model, trial), None)))
    a, b = files
    assert set(a) == set(b)
    differ = {k for k in a if a[k] != b[k]}
    assert differ == {"coef", "intercept"}
    assert a["mechanism"] == OBJECTIVE_PERTURBATION.sentence() and a["delta"] == 0.0
    assert a["private"] and "objective perturbation" in a["mechanism"]


def test_the_output_perturbation_file_keeps_its_mechanism_sentence():
    d, (trial, _) = paper_trials(lambda f: None)
    model = DPOWL(
        epsilon=1.0,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=True,
    ).fit_trial(trial, d.propensity)
    assert rule_from_dpowl(model, trial).settings["mechanism"] == OUTPUT_PERTURBATION.sentence()


def test_the_ledger_names_the_perturbation():
    from dpcore import PrivacyLedger

    X, y, w = problem(seed=8)
    ledger = PrivacyLedger()
    DPWeightedERM(
        epsilon=1.0,
        gamma=20.0,
        weight_bound=2.0,
        perturbation="objective",
        feature_bounds=(-np.ones(3), np.ones(3)),
    ).fit(X, y, w, ledger=ledger)
    assert [e.mechanism for e in ledger.entries] == ["DP-wERM (objective perturbation)"]


@pytest.mark.parametrize(
    "kw, error, match",
    [
        (dict(perturbation="input"), ValueError, r"perturbation must be one of .*'input'"),
        (dict(perturbation="objective", C=0.5), ValueError, r"needs weights known in advance"),
        (dict(perturbation="objective", C="worst-case"), ValueError, r"C='worst-case'"),
    ],
)
def test_parameters_are_checked_with_a_message(kw, error, match):
    X, y, w = problem(n=20, seed=9)
    with pytest.raises(error, match=match):
        DPWeightedERM(feature_bounds=(-np.ones(3), np.ones(3)), weight_bound=2.0, **kw).fit(X, y, w)
    with pytest.raises(error, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPOWL(outcome_bounds=(0, 1), larger_is_better=True, **kw).fit(X, y, np.abs(w) / 2, 0.5)


def test_objective_perturbation_refuses_an_estimated_propensity():
    X, y, w = problem(n=40, seed=10)
    with pytest.raises(ValueError, match="needs weights known in advance"):
        DPOWL(
            perturbation="objective",
            C="worst-case",
            weight_bound=10.0,
            outcome_bounds=(0, 1),
            larger_is_better=True,
            feature_bounds=(-np.ones(3), np.ones(3)),
        ).fit(X, y, np.abs(w) / 2, "logistic")
