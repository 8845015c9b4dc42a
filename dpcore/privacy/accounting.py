"""Privacy accounting: Gaussian differential privacy and a session privacy ledger.

GDP (Dong, Roth and Su 2022) accounts exactly for composed Gaussian mechanisms: T releases
that are each (Delta/sigma)-GDP compose to mu = sqrt(T) Delta / sigma, and mu-GDP is
equivalent to a whole curve of (epsilon, delta)-DP guarantees (spec cvar.md §4.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from .._validation import check_epsilon, check_real

__all__ = [
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyLedger",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
]


# --------------------------------------------------------------------------------------------
# Gaussian differential privacy


def gdp_delta(epsilon, mu):
    """The smallest delta with mu-GDP => (epsilon, delta)-DP (Balle and Wang 2018).

    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2).
    Vectorised over ``epsilon``. Computed with log-CDFs so that e^epsilon never overflows.
    """
    mu = check_real(mu, "mu", low=0.0)
    eps = np.asarray(epsilon, dtype=float)
    a = norm.logcdf(-eps / mu + mu / 2.0)
    b = eps + norm.logcdf(-eps / mu - mu / 2.0)
    # a >= b always; exp(a) (1 - exp(b - a)) keeps precision when both terms are tiny.
    delta = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return float(delta) if delta.ndim == 0 else delta


def gdp_epsilon(mu, delta):
    """The smallest epsilon with mu-GDP => (epsilon, delta)-DP."""
    mu = check_real(mu, "mu", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-14, rtol=1e-14)


def gdp_mu(epsilon, delta):
    """Calibrate mu: the largest mu for which mu-GDP implies (epsilon, delta)-DP.

    Examples
    --------
    >>> round(gdp_mu(1.0, 1e-5), 4)
    0.2681
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    # delta(epsilon; mu) increases in mu from 0, so the root is bracketed once it exceeds delta.
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:
        hi *= 2.0
    return brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-15, rtol=1e-14)


def gdp_compose(*mus):
    """mu of the adaptive composition of mu_1-, mu_2-, ... GDP mechanisms: sqrt(sum mu_i^2)."""
    return float(np.sqrt(np.sum(np.square(np.asarray(mus, dtype=float)))))


# --------------------------------------------------------------------------------------------
# Session privacy ledger (basic composition)


class BudgetExceededError(ValueError):
    """A release would take the composed privacy spend past the ledger's budget."""


@dataclass(frozen=True)
class LedgerEntry:
    """One private release: which mechanism, its (epsilon, delta) and when (UTC)."""

    mechanism: str
    epsilon: float
    delta: float
    timestamp: datetime


class PrivacyLedger:
    """Record of the private releases made on one dataset, with their composed total.

    Parameters
    ----------
    budget : float or None
        Largest total epsilon (basic composition) the ledger accepts; None for no limit.

    Notes
    -----
    The total is basic (sequential) composition: epsilons add and deltas add. It is valid for
    any mechanisms, adaptive or not, and loose for many Gaussian releases, whose exact GDP
    total is :func:`gdp_compose`.

    Examples
    --------
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> ledger.record("private CVaR (Laplace)", 0.5)
    >>> ledger.record("DP-GD", 0.3, delta=1e-6)
    >>> ledger.total()
    (0.8, 1e-06)
    """

    def __init__(self, budget=None):
        self.budget = None if budget is None else check_real(budget, "budget", low=0.0)
        self._entries = []

    def __repr__(self):
        eps, delta = self.total()
        return (f"PrivacyLedger(budget={self.budget!r}, releases={len(self._entries)}, "
                f"epsilon={eps:g}, delta={delta:g})")

    @property
    def entries(self):
        """The recorded releases, oldest first, as a tuple of frozen :class:`LedgerEntry`."""
        return tuple(self._entries)

    def total(self):
        """(epsilon_total, delta_total) by basic composition; (0.0, 0.0) when empty."""
        return (float(sum(e.epsilon for e in self._entries)),
                float(sum(e.delta for e in self._entries)))

    def record(self, mechanism, epsilon, delta=0.0):
        """Append a release, or raise and record nothing.

        Raises
        ------
        TypeError, ValueError
            ``mechanism`` not a non-empty string; epsilon not in (0, inf); delta not in [0, 1).
        BudgetExceededError
            The release would take the total epsilon past the budget.
        """
        if not isinstance(mechanism, str) or not mechanism.strip():
            raise TypeError(f"mechanism must be a non-empty name, got {mechanism!r}")
        epsilon = check_epsilon(epsilon)
        if np.isinf(epsilon):
            raise ValueError("epsilon must be finite: a non-private release (epsilon=inf) is "
                             "not a privacy spend and is not recorded")
        delta = check_real(delta, "delta", low=0.0, low_open=False)
        if delta >= 1.0:
            raise ValueError(f"delta must be < 1, got {delta}")
        spent = self.total()[0]
        # A relative slack so that budgets like 0.1 + 0.2 == 0.3 are not refused by rounding.
        if self.budget is not None and spent + epsilon > self.budget * (1.0 + 1e-12):
            raise BudgetExceededError(
                f"privacy budget epsilon={self.budget:g} exceeded: {spent:g} already spent, "
                f"{epsilon:g} requested by {mechanism!r} (total would be {spent + epsilon:g})"
            )
        self._entries.append(LedgerEntry(mechanism, epsilon, delta, datetime.now(timezone.utc)))
