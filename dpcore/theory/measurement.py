"""Monte-Carlo measurements held against the theory bounds of :mod:`dpcore.theory.bounds`.

DP-wERM: Theorem 10 bounds, with probability at least 1 - rho over the noise and for any
fixed theta0, the excess empirical hinge risk L0_hat(theta*) - L0_hat(theta0), where
L0_hat(theta) = (1/n) sum_i w_i max(0, 1 - y_i x~_i' theta). Here the released theta* comes
from the engine itself (:func:`dpcore.werm.solve_werm`, :func:`dpcore.werm.sensitivity`,
:func:`dpcore.mechanisms.output_perturbation`), so the measurement is of the actual mechanism,
including the solver slack in its sensitivity. The comparator theta0 is the minimiser of the
regularized hinge risk L0_hat + (lambda/2)||theta||^2 (approximated by a Huber hinge of width
``COMPARATOR_H``) at the lambda of the convention the bound is read at: the bound holds for
every theta0 iff it holds for that one, so it is the most demanding check at that gamma.

Coverage is counted per noise draw but the draws are clustered within a trial (they share
the data), and without noise (epsilon = inf) every draw of a trial is the same release; the
interval of :func:`coverage` accounts for both.

CVaR: the Laplace plug-in's error against the scalar rate, split into its statistical and
privacy parts, on the demo loss laws of :mod:`dpcore.cvar.estimation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import ArrayLike, Seed
from ..montecarlo import Stream, local_executor, stream
from ..owl.owl import owl_weights
from ..owl.paper import PAPER_W
from ..owl.preprocessing import FeatureScaling
from ..owl.simulate import PAPER_TRIAL, TrialDesign
from ..owl.werm import solve_werm
from ..owl.werm_release import sensitivity
from ..privacy.audit import clopper_pearson_lower, clopper_pearson_upper
from ..privacy.mechanisms import output_perturbation
from . import bounds

COMPARATOR_H = 1e-3  # the hinge comparator's Huber width: within W h/4 of the exact minimum
_TAG = 10  # separates these noise streams from the DP-OWL sweep's (same seed, same tag)


@dataclass(frozen=True)
class Trials:
    """Simulated training sets in the scaled space: X (D, n, d), labels y and OWL weights w."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray

    @property
    def d(self) -> int:
        """Columns of the scaled design."""
        return self.X.shape[-1]


def paper_trials(
    n: int,
    datasets: int,
    weight_bound: float = PAPER_W,
    seed: int = 0,
    design: TrialDesign = PAPER_TRIAL,
    outcome: str | tuple[float, float] = "paper",
) -> Trials:
    """``datasets`` trials of n patients from ``design``, weights B/pi clipped at W.

    The same stream as the DP-OWL sweep (seed, TRAIN, n), so these are its first trials.
    """
    scaling = FeatureScaling.from_bounds(design.feature_bounds, design.p)
    train = design.sample(int(n), size=int(datasets), rng=stream(seed, Stream.TRAIN, int(n)))
    w, _ = owl_weights(train["B"], train["A"], design.propensity, float(weight_bound), outcome)
    return Trials(scaling.transform(train["X"]), train["A"], w)


def hinge_risk(theta: np.ndarray, trials: Trials) -> np.ndarray:
    """L0_hat for rules theta of shape (D, R, d) on the D trials: array (D, R)."""
    z = trials.y[:, None, :] * np.matmul(theta, np.swapaxes(trials.X, -1, -2))
    np.subtract(1.0, z, out=z)
    np.maximum(z, 0.0, out=z)
    return np.matmul(z, trials.w[..., None])[..., 0] / trials.X.shape[-2]


def comparator(trials: Trials, gamma: float) -> np.ndarray:
    """theta0: the regularized-hinge minimiser at sum-form gamma (lambda = gamma/n) for each
    trial, shape (D, d)."""
    start, _ = solve_werm(trials.X, trials.y, trials.w, float(gamma), "huber", 0.5)
    theta0, _ = solve_werm(
        trials.X,
        trials.y,
        trials.w,
        float(gamma),
        "huber",
        COMPARATOR_H,
        theta0=start,
        max_iter=2000,
    )
    return theta0


@dataclass(frozen=True)
class Comparator:
    """theta0 for one convention: the regularized-hinge minimiser at lambda = factor gamma/n,
    its hinge risk ``risk`` (D,) and norm ``norm`` (D,) per trial."""

    theta0: np.ndarray
    risk: np.ndarray
    norm: np.ndarray


def comparators(
    trials: Trials, gamma: float, conventions: Sequence[str] = tuple(bounds.CONVENTIONS)
) -> dict[str, Comparator]:
    """{convention: Comparator} at the code's gamma: lambda = gamma/n ("code") is the
    regularized fit at gamma, lambda = 2 gamma/n ("stated") the fit at 2 gamma."""
    out = {}
    for conv in conventions:
        theta0 = comparator(trials, bounds.CONVENTIONS[conv] * float(gamma))
        out[conv] = Comparator(
            theta0, hinge_risk(theta0[:, None, :], trials)[:, 0], np.linalg.norm(theta0, axis=-1)
        )
    return out


def werm_excess_risk(
    trials: Trials,
    theta0: np.ndarray,
    epsilon: float,
    gammas: Sequence[float],
    h: float,
    weight_bound: float = PAPER_W,
    C: float = 0.0,
    draws: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Excess empirical hinge risk of Algorithm 1's release against theta0.

    Parameters
    ----------
    trials : Trials
    theta0 : ndarray (D, d), the comparator (see :func:`comparator`)
    epsilon : float
    gammas : sequence of float
        Sum-form regularization constants; every gamma uses the same unit noise draws
        (common random numbers), so a curve over gamma is smooth.
    h : float
        Huber width of the fit.
    weight_bound, C : float
        W and the paper's constant C of the sensitivity.
    draws : int
        Noise draws per trial.
    seed : int

    Returns
    -------
    DataFrame with one row per (gamma, trial, draw): gamma, h, trial, draw, risk (L0_hat of
    the release), excess (risk minus theta0's), theta0_norm, radius (the noise's length).
    """
    n = trials.X.shape[-2]
    base = hinge_risk(theta0[:, None, :], trials)
    norms = np.linalg.norm(theta0, axis=-1)
    D, R = theta0.shape[0], int(draws)
    frames, theta = [], None
    for g in sorted(float(v) for v in np.atleast_1d(gammas)):
        theta, _ = solve_werm(trials.X, trials.y, trials.w, g, "huber", float(h), theta0=theta)
        rng = stream(seed, Stream.NOISE, n, h, epsilon, _TAG)  # same draws for every gamma
        released = bounds_release(theta, epsilon, sensitivity(weight_bound, g, C), R, rng)
        risk = hinge_risk(released, trials)
        frames.append(
            pd.DataFrame(
                {
                    "gamma": g,
                    "h": float(h),
                    "trial": np.repeat(np.arange(D), R),
                    "draw": np.tile(np.arange(R), D),
                    "risk": risk.ravel(),
                    "excess": (risk - base).ravel(),
                    "theta0_norm": np.repeat(norms, R),
                    "radius": np.linalg.norm(released - theta[:, None, :], axis=-1).ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def werm_excess_over_h(trials, theta0, epsilon, gamma, hs, executor=None, **kwargs):
    """:func:`werm_excess_risk` at one gamma for each Huber width in ``hs``, stacked in the
    order of ``hs``; each width is an independent task for ``executor`` (default: a thread
    pool sized to the machine), with the same rows as the serial loop."""
    with local_executor(executor) as (pool, _):
        futures = [
            pool.submit(werm_excess_risk, trials, theta0, epsilon, [gamma], h, **kwargs) for h in hs
        ]
        return pd.concat([f.result() for f in futures], ignore_index=True)


def bounds_release(
    theta_hat: np.ndarray, epsilon: float, delta: ArrayLike, draws: int, rng: Seed
) -> np.ndarray:
    """``draws`` releases of each exact minimiser: output_perturbation, shape (D, R, d)."""
    batch = np.broadcast_to(theta_hat[:, None, :], (theta_hat.shape[0], draws, theta_hat.shape[1]))
    return output_perturbation(batch, epsilon, delta, rng=rng)


def check_name(form: str, convention: str | None = None) -> str:
    """Column suffix of one check: the form alone at its own convention, else form_convention."""
    conv = bounds.convention_of(form, convention)
    return form if conv == bounds.FORM_CONVENTION[form] else f"{form}_{conv}"


def with_bounds(
    runs: pd.DataFrame,
    comps: dict[str, Comparator],
    n: int,
    epsilon: float,
    rho: float,
    weight_bound: float,
    C: float,
    d: int,
    checks: Sequence[tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """Add, for each (form, convention) of ``checks`` (default: each form at its own
    convention), the excess against that convention's comparator, the bound (T1 from that
    comparator's norm) and whether the excess stayed within it: columns excess_<conv>,
    bound_<name> and within_<name> (:func:`check_name`).

    ``runs`` come from :func:`werm_excess_risk` at the one gamma that ``comps``
    (:func:`comparators`) were fitted at.
    """
    if runs.gamma.nunique() > 1:
        raise ValueError("with_bounds needs runs at a single gamma (the comparators' gamma)")
    runs = runs.copy()
    trial = runs.trial.to_numpy()
    checks = [(f, None) for f in bounds.FORMS] if checks is None else checks
    for form, conv in checks:
        conv = bounds.convention_of(form, conv)
        comp, name = comps[conv], check_name(form, conv)
        excess = runs.risk.to_numpy() - comp.risk[trial]
        b = bounds.werm_bound(
            n,
            runs.gamma.to_numpy(),
            runs.h.to_numpy(),
            epsilon,
            rho,
            weight_bound,
            C,
            d,
            comp.norm[trial],
            form,
            convention=conv,
        )["total"]
        runs[f"excess_{conv}"] = excess
        runs[f"bound_{name}"] = b
        runs[f"within_{name}"] = excess <= b
    return runs


def coverage(
    within: ArrayLike, trial: ArrayLike | None = None, identical: bool = False, level: float = 0.95
) -> dict[str, float]:
    """Share of draws within the bound and a 95% interval that respects the trials.

    Parameters
    ----------
    within : array of bool, one per draw
    trial : array of int or None
        The trial of each draw. Draws of one trial share its data, so they are clustered:
        the interval uses Kish's effective size m / deff with the design effect
        deff = 1 + (R - 1) ICC (R draws per trial, ICC from the one-way ANOVA of ``within``
        on ``trial``, at least 0), then Clopper-Pearson on the effective counts. When every
        draw agrees (share 0 or 1) the ICC is not estimable and deff = 1: given the trials'
        data the draws are independent, so the interval is then for these trials' average.
        None: one trial (independent draws).
    identical : bool
        Every draw of a trial is the same release (no noise, epsilon = inf): the count is
        of trials, one value each, and there is no probability over the noise.

    Returns
    -------
    dict with share, lo, hi, draws (all draws), trials (clusters), effective (the size the
    interval counts as independent).
    """
    within = np.asarray(within, dtype=float)
    m = within.size
    trial = np.zeros(m, dtype=int) if trial is None else np.asarray(trial)
    labels, idx = np.unique(trial, return_inverse=True)
    D = labels.size
    per = np.bincount(idx, weights=within) / np.bincount(idx)
    share = float(within.mean())
    if identical:
        eff = float(D)
        k = float(per.sum())
    else:
        R = m / D
        deff = 1.0
        if D > 1 and R > 1:
            msb = R * np.sum((per - share) ** 2) / (D - 1)
            msw = np.sum((within - per[idx]) ** 2) / (m - D)
            icc = 0.0 if msb + (R - 1) * msw == 0 else (msb - msw) / (msb + (R - 1) * msw)
            deff = 1.0 + (R - 1) * max(0.0, float(icc))
        eff = m / deff
        k = share * eff
    a = (1 - level) / 2  # one Clopper-Pearson, the audit's (fractional counts allowed)
    lo, hi = float(clopper_pearson_lower(k, eff, a)), float(clopper_pearson_upper(k, eff, a))
    return {"share": share, "lo": lo, "hi": hi, "draws": m, "trials": int(D), "effective": eff}


# --------------------------------------------------------------------------------------------
# Convex CVaR: where DP-GD's excess actually falls against epsilon n tau / sqrt(d)


# Measured by `PYTHONPATH=$PWD python benchmarks/convex_transition.py --reps 20` (the CVaR page's
# convex study, n = 2000, tau = 0.1, T = 100, delta = 1e-5, seed 0, 13 ratios from 1 to 1000):
# the epsilon n tau / sqrt(d) at which the mean excess falls to half and to a tenth of its peak.
CONVEX_TRANSITION = {
    "half": {1: 26.4, 2: 22.9, 5: 25.9, 10: 29.8, 20: 36.4, 50: 48.7},
    "tenth": {1: 55.6, 2: 45.6, 5: 50.8, 10: 64.4, 20: 77.9, 50: 98.8},
    "median_half": 28.1,
    "median_tenth": 60.0,
}


def transition_ratio(summary: pd.DataFrame, level: float = 0.5) -> pd.Series:
    """The epsilon n tau / sqrt(d) at which DP-GD's mean excess CVaR falls to ``level`` times
    its largest value, beyond that largest value, per d.

    The largest value, not the first: with very large noise DP-GD's step size shrinks and its
    iterate stays near the data-independent start, so the excess first rises with epsilon
    before it falls. ``summary`` has columns d, ratio and excess_mean (the convex study
    summarised by d and ratio). The crossing is interpolated linearly in log ratio between the
    two grid points around it. Returns a Series indexed by d (NaN where it never falls that far).
    """
    out = {}
    for d, part in summary.sort_values("ratio").groupby("d", sort=True):
        x = np.log(part.ratio.to_numpy(float))
        y = part.excess_mean.to_numpy(float)
        top = int(np.argmax(y))
        target = level * y[top]
        below = np.flatnonzero(y[top:] <= target) + top
        if y[top] <= 0 or below.size == 0:
            out[d] = np.nan
            continue
        j = below[0]
        t = (y[j - 1] - target) / (y[j - 1] - y[j])
        out[d] = float(np.exp(x[j - 1] + t * (x[j] - x[j - 1])))
    return pd.Series(out, name="transition_ratio", dtype=float).rename_axis("d")


__all__ = [
    "COMPARATOR_H",
    "CONVEX_TRANSITION",
    "Comparator",
    "Trials",
    "paper_trials",
    "hinge_risk",
    "comparator",
    "comparators",
    "werm_excess_risk",
    "werm_excess_over_h",
    "bounds_release",
    "check_name",
    "with_bounds",
    "coverage",
    "transition_ratio",
]
