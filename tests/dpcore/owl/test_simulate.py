import numpy as np
import pytest

from dpcore.owl.simulate import PAPER_TRIAL, PROXY_VARIANTS, TrialDesign, optimal_treatment


def test_paper_trial_follows_the_spec():
    d = PAPER_TRIAL.sample(200_000, rng=0)
    X, A, B, f = d["X"], d["A"], d["B"], d["f"]
    assert X.shape == (200_000, 4) and X.min() >= 0 and X.max() <= 1
    np.testing.assert_allclose(f, 1 + X[:, 0] + X[:, 1] - 1.8 * X[:, 2] - 2.2 * X[:, 3])
    resid = B - (0.01 + 0.02 * X[:, 3] + 3 * A * f)
    se = 1 / np.sqrt(len(B))
    assert abs(resid.mean()) < 4 * 0.5 * se
    assert resid.std() == pytest.approx(0.5, abs=4 * 0.5 * se * np.sqrt(2))
    assert abs(np.mean(A > 0) - 0.5) < 4 * 0.5 * se


def test_batches_and_reproducibility():
    a = PAPER_TRIAL.sample(50, size=(3, 2), rng=1)
    b = PAPER_TRIAL.sample(50, size=(3, 2), rng=1)
    assert a["X"].shape == (3, 2, 50, 4) and a["B"].shape == (3, 2, 50)
    np.testing.assert_array_equal(a["B"], b["B"])


def test_proxy_variants_stay_in_the_public_bounds():
    for name, design in PROXY_VARIANTS.items():
        d = design.sample(2000, rng=2)
        lo, hi = design.feature_bounds
        assert (d["X"] >= lo).all() and (d["X"] <= hi).all(), name
    assert np.mean(
        PROXY_VARIANTS["2:1 randomization"].sample(30_000, rng=3)["A"] > 0
    ) == pytest.approx(2 / 3, abs=0.01)


def test_design_validation():
    with pytest.raises(ValueError, match="coef must have 4"):
        TrialDesign(coef=(1, 2))
    with pytest.raises(ValueError, match="p must be an integer >= 4"):
        TrialDesign(p=3)
    with pytest.raises(ValueError, match="features must be one of"):
        TrialDesign(features="normal")


def test_optimal_treatment_ties_go_to_minus_one():
    np.testing.assert_array_equal(optimal_treatment(np.array([-1.0, 0.0, 2.0])), [-1, -1, 1])
