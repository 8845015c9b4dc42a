"""Monte-Carlo studies of private CVaR: the scalar sweep against the exact privacy error and
the rates (spec cvar.md §2.1, §5.2), grid independence, the class, convex and rule studies."""

import math

import numpy as np
import pytest

from dpcore.cvar.constructions import KINDS
from dpcore.cvar.learning_study import class_study, convex_study
from dpcore.cvar.rates import cvar_regime_name as cvar_regime
from dpcore.cvar.rates import scalar_statistical_constant
from dpcore.cvar.sweep import cvar_sweep, method_comparison, sweep_summary
from dpcore.cvar.tail_risk import rule_tail_risk

Z = 4.0  # Monte-Carlo tolerance in standard errors


def summary(kind, ns, taus, eps, reps, seed=0, bound=1.0):
    return sweep_summary(cvar_sweep(kind, ns, taus, eps, bound, reps, seed), bound)


def slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def test_privacy_part_matches_the_exact_formula():
    s = summary("beta", (200, 2000), (0.05, 0.5), (0.1, 1.0, 10.0), reps=400)
    gap = np.abs(s.privacy_mean - s.privacy_exact_mean)
    assert (gap <= Z * s.privacy_se + 1e-12).all(), s[
        ["n", "tau", "epsilon", "privacy_mean", "privacy_exact_mean", "privacy_se"]
    ]


def test_privacy_part_slope_is_minus_one_in_eps_n_tau():
    # Hard instance B Bern(tau/2): rho_hat near B/2, so the clip is far for eps n tau >= 10.
    s = summary("two-point", (2000,), (0.1,), (0.05, 0.1, 0.5, 1.0, 5.0), reps=200)
    assert s.eps_n_tau.min() >= 10 and s.eps_n_tau.max() <= 1000
    assert slope(s.eps_n_tau, s.privacy_exact_mean) == pytest.approx(-1.0, abs=0.05)
    assert slope(s.eps_n_tau, s.privacy_mean) == pytest.approx(-1.0, abs=0.05)


def test_statistical_part_slope_and_constant():
    s = summary("two-point", (1000, 10_000, 100_000), (0.05,), (np.inf,), reps=200)
    assert slope(s.n_tau, s.statistical_mean) == pytest.approx(-0.5, abs=0.05)
    scaled = np.sqrt(s.n_tau) * s.statistical_mean
    # normal approximation of the binomial count: 3% slack at n tau >= 50, plus Monte-Carlo error
    tol = Z * np.sqrt(s.n_tau) * s.statistical_se + 0.03 * scaled
    assert (np.abs(scaled - scalar_statistical_constant(0.05)) <= tol).all()


def test_total_error_stays_in_the_theta_band():
    s = summary("two-point", (1000, 10_000), (0.01, 0.05, 0.2), (0.01, 0.1, 1.0), reps=100)
    ratio = s.total_mean / s.rate
    assert ratio.between(0.25, 1.2).all(), ratio.describe()


def test_non_private_release_is_the_empirical_cvar():
    s = summary("uniform", (500,), (0.1,), (np.inf,), reps=20)
    assert (s.privacy_mean == 0).all() and (s.privacy_exact_mean == 0).all()
    np.testing.assert_allclose(s.total_mean, s.statistical_mean)


def test_a_cell_does_not_depend_on_the_grid_around_it():
    cols = ["rho_hat", "released", "total"]
    a = cvar_sweep("heavy-tailed", (300,), (0.1,), (1.0,), reps=30, seed=4)
    b = cvar_sweep(
        "heavy-tailed", (100, 300), (0.05, 0.1, 0.5), (0.2, 1.0, np.inf), reps=30, seed=4
    )
    b = b[(b.n == 300) & (b.tau == 0.1) & (b.epsilon == 1.0)].reset_index(drop=True)
    np.testing.assert_array_equal(a[cols].to_numpy(), b[cols].to_numpy())
    c = cvar_sweep("heavy-tailed", (300,), (0.1,), (1.0,), reps=30, seed=5)
    assert not np.allclose(a.released, c.released)


def test_two_point_data_follow_tau():
    runs = cvar_sweep("two-point", (4000,), (0.02, 0.4), (np.inf,), reps=50)
    for _, part in runs.groupby("tau"):
        assert part.truth.iloc[0] == pytest.approx(0.5)  # B min(1, p / tau) with p = tau / 2
        assert abs(part.rho_hat.mean() - 0.5) < Z * part.rho_hat.std() / math.sqrt(50)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(kind="normal"), "kind"),
        (dict(tau_grid=(1.5,)), "tau"),
        (dict(bound=0.0), "bound"),
        (dict(eps_grid=(0.0,)), "epsilon"),
        (dict(n_grid=(0,)), "n"),
        (dict(reps=1), "reps"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(kind="uniform", n_grid=(100,), tau_grid=(0.1,), eps_grid=(1.0,), reps=10)
    with pytest.raises(ValueError, match=name):
        cvar_sweep(**{**args, **kwargs})


def test_regime_boundaries():
    assert cvar_regime(100, 0.01, 1.0) == "trivial"  # n tau = 1
    assert cvar_regime(10_000, 0.1, 0.05) == "statistical"  # eps sqrt(n tau) = 1.58
    assert cvar_regime(10_000, 0.1, 0.001) == "trivial"  # 1/(eps n tau) = 1
    assert cvar_regime(10_000, 0.1, 0.02) == "privacy-dominated"  # eps sqrt(n tau) = 0.63
    assert cvar_regime(10_000, 0.1, 1.0) == "statistical"
    assert cvar_regime(10_000, 0.1, math.inf) == "statistical"
    assert all(k in KINDS for k in ("uniform", "beta", "two-point", "heavy-tailed"))


def test_class_study_is_exact_and_within_the_bound():
    eps = (0.1, 1.0, 10.0, math.inf)
    st = class_study(2000, 0.1, 31, eps)
    np.testing.assert_allclose(st.probs.sum(axis=1), 1.0)
    assert (np.diff(st.excess_emp) <= 1e-15).all()  # less noise, less excess
    assert (st.excess_emp <= st.gap_bound + 1e-15).all()
    assert st.excess_emp[-1] == 0.0 and st.probs[-1].max() == 1.0  # non-private: the argmin
    best = st.thetas[np.argmin(st.rho_emp)]
    assert best != st.mean_erm_theta == pytest.approx(1.0)  # CVaR protects the minority
    assert 0.2 <= best <= 0.7


def test_convex_study_excess_falls_past_the_phase_transition():
    runs = convex_study(2000, 0.1, (2, 8), (1.0, 1000.0), reps=5, steps=50)
    mean = runs.groupby(["d", "ratio"]).excess.mean()
    for d in (2, 8):
        assert mean[(d, 1000.0)] < 0.02 < mean[(d, 1.0)]
    eps = runs.groupby(["d", "ratio"]).epsilon.first()
    assert eps[(8, 1.0)] == pytest.approx(math.sqrt(8) / 200)


def test_rule_tail_risk_ledger_and_order():
    res = rule_tail_risk(1000, 0.1, 2.0, 1.0, seed=3)
    assert res.ledger.total() == (3.0, 0.0)
    # The oracle maximises every patient's outcome, so also the worst-off share's mean.
    assert res.best_rule >= max(res.private_rule, res.nonprivate_rule)
    assert abs(res.released - res.private_rule) <= 10 * res.halfwidth
    exact = rule_tail_risk(1000, 0.1, 2.0, math.inf, seed=3)
    assert exact.released == pytest.approx(exact.private_rule) and exact.halfwidth == 0.0
    assert exact.ledger.total() == (2.0, 0.0)
    assert exact.private_rule == res.private_rule  # same rule, new release only


@pytest.mark.parametrize(
    "kwargs,name",
    [(dict(tau=0.0), "tau"), (dict(eps_rule=-1.0), "eps_rule"), (dict(eps_cvar=0.0), "eps_cvar")],
)
def test_rule_tail_risk_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        rule_tail_risk(**{**dict(n=200, tau=0.1, eps_rule=1.0, eps_cvar=1.0), **kwargs})


def test_parts_are_consistent_per_repetition():
    runs = cvar_sweep("beta", (300,), (0.1,), (0.2, 2.0, np.inf), reps=50, seed=1)
    by_eps = runs.pivot(index="rep", columns="epsilon", values="statistical")
    assert (by_eps.nunique(axis=1) == 1).all()  # sampling error ignores the budget
    np.testing.assert_allclose(runs.statistical, np.abs(runs.rho_hat - runs.truth))
    assert (runs.total <= runs.statistical + runs.privacy + 1e-12).all()
    assert (runs.total >= np.abs(runs.statistical - runs.privacy) - 1e-12).all()


def test_instance_adaptive_variant_helps_on_concentrated_data_only():
    # spec §2.2: better on Beta(20, 20) data, much worse on the two-point worst case
    beta = method_comparison("beta", 5000, 0.05, 0.2, reps=100).set_index("method")
    hard = method_comparison("two-point", 2000, 0.05, 1.0, reps=100).set_index("method")
    for table, better, worse in (
        (beta, "instance-adaptive", "laplace"),
        (hard, "laplace", "instance-adaptive"),
    ):
        gap = table.total_mean[worse] - table.total_mean[better]
        assert gap > Z * math.hypot(*table.total_se), table
    plain = cvar_sweep("beta", (5000,), (0.05,), (0.2,), reps=100)
    assert beta.total_mean["laplace"] == pytest.approx(plain.total.mean(), rel=0.25)  # same data
