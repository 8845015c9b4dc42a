import numpy as np
import pytest
from scipy import stats

from dpcore import attacker_posterior_bound, l2_gamma_noise, laplace_noise


def test_laplace_scale_and_infinity():
    x = laplace_noise(0.5, 2.0, 50_000, rng=0)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-3
    assert np.all(laplace_noise(np.inf, 2.0, 10, rng=0) == 0)
    assert np.all(laplace_noise(1.0, 0.0, 10, rng=0) == 0)  # zero sensitivity: the identity


@pytest.mark.parametrize("eps,exc", [(0, ValueError), (-1, ValueError), (np.nan, ValueError),
                                     ("1", TypeError), (None, TypeError)])
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
