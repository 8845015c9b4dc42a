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
moments over the public size m of the part, and the count of complete rows::

    S_ad = (1/m) sum_i r_i 1(A_i = a, d(X_i) = d) y_i / pi_i,
    M_ad = (1/m) sum_i r_i 1(A_i = a, d(X_i) = d) (y_i / pi_i)^2,
    N    = sum_i r_i.

**The target.** The values estimate the mean outcome under each policy among patients whose
rows are complete, V = c + E[T | r = 1] with T = 1(A = d) y / pi (Horvitz-Thompson IPW);
when rows are missing completely at random (MCAR) that is the population's value. With q the
complete share, E[S_rule] = q (V - c): the old estimator c + S_rule (incomplete rows counting 0
in m) shrinks each value towards c by the incomplete share 1 - q, a bias that does not shrink
with m (issue 23: "95%" intervals covering 33% at m = 1000 and 0% at m = 5000 with 10%
incomplete rows). The complete-row count is not public, so it is released too and the value is
a ratio estimator (the same correction for every policy)::

    V_hat = c + S~ / q~,    q~ = N~ / m,

with S~ the signed sum of the policy's two noisy cells: V(rule) uses S_++ + S_--, V(treat
all) S_++ + S_+-, V(treat none) S_-+ + S_--; the gains over treating everyone use
S_-- - S_+- and S_++ - S_-+ (sign flipped when smaller outcomes are better, so that a positive
gain is good for patients). Without ``include`` (every row declared complete, a public fact)
q = 1 and no count is released. Centring at c makes the values the same whichever direction is
better and halves the sensitivity against a benefit in [0, R].

**Sensitivity.** Neighbours replace one row (the rule d is fixed: it was fitted on the other
part); the replacement may turn a complete row into an incomplete one or back. The row's term
leaves one cell and enters another (or stays, or becomes 0 when the new row is incomplete),
each term of absolute value at most b/m, so the L1 sensitivities are::

    Delta_1 = R / (m p_min)          cells S (a complete row moved to another cell),
    Delta_2 = R^2 / (2 m p_min^2)     moments M (squared terms in [0, b^2]),
    Delta_3 = 1                       count N (complete <-> incomplete).

Delta_1 is attained by replacing a row (A = +1, d = +1, B = hi, pi = p_min) with one
(A = -1, d = -1, B = lo, pi = p_min); making a row incomplete moves S by at most Delta_1 / 2.
Laplace(Delta_k / ε_k) noise on each is ε_k-DP, and by sequential composition over the same
rows the three releases cost ε_1 + ε_2 + ε_3 = ε_eval (:func:`evaluation_budget`): by default
ε_2 = 0.25 ε_eval (``moment_share``), ε_3 = 0.10 ε_eval (``count_share``, only with
``include``) and ε_1 = 0.65 ε_eval (0.75 without a count); 0.10 gave narrower intervals
than 0.05 or 0.20 in the benchmark's settings (the count's noise enters scaled by |theta|).
Every value, gain and interval is post-processing of (S~, M~, N~) and public numbers; the
shape of the release depends only on whether ``include`` is given, never on the data.

**Intervals (Fieller).** For a policy with true value theta = V - c and share q, the pivot
S~ - theta q~ equals sampling error + s (L_1 + L_2) - theta e, where the sampling error is
(1/m) sum_i r_i (T_i - theta), mean 0 and variance E[r (T - theta)^2] / m <= E[r T^2] / m (the
uncentred second moment, estimated by the same two cells' M), L_1, L_2 are the two cells'
standard Laplace draws at scale s = Delta_1 / ε_1, and e = (N~ - N) / m is Laplace at scale
1/(m ε_3). The interval is Fieller's set {theta : |S~ - theta q~| <= h(|theta|)}, with h the
``level`` quantile of |sigma Z + s (L_1 + L_2) + |theta| L_3 / (m ε_3)| (computed exactly by
quadrature; it grows with |theta| by Anderson's theorem), intersected with the public range
[-R/2, R/2] of a value ([-R, R] for a gain). For q~ > 0 it is found from [-R/2, R/2] by a few
monotone steps (h evaluated at the largest |theta| of the previous set, so each set contains
Fieller's); for q~ <= 0 it is the whole range. It covers whenever the pivot does, so the
noise in both numerator and denominator is accounted for, with no delta-method linearisation.
The point value is S~ / max(q~, 1/m), clipped to the range.

**The sampling part.** sigma^2 = M'/m with M' the noisy second moment, raised by the
``level`` quantile of its own noise (so noise rarely makes the interval too short) and capped
by what the public values alone allow, (R/2)^2 / p_min for a value and
(R/2)^2 / (p_min (1 - p_min)) for a gain. With heavy weights (small p_min) few held-out rows
carry a weight near 1/p_min and the normal interval under-covers, also without noise (issue 24:
83-93% at ε_eval = inf; 79% for the rule's value at P(treated) = 0.9, m = 40). So the sampling
half-width is Bernstein's, calibrated to the normal: t = rho + sqrt(rho^2 + z^2 sigma^2) with
rho = z^2 b / (6 m) (Bernstein's inequality m t^2 <= 2L (sigma^2 + b t / 3) with 2L = z^2,
b = R / (2 p_min) the public bound of one row's term); the interval uses sigma_eff = t / z. It
equals the normal interval as m grows and adds about 0.64 b/m, the reach of a single heavy
row, at small m.

**Limitations.** The sampling error is taken as normal after Bernstein's correction, not
bounded exactly: with an expected number m p_min of held-out patients in the rarer arm below
about 5, a value with all its weight on that arm can still under-cover (86% for treat-none at
P(treated) = 0.95, m = 40, outcomes near a bound, ε_eval = inf). Values among complete rows
equal the population's only under MCAR; when missingness depends on the outcome or the arm the
intervals cover the complete rows' value, not the population's. The propensities must be at
least p_min (a floor below the true propensity biases the IPW terms). ``benchmarks/
evaluation_coverage.py`` measures the coverage at the page's settings (docs/evaluation.md).

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
from .evaluation_interval import bernstein_sigma, fieller_interval, two_laplace_quantile
from .owl import arm_propensity

if TYPE_CHECKING:
    from ..privacy.accounting import PrivacyLedger

__all__ = [
    "COUNT_SENSITIVITY",
    "Estimate",
    "PrivateEvaluation",
    "cell_sums",
    "evaluate_rule",
    "evaluation_budget",
    "evaluation_sensitivity",
    "fit_and_evaluate",
    "moment_sensitivity",
    "parallel_cost",
    "public_split",
    "release_estimates",
    "verdict_of",
]

#: L1 sensitivity of the count of complete rows: replacing one row changes it by at most 1.
COUNT_SENSITIVITY = 1.0

CELLS = (
    "treated, recommended treated",
    "treated, recommended control",
    "control, recommended treated",
    "control, recommended control",
)
# Each estimate as (sign, cell) pairs over the cells S_++, S_+-, S_-+, S_-- (benefit scale).
_VALUES = {"rule": ((1, 0), (1, 3)), "treat_all": ((1, 0), (1, 1)), "treat_none": ((1, 2), (1, 3))}
_GAINS = {"over_treat_all": ((1, 3), (-1, 1)), "over_treat_none": ((1, 0), (-1, 2))}


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


def parallel_cost(epsilon_fit, epsilon_eval):
    """What the dataset spends on a fit and an evaluation on disjoint parts: the larger ε."""
    return max(check_epsilon(epsilon_fit), check_epsilon(epsilon_eval, "epsilon_eval"))


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
    is the noisy count of complete rows (None when every row was declared complete) and
    ``budget`` the split (ε_cells, ε_moments, ε_count) of ε_eval.
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
    complete: float | None = None
    budget: tuple = ()

    def summary(self) -> str:
        """One plain sentence with the verdict and the evidence behind it."""
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
                else " The values are those of patients with complete rows, corrected by a noisy "
                "count of them (the population's when values are missing at random)."
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
            "complete_rows_noisy": self.complete,
            "epsilon_split": dict(zip(("cells", "second_moments", "complete_count"), self.budget)),
            "values": {k: as_dict(v) for k, v in self.values.items()},
            "gains": {k: as_dict(v) for k, v in self.gains.items()},
            "verdict": self.verdict,
            "summary": self.summary(),
        }


def evaluation_budget(epsilon, moment_share=0.25, count_share=0.1, count=True):
    """How ε_eval is split between the cells, the second moments and the complete-row count.

    Sequential composition over the three releases on the same rows: ε_1 + ε_2 + ε_3 = ε_eval
    with ε_2 = ``moment_share`` ε_eval, ε_3 = ``count_share`` ε_eval when a count is released
    (``count``; else ε_3 = 0) and ε_1 the rest.

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


def noisy_count(include, epsilon, rng, sampler):
    """The released count of complete rows: their number plus Laplace(1 / ε) (sensitivity 1,
    :data:`COUNT_SENSITIVITY`)."""
    exact = float(np.count_nonzero(np.asarray(include, dtype=bool)))
    return exact + float(sample_laplace(epsilon, COUNT_SENSITIVITY, 1, rng=rng, sampler=sampler)[0])


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
    count_share=0.1,
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
        contribute 0 to the cells and still count in the public m; with ``include`` given, a
        noisy count of the complete rows is released too and the values estimate the value
        among complete rows (see the module's Notes). None: every row is complete (public).
    level : float
        Confidence level of the intervals and of the verdict.
    moment_share : float
        Share of ε_eval spent on the second moments that size the intervals.
    count_share : float
        Share of ε_eval spent on the count of complete rows (only with ``include``).
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
    Laplace(Delta_2 / ε_2), then (with ``include``) the count's Laplace(1 / ε_3); the split is
    :func:`evaluation_budget`. Every output field but the noisy numbers (cells, moments, count,
    and what follows from them) depends on public values only: m, the bounds, p_min, ε_eval,
    the shares, the level and whether ``include`` was given.
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
    count = noisy_count(include, eps3, rng, sampler) if counted else None
    est = release_estimates(
        noisy,
        moments,
        count,
        m=m,
        outcome_bounds=(lo, hi),
        min_propensity=p_min,
        epsilons=(eps1, eps2, eps3),
        level=level,
        larger_is_better=larger_is_better,
    )
    values, gains = estimates_of(est)
    return PrivateEvaluation(
        epsilon=epsilon,
        m=m,
        sensitivity=delta1,
        level=level,
        cells=tuple(map(float, noisy)),
        moments=tuple(map(float, moments)),
        values=values,
        gains=gains,
        verdict=verdict_of(gains),
        treated=arms[0],
        control=arms[1],
        complete=count,
        budget=(float(eps1), float(eps2), float(eps3)),
    )


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
):
    """Values, gains and their intervals from the released (noisy) numbers: post-processing.

    Vectorised over any leading shape (a batch of simulated releases).

    Parameters
    ----------
    cells, moments : arrays (..., 4)
        The noisy cell sums S_ad and second moments M_ad.
    count : array (...) or None
        The noisy count of complete rows; None when every row is complete (public).
    m : int
        The public size of the evaluation part.
    outcome_bounds, min_propensity : public
    epsilons : (ε_1, ε_2, ε_3)
        The budget of the cells, the moments and the count (:func:`evaluation_budget`).
    level : float
    larger_is_better : bool

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
    raise2 = s2 * two_laplace_quantile(level)
    cap = {"value": (R / 2.0) ** 2 / p_min, "gain": (R / 2.0) ** 2 / (p_min * (1.0 - p_min))}
    # All five estimates along a last axis, so that one vectorised quantile serves them all.
    kinds = [("value", pairs) for pairs in _VALUES.values()] + [
        ("gain", pairs) for pairs in _GAINS.values()
    ]
    num = signed_sums(cells)
    second = np.stack(
        [
            np.minimum(np.maximum(sum(moments[..., c] for _, c in pairs), 0.0) + raise2, cap[kind])
            for kind, pairs in kinds
        ],
        -1,
    )
    # Bernstein's range term with the public bound b = R / (2 p_min) of one row's term.
    sigma = bernstein_sigma(second, m, R / (2.0 * p_min), level)
    return ratio_estimates(
        num,
        sigma,
        count,
        m=m,
        s=s,
        epsilon_count=eps3,
        level=level,
        outcome_bounds=(lo, hi),
        larger_is_better=larger_is_better,
    )


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


def ratio_estimates(
    num, sigma, count, *, m, s, epsilon_count, level, outcome_bounds, larger_is_better=True
):
    """Point values and Fieller intervals of the five estimates: post-processing.

    ``num`` (..., 5) are the noisy numerators (:func:`signed_sums`), ``sigma`` (..., 5) the
    sampling standard deviations taken, ``count`` the noisy complete count (or None), ``s`` the
    Laplace scale of each of a numerator's two cells and ``epsilon_count`` the count's budget.
    Returns the dict of :func:`release_estimates`.
    """
    lo, hi = (float(v) for v in outcome_bounds)
    R, centre, m = hi - lo, (lo + hi) / 2.0, int(m)
    if count is None:
        share, count_scale = np.ones(np.shape(num)[:-1]), 0.0
    else:
        share = np.asarray(count, dtype=float) / m
        count_scale = 0.0 if np.isinf(epsilon_count) else COUNT_SENSITIVITY / (m * epsilon_count)
    sign = 1.0 if larger_is_better else -1.0
    bound = np.array([R / 2.0] * len(_VALUES) + [R] * len(_GAINS))
    offset = np.array([centre] * len(_VALUES) + [0.0] * len(_GAINS))
    flip = np.array([1.0] * len(_VALUES) + [sign] * len(_GAINS))
    a, b = fieller_interval(num, share[..., None], sigma, s, count_scale, bound, level)
    point = np.clip(num / np.maximum(share[..., None], 1.0 / m), -bound, bound)
    a, b = flip * a, flip * b
    value, lower, upper = (
        offset + flip * point,
        offset + np.minimum(a, b),
        offset + np.maximum(a, b),
    )
    return {
        name: (value[..., j], lower[..., j], upper[..., j])
        for j, name in enumerate((*_VALUES, *_GAINS))
    }


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
    ``rng``. The dataset's cost is :func:`parallel_cost` (ε_fit, ε_eval).

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
