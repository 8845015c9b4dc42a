"""The learning studies of the CVaR page: the exponential mechanism over a finite class of
slopes, and DP-GD on the lifted objective against epsilon n tau / sqrt(d).

As in :mod:`dpcore.cvar.sweep`, every random draw comes from a stream keyed by the values that
define its cell. The class study's expectations over the mechanism are exact (from its
probabilities), with the rates of :mod:`dpcore.cvar.rates` beside them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_epsilon
from ..montecarlo import Stream, key, stream
from .estimation import check_bound, check_tau, check_whole, empirical_cvar
from .learning import dp_gd_cvar, em_probabilities, minority_regression, slope_class_losses
from .rates import em_gap_bound, finite_class_rate

__all__ = ["ClassStudy", "class_study", "convex_study"]


@dataclass(frozen=True)
class ClassStudy:
    """The slope class on one simulated data set: empirical and population CVaR per slope,
    the exponential mechanism's exact selection probabilities per epsilon (rows of ``probs``)
    and its exact expected excess, empirical and population, with the bounds beside them."""

    thetas: np.ndarray
    rho_emp: np.ndarray
    rho_pop: np.ndarray
    mean_erm_theta: float
    epsilons: np.ndarray
    probs: np.ndarray
    excess_emp: np.ndarray
    excess_pop: np.ndarray
    gap_bound: np.ndarray
    rate: np.ndarray
    bound: float


def class_study(
    n: int,
    tau: float,
    M: int,
    eps_grid: Sequence[float],
    bound: float = 1.0,
    seed: int = 0,
    population_size: int = 50_000,
) -> ClassStudy:
    """Exponential mechanism over M slopes theta x, theta on a grid in [-1.5, 1.5], on the
    minority-regression data (90% y = x, 10% y = -x, noise 0.1); loss min(B, |y - theta x|/2).

    Expectations over the mechanism are exact (from its probabilities); the population CVaR
    of each slope is measured on a public sample of ``population_size`` fresh records.
    """
    n, M = check_whole(n, "n"), check_whole(M, "M", low=2)
    tau, bound = check_tau(tau), check_bound(bound)
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(eps_grid)], dtype=float)
    thetas = np.linspace(-1.5, 1.5, M)
    x, y = minority_regression(n, rng=stream(seed, Stream.CVAR_CLASS, n))
    losses = slope_class_losses(x, y, thetas, bound)
    xp, yp = minority_regression(int(population_size), rng=stream(seed, Stream.CVAR_CLASS, 0))
    rho_emp = np.asarray(empirical_cvar(losses, tau))  # one CVaR per slope
    rho_pop = np.asarray(empirical_cvar(slope_class_losses(xp, yp, thetas, bound), tau))
    probs = np.stack([em_probabilities(losses, tau, e, bound) for e in eps])
    return ClassStudy(
        thetas=thetas,
        rho_emp=rho_emp,
        rho_pop=rho_pop,
        mean_erm_theta=float(thetas[np.argmin(losses.mean(axis=1))]),
        epsilons=eps,
        probs=probs,
        excess_emp=probs @ (rho_emp - rho_emp.min()),
        excess_pop=probs @ (rho_pop - rho_pop.min()),
        gap_bound=np.minimum(bound, em_gap_bound(M, n, tau, eps, bound)),
        rate=np.asarray(finite_class_rate(M, n, tau, eps, bound)),
        bound=bound,
    )


def _regression_data(n, d, rng):
    """x with norm <= 1 (Gaussian / sqrt(d), scaled into the unit ball); y = 0.5 x_1 for 90%
    of records and -0.5 x_1 for a 10% minority, plus noise 0.1, clipped to [-1, 1]."""
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    sign = np.where(rng.random(n) < 0.1, -1.0, 1.0)
    return X, np.clip(sign * 0.5 * X[:, 0] + 0.1 * rng.standard_normal(n), -1.0, 1.0)


def _test_cvar(coef, X, y, tau):
    """Empirical CVaR of the absolute loss of each row of ``coef`` on a test set."""
    return empirical_cvar(np.abs(y - np.atleast_2d(coef) @ X.T), tau)


def convex_study(
    n: int,
    tau: float,
    d_grid: Sequence[int],
    ratio_grid: Sequence[float],
    reps: int = 10,
    seed: int = 0,
    steps: int = 100,
    delta: float = 1e-5,
    test_size: int = 20_000,
) -> pd.DataFrame:
    """Excess CVaR of DP-GD (:func:`dpcore.cvar.learning.dp_gd_cvar`, absolute loss, unit
    ball) over the non-private run, on a fresh test set, at epsilon = ratio sqrt(d)/(n tau).

    Returns a DataFrame of per-run rows: d, ratio (epsilon n tau / sqrt(d)), epsilon, rep,
    excess (test CVaR of the private fit minus that of the noiseless run with the same
    steps; it can be slightly negative).
    """
    n, steps, reps = (
        check_whole(n, "n"),
        check_whole(steps, "steps"),
        check_whole(reps, "reps", low=2),
    )
    tau = check_tau(tau)
    frames = []
    for d in (check_whole(v, "d") for v in np.atleast_1d(d_grid)):
        rng = stream(seed, Stream.CVAR_GD, n, d)
        X, y = _regression_data(n, d, rng)
        Xt, yt = _regression_data(int(test_size), d, rng)
        ref = _test_cvar(dp_gd_cvar(X, y, tau, np.inf, delta, steps=steps).coef, Xt, yt, tau)
        for ratio in np.atleast_1d(ratio_grid):
            eps = float(ratio) * math.sqrt(d) / (n * tau)
            fit = dp_gd_cvar(
                X,
                y,
                tau,
                eps,
                delta,
                steps=steps,
                reps=reps,
                rng=stream(seed, Stream.CVAR_GD, n, d, key(float(ratio)), tau),
            )
            frames.append(
                pd.DataFrame(
                    {
                        "d": d,
                        "ratio": float(ratio),
                        "epsilon": eps,
                        "rep": np.arange(reps),
                        "excess": _test_cvar(fit.coef, Xt, yt, tau) - ref,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
