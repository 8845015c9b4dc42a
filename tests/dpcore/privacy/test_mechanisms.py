import numpy as np
import pytest
from scipy import stats

from dpcore import attacker_posterior_bound, l2_gamma_noise, laplace_noise
from dpcore.privacy.mechanisms import (
    expected_noise_radius,
    laplace_interval_halfwidth,
    output_perturbation,
)


def test_laplace_scale_and_infinity():
    x = laplace_noise(0.5, 2.0, 50_000, rng=0)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-3
    assert np.all(laplace_noise(np.inf, 2.0, 10, rng=0) == 0)
    assert np.all(laplace_noise(1.0, 0.0, 10, rng=0) == 0)  # zero sensitivity: the identity


@pytest.mark.parametrize(
    "eps,exc",
    [(0, ValueError), (-1, ValueError), (np.nan, ValueError), ("1", TypeError), (None, TypeError)],
)
def test_bad_epsilon(eps, exc):
    with pytest.raises(exc, match="epsilon"):
        laplace_noise(eps, 1.0)
    with pytest.raises(exc, match="epsilon"):
        l2_gamma_noise(3, eps, 1.0)


def test_negative_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_noise(1.0, -1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        l2_gamma_noise(2, 1.0, -1.0)


def test_attacker_posterior_bound():
    assert attacker_posterior_bound(0.5, np.log(3)) == pytest.approx(0.75)
    assert attacker_posterior_bound(0.5, 0.0) == pytest.approx(0.5)
    assert attacker_posterior_bound(0.01, 1000.0) == pytest.approx(1.0)
    # Posterior odds are exactly e^eps times the prior odds.
    p, e = 0.2, 1.3
    q = attacker_posterior_bound(p, e)
    assert q / (1 - q) == pytest.approx(np.exp(e) * p / (1 - p))


def test_epsilon_arrays_index_the_leading_axes():
    eps = np.array([0.1, 100.0, 1000.0])
    b = l2_gamma_noise(3, eps, 1.0, size=(3, 3000), rng=3)  # square-ish shapes must not transpose
    mean_radius = np.linalg.norm(b, axis=-1).mean(axis=1)
    np.testing.assert_allclose(mean_radius, 3 / eps, rtol=0.05)
    with pytest.raises(ValueError, match="leading axes"):
        l2_gamma_noise(3, np.array([0.1, 1.0]), 1.0, size=(3, 2))


@pytest.mark.parametrize("d", [1, 3, 5])
def test_noise_radius_is_gamma_d_rate_eps_over_delta(d):
    eps, delta = 0.7, 2.5
    b = l2_gamma_noise(d, eps, delta, size=20_000, rng=0)
    radius = np.linalg.norm(b, axis=1)
    assert stats.kstest(radius, stats.gamma(a=d, scale=delta / eps).cdf).pvalue > 1e-3
    # The KS test can tell a wrong rate: the same draws against rate 1.1 * eps / delta fail.
    assert stats.kstest(radius, stats.gamma(a=d, scale=delta / (1.1 * eps)).cdf).pvalue < 1e-6
    # The closed form beside the sampler is the mean of that radius.
    se = radius.std(ddof=1) / np.sqrt(radius.size)
    assert abs(radius.mean() - expected_noise_radius(d, eps, delta)) < 4 * se


@pytest.mark.parametrize("d", [2, 3, 6])
def test_noise_direction_is_uniform_on_the_sphere(d):
    b = l2_gamma_noise(d, 1.0, 1.0, size=20_000, rng=1)
    u = b / np.linalg.norm(b, axis=1, keepdims=True)
    # For a uniform direction, u_1^2 ~ Beta(1/2, (d - 1)/2), and every axis alike.
    for j in range(d):
        assert stats.kstest(u[:, j] ** 2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue > 1e-3
    assert np.abs(u.mean(axis=0)).max() < 4 / np.sqrt(20_000)


def test_noise_vectorizes_over_epsilon_and_infinity_adds_nothing():
    b = l2_gamma_noise(
        4, np.array([[np.inf], [1.0]]), np.array([[1.0], [1.0]]), size=(2, 500), rng=2
    )
    assert b.shape == (2, 500, 4)
    assert np.all(b[0] == 0) and np.all(np.linalg.norm(b[1], axis=1) > 0)


def test_output_perturbation_adds_l2_gamma_noise_to_each_minimiser():
    theta_hat = np.arange(12.0).reshape(2, 2, 3)
    released = output_perturbation(theta_hat, 0.8, 1.5, rng=9)
    np.testing.assert_array_equal(
        released, theta_hat + l2_gamma_noise(3, 0.8, 1.5, size=(2, 2), rng=9)
    )
    np.testing.assert_array_equal(output_perturbation(theta_hat, np.inf, 1.5, rng=9), theta_hat)


def test_laplace_interval_halfwidth_covers_the_stated_share():
    t = laplace_interval_halfwidth(0.5, 2.0, level=0.9)
    assert t == pytest.approx(2.0 / 0.5 * np.log(10))
    assert stats.laplace(scale=4.0).cdf(t) - stats.laplace(scale=4.0).cdf(-t) == pytest.approx(0.9)
    assert laplace_interval_halfwidth(1.0, 1.0) == pytest.approx(
        np.log(20)
    )  # the overview's ±ln 20 / ε
    assert (
        laplace_interval_halfwidth(np.inf, 1.0) == 0.0
        and expected_noise_radius(3, np.inf, 1.0) == 0.0
    )
    with pytest.raises(ValueError, match="level must be < 1"):
        laplace_interval_halfwidth(1.0, 1.0, level=1.0)


def test_attacker_posterior_bound_at_the_edges():
    with np.errstate(all="raise"):  # log-odds: no overflow, no NaN
        np.testing.assert_array_equal(attacker_posterior_bound([0.0, 1.0], 1000.0), [0.0, 1.0])
        np.testing.assert_array_equal(attacker_posterior_bound([0.0, 1.0], np.inf), [0.0, 1.0])
        assert attacker_posterior_bound(1e-12, 1000.0) == pytest.approx(1.0)
        assert attacker_posterior_bound(0.5, 0.0) == 0.5


@pytest.mark.parametrize("d,k", [(5, 2), (3, 1), (6, 4)])
def test_expected_length_of_the_noise_on_k_coordinates(d, k):
    b = l2_gamma_noise(d, 0.5, 2.0, size=40_000, rng=12)
    length = np.linalg.norm(b[:, :k], axis=1)
    se = length.std(ddof=1) / np.sqrt(length.size)
    assert abs(length.mean() - expected_noise_radius(d, 0.5, 2.0, k=k)) < 4 * se
    assert expected_noise_radius(d, 0.5, 2.0, k=d) == expected_noise_radius(d, 0.5, 2.0)
