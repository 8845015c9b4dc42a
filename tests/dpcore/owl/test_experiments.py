import numpy as np
import pandas as pd
import pytest

from dpcore.owl.experiments import owl_monte_carlo
from dpcore.owl.paper import paper_outcome_shift
from dpcore.owl.simulate import PAPER_TRIAL


@pytest.fixture(scope="module")
def paper_run():
    return owl_monte_carlo(
        [200, 1000], [0.1, 1.0, 5.0, np.inf], gamma="paper", reps=200, test_size=2000, seed=3
    )


def test_tidy_layout(paper_run):
    runs = paper_run.runs
    assert len(runs) == 2 * 4 * 200
    assert set(runs.columns) >= {
        "n",
        "epsilon",
        "gamma",
        "gamma_rule",
        "h",
        "rep",
        "accuracy",
        "value",
        "value_paper",
        "concordance",
        "kappa",
        "disagreement",
        "accuracy_same_gamma",
        "value_same_gamma",
        "value_paper_same_gamma",
        "concordance_same_gamma",
        "noise_norm",
        "clipped_share",
    }
    assert (runs.loc[runs.epsilon == np.inf, "noise_norm"] == 0).all()
    assert (runs.loc[runs.epsilon == np.inf, "disagreement"] == 0).all()  # the same rule every time
    assert (runs.loc[runs.epsilon == np.inf, "concordance"] == 100).all()
    assert runs.loc[(runs.n == 1000) & (runs.epsilon == 1.0), "gamma"].unique().tolist() == [75.0]
    assert len(paper_run.references) == 200


def mean_and_se(runs, n, eps, col="accuracy"):
    x = runs.loc[(runs.n == n) & (runs.epsilon == eps), col]
    return x.mean(), x.std(ddof=1) / np.sqrt(len(x))


def test_nonprivate_accuracy_rises_with_n(paper_run):
    small, se_small = mean_and_se(paper_run.runs, 200, np.inf)
    large, se_large = mean_and_se(paper_run.runs, 1000, np.inf)
    assert large - small > 4 * np.hypot(se_small, se_large)
    assert 85 < small < large < 97  # the paper's non-private OWL: about 88% at n=200, 94% at n=1000


def test_private_rule_approaches_the_nonprivate_rule_as_epsilon_grows(paper_run):
    for n in (200, 1000):
        means = [mean_and_se(paper_run.runs, n, e) for e in (0.1, 1.0, 5.0, np.inf)]
        for (m1, s1), (m2, s2) in zip(means, means[1:]):
            assert m2 - m1 > 2 * np.hypot(s1, s2), (n, means)
        # At epsilon = 0.1 the rule is close to a coin flip.
        assert abs(means[0][0] - 50) < 5
    # and the value climbs towards the non-private value
    v_low, _ = mean_and_se(paper_run.runs, 1000, 0.1, "value")
    v_inf, _ = mean_and_se(paper_run.runs, 1000, np.inf, "value")
    oracle = paper_run.references["oracle"].mean()
    assert v_low < v_inf < oracle


@pytest.mark.parametrize("n,eps,gamma", [(1000, 1.0, 75), (1000, 0.1, 110), (200, 5.0, 30)])
def test_each_epsilon_gets_the_noise_of_its_own_gamma(paper_run, n, eps, gamma):
    runs = paper_run.runs
    cell = runs[(runs.n == n) & (runs.epsilon == eps)]
    assert (cell.gamma == gamma).all()
    expected = 5 * (2 * 30 / gamma) / eps  # E Gamma(d, eps/Delta) = d Delta / eps
    se = cell.noise_norm.std(ddof=1) / np.sqrt(len(cell))
    assert abs(cell.noise_norm.mean() - expected) < 4 * se


def test_reproducible_and_independent_of_the_rest_of_the_grid():
    a = owl_monte_carlo([300], [1.0], gamma=20.0, reps=10, test_size=300, seed=5).runs
    b = owl_monte_carlo([300], [1.0], gamma=20.0, reps=10, test_size=300, seed=5).runs
    c = owl_monte_carlo([100, 300], [1.0], gamma=20.0, reps=10, test_size=300, seed=5).runs
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_allclose(c[c.n == 300].accuracy.to_numpy(), a.accuracy.to_numpy())
    d = owl_monte_carlo([300], [0.5, 1.0], gamma=20.0, reps=10, test_size=300, seed=5).runs
    np.testing.assert_allclose(d[d.epsilon == 1.0].noise_norm.to_numpy(), a.noise_norm.to_numpy())


def test_grids_of_gamma_and_h_and_public_outcome_bounds():
    res = owl_monte_carlo(
        [200],
        [1.0, np.inf],
        gamma=[5.0, 50.0],
        h=[0.1, 0.5],
        reps=5,
        test_size=200,
        outcome=(-12.0, 12.0),
        weight_bound=48.0,
    )
    runs = res.runs
    assert len(runs) == 2 * 2 * 2 * 5
    assert set(runs.gamma) == {5.0, 50.0} and set(runs.h) == {0.1, 0.5}
    assert (runs.clipped_share == 0).all()  # W = 24 / 0.5 covers every benefit
    paper = owl_monte_carlo([200], [1.0], gamma=5.0, reps=5, test_size=200, seed=1).runs
    train = PAPER_TRIAL.sample(200, size=5, rng=np.random.default_rng([1, 1, 200]))
    w = (train["B"] + paper_outcome_shift(train["B"])[:, None]) / 0.5
    np.testing.assert_allclose(paper.clipped_share, np.mean(w > 30, axis=1))
    assert paper.clipped_share.max() > 0  # the authors' W = 30 clips a few weights
    calls = []
    owl_monte_carlo(
        [100, 200], [1.0], gamma=5.0, reps=2, test_size=50, progress=lambda f, m: calls.append(f)
    )
    assert calls == [0.5, 1.0]


def test_duplicate_sizes_are_simulated_once():
    res = owl_monte_carlo([100, 100], [1.0], gamma=5.0, reps=3, test_size=50)
    assert len(res.runs) == 3


def test_bad_arguments():
    with pytest.raises(ValueError, match="reps must be >= 2"):
        owl_monte_carlo([100], [1.0], reps=1)
    with pytest.raises(ValueError, match="reps must be a whole number"):
        owl_monte_carlo([100], [1.0], reps=2.5)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        owl_monte_carlo([100], [-1.0], reps=2)
    with pytest.raises(ValueError, match="gamma must be a positive number or 'paper'"):
        owl_monte_carlo([100], [1.0], gamma="tuned", reps=2)


def test_the_gap_to_the_nonprivate_rule_splits_into_noise_and_regularization(paper_run):
    runs = paper_run.runs
    for n in (200, 1000):
        cell = runs[runs.n == n].set_index(["epsilon", "rep"])
        best = cell.loc[np.inf]
        # Without noise the rule is its own noiseless twin.
        np.testing.assert_array_equal(best.accuracy, best.accuracy_same_gamma)
        for eps in (0.1, 1.0, 5.0):
            here = cell.loc[eps]
            noise = here.accuracy - here.accuracy_same_gamma
            regularization = here.accuracy_same_gamma - best.accuracy
            np.testing.assert_allclose(noise + regularization, here.accuracy - best.accuracy)
            assert here.gamma.iloc[0] > best.gamma.iloc[0]  # paper-tuned: a larger gamma
    # At the paper's gamma, more regularization costs accuracy on average at n = 1000.
    big = runs[(runs.n == 1000) & (runs.epsilon == 1.0)]
    nonprivate = runs[(runs.n == 1000) & np.isinf(runs.epsilon)]
    assert big.accuracy_same_gamma.mean() < nonprivate.accuracy.mean()


def test_same_gamma_metrics_are_the_noiseless_minimisers(paper_run):
    """Free gamma: the noiseless twin at every epsilon is the non-private rule itself."""
    res = owl_monte_carlo([300], [0.5, np.inf], gamma=20.0, reps=8, test_size=400, seed=2)
    cell = res.runs.set_index(["epsilon", "rep"])
    np.testing.assert_array_equal(cell.loc[0.5].accuracy_same_gamma, cell.loc[np.inf].accuracy)
    np.testing.assert_array_equal(cell.loc[0.5].concordance_same_gamma, 100.0)


def test_a_second_release_of_the_same_trial_has_its_own_noise():
    """``disagreement`` compares each release with a second one of the same trial. At a fixed γ
    the concordance's reference is the exact minimiser, the centre of both releases' noise; the
    noise is symmetric, so a release flips a patient's exact recommendation with chance q <= 1/2
    and two independent releases disagree on them with chance 2q(1 - q), strictly between q and
    2q when 0 < q < 1/2. Over patients and trials: 100 - concordance < disagreement <
    2 (100 - concordance), each gap beyond 3 Monte-Carlo standard errors (about 6 expected at 200
    trials). A second release with the first one's noise (0), with none (100 - concordance) or
    with its negation (2 (100 - concordance) on average) fails."""
    runs = owl_monte_carlo(
        [500], [5.0, 20.0, np.inf], gamma=75.0, reps=200, test_size=1000, seed=4
    ).runs
    for eps in (5.0, 20.0):
        cell = runs[runs.epsilon == eps]
        flipped, twice = 100 - cell.concordance, cell.disagreement
        for gap in (twice - flipped, 2 * flipped - twice):
            assert gap.mean() > 3 * gap.std(ddof=1) / np.sqrt(len(gap)), (eps, gap.mean())
    first = owl_monte_carlo([500], [5.0], gamma=75.0, reps=200, test_size=1000, seed=4).runs
    pd.testing.assert_frame_equal(first, runs[runs.epsilon == 5.0].reset_index(drop=True))
