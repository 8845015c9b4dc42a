"""Doubly robust (AIPW) private evaluation of a released rule by a public sample split.

Beside the IPW evaluation of :mod:`dpcore.owl.evaluation` (the default): the same split, the
same five estimates (the values of the rule, of treat-all and of treat-none, the rule's gains
over each fixed arm), the same Fieller + Bernstein intervals and verdict, but each row's term
is the augmented IPW score of a private outcome model mu fitted on the fit part
(:mod:`dpcore.owl.outcome_model`). The model removes the part of the outcome the covariates
predict from the sampling error; the price is a larger sensitivity (twice IPW's for the cells).

Notes
-----
**Budget and split.** Three releases: the rule (ε_rule) and the outcome model (ε_model) on the
fit part, the evaluation (ε_eval) on the evaluation part. The fit part's rows are touched by
both of its releases: sequential composition, ε_rule + ε_model
(:func:`dpcore.owl.evaluation_fit.fit_and_evaluate` takes ε_model as ``model_share`` of ε_fit,
so the fit part still costs ε_fit). An evaluation row is
seen only by the evaluation cells; the rule and the model reach it as fixed, released
functions (post-processing of the fit part's releases). The parts are disjoint, so by parallel
composition the dataset's cost is max(ε_rule + ε_model, ε_eval) = max(ε_fit, ε_eval), the
same as the IPW evaluation's.

**The score.** Outcomes centred and clipped, y = clip(B) - c in [-u, u] (u = R / 2), the model's
predictions mu_+(x), mu_-(x) clipped to the bounds and centred, the received arm's propensity pi
floored at the public p_min. For the fixed arms::

    phi_all = (mu_ + (X) + 1(A=+1)(y - mu_ + (X)) / pi,)
    phi_none = (mu_ - (X) + 1(A=-1)(y - mu_ - (X)) / pi,)

and the rule's score mu_d(X) + 1(A = d(X)) (y - mu_A(X)) / pi is phi_all where d = +1 and
phi_none where d = -1. E[phi] is the policy's value less c for ANY fixed mu (the propensities
are known): the estimate is unbiased whether or not the model is right (doubly robust with
the propensity side exact); a good model only shrinks the variance.

**Cells.** Rows are split by the rule's recommendation d into two groups, and the released
cells are the four sums (public m, r_i = 1 for a complete row)::

    C_(all, d) = (1/m) sum_i r_i 1(d_i = d) phi_all,i,   C_(none, d) likewise,

in the IPW cells' order (all, +), (all, -), (none, +), (none, -), so that every estimate is
the same signed pair of cells as IPW's: V(rule) = C_(all,+) + C_(none,-), V(all) = C_(all,+) +
C_(all,-), V(none) = C_(none,+) + C_(none,-), gain over treat-all C_(none,-) - C_(all,-), over
treat-none C_(all,+) - C_(none,+).

**Incomplete rows: per arm.** With ``include`` the rows may be missing at different rates in
the two arms, and every score mixes both arms' rows (mu_+(X) enters phi_all for a control
too), so one share for all cells would not do: the cells and moments are released per arm
received, C_(s, d, a) = (1/m) sum_i r_i 1(d_i = d, A_i = a) phi_s,i (eight cells, treated
rows' four then control rows', :data:`AIPW_ARM_CELLS`; twelve moments), with the two arms'
noisy counts of :func:`dpcore.owl.evaluation_common.noisy_counts`, and every estimate is the sum over
the arms of its signed pair of that arm's cells over the arm's complete share q~_a:
E[r 1(A = a) phi] = q_a E[1(A = a) phi] when, within each arm, completeness is independent of
the covariates and the outcome (missing completely at random within arm), so the sum over the
arms is the policy's value less c. A row lies in one (d, a) group, so the sensitivities below
are unchanged; each estimate now sums four cells' noise instead of two (about 1.4 times the
noise). Without ``include`` (every row complete, public) the four cells over all rows are
released, as before.

**Cell sensitivity.** For the received arm |phi| <= u (2 / p_min - 1) = R / p_min - R / 2
(y - mu in [-R, R]); for the other arm |phi| = |mu| <= R / 2; a row's two terms sum to at most
R / p_min in absolute value. Replacing a row moves its pair out of one group and a new pair into
one group: L1 at most 2 R / p_min; within one group the two differences also sum to at most
2 R / p_min. So Delta_1 = 2 R / (m p_min), attained (tests) by a treated row recommended +1 with
y = hi, mu_+ = lo, mu_- = hi, pi = p_min replaced by a control row recommended -1 with y = lo,
mu_- = hi, mu_+ = lo, pi = p_min. It is twice IPW's: each row now enters two cells.

**Moments (the variance: a private estimate).** The intervals need the score's variance; a
public bound ((R / p_min)^2 for a gain) would throw away what the model gains, so it is
estimated privately. With a public centre kappa in [-u, u] (the model's prediction at the
centre of the feature box, averaged over the arms: a function of the released model), six
second moments are released, per group d::

    M_(all, d)  = (1/m) sum r_i 1(d_i = d) (phi_all,i - kappa)^2,   M_(none, d) likewise,
    M_(psi, d)  = (1/m) sum r_i 1(d_i = d) psi_i^2,  psi = phi_all - phi_none,

(psi is the contrast whose group sums are the gains; |psi| <= R / p_min). For any constant k,
E[r (phi - theta)^2] = E[r (phi - k)^2] - q (theta - k)^2 <= E[r (phi - k)^2], so a second
moment about a fixed centre bounds the sampling variance. A value's moment is the sum of its two
cells' (the groups are disjoint rows); a gain's is its group's M_psi. The received arm's term
(phi - kappa)^2 <= (R / p_min)^2, the other arm's <= R^2, psi^2 <= (R / p_min)^2; a replaced row
leaves one group's moments and enters one group's, so the four value moments have L1
sensitivity Delta_v = 2 (1 / p_min^2 + 1) R^2 / m and the two contrast moments Delta_g =
2 R^2 / (m p_min^2) (together about nine times IPW's at p_min = 1/2). They are two Laplace
releases on the same rows: ε_v + ε_g = ε_2, ε_g = ``gain_share`` ε_2 (default 3/4: the gains
decide the verdict) (:func:`moment_budget`).

The noisy moment is raised by the ``level`` quantile of its noise's absolute value (two cells'
for a value, as IPW's; one cell's, -ln(1 - level) times its scale, for a gain) and capped by
Popoviciu's public variance bound, (R / p_min - R / 2)^2 for a value and (R / p_min)^2 for a gain;
Bernstein's range term uses b = R / p_min - R / 2 (value) and R / p_min (gain). The budget
split ε_1 + ε_2 + ε_3 = ε_eval is :func:`dpcore.owl.evaluation_common.evaluation_budget`'s (with
``moment_share`` 0.4 by default, :data:`AIPW_MOMENT_SHARE`; ε_2 = ε_v + ε_g), and the two arms'
counts of complete rows (Delta_3 = 2 for the pair, ε_3 = 0.2 ε_eval by default) and the
intervals (:func:`dpcore.owl.evaluation_interval.arm_ratio_intervals`: Fieller's for one
share, each arm's pivot over its observed share for two) are IPW's.

**When it helps.** Every AIPW score ranges over R / p_min, twice IPW's R / (2 p_min) (the
residual y - mu spans [-R, R]): where the noise dominates (ε_eval <= 2, or few held-out
patients) the AIPW intervals are about twice IPW's. Where the sampling error dominates (large
m ε_eval) their ratio is the model's residual spread over IPW's, below 0.7 only when the
covariates explain most of the outcome beyond the treatment's interaction (ACTG 175's baseline
CD4 at ε_eval = 10; ``benchmarks/evaluation_width.py``, docs/evaluation.md). So IPW is the
default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_outcome_range, check_real
from ..privacy.mechanisms import laplace_scale, sample_laplace
from .evaluation_common import (
    ARM_KEYS,
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
    "AIPW_ARM_CELLS",
    "AIPW_ARM_MOMENTS",
    "AIPW_CELLS",
    "AIPW_MOMENTS",
    "AIPW_MOMENT_SHARE",
    "AIPWEvaluation",
    "aipw_cells",
    "aipw_moment_sensitivity",
    "aipw_moments",
    "aipw_scores",
    "aipw_sensitivity",
    "evaluate_rule_aipw",
    "moment_budget",
    "release_aipw_estimates",
]

AIPW_CELLS = (
    "treat-all score, recommended treated",
    "treat-all score, recommended control",
    "treat-none score, recommended treated",
    "treat-none score, recommended control",
)
AIPW_MOMENTS = (*AIPW_CELLS, "contrast, recommended treated", "contrast, recommended control")
#: With ``include`` the cells and moments are released per arm received: treated patients'
#: first, then control patients' (each arm's parts over its own complete share).
AIPW_ARM_CELLS = tuple(f"{c}, {a} patients" for a in ARM_KEYS for c in AIPW_CELLS)
AIPW_ARM_MOMENTS = tuple(f"{c}, {a} patients" for a in ARM_KEYS for c in AIPW_MOMENTS)
#: Default share of ε_eval on the AIPW moments: 0.4 against IPW's 0.25, because AIPW is worth
#: choosing where the sampling error dominates, and there the moments' noise is the larger
#: part (at ε_eval = 10 it gave 7-13% narrower gain intervals than 0.25, at ε_eval = 1 2% wider).
AIPW_MOMENT_SHARE = 0.4
# The moment of each gain: its group's contrast (over treat-all: group d = -1; over treat-none:
# group d = +1); a value's is the sum of its cells' moments.
_GAIN_MOMENT = {"over_treat_all": 5, "over_treat_none": 4}


def aipw_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivity 2 R / (m p_min) of the four AIPW cells (see the module's Notes)."""
    lo, hi = check_outcome_range(outcome_bounds)
    p_min = check_real(min_propensity, "min_propensity", low=0.0, high=0.5, low_open=True)
    return 2.0 * (hi - lo) / (int(m) * p_min)


def aipw_moment_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivities (values', gains') of the AIPW second moments: 2 (1 / p_min^2 + 1) R^2 / m
    for the four value moments, 2 R^2 / (m p_min^2) for the two contrast moments."""
    lo, hi = check_outcome_range(outcome_bounds)
    p_min = check_real(min_propensity, "min_propensity", low=0.0, high=0.5, low_open=True)
    R2 = (hi - lo) ** 2
    return 2.0 * (1.0 / p_min**2 + 1.0) * R2 / int(m), 2.0 * R2 / (int(m) * p_min**2)


def moment_budget(epsilon_moments, gain_share=0.75):
    """(ε_values, ε_gains): the moments' budget split between the four value moments and the
    two contrast moments (sequential composition on the same rows)."""
    share = check_real(gain_share, "gain_share", low=0.0, high=1.0, low_open=True)
    if share == 1.0:
        raise ValueError("gain_share must be below 1, got 1.0")
    return epsilon_moments * (1.0 - share), epsilon_moments * share


def aipw_scores(A, B, propensity, predictions, outcome_bounds, min_propensity):
    """The rows' centred scores (phi_all, phi_none), each of shape (..., m).

    ``predictions`` (..., m, 2) are the model's treated and control outcomes (clipped here to
    the bounds); the received arm's propensity is floored at the public ``min_propensity``.
    """
    lo, hi = check_outcome_range(outcome_bounds)
    c = (lo + hi) / 2.0
    A = np.asarray(A, dtype=float)
    y = np.clip(np.asarray(B, dtype=float), lo, hi) - c
    mu = np.clip(np.asarray(predictions, dtype=float), lo, hi) - c
    pi = np.maximum(arm_propensity(A, propensity), float(min_propensity))
    treated = A > 0
    correction = (y - np.where(treated, mu[..., 0], mu[..., 1])) / pi
    return (
        mu[..., 0] + np.where(treated, correction, 0.0),
        mu[..., 1] + np.where(treated, 0.0, correction),
    )


def _grouped(recommend, terms, include, m, A=None):
    """(1/m) sums of each term over the rows recommended +1, then -1: terms (k, ..., m) ->
    (..., 2 k) as (term 0, +), (term 0, -), (term 1, +), ...; with the arms ``A``, the same
    over the treated rows, then the same over the control rows (..., 4 k)."""
    d = np.asarray(recommend, dtype=float)
    keep = np.ones(d.shape, bool) if include is None else np.asarray(include, dtype=bool)
    arms = [keep] if A is None else [keep & (np.asarray(A) > 0), keep & (np.asarray(A) <= 0)]
    out = []
    for rows in arms:
        for t in terms:
            t = np.where(rows, t, 0.0)  # an incomplete row's NaN never reaches a sum
            out += [
                np.sum(np.where(d > 0, t, 0.0), axis=-1) / m,
                np.sum(np.where(d > 0, 0.0, t), axis=-1) / m,
            ]
    return np.stack(out, axis=-1)


def aipw_cells(
    recommend,
    A,
    B,
    propensity,
    predictions,
    outcome_bounds,
    min_propensity,
    include=None,
    by_arm=False,
):
    """The exact AIPW cells (..., 4) in :data:`AIPW_CELLS`' order (centred outcomes); with
    ``by_arm`` (..., 8) in :data:`AIPW_ARM_CELLS`' order (the treated rows' four, then the
    control rows')."""
    phi = aipw_scores(A, B, propensity, predictions, outcome_bounds, min_propensity)
    return _grouped(recommend, phi, include, np.shape(A)[-1], A if by_arm else None)


def aipw_moments(
    recommend,
    A,
    B,
    propensity,
    predictions,
    outcome_bounds,
    min_propensity,
    centre,
    include=None,
    by_arm=False,
):
    """The exact second moments (..., 6) in :data:`AIPW_MOMENTS`' order; with ``by_arm``
    (..., 12) in :data:`AIPW_ARM_MOMENTS`' order.

    ``centre`` is the public centre kappa on the outcome's scale (clipped to the bounds): a
    number, or an array of the leading shape (one per simulated release).
    """
    lo, hi = check_outcome_range(outcome_bounds)
    kappa = np.clip(np.asarray(centre, dtype=float), lo, hi)[..., None] - (lo + hi) / 2.0
    phi_all, phi_none = aipw_scores(A, B, propensity, predictions, outcome_bounds, min_propensity)
    terms = ((phi_all - kappa) ** 2, (phi_none - kappa) ** 2, (phi_all - phi_none) ** 2)
    return _grouped(recommend, terms, include, np.shape(A)[-1], A if by_arm else None)


def _aipw_parts(cells, moments, n_arms):
    """Each estimate's part in each arm: numerators (..., 5, K) and raw second moments
    (..., 5, K) from the cells (..., 4 K) and the moments (..., 6 K)."""
    cells, moments = np.asarray(cells, dtype=float), np.asarray(moments, dtype=float)
    lead = cells.shape[:-1]
    num, second = np.zeros(lead + (5, n_arms)), np.zeros(lead + (5, n_arms))
    for k in range(n_arms):
        c, mo = cells[..., 4 * k : 4 * k + 4], moments[..., 6 * k : 6 * k + 6]
        for j, pairs in enumerate(VALUES.values()):
            num[..., j, k] = sum(sign * c[..., i] for sign, i in pairs)
            second[..., j, k] = sum(mo[..., i] for _, i in pairs)
        for j, (name, pairs) in enumerate(GAINS.items(), start=len(VALUES)):
            num[..., j, k] = sum(sign * c[..., i] for sign, i in pairs)
            second[..., j, k] = mo[..., _GAIN_MOMENT[name]]
    return num, second


def release_aipw_estimates(
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
    gain_share=0.75,
    count_rates=None,
):
    """Values, gains and intervals from the released AIPW cells and moments: post-processing.

    The counterpart of :func:`dpcore.owl.evaluation.release_estimates` (same arguments and
    result, vectorised over leading axes), with the AIPW sensitivities, the gains' moments
    taken from the contrasts and the AIPW range bounds (module Notes). Without a count the
    cells (..., 4) and moments (..., 6) are over all rows (shares 1); with the per-arm counts
    (..., 2) they are per arm, (..., 8) and (..., 12), and ``count_rates`` is required.
    """
    lo, hi = check_outcome_range(outcome_bounds)
    cells, moments = np.asarray(cells, dtype=float), np.asarray(moments, dtype=float)
    m, p_min = int(m), float(min_propensity)
    eps1, eps2, eps3 = (float(e) for e in epsilons)
    R = hi - lo
    n_arms = 1 if count is None else 2
    if cells.shape[-1] != 4 * n_arms or moments.shape[-1] != 6 * n_arms:
        raise ValueError(
            f"with {'no count' if count is None else 'per-arm counts'} the AIPW cells and moments "
            f"have {4 * n_arms} and {6 * n_arms} entries, got {cells.shape[-1]} and "
            f"{moments.shape[-1]}"
        )
    s = laplace_scale(aipw_sensitivity((lo, hi), p_min, m), eps1)
    sv, sg = (
        laplace_scale(sens, e)
        for sens, e in zip(
            aipw_moment_sensitivity((lo, hi), p_min, m), moment_budget(eps2, gain_share)
        )
    )
    if count is None:
        share, count_scale = np.ones(cells.shape[:-1] + (1,)), np.zeros(1)
    else:
        share, count_scale = complete_shares(count, m, count_rates, eps3, cells.shape[:-1])
    value_range, gain_range = R / p_min - R / 2.0, R / p_min
    ranges = np.array([value_range] * len(VALUES) + [gain_range] * len(GAINS))
    num, second = _aipw_parts(cells, moments, n_arms)
    # Each moment is raised by the level quantile of its noise: a value's two cells' moments
    # per arm, a gain's one contrast moment per arm.
    noise = [(sv, 2 * n_arms)] * len(VALUES) + [(sg, n_arms)] * len(GAINS)
    point, lower, upper = arm_ratio_intervals(
        num,
        second,
        share,
        m=m,
        s=s,
        cells=np.full((len(ranges), n_arms), 2),
        count_scale=count_scale,
        reach=np.repeat(ranges[:, None], n_arms, axis=1),
        bound=np.array([R / 2.0] * len(VALUES) + [R] * len(GAINS)),
        range_bound=ranges,
        moment_noise=noise,
        cap=ranges**2,
        level=level,
    )
    return outcome_scale(point, lower, upper, (lo, hi), larger_is_better)


@dataclass(frozen=True)
class AIPWEvaluation(PrivateEvaluation):
    """A released AIPW evaluation: :class:`PrivateEvaluation`'s fields (``sensitivity`` the
    cells' Delta_1, ``cells`` and ``moments`` the four and six of :data:`AIPW_CELLS` and
    :data:`AIPW_MOMENTS`, or with the per-arm counts the eight and twelve of
    :data:`AIPW_ARM_CELLS` and :data:`AIPW_ARM_MOMENTS`) and the released outcome model's
    public description (``model``) and centre."""

    model: dict | None = None
    centre: float = 0.0
    moment_split: tuple = ()

    def summary(self):
        return (
            super().summary() + " Doubly robust (AIPW) estimates with a private outcome "
            "model fitted on the other patients."
        )

    def to_dict(self):
        out = super().to_dict()
        by_arm = self.complete is not None
        cells, moments = np.asarray(self.cells), np.asarray(self.moments)
        if by_arm:  # the sums over the arms (post-processing), under the usual names
            cells, moments = cells[:4] + cells[4:], moments[:6] + moments[6:]
        out.update(
            method="aipw (doubly robust, private outcome model)",
            cells=dict(zip(AIPW_CELLS, map(float, cells))),
            second_moments=dict(zip(AIPW_MOMENTS, map(float, moments))),
            cells_by_arm=dict(zip(AIPW_ARM_CELLS, self.cells)) if by_arm else None,
            second_moments_by_arm=dict(zip(AIPW_ARM_MOMENTS, self.moments)) if by_arm else None,
            moment_centre=self.centre,
            outcome_model=self.model,
            summary=self.summary(),
        )
        out["epsilon_split"].update(zip(("value_moments", "contrast_moments"), self.moment_split))
        return out


def evaluate_rule_aipw(
    recommend,
    A,
    B,
    propensity,
    predictions,
    *,
    outcome_bounds,
    larger_is_better=True,
    min_propensity=None,
    epsilon,
    centre=None,
    include=None,
    level=0.95,
    moment_share=AIPW_MOMENT_SHARE,
    count_share=COUNT_SHARE,
    gain_share=0.75,
    rng=None,
    sampler="numpy",
    arms=(None, None),
    model=None,
):
    """Release the AIPW values of a rule, of treat-all and of treat-none with ε_eval-DP.

    Parameters
    ----------
    recommend, A, B, propensity, outcome_bounds, larger_is_better, min_propensity, epsilon,
    include, level, count_share, rng, sampler, arms
        As in :func:`dpcore.owl.evaluation.evaluate_rule`.
    moment_share : float
        Share of ε_eval on the second moments (default :data:`AIPW_MOMENT_SHARE`).
    predictions : array (m, 2)
        A FIXED model's treated and control predictions on the evaluation rows: a model fitted
        on other rows (the fit part) and released, never on these rows.
    centre : float, optional
        Public centre of the second moments, on the outcome's scale (default the bounds'
        midpoint); a function of the released model, e.g. its prediction at the centre of the
        feature box.
    gain_share : float
        Share of the moments' budget spent on the two contrast moments that size the gains'
        intervals (the rest on the four value moments): :func:`moment_budget`.
    model : dict, optional
        The released model's description, carried into ``to_dict``.

    Returns
    -------
    AIPWEvaluation

    Notes
    -----
    Draw order (one Generator): the four cells' Laplace(Delta_1 / ε_1), the four value moments'
    Laplace(Delta_v / ε_v), the two contrast moments' Laplace(Delta_g / ε_g); with ``include``
    eight cells', eight value moments' and four contrast moments' (per arm received), then the
    two arms' counts' Laplace(2 / ε_3); ε_1 + ε_v + ε_g + ε_3 = ε_eval.
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
    (lo, hi), p_min, m, counted = plan.outcome_bounds, plan.min_propensity, plan.m, plan.counted
    if np.shape(predictions) != (m, 2):
        raise ValueError(
            f"predictions must have shape ({m}, 2) (treated, control), got {np.shape(predictions)}"
        )
    centre = (lo + hi) / 2.0 if centre is None else float(np.clip(centre, lo, hi))
    delta1 = aipw_sensitivity((lo, hi), p_min, m)
    delta_v, delta_g = aipw_moment_sensitivity((lo, hi), p_min, m)
    eps1, eps2, eps3 = plan.epsilons
    eps_v, eps_g = moment_budget(eps2, gain_share)
    args = (recommend, A, B, propensity, predictions, (lo, hi), p_min)
    k = 2 if counted else 1  # with ``include``, per arm received
    noisy = aipw_cells(*args, include, by_arm=counted) + sample_laplace(
        eps1, delta1, 4 * k, rng=rng, sampler=sampler
    )
    value_noise = sample_laplace(eps_v, delta_v, 4 * k, rng=rng, sampler=sampler)
    gain_noise = sample_laplace(eps_g, delta_g, 2 * k, rng=rng, sampler=sampler)
    moments = aipw_moments(*args, centre, include, by_arm=counted) + np.concatenate(
        [
            np.concatenate((value_noise[4 * a : 4 * a + 4], gain_noise[2 * a : 2 * a + 2]))
            for a in range(k)
        ]
    )
    count = noisy_counts(A, propensity, p_min, include, eps3, rng, sampler) if counted else None
    return AIPWEvaluation.released(
        plan,
        functools.partial(release_aipw_estimates, gain_share=gain_share),
        noisy,
        moments,
        count,
        sensitivity=delta1,
        arms=arms,
        model=model,
        centre=centre,
        moment_split=(float(eps_v), float(eps_g)),
    )
