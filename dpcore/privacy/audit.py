"""Empirical differential-privacy audit of a scalar statistic of a mechanism (docs/spec/cvar.md §6).

A black-box lower bound on the privacy loss: sample the mechanism's output on two designed
neighbouring datasets, pick threshold events on one half of the samples, and bound the
probability ratio of those events on the other half with Clopper-Pearson intervals. A correct
epsilon-DP mechanism yields a lower bound above epsilon with probability at most ``alpha``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv

from .._typing import ArrayLike, Seed


@dataclass
class AuditResult:
    epsilon_lb: float
    threshold: float
    event: str
    epsilon_claimed: float

    @property
    def passed(self) -> bool:
        return self.epsilon_lb <= self.epsilon_claimed


def audit_epsilon(
    sample_s: Callable[..., np.ndarray],
    sample_sp: Callable[..., np.ndarray],
    epsilon: float,
    n_samples: int = 1_000_000,
    delta: float = 0.0,
    alpha: float = 0.05,
    n_thresholds: int = 200,
    keep: int = 20,
    rng: Seed = None,
) -> AuditResult:
    """Lower-bound the epsilon of a mechanism from samples of its output on neighbours.

    Parameters
    ----------
    sample_s, sample_sp : callable (size, rng) -> ndarray of shape (size,)
        Draw the scalar output on S and on the neighbour S'.
    epsilon : float
        The claimed epsilon.
    n_samples : int
        Samples per side, half for choosing thresholds and half for the bound.
    delta : float
    alpha : float
        False-alarm probability for a correct mechanism.
    n_thresholds, keep : candidate pooled quantiles, and how many of them to test.

    Notes
    -----
    The Bonferroni correction counts every event tested: 4 per kept threshold, so each
    Clopper-Pearson bound is at level a = alpha / (2 * 4 * keep). That is the union bound over
    all events (docs/spec/cvar.md §6 leaves "#events" open; counting 4 would not control alpha).
    rng : None, int or Generator

    Returns
    -------
    AuditResult
    """
    rng = np.random.default_rng(rng)
    half = int(n_samples) // 2
    s1, sp1 = sample_s(half, rng), sample_sp(half, rng)
    pooled = np.concatenate((s1, sp1))
    candidates = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1]))
    ks, ksp = _upper_counts(s1, candidates), _upper_counts(sp1, candidates)
    lr_upper = np.abs(np.log((ks + 1) / (ksp + 1)))
    lr_lower = np.abs(np.log((half - ks + 1) / (half - ksp + 1)))
    chosen = candidates[np.argsort(-np.maximum(lr_upper, lr_lower))[:keep]]

    s2, sp2 = sample_s(half, rng), sample_sp(half, rng)
    ks, ksp = _upper_counts(s2, chosen), _upper_counts(sp2, chosen)
    # Four events per threshold: {o > t} and {o <= t}, each as S' over S and S over S'.
    pairs = {
        "P[S' > t] / P[S > t]": (ksp, ks),
        "P[S > t] / P[S' > t]": (ks, ksp),
        "P[S' <= t] / P[S <= t]": (half - ksp, half - ks),
        "P[S <= t] / P[S' <= t]": (half - ks, half - ksp),
    }
    a = alpha / (2 * len(pairs) * chosen.size)
    best = (-np.inf, np.nan, "")
    for name, (k_num, k_den) in pairs.items():
        lo = clopper_pearson_lower(k_num, half, a)
        hi = clopper_pearson_upper(k_den, half, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps_hat = np.log(np.maximum(lo - delta, 0.0) / hi)
        j = int(np.argmax(eps_hat))
        if eps_hat[j] > best[0]:
            best = (float(eps_hat[j]), float(chosen[j]), name)
    return AuditResult(best[0], best[1], best[2], float(epsilon))


def _upper_counts(samples, thresholds):
    """#{o > t} for every threshold t."""
    return samples.size - np.searchsorted(np.sort(samples), thresholds, side="right")


def clopper_pearson_lower(k: ArrayLike, n: float | np.ndarray, a: float) -> np.ndarray:
    """One-sided lower confidence bound (level 1 - a) of a binomial proportion."""
    k = np.asarray(k, dtype=float)
    # k may be fractional (an effective count); the placeholder 1 only fills the k = 0 branch
    return np.where(k > 0, betaincinv(np.where(k > 0, k, 1.0), n - k + 1, a), 0.0)


def clopper_pearson_upper(k: ArrayLike, n: float | np.ndarray, a: float) -> np.ndarray:
    """One-sided upper confidence bound (level 1 - a) of a binomial proportion."""
    k = np.asarray(k, dtype=float)
    return np.where(k < n, betaincinv(k + 1, np.where(k < n, n - k, 1.0), 1 - a), 1.0)
