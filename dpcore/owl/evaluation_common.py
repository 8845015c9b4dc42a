"""What every private evaluation shares, whatever its estimator (IPW, AIPW, K arms).

- The split of ε_eval between the cells, their second moments and the arms' counts of complete
  rows (:func:`evaluation_budget`, sequential composition on the evaluation part's rows).
- The arms' noisy counts of complete rows, released with L1 sensitivity
  :data:`COUNT_SENSITIVITY` = 2 (a replaced row leaves one arm's count and enters another's),
  and the complete shares they give (:func:`complete_shares`).
- The two-arm estimates: the rule's value, treat-all's and treat-none's and the rule's gains
  over each fixed arm, as signed sums of the four cells (arm received, arm recommended)
  (:data:`VALUES`, :data:`GAINS`), on the outcome's scale (:func:`outcome_scale`), an
  :class:`Estimate` each.
- The verdict (:func:`verdict_of`): "better" when every gain's interval lies above 0.
- A two-arm evaluation's public numbers (:class:`EvaluationPlan`, :func:`evaluation_plan`):
  what its release depends on besides the data and the noise.

The estimators are :mod:`dpcore.owl.evaluation` (IPW, the default),
:mod:`dpcore.owl.evaluation_aipw` and :mod:`dpcore.owl.evaluation_arms`; their intervals
:mod:`dpcore.owl.evaluation_interval`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_epsilon, check_outcome_range, check_real
from ..privacy.mechanisms import sample_laplace
from .owl import arm_propensity

__all__ = [
    "ARM_KEYS",
    "CELLS",
    "CELL_ARM",
    "COUNT_SENSITIVITY",
    "COUNT_SHARE",
    "GAINS",
    "VALUES",
    "Estimate",
    "EvaluationPlan",
    "arm_complete_counts",
    "by_arm",
    "checked_inputs",
    "checked_release",
    "complete_counts",
    "complete_shares",
    "count_rates",
    "estimates_of",
    "evaluation_budget",
    "evaluation_plan",
    "noisy_counts",
    "outcome_scale",
    "verdict_of",
]

#: L1 sensitivity of the pair of per-arm complete counts (N_+, N_-): replacing one row takes at
#: most 1 from one arm's count and adds at most 1 to the other's (a row that changes arm).
COUNT_SENSITIVITY = 2.0
#: Default share of ε_eval on the per-arm counts (only with ``include``): 0.2 gave the narrowest
#: intervals of 0.1, 0.2, 0.3 and 0.4 at m = 200, ε_eval = 0.5-1 (the count's noise enters
#: scaled by the arm's centred value) and within 5% of the narrowest elsewhere (docs/evaluation.md).
COUNT_SHARE = 0.2
#: Each estimate as (sign, cell) pairs over the cells S_++, S_+-, S_-+, S_-- (benefit scale).
VALUES = {"rule": ((1, 0), (1, 3)), "treat_all": ((1, 0), (1, 1)), "treat_none": ((1, 2), (1, 3))}
GAINS = {"over_treat_all": ((1, 3), (-1, 1)), "over_treat_none": ((1, 0), (-1, 2))}
#: The four cells of a two-arm evaluation, by (arm received, arm the rule recommends).
CELLS = (
    "treated, recommended treated",
    "treated, recommended control",
    "control, recommended treated",
    "control, recommended control",
)
#: The arm (0 treated, 1 control) whose patients each cell holds.
CELL_ARM = (0, 0, 1, 1)
ARM_KEYS = ("treated", "control")


@dataclass(frozen=True)
class Estimate:
    """A private estimate and its interval, in the outcome's own units."""

    value: float
    lower: float
    upper: float

    def to_dict(self) -> dict[str, float]:
        """The estimate as a released file writes it: value, lower and upper."""
        return {"value": self.value, "lower": self.lower, "upper": self.upper}


def evaluation_budget(epsilon, moment_share=0.25, count_share=COUNT_SHARE, count=True):
    """How ε_eval is split between the cells, the second moments and the per-arm counts.

    Sequential composition over the three releases on the same rows: ε_1 + ε_2 + ε_3 = ε_eval
    with ε_2 = ``moment_share`` ε_eval, ε_3 = ``count_share`` ε_eval when the two arms' counts
    of complete rows are released (``count``; else ε_3 = 0; one Laplace mechanism on the pair,
    L1 sensitivity 2) and ε_1 the rest (the four cells, L1 sensitivity R / (m p_min)).

    Returns
    -------
    (eps_cells, eps_moments, eps_count) : floats (all inf when ε_eval is inf)
    """
    epsilon = check_epsilon(epsilon)
    share2 = check_real(moment_share, "moment_share", low=0.0, high=1.0)
    share3 = check_real(count_share, "count_share", low=0.0, high=1.0) if count else 0.0
    if share2 + share3 >= 1.0:
        raise ValueError(f"moment_share + count_share must be below 1, got {share2 + share3:g}")
    return epsilon * (1.0 - share2 - share3), epsilon * share2, epsilon * share3


def checked_release(epsilon, level, rng):
    """An evaluation's checked ε and level, and its one Generator for every draw."""
    epsilon = check_epsilon(epsilon)
    level = check_real(level, "level", low=0.0, high=1.0)
    if level == 1.0:
        raise ValueError("level must be < 1, got 1.0")
    # One Generator for every draw: an int seed passed twice would repeat the same noise,
    # and the moments' noise would then cancel the cells' (a privacy failure, not just a bias).
    return epsilon, level, np.random.default_rng(rng)


@dataclass(frozen=True)
class EvaluationPlan:
    """The public numbers a two-arm evaluation's release depends on, besides the data and the
    noise: ε_eval and its split (ε_cells, ε_moments, ε_counts), the level, the part's size m,
    the outcome bounds, the public p_min, the direction and the arms' count rates;
    ``counted`` when the arms' counts of complete rows are released (``include`` given)."""

    epsilon: float
    level: float
    m: int
    outcome_bounds: tuple
    min_propensity: float
    epsilons: tuple
    larger_is_better: bool
    count_rates: tuple
    counted: bool

    def estimates(self, release, cells, moments, count, level, **extra):
        """``release``'s values, gains and intervals at ``level`` (post-processing of the noisy
        numbers: :func:`dpcore.owl.evaluation.release_estimates` or AIPW's) with this plan's
        public numbers."""
        return release(
            cells,
            moments,
            count,
            m=self.m,
            outcome_bounds=self.outcome_bounds,
            min_propensity=self.min_propensity,
            epsilons=self.epsilons,
            level=level,
            larger_is_better=self.larger_is_better,
            count_rates=self.count_rates,
            **extra,
        )


def evaluation_plan(
    A,
    propensity,
    *,
    epsilon,
    level,
    rng,
    outcome_bounds,
    larger_is_better,
    min_propensity,
    include,
    moment_share,
    count_share,
):
    """A two-arm evaluation's checked :class:`EvaluationPlan` and its one Generator.

    ``A`` gives the part's public size m; the split of ε_eval is :func:`evaluation_budget`'s,
    with a share on the counts only when ``include`` is given."""
    epsilon, level, rng, min_propensity = checked_inputs(
        epsilon, level, rng, propensity, min_propensity
    )
    p_min = float(min_propensity)
    counted = include is not None
    plan = EvaluationPlan(
        epsilon=epsilon,
        level=level,
        m=int(np.shape(A)[-1]),
        outcome_bounds=check_outcome_range(outcome_bounds),
        min_propensity=p_min,
        epsilons=evaluation_budget(epsilon, moment_share, count_share, counted),
        larger_is_better=bool(larger_is_better),
        count_rates=count_rates(propensity, p_min),
        counted=counted,
    )
    return plan, rng


def checked_inputs(epsilon, level, rng, propensity, min_propensity):
    """A two-arm evaluation's :func:`checked_release` and the public p_min (the design's
    smaller arm probability for a constant propensity; given explicitly for a per-row one)."""
    epsilon, level, rng = checked_release(epsilon, level, rng)
    if np.ndim(propensity) == 0:
        p = float(propensity)
        min_propensity = min(p, 1.0 - p) if min_propensity is None else min_propensity
    elif min_propensity is None:
        raise ValueError("a per-row propensity needs a public min_propensity")
    return epsilon, level, rng, min_propensity


def count_rates(propensity, min_propensity):
    """(rho_+, rho_-): each arm's public rate, so that arm a's complete share is its count over
    m rho_a.

    A constant design P(treated) = p gives the arm probabilities (p, 1 - p), floored at p_min
    as the cells' propensities are, and each complete row counts 1. A per-row propensity has no
    public arm probability: each complete row of arm a counts p_min / pi_i (at most 1), whose
    mean over the part is p_min times the arm's complete share, so rho = (p_min, p_min).
    """
    p_min = float(min_propensity)
    if np.ndim(propensity) == 0:
        p = float(propensity)
        return max(p, p_min), max(1.0 - p, p_min)
    return p_min, p_min


def complete_counts(A, propensity, min_propensity, include):
    """The exact per-arm counts (N_+, N_-) of complete rows, shape (..., 2).

    N_a = sum_i r_i 1(A_i = a) rho_a / pi_i with rho of :func:`count_rates` and pi_i the row's
    propensity of its arm floored at p_min: for a constant design every complete row counts 1
    (rho_a = pi_i); with a per-row propensity it counts p_min / pi_i in [0, 1].
    """
    A = np.asarray(A, dtype=float)
    rates = count_rates(propensity, min_propensity)
    pi = np.maximum(arm_propensity(A, propensity), float(min_propensity))
    keep = np.ones(A.shape, bool) if include is None else np.asarray(include, dtype=bool)
    return np.stack(
        [
            np.sum(np.where(keep & arm, rate / pi, 0.0), axis=-1)
            for arm, rate in ((A > 0, rates[0]), (A <= 0, rates[1]))
        ],
        axis=-1,
    )


def noisy_counts(A, propensity, min_propensity, include, epsilon, rng, sampler):
    """The released per-arm counts of complete rows: (N_+, N_-) plus Laplace(2 / ε) on each
    (L1 sensitivity 2, :data:`COUNT_SENSITIVITY`: a replaced row leaves at most 1 in one arm's
    count and adds at most 1 to the other's; each row's weight in a count is at most 1)."""
    exact = complete_counts(A, propensity, min_propensity, include)
    noise = sample_laplace(epsilon, COUNT_SENSITIVITY, 2, rng=rng, sampler=sampler)
    return tuple(float(v) for v in exact + noise)


def arm_complete_counts(A, n_arms, include):
    """The arms' exact counts of complete rows (..., K)."""
    A = np.asarray(A, dtype=int)
    keep = np.ones(A.shape, bool) if include is None else np.asarray(include, dtype=bool)
    return np.stack([np.sum(keep & (A == k), axis=-1) for k in range(n_arms)], axis=-1).astype(
        float
    )


def complete_shares(count, m, rates, epsilon_count, lead=()):
    """(shares (..., K), count_scale (K,)): the arms' noisy complete shares N~_a / (m rho_a) and
    the Laplace scale of each share's noise, 2 / (m rho_a ε_3); ones and zeros without a count.
    ``rates`` are the K arms' public rates (:func:`count_rates` for two arms)."""
    if count is None:
        k = 2 if rates is None else len(rates)
        return np.ones(tuple(lead) + (k,)), np.zeros(k)
    if rates is None:
        raise ValueError("a count needs the arms' count_rates (see count_rates())")
    rates = np.asarray(rates, dtype=float)
    count = np.asarray(count, dtype=float)
    if count.shape[-1:] != rates.shape:
        raise ValueError(
            f"count must hold the {rates.size} arms' noisy complete counts (..., {rates.size}), "
            f"got shape {count.shape}"
        )
    scale = (
        np.zeros(rates.size)
        if np.isinf(epsilon_count)
        else COUNT_SENSITIVITY / (m * rates * epsilon_count)
    )
    return count / (m * rates), scale


def by_arm(pair):
    """{"treated": ..., "control": ...} of a per-arm pair, or None."""
    return None if pair is None else dict(zip(ARM_KEYS, (float(v) for v in pair)))


def estimates_of(est):
    """({value name: Estimate}, {gain name: Estimate}) of :func:`release_estimates`' table."""
    as_estimate = lambda k: Estimate(*(float(v) for v in est[k]))  # noqa: E731
    return (
        {name: as_estimate(name) for name in VALUES},
        {name: as_estimate(name) for name in GAINS},
    )


def verdict_of(gains):
    """ "better" when every gain's interval lies above 0, "worse" when one lies below, else
    "inconclusive" (:mod:`dpcore.owl.evaluation`'s Notes, **Verdict**; over K arms the same).
    """
    if all(g.lower > 0 for g in gains.values()):
        return "better"
    if any(g.upper < 0 for g in gains.values()):
        return "worse"
    return "inconclusive"


def outcome_scale(point, lower, upper, outcome_bounds, larger_is_better=True):
    """The five estimates (..., 5) on the outcome's scale: values offset by the bounds'
    midpoint, gains with the direction's sign (positive is better for patients)."""
    lo, hi = (float(v) for v in outcome_bounds)
    sign = 1.0 if larger_is_better else -1.0
    offset = np.array([(lo + hi) / 2.0] * len(VALUES) + [0.0] * len(GAINS))
    flip = np.array([1.0] * len(VALUES) + [sign] * len(GAINS))
    a, b = flip * lower, flip * upper
    value, low, up = offset + flip * point, offset + np.minimum(a, b), offset + np.maximum(a, b)
    return {
        name: (value[..., j], low[..., j], up[..., j]) for j, name in enumerate((*VALUES, *GAINS))
    }
