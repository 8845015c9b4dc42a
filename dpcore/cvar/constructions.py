"""Constructions of the private-CVaR paper: its hard instances and the loss laws of the demos
(docs/spec/cvar.md §2.2, §5.2, §5.3).

The two-point pair of Theorem 3.2 (:func:`hard_two_point`), Theorem 6.1's embedding of a mean
into a CVaR (:func:`tail_embedding`), and the demo loss laws the CVaR page draws
(:data:`KINDS`: :func:`demo_losses` and their population CVaR, :func:`demo_population_cvar`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, stats

from .._typing import ArrayLike, Seed, Shape
from .._validation import check_choice, check_epsilon
from .estimation import check_bound, check_samples, check_tau

__all__ = [
    "KINDS",
    "TwoPoint",
    "demo_losses",
    "demo_population_cvar",
    "hard_two_point",
    "tail_embedding",
]


@dataclass(frozen=True)
class TwoPoint:
    """Theorem 3.2's pair: P0 = point mass at 0, P1 = mass ``p`` at B; CVaR gap ``gap``."""

    p: float
    gap: float


def hard_two_point(
    n: int, tau: float, epsilon: float, bound: float = 1.0, c1: float = 0.1
) -> TwoPoint:
    """The scalar lower-bound instance: p = c1 min{tau, 1/(epsilon n)}, gap = p B / tau.

    Any epsilon-DP estimator errs by at least gap/16 on one of P0, P1 (needs c1 < 0.1645).
    """
    tau, bound, epsilon = check_tau(tau), check_bound(bound), check_epsilon(epsilon)
    p = c1 * min(tau, 1.0 / (epsilon * n))
    return TwoPoint(p=p, gap=p * bound / tau)


#: The demo loss laws, by name.
KINDS = ("uniform", "beta", "two-point", "heavy-tailed")


def _demo_ppf(kind, bound, p):
    """Quantile function of each demo loss law (clipped to [0, bound])."""
    if kind == "uniform":
        return lambda u: bound * u
    if kind == "beta":  # concentrated in [B/4, 3B/4]: where the instance-adaptive variant helps
        return lambda u: bound * (0.25 + 0.5 * stats.beta(20, 20).ppf(u))
    if kind == "two-point":
        return lambda u: bound * (u > 1.0 - p)
    # Lomax (Pareto II) with tail index 2: a finite mean but a heavy tail, cut at B.
    return lambda u: np.minimum(bound, 0.05 * bound * stats.lomax(2.0).ppf(u))


def demo_losses(
    kind: str, size: Shape, bound: float = 1.0, *, p: float = 0.05, rng: Seed = None
) -> np.ndarray:
    """Draw demo losses in [0, bound]: "uniform", "beta" (B(0.25 + 0.5 Beta(20, 20))),
    "two-point" (B Bernoulli(p), the hard instance with p = tau/2) or "heavy-tailed"
    (min(B, 0.05 B Lomax(2)))."""
    check_choice(kind, "kind", set(KINDS))
    rng, bound = np.random.default_rng(rng), check_bound(bound)
    # Direct samplers where scipy's inverse CDF would be slow; same laws as _demo_ppf.
    if kind == "beta":
        return bound * (0.25 + 0.5 * rng.beta(20.0, 20.0, size))
    if kind == "heavy-tailed":
        return np.minimum(bound, 0.05 * bound * rng.pareto(2.0, size))
    return _demo_ppf(kind, bound, p)(rng.random(size))


def demo_population_cvar(kind: str, tau: float, bound: float = 1.0, *, p: float = 0.05) -> float:
    """Population CVaR_tau of a :func:`demo_losses` law: (1/tau) times the integral of the
    quantile function over [1 - tau, 1]."""
    check_choice(kind, "kind", set(KINDS))
    tau, bound = check_tau(tau), check_bound(bound)
    if kind == "two-point":
        return bound * min(1.0, p / tau)
    if kind == "uniform":
        return bound * (1.0 - tau / 2.0)
    value, _ = integrate.quad(_demo_ppf(kind, bound, p), 1.0 - tau, 1.0, limit=200)
    return value / tau


def tail_embedding(a: ArrayLike, tau: float, rng: Seed = None) -> np.ndarray:
    """Theorem 6.1's embedding l = T a with T ~ Bernoulli(tau): CVaR_tau(l) = E[a] for a >= 0.

    Turns a mean-estimation problem on ``a`` into a CVaR problem with n tau effective records.
    """
    a, tau = check_samples(a, "a"), check_tau(tau)
    rng = np.random.default_rng(rng)
    return a * (rng.random(a.shape) < tau)
