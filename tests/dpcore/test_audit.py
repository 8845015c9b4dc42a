"""Empirical DP audits: each passes for the true mechanism and rejects a deliberately broken twin."""

import numpy as np
import pytest
from scipy import stats

from dpcore import DPWeightedERM, l2_gamma_noise, laplace_noise
from dpcore.audit import audit_epsilon, clopper_pearson_lower, clopper_pearson_upper

ALPHA = 1e-3  # false-alarm probability of each audit of a correct mechanism


def test_clopper_pearson_against_scipy():
    for k, n in [(0, 50), (3, 50), (50, 50), (400, 1000)]:
        lo, hi = clopper_pearson_lower(k, n, 0.01), clopper_pearson_upper(k, n, 0.01)
        assert lo == (0.0 if k == 0 else pytest.approx(stats.beta.ppf(0.01, k, n - k + 1)))
        assert hi == (1.0 if k == n else pytest.approx(stats.beta.ppf(0.99, k + 1, n - k)))


def laplace_count(true_value, eps, sensitivity=1.0):
    return lambda size, rng: true_value + laplace_noise(eps, sensitivity, size, rng)


def test_laplace_mechanism_passes_and_a_broken_twin_fails():
    eps = 1.0
    ok = audit_epsilon(laplace_count(0.0, eps), laplace_count(1.0, eps), eps, 1_000_000, alpha=ALPHA, rng=0)
    assert ok.passed and ok.epsilon_lb > 0.85  # near-tight: the audit can see the privacy loss
    broken = audit_epsilon(laplace_count(0.0, eps, 0.5), laplace_count(1.0, eps, 0.5), eps, 1_000_000,
                           alpha=ALPHA, rng=1)
    assert not broken.passed and broken.epsilon_lb > 1.5


def werm_release(y0, eps, noise_scale=1.0, d_extra=0):
    """DP-wERM on the designed neighbours: the only weighted record is (x = 1, y = y0, w = W).

    Returns a sampler of the released coefficient projected on the first axis: the estimator
    supplies the exact minimiser and the sensitivity; the batch of releases adds noise exactly
    as the estimator does (see test_werm.test_estimator_adds_exactly_the_mechanism_noise).
    ``noise_scale`` < 1 is the broken twin.
    """
    n, p = 10, 1 + d_extra
    X = np.zeros((n, p))
    X[0, 0] = 1.0
    y = np.tile([1.0, -1.0], n // 2)
    y[0] = y0
    w = np.zeros(n)
    w[0] = 1.0
    kw = dict(gamma=4.0, weight_bound=1.0, fit_intercept=False, feature_bounds=(-np.ones(p), np.ones(p)))
    fit = DPWeightedERM(epsilon=np.inf, **kw).fit(X, y, w)
    theta_hat, delta = fit.theta_, fit.sensitivity_ * noise_scale
    return lambda size, rng: (theta_hat + l2_gamma_noise(p, eps, delta, size, rng))[:, 0]


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_dp_werm_release_passes_and_half_noise_fails(eps):
    ok = audit_epsilon(werm_release(1.0, eps), werm_release(-1.0, eps), eps, 1_000_000, alpha=ALPHA, rng=2)
    assert ok.passed and ok.epsilon_lb > 0.8 * eps
    broken = audit_epsilon(werm_release(1.0, eps, 0.5), werm_release(-1.0, eps, 0.5), eps, 1_000_000,
                           alpha=ALPHA, rng=3)
    assert not broken.passed


def test_dp_werm_audit_in_three_dimensions_projected_on_a_fixed_direction():
    eps = 1.0
    ok = audit_epsilon(werm_release(1.0, eps, d_extra=2), werm_release(-1.0, eps, d_extra=2), eps,
                       1_000_000, alpha=ALPHA, rng=4)
    assert ok.passed
    broken = audit_epsilon(werm_release(1.0, eps, 0.4, d_extra=2), werm_release(-1.0, eps, 0.4, d_extra=2),
                           eps, 1_000_000, alpha=ALPHA, rng=5)
    assert not broken.passed
