"""Private evaluation of a released rule by a public sample split.

The trial's rows are split by a public seeded permutation (default 80/20): the rule is fitted
on the first part at ε_fit, and on the second part the values of the rule, of treating everyone
and of treating no one are released with the Laplace mechanism at ε_eval. Each patient is in
one part only, so by parallel composition the release costs the dataset max(ε_fit, ε_eval)
(a row of the evaluation part is not seen by the fit; a row of the fit part reaches the
evaluation only through the released rule, which is post-processing).

Notes
-----
**The statistic.** With public outcome bounds [lo, hi], R = hi - lo and their midpoint c, each
outcome is clipped to the bounds and centred, y = clip(B) - c, in [-R/2, R/2]. With the public
smallest propensity p_min (min over arms and rows of P(A_i | X_i); min(p, 1 - p) for a known
randomization p), each row's propensity of its own arm is floored at p_min (a public rule), so
its inverse-probability term y / pi lies in [-R/(2 p_min), R/(2 p_min)]. Each row of the
evaluation part falls in exactly one cell (a, d) of (arm received, arm the rule recommends),
and the released vector is the four cell sums over the public size m of the part::

    S_ad = (1/m) * sum_i 1(A_i = a, d(X_i) = d) * y_i / pi_i.

Every value is c plus a sum of two cells (Horvitz-Thompson IPW, unbiased for the mean outcome
under the policy): V(rule) = c + S_++ + S_--, V(treat all) = c + S_++ + S_+-,
V(treat none) = c + S_-+ + S_--, and the rule's gains over treating everyone are
V(rule) - V(all) = S_-- - S_+- and V(rule) - V(none) = S_++ - S_-+ (sign flipped when smaller
outcomes are better, so that a positive gain is good for patients). Centring at c makes the
values the same whichever direction is better, and halves the sensitivity against a benefit
in [0, R]. Rows with a missing value (``include`` False) contribute 0, a data-independent
treatment that keeps m public.

**Sensitivity.** Neighbours replace one row (the rule d is fixed: it was fitted on the other
part). The row's term leaves one cell and enters another (or stays), each term of absolute value
at most R/(2 m p_min), so the L1 sensitivity of S is::

    Delta_1 = R / (m p_min),

attained by replacing a row (A = +1, d = +1, B = hi, pi = p_min) with one
(A = -1, d = -1, B = lo, pi = p_min). Adding independent Laplace(Delta_1 / ε_eval) noise to each
cell is ε_eval-DP, and every value and gain is post-processing.

**Intervals.** An estimate Q is a signed sum of two noisy cells, so Q_hat - Q is a sampling
error plus two Laplace(s) draws, s = Delta_1 / ε_1. The sampling error is taken as normal with
variance E[T^2] / m (an upper bound on Var T), where E[T^2] is the sum of the same two cells'
second moments M_ad = (1/m) sum 1(cell) (y_i / pi_i)^2. These are released too, by a share
``moment_share`` of ε_eval (sequential composition: ε_1 = (1 - share) ε_eval for the cells,
ε_2 = share ε_eval for the moments). Each squared term lies in [0, (R / (2 p_min))^2], so the
moments' L1 sensitivity is Delta_2 = R^2 / (2 m p_min^2). The noisy second moment is raised
by the upper ``level`` quantile of its noise (so noise rarely makes the interval too short)
and capped by what the public values alone allow, (R/2)^2 / p_min for a value and
(R/2)^2 / (p_min (1 - p_min)) for a gain. The half-width is the exact quantile of
|N(0, sigma^2) + s (L_1 + L_2)|. The intervals are approximate in that the sampling error is
taken as normal; their variance is an upper bound.

**Verdict.** The rule beats treating everyone with the better arm when both gains' intervals
lie above 0: each fails with probability at most (1 - level)/2, so both hold together with
probability at least ``level`` (a union bound; no selection of the better arm is needed). It
is worse when one gain's interval lies below 0; otherwise the evidence is inconclusive.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special
from scipy.optimize import brentq
from scipy.special import ndtri

from .._validation import check_bounds, check_epsilon, check_real
from ..privacy.mechanisms import sample_laplace
from .owl import DPOWL, arm_propensity

__all__ = ["Estimate", "PrivateEvaluation", "cell_sums", "evaluate_rule", "evaluation_sensitivity",
           "fit_and_evaluate", "moment_sensitivity", "parallel_cost", "public_split"]

CELLS = ("treated, recommended treated", "treated, recommended control",
         "control, recommended treated", "control, recommended control")
# Each estimate as (sign, cell) pairs over the cells S_++, S_+-, S_-+, S_-- (benefit scale).
_VALUES = {"rule": ((1, 0), (1, 3)), "treat_all": ((1, 0), (1, 1)),
           "treat_none": ((1, 2), (1, 3))}
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
    ``verdict`` is "better", "worse" or "inconclusive" (see the module's Notes).
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

    def summary(self):
        """One plain sentence with the verdict and the evidence behind it."""
        pct = f"{100 * self.level:g}%"
        all_, none = self.gains["over_treat_all"], self.gains["over_treat_none"]
        arms = f"'{self.treated}'" if self.treated is not None else "the treated arm"
        ctrl = f"'{self.control}'" if self.control is not None else "the control arm"
        head = {"better": "The private rule beats treating everyone with either arm",
                "worse": "The private rule does worse than treating everyone with one arm",
                "inconclusive": "This evaluation cannot tell whether the private rule beats "
                                "treating everyone with the better arm"}[self.verdict]
        return (f"{head} ({pct} confidence, ε_eval = {self.epsilon:g}, {self.m} patients held "
                f"out): its gain over giving everyone {arms} is {all_.value:+.3g} "
                f"[{all_.lower:.3g}, {all_.upper:.3g}], over giving everyone {ctrl} "
                f"{none.value:+.3g} [{none.lower:.3g}, {none.upper:.3g}], in the outcome's "
                "units (positive is better for patients).")

    def to_dict(self):
        as_dict = lambda e: {"value": e.value, "lower": e.lower, "upper": e.upper}  # noqa: E731
        return {"epsilon_eval": self.epsilon, "patients": self.m, "level": self.level,
                "sensitivity_l1": self.sensitivity, "cells": dict(zip(CELLS, self.cells)),
                "second_moments": dict(zip(CELLS, self.moments)),
                "values": {k: as_dict(v) for k, v in self.values.items()},
                "gains": {k: as_dict(v) for k, v in self.gains.items()},
                "verdict": self.verdict, "summary": self.summary()}


def evaluate_rule(recommend, A, B, propensity, *, outcome_bounds, larger_is_better=True,
                  min_propensity=None, epsilon, include=None, level=0.95, moment_share=0.25,
                  rng=None, sampler="numpy", arms=(None, None)):
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
        False for rows with a missing value: they contribute 0 and still count in m.
    level : float
        Confidence level of the intervals and of the verdict.
    moment_share : float
        Share of ε_eval spent on the second moments that size the intervals.
    rng : None, int or Generator
        For numpy's sampler (simulations and tests).
    sampler : {"numpy", "opendp"}
        "opendp" (OpenDP's floating-point-safe sampler, no seed) on uploaded data.
    arms : (treated label, control label), for the summary sentence.

    Returns
    -------
    PrivateEvaluation
    """
    epsilon = check_epsilon(epsilon)
    level = check_real(level, "level", low=0.0, high=1.0)
    # One Generator for both draws: an int seed passed twice would repeat the same noise,
    # and the moments' noise would then cancel the cells' (a privacy failure, not just a bias).
    rng = np.random.default_rng(rng)
    if np.ndim(propensity) == 0:
        p = float(propensity)
        min_propensity = min(p, 1.0 - p) if min_propensity is None else min_propensity
    elif min_propensity is None:
        raise ValueError("a per-row propensity needs a public min_propensity")
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    share = check_real(moment_share, "moment_share", low=0.0, high=1.0)
    m = int(np.shape(A)[-1])
    p_min = float(min_propensity)
    delta1 = evaluation_sensitivity((lo, hi), p_min, m)
    delta2 = moment_sensitivity((lo, hi), p_min, m)
    args = (recommend, A, B, propensity, (lo, hi), p_min, include)
    eps1, eps2 = epsilon * (1.0 - share), epsilon * share
    noisy = cell_sums(*args) + sample_laplace(eps1, delta1, 4, rng=rng, sampler=sampler)
    moments = cell_sums(*args, power=2) + sample_laplace(eps2, delta2, 4, rng=rng, sampler=sampler)
    s = 0.0 if np.isinf(epsilon) else delta1 / eps1
    s2 = 0.0 if np.isinf(epsilon) else delta2 / eps2
    raise2 = _halfwidth(0.0, s2, level) if s2 > 0 else 0.0
    half_range2 = ((hi - lo) / 2.0) ** 2
    cap = {"value": half_range2 / p_min, "gain": half_range2 / (p_min * (1.0 - p_min))}
    centre, sign = (lo + hi) / 2.0, (1.0 if larger_is_better else -1.0)

    def estimate(pairs, kind, offset, flip):
        q = sum(k * noisy[c] for k, c in pairs)
        second = min(max(sum(moments[c] for _, c in pairs), 0.0) + raise2, cap[kind])
        half = _halfwidth(float(np.sqrt(second / m)), s, level)
        a, b = flip * (q - half), flip * (q + half)
        return Estimate(float(offset + flip * q), float(offset + min(a, b)),
                        float(offset + max(a, b)))

    values = {name: estimate(pairs, "value", centre, 1.0) for name, pairs in _VALUES.items()}
    gains = {name: estimate(pairs, "gain", 0.0, sign) for name, pairs in _GAINS.items()}
    if all(g.lower > 0 for g in gains.values()):
        verdict = "better"
    elif any(g.upper < 0 for g in gains.values()):
        verdict = "worse"
    else:
        verdict = "inconclusive"
    return PrivateEvaluation(epsilon=epsilon, m=m, sensitivity=delta1, level=level,
                             cells=tuple(map(float, noisy)), moments=tuple(map(float, moments)), values=values, gains=gains,
                             verdict=verdict, treated=arms[0], control=arms[1])


def fit_and_evaluate(X, A, B, propensity, *, epsilon_fit, epsilon_eval, fit_share=0.8,
                     split_seed=0, min_propensity=None, include=None, level=0.95, rng=None,
                     sampler="numpy", arms=(None, None), ledger=None, **dpowl):
    """Fit DP-OWL on the public split's first part and evaluate it privately on the second.

    ``dpowl`` are :class:`dpcore.DPOWL`'s keyword arguments (gamma, weight_bound, C,
    feature_bounds, outcome_bounds, larger_is_better, huber_h); the fit draws its noise from
    ``rng``. The dataset's cost is :func:`parallel_cost` (ε_fit, ε_eval).

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
    from .dpwerm import _seeded, charge

    if isinstance(propensity, str):
        raise ValueError("the private evaluation needs a known randomization or a per-row "
                         "propensity column, not an estimated propensity")
    X, A, B = (np.asarray(v, dtype=float) for v in (X, A, B))
    fit_rows, eval_rows = public_split(len(A), fit_share, split_seed)
    part = lambda v, rows: v if np.ndim(v) == 0 else np.asarray(v)[rows]  # noqa: E731
    seeded = _seeded(rng)
    rng = np.random.default_rng(rng)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        model = DPOWL(epsilon=epsilon_fit, rng=rng, **dpowl).fit(
            X[fit_rows], A[fit_rows], B[fit_rows], part(propensity, fit_rows))
    evaluation = evaluate_rule(
        model.predict(X[eval_rows]), A[eval_rows], B[eval_rows], part(propensity, eval_rows),
        outcome_bounds=dpowl["outcome_bounds"], larger_is_better=dpowl.get("larger_is_better", True),
        min_propensity=min_propensity, epsilon=epsilon_eval,
        include=None if include is None else np.asarray(include)[eval_rows], level=level,
        rng=rng, sampler=sampler, arms=arms)
    if ledger is not None:
        reasons = [r for r, hit in (("feature bounds read from the data", model.bounds_from_data_),
                                    ("seeded noise (rng is an int seed)", seeded)) if hit]
        charge(ledger, "DP-OWL rule + private evaluation", max(epsilon_fit, epsilon_eval),
               reasons, parts={"fit": epsilon_fit, "evaluation": epsilon_eval})
    return model, evaluation, (fit_rows, eval_rows)


# --------------------------------------------------------------------------------------------
# The interval's half-width: a quantile of |N(0, sigma^2) + s (L1 + L2)|, L iid Laplace(1)

# Two quadratures, each over the narrower of the two terms so that the integrand stays smooth:
# Gauss-Hermite over the normal when sigma <= s, Gauss-Laguerre over the Laplace sum otherwise.
_HERMITE = np.polynomial.hermite_e.hermegauss(81)
_LAGUERRE = np.polynomial.laguerre.laggauss(80)


def _cdf_two_laplace(x):
    """CDF of L1 + L2 with L iid standard Laplace: density (1 + |x|) e^{-|x|} / 4."""
    tail = (2.0 + np.abs(x)) * np.exp(-np.abs(x)) / 4.0
    return np.where(x < 0, tail, 1.0 - tail)


def _coverage(q, sigma, s):
    """P(|sigma Z + s (L1 + L2)| <= q)."""
    if sigma <= s:
        z, w = _HERMITE
        return float(w @ (_cdf_two_laplace((q - sigma * z) / s)
                          - _cdf_two_laplace((-q - sigma * z) / s)) / w.sum())
    x, w = _LAGUERRE
    w = w * (1.0 + x) / 4.0  # the Laplace sum's density on each half-line, over e^{-x}
    ndtr = special.ndtr
    total = 0.0
    for half in (x, -x):
        total += w @ (ndtr((q - s * half) / sigma) - ndtr((-q - s * half) / sigma))
    return float(total)


@lru_cache(maxsize=4096)
def _halfwidth(sigma, s, level):
    if s == 0.0:
        return float(ndtri(0.5 + level / 2.0) * sigma)
    top = 10.0 * (sigma + 2.0 * s) + 50.0 * s
    return float(brentq(lambda q: _coverage(q, sigma, s) - level, 0.0, top, xtol=1e-12 * top))
