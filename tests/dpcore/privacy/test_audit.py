"""Empirical DP audits: each passes for the true mechanism and rejects a deliberately broken twin."""

import numpy as np
import pytest
from scipy import stats

from dpcore import DPWeightedERM, l2_gamma_noise, laplace_noise
from dpcore.privacy.audit import audit_epsilon, clopper_pearson_lower, clopper_pearson_upper

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
    ok = audit_epsilon(
        laplace_count(0.0, eps), laplace_count(1.0, eps), eps, 1_000_000, alpha=ALPHA, rng=0
    )
    assert ok.passed and ok.epsilon_lb > 0.85  # near-tight: the audit can see the privacy loss
    broken = audit_epsilon(
        laplace_count(0.0, eps, 0.5),
        laplace_count(1.0, eps, 0.5),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=1,
    )
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
    kw = dict(
        gamma=4.0, weight_bound=1.0, fit_intercept=False, feature_bounds=(-np.ones(p), np.ones(p))
    )
    fit = DPWeightedERM(epsilon=np.inf, **kw).fit(X, y, w)
    theta_hat, delta = fit.theta_, fit.sensitivity_ * noise_scale
    return lambda size, rng: (theta_hat + l2_gamma_noise(p, eps, delta, size, rng))[:, 0]


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_dp_werm_release_passes_and_half_noise_fails(eps):
    ok = audit_epsilon(
        werm_release(1.0, eps), werm_release(-1.0, eps), eps, 1_000_000, alpha=ALPHA, rng=2
    )
    assert ok.passed and ok.epsilon_lb > 0.8 * eps
    broken = audit_epsilon(
        werm_release(1.0, eps, 0.5),
        werm_release(-1.0, eps, 0.5),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=3,
    )
    assert not broken.passed


def test_dp_werm_audit_in_three_dimensions_projected_on_a_fixed_direction():
    eps = 1.0
    ok = audit_epsilon(
        werm_release(1.0, eps, d_extra=2),
        werm_release(-1.0, eps, d_extra=2),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=4,
    )
    assert ok.passed
    broken = audit_epsilon(
        werm_release(1.0, eps, 0.4, d_extra=2),
        werm_release(-1.0, eps, 0.4, d_extra=2),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=5,
    )
    assert not broken.passed


def test_false_alarm_rate_of_a_correct_mechanism_is_at_most_alpha():
    """200 seeded audits of the exact Laplace mechanism at alpha = 0.05: at most 5% false alarms.

    A false alarm is a lower bound above the true epsilon. Under the union bound each audit
    raises one with probability at most alpha, so 200 audits raise more than 20 with
    probability below 1.2%; dropping the multiple-testing correction raises far more.
    """
    eps, alpha, audits = 1.0, 0.05, 200
    gen = np.random.default_rng(2026)
    alarms = sum(
        not audit_epsilon(
            laplace_count(0.0, eps), laplace_count(1.0, eps), eps, 20_000, alpha=alpha, rng=gen
        ).passed
        for _ in range(audits)
    )
    assert alarms <= stats.binom.ppf(0.99, audits, alpha)


def test_the_estimate_uses_only_samples_the_selection_did_not_see():
    """A sampler whose first half is wildly non-private and whose second half is identical on
    both sides: an audit that reuses its selection samples would report a huge epsilon."""
    calls = {"s": 0, "sp": 0}

    def sampler(side, shift):
        def draw(size, rng):
            calls[side] += 1
            first = calls[side] == 1
            return rng.normal(shift if first else 0.0, 1.0, size)

        return draw

    res = audit_epsilon(sampler("s", 0.0), sampler("sp", 8.0), 1.0, 200_000, alpha=0.05, rng=7)
    assert calls == {"s": 2, "sp": 2}
    assert res.epsilon_lb <= 0.0  # the fresh halves are identical: no privacy loss is seen


def test_every_event_is_bounded_at_the_union_bound_level():
    """Randomized response with exact counts: the audit's number is the Clopper-Pearson ratio
    at level alpha / (2 * #events), by hand (two thresholds, four events each)."""
    half, k, kp, alpha = 10_000, 7_311, 2_689, 0.05  # about e^1 : 1 odds, as at epsilon = 1
    ones = lambda count: lambda size, rng: (np.arange(size) < count).astype(float)  # noqa: E731
    res = audit_epsilon(ones(k), ones(kp), 1.0, 2 * half, alpha=alpha, rng=0)
    a = alpha / (2 * 4 * 2)  # thresholds {0, 1}; {o > 1} is empty on both sides
    lower = stats.beta.ppf(a, k, half - k + 1)
    upper = stats.beta.ppf(1 - a, kp + 1, half - kp)
    assert res.epsilon_lb == pytest.approx(np.log(lower / upper), rel=1e-9)


@pytest.mark.parametrize("k,n", [(0, 20), (1, 20), (7, 20), (20, 20), (480, 500)])
def test_one_clopper_pearson_pinned_to_scipy_binomtest(k, n):
    """The audit's interval and the bound measurement's coverage are scipy's exact interval."""
    from scipy.stats import binomtest

    from dpcore.privacy.audit import clopper_pearson_lower, clopper_pearson_upper
    from dpcore.theory.measurement import coverage

    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    assert float(clopper_pearson_lower(k, n, 0.025)) == pytest.approx(ci.low, abs=1e-12)
    assert float(clopper_pearson_upper(k, n, 0.025)) == pytest.approx(ci.high, abs=1e-12)
    got = coverage(np.arange(n) < k)
    assert (got["lo"], got["hi"]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_clopper_pearson_with_effective_counts_is_the_beta_quantile():
    """Clustered coverage passes fractional (effective) counts: the bounds stay the exact beta
    quantiles, including counts below 1 and within 1 of n (a max(k, 1) would break both)."""
    from dpcore.privacy.audit import clopper_pearson_lower, clopper_pearson_upper

    for k, n in [(0.4, 10.3), (2.5, 10.3), (9.9, 10.3)]:
        assert float(clopper_pearson_lower(k, n, 0.025)) == pytest.approx(
            stats.beta.ppf(0.025, k, n - k + 1)
        )
        assert float(clopper_pearson_upper(k, n, 0.025)) == pytest.approx(
            stats.beta.ppf(0.975, k + 1, n - k)
        )
