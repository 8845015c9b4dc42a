"""The preview on a simulated twin: the twin's law, determinism, and agreement with the release path."""

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpcore import DPOWL, PrivatePlugInRule, concordance
from dpcore.owl.simulate import STRENGTHS, TwinDesign
from dpcore.owl.werm import solve_werm
from dpcore.owl.werm_release import noise_per_coefficient, sensitivity
from dpcore.privacy.mechanisms import l2_gamma_noise
from dpcore.release.preview import preview
from dpcore.release.preview_reading import recommend_learner, smallest_epsilon

DESIGN = TwinDesign(
    n=400,
    lower=(0.0, 18.0, 0.0, 0.0),
    upper=(1.0, 90.0, 1.0, 10.0),
    outcome_bounds=(0.0, 20.0),
    larger_is_better=False,
    propensity=2 / 3,
    binary=(True, False, False, False),
)


def test_the_twin_respects_the_public_description():
    t = DESIGN.sample([0.3], size=3, rng=0)
    X, A = t["X"], t["A"]
    assert X.shape == (3, 400, 4) and A.shape == (3, 400)
    assert set(np.unique(X[..., 0])) == {0.0, 1.0}
    assert (X[..., 1] >= 18).all() and (X[..., 1] <= 90).all()
    big = DESIGN.sample(list(STRENGTHS.values()), size=50, rng=1)
    for share in STRENGTHS.values():
        effect = big["effect"][share]
        # effect sd = share * R, mean 0: 20,000 rows give a relative standard error under 1%
        assert effect.std() == pytest.approx(share * 20.0, rel=0.03)
        assert abs(effect.mean()) < 0.03 * share * 20.0
        # Smaller is better: the treated arm's outcome is lower exactly where the effect is > 0.
        gap = np.mean(big["B"][share][big["A"] > 0]) - np.mean(big["B"][share][big["A"] < 0])
        assert abs(gap) < 0.2
    assert np.mean(big["A"] > 0) == pytest.approx(2 / 3, abs=0.01)


def test_a_shared_design_solves_exactly_like_separate_problems():
    """solve_werm with one design and a batch of weights and gammas (the preview's call)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (300, 5)) / np.sqrt(5)
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    w = rng.uniform(0, 5, (4, 300))
    g = np.array([1.0, 5.0, 20.0, 80.0])
    batch, _ = solve_werm(X, y, w, g)
    for k in range(4):
        alone, _ = solve_werm(X, y, w[k], g[k])
        np.testing.assert_allclose(batch[k], alone, atol=1e-10)


def test_preview_is_deterministic_and_shaped():
    kw = dict(gamma=40.0, weight_bound=60.0, twins=3, draws=5, seed=4)
    a = preview(DESIGN, [0.5, 5.0], **kw)
    b = preview(DESIGN, [0.5, 5.0], **kw)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 6 and set(a["strength"]) == set(STRENGTHS)
    assert (
        (a["agreement_lo"] <= a["agreement_mean"]) & (a["agreement_mean"] <= a["agreement_hi"])
    ).all()
    assert (a["releases"] == 15).all()
    strong = a[a["strength"] == "strong"]
    assert strong["agreement_mean"].iloc[1] > strong["agreement_mean"].iloc[0]
    with pytest.raises(ValueError, match="finite"):
        preview(DESIGN, [np.inf], **kw)
    with pytest.raises(ValueError, match="one value per epsilon"):
        preview(DESIGN, [1.0, 2.0], **{**kw, "gamma": [1.0]})


def test_smallest_epsilon_interpolates_on_the_log_scale():
    frame = pd.DataFrame(
        {"strength": "strong", "epsilon": [0.1, 1.0, 10.0], "agreement_mean": [50.0, 70.0, 90.0]}
    )
    assert smallest_epsilon(frame, 80.0, "strong") == pytest.approx(np.sqrt(10.0))
    assert smallest_epsilon(frame, 40.0, "strong") == 0.1
    assert smallest_epsilon(frame, 95.0, "strong") is None


def test_noise_per_coefficient_matches_draws_of_the_mechanism():
    lower, upper, eps, delta = np.array([0.0, 18.0]), np.array([1.0, 90.0]), 2.0, 0.5
    out = noise_per_coefficient(lower, upper, eps, delta)
    assert out["radius"] == pytest.approx(3 * delta / eps)
    noise = l2_gamma_noise(3, eps, delta, size=200_000, rng=5)
    scale = np.concatenate(([1.0], np.maximum(np.abs(lower), np.abs(upper)))) * np.sqrt(3)
    typical = np.abs(noise / scale).mean(axis=0)
    np.testing.assert_allclose(out["per_unit"], typical[1:], rtol=0.01)
    assert out["intercept"] == pytest.approx(typical[0], rel=0.01)
    np.testing.assert_allclose(out["across_bounds"], out["per_unit"] * (upper - lower))


@pytest.mark.parametrize("eps, strength", [(5.0, "strong"), (20.0, "moderate")])
def test_predicted_agreement_is_what_the_release_path_achieves_on_fresh_twins(eps, strength):
    """Seeded: the preview's mean agreement at ε lies in the 95% interval of the release
    path's (DPOWL at ε against DPOWL at ε = inf, same γ) on 300 fresh twins, widened by the
    preview's own Monte-Carlo error; and inside the release path's band of single releases.
    With 0.7 times the noise the preview is off by more than this tolerance (checked by hand)."""
    gamma, W = 40.0, 60.0
    pre = preview(
        DESIGN,
        [eps],
        gamma=gamma,
        weight_bound=W,
        strengths=(strength,),
        twins=20,
        draws=25,
        seed=6,
    ).iloc[0]
    share = STRENGTHS[strength]
    gen = np.random.default_rng(7)
    kw = dict(
        gamma=gamma,
        weight_bound=W,
        feature_bounds=(np.array(DESIGN.lower), np.array(DESIGN.upper)),
        outcome_bounds=DESIGN.outcome_bounds,
        larger_is_better=False,
    )
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(300):
            t = DESIGN.sample([share], rng=gen)
            X, A, B = t["X"], t["A"], t["B"][share]
            private = DPOWL(epsilon=eps, rng=gen, **kw).fit(X, A, B, 2 / 3)
            exact = DPOWL(epsilon=np.inf, **kw).fit(X, A, B, 2 / 3)
            assert private.sensitivity_ == pytest.approx(sensitivity(W, gamma))
            got.append(100.0 * concordance(private.predict(X), exact.predict(X)))
    got = np.array(got)
    se = np.hypot(got.std(ddof=1) / np.sqrt(got.size), pre["agreement_se"])
    assert abs(pre["agreement_mean"] - got.mean()) <= 1.96 * se
    assert np.quantile(got, 0.025) <= pre["agreement_mean"] <= np.quantile(got, 0.975)


def test_a_large_trial_is_previewed_at_a_bounded_size_with_the_same_answer():
    """A twin capped at max_rows patients, with γ scaled by max_rows / n for the fit, gives the
    agreement of the full-size twin: within Monte-Carlo error (twins as clusters, 3 standard
    errors) at the paper's γ, within 3 points at a γ ten times the table's, where a trial of
    max_rows patients (the cap without the scaling) is more than 10 points off."""
    design = TwinDesign(n=20000, lower=(0.0,) * 4, upper=(1.0,) * 4, outcome_bounds=(0.0, 10.0))
    run = dict(weight_bound=20.0, strengths=("moderate",), twins=6, draws=25)
    full = preview(design, [0.5, 2.0], gamma="paper", max_rows=20000, **run)
    capped = preview(design, [0.5, 2.0], gamma="paper", max_rows=2000, **run)
    se = np.hypot(full.agreement_se, capped.agreement_se)
    assert (np.abs(full.agreement_mean - capped.agreement_mean) <= 3 * se + 0.5).all()
    strong = {**run, "gamma": [2500.0]}
    full = preview(design, [0.5], max_rows=20000, **strong).agreement_mean[0]
    capped = preview(design, [0.5], max_rows=1000, **strong).agreement_mean[0]
    unscaled = preview(replace(design, n=1000), [0.5], **strong).agreement_mean[0]
    assert abs(capped - full) <= 3 and unscaled < full - 10


def test_two_releases_of_one_twin_disagree_within_what_their_agreement_allows():
    """Two releases of the same twin differ on a patient only where at least one differs from
    the non-private rule: 0 <= disagreement <= 2 (100 - agreement); with almost no noise both
    are the non-private rule, and with much noise they differ on many patients."""
    kw = dict(gamma=1.0, weight_bound=60.0, twins=3, draws=10, seed=2)
    out = preview(DESIGN, [0.05, 1.0, 1e6], **kw)
    d, a = out["disagreement_mean"].to_numpy(), out["agreement_mean"].to_numpy()
    assert np.all(d >= 0) and np.all(d <= 2 * (100 - a) + 1e-9)
    noiseless, noisy = out[out["epsilon"] == 1e6], out[out["epsilon"] == 0.05]
    assert (noiseless["disagreement_mean"] < 0.5).all() and (noisy["disagreement_mean"] > 10).all()
    assert np.all(out["disagreement_lo"] <= d) and np.all(d <= out["disagreement_hi"])
    one = preview(DESIGN, [1.0], **{**kw, "draws": 1})
    assert one["disagreement_mean"].isna().all()  # one draw: no pair to compare


# A twin like the paper's simulation: four covariates on [0, 1], outcomes in (-12, 12), 1:1.
PAPER_LIKE = TwinDesign(n=1000, lower=(0.0,) * 4, upper=(1.0,) * 4, outcome_bounds=(-12.0, 12.0))


def preview_paper_like(epsilon, n=PAPER_LIKE.n, **kw):
    """The preview of the paper-like twin with ``n`` patients at one ``epsilon``, with the
    paper's γ and weight bound 48; ``kw`` go to ``preview`` (strengths, twins, draws, seed)."""
    return preview(replace(PAPER_LIKE, n=n), [epsilon], gamma="paper", weight_bound=48.0, **kw)


def test_the_plug_in_rule_finds_the_linear_twins_best_rule_without_noise():
    """At ε = inf (the plug-in_best_nonprivate column) the plug-in rule on a linear twin gives
    nearly every patient the better arm; each learner's share lies in [0, 100] and its
    releases' band holds its mean."""
    out = preview_paper_like(1.0, n=3000, strengths=("strong",), twins=2, draws=4, seed=1).iloc[0]
    assert out["plugin_best_nonprivate"] >= 95.0
    for who in ("best", "plugin_best"):
        assert 0 <= out[f"{who}_lo"] <= out[f"{who}_mean"] <= out[f"{who}_hi"] <= 100


def test_the_plug_in_rule_beats_dp_owl_on_the_paper_like_twin_at_moderate_epsilon():
    """Seeded: with moderate linear effects at ε = 2 (n = 1000), the plug-in rule gives the
    better arm to more patients than DP-OWL, and the 95% interval of the difference says so."""
    out = preview_paper_like(2.0, strengths=("moderate",), twins=6, draws=10, seed=3)
    row = out.iloc[0]
    assert row["plugin_best_mean"] > row["best_mean"] + 5
    rec = recommend_learner(out, "moderate", 2.0)
    assert rec["learner"] == "plug-in" and rec["ci"][0] > 0
    assert rec["difference"] == pytest.approx(rec["plugin"] - rec["dp_owl"])


def test_at_a_tiny_epsilon_the_preview_cannot_tell_the_learners_apart():
    """ε = 0.01 on 50 patients: both learners are noise (about half the patients get the
    better arm), the interval of their difference holds 0, and no learner is recommended.
    (A 95% interval: about one seed in twenty would pick a learner between two coin flips.)"""
    out = preview_paper_like(0.01, n=50, strengths=("moderate",), twins=6, draws=10, seed=3)
    rec = recommend_learner(out, "moderate", 0.01)
    assert rec["learner"] is None and rec["ci"][0] <= 0 <= rec["ci"][1]
    assert abs(rec["plugin"] - 50) < 10 and abs(rec["dp_owl"] - 50) < 10
    one = preview_paper_like(1.0, n=200, twins=1)
    assert recommend_learner(one, "weak", 1.0)["learner"] is None  # one twin: no interval
    with pytest.raises(ValueError, match="no previewed row"):
        recommend_learner(out, "moderate", 5.0)


def test_the_plug_in_preview_is_what_the_estimator_achieves_on_fresh_twins():
    """Seeded: the preview's plug-in share of patients given the better arm at ε = 2 lies in
    the 95% interval of PrivatePlugInRule's own on 200 fresh twins, widened by the preview's
    Monte-Carlo error: the batched statistics, noise and solve are the estimator's."""
    eps = 2.0
    pre = preview(
        DESIGN,
        [eps],
        gamma=40.0,
        weight_bound=60.0,
        strengths=("strong",),
        twins=20,
        draws=25,
        seed=6,
    ).iloc[0]
    share = STRENGTHS["strong"]
    gen = np.random.default_rng(8)
    got = []
    for _ in range(200):
        t = DESIGN.sample([share], rng=gen)
        rule = PrivatePlugInRule(
            epsilon=eps,
            feature_bounds=(np.array(DESIGN.lower), np.array(DESIGN.upper)),
            outcome_bounds=DESIGN.outcome_bounds,
            larger_is_better=False,
            rng=gen,
        ).fit(t["X"], t["A"], t["B"][share])
        got.append(
            100.0 * np.mean((rule.decision_function(t["X"]) > 0) == (t["effect"][share] > 0))
        )
    got = np.array(got)
    se = np.hypot(got.std(ddof=1) / np.sqrt(got.size), pre["plugin_best_se"])
    assert abs(pre["plugin_best_mean"] - got.mean()) <= 1.96 * se


def test_a_large_trial_previews_the_plug_in_rule_at_a_bounded_size():
    """A capped twin, its statistics scaled by n / max_rows, gives the plug-in share of the
    full-size twin within 2 points: what remains is the capped twin's own sampling error (its
    2,000 patients' models are a little less sharp than 20,000's, about 1 point here)."""
    design = TwinDesign(n=20000, lower=(0.0,) * 4, upper=(1.0,) * 4, outcome_bounds=(0.0, 10.0))
    run = dict(gamma="paper", weight_bound=20.0, strengths=("moderate",), twins=6, draws=10)
    full = preview(design, [0.2, 1.0], max_rows=20000, **run)
    capped = preview(design, [0.2, 1.0], max_rows=2000, **run)
    assert (np.abs(full.plugin_best_mean - capped.plugin_best_mean) <= 2.0).all()


def test_the_heterogeneity_a_rule_needs_shrinks_with_epsilon_and_is_none_when_out_of_reach():
    """How much the effect must vary between patients for a DP-OWL release to beat giving
    everyone one arm on the twin: out of reach at a tiny ε with few patients; small at a
    large ε with many."""
    from dpcore.owl.paper import default_gamma
    from dpcore.release.preview_reading import NEEDED_SHARES, needed_heterogeneity

    design = TwinDesign(
        n=100,
        lower=(0.0,) * 4,
        upper=(1.0,) * 4,
        outcome_bounds=(0.0, 20.0),
        larger_is_better=True,
        propensity=0.5,
        binary=(False,) * 4,
    )
    assert (
        needed_heterogeneity(design, 0.05, gamma=default_gamma(0.05, 100, 40.0), weight_bound=40.0)
        is None
    )
    big = replace(design, n=2000)
    need = needed_heterogeneity(
        big, 100.0, gamma=default_gamma(100.0, 2000, 40.0), weight_bound=40.0
    )
    assert need is not None and need <= 0.05 * 20.0
    assert need / 20.0 in NEEDED_SHARES
