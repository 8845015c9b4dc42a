"""Private evaluation of a released rule by a public sample split.

The trial's rows are split by a public seeded permutation (default 80/20): the rule is fitted
on the first part at ε_fit, and on the second part the values of the rule, of treating everyone
and of treating no one are released with the Laplace mechanism at ε_eval. Each patient is in
one part only, so by parallel composition the release costs the dataset max(ε_fit, ε_eval)
(a row of the evaluation part is not seen by the fit; a row of the fit part reaches the
evaluation only through the released rule, which is post-processing). This module is the
IPW evaluation, the default; the doubly robust alternative, with a private outcome model, is
:mod:`dpcore.owl.evaluation_aipw`, the split and the fit :mod:`dpcore.owl.evaluation_fit`
(``fit_and_evaluate(..., evaluation="aipw")``). What the evaluations share (the budget's split,
the counts of complete rows, the five estimates and the verdict) is
:mod:`dpcore.owl.evaluation_common`; the released result and its sentences
:mod:`dpcore.owl.evaluation_result`.

Notes
-----
**The statistic.** With public outcome bounds [lo, hi], R = hi - lo and their midpoint c, each
outcome is clipped to the bounds and centred, y = clip(B) - c, in [-R/2, R/2]. With the public
smallest propensity p_min (min over arms and rows of P(A_i | X_i); min(p, 1 - p) for a known
randomization p), each row's propensity of its own arm is floored at p_min (a public rule), so
its inverse-probability term y / pi lies in [-b, b], b = R/(2 p_min). Each row of the
evaluation part falls in exactly one cell (a, d) of (arm received, arm the rule recommends);
with r_i = 1 for a complete row and 0 for an incomplete one (``include``: a missing outcome
or covariate, ``Trial.complete``), the released vectors are the four cell sums and second
moments over the public size m of the part, and the two arms' counts of complete rows::

    S_ad = (1/m) sum_i r_i 1(A_i = a, d(X_i) = d) y_i / pi_i,
    M_ad = (1/m) sum_i r_i 1(A_i = a, d(X_i) = d) (y_i / pi_i)^2,
    N_a  = sum_i r_i 1(A_i = a) rho_a / pi_i            (a = +1, -1).

rho_a is the arm's public rate (:func:`dpcore.owl.evaluation_common.count_rates`): for a known
randomization p the arm's probability (p or 1 - p, floored at p_min), so rho_a / pi_i = 1 and
N_a is the arm's number of complete rows; for a per-row propensity rho_a = p_min and a complete
row counts p_min / pi_i, at most 1. The cells S_+. hold treated patients only and S_-. controls
only.

**The target.** The value of a policy is estimated arm by arm: each arm's cells over that arm's
complete share q_a = E[r 1(A = a) / pi] (the share of the arm's patients whose rows are
complete), estimated by q~_a = N~_a / (m rho_a)::

    V(treat all)  = c + (S~_++ + S~_+-) / q~_+,    V(treat none) = c + (S~_-+ + S~_--) / q~_-,
    V(rule)       = c + S~_++ / q~_+ + S~_-- / q~_-,
    gain over all = S~_-- / q~_- - S~_+- / q~_+,   gain over none = S~_++ / q~_+ - S~_-+ / q~_-,

gains with their sign flipped when smaller outcomes are better (so that a positive gain is
good for patients). E[S_+d] = q_+ E[1(d(X) = d) y(+)] when, within each arm, a row's
completeness is independent of the patient's covariates and outcome (missing completely at
random within arm: the arms may lose different shares), so each ratio estimates the policy's
value in the population; with a constant design (1/N_+) sum over complete treated rows of y is
the treated arm's complete-case mean, and V(treat all) is exactly that mean (c cancels), for
any bounds. Dividing all four cells by one count of all complete rows (the previous estimator)
gave c + (q_a / q) (V_a - c), a target that moved with the midpoint of the bounds when the arms
lost different shares (treat-all 461.6, 593.9 or 329.4 for a true 400 with bounds [0, 1500],
[0, 3000] or [-1500, 1500], 30% of treated rows incomplete; its verdict said "worse" in 68-100%
of releases under a true null with 20% of controls incomplete). When completeness depends on
the outcome or the covariates within an arm, the values are those of the complete rows, not the
population's. Without ``include`` (every row declared complete, a public fact) q = 1 and no count
is released: the values are Horvitz-Thompson IPW. Centring at c makes the values the same
whichever direction is better and halves the sensitivity against a benefit in [0, R].

**Sensitivity.** Neighbours replace one row (the rule d is fixed: it was fitted on the other
part); the replacement may change the row's arm, its cell and its completeness. The row's term
leaves one cell and enters another (or stays, or becomes 0 when the new row is incomplete),
each term of absolute value at most b/m; its count weight (at most 1) leaves one arm's count
and enters the other's (or neither, or one only). So the L1 sensitivities are::

    Delta_1 = R / (m p_min)          cells S (a complete row moved to another cell),
    Delta_2 = R^2 / (2 m p_min^2)     moments M (squared terms in [0, b^2]),
    Delta_3 = 2                       the pair (N_+, N_-) (a complete treated row replaced by a
                                      complete control row moves it by (-1, +1)).

Delta_1 is attained by replacing a row (A = +1, d = +1, B = hi, pi = p_min) with one
(A = -1, d = -1, B = lo, pi = p_min); making a row incomplete moves S by at most Delta_1 / 2
and one count by at most 1. Laplace(Delta_k / ε_k) noise on each coordinate is ε_k-DP, and by
sequential composition over the same rows the three releases cost ε_1 + ε_2 + ε_3 = ε_eval
(:func:`dpcore.owl.evaluation_common.evaluation_budget`): by default ε_2 = 0.25 ε_eval
(``moment_share``), ε_3 = 0.20 ε_eval (``count_share``, only with ``include``:
:data:`dpcore.owl.evaluation_common.COUNT_SHARE`) and ε_1 = 0.55 ε_eval (0.75 without counts).
Every value, gain and interval is post-processing of (S~, M~, N~) and public numbers; the shape
of the release depends only on whether ``include`` is given, never on the data.

**Intervals.** :func:`dpcore.owl.evaluation_interval.arm_ratio_intervals`. A value over one
arm (treat all, treat none) is Fieller's interval: for the true theta = V - c, the pivot
S~ - theta q~_a is the sampling error (1/m) sum_i r_i 1(A_i = a) (T_i - theta), mean 0 and
variance at most the uncentred second moment E[r 1(A = a) T^2] / m estimated by the two cells'
M, plus s (L_1 + L_2) (the two cells' Laplace draws at s = Delta_1 / ε_1) plus theta e_a
(e_a = q~_a - q_a, Laplace at 2 / (m rho_a ε_3)). The interval is Fieller's set
{theta : |S~ - theta q~_a| <= h(|theta|)}, with h the ``level`` quantile of
|sigma Z + s (L_1 + L_2) + |theta| L_3 2 / (m rho_a ε_3)| (computed exactly by quadrature; it
grows with |theta| by Anderson's theorem), intersected with the public range [-R/2, R/2],
found from the range by a few monotone steps (each set contains Fieller's); for q~_a <= 0 it is
the whole range. The rule's value and the gains use both arms: theta_hat = sum_a S~_a / q~_a
has error sum_a (pivot_a) / q~_a, each arm's Fieller pivot over its observed share; the
interval is theta_hat plus or minus the ``level`` quantile of |sigma Z + s' (L_1 + L_2) +
b' (L_3 + L_4)|, sigma^2 = sum_a M_a / (m q~_a^2), s' = s / min q~_a, b' = max_a |theta_hat_a|
2 / (m rho_a ε_3 q~_a) (raising a scale to the larger only widens it), computed by a Gamma
mixture of normals; the one approximation is to take the observed shares as fixed (exact when
they are equal). The point value is clipped to the range.

**The sampling part.** sigma^2 = M'/m with M' the noisy second moment, raised by the
``level`` quantile of its own noise (so noise rarely makes the interval too short) and capped
by what the public values alone allow, (R/2)^2 / p_min for a value and
(R/2)^2 / (p_min (1 - p_min)) for a gain (over the smallest share squared for the rule and the
gains). With heavy weights (small p_min) few held-out rows carry a weight near 1/p_min and the
normal interval under-covers, also without noise (issue 24: 83-93% at ε_eval = inf; 79% for the
rule's value at P(treated) = 0.9, m = 40). So the sampling half-width is Bernstein's,
calibrated to the normal: t = rho + sqrt(rho^2 + z^2 sigma^2) with rho = z^2 b / (6 m)
(Bernstein's inequality m t^2 <= 2L (sigma^2 + b t / 3) with 2L = z^2, b = R / (2 p_min) the
public bound of one row's term, over the smallest share for two arms); the interval uses
sigma_eff = t / z. It equals the normal interval as m grows and adds about 0.64 b/m, the reach
of a single heavy row, at small m.

**Limitations.** The sampling error is taken as normal after Bernstein's correction, not
bounded exactly: with an expected number m p_min of held-out patients in the rarer arm below
about 5, a value with all its weight on that arm can still under-cover (86% for treat-none at
P(treated) = 0.95, m = 40, outcomes near a bound, ε_eval = inf). The values are the
population's when rows are missing completely at random within each arm; when completeness
depends on the outcome or the covariates the intervals cover the complete rows' value, not the
population's. The propensities must be at least p_min (a floor below the true propensity
biases the IPW terms). ``benchmarks/evaluation_coverage.py`` measures the coverage at the
page's settings, with arms that lose different shares (docs/evaluation.md).

**Verdict.** The rule beats treating everyone with the better arm when both gains' intervals
lie above 0: each fails with probability at most (1 - level)/2, so both hold together with
probability at least ``level`` (a union bound; no selection of the better arm is needed). It
is worse when one gain's interval lies below 0; otherwise the evidence is inconclusive.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_outcome_range, check_real
from ..privacy.mechanisms import laplace_scale, sample_laplace
from .evaluation_common import (
    CELL_ARM,
    COUNT_SHARE,
    GAINS,
    VALUES,
    complete_shares,
    evaluation_plan,
    noisy_counts,
    outcome_scale,
)
from .evaluation_interval import arm_ratio_intervals
from .evaluation_result import PrivateEvaluation
from .owl import arm_propensity

__all__ = [
    "PrivateEvaluation",
    "cell_sums",
    "evaluate_rule",
    "evaluation_sensitivity",
    "moment_sensitivity",
    "release_estimates",
    "signed_sums",
]


def evaluation_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivity R / (m p_min) of the four cell sums (see the module's Notes)."""
    lo, hi = check_outcome_range(outcome_bounds)
    p_min = check_real(min_propensity, "min_propensity", low=0.0, high=0.5, low_open=True)
    return (hi - lo) / (int(m) * p_min)


def moment_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivity R^2 / (2 m p_min^2) of the four cells' second moments."""
    lo, hi = check_outcome_range(outcome_bounds)
    return (hi - lo) ** 2 / (2.0 * int(m) * float(min_propensity) ** 2)


def cell_sums(recommend, A, B, propensity, outcome_bounds, min_propensity, include=None, power=1):
    """The four exact (noiseless) cell sums S_ad of the evaluation part (centred outcomes);
    ``power=2`` gives the second moments M_ad."""
    A = np.asarray(A, dtype=float)
    d = np.asarray(recommend, dtype=float)
    lo, hi = check_outcome_range(outcome_bounds)
    y = np.clip(np.asarray(B, dtype=float), lo, hi) - (lo + hi) / 2.0
    pi = np.maximum(arm_propensity(A, propensity), float(min_propensity))
    t = (y / pi) ** power
    if include is not None:
        t = np.where(np.asarray(include, dtype=bool), t, 0.0)
    m = A.shape[-1]
    cells = [(A > 0) & (d > 0), (A > 0) & (d <= 0), (A <= 0) & (d > 0), (A <= 0) & (d <= 0)]
    return np.stack([np.sum(np.where(c, t, 0.0), axis=-1) / m for c in cells], axis=-1)


def evaluate_rule(
    recommend,
    A,
    B,
    propensity,
    *,
    outcome_bounds,
    larger_is_better=True,
    min_propensity=None,
    epsilon,
    include=None,
    level=0.95,
    moment_share=0.25,
    count_share=COUNT_SHARE,
    rng=None,
    sampler="numpy",
    arms=(None, None),
):
    """Release the IPW values of a rule, of treat-all and of treat-none with ε_eval-DP.

    Parameters
    ----------
    recommend : array (m,) of +/-1
        The released rule's recommendations on the evaluation part (fitted on the other part).
    A, B : arrays (m,)
        Treatments in {-1, +1} and outcomes of the evaluation part.
    propensity : float or array (m,)
        P(A = +1 | X): the known randomization, or the per-row column.
    outcome_bounds : (lo, hi)
        Public outcome bounds.
    larger_is_better : bool
    min_propensity : float, optional
        Public smallest propensity of either arm; default min(p, 1 - p) for a constant p
        (required with a per-row propensity).
    epsilon : float
        ε_eval.
    include : bool array (m,), optional
        False for incomplete rows (a missing outcome or covariate, ``Trial.complete``). They
        contribute 0 to the cells and still count in the public m; with ``include`` given, the
        two arms' noisy counts of complete rows are released too and each arm's cells are
        divided by its own complete share (see the module's Notes). None: every row is
        complete (public).
    level : float
        Confidence level of the intervals and of the verdict.
    moment_share : float
        Share of ε_eval spent on the second moments that size the intervals.
    count_share : float
        Share of ε_eval spent on the two arms' counts of complete rows (only with
        ``include``; default :data:`dpcore.owl.evaluation_common.COUNT_SHARE`).
    rng : None, int or Generator
        For numpy's sampler (simulations and tests).
    sampler : {"numpy", "opendp"}
        "opendp" (OpenDP's floating-point-safe sampler, no seed) on uploaded data.
    arms : (treated label, control label), for the summary sentence.

    Returns
    -------
    PrivateEvaluation

    Notes
    -----
    Draw order (one Generator): the four cells' Laplace(Delta_1 / ε_1), the four moments'
    Laplace(Delta_2 / ε_2), then (with ``include``) the two counts' Laplace(2 / ε_3) (treated,
    control); the split is :func:`dpcore.owl.evaluation_common.evaluation_budget`,
    ε_1 + ε_2 + ε_3 = ε_eval. Every output field but the noisy numbers (cells, moments, counts,
    and what follows from them) depends on public values only: m, the bounds, p_min, whether the
    propensity is constant, ε_eval, the shares, the level and whether ``include`` was given.
    """
    plan, rng = evaluation_plan(
        A,
        propensity,
        epsilon=epsilon,
        level=level,
        rng=rng,
        outcome_bounds=outcome_bounds,
        larger_is_better=larger_is_better,
        min_propensity=min_propensity,
        include=include,
        moment_share=moment_share,
        count_share=count_share,
    )
    bounds, p_min, m = plan.outcome_bounds, plan.min_propensity, plan.m
    eps1, eps2, eps3 = plan.epsilons
    delta1 = evaluation_sensitivity(bounds, p_min, m)
    delta2 = moment_sensitivity(bounds, p_min, m)
    args = (recommend, A, B, propensity, bounds, p_min, include)
    noisy = cell_sums(*args) + sample_laplace(eps1, delta1, 4, rng=rng, sampler=sampler)
    moments = cell_sums(*args, power=2) + sample_laplace(eps2, delta2, 4, rng=rng, sampler=sampler)
    count = (
        noisy_counts(A, propensity, p_min, include, eps3, rng, sampler) if plan.counted else None
    )
    return PrivateEvaluation.released(
        plan, release_estimates, noisy, moments, count, sensitivity=delta1, arms=arms
    )


def release_estimates(
    cells,
    moments,
    count,
    *,
    m,
    outcome_bounds,
    min_propensity,
    epsilons,
    level=0.95,
    larger_is_better=True,
    count_rates=None,
):
    """Values, gains and their intervals from the released (noisy) numbers: post-processing.

    Vectorised over any leading shape (a batch of simulated releases).

    Parameters
    ----------
    cells, moments : arrays (..., 4)
        The noisy cell sums S_ad and second moments M_ad.
    count : array (..., 2) or None
        The noisy per-arm counts of complete rows (N~_+, N~_-); None when every row is
        complete (public).
    m : int
        The public size of the evaluation part.
    outcome_bounds, min_propensity : public
    epsilons : (ε_1, ε_2, ε_3)
        The budget of the cells, the moments and the counts
        (:func:`dpcore.owl.evaluation_common.evaluation_budget`).
    level : float
    larger_is_better : bool
    count_rates : (rho_+, rho_-), required with a count
        The arms' public rates (:func:`dpcore.owl.evaluation_common.count_rates`): the complete
        shares are N~_a / (m rho_a).

    Returns
    -------
    dict name -> (value, lower, upper), arrays of the leading shape, for "rule",
    "treat_all", "treat_none" (outcome scale) and "over_treat_all", "over_treat_none" (gains,
    positive is better for patients).
    """
    lo, hi = check_outcome_range(outcome_bounds)
    cells, moments = np.asarray(cells, dtype=float), np.asarray(moments, dtype=float)
    m, p_min = int(m), float(min_propensity)
    eps1, eps2, eps3 = (float(e) for e in epsilons)
    R = hi - lo
    s = laplace_scale(evaluation_sensitivity((lo, hi), p_min, m), eps1)
    s2 = laplace_scale(moment_sensitivity((lo, hi), p_min, m), eps2)
    share, count_scale = complete_shares(count, m, count_rates, eps3, cells.shape[:-1])
    names = (*VALUES, *GAINS)
    value = np.array([name in VALUES for name in names])
    point, lower, upper = arm_ratio_intervals(
        arm_parts(cells, signed=True),
        arm_parts(moments, signed=False),
        share,
        m=m,
        s=s,
        cells=_PART_CELLS,
        count_scale=count_scale,
        reach=np.full(_PART_CELLS.shape, R / 2.0),
        bound=np.where(value, R / 2.0, R),
        range_bound=np.full(len(names), R / (2.0 * p_min)),
        moment_noise=[(s2, 2)] * len(names),
        cap=np.where(value, (R / 2.0) ** 2 / p_min, (R / 2.0) ** 2 / (p_min * (1.0 - p_min))),
        level=level,
    )
    return outcome_scale(point, lower, upper, (lo, hi), larger_is_better)


def arm_parts(cells, signed=True, table=None):
    """Each estimate's part in each arm (..., 5, 2): the (signed) sum of its cells of that arm.

    ``signed=False`` adds the cells' second moments (a part's sampling second moment)."""
    cells = np.asarray(cells, dtype=float)
    table = (*VALUES.values(), *GAINS.values()) if table is None else table
    out = np.zeros(cells.shape[:-1] + (len(table), 2))
    for j, pairs in enumerate(table):
        for sign, c in pairs:
            out[..., j, CELL_ARM[c]] += (sign if signed else 1.0) * cells[..., c]
    return out


def _part_cells(table):
    out = np.zeros((len(table), 2), int)
    for j, pairs in enumerate(table):
        for _, c in pairs:
            out[j, CELL_ARM[c]] += 1
    return out


#: How many released cells each estimate's part in each arm sums (rule: one per arm; a fixed
#: arm: two of its own; each gain: one per arm).
_PART_CELLS = _part_cells((*VALUES.values(), *GAINS.values()))


def signed_sums(cells):
    """The five estimates' numerators (..., 5) from the four cells (..., 4): the three values'
    then the two gains' signed pairs of cells (benefit scale, before the direction's sign)."""
    cells = np.asarray(cells, dtype=float)
    return np.stack(
        [sum(k * cells[..., c] for k, c in pairs) for pairs in (*VALUES.values(), *GAINS.values())],
        -1,
    )
