"""Releasing a weighted-ERM minimiser: its sensitivity, the noise's size, and the release.

Replacing one record (||x~|| <= 1, |l'| <= 1, w <= W) moves the minimiser of the
gamma-strongly convex objective of :mod:`dpcore.owl.werm` by at most 2W/gamma, so output
perturbation's L2 sensitivity is Delta = (C + 2W)/gamma with the paper's constant C
(:func:`sensitivity`, :func:`resolve_C`). A point whose gradient norm is at most g lies within
g/gamma of the exact minimiser, so releasing solver output with g <= RELEASE_TOL adds
2 RELEASE_TOL/gamma to Delta (one slack per dataset); :func:`solve_for_release` refuses a solve
past it. Objective perturbation (:func:`objective_plan`, :func:`objective_release`) releases the
minimiser of a randomly tilted objective instead. The noise's expected size, overall and per
coefficient in the rule's units (:func:`expected_noise_norm`, :func:`noise_per_coefficient`),
depends on public values only.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._estimator import ConvergenceError, PrivacyWarning
from .._typing import FloatOrArray, Seed
from .._validation import check_choice, check_real
from ..privacy.mechanisms import (
    expected_noise_radius,
    l2_gamma_noise,
    objective_perturbation_budget,
    objective_perturbation_noise,
)
from .losses import curvature_bound
from .preprocessing import FeatureScaling
from .werm import solve_werm

__all__ = [
    "OBJECTIVE_SLACK_SHARE",
    "RELEASE_TOL",
    "data_bounds_with_warning",
    "expected_noise_norm",
    "max_coefficient_norm",
    "noise_per_coefficient",
    "objective_plan",
    "objective_release",
    "resolve_C",
    "sensitivity",
    "solve_for_release",
]

# A release accepts a solver's point at gradient norm at most RELEASE_TOL (fixed in advance,
# never read from the data) and widens the sensitivity by the slack that allows.
RELEASE_TOL = 1e-6
# Objective perturbation spends this share of epsilon on the output noise that covers the
# solver's distance from the exact minimiser (objective_release); the rest on b.
OBJECTIVE_SLACK_SHARE = 0.01


def sensitivity(
    weight_bound: FloatOrArray, gamma: FloatOrArray, C: FloatOrArray = 0.0
) -> FloatOrArray:
    """L2 sensitivity of a released weighted-ERM solution: (C + 2W + 2 RELEASE_TOL)/gamma.

    (C + 2W)/gamma bounds how far replacing one record moves the exact minimiser (Theorem 7);
    the solver's stopping rule leaves each released point within RELEASE_TOL/gamma of its
    exact minimiser, hence the slack.
    """
    return (C + 2.0 * weight_bound + 2.0 * RELEASE_TOL) / gamma


def max_coefficient_norm(n: int, weight_bound: float, gamma: float, loss_at_zero: float) -> float:
    """The largest ||theta*|| the public bounds allow the exact minimiser.

    With weights in [0, W], a 1-Lipschitz loss and features in the unit ball, the optimality
    condition gamma theta* = -sum w_i l'(.) y_i x_i gives ||theta*|| <= n W / gamma, and
    comparing the objective at theta* with its value at 0 gives
    ||theta*|| <= sqrt(2 n W l(0) / gamma). Public values only.
    """
    return float(
        min(n * weight_bound / gamma, np.sqrt(2.0 * n * weight_bound * loss_at_zero / gamma))
    )


def expected_noise_norm(dim: int, epsilon: float, delta: float) -> float:
    """E||b|| of output perturbation's noise, density prop. to exp(-epsilon ||b|| / delta)
    in ``dim`` dimensions: ||b|| ~ Gamma(dim, delta / epsilon)."""
    return 0.0 if np.isinf(epsilon) else float(dim * delta / epsilon)


def noise_per_coefficient(lower, upper, epsilon, sensitivity_, fit_intercept=True):
    """Typical size of the output-perturbation noise, per coefficient, in the rule's units.

    The noise has length d Delta / ε on average in the scaled space (every patient's features
    of length at most 1); on one coordinate its typical length is the mean projection of
    :func:`dpcore.privacy.mechanisms.expected_noise_radius` with k = 1. Undoing the scaling
    gives it per unit of each covariate, and times (upper - lower) the shift it can cause in
    the score across the covariate's public range.

    Returns
    -------
    dict with ``radius`` (d Delta / ε, scaled space), ``intercept``, ``per_unit`` (array, per
    unit of each covariate) and ``across_bounds`` (array, score shift across the bounds).
    """
    scaling = FeatureScaling.from_bounds(
        (np.asarray(lower, float), np.asarray(upper, float)), len(lower), fit_intercept
    )
    one = expected_noise_radius(scaling.d, epsilon, sensitivity_, k=1)
    per = one / scaling.scale
    span = np.asarray(upper, float) - np.asarray(lower, float)
    coef = per[1:] if fit_intercept else per
    return {
        "radius": expected_noise_radius(scaling.d, epsilon, sensitivity_),
        "intercept": float(per[0]) if fit_intercept else 0.0,
        "per_unit": coef,
        "across_bounds": coef * span,
    }


def resolve_C(C: float | str, n: int, weight_bound: float) -> float:
    """The paper's constant C from a number or "worst-case" (= n W, Theorem 7 case iii)."""
    if isinstance(C, str):
        check_choice(C, "C", {"worst-case"})
        return n * weight_bound
    return check_real(C, "C", low=0.0, low_open=False)


def data_bounds_with_warning(X: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Bounds read off the data: allowed only with a warning that the guarantee is void."""
    warnings.warn(
        f"{name} were not given, so they were taken from the data; a bound derived from the "
        "data voids the differential-privacy guarantee. Pass public bounds.",
        PrivacyWarning,
        stacklevel=3,
    )
    return X.min(axis=0), X.max(axis=0)


def solve_for_release(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float, loss: str, h: float
) -> tuple[np.ndarray, dict[str, Any]]:
    """The exact minimiser and the solver's diagnostics, refused past RELEASE_TOL."""
    theta_hat, info = solve_werm(X, y, w, gamma, loss, h)
    if info["grad_norm"] > RELEASE_TOL:
        raise ConvergenceError(
            f"the solver's gradient norm {info['grad_norm']:.3g} exceeds the release tolerance "
            f"{RELEASE_TOL:g} that the sensitivity allows for; nothing was released"
        )
    return theta_hat, {"n_iter": int(info["n_iter"]), "grad_norm": float(info["grad_norm"])}


def objective_plan(
    epsilon: float, gamma: float, weight_bound: float, loss: str = "huber", h: float = 0.5
) -> tuple[float, float]:
    """Objective perturbation's public plan: (epsilon', extra ridge) of :func:`objective_release`.

    CMS's budget (:func:`dpcore.privacy.mechanisms.objective_perturbation_budget`) at
    (1 - OBJECTIVE_SLACK_SHARE) epsilon, with the per-record gradient bound W and curvature
    bound W c. Public: it depends on the hyper-parameters only.
    """
    W = float(weight_bound)
    return objective_perturbation_budget(
        _objective_epsilon(epsilon), gamma, W, W * curvature_bound(loss, h)
    )


def _objective_epsilon(epsilon):
    return epsilon if np.isinf(epsilon) else (1.0 - OBJECTIVE_SLACK_SHARE) * epsilon


def objective_release(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    gamma: float,
    loss: str,
    h: float,
    epsilon: float,
    weight_bound: float,
    size: tuple[int, ...] = (),
    rng: Seed = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Weighted ERM released by objective perturbation (docs/objective.md): pure epsilon-DP.

    Minimises sum_i w_i l(y_i theta' x_i) + ((gamma + extra)/2) ||theta||^2 + b'theta with
    b of density proportional to exp(-epsilon' ||b|| / (2W)), where epsilon' and ``extra``
    are Chaudhuri, Monteleoni and Sarwate's (Algorithm 2) for a per-record gradient bound W
    and curvature bound W c (c = sup l'', :func:`dpcore.owl.losses.curvature_bound`), at the
    budget (1 - OBJECTIVE_SLACK_SHARE) epsilon. The solver stops within
    RELEASE_TOL / (gamma + extra) of the exact minimiser, a distance that depends on the data;
    output noise of sensitivity 2 RELEASE_TOL / (gamma + extra) at OBJECTIVE_SLACK_SHARE
    epsilon covers it, so the release is epsilon-DP, not only the exact minimiser.

    Parameters
    ----------
    X, y, w : scaled design (rows in the unit ball), labels in {-1, +1}, weights in [0, W]
        (n, d), (n,), (n,), shared by every release of the batch; or (B, n, d), (B, n),
        (B, n) with ``size=(B,)``, one data set per release (a simulation's trials).
    gamma : float
        The sum-form ridge (lambda = gamma / n).
    loss, h : the margin loss and the Huber width.
    epsilon : float
        ``np.inf``: no noise and no extra ridge (the plain minimiser).
    weight_bound : float
        The public W.
    size : tuple of int
        Batch shape of independent releases (a simulation's repetitions); () for one.
    rng : None, int or Generator

    Returns
    -------
    theta : ndarray of shape ``size + (d,)``
    info : dict, public ``epsilon_noise`` (epsilon' of b), ``extra_ridge`` and
        ``noise_scale`` (2W / epsilon'), and the analyst-only ``n_iter``, ``grad_norm``

    Raises
    ------
    ConvergenceError
        A gradient norm above RELEASE_TOL: nothing is released.
    """
    rng = np.random.default_rng(rng)
    d = X.shape[-1]
    size = tuple(size)
    W = float(weight_bound)
    infinite = np.isinf(epsilon)
    K = W * curvature_bound(loss, h)
    b, eps_noise, extra = objective_perturbation_noise(
        d, _objective_epsilon(epsilon), gamma, W, K, size, rng
    )
    ridge = gamma + extra
    linear = b if len(size) <= 1 else b.reshape(-1, d)
    theta, info = solve_werm(X, y, w, ridge, loss, h, linear=linear)
    grad_norm = np.atleast_1d(info["grad_norm"])
    if (grad_norm > RELEASE_TOL).any():
        raise ConvergenceError(
            f"the solver's gradient norm {grad_norm.max():.3g} exceeds the release tolerance "
            f"{RELEASE_TOL:g} that the privacy guarantee allows for; nothing was released"
        )
    theta = theta.reshape(size + (d,))
    if not infinite:
        slack = 2.0 * RELEASE_TOL / ridge
        theta = theta + l2_gamma_noise(d, OBJECTIVE_SLACK_SHARE * epsilon, slack, size, rng)
    return theta, {
        "epsilon_noise": float(eps_noise),
        "extra_ridge": float(extra),
        "noise_scale": 0.0 if infinite else 2.0 * W / eps_noise,
        "n_iter": info["n_iter"],
        "grad_norm": info["grad_norm"],
    }
