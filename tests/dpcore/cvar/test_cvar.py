"""Exact and private scalar CVaR (spec cvar.md §1, §2, §5.1-5.3, §6)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

import dpcore.cvar.estimation as cvar_mod
from dpcore import empirical_cvar, private_cvar
from dpcore.cvar.constructions import (
    demo_losses,
    demo_population_cvar,
    hard_two_point,
    tail_embedding,
)
from dpcore.cvar.estimation import (
    cvar_sensitivity,
    empirical_var,
    laplace_privacy_error,
    laplace_release,
    private_quantile,
    ru_objective,
    weighted_cvar,
)
from dpcore.cvar.rates import (
    effective_sizes,
    scalar_cvar_rate,
    scalar_statistical_constant,
    two_point_lower_bound,
)
from dpcore.privacy.audit import audit_epsilon

ALPHA = 1e-3


def brute_force_cvar(x, tau):
    """min over eta in {x_i} of the RU objective: exact for a convex piecewise-linear function."""
    x = np.asarray(x, dtype=float)
    return min(e + np.maximum(x - e, 0).sum() / (x.size * tau) for e in x)


def lp_cvar(x, tau):
    """The dual LP max {p.x : 0 <= p_i <= 1/(n tau), sum p = 1} solved by HiGHS."""
    n = len(x)
    res = linprog(
        -np.asarray(x),
        A_eq=np.ones((1, n)),
        b_eq=[1.0],
        bounds=[(0, 1 / (n * tau))] * n,
        method="highs",
    )
    return -res.fun


def random_cases(count, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 61))
        kind = rng.integers(3)
        x = (
            rng.random(n)
            if kind == 0
            else rng.exponential(size=n)
            if kind == 1
            else rng.integers(0, 4, n).astype(float)
        )
        tau = rng.choice([rng.random(), 1 / n, 0.5 / n, 3 / n, 1.0])
        yield x, float(min(max(tau, 1e-3), 1.0))


@pytest.mark.parametrize(
    "tau,rho,eta", [(0.1, 5, 5), (0.2, 5, 4), (0.3, 14 / 3, 4), (0.5, 4.2, 3), (1.0, 3, 1)]
)
def test_worked_example(tau, rho, eta):
    x = [5, 1, 4, 2, 3]
    assert empirical_cvar(x, tau) == pytest.approx(rho, abs=1e-12)
    assert empirical_var(x, tau) == pytest.approx(eta, abs=1e-12)


def test_selection_equals_brute_force_sort_and_lp():
    for i, (x, tau) in enumerate(random_cases(1500)):
        rho = empirical_cvar(x, tau)
        assert abs(rho - brute_force_cvar(x, tau)) < 1e-12, (x, tau)
        m, k = len(x) * tau, int(np.floor(len(x) * tau))
        s = np.sort(x)[::-1]
        by_sort = s.mean() if k >= len(x) else (s[:k].sum() + (m - k) * s[k]) / m
        assert abs(rho - by_sort) < 1e-12
        # The canonical VaR minimises the RU objective.
        assert abs(ru_objective(empirical_var(x, tau), x, tau) - rho) < 1e-12
        if i % 10 == 0:
            assert abs(rho - lp_cvar(x, tau)) < 1e-9  # HiGHS' own tolerance


def test_special_cases_and_top_ceil_is_different():
    x = np.array([3.0, 9.0, 1.0, 7.0])
    assert empirical_cvar(x, 0.1) == 9.0  # n tau < 1: the maximum
    assert empirical_cvar(x, 0.5) == 8.0  # integer n tau: the top-k mean
    assert empirical_cvar(x, 1.0) == x.mean()
    # n tau = 1.2: the fractional weight is not "mean of the top ceil(n tau)".
    assert empirical_cvar(x, 0.3) == pytest.approx((9 + 0.2 * 7) / 1.2)
    assert empirical_cvar(x, 0.3) != pytest.approx((9 + 7) / 2)


def test_vectorised_rows_equal_one_at_a_time():
    X = np.random.default_rng(1).random((7, 33))
    for tau in (0.01, 0.1, 0.37, 1.0):
        np.testing.assert_allclose(
            empirical_cvar(X, tau), [empirical_cvar(r, tau) for r in X], rtol=0, atol=1e-15
        )
        np.testing.assert_allclose(empirical_var(X, tau), [empirical_var(r, tau) for r in X])


def test_ru_grid_minimum_is_never_below_the_exact_value():
    x = np.random.default_rng(2).exponential(size=200)
    grid = np.linspace(0, x.max(), 5001)
    assert ru_objective(grid, x, 0.07).min() >= empirical_cvar(x, 0.07) - 1e-12


losses = arrays(float, st.integers(1, 30), elements=st.floats(0, 10, allow_subnormal=False))


@settings(max_examples=60, deadline=None)
@given(losses, st.lists(st.integers(0, 4), min_size=30, max_size=30), st.floats(0.01, 1.0))
def test_integer_weights_equal_repeated_rows(x, counts, tau):
    w = np.asarray(counts[: x.size], dtype=float)
    if w.sum() == 0:
        w[0] = 1.0
    expected = empirical_cvar(np.repeat(x, w.astype(int)), tau)
    assert weighted_cvar(x, w, tau) == pytest.approx(expected, abs=1e-9)
    assert weighted_cvar(x, np.ones(x.size), tau) == pytest.approx(empirical_cvar(x, tau), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(losses, st.floats(0.01, 1.0), st.floats(-5, 5), st.floats(0.1, 10))
def test_translation_and_scale_equivariance(x, tau, shift, scale):
    rho = empirical_cvar(x, tau)
    assert empirical_cvar(scale * x + shift, tau) == pytest.approx(scale * rho + shift, abs=1e-9)
    assert x.max() + 1e-12 >= rho >= x.mean() - 1e-12


@pytest.mark.parametrize(
    "n,tau,expected", [(100, 0.05, 0.2), (100, 0.005, 1.0), (1000, 0.1, 0.01), (7, 0.3, 0.47619)]
)
def test_sensitivity_attained_on_the_worst_pair(n, tau, expected):
    x = np.zeros(n)
    xp = x.copy()
    xp[0] = 1.0
    gap = empirical_cvar(xp, tau) - empirical_cvar(x, tau)
    assert gap == pytest.approx(cvar_sensitivity(n, tau, 1.0), abs=1e-12)
    assert gap == pytest.approx(expected, abs=1e-5)


def test_no_random_neighbour_exceeds_the_sensitivity():
    rng = np.random.default_rng(3)
    for n, tau in [(20, 0.05), (20, 0.3), (50, 0.011), (9, 1.0)]:
        X = rng.random((2000, n)) * (rng.random((2000, 1)) < 0.5) + (rng.random((2000, n)) < 0.2)
        X = np.clip(X, 0, 1)
        Xp = X.copy()
        Xp[:, rng.integers(n)] = rng.random(2000)
        gaps = np.abs(empirical_cvar(X, tau) - empirical_cvar(Xp, tau))
        assert gaps.max() <= cvar_sensitivity(n, tau, 1.0) + 1e-12


# --------------------------------------------------------------------------------------------
# Private CVaR


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(tau=0.0), ValueError, "tau"),
        (dict(tau=1.5), ValueError, "tau"),
        (dict(tau=np.nan), ValueError, "tau"),
        (dict(bound=0.0), ValueError, "bound"),
        (dict(bound=-1.0), ValueError, "bound"),
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(epsilon="1"), TypeError, "epsilon"),
        (dict(x=[]), ValueError, "x"),
        (dict(x=[0.1, np.nan]), ValueError, "x"),
        (dict(x=[["a"]]), TypeError, "x"),
        (dict(method="smooth"), ValueError, "method"),
    ],
)
def test_private_cvar_validation(kwargs, exc, word):
    args = dict(x=[0.1, 0.5, 0.9], tau=0.5, epsilon=1.0, bound=1.0) | kwargs
    with pytest.raises(exc, match=word):
        private_cvar(**args)


def test_validation_messages_name_the_value():
    with pytest.raises(ValueError, match=r"tau must be <= 1.0, got 1.5"):
        empirical_cvar([1.0], 1.5)
    with pytest.raises(ValueError, match=r"x: non-finite values present"):
        empirical_cvar([1.0, np.nan], 0.5)


def test_non_finite_message_says_nothing_about_the_data():
    """Neither the count nor the position of the bad values: on uploaded data both leak."""
    messages = set()
    for x in ([np.nan, 1.0, 1.0], [1.0, 1.0, np.inf], [np.nan, -np.inf, np.nan]):
        with pytest.raises(ValueError) as err:
            empirical_cvar(x, 0.5)
        messages.add(str(err.value))
    assert messages == {"x: non-finite values present (NaN or infinite)"}


def test_records_are_clipped_to_the_public_bound():
    # Without the per-record clip a loss of 10 would move the release by 10/(n tau) > Delta.
    x, xp = np.zeros(20), np.zeros(20)
    xp[0] = 10.0
    r, rp = private_cvar(x, 0.5, np.inf, 1.0), private_cvar(xp, 0.5, np.inf, 1.0)
    assert rp - r == pytest.approx(cvar_sensitivity(20, 0.5, 1.0))
    assert private_cvar(np.full(5, -3.0), 0.5, np.inf, 1.0) == 0.0


def test_release_is_in_range_and_rows_get_independent_noise():
    X = np.tile(np.linspace(0, 0.5, 50), (1000, 1))
    out = private_cvar(X, 0.1, 2.0, 1.0, rng=0)
    assert out.shape == (1000,) and out.min() >= 0 and out.max() <= 1
    assert np.unique(out).size > 500
    assert private_cvar(X[0], 0.1, 0.5, 1.0, rng=7) == private_cvar(X[0], 0.1, 0.5, 1.0, rng=7)


@pytest.mark.parametrize("r", [0.0, 0.05, 0.5, 0.97])
def test_exact_privacy_error_matches_monte_carlo(r):
    n, tau, eps = 40, 0.05, 0.5  # b = 0.1: the clip at 0 and 1 matters near the ends
    draws = np.abs(laplace_release(np.full(400_000, r), n, tau, eps, 1.0, rng=4) - r)
    se = draws.std() / np.sqrt(draws.size)
    assert laplace_privacy_error(r, n, tau, eps, 1.0) == pytest.approx(draws.mean(), abs=4 * se)


def log_slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def test_privacy_part_has_slope_minus_one():
    """Real arrays through private_cvar: E|rho_tilde - rho_hat| against epsilon n tau in [10, 1e3]."""
    n, tau = 1000, 0.1
    x = np.full((4000, n), 0.5)
    eps = np.geomspace(0.1, 10, 5)
    err = [np.abs(private_cvar(x, tau, e, 1.0, rng=i) - 0.5).mean() for i, e in enumerate(eps)]
    assert log_slope(eps * n * tau, err) == pytest.approx(-1.0, abs=0.05)


def bernoulli_cvar(K, n, tau, bound=1.0):
    """Shortcut for data with K values equal to B and the rest 0: B min(K, m)/m, B 1[K > 0] if m < 1."""
    m = n * tau
    return bound * (K > 0) if m < 1 else bound * np.minimum(K, m) / m


def test_bernoulli_shortcut_equals_the_estimator():
    rng = np.random.default_rng(5)
    for n, tau in [(50, 0.1), (50, 0.013), (37, 0.25), (10, 1.0)]:
        X = (rng.random((300, n)) < tau / 2).astype(float)
        np.testing.assert_allclose(
            empirical_cvar(X, tau), bernoulli_cvar(X.sum(1), n, tau), atol=1e-12
        )


def test_statistical_part_has_slope_minus_half_and_the_analytic_constant():
    rng = np.random.default_rng(6)
    tau, reps = 0.1, 40_000
    m = np.geomspace(50, 5e4, 7)
    n = (m / tau).astype(int)
    err = np.array(
        [np.abs(bernoulli_cvar(rng.binomial(k, tau / 2, reps), k, tau) - 0.5).mean() for k in n]
    )
    assert log_slope(n * tau, err) == pytest.approx(-0.5, abs=0.05)
    # sqrt(n tau) E|err| -> 0.557 at large n tau; Monte-Carlo SE of each mean is about 0.4%.
    assert np.sqrt(n[-1] * tau) * err[-1] == pytest.approx(
        scalar_statistical_constant(tau), rel=0.03
    )


def test_total_error_stays_in_the_theta_band():
    rng = np.random.default_rng(7)
    ratios = []
    for n in (1e3, 1e4, 1e5):
        for tau in (0.01, 0.05, 0.2):
            for eps in (0.01, 0.03, 0.1, 0.3, 1.0):
                K = rng.binomial(int(n), tau / 2, 20_000)
                release = laplace_release(
                    bernoulli_cvar(K, int(n), tau), int(n), tau, eps, 1.0, rng
                )
                ratios.append(np.abs(release - 0.5).mean() / scalar_cvar_rate(n, tau, eps))
    assert 0.25 <= min(ratios) and max(ratios) <= 1.2


def test_two_point_lower_bound_is_respected_at_a_constant_ratio():
    rng = np.random.default_rng(8)
    ratios = []
    for n, tau, eps in [(1000, 0.05, 1.0), (1e4, 0.01, 0.5), (1e4, 0.2, 0.1), (1e5, 0.05, 0.3)]:
        n = int(n)
        hard = hard_two_point(n, tau, eps)
        r0 = laplace_release(np.zeros(40_000), n, tau, eps, 1.0, rng)
        K = rng.binomial(n, hard.p, 40_000)
        r1 = laplace_release(bernoulli_cvar(K, n, tau), n, tau, eps, 1.0, rng)
        worst = max(np.abs(r0).mean(), np.abs(r1 - hard.gap).mean())
        ratios.append(worst / two_point_lower_bound(n, tau, eps))
    assert min(ratios) > 1
    assert max(ratios) / min(ratios) < 1.5  # the same order in (n, tau, epsilon)


def test_effective_sizes():
    m, em = effective_sizes(1000, 0.1, 0.5)
    assert (m, em) == (pytest.approx(100), pytest.approx(50))


@pytest.mark.parametrize("tau", [0.1, 0.5])
def test_tail_embedding_turns_cvar_into_a_mean(tau):
    a = np.random.default_rng(9).beta(2, 5, 400_000)
    loss = tail_embedding(a, tau, rng=10)
    # Mean of about n tau values of Beta(2, 5) (sd 0.16): SE <= 0.16 / sqrt(4e4) = 8e-4.
    assert empirical_cvar(loss, tau) == pytest.approx(2 / 7, abs=5e-3)


@pytest.mark.parametrize("kind", ["uniform", "beta", "two-point", "heavy-tailed"])
def test_demo_losses_have_their_population_cvar(kind):
    x = demo_losses(kind, 400_000, 2.0, p=0.05, rng=11)
    assert x.min() >= 0 and x.max() <= 2.0
    assert empirical_cvar(x, 0.1) == pytest.approx(
        demo_population_cvar(kind, 0.1, 2.0, p=0.05), abs=0.01
    )


def test_private_quantile_is_near_the_quantile():
    x = np.random.default_rng(12).random((200, 2000))
    q = private_quantile(x, 0.9, 1.0, 1.0, rng=13)
    assert np.abs(q - 0.9).mean() < 0.01
    assert private_quantile(np.linspace(0, 1, 101), 0.5, np.inf, 1.0) == pytest.approx(
        0.5, abs=0.01
    )


def test_instance_adaptive_helps_on_concentrated_data_and_hurts_on_the_hard_instance():
    n, tau, eps, reps = 100_000, 0.01, 0.1, 40
    beta = demo_losses("beta", (reps, n), rng=14)
    truth = demo_population_cvar("beta", tau)
    plain = np.abs(private_cvar(beta, tau, eps, 1.0, rng=15) - truth).mean()
    adaptive = np.abs(
        private_cvar(beta, tau, eps, 1.0, rng=16, method="instance-adaptive") - truth
    ).mean()
    assert adaptive < 0.7 * plain
    n, tau, eps = 5000, 0.05, 0.2
    hard = demo_losses("two-point", (reps, n), p=tau / 2, rng=17)
    plain = np.abs(private_cvar(hard, tau, eps, 1.0, rng=18) - 0.5).mean()
    adaptive = np.abs(
        private_cvar(hard, tau, eps, 1.0, rng=19, method="instance-adaptive") - 0.5
    ).mean()
    assert adaptive > 2 * plain


# --------------------------------------------------------------------------------------------
# Empirical DP audits (spec §6)


def cvar_sampler(x, tau, eps, chunk=100_000, **kw):
    """Draw private_cvar on the fixed dataset x, ``size`` times, vectorised by chunks."""

    def sample(size, rng):
        return np.concatenate(
            [
                private_cvar(
                    np.broadcast_to(x, (min(chunk, size - i), x.size)), tau, eps, 1.0, rng, **kw
                )
                for i in range(0, size, chunk)
            ]
        )

    return sample


def worst_pair(n):
    x, xp = np.zeros(n), np.zeros(n)
    xp[0] = 1.0
    return x, xp


def test_laplace_plugin_passes_the_audit():
    x, xp = worst_pair(100)
    ok = audit_epsilon(
        cvar_sampler(x, 0.05, 1.0), cvar_sampler(xp, 0.05, 1.0), 1.0, 1_000_000, alpha=ALPHA, rng=20
    )
    assert ok.passed and ok.epsilon_lb > 0.85


@pytest.mark.parametrize(
    "broken_sensitivity,lb",
    [
        (lambda n, tau, bound: bound / n, 5.0),  # forgets the 1/tau
        (lambda n, tau, bound: bound * min(1.0, 1.0 / (n * tau)) / 1.5, 1.2),  # noise too small
    ],
)
def test_audit_rejects_a_broken_laplace_plugin(monkeypatch, broken_sensitivity, lb):
    monkeypatch.setattr(cvar_mod, "cvar_sensitivity", broken_sensitivity)
    x, xp = worst_pair(100)
    res = audit_epsilon(
        cvar_sampler(x, 0.05, 1.0), cvar_sampler(xp, 0.05, 1.0), 1.0, 1_000_000, alpha=ALPHA, rng=21
    )
    assert not res.passed and res.epsilon_lb > lb


def test_instance_adaptive_passes_the_audit():
    # nontrivial quantiles: most records spread in [0, 1], the neighbours differ in one record.
    x = np.linspace(0, 1, 40)
    xp = x.copy()
    xp[0] = 1.0
    ok = audit_epsilon(
        cvar_sampler(x, 0.1, 1.0, method="instance-adaptive"),
        cvar_sampler(xp, 0.1, 1.0, method="instance-adaptive"),
        1.0,
        400_000,
        alpha=ALPHA,
        rng=22,
    )
    assert ok.passed
