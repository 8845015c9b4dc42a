"""Monte-Carlo measurements held against the theory bounds of :mod:`dpcore.theory.bounds`.

DP-wERM: Theorem 10 bounds, with probability at least 1 - rho over the noise and for any
fixed theta0, the excess empirical hinge risk L0_hat(theta*) - L0_hat(theta0), where
L0_hat(theta) = (1/n) sum_i w_i max(0, 1 - y_i x~_i' theta). Here the released theta* comes
from the engine itself (:func:`dpcore.werm.solve_werm`, :func:`dpcore.werm.sensitivity`,
:func:`dpcore.mechanisms.output_perturbation`), so the measurement is of the actual mechanism,
including the solver slack in its sensitivity. The comparator theta0 is the minimiser of the
regularized hinge risk L0_hat + (lambda/2)||theta||^2 (approximated by a Huber hinge of width
``COMPARATOR_H``): the bound holds for every theta0 iff it holds for that one, so it is the
most demanding check.

CVaR: the Laplace plug-in's error against the scalar rate, split into its statistical and
privacy parts, on the demo loss laws of :mod:`dpcore.cvar.estimation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..montecarlo import Stream, stream
from ..owl.owl import owl_weights
from ..owl.paper import PAPER_W
from ..owl.preprocessing import FeatureScaling
from ..owl.simulate import PAPER_TRIAL
from ..owl.werm import sensitivity, solve_werm
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
    def d(self):
        return self.X.shape[-1]


def paper_trials(n, datasets, weight_bound=PAPER_W, seed=0, design=PAPER_TRIAL, outcome="paper"):
    """``datasets`` trials of n patients from ``design``, weights B/pi clipped at W.

    The same stream as the DP-OWL sweep (seed, TRAIN, n), so these are its first trials.
    """
    scaling = FeatureScaling.from_bounds(design.feature_bounds, design.p)
    train = design.sample(int(n), size=int(datasets), rng=stream(seed, Stream.TRAIN, int(n)))
    w, _ = owl_weights(train["B"], train["A"], design.propensity, float(weight_bound), outcome)
    return Trials(scaling.transform(train["X"]), train["A"], w)


def hinge_risk(theta, trials):
    """L0_hat for rules theta of shape (D, R, d) on the D trials: array (D, R)."""
    z = trials.y[:, None, :] * np.matmul(theta, np.swapaxes(trials.X, -1, -2))
    np.subtract(1.0, z, out=z)
    np.maximum(z, 0.0, out=z)
    return np.matmul(z, trials.w[..., None])[..., 0] / trials.X.shape[-2]


def comparator(trials, gamma):
    """theta0: the regularized-hinge minimiser at gamma for each trial, shape (D, d)."""
    start, _ = solve_werm(trials.X, trials.y, trials.w, float(gamma), "huber", 0.5)
    theta0, _ = solve_werm(trials.X, trials.y, trials.w, float(gamma), "huber", COMPARATOR_H,
                           theta0=start, max_iter=2000)
    return theta0


def werm_excess_risk(trials, theta0, epsilon, gammas, h, weight_bound=PAPER_W, C=0.0, draws=200,
                     seed=0):
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
    DataFrame with one row per (gamma, trial, draw): gamma, h, trial, draw, excess,
    theta0_norm, radius (the noise's length).
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
        frames.append(pd.DataFrame({
            "gamma": g, "h": float(h),
            "trial": np.repeat(np.arange(D), R), "draw": np.tile(np.arange(R), D),
            "excess": (hinge_risk(released, trials) - base).ravel(),
            "theta0_norm": np.repeat(norms, R),
            "radius": np.linalg.norm(released - theta[:, None, :], axis=-1).ravel(),
        }))
    return pd.concat(frames, ignore_index=True)


def bounds_release(theta_hat, epsilon, delta, draws, rng):
    """``draws`` releases of each exact minimiser: output_perturbation, shape (D, R, d)."""
    batch = np.broadcast_to(theta_hat[:, None, :], (theta_hat.shape[0], draws, theta_hat.shape[1]))
    return output_perturbation(batch, epsilon, delta, rng=rng)


def with_bounds(runs, n, epsilon, rho, weight_bound, C, d):
    """Add each form's Theorem 10 bound (T1 from the row's own theta0) and whether the
    measured excess stayed within it: columns bound_<form> and within_<form>."""
    runs = runs.copy()
    for form in bounds.FORMS:
        b = bounds.werm_bound(n, runs.gamma.to_numpy(), runs.h.to_numpy(), epsilon, rho,
                              weight_bound, C, d, runs.theta0_norm.to_numpy(), form)["total"]
        runs[f"bound_{form}"] = b
        runs[f"within_{form}"] = runs.excess.to_numpy() <= b
    return runs


def coverage(within, level=0.95):
    """Share of draws within the bound and its Clopper-Pearson interval (a binomial count)."""
    within = np.asarray(within, dtype=bool)
    k, m = int(within.sum()), within.size
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else stats.beta.ppf(a, k, m - k + 1)
    hi = 1.0 if k == m else stats.beta.ppf(1 - a, k + 1, m - k)
    return {"share": k / m, "lo": float(lo), "hi": float(hi), "draws": m}


# --------------------------------------------------------------------------------------------
# CVaR: the Laplace plug-in's error against the scalar rate


__all__ = ["COMPARATOR_H", "Trials", "paper_trials", "hinge_risk", "comparator", "werm_excess_risk",
           "bounds_release", "with_bounds", "coverage"]
