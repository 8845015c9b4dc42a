"""Doubly robust (AIPW) private evaluation: sensitivities attained, DP audits with broken twins,
the doubly robust property, the variance it saves, coverage and neighbouring files."""

import numpy as np
import pytest
from scipy import stats

from dpcore.owl.evaluation import cell_sums, evaluation_sensitivity
from dpcore.owl.evaluation_aipw import (
    AIPW_MOMENT_SHARE,
    AIPWEvaluation,
    aipw_cells,
    aipw_moment_sensitivity,
    aipw_moments,
    aipw_sensitivity,
    evaluate_rule_aipw,
    moment_budget,
    release_aipw_estimates,
)
from dpcore.owl.evaluation_common import COUNT_SHARE, complete_counts, evaluation_budget
from dpcore.owl.evaluation_fit import fit_and_evaluate
from dpcore.owl.outcome_model import (
    design_rows,
    fit_outcome_model,
    statistics_sensitivity,
    sufficient_statistics,
)
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore.privacy.audit import audit_epsilon
from tests.dpcore.owl.evaluation_release import RELEASE, opendp_draws
from tests.dpcore.owl.plugin_audit import neighbours  # the outcome model's worst-case pair

ALPHA = 1e-3
BOUNDS = (-10.0, 10.0)
LO, HI = BOUNDS
P_MIN = 0.2


def base_rows(m=50, seed=0):
    """A random evaluation part (recommendations, arms, outcomes, per-row P(treated),
    predictions (treated, control)) with propensities in [p_min, 1 - p_min]."""
    rng = np.random.default_rng(seed)
    d = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    A = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    B = rng.uniform(LO, HI, m)
    p = rng.uniform(P_MIN, 1 - P_MIN, m)
    mu = rng.uniform(LO, HI, (m, 2))
    return [d, A, B, p, mu]


def with_row0(rows, d, A, B, p_treated, mu_treated, mu_control):
    rows = [v.copy() for v in rows]
    rows[0][0], rows[1][0], rows[2][0], rows[3][0] = d, A, B, p_treated
    rows[4][0] = (mu_treated, mu_control)
    return rows


def cells_neighbours():
    """Row 0: treated, recommended treated, B = hi, mu = (lo, hi), P(treated) = p_min; then
    control, recommended control, B = lo, mu = (lo, hi), P(control) = p_min. All four cells
    move the same way: their sum moves by exactly Delta_1 = 2 R / (m p_min)."""
    rows = base_rows()
    return (
        with_row0(rows, 1.0, 1.0, HI, P_MIN, LO, HI),
        with_row0(rows, -1.0, -1.0, LO, 1 - P_MIN, LO, HI),
    )


def contrast_neighbours():
    """Row 0's contrast psi is R / p_min in group +1, then R / p_min in group -1."""
    rows = base_rows()
    return (
        with_row0(rows, 1.0, 1.0, HI, P_MIN, LO, LO),
        with_row0(rows, -1.0, -1.0, LO, 1 - P_MIN, HI, HI),
    )


def value_neighbours():
    """Row 0's value terms about kappa = lo: (R / p_min)^2 and R^2 in group +1, then in -1."""
    rows = base_rows()
    return (
        with_row0(rows, 1.0, 1.0, HI, P_MIN, LO, HI),
        with_row0(rows, -1.0, -1.0, HI, 1 - P_MIN, HI, LO),
    )


def cells(rows):
    d, A, B, p, mu = rows
    return aipw_cells(d, A, B, p, mu, BOUNDS, P_MIN)


def moments(rows, centre=LO):
    d, A, B, p, mu = rows
    return aipw_moments(d, A, B, p, mu, BOUNDS, P_MIN, centre)


def test_the_sensitivities_are_attained_on_designed_neighbours_and_never_exceeded():
    m = 50
    d1 = aipw_sensitivity(BOUNDS, P_MIN, m)
    dv, dg = aipw_moment_sensitivity(BOUNDS, P_MIN, m)
    assert d1 == pytest.approx(2 * evaluation_sensitivity(BOUNDS, P_MIN, m))  # twice IPW's
    D, Dp = cells_neighbours()
    assert np.abs(cells(D) - cells(Dp)).sum() == pytest.approx(d1, rel=1e-12)
    D, Dp = contrast_neighbours()
    assert np.abs(moments(D)[4:] - moments(Dp)[4:]).sum() == pytest.approx(dg, rel=1e-12)
    D, Dp = value_neighbours()
    assert np.abs(moments(D)[:4] - moments(Dp)[:4]).sum() == pytest.approx(dv, rel=1e-12)
    # Random replacements of one row, with outcomes and predictions beyond the bounds and
    # propensities below p_min (the public clips and floor apply), any public centre.
    rng = np.random.default_rng(1)
    rows = base_rows()
    for _ in range(500):
        centre = rng.uniform(LO - 5, HI + 5)
        new = [v.copy() for v in rows]
        i = rng.integers(m)
        new[0][i], new[1][i] = rng.choice([-1.0, 1.0], 2)
        new[2][i], new[3][i] = rng.uniform(-50, 50), rng.uniform(0.01, 0.99)
        new[4][i] = rng.uniform(-50, 50, 2)
        assert np.abs(cells(new) - cells(rows)).sum() <= d1 * (1 + 1e-12)
        moved = moments(new, centre) - moments(rows, centre)
        assert np.abs(moved[:4]).sum() <= dv * (1 + 1e-12)
        assert np.abs(moved[4:]).sum() <= dg * (1 + 1e-12)


def test_the_per_arm_cells_and_moments_keep_the_same_sensitivities():
    """With ``include`` the cells and moments are split by the arm received: a replaced row
    still leaves one group (recommendation, arm) and enters one, so Delta_1, Delta_v and
    Delta_g are unchanged; attained by a patient who moves from the treated to the control
    arm and never exceeded on 500 random replacements (arm, completeness, outcome, propensity,
    predictions)."""
    m = 50
    d1 = aipw_sensitivity(BOUNDS, P_MIN, m)
    dv, dg = aipw_moment_sensitivity(BOUNDS, P_MIN, m)

    def split(rows, include, centre=LO):
        d, A, B, p, mu = rows
        c = aipw_cells(d, A, B, p, mu, BOUNDS, P_MIN, include, by_arm=True)
        mo = aipw_moments(d, A, B, p, mu, BOUNDS, P_MIN, centre, include, by_arm=True)
        return c, np.concatenate((mo[:4], mo[6:10])), np.concatenate((mo[4:6], mo[10:]))

    keep = np.ones(m, bool)
    D, Dp = cells_neighbours()
    assert np.abs(split(D, keep)[0] - split(Dp, keep)[0]).sum() == pytest.approx(d1, rel=1e-12)
    rng = np.random.default_rng(2)
    rows, include = base_rows(), rng.random(m) > 0.2
    for _ in range(500):
        centre = rng.uniform(LO - 5, HI + 5)
        new, inc = [v.copy() for v in rows], include.copy()
        i = rng.integers(m)
        new[0][i], new[1][i] = rng.choice([-1.0, 1.0], 2)
        new[2][i], new[3][i] = rng.uniform(-50, 50), rng.uniform(0.01, 0.99)
        new[4][i], inc[i] = rng.uniform(-50, 50, 2), rng.random() < 0.5
        for got, was, sens in zip(
            split(new, inc, centre), split(rows, include, centre), (d1, dv, dg)
        ):
            assert np.abs(got - was).sum() <= sens * (1 + 1e-12)


def release(rows, eps, stat, noise=1.0):
    """Sampler of one scalar of the released AIPW numbers that the designed row moves most.
    ``stat``: "cells" (sum of the four cells), "contrast" (M_psi,+ - M_psi,-) or "values"
    (M_all,+ + M_none,+ - M_all,- - M_none,-). ``noise`` < 1 is a broken twin."""
    m = len(rows[0])
    if stat == "cells":
        exact, sens, w = cells(rows), aipw_sensitivity(BOUNDS, P_MIN, m), np.ones(4)
    elif stat == "contrast":
        exact, sens = moments(rows)[4:], aipw_moment_sensitivity(BOUNDS, P_MIN, m)[1]
        w = np.array([1.0, -1.0])
    else:
        exact, sens = moments(rows)[:4], aipw_moment_sensitivity(BOUNDS, P_MIN, m)[0]
        w = np.array([1.0, -1.0, 1.0, -1.0])
    scale = noise * sens / eps

    def draw(size, rng):
        return (exact + rng.laplace(0.0, scale, (size, exact.size))) @ w

    return draw


@pytest.mark.parametrize(
    "stat, neighbours",
    [("cells", cells_neighbours), ("contrast", contrast_neighbours), ("values", value_neighbours)],
)
def test_dp_audit_of_the_aipw_release_passes_and_its_broken_twin_fails(stat, neighbours):
    """The broken twins: the cells noised at IPW's sensitivity R / (m p_min) (forgetting that
    an AIPW row enters two cells), the moments at half theirs (forgetting that a replaced row
    can leave one group and enter the other)."""
    eps = 1.0
    D, Dp = neighbours()
    ok = audit_epsilon(
        release(D, eps, stat), release(Dp, eps, stat), eps, 1_000_000, alpha=ALPHA, rng=10
    )
    assert ok.passed and ok.epsilon_lb > 0.6 * eps
    broken = audit_epsilon(
        release(D, eps, stat, 0.5), release(Dp, eps, stat, 0.5), eps, 1_000_000, alpha=ALPHA, rng=11
    )
    assert not broken.passed


def model_statistics(data):
    X, A, B = data
    return sufficient_statistics(
        design_rows(X, (np.zeros(1), np.ones(1))), A, np.clip(B, LO, HI) / 10.0
    )


def model_release(data, eps, noise=1.0):
    """Sampler of the noisy statistics' log-likelihood ratio between the two designed
    neighbours (at the correct scale): the most telling scalar of a Laplace vector, whose
    largest value is the privacy loss. A fixed function of the output, so any twin's audit
    is valid with it."""
    exact = model_statistics(data)
    D, Dp = neighbours()
    a, b = model_statistics(D), model_statistics(Dp)
    sens = statistics_sensitivity(2)

    def draw(size, rng):
        noisy = exact + rng.laplace(0.0, noise * sens / eps, (size, exact.size))
        return (np.abs(noisy - b) - np.abs(noisy - a)).sum(-1) * eps / sens

    return draw


def test_outcome_model_statistics_sensitivity_attained_and_never_exceeded():
    (D, Dp) = neighbours()
    Z = design_rows(D[0], (np.zeros(1), np.ones(1)))
    s = lambda X, A, B: sufficient_statistics(
        design_rows(X, (np.zeros(1), np.ones(1))),
        A,  # noqa: E731
        np.clip(B, LO, HI) / 10.0,
    )
    assert np.abs(s(*D) - s(*Dp)).sum() == pytest.approx(statistics_sensitivity(Z.shape[-1]))
    rng = np.random.default_rng(4)
    X3 = rng.random((30, 3))
    A3 = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    B3 = rng.uniform(LO, HI, 30)
    fb = (np.zeros(3), np.ones(3))
    base = sufficient_statistics(design_rows(X3, fb), A3, B3 / 10.0)
    for _ in range(300):
        X, A, B = X3.copy(), A3.copy(), B3.copy()
        i = rng.integers(30)
        X[i], A[i], B[i] = rng.uniform(-2, 3, 3), rng.choice([-1.0, 1.0]), rng.uniform(-50, 50)
        new = sufficient_statistics(design_rows(X, fb), A, np.clip(B, LO, HI) / 10.0)
        assert np.abs(new - base).sum() <= statistics_sensitivity(4) * (1 + 1e-12)


def test_dp_audit_of_the_outcome_model_passes_and_its_broken_twin_fails():
    """The broken twin forgets that a replaced row can switch arms (half the sensitivity).
    500,000 samples: the twin's lower bound is then about 1.45 against the claimed 1."""
    eps = 1.0
    D, Dp = neighbours()
    ok = audit_epsilon(
        model_release(D, eps), model_release(Dp, eps), eps, 500_000, alpha=ALPHA, rng=12
    )
    assert ok.passed and ok.epsilon_lb > 0.6 * eps
    broken = audit_epsilon(
        model_release(D, eps, 0.5), model_release(Dp, eps, 0.5), eps, 500_000, alpha=ALPHA, rng=13
    )
    assert not broken.passed


def test_the_release_adds_exactly_the_audited_noise_in_its_stated_order():
    d, A, B, p, mu = base_rows()
    eps, include = 0.8, np.arange(50) % 9 != 0
    ev = evaluate_rule_aipw(
        d,
        A,
        B,
        p,
        mu,
        outcome_bounds=BOUNDS,
        min_propensity=P_MIN,
        epsilon=eps,
        centre=2.0,
        include=include,
        rng=21,
    )
    e1, e2, e3 = evaluation_budget(eps, AIPW_MOMENT_SHARE, COUNT_SHARE, True)
    ev_, eg = moment_budget(e2)
    dv, dg = aipw_moment_sensitivity(BOUNDS, P_MIN, 50)
    rng = np.random.default_rng(21)
    # With ``include`` the cells and moments are per arm received (treated rows', then
    # control rows'): the cells' 8 draws, the value moments' 8, the contrast moments' 4, then
    # the two arms' counts (per-row propensities: each complete row counts p_min / pi).
    c = aipw_cells(d, A, B, p, mu, BOUNDS, P_MIN, include, by_arm=True) + rng.laplace(
        0.0, aipw_sensitivity(BOUNDS, P_MIN, 50) / e1, 8
    )
    mo = aipw_moments(d, A, B, p, mu, BOUNDS, P_MIN, 2.0, include, by_arm=True)
    v, g = rng.laplace(0.0, dv / ev_, 8), rng.laplace(0.0, dg / eg, 4)
    mo = mo + np.concatenate((v[:4], g[:2], v[4:], g[2:]))
    count = complete_counts(A, p, P_MIN, include) + rng.laplace(0.0, 2.0 / e3, 2)
    np.testing.assert_allclose(ev.cells, c, rtol=1e-12)
    np.testing.assert_allclose(ev.moments, mo, rtol=1e-12)
    np.testing.assert_allclose(ev.complete, count, rtol=1e-12)
    out = ev.to_dict()
    assert isinstance(ev, AIPWEvaluation) and out["method"].startswith("aipw")
    np.testing.assert_allclose(list(out["cells"].values()), c[:4] + c[4:], rtol=1e-12)
    assert list(out["cells_by_arm"].values()) == list(ev.cells)
    assert sum(out["epsilon_split"][k] for k in ("cells", "second_moments", "complete_count")) == (
        pytest.approx(eps)
    )


# ---- the doubly robust property and the variance it saves -------------------------------


def prognostic_trial(n, reps, rng):
    """The paper's trial plus a main effect 5 (x1 + x2 - 1): the covariates predict the
    outcome beyond the treatment's interaction."""
    t = PAPER_TRIAL.sample(n, reps, rng=rng)
    return t["X"], t["A"], t["B"] + 5.0 * (t["X"][..., 0] + t["X"][..., 1] - 1.0), t["f"]


def true_means(X, f):
    """The right model: each arm's mean outcome given x (clipped to the bounds as B is)."""
    base = 0.01 + 0.02 * X[..., 3] + 5.0 * (X[..., 0] + X[..., 1] - 1.0)
    return np.stack((base + 3.0 * f, base - 3.0 * f), -1)


def noiseless(d, A, B, mu, bounds=(-15.0, 15.0)):
    """The noiseless values and gains (centred) of AIPW and of IPW, reps leading."""
    S = aipw_cells(d, A, B, 0.5, mu, bounds, 0.5)
    T = cell_sums(d, A, B, 0.5, bounds, 0.5)
    pick = lambda C: np.stack(
        [
            C[..., 0] + C[..., 1],
            C[..., 3] - C[..., 1],  # noqa: E731
            C[..., 0] - C[..., 2],
        ],
        -1,
    )
    return pick(S), pick(T)  # treat-all value, gain over treat-all, gain over treat-none


def test_aipw_is_unbiased_when_the_outcome_model_is_wrong():
    """Doubly robust: with known propensities a wrong model (each arm's prediction off by a
    covariate-dependent error of up to 6 and the arms swapped) leaves the mean of the AIPW
    estimates at the truth. Seeded, 4000 evaluation parts of m = 200; the tolerance is 4
    Monte-Carlo standard errors. The plug-in mean of the wrong model alone is far off (it
    misses the treat-all value by about 1.8, 40 standard errors), so the test can tell."""
    rng = np.random.default_rng(60)
    X, A, B, f = prognostic_trial(200, 4000, rng)
    d = np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)
    wrong = true_means(X, f)[..., ::-1] + 6.0 * (X[..., 2:3] - 0.2)
    est, _ = noiseless(d, A, B, wrong)
    big = PAPER_TRIAL.sample(1_000_000, rng=61)
    mu_big = np.clip(true_means(big["X"], big["f"]), -15, 15)
    d_big = np.where(big["X"][:, 0] > 0.7, -1.0, 1.0) * optimal_treatment(big["f"])
    rule = np.where(d_big > 0, mu_big[:, 0], mu_big[:, 1])
    truth = np.array(
        [mu_big[:, 0].mean(), np.mean(rule - mu_big[:, 0]), np.mean(rule - mu_big[:, 1])]
    )
    se = est.std(0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(0) - truth) < 4 * se + 0.01), (est.mean(0), truth, se)
    plug_in = np.clip(wrong[..., 0], -15, 15).mean()
    assert abs(plug_in - truth[0]) > 40 * se[0]


def assert_covers_the_truths(est, big, base, bounds, reps):
    """The rule's (x0 > 0.7 flips the optimal treatment) and both comparators' intervals in
    ``est`` cover their truths on the large sample ``big`` (outcome ``base + 3 d f`` clipped to
    ``bounds``) in at least 95% of ``reps`` within its binomial error (one-sided 0.1%), and not
    every time (the intervals are not vacuous)."""
    d_big = np.where(big["X"][:, 0] > 0.7, -1.0, 1.0) * optimal_treatment(big["f"])
    v = {
        k: np.mean(np.clip(base + 3.0 * r * big["f"], *bounds))
        for k, r in (("rule", d_big), ("treat_all", 1.0), ("treat_none", -1.0))
    }
    v["over_treat_all"], v["over_treat_none"] = (
        v["rule"] - v["treat_all"],
        v["rule"] - v["treat_none"],
    )
    hits = {k: int(np.sum((est[k][1] <= v[k]) & (v[k] <= est[k][2]))) for k in v}
    assert all(h >= stats.binom.ppf(0.001, reps, 0.95) for h in hits.values()), hits
    assert min(hits.values()) < reps


def test_aipw_has_lower_variance_than_ipw_when_the_model_is_right():
    """Seeded, 2000 parts of m = 200 with the right model: AIPW's standard deviation is below
    0.75 of IPW's for the treat-all value (IPW's doubles the outcome's spread: about 1/sqrt(2))
    and below 0.9 for both gains (IPW's carries the main effect); measured 0.70, 0.80, 0.81
    (the standard error of each ratio is about 0.016)."""
    rng = np.random.default_rng(62)
    X, A, B, f = prognostic_trial(200, 2000, rng)
    d = np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)
    a, i = noiseless(d, A, B, true_means(X, f))
    ratio = a.std(0) / i.std(0)
    assert ratio[0] < 0.75 and np.all(ratio[1:] < 0.9), ratio


def test_intervals_cover_with_a_private_model_at_least_95_percent():
    """Seeded, vectorised: 400 trials of n = 2500 (m = 500) of the prognostic design, each
    with its private model fitted on its fit part (ε_model = 2.5) and the evaluation at
    ε_eval = 10; every interval covers at least 95% within its binomial error (one-sided
    0.1%), and some interval misses somewhere (the bands are not vacuous)."""
    from dpcore.owl.evaluation_fit import public_split
    from dpcore.owl.outcome_model import solve_statistics

    rng = np.random.default_rng(63)
    reps, n, bounds, eps = 400, 2500, (-15.0, 15.0), 10.0
    X, A, B, f = prognostic_trial(n, reps, rng)
    d = np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)
    fit, ev = public_split(n)
    fb = PAPER_TRIAL.feature_bounds
    Z = design_rows(X[:, fit], fb)
    st = sufficient_statistics(Z, A[:, fit], np.clip(B[:, fit], *bounds) / 15.0)
    st = st + rng.laplace(0.0, statistics_sensitivity(5) / 2.5, st.shape)
    coef = solve_statistics(st, 5, len(fit), 2.5)
    mu = np.clip(15.0 * np.einsum("rnd,rad->rna", design_rows(X[:, ev], fb), coef), *bounds)
    m = len(ev)
    e1, e2, e3 = evaluation_budget(eps, AIPW_MOMENT_SHARE, count=False)
    (dv, dg), (ev_, eg) = aipw_moment_sensitivity(bounds, 0.5, m), moment_budget(e2)
    args = (d[:, ev], A[:, ev], B[:, ev], 0.5, mu, bounds, 0.5)
    C = aipw_cells(*args) + rng.laplace(0.0, aipw_sensitivity(bounds, 0.5, m) / e1, (reps, 4))
    M = aipw_moments(*args, 15.0 * coef[:, :, 0].mean(-1)) + np.concatenate(
        (rng.laplace(0.0, dv / ev_, (reps, 4)), rng.laplace(0.0, dg / eg, (reps, 2))), -1
    )
    est = release_aipw_estimates(
        C, M, None, m=m, outcome_bounds=bounds, min_propensity=0.5, epsilons=(e1, e2, e3)
    )
    big = PAPER_TRIAL.sample(1_000_000, rng=64)
    noise = PAPER_TRIAL.noise_sd * rng.standard_normal(1_000_000)
    base = 0.01 + 0.02 * big["X"][:, 3] + 5.0 * (big["X"][:, 0] + big["X"][:, 1] - 1.0) + noise
    assert_covers_the_truths(est, big, base, bounds, reps)


# ---- the release path: neighbouring files, the ledger, bad arguments ---------------------

KW = dict(RELEASE, evaluation="aipw")
NOISY = {"cells", "moments", "complete", "values", "gains", "verdict", "model", "centre"}
NOISY |= {"average_effect"}


@pytest.mark.parametrize("part", [0, 1])
def test_neighbouring_files_publish_the_same_fields_but_the_noisy_ones(part):
    """Privacy rule 10 for the AIPW path: one patient's outcome replaced, in the fit part (the
    rule and the outcome model see it) or in the evaluation part (only the cells do)."""
    t = PAPER_TRIAL.sample(500, rng=8)
    X, A, B = t["X"], t["A"], t["B"].copy()
    include = np.ones(500, bool)
    m1, e1, split = fit_and_evaluate(X, A, B, 0.5, rng=9, include=include, **KW)
    row = split[part][3]
    B[row] = -B[row] + 5.0
    m2, e2, split2 = fit_and_evaluate(X, A, B, 0.5, rng=9, include=include, **KW)
    assert all(np.array_equal(a, b) for a, b in zip(split, split2))
    for f in set(e1.__dataclass_fields__) - NOISY:
        assert getattr(e1, f) == getattr(e2, f), f
    assert e1.cells != e2.cells and set(e1.to_dict()) == set(e2.to_dict())
    public = lambda e: {k: v for k, v in e.model.items() if not k.startswith("coef")}  # noqa: E731
    assert public(e1) == public(e2)
    assert (e1.model == e2.model) == (part == 1)  # the model never sees the evaluation part
    assert m1.coef_.shape == m2.coef_.shape and m1.sensitivity_ == m2.sensitivity_


def test_the_ledger_records_the_fit_part_and_the_evaluation_part_in_parallel():
    from dpcore import PrivacyLedger

    t = PAPER_TRIAL.sample(300, rng=3)
    ledger = PrivacyLedger()
    _, ev, _ = fit_and_evaluate(
        t["X"],
        t["A"],
        t["B"],
        0.5,
        ledger=ledger,
        rng=np.random.default_rng(),
        **{**KW, "epsilon_eval": 0.5},
    )
    entry = ledger.entries[-1]
    assert ledger.total()[0] == pytest.approx(1.0)  # max(ε_rule + ε_model, ε_eval)
    assert dict(entry.parts) == {"fit (rule + outcome model)": 1.0, "evaluation": 0.5}
    assert ev.model["epsilon"] == pytest.approx(0.25) and "AIPW" in entry.mechanism


def test_bad_arguments():
    t = PAPER_TRIAL.sample(60, rng=3)
    with pytest.raises(ValueError, match="evaluation must be one of"):
        fit_and_evaluate(t["X"], t["A"], t["B"], 0.5, **{**KW, "evaluation": "dr"})
    with pytest.raises(ValueError, match="feature_bounds"):
        fit_and_evaluate(t["X"], t["A"], t["B"], 0.5, **{**KW, "feature_bounds": None})
    with pytest.raises(ValueError, match="shape"):
        evaluate_rule_aipw(
            t["A"], t["A"], t["B"], 0.5, np.zeros((60, 3)), outcome_bounds=BOUNDS, epsilon=1.0
        )
    with pytest.raises(ValueError, match="feature_bounds"):
        fit_outcome_model(
            t["X"], t["A"], t["B"], feature_bounds=None, outcome_bounds=BOUNDS, epsilon=1.0
        )


def test_every_aipw_draw_can_come_from_opendp(monkeypatch):
    """On uploaded data every release (the model's statistics, the cells, both moment vectors)
    draws from OpenDP's sampler, each at its own budget and sensitivity."""
    calls, ev = opendp_draws(monkeypatch, KW)
    dv, dg = aipw_moment_sensitivity(BOUNDS, 0.5, ev.m)
    assert calls[-4:] == [
        (0.25, 40.0, (40,)),
        (pytest.approx(0.3), ev.sensitivity, 4),
        (pytest.approx(0.05), dv, 4),
        (pytest.approx(0.15), dg, 2),
    ]


def test_intervals_keep_their_coverage_when_one_arm_loses_30_percent_of_its_rows():
    """Seeded, vectorised: 200 parts of m = 1000 from the paper's trial with 30% of the treated
    arm's rows incomplete and none of the control arm's (missing completely at random within
    each arm; the per-arm noisy counts released, each arm's cells over its own complete share),
    bounds (-10, 30) (values about 9 below the midpoint, where one count for both arms would
    move every value), ε_eval = 10, a fixed model (the true means); truths from 400,000
    potential outcomes (standard error about 0.01 against half-widths near 0.5); every
    interval covers at least 95% within its binomial error (one-sided 0.1%)."""
    rng = np.random.default_rng(65)
    reps, m, bounds, eps = 200, 1000, (-10.0, 30.0), 10.0
    t = PAPER_TRIAL.sample(m, reps, rng=rng)
    d = np.where(t["X"][..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(t["f"])
    base = 0.01 + 0.02 * t["X"][..., 3]
    mu = np.stack((base + 3.0 * t["f"], base - 3.0 * t["f"]), -1)
    include = rng.random((reps, m)) >= np.where(t["A"] > 0, 0.3, 0.0)
    e1, e2, e3 = evaluation_budget(eps, AIPW_MOMENT_SHARE, COUNT_SHARE, True)
    (dv, dg), (ev_, eg) = aipw_moment_sensitivity(bounds, 0.5, m), moment_budget(e2)
    args = (d, t["A"], t["B"], 0.5, mu, bounds, 0.5)
    C = aipw_cells(*args, include, by_arm=True) + rng.laplace(
        0.0, aipw_sensitivity(bounds, 0.5, m) / e1, (reps, 8)
    )
    v, g = rng.laplace(0.0, dv / ev_, (reps, 8)), rng.laplace(0.0, dg / eg, (reps, 4))
    M = aipw_moments(*args, 0.0, include, by_arm=True) + np.concatenate(
        (v[:, :4], g[:, :2], v[:, 4:], g[:, 2:]), -1
    )
    count = complete_counts(t["A"], 0.5, 0.5, include) + rng.laplace(0.0, 2.0 / e3, (reps, 2))
    est = release_aipw_estimates(
        C,
        M,
        count,
        m=m,
        outcome_bounds=bounds,
        min_propensity=0.5,
        epsilons=(e1, e2, e3),
        count_rates=(0.5, 0.5),
    )
    big = PAPER_TRIAL.sample(400_000, rng=66)
    noise = PAPER_TRIAL.noise_sd * rng.standard_normal(400_000)
    b0 = 0.01 + 0.02 * big["X"][:, 3] + noise
    assert_covers_the_truths(est, big, b0, bounds, reps)
