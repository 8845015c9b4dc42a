"""DP-wERM bound terms (Theorems 10-11, Corollary 12), their minimisers, the CVaR regimes, and
the Monte-Carlo checks of the bounds against the engine's own releases."""

import math

import numpy as np
import pytest
from scipy import optimize

from dpcore import DPWeightedERM
from dpcore.cvar.sweep import cvar_sweep
from dpcore.owl.werm import solve_werm, werm_objective
from dpcore.owl.werm_release import RELEASE_TOL, sensitivity
from dpcore.privacy.mechanisms import l2_gamma_noise
from dpcore.theory import bounds
from dpcore.theory.measurement import (
    bounds_release,
    comparator,
    comparators,
    coverage,
    hinge_risk,
    paper_trials,
    transition_ratio,
    werm_excess_risk,
    with_bounds,
)

SETTING = dict(
    n=1000, gamma=75.0, h=0.5, epsilon=5.0, rho=0.05, weight_bound=30.0, C=0.0, d=5, theta0_norm=2.0
)


def gamma_isf(rho, d):
    """The (1 - rho) quantile of Gamma(d, 1) from the Poisson identity
    P(Gamma(d, 1) > r) = P(Poisson(r) <= d - 1), solved by bisection."""
    tail = lambda r: sum(math.exp(-r) * r**k / math.factorial(k) for k in range(d)) - rho
    return optimize.brentq(tail, 1e-9, 200.0)


def test_hand_worked_values():
    """The re-derived form at the code's lambda = gamma/n, the transcribed one at the theorem's
    stated lambda = 2 gamma/n; either at the other convention on request."""
    L = math.log(20)
    ap = math.sqrt(5 + 2 * math.sqrt(5 * L) + L)
    r = gamma_isf(0.05, 5)
    for form, conv, lam in (
        ("re-derived", None, 0.075),
        ("printed", None, 0.15),
        ("re-derived", "stated", 0.15),
        ("printed", "code", 0.075),
    ):
        beta = lam + 30 / (2 * 0.5)
        out = bounds.werm_bound(**SETTING, form=form, convention=conv)
        assert out["T1"] == pytest.approx(lam / 2 * 4)
        assert out["T3"] == pytest.approx(30 * 0.5 / 4)
        t2 = (
            (beta * 60 * ap) ** 2 / (2 * 1000 * lam * 5) ** 2
            if form == "printed"
            else beta * (60 * r) ** 2 / (2 * (1000 * lam * 5) ** 2)
        )
        assert out["T2"] == pytest.approx(t2)
        assert out["total"] == pytest.approx(lam / 2 * 4 + 3.75 + t2)
    assert bounds.radius_quantile(5, 0.05) == pytest.approx(r, rel=1e-9)
    assert bounds.lam_from_gamma(75, 1000, "stated") == 2 * bounds.lam_from_gamma(75, 1000)
    with pytest.raises(ValueError, match="convention"):
        bounds.werm_bound(**SETTING, convention="paper")


def test_theorem11_adds_twice_G():
    base = bounds.werm_bound(**SETTING)
    pop = bounds.werm_bound(**SETTING, G=0.7)
    assert pop["total"] == pytest.approx(base["total"] + 1.4)


@pytest.mark.parametrize("form", bounds.FORMS)
def test_limits(form):
    s = dict(SETTING)
    # epsilon -> inf leaves T1 + T3.
    t2 = [bounds.werm_bound(**{**s, "epsilon": e}, form=form)["T2"] for e in (1, 10, 100, 1e4)]
    assert np.all(np.diff(t2) < 0) and t2[-1] < 1e-4 * t2[0]
    inf = bounds.werm_bound(**{**s, "epsilon": math.inf}, form=form)
    assert inf["T2"] == 0 and inf["total"] == pytest.approx(inf["T1"] + inf["T3"])
    # Doubling n at fixed lambda (gamma doubled too) quarters T2.
    lam = s["gamma"] / s["n"]
    one = bounds.noise_term(1000, lam, 0.5, 5, 0.05, 30, 0, 5, form)
    two = bounds.noise_term(2000, lam, 0.5, 5, 0.05, 30, 0, 5, form)
    assert two == pytest.approx(one / 4)
    # h -> 0 sends T3 to 0 and T2 up.
    hs = np.array([1.0, 0.1, 0.01, 0.001])
    out = bounds.werm_bound(**{**s, "h": hs}, form=form)
    assert np.all(np.diff(out["T3"]) < 0) and out["T3"][-1] == pytest.approx(30 * 0.001 / 4)
    assert np.all(np.diff(out["T2"]) > 0)


def test_printed_against_rederived_ratio():
    """printed / re-derived = beta a_p^2 / (2 r^2): the printed form squares the smoothness."""
    lam, beta = 0.075, 0.075 + 30.0
    ratio = bounds.noise_term(1000, lam, 0.5, 5, 0.05, 30, 0, 5, "printed") / bounds.noise_term(
        1000, lam, 0.5, 5, 0.05, 30, 0, 5, "re-derived"
    )
    assert ratio == pytest.approx(beta * bounds.a_p(5, 0.05) ** 2 / (2 * gamma_isf(0.05, 5) ** 2))


def test_a_p_squared_bounds_the_gamma_radius_a_p_does_not():
    """What the page says of a_p: a_p(rho)^2 bounds the (1 - rho) quantile of the Gamma(p, 1)
    radius the mechanism draws, a_p alone falls short of it (the transcription most plausibly
    misses a square)."""
    d, rho = np.meshgrid(np.arange(1, 101), np.geomspace(1e-6, 0.5, 40))
    assert np.all(bounds.a_p(d, rho) ** 2 >= bounds.radius_quantile(d, rho))
    short = bounds.a_p(d, rho) < bounds.radius_quantile(d, rho)
    assert np.all(short[:, 2:]) and np.all(short[rho <= 0.05])  # p >= 3, or rho <= 0.05
    rng = np.random.default_rng(0)
    gauss = np.quantile(np.linalg.norm(rng.standard_normal((200_000, 5)), axis=1), 0.95)
    assert gauss <= bounds.a_p(5, 0.05)


def test_noise_radius_quantile_matches_the_engine():
    rng = np.random.default_rng(1)
    delta, eps, m = 2.0, 0.5, 40_000
    radius = np.linalg.norm(l2_gamma_noise(5, eps, delta, size=m, rng=rng), axis=1)
    within = np.mean(radius <= bounds.radius_quantile(5, 0.05) * delta / eps)
    assert abs(within - 0.95) < 4 * math.sqrt(0.95 * 0.05 / m)


def test_sensitivities():
    assert bounds.weighted_sensitivity(1.0, 10.0) == bounds.unweighted_sensitivity(10.0) == 0.2
    assert bounds.weighted_sensitivity(30.0, 75.0, C=3.0) == pytest.approx(63 / 75)
    assert sensitivity(30.0, 75.0) - bounds.weighted_sensitivity(30.0, 75.0) == pytest.approx(
        2 * RELEASE_TOL / 75
    )


@pytest.mark.parametrize("form", bounds.FORMS)
def test_minimisers_beat_a_grid(form):
    s = {k: v for k, v in SETTING.items() if k not in ("gamma", "h")}
    s["epsilon"], s["theta0_norm"] = 1.0, 4.5
    total = lambda g, h: bounds.werm_bound(gamma=g, h=h, **s, form=form)["total"]
    grid = np.geomspace(1, 1e5, 4001)
    g = bounds.best_gamma(s["n"], 0.5, 1.0, 0.05, 30, 0, 5, 4.5, form)
    assert total(g, 0.5) <= total(grid, 0.5).min() + 1e-9
    h = bounds.best_h(s["n"], 75.0, 1.0, 0.05, 30, 0, 5, form)
    assert total(75.0, h) <= total(75.0, np.geomspace(1e-3, 1e2, 4001)).min() + 1e-9
    gj, hj = bounds.best_gamma_h(s["n"], 1.0, 0.05, 30, 0, 5, 4.5, form)
    G2, H2 = np.meshgrid(np.geomspace(10, 1e4, 400), np.geomspace(1e-2, 1e2, 400))
    assert total(gj, hj) <= total(G2, H2).min() + 1e-6
    assert total(gj, hj) <= total(g, 0.5) and total(gj, hj) <= total(75.0, h)


def test_minimiser_edges():
    assert bounds.best_gamma(1000, 0.5, math.inf, 0.05, 30, 0, 5, 2.0) == 0.0
    assert bounds.best_h(1000, 75, math.inf, 0.05, 30, 0, 5) == 0.0
    assert bounds.best_gamma(1000, 0.5, 1.0, 0.05, 30, 0, 5, 0.0) == math.inf


def test_sample_size():
    W, t0, d, delta, alpha = 30.0, 2.0, 5, 0.05, 1.0
    out = bounds.sample_size(alpha, np.array([0.1, 1.0, math.inf]), W, 0.0, d, delta, t0)
    common = 60 * 5 * math.log(5 / 0.05) * 2
    assert out["statistical"] == pytest.approx([3600.0] * 3)
    assert out["privacy"] == pytest.approx([common / 0.1, common, 0.0])
    # The smoothing term carries ||theta0||^2 (the corollary's display with lambda ~ alpha/||theta0||^2).
    assert out["smoothing"][1] == pytest.approx(math.sqrt(30 / (1 / 30)) * common * t0)
    half = bounds.sample_size(0.5, 1.0, W, 0.0, d, delta, t0)  # h = alpha/W = 1/60
    assert half["smoothing"] == pytest.approx(math.sqrt(30 * 60) * common * t0 / 0.5**1.5)
    assert half["privacy"] == pytest.approx(common / 0.5)
    assert half["statistical"] == pytest.approx(900 * 4 / 0.25)
    assert out["n"][2] == 3600.0  # no privacy: the statistical term alone
    assert np.all(np.diff(out["n"]) < 0)


def test_cvar_regimes():
    # tau = 0.05, eps = 1, d = 9: trivial while 1/sqrt(n tau) + 3/(n tau) >= 1 (n tau <= 5.3);
    # privacy rules while 3/(n tau) > 1/sqrt(n tau), i.e. n tau < 9.
    regime = bounds.cvar_regime(np.array([10, 100, 120, 1000, 10_000]), 0.05, 1.0, 9)
    assert [bounds.REGIMES[r] for r in regime] == [
        "trivial",
        "trivial",
        "privacy-dominated",
        "statistical",
        "statistical",
    ]
    assert bounds.cvar_regime(1000, 0.05, 0.01, 9) == 2  # eps n tau = 0.5 < 3
    assert bounds.cvar_regime(10, 0.05, 1000.0, 9) == 2  # n tau = 0.5: no tail to learn from
    assert bounds.cvar_regime_name(10_000, 0.1, math.inf) == "statistical"


def test_one_regime_rule_for_both_pages():
    """n = 400, tau = 0.01, eps = 0.5 was "trivial" on the CVaR page and "statistical" on the
    Theory page: 1/sqrt(n tau) + 1/(eps n tau) = 0.5 + 0.5 reaches the cap, on both."""
    from dpcore.cvar.rates import cvar_regime_name as page_rule
    from dpcore_app.ui.bounds import compute as theory_page
    from dpcore_app.ui.cvar import compute as cvar_page

    assert page_rule(400, 0.01, 0.5) == cvar_page.regime(400, 0.01, 0.5) == "trivial"
    ns, taus, grid = theory_page.phase_grid(0.5, 1)
    i, j = np.argmin(abs(np.log(taus / 0.01))), np.argmin(abs(np.log(ns / 400)))
    assert bounds.REGIMES[grid[i, j]] == page_rule(ns[j], taus[i], 0.5)
    for n, tau, eps in (
        (100, 0.01, 1.0),
        (5000, 0.5, 0.05),
        (2000, 0.05, math.inf),
        (500, 1.0, 0.01),
    ):
        assert page_rule(n, tau, eps) == bounds.REGIMES[int(bounds.cvar_regime(n, tau, eps, 1))]


# --------------------------------------------------------------------------------------------
# Monte-Carlo checks with the engine


@pytest.fixture(scope="module")
def trials():
    return paper_trials(300, 8, 30.0, seed=3)


def test_quadratic_step_of_the_rederivation(trials):
    """J(theta_hat + b) - J(theta_hat) <= (beta/2)||b||^2 in mean form, for the engine's draws."""
    gamma, h, n = 40.0, 0.5, 300
    theta, _ = solve_werm(trials.X, trials.y, trials.w, gamma, "huber", h)
    b = l2_gamma_noise(5, 1.0, sensitivity(30.0, gamma), size=theta.shape[:1], rng=4)
    f0 = werm_objective(theta, trials.X, trials.y, trials.w, np.full(8, gamma), "huber", h)[0]
    f1 = werm_objective(theta + b, trials.X, trials.y, trials.w, np.full(8, gamma), "huber", h)[0]
    beta = gamma / n + 30.0 / (2 * h)
    assert np.all((f1 - f0) / n <= beta / 2 * np.sum(b * b, axis=1) + 1e-12)


def test_comparator_is_the_regularized_hinge_minimiser(trials):
    gamma, n = 40.0, 300
    theta0 = comparator(trials, gamma)
    reg = lambda th: hinge_risk(th[:, None, :], trials)[:, 0] + gamma / (2 * n) * np.sum(th**2, -1)
    huber, _ = solve_werm(trials.X, trials.y, trials.w, gamma, "huber", 0.5)
    assert np.all(reg(theta0) <= reg(huber) + 1e-9)
    rng = np.random.default_rng(5)
    for _ in range(20):  # no nearby point does better by more than W h0/4
        assert np.all(
            reg(theta0) <= reg(theta0 + 0.05 * rng.standard_normal(theta0.shape)) + 30 * 1e-3 / 4
        )


CHECKS = [(f, c) for f in bounds.FORMS for c in bounds.CONVENTIONS]


def _coverages(n, eps, gamma, h, W, trials=10, draws=200, seed=7):
    tr = paper_trials(n, trials, W, seed=seed)
    comps = comparators(tr, gamma)
    runs = werm_excess_risk(tr, comps["code"].theta0, eps, [gamma], h, W, draws=draws, seed=seed)
    runs = with_bounds(runs, comps, n, eps, 0.05, W, 0.0, 5, checks=CHECKS)
    names = {(f, c): f if c == bounds.FORM_CONVENTION[f] else f"{f}_{c}" for f, c in CHECKS}
    return {k: coverage(runs[f"within_{v}"], runs.trial) for k, v in names.items()}


def test_transcribed_formula_fails_where_the_page_says_and_no_smoothness_rule_predicts_it():
    """Seeded. The re-derived bound covers >= 1 - rho everywhere here. The transcribed one fails
    at the preset (W = 1, h = 2, gamma = 1, eps = 1, n = 200) under both conventions; the old
    rule "violated when lambda + W/(2h) < 1" is false both ways: smoothness 0.255 at eps = 5 and
    it holds; smoothness 1.255 at the stated lambda (W = 5, n = 400, eps = 5) and it fails."""
    preset = _coverages(200, 1.0, 1.0, 2.0, 1.0)
    small_s_holds = _coverages(200, 5.0, 1.0, 2.0, 1.0)
    large_s_fails = _coverages(400, 5.0, 1.0, 2.0, 5.0)
    paper = _coverages(200, 1.0, 90.0, 0.5, 30.0)
    for cov in (preset, small_s_holds, large_s_fails, paper):
        assert cov[("re-derived", "code")]["hi"] >= 0.95
    assert preset[("printed", "code")]["hi"] < 0.95 and preset[("printed", "stated")]["hi"] < 0.95
    assert small_s_holds[("printed", "code")]["lo"] > 0.95  # S = 0.255 < 1, and it holds
    assert large_s_fails[("printed", "stated")]["hi"] < 0.95  # S = 1.255 > 1, and it fails
    assert paper[("printed", "stated")]["hi"] >= 0.95


def test_each_convention_has_its_own_comparator(trials):
    comps = comparators(trials, 40.0)
    assert comps["code"].theta0 == pytest.approx(comparator(trials, 40.0))
    assert comps["stated"].theta0 == pytest.approx(comparator(trials, 80.0))
    assert np.all(comps["stated"].norm < comps["code"].norm)  # more regularized
    runs = werm_excess_risk(trials, comps["code"].theta0, 1.0, [40.0], 0.5, draws=20)
    out = with_bounds(runs, comps, 300, 1.0, 0.05, 30.0, 0.0, 5)
    assert out.excess_code.to_numpy() == pytest.approx(out.excess.to_numpy())
    t0 = comps["stated"].norm[out.trial.to_numpy()]
    assert out.bound_printed.to_numpy() == pytest.approx(
        bounds.werm_bound(300, 40.0, 0.5, 1.0, 0.05, 30.0, 0.0, 5, t0, "printed")["total"]
    )
    with pytest.raises(ValueError, match="single gamma"):
        with_bounds(
            werm_excess_risk(trials, comps["code"].theta0, 1.0, [20.0, 40.0], 0.5, draws=2),
            comps,
            300,
            1.0,
            0.05,
            30.0,
            0.0,
            5,
        )


def test_coverage_counts_trials_when_draws_are_identical_or_clustered():
    trial = np.repeat(np.arange(20), 100)
    # No noise: 20 trials, one value each, repeated 100 times.
    same = coverage(np.ones(2000, bool), trial, identical=True)
    assert same["effective"] == 20 and same["lo"] == pytest.approx(0.025 ** (1 / 20))
    # Perfectly clustered: each trial all in or all out; the interval is that of 20 trials.
    clustered = np.repeat(np.arange(20) < 16, 100)
    cl = coverage(clustered, trial)
    assert cl["effective"] == pytest.approx(20, rel=1e-9)
    assert cl["hi"] - cl["lo"] > 0.3
    # Independent draws: close to the pooled binomial interval.
    rng = np.random.default_rng(0)
    ind = coverage(rng.random(2000) < 0.8, trial)
    assert ind["effective"] > 1000 and ind["hi"] - ind["lo"] < 0.05
    # The broken twin: treating clustered draws as independent is far too narrow.
    naive = coverage(clustered)
    assert naive["hi"] - naive["lo"] < (cl["hi"] - cl["lo"]) / 5


def test_transition_ratio_interpolates_the_half_drop():
    import pandas as pd

    ratio = np.array([1.0, 10.0, 100.0, 1000.0])
    summary = pd.DataFrame(
        {
            "d": [1] * 4 + [5] * 4 + [9] * 4,
            "ratio": np.tile(ratio, 3),
            "excess_mean": [1.0, 0.9, 0.3, 0.0, 0.5, 0.5, 0.5, 0.5, 0.2, 1.0, 0.1, 0.0],
        }
    )
    out = transition_ratio(summary)
    # 0.5 lies 0.4/0.6 of the way from 0.9 (ratio 10) to 0.3 (ratio 100), in log ratio.
    assert out[1] == pytest.approx(10 ** (1 + 0.4 / 0.6))
    assert math.isnan(out[5])
    # The excess rises before it falls: the half point is after the peak (not at ratio 1).
    assert out[9] == pytest.approx(10 ** (1 + 0.5 / 0.9))


def test_release_is_the_estimators_release():
    """bounds_release on the solver's minimiser is DPWeightedERM's release, draw for draw."""
    from dpcore.owl.owl import owl_weights
    from dpcore.owl.simulate import PAPER_TRIAL

    data = PAPER_TRIAL.sample(300, rng=11)
    w, _ = owl_weights(data["B"], data["A"], 0.5, 30.0, "paper")
    model = DPWeightedERM(
        epsilon=0.5,
        gamma=40.0,
        weight_bound=30.0,
        huber_h=0.5,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        rng=12,
    )
    model.fit(data["X"], data["A"], sample_weight=w)
    X = model.scaling_.transform(data["X"])
    theta, _ = solve_werm(X, data["A"], w, 40.0, "huber", 0.5)
    ours = bounds_release(theta[None], 0.5, sensitivity(30.0, 40.0), 1, np.random.default_rng(12))
    assert ours[0, 0] == pytest.approx(model.theta_, abs=1e-8)


def test_excess_risk_uses_common_noise_across_gamma(trials):
    runs = werm_excess_risk(trials, comparator(trials, 40.0), 1.0, [20.0, 80.0], 0.5, draws=50)
    r20, r80 = (runs[runs.gamma == g].radius.to_numpy() for g in (20.0, 80.0))
    assert r20 == pytest.approx(4 * r80, rel=1e-6)  # Delta = 2W/gamma, same unit draws


def test_cvar_errors_parts():
    out = cvar_sweep("two-point", [1000, 100_000], [0.05], [1.0], reps=200, seed=1)
    m = out.groupby("n").mean(numeric_only=True)
    # Privacy part: E|Lap(b)| = b = 1/(eps n tau) when the clip is far.
    assert m.loc[100_000, "privacy_exact"] == pytest.approx(1 / 5000, rel=0.02)
    # Statistical part ~ 0.557 / sqrt(n tau) on the hard instance (spec cvar.md §5.2).
    se = out[out.n == 100_000].statistical.std() / math.sqrt(200)
    assert abs(m.loc[100_000, "statistical"] - 0.557 / math.sqrt(5000)) < 4 * se + 1e-4
    assert np.all(m.total <= bounds.scalar_cvar_rate(m.index.to_numpy(), 0.05, 1.0))


def test_convex_cvar_rates_and_the_phase_transition_by_hand():
    # Theorem 5.4 at n = 10^4, tau = 0.1, eps = 1, delta = 1e-6, d = 9, G = 1, D = 2, B = 2:
    # (GD + B)/tau * (1/sqrt(n) + sqrt((d + 1) log(1/delta)) / (eps n)) = 40 * (0.01 + sqrt(10 ln 1e6) / 1e4)
    upper = bounds.convex_upper_rate(10_000, 0.1, 1.0, 1e-6, 9)
    assert upper == pytest.approx(40 * (0.01 + math.sqrt(10 * math.log(1e6)) / 1e4))
    # Halving epsilon doubles only the privacy term.
    half = bounds.convex_upper_rate(10_000, 0.1, 0.5, 1e-6, 9)
    assert half - upper == pytest.approx(40 * math.sqrt(10 * math.log(1e6)) / 1e4)
    # The threshold: eps n tau / sqrt(d) = 1 exactly at eps = sqrt(d)/(n tau).
    assert bounds.phase_transition_epsilon(2000, 0.05, 16, ratio=30) == pytest.approx(30 * 4 / 100)
    eps_star = bounds.phase_transition_epsilon(2000, 0.05, 16)
    assert eps_star == pytest.approx(4 / 100)
    assert bounds.phase_transition_ratio(2000, 0.05, eps_star, 16) == pytest.approx(1.0)
    assert bounds.phase_transition_ratio(2000, 0.05, 10 * eps_star, 16) == pytest.approx(10.0)
