import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore import agreement_test, ipw_value
from dpcore.montecarlo import (
    Stream,
    key,
    reps_to_show,
    stream,
    summarize,
    wilson_interval,
)
from dpcore.owl.experiments import RuleEvaluator
from dpcore.owl.paper import paper_outcome_shift
from dpcore.owl.simulate import PAPER_TRIAL


def test_fused_metrics_equal_the_direct_formulas():
    rng = np.random.default_rng(0)
    test = PAPER_TRIAL.sample(500, size=3, rng=rng)
    Xt = np.concatenate((np.ones((3, 500, 1)), test["X"]), axis=-1) / np.sqrt(5)
    ev = RuleEvaluator(Xt, test["A"], test["B"], test["f"], 0.5)
    theta = rng.normal(size=(2, 3, 5))
    ref = rng.normal(size=(3, 5))
    got = ev.evaluate(theta, ref)
    for e in range(2):
        for r in range(3):
            a = np.where(Xt[r] @ theta[e, r] > 0, 1, -1)
            b = np.where(Xt[r] @ ref[r] > 0, 1, -1)
            v = ipw_value(a, test["A"][r], test["B"][r])
            assert got["accuracy"][e, r] == pytest.approx(
                100 * np.mean(a == np.where(test["f"][r] > 0, 1, -1))
            )
            assert got["value"][e, r] == pytest.approx(v, rel=1e-10)
            assert got["value_paper"][e, r] == pytest.approx(
                v + paper_outcome_shift(test["B"][r]), rel=1e-10
            )
            agree = agreement_test(a, b)
            assert got["concordance"][e, r] == pytest.approx(100 * agree["concordance"])
            assert got["kappa"][e, r] == pytest.approx(agree["kappa"])


def test_summary_ci_is_the_t_interval():
    runs = pd.DataFrame(
        {"n": 1, "epsilon": 1.0, "gamma": 2.0, "h": 0.5, "accuracy": np.arange(10.0)}
    )
    s = summarize(runs, ("n", "epsilon", "gamma", "h"), ("accuracy",))
    half = stats.t.ppf(0.975, 9) * np.std(np.arange(10.0), ddof=1) / np.sqrt(10)
    assert s.loc[0, "accuracy_mean"] == 4.5
    assert s.loc[0, "accuracy_hi"] - 4.5 == pytest.approx(half)
    assert s.loc[0, "reps"] == 10


def test_summary_skips_absent_columns_and_metrics():
    runs = pd.DataFrame({"gamma": [1.0, 1.0, 2.0, 2.0], "value": [1.0, 3.0, 5.0, 9.0]})
    s = summarize(runs, ("n", "gamma"), ("value", "accuracy"))
    assert list(s.gamma) == [1.0, 2.0]
    np.testing.assert_allclose(s.value_mean, [2.0, 7.0])
    assert "accuracy_mean" not in s.columns


def test_streams_are_named_and_keyed_by_value():
    assert len({int(t) for t in Stream}) == len(Stream)  # no tag is an alias of another
    a = stream(3, Stream.NOISE, 200, 0.5, 1.0).random(4)
    np.testing.assert_array_equal(
        a, np.random.default_rng([3, 2, 200, 500_000, 1_000_000]).random(4)
    )
    assert not np.allclose(a, stream(3, Stream.NOISE, 200, 0.5, 2.0).random(4))
    assert key(np.inf) == 2**62 and key(7) == 7 and key(0.25) == 250_000


def test_wilson_interval_is_the_score_interval():
    k, m = np.array([0, 3, 20, 40]), 40
    lo, hi = wilson_interval(k, m)
    z, p = 1.959964, k / m
    # The score interval solves |p - q| = z sqrt(q (1 - q) / m) for q: both ends do.
    for q in (lo, hi):
        assert np.allclose(np.abs(p - q), z * np.sqrt(q * (1 - q) / m))
    assert np.all((lo <= p) & (p <= hi))


@pytest.mark.parametrize("share", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_reps_to_show_is_the_fewest_repetitions_whose_best_record_clears_the_share(share):
    m = reps_to_show(share)
    best = [float(wilson_interval(r, r)[0]) for r in range(1, m + 1)]  # every release meets it
    assert best[-1] >= share and all(b < share for b in best[:-1])
    # one miss out of m is never enough at the floor itself: only a perfect record shows it
    assert float(wilson_interval(m - 1, m)[0]) < share


def test_reps_to_show_refuses_a_share_it_cannot_mean():
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="share"):
            reps_to_show(bad)
