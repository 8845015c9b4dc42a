"""Private evaluation by a public split: sensitivity attained, DP audit, intervals, verdict."""

import numpy as np
import pytest
from scipy import stats

from dpcore.owl.evaluation import (
    COUNT_SENSITIVITY,
    cell_sums,
    evaluate_rule,
    evaluation_sensitivity,
    fit_and_evaluate,
    moment_sensitivity,
    parallel_cost,
    public_split,
    release_estimates,
)
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore.privacy.audit import audit_epsilon

ALPHA = 1e-3
BOUNDS = (-10.0, 10.0)


def test_public_split_partitions_the_rows_and_depends_on_n_and_seed_only():
    fit, ev = public_split(1000, 0.8, seed=3)
    assert len(fit) == 800 and len(ev) == 200
    assert np.array_equal(np.sort(np.concatenate((fit, ev))), np.arange(1000))
    assert np.array_equal(public_split(1000, 0.8, seed=3)[1], ev)
    assert not np.array_equal(public_split(1000, 0.8, seed=4)[1], ev)
    with pytest.raises(ValueError, match="leaves a part empty"):
        public_split(3, 0.99)


def test_parallel_cost_is_the_larger_epsilon():
    assert parallel_cost(1.0, 1.0) == 1.0 and parallel_cost(2.0, 0.5) == 2.0
    with pytest.raises(ValueError):
        parallel_cost(1.0, -1.0)


def designed_neighbours(m=50, p_min=0.2):
    """Row 0 moves from cell (+, +) with B = hi at pi = p_min to cell (-, -) with B = lo at pi = p_min."""
    rng = np.random.default_rng(0)
    A = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    d = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    B = rng.uniform(*BOUNDS, m)
    p = rng.uniform(p_min, 1 - p_min, m)  # P(treated | X) per row
    A[0], d[0], B[0], p[0] = 1.0, 1.0, BOUNDS[1], p_min
    D = (d.copy(), A.copy(), B.copy(), p.copy())
    A[0], d[0], B[0], p[0] = -1.0, -1.0, BOUNDS[0], 1 - p_min
    return D, (d, A, B, p)


def test_sensitivity_is_attained_on_designed_neighbours_and_never_exceeded():
    m, p_min = 50, 0.2
    (D, Dp) = designed_neighbours(m, p_min)
    S = cell_sums(*D, BOUNDS, p_min)
    Sp = cell_sums(*Dp, BOUNDS, p_min)
    delta = evaluation_sensitivity(BOUNDS, p_min, m)
    assert delta == pytest.approx(20.0 / (m * p_min))
    assert np.abs(S - Sp).sum() == pytest.approx(delta, rel=1e-12)
    M, Mp = cell_sums(*D, BOUNDS, p_min, power=2), cell_sums(*Dp, BOUNDS, p_min, power=2)
    assert np.abs(M - Mp).sum() == pytest.approx(moment_sensitivity(BOUNDS, p_min, m), rel=1e-12)
    # Random replacements of one row, outcomes and propensities anywhere (even below p_min,
    # which the public floor clips): never above the sensitivity.
    rng = np.random.default_rng(1)
    for _ in range(600):
        d, A, B, p = (v.copy() for v in D)
        i = rng.integers(m)
        base = cell_sums(d, A, B, p, BOUNDS, p_min)
        base2 = cell_sums(d, A, B, p, BOUNDS, p_min, power=2)
        d[i], A[i] = rng.choice([-1.0, 1.0], 2)
        B[i], p[i] = rng.uniform(-50, 50), rng.uniform(0.01, 0.99)
        assert np.abs(cell_sums(d, A, B, p, BOUNDS, p_min) - base).sum() <= delta * (1 + 1e-12)
        moved = cell_sums(d, A, B, p, BOUNDS, p_min, power=2) - base2
        assert np.abs(moved).sum() <= moment_sensitivity(BOUNDS, p_min, m) * (1 + 1e-12)


def evaluation_release(data, eps, p_min, noise=1.0, power=1):
    """Sampler of the released cells' statistic that the designed row moves most: for the
    cells (power 1) S_++ + S_-- (the rule's value less c), for the second moments (power 2)
    M_++ - M_--. ``noise`` < 1 is the broken twin (it forgets that a row leaves one cell and
    enters another, halving the sensitivity)."""
    d, A, B, p = data
    exact = cell_sums(d, A, B, p, BOUNDS, p_min, power=power)
    sens = (evaluation_sensitivity if power == 1 else moment_sensitivity)(BOUNDS, p_min, len(A))
    scale = noise * sens / eps
    sign = 1.0 if power == 1 else -1.0

    def draw(size, rng):
        cells = exact + rng.laplace(0.0, scale, (size, 4))
        return cells[:, 0] + sign * cells[:, 3]

    return draw


@pytest.mark.parametrize("eps, power", [(0.5, 1), (1.0, 1), (1.0, 2)])
def test_dp_audit_of_the_evaluation_passes_and_its_broken_twin_fails(eps, power):
    """Each of the two releases (cells, second moments) at its own budget."""
    D, Dp = designed_neighbours()
    ok = audit_epsilon(
        evaluation_release(D, eps, 0.2, power=power),
        evaluation_release(Dp, eps, 0.2, power=power),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=10,
    )
    assert ok.passed and ok.epsilon_lb > 0.6 * eps
    broken = audit_epsilon(
        evaluation_release(D, eps, 0.2, 0.5, power),
        evaluation_release(Dp, eps, 0.2, 0.5, power),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=11,
    )
    assert not broken.passed


def test_noiseless_values_are_the_horvitz_thompson_ipw_values():
    t = PAPER_TRIAL.sample(400, rng=2)
    d = optimal_treatment(t["f"])
    ev = evaluate_rule(d, t["A"], t["B"], 0.5, outcome_bounds=BOUNDS, epsilon=np.inf)
    B = np.clip(t["B"], *BOUNDS)
    for name, rule in (("rule", d), ("treat_all", np.ones(400)), ("treat_none", -np.ones(400))):
        # Horvitz-Thompson IPW of the outcome centred at the bounds' midpoint (here 0).
        expected = np.mean((t["A"] == rule) * B / 0.5)
        assert ev.values[name].value == pytest.approx(expected)
    assert ev.gains["over_treat_all"].value == pytest.approx(
        ev.values["rule"].value - ev.values["treat_all"].value
    )
    # Smaller is better: the values are the same outcome means; gains count days saved.
    ev2 = evaluate_rule(
        d, t["A"], t["B"], 0.5, outcome_bounds=BOUNDS, larger_is_better=False, epsilon=np.inf
    )
    assert ev2.values["rule"].value == pytest.approx(ev.values["rule"].value)
    assert ev2.gains["over_treat_all"].value == pytest.approx(-ev.gains["over_treat_all"].value)


def test_intervals_cover_the_true_values_and_gains_at_least_95_percent():
    """Seeded: 400 evaluation parts of m = 300 from the paper's design, the rule fixed (the
    optimal one, 1-x of it flipped), ε = 1; truths from 400,000 patients. Coverage of each
    interval must not fall below 95% beyond its Monte-Carlo error (binomial, one-sided 0.1%)."""
    reps, m, eps = 400, 300, 1.0
    big = PAPER_TRIAL.sample(400_000, rng=100)
    flip = lambda X, f: np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)  # noqa: E731
    b_big = np.clip(big["B"], *BOUNDS)
    # Truths by IPW on 400,000 patients (standard error about 0.01, against half-widths near 1).
    d_big = flip(big["X"], big["f"])
    truth = {
        name: np.mean((big["A"] == r) * b_big / 0.5)
        for name, r in (("rule", d_big), ("treat_all", 1.0), ("treat_none", -1.0))
    }
    truth_gain = {
        "over_treat_all": truth["rule"] - truth["treat_all"],
        "over_treat_none": truth["rule"] - truth["treat_none"],
    }
    hits = {k: 0 for k in (*truth, *truth_gain)}
    gen = np.random.default_rng(101)
    for _ in range(reps):
        t = PAPER_TRIAL.sample(m, rng=gen)
        ev = evaluate_rule(
            flip(t["X"], t["f"]), t["A"], t["B"], 0.5, outcome_bounds=BOUNDS, epsilon=eps, rng=gen
        )
        for k, e in (*ev.values.items(), *ev.gains.items()):
            hits[k] += e.lower <= {**truth, **truth_gain}[k] <= e.upper
    floor = stats.binom.ppf(0.001, reps, 0.95)
    assert all(h >= floor for h in hits.values()), hits
    assert min(hits.values()) < reps  # the bands are not so wide that nothing can fall outside


def test_verdict_better_worse_and_inconclusive():
    t = PAPER_TRIAL.sample(20_000, rng=5)
    good = optimal_treatment(t["f"])
    kw = dict(outcome_bounds=BOUNDS, rng=6)
    assert evaluate_rule(good, t["A"], t["B"], 0.5, epsilon=5.0, **kw).verdict == "better"
    assert evaluate_rule(-good, t["A"], t["B"], 0.5, epsilon=5.0, **kw).verdict == "worse"
    small = PAPER_TRIAL.sample(100, rng=7)
    ev = evaluate_rule(
        optimal_treatment(small["f"]), small["A"], small["B"], 0.5, epsilon=0.05, **kw
    )
    assert ev.verdict == "inconclusive"
    assert "cannot tell" in ev.summary() and "ε_eval = 0.05" in ev.summary()
    assert set(ev.to_dict()) >= {"values", "gains", "verdict", "cells", "epsilon_eval"}


def test_neighbouring_files_publish_the_same_fields_but_the_noisy_ones():
    t = PAPER_TRIAL.sample(500, rng=8)
    X, A, B = t["X"], t["A"], t["B"].copy()
    kw = dict(
        epsilon_fit=1.0,
        epsilon_eval=1.0,
        gamma=50.0,
        outcome_bounds=BOUNDS,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        weight_bound=40.0,
        larger_is_better=True,
    )
    m1, e1, split1 = fit_and_evaluate(X, A, B, 0.5, rng=9, **kw)
    B[17] = 9.9  # one patient's outcome replaced
    m2, e2, split2 = fit_and_evaluate(X, A, B, 0.5, rng=9, **kw)
    assert all(np.array_equal(a, b) for a, b in zip(split1, split2))
    for f in ("epsilon", "m", "sensitivity", "level"):
        assert getattr(e1, f) == getattr(e2, f)
    assert m1.coef_.shape == m2.coef_.shape and m1.sensitivity_ == m2.sensitivity_


def test_the_release_path_can_draw_with_opendp(monkeypatch):
    import dpcore.privacy.mechanisms as mech

    calls = []
    monkeypatch.setattr(
        mech,
        "opendp_laplace_noise",
        lambda e, s, size: calls.append((e, s, size)) or np.zeros(size),
    )
    t = PAPER_TRIAL.sample(300, rng=3)
    _, ev, _ = fit_and_evaluate(
        t["X"],
        t["A"],
        t["B"],
        0.5,
        epsilon_fit=1.0,
        epsilon_eval=0.5,
        gamma=50.0,
        outcome_bounds=BOUNDS,
        weight_bound=40.0,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        larger_is_better=True,
        sampler="opendp",
        rng=0,
    )
    assert calls == [(0.375, ev.sensitivity, 4), (0.125, moment_sensitivity(BOUNDS, 0.5, ev.m), 4)]


def test_bad_arguments():
    t = PAPER_TRIAL.sample(50, rng=3)
    with pytest.raises(ValueError, match="min_propensity"):
        evaluate_rule(t["A"], t["A"], t["B"], np.full(50, 0.5), outcome_bounds=BOUNDS, epsilon=1.0)
    with pytest.raises(ValueError, match="estimated propensity"):
        fit_and_evaluate(
            t["X"],
            t["A"],
            t["B"],
            "logistic",
            epsilon_fit=1.0,
            epsilon_eval=1.0,
            outcome_bounds=BOUNDS,
        )
    with pytest.raises(ValueError, match="min_propensity"):
        evaluation_sensitivity(BOUNDS, 0.7, 10)


def test_evaluate_rule_adds_exactly_the_audited_noise():
    """The release path draws the cells' and moments' noise exactly as the audited samplers do:
    Laplace(Delta_1 / ε_1) on the cells, then Laplace(Delta_2 / ε_2) on the moments."""
    D, _ = designed_neighbours()
    d, A, B, p = D
    eps, share = 0.8, 0.25
    ev = evaluate_rule(
        d,
        A,
        B,
        p,
        outcome_bounds=BOUNDS,
        min_propensity=0.2,
        epsilon=eps,
        moment_share=share,
        rng=21,
    )
    rng = np.random.default_rng(21)
    cells = cell_sums(d, A, B, p, BOUNDS, 0.2) + rng.laplace(
        0.0, evaluation_sensitivity(BOUNDS, 0.2, len(A)) / (eps * (1 - share)), 4
    )
    moments = cell_sums(d, A, B, p, BOUNDS, 0.2, power=2) + rng.laplace(
        0.0, moment_sensitivity(BOUNDS, 0.2, len(A)) / (eps * share), 4
    )
    np.testing.assert_allclose(ev.cells, cells, rtol=1e-12)
    np.testing.assert_allclose(ev.moments, moments, rtol=1e-12)


# ---- incomplete rows: the noisy count of complete rows and the ratio estimator (issue 23) ----


def count_release(include, eps, noise=1.0):
    """Sampler of the released count of complete rows; ``noise`` < 1 is the broken twin."""
    exact = float(np.count_nonzero(include))

    def draw(size, rng):
        return exact + rng.laplace(0.0, noise * COUNT_SENSITIVITY / eps, size)

    return draw


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_dp_audit_of_the_complete_count_passes_and_its_broken_twin_fails(eps):
    """Neighbours: row 0 complete in one file, incomplete (a missing outcome) in the other."""
    include = np.ones(50, bool)
    other = include.copy()
    other[0] = False
    ok = audit_epsilon(
        count_release(include, eps), count_release(other, eps), eps, 1_000_000, alpha=ALPHA, rng=12
    )
    assert ok.passed and ok.epsilon_lb > 0.6 * eps
    broken = audit_epsilon(
        count_release(include, eps, 0.5),
        count_release(other, eps, 0.5),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=13,
    )
    assert not broken.passed


def test_a_row_made_incomplete_moves_the_cells_within_their_sensitivity():
    (d, A, B, p), _ = designed_neighbours()
    include = np.ones(len(A), bool)
    gone = include.copy()
    gone[0] = False  # the designed row, at the largest term, loses its outcome
    for power, sens in ((1, evaluation_sensitivity), (2, moment_sensitivity)):
        moved = cell_sums(d, A, B, p, BOUNDS, 0.2, include, power) - cell_sums(
            d, A, B, p, BOUNDS, 0.2, gone, power
        )
        assert 0 < np.abs(moved).sum() <= sens(BOUNDS, 0.2, len(A)) * (1 + 1e-12)


def test_neighbours_one_made_incomplete_publish_the_same_fields_but_the_noisy_ones():
    t = PAPER_TRIAL.sample(300, rng=14)
    d = optimal_treatment(t["f"])
    include = np.random.default_rng(15).random(300) > 0.1
    other = include.copy()
    other[np.flatnonzero(include)[0]] = False
    kw = dict(outcome_bounds=BOUNDS, epsilon=1.0, rng=16, arms=("drug", "placebo"))
    e1 = evaluate_rule(d, t["A"], t["B"], 0.5, include=include, **kw)
    e2 = evaluate_rule(d, t["A"], t["B"], 0.5, include=other, **kw)
    noisy = {"cells", "moments", "complete", "values", "gains", "verdict"}
    for f in set(e1.__dataclass_fields__) - noisy:
        assert getattr(e1, f) == getattr(e2, f), f
    assert e1.complete is not None and e2.complete is not None
    assert e1.complete != e2.complete and e1.cells != e2.cells
    assert set(e1.to_dict()) == set(e2.to_dict())
    assert e1.budget == pytest.approx((0.65, 0.25, 0.1))


def test_evaluate_rule_draws_the_count_noise_third():
    D, _ = designed_neighbours()
    d, A, B, p = D
    include = np.arange(len(A)) % 7 != 0
    ev = evaluate_rule(
        d, A, B, p, outcome_bounds=BOUNDS, min_propensity=0.2, epsilon=0.8, include=include, rng=22
    )
    rng = np.random.default_rng(22)
    rng.laplace(size=8)  # the cells' and the moments' draws
    expected = include.sum() + rng.laplace(0.0, 1.0 / (0.8 * 0.1))
    assert ev.complete == pytest.approx(expected, rel=1e-12)


def potential_truth(size=400_000, seed=30, bounds=BOUNDS):
    """Values and gains of the flipped rule among all patients (equal under MCAR to the value
    among complete rows), from simulated potential outcomes clipped to the bounds."""
    rng = np.random.default_rng(seed)
    t = PAPER_TRIAL.sample(size, rng=rng)
    X, f = t["X"], t["f"]
    noise = PAPER_TRIAL.noise_sd * rng.standard_normal(size)
    v = {
        k: float(np.mean(np.clip(0.01 + 0.02 * X[:, 3] + 3.0 * r * f + noise, *bounds)))
        for k, r in (("rule", flipped_rule(X, f)), ("treat_all", 1.0), ("treat_none", -1.0))
    }
    v["over_treat_all"], v["over_treat_none"] = (
        v["rule"] - v["treat_all"],
        v["rule"] - v["treat_none"],
    )
    return v


def flipped_rule(X, f):
    return np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)


def test_intervals_keep_their_coverage_with_10_percent_incomplete_rows():
    """Seeded: 100 evaluation parts of m = 1000, 10% of rows incomplete (missing completely at
    random), ε_eval = 10, outcome bounds (-10, 30) (values about 9 below their midpoint, as
    with a real outcome's bounds). Without the count each value shrinks towards the midpoint by
    the incomplete share (about 0.9 against a half-width near 0.8: coverage near 40%); with the
    ratio estimator every interval covers at least 95% within its binomial Monte-Carlo error
    (one-sided 0.1%)."""
    reps, m, bounds = 100, 1000, (-10.0, 30.0)
    truth = potential_truth(200_000, bounds=bounds)
    gen = np.random.default_rng(31)
    hits = {k: 0 for k in truth}
    for _ in range(reps):
        t = PAPER_TRIAL.sample(m, rng=gen)
        include = gen.random(m) >= 0.1
        ev = evaluate_rule(
            flipped_rule(t["X"], t["f"]),
            t["A"],
            t["B"],
            0.5,
            include=include,
            outcome_bounds=bounds,
            epsilon=10.0,
            rng=gen,
        )
        for k, e in (*ev.values.items(), *ev.gains.items()):
            hits[k] += e.lower <= truth[k] <= e.upper
    assert all(h >= stats.binom.ppf(0.001, reps, 0.95) for h in hits.values()), hits
    assert min(hits.values()) < reps


def test_heavy_weights_without_noise_keep_their_coverage():
    """Issue 24: ε_eval = inf, P(treated) = 0.9 (control weights 10), m = 40. The plain normal
    interval covered the rule's value about 79% of the time (few controls held out); the
    Bernstein range term z^2 b / (6 m), b = R / (2 p_min), restores at least 95% within the
    Monte-Carlo error. Vectorised over 2000 parts through release_estimates."""
    from dpcore.owl.simulate import TrialDesign

    design, m, reps = TrialDesign(propensity=0.9), 40, 2000
    rng = np.random.default_rng(40)
    big = design.sample(400_000, rng=rng)
    args = (optimal_treatment(big["f"]), big["A"], big["B"], 0.9, BOUNDS, 0.1)
    S = cell_sums(*args)
    truth = S[0] + S[3]  # the rule's value (centre 0) by IPW on 400,000 patients
    t = design.sample(m, reps, rng=rng)
    args = (optimal_treatment(t["f"]), t["A"], t["B"], 0.9, BOUNDS, 0.1)
    est = release_estimates(
        cell_sums(*args),
        cell_sums(*args, power=2),
        None,
        m=m,
        outcome_bounds=BOUNDS,
        min_propensity=0.1,
        epsilons=(np.inf, np.inf, 0.0),
    )
    _, lower, upper = est["rule"]
    hits = int(np.sum((lower <= truth) & (truth <= upper)))
    assert hits >= stats.binom.ppf(0.001, reps, 0.95), hits / reps


def test_the_budget_split_and_its_bad_arguments():
    from dpcore.owl.evaluation import evaluation_budget

    assert evaluation_budget(2.0) == pytest.approx((1.3, 0.5, 0.2))
    assert evaluation_budget(2.0, count=False) == pytest.approx((1.5, 0.5, 0.0))
    assert all(np.isinf(evaluation_budget(np.inf)))
    with pytest.raises(ValueError, match="moment_share \\+ count_share"):
        evaluation_budget(1.0, 0.6, 0.4)
    with pytest.raises(ValueError, match="count_share"):
        evaluation_budget(1.0, count_share=0.0)
    t = PAPER_TRIAL.sample(200, rng=3)
    ev = evaluate_rule(
        t["A"],
        t["A"],
        t["B"],
        0.5,
        outcome_bounds=BOUNDS,
        epsilon=1.0,
        include=np.ones(200, bool),
        rng=4,
    )
    out = ev.to_dict()
    assert out["complete_rows_noisy"] == ev.complete
    assert out["epsilon_split"] == pytest.approx(
        {"cells": 0.65, "second_moments": 0.25, "complete_count": 0.1}
    )
    assert "complete rows" in ev.summary()
    plain = evaluate_rule(t["A"], t["A"], t["B"], 0.5, outcome_bounds=BOUNDS, epsilon=1.0, rng=4)
    assert plain.complete is None and "complete rows" not in plain.summary()
    assert all(e.lower >= BOUNDS[0] and e.upper <= BOUNDS[1] for e in plain.values.values())


@pytest.mark.parametrize(
    "sigma, s, b",
    [
        (1.0, 0.1, 0.0),
        (0.1, 1.0, 0.0),
        (1.0, 1.0, 0.5),
        (0.05, 1.0, 3.0),
        (2.0, 0.3, 1.0),
        (0.0, 1.0, 0.2),
    ],
)
def test_the_half_width_is_the_stated_quantile_of_normal_plus_laplace_noise(sigma, s, b):
    """Against 400,000 draws of sigma Z + s (L1 + L2) + b L3: the share within the half-width
    is the level within 4 binomial standard errors (0.14 points)."""
    from dpcore.owl.evaluation_interval import abs_quantile

    rng = np.random.default_rng(50)
    n = 400_000
    x = (
        sigma * rng.standard_normal(n)
        + s * rng.laplace(size=(2, n)).sum(0)
        + b * rng.laplace(size=n)
    )
    q = abs_quantile(0.95, np.array([sigma]), s, np.array([b]))[0]
    assert np.mean(np.abs(x) <= q) == pytest.approx(0.95, abs=4 * np.sqrt(0.95 * 0.05 / n))
