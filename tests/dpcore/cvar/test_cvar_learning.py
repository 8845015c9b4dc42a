"""Exponential mechanism over finite classes and DP-GD on the RU lift (spec cvar.md §3, §4, §5.4,
§5.5, §6)."""

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linprog
from scipy.special import softmax

import dpcore.cvar.learning as learn
from dpcore import empirical_cvar
from dpcore.cvar.estimation import empirical_var
from dpcore.cvar.learning import (
    dp_gd_cvar,
    em_expected_gap,
    em_probabilities,
    lifted_constants,
    lifted_objective,
    lifted_sensitivity,
    lifted_subgradient,
    minority_regression,
    packing_losses,
    packing_sample,
    private_select,
    slope_class_losses,
)
from dpcore.cvar.rates import dp_gd_excess_bound, em_gap_bound
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.mechanisms import gaussian_gdp_scale, gaussian_noise, gumbel_noise

ALPHA = 1e-3
THETAS = np.linspace(-1.5, 1.5, 31)


@pytest.fixture(scope="module")
def regression_losses():
    x, y = minority_regression(2000, rng=0)
    return slope_class_losses(x, y, THETAS)


def em_pair(M, n=20, B=1.0):
    """All records zero except one: loss B on f_1 only (S) versus on every f != f_1 (S')."""
    S, Sp = np.zeros((M, n)), np.zeros((M, n))
    S[0, 0] = B
    Sp[1:, 0] = B
    return S, Sp


# --------------------------------------------------------------------------------------------
# Samplers added to dpcore.privacy.mechanisms


def test_gaussian_and_gumbel_samplers():
    assert gaussian_gdp_scale(2.0, 0.5, steps=4) == pytest.approx(8.0)
    assert gaussian_gdp_scale(2.0, np.inf) == 0.0
    assert stats.kstest(gaussian_noise(3.0, 50_000, rng=0), stats.norm(scale=3.0).cdf).pvalue > 1e-3
    assert stats.kstest(gumbel_noise(50_000, rng=1), stats.gumbel_r.cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="mu"):
        gaussian_gdp_scale(1.0, 0.0)


# --------------------------------------------------------------------------------------------
# Exponential mechanism


def test_probabilities_are_the_softmax_of_the_scaled_scores(regression_losses):
    n, tau, eps = 2000, 0.1, 1.0
    p = em_probabilities(regression_losses, tau, eps, 1.0)
    expected = softmax(-eps * n * tau * empirical_cvar(regression_losses, tau) / 2.0)
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    assert p.sum() == pytest.approx(1.0)
    # Huge logits (about 1e4) must not overflow.
    assert np.isfinite(em_probabilities(regression_losses, tau, 200.0, 1.0)).all()


@pytest.mark.parametrize("M,expected", [(2, 0.500), (10, 0.897), (100, 0.990), (1000, 0.999)])
def test_worst_pair_log_ratio_is_exact_and_within_epsilon(M, expected):
    S, Sp = em_pair(M)
    ratio = np.abs(
        np.log(em_probabilities(S, 0.05, 1.0, 1.0)) - np.log(em_probabilities(Sp, 0.05, 1.0, 1.0))
    )
    assert ratio.max() == pytest.approx(expected, abs=1e-3)
    assert ratio.max() <= 1.0


@pytest.mark.parametrize("n,tau", [(50, 0.1), (50, 0.01), (8, 0.5)])  # n tau = 5, 0.5 and 4
def test_random_neighbours_stay_within_epsilon(n, tau):
    rng = np.random.default_rng(1)
    eps, worst = 0.7, 0.0
    for _ in range(300):
        L = np.clip(rng.random((12, n)) * 2 - 0.5, 0, 1)
        Lp = L.copy()
        Lp[:, rng.integers(n)] = rng.random(12) > 0.5
        log_p = np.log(em_probabilities(L, tau, eps, 1.0))
        worst = max(worst, np.abs(log_p - np.log(em_probabilities(Lp, tau, eps, 1.0))).max())
    assert worst <= eps + 1e-12


def test_expected_gap_is_exact_and_below_the_mcsherry_talwar_bound(regression_losses):
    gap = em_expected_gap(regression_losses, 0.1, 1.0, 1.0)
    assert gap == pytest.approx(0.0046, abs=0.001)
    assert gap <= em_gap_bound(31, 2000, 0.1, 1.0) == pytest.approx(0.0443, abs=1e-4)
    assert em_expected_gap(regression_losses, 0.1, np.inf, 1.0) == 0.0


def test_cvar_and_mean_pick_different_slopes(regression_losses):
    assert THETAS[np.argmin(empirical_cvar(regression_losses, 0.1))] == pytest.approx(0.4)
    assert THETAS[np.argmin(regression_losses.mean(axis=1))] == pytest.approx(1.0)
    assert private_select(regression_losses, 0.1, np.inf, 1.0) == 19


def test_bulk_draws_match_the_exact_probabilities(regression_losses):
    p = em_probabilities(regression_losses, 0.1, 1.0, 1.0)
    draws = private_select(regression_losses, 0.1, 1.0, 1.0, size=200_000, rng=2)
    freq = np.bincount(draws, minlength=p.size) / draws.size
    assert 0.5 * np.abs(freq - p).sum() < 0.01
    big = p > 1e-3  # chi-square on the cells with enough expected counts, fixed seed
    observed = np.append(freq[big], freq[~big].sum()) * draws.size
    expected = np.append(p[big], p[~big].sum()) * draws.size
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_gumbel_max_draws_match_the_exact_probabilities():
    x, y = minority_regression(200, rng=3)
    L = slope_class_losses(x, y, THETAS[::3])
    p = em_probabilities(L, 0.2, 2.0, 1.0)
    rng = np.random.default_rng(4)
    draws = np.array([private_select(L, 0.2, 2.0, 1.0, rng=rng) for _ in range(10_000)])
    observed = np.bincount(draws, minlength=p.size)
    big = p * draws.size > 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(p[big], p[~big].sum()) * draws.size
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_packing_class_cvars_are_closed_form():
    M, n, tau, j = 8, 400, 0.05, 3
    z = packing_sample(n, j, 0.02, rng=5)
    rho = empirical_cvar(packing_losses(z, M), tau)
    K = np.sum(z == j)
    assert rho[j - 1] == 0.0
    np.testing.assert_allclose(np.delete(rho, j - 1), min(K, n * tau) / (n * tau))


def test_em_passes_the_audit_and_a_double_epsilon_twin_fails(monkeypatch):
    S, Sp = em_pair(100)

    def sampler(L):
        return lambda size, rng: private_select(L, 0.05, 1.0, 1.0, size=size, rng=rng).astype(float)

    ok = audit_epsilon(sampler(S), sampler(Sp), 1.0, 1_000_000, alpha=ALPHA, rng=6)
    assert ok.passed and ok.epsilon_lb > 0.75  # exact worst-case log ratio: 0.990
    # Broken: epsilon / Delta instead of epsilon / (2 Delta) in the logits.
    monkeypatch.setattr(
        learn, "cvar_sensitivity", lambda n, tau, bound: bound * min(1, 1 / (n * tau)) / 2
    )
    broken = audit_epsilon(sampler(S), sampler(Sp), 1.0, 1_000_000, alpha=ALPHA, rng=7)
    assert not broken.passed and broken.epsilon_lb > 1.5


# --------------------------------------------------------------------------------------------
# Convex learning on the lift


@pytest.mark.parametrize("G,B,D,value", [(1, 2, 2, 4.0), (3, 0.5, 7, 21.5), (0.2, 10, 1, 10.2)])
def test_lambda_makes_L_times_D_theta_exact(G, B, D, value):
    _, L, D_theta = lifted_constants(G, B, D, 1.0)
    assert L * D_theta == pytest.approx(value, rel=1e-12)
    assert lifted_constants(G, B, D, 0.1)[1] * D_theta == pytest.approx(value / 0.1)


def regression_data(n, d, rng, minority=0.1):
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    w_star = np.linspace(0.5, -0.3, d)
    y = np.where(rng.random(n) < minority, -1.0, 1.0) * (X @ w_star) + 0.1 * rng.standard_normal(n)
    return X, np.clip(y, -1, 1)


def cvar_of(w, X, y, tau):
    return empirical_cvar(np.abs(y - np.asarray(w) @ X.T), tau)


def test_lifted_objective_minimised_over_u_is_the_cvar():
    rng = np.random.default_rng(8)
    X, y = regression_data(500, 3, rng)
    w, lam, tau = np.array([0.2, -0.1, 0.4]), 1.3, 0.07
    losses = np.abs(y - X @ w)
    at_var = lifted_objective(w, empirical_var(losses, tau) / lam, X, y, tau, lam)
    assert at_var == pytest.approx(empirical_cvar(losses, tau), abs=1e-12)
    grid = lifted_objective(np.tile(w, (2001, 1)), np.linspace(0, 2 / lam, 2001), X, y, tau, lam)
    assert grid.min() >= at_var - 1e-12


@pytest.mark.parametrize("tau", [0.02, 0.1, 0.5])
def test_subgradient_sensitivity_bound_holds_and_is_nearly_attained(tau):
    rng = np.random.default_rng(9)
    n, d, G, lam, worst = 50, 3, 1.0, 1.0, 0.0
    for _ in range(1000):
        X, y = regression_data(n, d, rng)
        Xp, yp = X.copy(), y.copy()
        i = rng.integers(n)
        Xp[i] = rng.standard_normal(d)
        Xp[i] /= np.linalg.norm(Xp[i])
        yp[i] = rng.uniform(-1, 1)
        w = rng.standard_normal(d) * 0.5
        u = rng.uniform(0, 0.5, 1)
        a = np.concatenate(lifted_subgradient(w[None], u, X, y, tau, lam), axis=None)
        b = np.concatenate(lifted_subgradient(w[None], u, Xp, yp, tau, lam), axis=None)
        worst = max(worst, np.linalg.norm(a - b))
    bound = lifted_sensitivity(n, tau, G, lam)
    assert worst <= bound + 1e-12
    assert worst >= 0.9 * bound


def lp_reference(X, y, tau):
    """min over (w, eta, s) of eta + sum(s)/(n tau), s >= |y - Xw| - eta, s >= 0 (HiGHS)."""
    n, d = X.shape
    c = np.concatenate([np.zeros(d), [1.0], np.full(n, 1 / (n * tau))])
    eye = np.eye(n)
    A = np.block([[-X, -np.ones((n, 1)), -eye], [X, -np.ones((n, 1)), -eye]])
    b = np.concatenate([-y, y])
    bounds = [(None, None)] * (d + 1) + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    return res.fun, res.x[:d]


@pytest.fixture(scope="module")
def regression_problem():
    X, y = regression_data(2000, 2, np.random.default_rng(10))
    return X, y, lp_reference(X, y, 0.1)


def test_noiseless_descent_reaches_the_lp_optimum(regression_problem):
    X, y, (best, w_lp) = regression_problem
    assert np.linalg.norm(w_lp) < 1  # interior: the ball constraint is inactive
    fit = dp_gd_cvar(X, y, 0.1, np.inf, 0.0, steps=2000)
    assert fit.sigma == 0.0
    assert 0 <= cvar_of(fit.coef, X, y, 0.1) - best < 1e-3


def test_excess_is_below_the_worst_case_bound(regression_problem):
    X, y, (best, _) = regression_problem
    for eps in (0.3, 1.0):
        fit = dp_gd_cvar(
            X, y, 0.1, eps, 1e-5, steps=100, c_eta=1.0, output="average", reps=20, rng=11
        )
        excess = (lifted_objective(fit.coef, fit.var / fit.lam, X, y, 0.1, fit.lam) - best).mean()
        assert excess <= dp_gd_excess_bound(2000, 2, 0.1, eps, 1e-5, steps=100)


def test_excess_decreases_with_epsilon_outside_saturation():
    rng = np.random.default_rng(12)
    eps_grid = (0.1, 0.3, 1.0, 3.0)
    n = 4000
    for d in (2, 10):
        X, y = regression_data(n, d, rng)
        for tau in (0.05, 0.25):
            ref = cvar_of(dp_gd_cvar(X, y, tau, np.inf, 0.0, steps=1000).coef, X, y, tau)
            excess = [
                np.mean(
                    cvar_of(
                        dp_gd_cvar(X, y, tau, e, 1e-5, steps=100, reps=5, rng=13).coef, X, y, tau
                    )
                )
                - ref
                for e in eps_grid
            ]
            for k in range(len(eps_grid) - 1):
                if eps_grid[k] * n * tau / np.sqrt(d) >= 20:
                    assert excess[k + 1] <= excess[k] * 1.1 + 2e-4, (d, tau, excess)
            assert excess[-1] < 0.01


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(tau=0.0), ValueError, "tau"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(delta=0.0), ValueError, "delta"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(loss="squared"), ValueError, "loss"),
        (dict(radius=0.0), ValueError, "radius"),
        (dict(y=np.zeros(3)), ValueError, "y"),
    ],
)
def test_dp_gd_validation(kwargs, exc, word):
    args = dict(X=np.ones((5, 2)), y=np.zeros(5), tau=0.2, epsilon=1.0, delta=1e-5) | kwargs
    with pytest.raises(exc, match=word):
        dp_gd_cvar(**args)


def test_hinge_loss_runs_and_rejects_non_labels():
    X, _ = regression_data(300, 2, np.random.default_rng(14))
    y = np.sign(X[:, 0] + 1e-9)
    fit = dp_gd_cvar(X, y, 0.2, 1.0, 1e-5, loss="hinge", steps=20, rng=15)
    assert fit.coef.shape == (2,) and fit.loss_bound == 2.0
    with pytest.raises(ValueError, match="-1 and \\+1"):
        dp_gd_cvar(X, y * 0.5, 0.2, 1.0, 1e-5, loss="hinge")


def canary_sampler(y0, eps=1.0, delta=1e-5):
    """DP-GD's last iterate on n = 10 records: a canary (x=1, y=y0) and nine (0, 0)."""
    X, y = np.zeros((10, 1)), np.zeros(10)
    X[0, 0], y[0] = 1.0, y0
    return lambda size, rng: dp_gd_cvar(
        X, y, 0.1, eps, delta, steps=20, c_eta=0.02, reps=size, output="last", rng=rng
    ).coef[:, 0]


def test_dp_gd_passes_the_audit_and_a_half_sensitivity_twin_fails(monkeypatch):
    ok = audit_epsilon(
        canary_sampler(1.0), canary_sampler(-1.0), 1.0, 400_000, delta=1e-5, alpha=ALPHA, rng=16
    )
    assert ok.passed and ok.epsilon_lb > 0.4
    monkeypatch.setattr(
        learn,
        "lifted_sensitivity",
        lambda n, tau, G, lam: max(2 * G, np.hypot(G, lam)) / (2 * n * tau),
    )
    broken = audit_epsilon(
        canary_sampler(1.0), canary_sampler(-1.0), 1.0, 400_000, delta=1e-5, alpha=ALPHA, rng=17
    )
    assert not broken.passed
