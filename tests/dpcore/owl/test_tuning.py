import numpy as np
import pandas as pd
import pytest

from dpcore.owl.simulate import PAPER_TRIAL, PROXY_VARIANTS
from dpcore.owl.tuning import one_se_choice, tune_gamma


@pytest.fixture(scope="module")
def proxy():
    return PAPER_TRIAL.sample(1000, rng=11)


def test_curve_rejects_tiny_gamma_under_privacy(proxy):
    res = tune_gamma(proxy, n=500, epsilon=1.0, gammas=[1, 21, 101, 201, 401], reps=60, seed=1)
    curve = res.curve.set_index("gamma")
    best = curve.loc[res.best_gamma]
    # gamma = 1 means noise of radius ~ 5 * 60 / 1 = 300: the rule is a coin flip.
    assert curve.loc[1, "value_mean"] < best["value_mean"] - 3 * np.hypot(
        best["value_se"], curve.loc[1, "value_se"]
    )
    assert res.best_gamma >= 21
    assert res.top_gamma == curve["value_mean"].idxmax()
    assert (
        curve.loc[res.best_gamma, "value_mean"]
        >= curve.loc[res.top_gamma, "value_mean"] - curve.loc[res.top_gamma, "value_se"]
    )
    assert res.best_gamma >= res.top_gamma


def test_without_privacy_small_gamma_is_best(proxy):
    res = tune_gamma(
        proxy, n=500, epsilon=np.inf, gammas=[1, 201, 601], reps=20, metric="accuracy", seed=2
    )
    curve = res.curve.set_index("gamma")
    assert res.best_gamma == 1
    assert curve.loc[1, "accuracy_mean"] > curve.loc[601, "accuracy_mean"]


def test_imperfect_proxy_and_bootstrap_when_the_pool_is_small():
    small = PROXY_VARIANTS["skewed features (Beta(2,5))"].sample(200, rng=3)
    res = tune_gamma(small, n=500, epsilon=5.0, gammas=[1, 51], reps=4, seed=0)
    assert set(res.curve.gamma) == {1, 51} and (res.curve.reps == 4).all()


def test_errors(proxy):
    with pytest.raises(ValueError, match="needs the proxy's true contrast"):
        tune_gamma({k: proxy[k] for k in "XAB"}, 100, 1.0, metric="accuracy")
    with pytest.raises(ValueError, match="too small to split"):
        tune_gamma({k: v[:3] for k, v in proxy.items()}, 100, 1.0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        tune_gamma(proxy, 100, 1.0, gammas=[0, 1])


def test_the_target_release_constant_C_adds_its_noise(proxy):
    kw = dict(n=500, epsilon=5.0, gammas=[201], reps=40, seed=4)
    plain = tune_gamma(proxy, **kw).curve.iloc[0]
    noisy = tune_gamma(proxy, C=5_000.0, **kw).curve.iloc[0]  # Delta grows from 0.3 to 25
    assert noisy.value_mean < plain.value_mean - 3 * np.hypot(plain.value_se, noisy.value_se)


def test_one_standard_error_rule_by_hand():
    curve = pd.DataFrame(
        {
            "gamma": [1.0, 21.0, 41.0, 61.0, 81.0],
            "value_mean": [5.0, 9.6, 10.0, 9.5, 8.0],
            "value_se": [0.5, 0.5, 0.5, 0.5, 0.5],
        }
    )
    best, top, near = one_se_choice(curve, "value")
    assert top == 41.0
    assert best == 61.0  # 9.5 >= 10 - 0.5; 81 (8.0) is not
    assert near == pytest.approx(3 / 5)  # 21, 41 and 61 are within one standard error
    flat = curve.assign(value_mean=[9.8, 9.9, 10.0, 9.7, 9.6])
    assert one_se_choice(flat, "value") == (81.0, 41.0, 1.0)


def test_tune_gamma_takes_a_trial_and_an_outcome_direction():
    from types import SimpleNamespace

    proxy = PAPER_TRIAL.sample(400, rng=5)
    kw = dict(n=200, epsilon=2.0, gammas=[1, 51, 201], reps=4, seed=3)
    as_dict = tune_gamma({k: proxy[k] for k in "XAB"}, **kw)
    trial = SimpleNamespace(X=proxy["X"], A=proxy["A"], B=proxy["B"], propensity=None)
    with pytest.raises(TypeError, match="propensity is required"):
        tune_gamma(trial, propensity=None, **kw)
    as_trial = tune_gamma(trial, propensity=0.5, **kw)
    pd.testing.assert_frame_equal(as_dict.curve, as_trial.curve)
    per_row = SimpleNamespace(**{**vars(trial), "propensity": np.full(400, 0.5)})
    pd.testing.assert_frame_equal(tune_gamma(per_row, propensity=None, **kw).curve, as_dict.curve)
    # smaller-is-better on B is larger-is-better on lo + hi - B: same weights, value shifted
    bounds = (-12.0, 12.0)
    smaller = tune_gamma(trial, outcome=bounds, larger_is_better=False, **kw)
    flipped = SimpleNamespace(**{**vars(trial), "B": bounds[0] + bounds[1] - proxy["B"]})
    larger = tune_gamma(flipped, outcome=bounds, propensity=0.5, **kw)
    np.testing.assert_allclose(
        smaller.curve["value_mean"], larger.curve["value_mean"]
    )  # lo + hi = 0
    assert smaller.best_gamma == larger.best_gamma
