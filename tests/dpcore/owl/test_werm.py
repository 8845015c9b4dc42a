import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import check_grad, minimize

from dpcore import (
    ConvergenceError,
    DPWeightedERM,
    FeatureScaling,
    PrivacyWarning,
    l2_gamma_noise,
    solve_werm,
)
from dpcore.owl.werm import werm_objective
from dpcore.owl.werm_release import RELEASE_TOL, sensitivity


def random_problem(rng, n=60, d=4, W=5.0):
    X = rng.uniform(-1, 1, (n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = rng.choice([-1.0, 1.0], n)
    w = rng.uniform(0, W, n)
    return X, y, w


def scipy_objective(loss, h):
    """The objective written independently of dpcore, for scipy."""

    def f(theta, X, y, w, gamma):
        z = y * (X @ theta)
        if loss == "huber":
            val = np.where(z > 1 + h, 0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
            d1 = np.where(z > 1 + h, 0, np.where(z < 1 - h, -1, -(1 + h - z) / (2 * h)))
        else:
            val, d1 = np.logaddexp(0, -z), -1 / (1 + np.exp(z))
        return w @ val + gamma / 2 * theta @ theta, X.T @ (w * y * d1) + gamma * theta

    return f


# ------------------------------------------------------------------------------ solver


@pytest.mark.parametrize("loss,h", [("huber", 0.5), ("huber", 0.05), ("logistic", 0.5)])
@pytest.mark.parametrize("seed", range(5))
def test_solver_reaches_scipy_optimum(loss, h, seed):
    rng = np.random.default_rng(seed)
    X, y, w = random_problem(rng)
    gamma = rng.uniform(0.5, 20)
    theta, info = solve_werm(X, y, w, gamma, loss, h)
    f = scipy_objective(loss, h)
    ref = minimize(
        f,
        np.zeros(X.shape[1]),
        args=(X, y, w, gamma),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11, "maxiter": 10_000},
    )
    assert info["grad_norm"] <= 1e-9
    # Strong convexity: ||theta - theta*|| <= ||grad F(theta)|| / gamma.
    assert np.linalg.norm(theta - ref.x) <= np.linalg.norm(ref.jac) / gamma + 1e-9
    assert f(theta, X, y, w, gamma)[0] <= ref.fun + 1e-10
    assert np.linalg.norm(f(theta, X, y, w, gamma)[1]) <= 1e-9


def test_batched_solve_equals_one_by_one():
    rng = np.random.default_rng(7)
    problems = [random_problem(rng) for _ in range(6)]
    X, y, w = (np.stack(p) for p in zip(*problems))
    gammas = np.array([0.5, 1, 2, 5, 10, 50])
    theta, info = solve_werm(X, y, w, gammas)
    assert theta.shape == (6, 4) and (info["grad_norm"] <= 1e-9).all()
    for b in range(6):
        single, _ = solve_werm(X[b], y[b], w[b], gammas[b])
        np.testing.assert_allclose(theta[b], single, atol=1e-10)


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_objective_gradient_and_hessian_against_finite_differences(loss):
    rng = np.random.default_rng(3)
    X, y, w = random_problem(rng, n=40, d=3)
    gamma = 2.0
    fun = lambda t: werm_objective(t[None], X[None], y[None], w[None], [gamma], loss)[0][0]  # noqa: E731
    grad = lambda t: werm_objective(t[None], X[None], y[None], w[None], [gamma], loss)[1][0]  # noqa: E731
    for _ in range(5):
        t = rng.normal(size=3) * 2
        assert check_grad(fun, grad, t, epsilon=1e-7) < 1e-5 * max(1, np.abs(grad(t)).max())
        hess = werm_objective(t[None], X[None], y[None], w[None], [gamma], loss)[2][0]
        fd = np.array([(grad(t + 1e-6 * e) - grad(t - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
        np.testing.assert_allclose(hess, fd, atol=1e-3 * max(1, np.abs(hess).max()))


def test_solver_warm_start_gives_the_same_minimiser():
    rng = np.random.default_rng(4)
    X, y, w = random_problem(rng)
    cold, _ = solve_werm(X, y, w, 3.0)
    warm, _ = solve_werm(X, y, w, 3.0, theta0=rng.normal(size=4) * 10)
    np.testing.assert_allclose(cold, warm, atol=1e-10)


def test_solver_reports_failure_instead_of_returning_an_inexact_minimiser():
    rng = np.random.default_rng(5)
    X, y, w = random_problem(rng)
    with pytest.raises(ConvergenceError, match="exact minimiser"):
        solve_werm(X, y, w, 1.0, max_iter=1, theta0=np.full(4, 50.0))


# ------------------------------------------------------------------------------ preprocessing


def test_scaling_puts_rows_in_unit_ball_and_unscaling_keeps_decisions():
    rng = np.random.default_rng(0)
    lower, upper = np.array([-5.0, 0.0, 10.0]), np.array([5.0, 2.0, 30.0])
    X = rng.uniform(lower - 2, upper + 2, (200, 3))  # some rows outside the bounds: clipped
    sc = FeatureScaling.from_bounds((lower, upper), 3)
    Xt = sc.transform(X)
    assert sc.d == 4 and np.linalg.norm(Xt, axis=1).max() <= 1 + 1e-12
    np.testing.assert_allclose(sc.scale, np.array([1, 5, 2, 30]) * 2.0)
    theta = rng.normal(size=4)
    intercept, coef = sc.to_original(theta)
    np.testing.assert_allclose(np.clip(X, lower, upper) @ coef + intercept, Xt @ theta, atol=1e-12)


def test_scaling_without_intercept():
    sc = FeatureScaling.from_bounds(([0, -1], [4, 1]), 2, fit_intercept=False)
    np.testing.assert_allclose(
        sc.transform(np.array([[4.0, -1.0]])), [[1 / np.sqrt(2), -1 / np.sqrt(2)]]
    )


def test_estimator_coefficients_are_in_original_units():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, (300, 2))
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(0, 1, 300) > 0, 1.0, -1.0)
    m = DPWeightedERM(epsilon=np.inf, gamma=1.0, feature_bounds=([0, 0], [10, 10])).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), X @ m.coef_ + m.intercept_, atol=1e-10)
    assert np.mean(m.predict(X) == y) > 0.8


# ------------------------------------------------------------------------------ weights


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_integer_weights_equal_repeated_rows(loss):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (30, 3))
    y = rng.choice([-1.0, 1.0], 30)
    counts = rng.integers(0, 4, 30)
    bounds = (-np.ones(3), np.ones(3))
    kw = dict(gamma=3.0, weight_bound=3.0, loss=loss, feature_bounds=bounds)
    weighted = DPWeightedERM(epsilon=np.inf, **kw).fit(X, y, counts)
    repeated = DPWeightedERM(epsilon=np.inf, **kw).fit(
        np.repeat(X, counts, 0), np.repeat(y, counts)
    )
    np.testing.assert_allclose(weighted.theta_, repeated.theta_, atol=1e-10)
    # With a finite epsilon the same seed draws the same noise: the releases agree too.
    a = DPWeightedERM(epsilon=1.0, rng=11, **kw).fit(X, y, counts)
    b = DPWeightedERM(epsilon=1.0, rng=11, **kw).fit(np.repeat(X, counts, 0), np.repeat(y, counts))
    np.testing.assert_allclose(a.theta_, b.theta_, atol=1e-10)


def test_weights_above_the_bound_are_clipped_with_a_warning():
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (20, 2)), np.tile([-1.0, 1.0], 10)
    w = np.full(20, 1.0)
    w[:3] = 9.0
    kw = dict(epsilon=np.inf, gamma=1.0, weight_bound=2.0, feature_bounds=(-1, 1))
    with pytest.warns(
        UserWarning,
        match="some sample_weight values exceed the weight bound W=2; they were clipped",
    ):
        clipped = DPWeightedERM(**kw).fit(X, y, w)
    np.testing.assert_allclose(
        clipped.theta_, DPWeightedERM(**kw).fit(X, y, np.minimum(w, 2.0)).theta_
    )


# ------------------------------------------------------------------------------ sensitivity


def designed_neighbours(W, n=8):
    """One record (x = 1, y = +1 or -1, weight W), the others weightless: theta moves by 2W/gamma."""
    X = np.zeros((n, 1))
    X[0] = 1.0
    y = np.tile([1.0, -1.0], n // 2)
    w = np.zeros(n)
    w[0] = W
    y_s, y_sp = y.copy(), y.copy()
    y_s[0], y_sp[0] = 1.0, -1.0
    return X, y_s, y_sp, w


@pytest.mark.parametrize("W,gamma", [(1.0, 4.0), (3.0, 20.0), (30.0, 150.0)])
def test_designed_neighbours_attain_the_sensitivity_bound(W, gamma):
    X, y_s, y_sp, w = designed_neighbours(W)
    kw = dict(
        epsilon=np.inf, gamma=gamma, weight_bound=W, fit_intercept=False, feature_bounds=([-1], [1])
    )
    a, b = DPWeightedERM(**kw).fit(X, y_s, w), DPWeightedERM(**kw).fit(X, y_sp, w)
    gap = np.linalg.norm(a.theta_ - b.theta_)
    assert gap == pytest.approx(2 * W / gamma, rel=1e-9)  # the bound 2W/gamma is tight
    # The released sensitivity adds the solver's slack, one RELEASE_TOL/gamma per dataset.
    assert a.sensitivity_ == (2 * W + 2 * RELEASE_TOL) / gamma
    assert gap < a.sensitivity_


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_random_neighbours_never_exceed_the_sensitivity_bound(loss):
    rng = np.random.default_rng(8)
    W, gamma, worst = 5.0, 2.0, 0.0
    for _ in range(300):
        n, d = rng.integers(2, 30), rng.integers(1, 5)
        X = rng.uniform(-1, 1, (n, d))
        X /= np.maximum(1, np.linalg.norm(X, axis=1, keepdims=True))
        y, w = rng.choice([-1.0, 1.0], n), rng.uniform(0, W, n)
        X2, y2, w2 = X.copy(), y.copy(), w.copy()
        X2[0] = rng.uniform(-1, 1, d)
        X2[0] /= max(1, np.linalg.norm(X2[0]))
        y2[0], w2[0] = -y[0], rng.choice([0.0, W])
        t1, _ = solve_werm(X, y, w, gamma, loss)
        t2, _ = solve_werm(X2, y2, w2, gamma, loss)
        worst = max(worst, np.linalg.norm(t1 - t2))
    assert worst <= sensitivity(W, gamma) * (1 + 1e-9)
    assert worst > 0.2 * sensitivity(W, gamma)  # the search found large moves


def test_C_options():
    X, y_s, _, w = designed_neighbours(2.0, n=10)
    kw = dict(
        epsilon=np.inf, gamma=4.0, weight_bound=2.0, fit_intercept=False, feature_bounds=([-1], [1])
    )
    assert DPWeightedERM(C=0.0, **kw).fit(X, y_s, w).sensitivity_ == pytest.approx(1.0)
    assert DPWeightedERM(C=0.5, **kw).fit(X, y_s, w).sensitivity_ == pytest.approx(4.5 / 4)
    assert DPWeightedERM(C="worst-case", **kw).fit(X, y_s, w).sensitivity_ == pytest.approx(
        (10 * 2 + 4) / 4
    )
    with pytest.raises(ValueError, match="C must be"):
        DPWeightedERM(C="big", **kw).fit(X, y_s, w)
    with pytest.raises(ValueError, match="C must be >= 0"):
        DPWeightedERM(C=-1.0, **kw).fit(X, y_s, w)


# ------------------------------------------------------------------------------ noise


def test_epsilon_infinity_is_the_nonprivate_fit():
    rng = np.random.default_rng(4)
    X, y, w = random_problem(rng)
    m = DPWeightedERM(
        epsilon=np.inf, gamma=2.0, weight_bound=5.0, feature_bounds=(-1, 1), fit_intercept=False
    ).fit(X, y, w)
    theta, _ = solve_werm(X / np.sqrt(4), y, w, 2.0)
    np.testing.assert_allclose(m.theta_, theta, atol=1e-12)


def test_estimator_adds_exactly_the_mechanism_noise():
    """White box: theta_ = exact minimiser + l2_gamma_noise(d, eps, (C + 2W)/gamma) from the same rng."""
    rng = np.random.default_rng(5)
    X, y, w = random_problem(rng)
    kw = dict(gamma=3.0, weight_bound=5.0, C=1.0, feature_bounds=(-1, 1))
    exact = DPWeightedERM(epsilon=np.inf, **kw).fit(X, y, w).theta_
    private = DPWeightedERM(epsilon=0.8, rng=99, **kw).fit(X, y, w)
    expected = exact + l2_gamma_noise(5, 0.8, (1.0 + 10.0 + 2 * RELEASE_TOL) / 3.0, rng=99)
    np.testing.assert_allclose(private.theta_, expected, atol=1e-12)


def test_a_solution_past_the_release_tolerance_is_never_released(monkeypatch):
    import dpcore.owl.werm_release as werm

    X, y, w = random_problem(np.random.default_rng(2))
    exact, info = solve_werm(X / 2, y, w, 3.0)
    monkeypatch.setattr(
        werm,
        "solve_werm",
        lambda *a, **k: (exact, {**info, "grad_norm": np.float64(2 * RELEASE_TOL)}),
    )
    with pytest.raises(ConvergenceError, match="release tolerance"):
        DPWeightedERM(epsilon=1.0, gamma=3.0, weight_bound=5.0, feature_bounds=(-1, 1)).fit(X, y, w)


def test_estimator_release_distribution_end_to_end():
    """Many fits through the public estimator: theta_ - theta_hat is Laplace(Delta/eps) for d = 1."""
    X, y_s, _, w = designed_neighbours(1.0)
    kw = dict(gamma=4.0, weight_bound=1.0, fit_intercept=False, feature_bounds=([-1], [1]))
    centre = DPWeightedERM(epsilon=np.inf, **kw).fit(X, y_s, w).theta_[0]
    gen = np.random.default_rng(6)
    draws = np.array(
        [DPWeightedERM(epsilon=2.0, rng=gen, **kw).fit(X, y_s, w).theta_[0] for _ in range(1500)]
    )
    assert stats.kstest(draws - centre, stats.laplace(scale=0.5 / 2.0).cdf).pvalue > 1e-3


def test_feature_bounds_from_data_warn_that_the_guarantee_is_void():
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([-1.0, -1.0, 1.0, 1.0])
    with pytest.warns(PrivacyWarning, match="voids the differential-privacy guarantee"):
        DPWeightedERM(epsilon=1.0, rng=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPWeightedERM(epsilon=np.inf).fit(X, y)  # no privacy claimed: no warning


# ------------------------------------------------------------------------------ validation

X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [0.2, 0.9]])
Y_OK = np.array([1.0, -1.0, 1.0, -1.0])
B_OK = (np.zeros(2), np.ones(2))


@pytest.mark.parametrize(
    "kwargs,X,y,w,exc,match",
    [
        ({"epsilon": 0.0}, X_OK, Y_OK, None, ValueError, "epsilon must be > 0"),
        ({"epsilon": -1.0}, X_OK, Y_OK, None, ValueError, "epsilon must be > 0"),
        ({"epsilon": np.nan}, X_OK, Y_OK, None, ValueError, "epsilon must be a number"),
        ({"epsilon": "1"}, X_OK, Y_OK, None, TypeError, "epsilon must be a real number"),
        ({"epsilon": -np.inf}, X_OK, Y_OK, None, ValueError, "epsilon must be finite"),
        ({"gamma": 0.0}, X_OK, Y_OK, None, ValueError, "gamma must be > 0"),
        ({"huber_h": -0.5}, X_OK, Y_OK, None, ValueError, "huber_h must be > 0"),
        ({"weight_bound": 0.0}, X_OK, Y_OK, None, ValueError, "weight_bound must be > 0"),
        ({"loss": "hinge"}, X_OK, Y_OK, None, ValueError, "loss must be one of"),
        ({}, X_OK, np.array([1.0, 0.0, 2.0, 0.0]), None, ValueError, "Only binary classification"),
        ({}, X_OK, np.array([1.0, 0.5, 1.0, 0.0]), None, ValueError, "Unknown label type"),
        ({}, X_OK[:, 0], Y_OK, None, ValueError, "X must be 2-D"),
        ({}, X_OK, Y_OK, np.zeros(4), ValueError, "sample_weight is zero for every row"),
        ({}, X_OK, np.ones(4), None, ValueError, "y contains only one class"),
        (
            {},
            X_OK,
            Y_OK,
            np.array([1.0, -0.1, 1.0, 1.0]),
            ValueError,
            "sample_weight must be non-negative",
        ),
        (
            {},
            X_OK,
            Y_OK,
            np.array([1.0, np.nan, 1.0, 1.0]),
            ValueError,
            "sample_weight contains 1 NaN",
        ),
        (
            {},
            np.array([[0.0, np.nan], [1, 0], [0, 1], [1, 1]]),
            Y_OK,
            None,
            ValueError,
            "X contains 1 NaN or infinite",
        ),
        (
            {},
            np.array([[0.0, np.inf], [1, 0], [0, 1], [1, 1]]),
            Y_OK,
            None,
            ValueError,
            "X contains 1 NaN or infinite",
        ),
        ({}, X_OK, Y_OK[:3], None, ValueError, "y has 3 entries but X has 4 rows"),
        ({}, X_OK, Y_OK, np.ones(5), ValueError, "sample_weight has 5 entries"),
        (
            {"feature_bounds": ([1, 0], [0, 1])},
            X_OK,
            Y_OK,
            None,
            ValueError,
            "lower bound 1 > upper bound 0",
        ),
        (
            {"feature_bounds": ([0, 0, 0], [1, 1, 1])},
            X_OK,
            Y_OK,
            None,
            ValueError,
            "feature_bounds must hold 2",
        ),
        ({"feature_bounds": 5}, X_OK, Y_OK, None, TypeError, "feature_bounds must be a pair"),
        ({}, [["a", "b"]] * 4, Y_OK, None, TypeError, "X must be a numeric"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, X, y, w, exc, match):
    params = {"epsilon": 1.0, "feature_bounds": B_OK, **kwargs}
    with pytest.raises(exc, match=match):
        DPWeightedERM(**params).fit(X, y, w)


def test_predict_checks_the_number_of_columns():
    m = DPWeightedERM(epsilon=np.inf, feature_bounds=B_OK).fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="expecting 2 features"):
        m.predict(np.ones((3, 3)))
    assert set(np.unique(m.predict(X_OK))) <= {-1, 1}


def test_unweighted_rows_respect_a_weight_bound_below_one():
    """Without sample_weight every row weighs 1; W < 1 must clip them, or the noise is too small."""
    X, y_s, y_sp, _ = designed_neighbours(1.0)
    kw = dict(
        epsilon=np.inf, gamma=4.0, weight_bound=0.1, fit_intercept=False, feature_bounds=([-1], [1])
    )
    with pytest.warns(UserWarning, match="clipped to W"):
        a = DPWeightedERM(**kw).fit(X, y_s)
    with pytest.warns(UserWarning, match="clipped to W"):
        b = DPWeightedERM(**kw).fit(X, y_sp)
    assert np.linalg.norm(a.theta_ - b.theta_) <= a.sensitivity_ * (1 + 1e-9)


def test_batch_from_gamma_alone_is_not_mistaken_for_one_problem():
    rng = np.random.default_rng(9)
    X, y, w = random_problem(rng)
    theta, info = solve_werm(X, y, w, np.array([1.0, 10.0, 100.0]))
    assert theta.shape == (3, 4) and info["n_iter"].shape == (3,)
    np.testing.assert_allclose(theta[1], solve_werm(X, y, w, 10.0)[0], atol=1e-10)


@pytest.mark.parametrize(
    "case",
    [
        "tiny h",
        "tiny gamma, separable",
        "huge gamma",
        "huge weights",
        "identical rows",
        "zero weights but one",
        "large n",
    ],
)
def test_solver_stress(case):
    rng = np.random.default_rng(12)
    X, y, w = random_problem(rng, n=300, d=3)
    gamma, h = 1.0, 0.5
    if case == "tiny h":
        h = 0.005
    elif case == "tiny gamma, separable":
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        gamma, h = 1e-3, 0.01
    elif case == "huge gamma":
        gamma = 1e5
    elif case == "huge weights":
        w = w * 1e5
    elif case == "identical rows":
        X = np.tile(X[:1], (300, 1))
    elif case == "zero weights but one":
        w = np.zeros(300)
        w[0] = 2.0
    elif case == "large n":
        X, y, w = random_problem(rng, n=100_000, d=3)
    theta, info = solve_werm(X, y, w, gamma, "huber", h)
    f = scipy_objective("huber", h)
    # First-order optimality from an independent gradient, relative to the problem's scale.
    assert np.linalg.norm(f(theta, X, y, w, gamma)[1]) <= max(1e-9, 1e-12 * w.sum())
