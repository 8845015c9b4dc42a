"""Private evaluation of a released rule by a public sample split.

The trial's rows are split by a public seeded permutation (default 80/20): the rule is fitted
on the first part at ε_fit, and on the second part the values of the rule, of treating everyone
and of treating no one are released with the Laplace mechanism at ε_eval. Each patient is in
one part only, so by parallel composition the release costs the dataset max(ε_fit, ε_eval)
(a row of the evaluation part is not seen by the fit; a row of the fit part reaches the
evaluation only through the released rule, which is post-processing). The doubly robust
alternative, with a private outcome model, is :mod:`dpcore.owl.evaluation_aipw`
(``fit_and_evaluate(..., evaluation="aipw")``); this IPW evaluation is the default.

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

rho_a is the arm's public rate (:func:`count_rates`): for a known randomization p the arm's
probability (p or 1 - p, floored at p_min), so rho_a / pi_i = 1 and N_a is the arm's number of
complete rows; for a per-row propensity rho_a = p_min and a complete row counts p_min / pi_i,
at most 1. The cells S_+. hold treated patients only and S_-. controls only.

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
(:func:`evaluation_budget`): by default ε_2 = 0.25 ε_eval (``moment_share``), ε_3 = 0.20
ε_eval (``count_share``, only with ``include``: :data:`COUNT_SHARE`) and ε_1 = 0.55 ε_eval
(0.75 without counts). Every value, gain and interval is post-processing of (S~, M~, N~) and
public numbers; the shape of the release depends only on whether ``include`` is given, never
on the data.

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

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_bounds, check_epsilon, check_real
from ..privacy.mechanisms import sample_laplace
from .dpowl import DPOWL
from .evaluation_interval import arm_ratio_intervals
from .owl import arm_propensity

if TYPE_CHECKING:
    from ..privacy.accounting import PrivacyLedger

__all__ = [
    "COUNT_SENSITIVITY",
    "Estimate",
    "PrivateEvaluation",
    "cell_sums",
    "complete_counts",
    "count_rates",
    "evaluate_rule",
    "evaluation_budget",
    "evaluation_sensitivity",
    "fit_and_evaluate",
    "moment_sensitivity",
    "public_split",
    "release_estimates",
    "verdict_of",
]

#: L1 sensitivity of the pair of per-arm complete counts (N_+, N_-): replacing one row takes at
#: most 1 from one arm's count and adds at most 1 to the other's (a row that changes arm).
COUNT_SENSITIVITY = 2.0
#: Default share of ε_eval on the per-arm counts (only with ``include``): 0.2 gave the narrowest
#: intervals of 0.1, 0.2, 0.3 and 0.4 at m = 200, ε_eval = 0.5-1 (the count's noise enters
#: scaled by the arm's centred value) and within 5% of the narrowest elsewhere (docs/evaluation.md).
COUNT_SHARE = 0.2

CELLS = (
    "treated, recommended treated",
    "treated, recommended control",
    "control, recommended treated",
    "control, recommended control",
)
# Each estimate as (sign, cell) pairs over the cells S_++, S_+-, S_-+, S_-- (benefit scale).
_VALUES = {"rule": ((1, 0), (1, 3)), "treat_all": ((1, 0), (1, 1)), "treat_none": ((1, 2), (1, 3))}
_GAINS = {"over_treat_all": ((1, 3), (-1, 1)), "over_treat_none": ((1, 0), (-1, 2))}
#: The arm (0 treated, 1 control) whose patients each cell holds.
_CELL_ARM = (0, 0, 1, 1)
ARM_KEYS = ("treated", "control")


def public_split(n, fit_share=0.8, seed=0):
    """Row positions of the fit part and of the evaluation part: a public seeded permutation.

    It depends on the public n, the share and the seed only, never on the data.

    Returns
    -------
    (fit_rows, eval_rows) : two sorted int arrays that partition ``range(n)``
    """
    n = int(check_real(n, "n", low=1.0))
    fit_share = check_real(fit_share, "fit_share", low=0.0, high=1.0)
    n_fit = int(round(fit_share * n))
    if not 0 < n_fit < n:
        raise ValueError(f"a split of {n} rows with fit_share={fit_share:g} leaves a part empty")
    perm = np.random.default_rng([int(seed), n]).permutation(n)
    return np.sort(perm[:n_fit]), np.sort(perm[n_fit:])


def evaluation_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivity R / (m p_min) of the four cell sums (see the module's Notes)."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    p_min = check_real(min_propensity, "min_propensity", low=0.0, high=0.5, low_open=True)
    return (hi - lo) / (int(m) * p_min)


def moment_sensitivity(outcome_bounds, min_propensity, m):
    """L1 sensitivity R^2 / (2 m p_min^2) of the four cells' second moments."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    return (hi - lo) ** 2 / (2.0 * int(m) * float(min_propensity) ** 2)


def cell_sums(recommend, A, B, propensity, outcome_bounds, min_propensity, include=None, power=1):
    """The four exact (noiseless) cell sums S_ad of the evaluation part (centred outcomes);
    ``power=2`` gives the second moments M_ad."""
    A = np.asarray(A, dtype=float)
    d = np.asarray(recommend, dtype=float)
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    y = np.clip(np.asarray(B, dtype=float), lo, hi) - (lo + hi) / 2.0
    pi = np.maximum(arm_propensity(A, propensity), float(min_propensity))
    t = (y / pi) ** power
    if include is not None:
        t = np.where(np.asarray(include, dtype=bool), t, 0.0)
    m = A.shape[-1]
    cells = [(A > 0) & (d > 0), (A > 0) & (d <= 0), (A <= 0) & (d > 0), (A <= 0) & (d <= 0)]
    return np.stack([np.sum(np.where(c, t, 0.0), axis=-1) / m for c in cells], axis=-1)


@dataclass(frozen=True)
class Estimate:
    """A private estimate and its interval, in the outcome's own units."""

    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class PrivateEvaluation:
    """The released evaluation: noisy cells and what follows from them (all releasable).

    ``values`` holds the rule, treat_all and treat_none on the outcome's scale; ``gains`` the
    rule's improvement over each fixed arm (positive is better for patients, outcome units);
    ``verdict`` is "better", "worse" or "inconclusive" (see the module's Notes). ``complete``
    is the pair of noisy per-arm counts of complete rows (treated, control; None when every
    row was declared complete), ``count_rates`` the arms' public rates that turn them into
    complete shares (:func:`count_rates`) and ``budget`` the split (ε_cells, ε_moments,
    ε_counts) of ε_eval.
    """

    epsilon: float
    m: int
    sensitivity: float
    level: float
    cells: tuple
    moments: tuple
    values: dict
    gains: dict
    verdict: str
    treated: object = None
    control: object = None
    complete: tuple | None = None
    budget: tuple = ()
    count_rates: tuple | None = None
    #: treat-all's value minus treat-none's (treated minus control, outcome units): the
    #: average effect, post-processing of the same cells (:func:`average_effect`).
    average_effect: Estimate | None = None
    larger_is_better: bool = True

    @property
    def better_on_average(self) -> object:
        """The arm better on average when the average effect's interval excludes 0, else None."""
        e = self.average_effect
        if e is None or e.lower <= 0.0 <= e.upper:
            return None
        treated_better = (e.lower > 0.0) == bool(self.larger_is_better)
        return self.treated if treated_better else self.control

    def first_answer(self) -> str:
        """Which arm is better on average, with its interval, in one sentence ('' without)."""
        e = self.average_effect
        if e is None:
            return ""
        pct = f"{100 * self.level:g}%"
        treated = f"'{self.treated}'" if self.treated is not None else "the treated arm"
        control = f"'{self.control}'" if self.control is not None else "the control arm"
        diff = f"{treated} minus {control}: {e.value:+.3g} [{e.lower:.3g}, {e.upper:.3g}]"
        better = self.better_on_average
        if better is None:
            return (
                f"On average the two arms cannot be told apart ({pct} interval of the "
                f"difference {diff}, in the outcome's units)."
            )
        size = min(abs(e.lower), abs(e.upper))
        return (
            f"On average '{better}' is better, by at least {size:.3g} in the outcome's units "
            f"({pct} interval of the difference {diff})."
        )

    @property
    def complete_shares(self) -> tuple | None:
        """The arms' noisy complete shares N~_a / (m rho_a) (post-processing), or None."""
        if self.complete is None or self.count_rates is None:
            return None
        return tuple(float(n) / (self.m * r) for n, r in zip(self.complete, self.count_rates))

    def summary(self) -> str:
        """The first answer (which arm is better on average), then the rule's verdict and the
        evidence behind it, in plain sentences."""
        first = self.first_answer()
        return (first + " " if first else "") + self.rule_sentence()

    def rule_sentence(self) -> str:
        """One plain sentence with the rule's verdict and the evidence behind it."""
        pct = f"{100 * self.level:g}%"
        all_, none = self.gains["over_treat_all"], self.gains["over_treat_none"]
        arms = f"'{self.treated}'" if self.treated is not None else "the treated arm"
        ctrl = f"'{self.control}'" if self.control is not None else "the control arm"
        head = {
            "better": "The private rule beats treating everyone with either arm",
            "worse": "The private rule does worse than treating everyone with one arm",
            "inconclusive": "This evaluation cannot tell whether the private rule beats "
            "treating everyone with the better arm",
        }[self.verdict]
        return (
            f"{head} ({pct} confidence, ε_eval = {self.epsilon:g}, {self.m} patients held "
            f"out): its gain over giving everyone {arms} is {all_.value:+.3g} "
            f"[{all_.lower:.3g}, {all_.upper:.3g}], over giving everyone {ctrl} "
            f"{none.value:+.3g} [{none.lower:.3g}, {none.upper:.3g}], in the outcome's "
            "units (positive is better for patients)."
            + (
                ""
                if self.complete is None
                else " The values are those of patients with complete rows, each arm's "
                "corrected by a noisy count of its complete rows (the population's when rows "
                "are missing completely at random within each arm: independently of the "
                "patients' covariates and outcomes)."
            )
        )

    def to_dict(self) -> dict[str, Any]:
        as_dict = lambda e: {"value": e.value, "lower": e.lower, "upper": e.upper}  # noqa: E731
        return {
            "epsilon_eval": self.epsilon,
            "patients": self.m,
            "level": self.level,
            "sensitivity_l1": self.sensitivity,
            "cells": dict(zip(CELLS, self.cells)),
            "second_moments": dict(zip(CELLS, self.moments)),
            "complete_rows_noisy": by_arm(self.complete),
            "complete_share_noisy": by_arm(self.complete_shares),
            "complete_count_rates": by_arm(self.count_rates),
            "complete_count_sensitivity_l1": (None if self.complete is None else COUNT_SENSITIVITY),
            "epsilon_split": dict(zip(("cells", "second_moments", "complete_count"), self.budget)),
            "values": {k: as_dict(v) for k, v in self.values.items()},
            "gains": {k: as_dict(v) for k, v in self.gains.items()},
            **(
                {}
                if self.average_effect is None
                else {
                    "average_effect": {
                        **as_dict(self.average_effect),
                        "meaning": "treat-all's value minus treat-none's (treated minus control), "
                        "outcome units; the interval's level holds for the two values together",
                        "better_on_average": None
                        if self.better_on_average is None
                        else str(self.better_on_average),
                    }
                }
            ),
            "verdict": self.verdict,
            "summary": self.summary(),
        }


def by_arm(pair):
    """{"treated": ..., "control": ...} of a per-arm pair, or None."""
    return None if pair is None else dict(zip(ARM_KEYS, (float(v) for v in pair)))


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


def estimates_of(est):
    """({value name: Estimate}, {gain name: Estimate}) of :func:`release_estimates`' table."""
    as_estimate = lambda k: Estimate(*(float(v) for v in est[k]))  # noqa: E731
    return (
        {name: as_estimate(name) for name in _VALUES},
        {name: as_estimate(name) for name in _GAINS},
    )


def checked_inputs(epsilon, level, rng, propensity, min_propensity):
    """An evaluation's checked ε and level, its one Generator and the public p_min (the design's
    smaller arm probability for a constant propensity; given explicitly for a per-row one)."""
    epsilon = check_epsilon(epsilon)
    level = check_real(level, "level", low=0.0, high=1.0)
    if level == 1.0:
        raise ValueError("level must be < 1, got 1.0")
    # One Generator for every draw: an int seed passed twice would repeat the same noise,
    # and the moments' noise would then cancel the cells' (a privacy failure, not just a bias).
    rng = np.random.default_rng(rng)
    if np.ndim(propensity) == 0:
        p = float(propensity)
        min_propensity = min(p, 1.0 - p) if min_propensity is None else min_propensity
    elif min_propensity is None:
        raise ValueError("a per-row propensity needs a public min_propensity")
    return epsilon, level, rng, min_propensity


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
        ``include``; default :data:`COUNT_SHARE`).
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
    control); the split is :func:`evaluation_budget`, ε_1 + ε_2 + ε_3 = ε_eval. Every output
    field but the noisy numbers (cells, moments, counts, and what follows from them) depends on
    public values only: m, the bounds, p_min, whether the propensity is constant, ε_eval, the
    shares, the level and whether ``include`` was given.
    """
    epsilon, level, rng, min_propensity = checked_inputs(
        epsilon, level, rng, propensity, min_propensity
    )
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    m = int(np.shape(A)[-1])
    p_min = float(min_propensity)
    delta1 = evaluation_sensitivity((lo, hi), p_min, m)
    delta2 = moment_sensitivity((lo, hi), p_min, m)
    counted = include is not None
    eps1, eps2, eps3 = evaluation_budget(epsilon, moment_share, count_share, counted)
    args = (recommend, A, B, propensity, (lo, hi), p_min, include)
    noisy = cell_sums(*args) + sample_laplace(eps1, delta1, 4, rng=rng, sampler=sampler)
    moments = cell_sums(*args, power=2) + sample_laplace(eps2, delta2, 4, rng=rng, sampler=sampler)
    count = noisy_counts(A, propensity, p_min, include, eps3, rng, sampler) if counted else None
    rates = count_rates(propensity, p_min)

    def release(at):
        return release_estimates(
            noisy,
            moments,
            count,
            m=m,
            outcome_bounds=(lo, hi),
            min_propensity=p_min,
            epsilons=(eps1, eps2, eps3),
            level=at,
            larger_is_better=larger_is_better,
            count_rates=rates,
        )

    return PrivateEvaluation(
        epsilon=epsilon,
        m=m,
        sensitivity=delta1,
        level=level,
        cells=tuple(map(float, noisy)),
        moments=tuple(map(float, moments)),
        treated=arms[0],
        control=arms[1],
        complete=count,
        budget=(float(eps1), float(eps2), float(eps3)),
        count_rates=tuple(float(r) for r in rates) if counted else None,
        larger_is_better=bool(larger_is_better),
        **estimated(release, level),
    )


def estimated(release, level):
    """What an evaluation derives from its release function (``release(level)`` gives the
    estimates at a level): its values, gains, verdict and average effect."""
    values, gains = estimates_of(release(level))
    return dict(
        values=values,
        gains=gains,
        verdict=verdict_of(gains),
        average_effect=average_effect(release, level),
    )


def average_effect(release, level):
    """The average effect, treat-all's value minus treat-none's (treated minus control, in the
    outcome's units), with an interval at ``level``: post-processing of the released cells.

    ``release(level)`` gives the estimates at a level (the evaluation's own release function
    on its noisy numbers); each of the two values is taken at 1 - (1 - level)/2, so both hold
    together with probability at least ``level`` (a union bound) and the difference's interval
    is [lower_all - upper_none, upper_all - lower_none]. Nothing more is released: it spends no ε.
    """
    half = release(1.0 - (1.0 - level) / 2.0)
    (a, a_lo, a_hi), (b, b_lo, b_hi) = half["treat_all"], half["treat_none"]
    return Estimate(float(a - b), float(a_lo - b_hi), float(a_hi - b_lo))


def verdict_of(gains):
    """ "better" when both gains' intervals lie above 0, "worse" when one lies below, else
    "inconclusive" (the module's Notes)."""
    if all(g.lower > 0 for g in gains.values()):
        return "better"
    if any(g.upper < 0 for g in gains.values()):
        return "worse"
    return "inconclusive"


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
        The budget of the cells, the moments and the counts (:func:`evaluation_budget`).
    level : float
    larger_is_better : bool
    count_rates : (rho_+, rho_-), required with a count
        The arms' public rates (:func:`count_rates`): the complete shares are N~_a / (m rho_a).

    Returns
    -------
    dict name -> (value, lower, upper), arrays of the leading shape, for "rule",
    "treat_all", "treat_none" (outcome scale) and "over_treat_all", "over_treat_none" (gains,
    positive is better for patients).
    """
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    cells, moments = np.asarray(cells, dtype=float), np.asarray(moments, dtype=float)
    m, p_min = int(m), float(min_propensity)
    eps1, eps2, eps3 = (float(e) for e in epsilons)
    R = hi - lo
    s = 0.0 if np.isinf(eps1) else evaluation_sensitivity((lo, hi), p_min, m) / eps1
    s2 = 0.0 if np.isinf(eps2) else moment_sensitivity((lo, hi), p_min, m) / eps2
    share, count_scale = complete_shares(count, m, count_rates, eps3, cells.shape[:-1])
    names = (*_VALUES, *_GAINS)
    value = np.array([name in _VALUES for name in names])
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


def arm_parts(cells, signed=True, table=None):
    """Each estimate's part in each arm (..., 5, 2): the (signed) sum of its cells of that arm.

    ``signed=False`` adds the cells' second moments (a part's sampling second moment)."""
    cells = np.asarray(cells, dtype=float)
    table = (*_VALUES.values(), *_GAINS.values()) if table is None else table
    out = np.zeros(cells.shape[:-1] + (len(table), 2))
    for j, pairs in enumerate(table):
        for sign, c in pairs:
            out[..., j, _CELL_ARM[c]] += (sign if signed else 1.0) * cells[..., c]
    return out


def _part_cells(table):
    out = np.zeros((len(table), 2), int)
    for j, pairs in enumerate(table):
        for _, c in pairs:
            out[j, _CELL_ARM[c]] += 1
    return out


#: How many released cells each estimate's part in each arm sums (rule: one per arm; a fixed
#: arm: two of its own; each gain: one per arm).
_PART_CELLS = _part_cells((*_VALUES.values(), *_GAINS.values()))


def outcome_scale(point, lower, upper, outcome_bounds, larger_is_better=True):
    """The five estimates (..., 5) on the outcome's scale: values offset by the bounds'
    midpoint, gains with the direction's sign (positive is better for patients)."""
    lo, hi = (float(v) for v in outcome_bounds)
    sign = 1.0 if larger_is_better else -1.0
    offset = np.array([(lo + hi) / 2.0] * len(_VALUES) + [0.0] * len(_GAINS))
    flip = np.array([1.0] * len(_VALUES) + [sign] * len(_GAINS))
    a, b = flip * lower, flip * upper
    value, low, up = offset + flip * point, offset + np.minimum(a, b), offset + np.maximum(a, b)
    return {
        name: (value[..., j], low[..., j], up[..., j]) for j, name in enumerate((*_VALUES, *_GAINS))
    }


def signed_sums(cells):
    """The five estimates' numerators (..., 5) from the four cells (..., 4): the three values'
    then the two gains' signed pairs of cells (benefit scale, before the direction's sign)."""
    cells = np.asarray(cells, dtype=float)
    return np.stack(
        [
            sum(k * cells[..., c] for k, c in pairs)
            for pairs in (*_VALUES.values(), *_GAINS.values())
        ],
        -1,
    )


EVALUATIONS = ("ipw", "aipw")


def fit_and_evaluate(
    X: ArrayLike,
    A: ArrayLike,
    B: ArrayLike,
    propensity: float | ArrayLike,
    *,
    epsilon_fit: float,
    epsilon_eval: float,
    fit_share: float = 0.8,
    split_seed: int = 0,
    min_propensity: float | None = None,
    include: ArrayLike | None = None,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    sampler: str = "numpy",
    arms: tuple[Any, Any] = (None, None),
    ledger: PrivacyLedger | None = None,
    evaluation: str = "ipw",
    model_share: float = 0.25,
    model_columns: ArrayLike | None = None,
    **dpowl: Any,
) -> tuple[DPOWL, PrivateEvaluation, tuple[np.ndarray, np.ndarray]]:
    """Fit DP-OWL on the public split's first part and evaluate it privately on the second.

    ``dpowl`` are :class:`dpcore.DPOWL`'s keyword arguments (gamma, weight_bound, C,
    feature_bounds, outcome_bounds, larger_is_better, huber_h); the fit draws its noise from
    ``rng``. The dataset's cost is :func:`dpcore.privacy.composition.parallel_cost` of the two parts.

    ``evaluation`` is "ipw" (the default: :func:`evaluate_rule`) or "aipw" (doubly robust:
    :func:`dpcore.owl.evaluation_aipw.evaluate_rule_aipw`). With "aipw" a private outcome
    model (:func:`dpcore.owl.outcome_model.fit_outcome_model`, on the covariates
    ``model_columns``, default all, needing public ``feature_bounds``) is fitted on the fit
    part at ``model_share`` ε_fit and the rule at (1 - ``model_share``) ε_fit: the two compose
    sequentially on the fit part's rows, which still cost ε_fit, so the dataset's cost is the
    same max(ε_fit, ε_eval) as IPW's.

    ``ledger`` (a :class:`dpcore.PrivacyLedger`, optional) records the release as two parallel
    parts, ``{"fit": epsilon_fit, "evaluation": epsilon_eval}`` (it costs the larger), once
    both are computed and before anything is returned; past the cap it raises
    :class:`dpcore.BudgetExceededError` and returns nothing. A release without a guarantee
    (feature bounds from the data, an int seed as ``rng``) is recorded as such (total ∞).

    Only the weight-clipping warning (:class:`dpcore.ClippingWarning`, "some OWL weights ...
    exceed the weight bound") is silenced, because clipping to the public W is part of the
    method and its share is an analyst-only diagnostic; every other warning, a
    :class:`dpcore.PrivacyWarning` above all, reaches the caller.

    Returns
    -------
    (model, evaluation, (fit_rows, eval_rows))
    """
    from .._estimator import WEIGHT_CLIPPING_MESSAGE, ClippingWarning
    from ..privacy.composition import record_release
    from .dpwerm import _seeded

    if isinstance(propensity, str):
        raise ValueError(
            "the private evaluation needs a known randomization or a per-row "
            "propensity column, not an estimated propensity"
        )
    if evaluation not in EVALUATIONS:
        raise ValueError(f"evaluation must be one of {EVALUATIONS}, got {evaluation!r}")
    aipw = evaluation == "aipw"
    epsilon_fit = check_epsilon(epsilon_fit, "epsilon_fit")
    if aipw:
        model_share = check_real(model_share, "model_share", low=0.0, high=1.0)
        if model_share == 1.0 or dpowl.get("feature_bounds") is None:
            raise ValueError(
                "the AIPW evaluation needs model_share below 1 and public "
                "feature_bounds (its outcome model scales the covariates by them)"
            )
    X, A, B = (np.asarray(v, dtype=float) for v in (X, A, B))
    fit_rows, eval_rows = public_split(len(A), fit_share, split_seed)
    part = lambda v, rows: v if np.ndim(v) == 0 else np.asarray(v)[rows]  # noqa: E731
    seeded = _seeded(rng)
    rng = np.random.default_rng(rng)
    eps_rule = epsilon_fit * (1.0 - model_share) if aipw else epsilon_fit
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        model = DPOWL(epsilon=eps_rule, rng=rng, **dpowl).fit(
            X[fit_rows], A[fit_rows], B[fit_rows], part(propensity, fit_rows)
        )
    kw = dict(
        outcome_bounds=dpowl["outcome_bounds"],
        larger_is_better=model.larger_is_better_,
        min_propensity=min_propensity,
        epsilon=epsilon_eval,
        include=None if include is None else np.asarray(include)[eval_rows],
        level=level,
        rng=rng,
        sampler=sampler,
        arms=arms,
    )
    recommend = model.predict(X[eval_rows])
    if aipw:
        from .evaluation_aipw import evaluate_rule_aipw
        from .outcome_model import fit_outcome_model

        outcome = fit_outcome_model(
            X[fit_rows],
            A[fit_rows],
            B[fit_rows],
            feature_bounds=dpowl["feature_bounds"],
            outcome_bounds=dpowl["outcome_bounds"],
            epsilon=epsilon_fit * model_share,
            columns=model_columns,
            include=None if include is None else np.asarray(include)[fit_rows],
            rng=rng,
            sampler=sampler,
        )
        centre = float(np.mean(outcome.predict(np.mean(dpowl["feature_bounds"], axis=0)[None])))
        evaluation = evaluate_rule_aipw(
            recommend,
            A[eval_rows],
            B[eval_rows],
            part(propensity, eval_rows),
            outcome.predict(X[eval_rows]),
            centre=centre,
            model=outcome.to_dict(),
            **kw,
        )
    else:
        evaluation = evaluate_rule(
            recommend, A[eval_rows], B[eval_rows], part(propensity, eval_rows), **kw
        )
    if ledger is not None:
        reasons = [
            r
            for r, hit in (
                ("feature bounds read from the data", model.bounds_from_data_),
                ("seeded noise (rng is an int seed)", seeded),
            )
            if hit
        ]
        fit_part = "fit (rule + outcome model)" if aipw else "fit"
        record_release(
            ledger,
            "DP-OWL rule + private " + ("AIPW " if aipw else "") + "evaluation",
            {fit_part: epsilon_fit, "evaluation": epsilon_eval},
            reasons,
        )
    return model, evaluation, (fit_rows, eval_rows)
