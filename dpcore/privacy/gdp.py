"""Gaussian differential privacy: conversions to (ε, δ)-DP and composition.

GDP (Dong, Roth and Su 2022) accounts exactly for composed Gaussian mechanisms: T releases
that are each (Delta/sigma)-GDP compose to mu = sqrt(T) Delta / sigma, and mu-GDP is
equivalent to a whole curve of (epsilon, delta)-DP guarantees (docs/spec/cvar.md §4.2). scipy is
imported by the functions that need it, so importing this module (and the ledger, which
re-exports it) stays cheap.
"""

from __future__ import annotations

from typing import overload

import numpy as np

from .._typing import FloatOrArray
from .._validation import check_real

__all__ = ["gdp_compose", "gdp_delta", "gdp_epsilon", "gdp_mu"]


@overload
def gdp_delta(epsilon: float, mu: float) -> float: ...
@overload
def gdp_delta(epsilon: np.ndarray, mu: float) -> np.ndarray: ...
def gdp_delta(epsilon: FloatOrArray, mu: float) -> FloatOrArray:
    """The smallest delta with mu-GDP => (epsilon, delta)-DP (Balle and Wang 2018).

    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2).
    Vectorised over ``epsilon``. Computed with log-CDFs so that e^epsilon never overflows.
    """
    from scipy.special import log_ndtr  # the standard normal's log-CDF; scipy loads when used

    mu = check_real(mu, "mu", low=0.0)
    eps = np.asarray(epsilon, dtype=float)
    a = log_ndtr(-eps / mu + mu / 2.0)
    b = eps + log_ndtr(-eps / mu - mu / 2.0)
    # a >= b always; exp(a) (1 - exp(b - a)) keeps precision when both terms are tiny.
    delta = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return float(delta) if delta.ndim == 0 else delta


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon with mu-GDP => (epsilon, delta)-DP."""
    from scipy.optimize import brentq

    mu = check_real(mu, "mu", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-14, rtol=1e-14)


def gdp_mu(epsilon: float, delta: float) -> float:
    """Calibrate mu: the largest mu for which mu-GDP implies (epsilon, delta)-DP.

    Examples
    --------
    >>> round(gdp_mu(1.0, 1e-5), 4)
    0.2681
    """
    from scipy.optimize import brentq

    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    # delta(epsilon; mu) increases in mu from 0, so the root is bracketed once it exceeds delta.
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:
        hi *= 2.0
    return brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-15, rtol=1e-14)


def gdp_compose(*mus: float) -> float:
    """mu of the adaptive composition of mu_1-, mu_2-, ... GDP mechanisms: sqrt(sum mu_i^2)."""
    return float(np.sqrt(np.sum(np.square(np.asarray(mus, dtype=float)))))
