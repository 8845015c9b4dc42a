"""Private evaluation of a rule over K arms by the public sample split of the binary rule.

As in :mod:`dpcore.owl.evaluation` (whose budget split, counts and intervals this reuses,
:mod:`dpcore.owl.evaluation_common`), the rule is fitted on the first part of a public seeded
split and evaluated on the second (:func:`dpcore.owl.evaluation_fit.fit_and_evaluate_arms`),
so the dataset spends max(ε_fit, ε_eval) (parallel composition). The released result is
:class:`dpcore.owl.evaluation_result.ArmsEvaluation`.

Notes
-----
**The statistic.** Outcomes are clipped to the public bounds [lo, hi] and centred at their
midpoint c, y = clip(B) - c in [-R/2, R/2]. With the design's public arm probabilities
p_1..p_K (p_min their smallest), each row's term is T_i = y_i / p_{A_i}, |T_i| <= b =
R / (2 p_min). With r_i = 1 for a complete row (``include``) and d the released rule, each row
of the part falls in one of 2K cells: its arm k, and whether the rule recommends k. The released
vectors are the cell sums over the public size m of the part, in :func:`arm_cells`' order
(arm 1 recommended, arm 1 not recommended, arm 2 recommended, ...)::

    C_(k, rec)   = (1/m) sum_i r_i 1(A_i = k, d(X_i) = k) T_i,
    C_(k, other) = (1/m) sum_i r_i 1(A_i = k, d(X_i) != k) T_i,

their second moments (T_i^2 in place of T_i) and, with ``include``, the arms' counts of complete
rows N_k = sum_i r_i 1(A_i = k).

**The target.** Each arm's cells are divided by that arm's complete share, q~_k = N~_k / (m p_k)
(the share of arm k's patients whose rows are complete)::

    V(rule)       = c + sum_k C_(k, rec) / q~_k,
    V(everyone k) = c + (C_(k, rec) + C_(k, other)) / q~_k,
    gain over k   = V(rule) - V(everyone k) = sum_(j != k) C_(j, rec) / q~_j - C_(k, other) / q~_k

(sign flipped when smaller outcomes are better). E[C_(k, .)] = q_k E[1(d(X) = k or not) y(k)]
(Horvitz-Thompson under a constant design) when, within each arm, completeness is independent
of the covariates and the outcome (missing completely at random within arm; the arms may lose
different shares), so every ratio estimates the population's value; V(everyone k) is exactly
arm k's complete-case mean outcome, whatever the bounds. Dividing every sum by one share of all
complete rows (the previous estimator) moved the target with the bounds' midpoint when the arms
lost different shares. Without ``include`` q = 1 and no count is released.

**Sensitivity.** Replacing one row (the rule is fixed: fitted on the other part) takes its term
out of one cell and puts the new row's into one cell (or none when the new row is incomplete):
the L1 sensitivity of the 2K cells is Delta_1 = 2b/m = R / (m p_min), whatever K (the previous
release, the rule's sum and the K arm sums, where a row sat in two sums, had twice that); the
squared terms lie in [0, b^2], so the moments' is Delta_2 = 2 b^2 / m. The row's count leaves
one arm and enters another: Delta_3 = 2 for the K counts. Laplace noise at Delta_k / ε_k on each
part, with ε_1 + ε_2 + ε_3 = ε_eval (:func:`dpcore.owl.evaluation_common.evaluation_budget`, the
count's share :data:`dpcore.owl.evaluation_common.COUNT_SHARE`): sequential composition on the same
rows.

**Intervals.** :func:`dpcore.owl.evaluation_interval.arm_ratio_intervals`: a single arm's value
is Fieller's interval on its two cells over its share (exact in the count's noise); the rule's
value and the gains sum one cell over each arm's share, with K Laplace draws (raised to the
largest scale, which only widens the interval) and one count draw per arm. The sampling part
uses the released second moments (the cells are disjoint rows, so an estimate's is the sum of
its cells' over their shares squared), raised by the level quantile of their noise and capped
by the public (R/2)^2 / p_min for a value and 2 (R/2)^2 / p_min for a gain, with Bernstein's
range term b = R / (2 p_min).

**Verdict.** "better" when every gain's interval lies above 0 (a false "better" needs one
gain's lower bound above a true gain <= 0: probability at most (1 - level)/2); "worse" when
one lies below 0; otherwise "inconclusive".
"""

from __future__ import annotations

import numpy as np

from .._validation import check_outcome_range, check_real
from ..privacy.mechanisms import laplace_scale, sample_laplace
from .evaluation_common import (
    COUNT_SENSITIVITY,
    COUNT_SHARE,
    Estimate,
    arm_complete_counts,
    checked_release,
    complete_shares,
    evaluation_budget,
    verdict_of,
)
from .evaluation_effect import joint_values
from .evaluation_interval import arm_ratio_intervals
from .evaluation_result import ArmsEvaluation

__all__ = [
    "ArmsEvaluation",
    "arm_cells",
    "arms_sensitivity",
    "evaluate_arms_rule",
    "release_arms_estimates",
    "sums_of_cells",
]


def arms_sensitivity(outcome_bounds, min_probability, m):
    """(Delta_1, Delta_2): L1 sensitivities 2b / m = R / (m p_min) of the 2K cells and 2 b^2 / m
    of their second moments, b = R / (2 p_min) (see the module's Notes)."""
    lo, hi = check_outcome_range(outcome_bounds)
    p_min = check_real(min_probability, "min_probability", low=0.0, high=1.0, low_open=True)
    b = (hi - lo) / (2.0 * p_min)
    return 2.0 * b / int(m), 2.0 * b * b / int(m)


def arm_cells(recommend, A, B, arm_probabilities, outcome_bounds, include=None, power=1):
    """The exact (noiseless) 2K cells (..., 2K): for each arm k, its rows recommended k, then
    its rows recommended another arm; ``power=2``: second moments.

    ``recommend`` and ``A`` are arm indices 0..K-1; ``arm_probabilities`` the design's.
    """
    p = np.asarray(arm_probabilities, dtype=float)
    A, d = np.asarray(A, dtype=int), np.asarray(recommend, dtype=int)
    lo, hi = check_outcome_range(outcome_bounds)
    t = ((np.clip(np.asarray(B, dtype=float), lo, hi) - (lo + hi) / 2.0) / p[A]) ** power
    if include is not None:
        t = np.where(np.asarray(include, dtype=bool), t, 0.0)
    m = A.shape[-1]
    out = []
    for k in range(p.size):
        arm = A == k
        out += [arm & (d == k), arm & (d != k)]
    return np.stack([np.sum(np.where(rows, t, 0.0), axis=-1) / m for rows in out], axis=-1)


def sums_of_cells(cells):
    """(V_rule, V_1, ..., V_K) (..., K + 1) from the 2K cells (..., 2K)."""
    cells = np.asarray(cells, dtype=float)
    rec, other = cells[..., 0::2], cells[..., 1::2]
    return np.concatenate((rec.sum(-1, keepdims=True), rec + other), axis=-1)


def release_arms_estimates(
    cells,
    moments,
    count,
    *,
    m,
    outcome_bounds,
    arm_probabilities,
    epsilons,
    level=0.95,
    larger_is_better=True,
):
    """Values and gains (point, lower, upper) from the released 2K cells, moments and K counts:
    post-processing, vectorised over leading axes.

    Returns
    -------
    (point, lower, upper) : arrays (..., 2K + 1) on the outcome's scale: the rule's value,
    each arm's value (everyone given it), then the rule's gain over each arm (positive is
    better for patients).
    """
    lo, hi = check_outcome_range(outcome_bounds)
    p = np.asarray(arm_probabilities, dtype=float)
    k, p_min, m = p.size, float(p.min()), int(m)
    cells, moments = np.asarray(cells, dtype=float), np.asarray(moments, dtype=float)
    eps1, eps2, eps3 = (float(e) for e in epsilons)
    delta1, delta2 = arms_sensitivity((lo, hi), p_min, m)
    R, centre = hi - lo, (lo + hi) / 2.0
    lead = cells.shape[:-1]
    share, count_scale = complete_shares(count, m, tuple(p), eps3, lead)
    # Each estimate's part in each arm: rule (one cell per arm), each arm (its two cells),
    # each gain (the other arms' recommended cells, minus this arm's not-recommended cell).
    n_est = 2 * k + 1
    num, second = np.zeros(lead + (n_est, k)), np.zeros(lead + (n_est, k))
    used = np.zeros((n_est, k), int)
    rec, other = cells[..., 0::2], cells[..., 1::2]
    mrec, mother = moments[..., 0::2], moments[..., 1::2]
    num[..., 0, :], second[..., 0, :], used[0] = rec, mrec, 1
    for j in range(k):
        num[..., 1 + j, j] = rec[..., j] + other[..., j]
        second[..., 1 + j, j] = mrec[..., j] + mother[..., j]
        used[1 + j, j] = 2
        g = 1 + k + j
        num[..., g, :], second[..., g, :], used[g] = rec, mrec, 1
        num[..., g, j], second[..., g, j] = -other[..., j], mother[..., j]
    value = np.arange(n_est) <= k
    s2 = laplace_scale(delta2, eps2)
    point, lower, upper = arm_ratio_intervals(
        num,
        second,
        share,
        m=m,
        s=laplace_scale(delta1, eps1),
        cells=used,
        count_scale=count_scale,
        reach=np.full((n_est, k), R / 2.0),
        bound=np.where(value, R / 2.0, R),
        range_bound=np.full(n_est, R / (2.0 * p_min)),
        moment_noise=[(s2, int(used[j].sum())) for j in range(n_est)],
        cap=np.where(value, (R / 2.0) ** 2 / p_min, 2.0 * (R / 2.0) ** 2 / p_min),
        level=level,
    )
    sign = 1.0 if larger_is_better else -1.0
    offset = np.where(value, centre, 0.0)
    flip = np.where(value, 1.0, sign)
    a, b = flip * lower, flip * upper
    return offset + flip * point, offset + np.minimum(a, b), offset + np.maximum(a, b)


def evaluate_arms_rule(
    recommend,
    A,
    B,
    arm_probabilities,
    *,
    outcome_bounds,
    epsilon,
    arms,
    larger_is_better=True,
    include=None,
    level=0.95,
    moment_share=0.25,
    count_share=COUNT_SHARE,
    rng=None,
    sampler="numpy",
):
    """Release the IPW values of a K-arm rule and of each single arm, with ε_eval-DP.

    Parameters
    ----------
    recommend, A : arrays (m,) of arm indices 0..K-1
        The rule's recommendations on the evaluation part and the arms received.
    B : array (m,)
    arm_probabilities : sequence of K floats, public
    outcome_bounds : (lo, hi), public
    epsilon : float, ε_eval
    arms : K labels, for the names of the values and gains
    larger_is_better, include, level, moment_share, count_share, rng, sampler
        As in :func:`dpcore.owl.evaluation.evaluate_rule`.

    Returns
    -------
    ArmsEvaluation

    Notes
    -----
    Draw order (one Generator): the 2K cells' Laplace(Delta_1 / ε_1), the 2K moments'
    Laplace(Delta_2 / ε_2), then (with ``include``) the K counts' Laplace(2 / ε_3);
    ε_1 + ε_2 + ε_3 = ε_eval. Every field but the noisy numbers depends on public values only.
    """
    epsilon, level, rng = checked_release(epsilon, level, rng)
    lo, hi = check_outcome_range(outcome_bounds)
    p = np.asarray(arm_probabilities, dtype=float)
    m, p_min, k = int(np.shape(A)[-1]), float(p.min()), p.size
    delta1, delta2 = arms_sensitivity((lo, hi), p_min, m)
    counted = include is not None
    eps1, eps2, eps3 = evaluation_budget(epsilon, moment_share, count_share, counted)
    args = (recommend, A, B, p, (lo, hi), include)
    cells = arm_cells(*args) + sample_laplace(eps1, delta1, 2 * k, rng=rng, sampler=sampler)
    moments = arm_cells(*args, power=2) + sample_laplace(
        eps2, delta2, 2 * k, rng=rng, sampler=sampler
    )
    count = None
    if counted:
        count = arm_complete_counts(A, k, include) + sample_laplace(
            eps3, COUNT_SENSITIVITY, k, rng=rng, sampler=sampler
        )

    def release(at):
        return release_arms_estimates(
            cells,
            moments,
            count,
            m=m,
            outcome_bounds=(lo, hi),
            arm_probabilities=p,
            epsilons=(eps1, eps2, eps3),
            level=at,
            larger_is_better=larger_is_better,
        )

    point, lower, upper = release(level)
    est = [Estimate(float(v), float(a), float(b)) for v, a, b in zip(point, lower, upper)]
    values = {"rule": est[0], **{arms[j]: est[1 + j] for j in range(k)}}
    gains = {arms[j]: est[1 + k + j] for j in range(k)}
    # The first answer: is one arm best on average? (post-processing, no more ε)
    joint = joint_values(release, level, arms)
    return ArmsEvaluation(
        epsilon=epsilon,
        m=m,
        sensitivity=delta1,
        level=level,
        joint_values=joint,
        larger_is_better=bool(larger_is_better),
        sums=tuple(map(float, sums_of_cells(cells))),
        moments=tuple(map(float, sums_of_cells(moments))),
        values=values,
        gains=gains,
        verdict=verdict_of(gains),
        arms=tuple(arms),
        complete=None if count is None else tuple(map(float, count)),
        budget=(float(eps1), float(eps2), float(eps3)),
        cells=tuple(map(float, cells)),
        cell_moments=tuple(map(float, moments)),
    )
