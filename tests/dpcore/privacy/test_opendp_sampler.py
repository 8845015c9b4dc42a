"""OpenDP's floating-point-safe Laplace sampler has numpy's law (KS), and edge cases.

OpenDP draws from the operating system's randomness and takes no seed, so its side of each KS
test is not reproducible: each test fails a correct sampler with probability at most P_MIN.
"""

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy.mechanisms import laplace_noise, opendp_laplace_noise, sample_laplace

pytest.importorskip("opendp")

P_MIN = 1e-4
N = 20_000


@pytest.mark.parametrize("epsilon, sensitivity", [(0.5, 2.0), (3.0, 0.01)])
def test_opendp_and_numpy_laplace_have_the_same_law(epsilon, sensitivity):
    scale = sensitivity / epsilon
    exact = opendp_laplace_noise(epsilon, sensitivity, N)
    seeded = laplace_noise(epsilon, sensitivity, N, rng=11)
    assert stats.ks_2samp(exact, seeded).pvalue > P_MIN
    assert stats.kstest(exact, stats.laplace(scale=scale).cdf).pvalue > P_MIN


def test_the_ks_test_rejects_a_sampler_with_the_wrong_scale():
    """Broken twin: OpenDP's draws at 1.2 times the scale are told apart from numpy's."""
    broken = 1.2 * opendp_laplace_noise(1.0, 1.0, N)
    assert stats.ks_2samp(broken, laplace_noise(1.0, 1.0, N, rng=12)).pvalue < P_MIN


def test_shapes_infinity_zero_sensitivity_and_bad_arguments():
    assert opendp_laplace_noise(1.0, 1.0, (2, 3)).shape == (2, 3)
    assert np.all(opendp_laplace_noise(np.inf, 1.0, 4) == 0)
    assert np.all(opendp_laplace_noise(1.0, 0.0, 4) == 0)
    with pytest.raises(ValueError, match="epsilon"):
        opendp_laplace_noise(-1.0, 1.0, 3)
    with pytest.raises(ValueError, match="sensitivity"):
        opendp_laplace_noise(1.0, -1.0, 3)
    with pytest.raises(ValueError, match="sampler must be"):
        sample_laplace(1.0, 1.0, 3, sampler="secure")


def test_sample_laplace_dispatches(monkeypatch):
    calls = []
    import dpcore.privacy.mechanisms as mech

    monkeypatch.setattr(
        mech, "opendp_laplace_noise", lambda e, s, size: calls.append(size) or np.zeros(size)
    )
    sample_laplace(1.0, 1.0, 4, sampler="opendp")
    assert calls == [4]
    np.testing.assert_array_equal(
        sample_laplace(1.0, 1.0, 4, rng=5), laplace_noise(1.0, 1.0, 4, rng=5)
    )
