import numpy as np
import pytest

from dpcore.simulate import (
    PAPER_GAMMA,
    PAPER_TRIAL,
    PROXY_VARIANTS,
    TrialDesign,
    optimal_treatment,
    paper_gamma,
    paper_outcome_shift,
)


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


def test_data_min_shift_is_the_authors():
    B = np.array([[-2.0, 1.0, 3.0], [0.5, 1.0, 2.0]])
    np.testing.assert_allclose(paper_outcome_shift(B), [2.001, 0.0])
    assert (B + paper_outcome_shift(B)[:, None]).min() == pytest.approx(0.001)


SPEC_TABLE = """
0.1 | 50 | 75 | 75 | 110 | 110 | 175 | 225
0.5 | 90 | 150 | 145 | 125 | 125 | 225 | 250
1 | 150 | 115 | 75 | 75 | 125 | 225 | 250
2 | 105 | 55 | 100 | 150 | 125 | 225 | 300
5 | 30 | 60 | 50 | 75 | 75 | 125 | 225
20 | 20 | 30 | 50 | 60 | 60 | 100 | 100
50 | 10 | 30 | 30 | 30 | 30 | 35 | 40
150 | 10 | 15 | 15 | 15 | 30 | 20 | 25
inf | 2 | 1 | 1 | 1 | 2 | 2 | 1
"""


def test_every_cell_of_the_paper_gamma_table():
    """The authors' table, transcribed again from spec §7, cell by cell."""
    ns = (200, 500, 800, 1000, 1500, 2000, 2500)
    for line in SPEC_TABLE.strip().splitlines():
        eps, *gammas = (float(v) for v in line.split("|"))
        for n, g in zip(ns, gammas):
            assert PAPER_GAMMA[(eps, n)] == g
            assert paper_gamma(eps, n) == g
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        paper_gamma(-1, 200)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        paper_gamma(0, 200)


def test_paper_gamma_table_and_lookup():
    assert paper_gamma(1, 1000) == 75 and paper_gamma(np.inf, 200) == 2
    assert paper_gamma(0.9, 1100) == PAPER_GAMMA[(1, 1000)]
    assert paper_gamma(1000, 500) == PAPER_GAMMA[(150, 500)]  # large finite eps: the eps=150 row
    assert len(PAPER_GAMMA) == 9 * 7


def test_proxy_variants_stay_in_the_public_bounds():
    for name, design in PROXY_VARIANTS.items():
        d = design.sample(2000, rng=2)
        lo, hi = design.feature_bounds
        assert (d["X"] >= lo).all() and (d["X"] <= hi).all(), name
    assert np.mean(PROXY_VARIANTS["2:1 randomization"].sample(30_000, rng=3)["A"] > 0) == pytest.approx(2 / 3, abs=0.01)


def test_design_validation():
    with pytest.raises(ValueError, match="coef must have 4"):
        TrialDesign(coef=(1, 2))
    with pytest.raises(ValueError, match="p must be an integer >= 4"):
        TrialDesign(p=3)
    with pytest.raises(ValueError, match="features must be one of"):
        TrialDesign(features="normal")


def test_optimal_treatment_ties_go_to_minus_one():
    np.testing.assert_array_equal(optimal_treatment(np.array([-1.0, 0.0, 2.0])), [-1, -1, 1])
