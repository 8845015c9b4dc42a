"""The bridge between the two papers: the tail risk of a DP-OWL treatment rule, released
privately.

A DP-OWL rule is released on the paper's simulated trial; the private CVaR of the worst-off
share of new patients' outcomes under it is released next, against the non-private rule's and
the best rule's, with both releases in one ledger.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._estimator import ClippingWarning
from .._validation import check_epsilon
from ..montecarlo import Stream, key, stream
from ..owl.dpowl import DPOWL
from ..owl.paper import PAPER_W, resolve_gamma
from ..owl.simulate import PAPER_TRIAL
from ..privacy.accounting import PrivacyLedger
from ..privacy.mechanisms import laplace_interval_halfwidth
from .estimation import check_tau, check_whole, cvar_sensitivity, empirical_cvar, private_cvar

__all__ = ["RuleTailRisk", "rule_tail_risk"]


@dataclass(frozen=True)
class RuleTailRisk:
    """Mean outcome of the worst tau share of new patients under each rule (larger is better).

    ``private_rule`` and ``nonprivate_rule`` and ``best_rule`` are exact on the test patients
    (simulated, so the truth can be shown); ``released`` is the private CVaR release for the
    private rule, ``halfwidth`` its 95% Laplace noise half-width in outcome units.
    """

    tau: float
    gamma: float
    outcome_bounds: tuple
    private_rule: float
    nonprivate_rule: float
    best_rule: float
    released: float
    halfwidth: float
    mean_private: float
    mean_nonprivate: float
    agreement: float
    ledger: PrivacyLedger


def rule_tail_risk(
    n: int,
    tau: float,
    eps_rule: float,
    eps_cvar: float,
    seed: int = 0,
    test_size: int = 5000,
    outcome_bounds: tuple[float, float] = (-12.0, 12.0),
) -> RuleTailRisk:
    """A DP-OWL rule released at ``eps_rule`` on the paper's simulated trial of n patients,
    then the private CVaR (``eps_cvar``) of the worst-off tau share of ``test_size`` new
    patients' outcomes under it, against the non-private rule's.

    Outcomes become losses hi - clip(outcome, lo, hi) in [0, hi - lo] with the public
    ``outcome_bounds`` (the design's means lie in [-9.0, 9.1], noise sd 0.5). The ledger
    records both releases; a patient in both data sets is covered by their sum.
    """
    n, tau = check_whole(n, "n"), check_tau(tau)
    eps_rule, eps_cvar = check_epsilon(eps_rule, "eps_rule"), check_epsilon(eps_cvar, "eps_cvar")
    lo, hi = (float(v) for v in outcome_bounds)
    rng = stream(seed, Stream.CVAR_RULE, n, key(eps_rule))
    train = PAPER_TRIAL.sample(n, rng=stream(seed, Stream.CVAR_RULE, n))
    gamma = resolve_gamma("paper", eps_rule, n)
    kw: dict[str, Any] = dict(
        gamma=gamma,
        weight_bound=PAPER_W,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        outcome_bounds=(lo, hi),
    )
    with warnings.catch_warnings():
        # Weights above W are clipped, as on the DP-OWL page: only that is silenced, and only
        # here, on the paper's simulated trial; a privacy warning still reaches the caller.
        warnings.simplefilter("ignore", ClippingWarning)
        private = DPOWL(epsilon=eps_rule, rng=rng, **kw, larger_is_better=True).fit(
            train["X"], train["A"], train["B"], 0.5
        )
        exact = DPOWL(epsilon=np.inf, **kw, larger_is_better=True).fit(
            train["X"], train["A"], train["B"], 0.5
        )
    test = PAPER_TRIAL.sample(int(test_size), rng=stream(seed, Stream.CVAR_RULE, 0))
    baseline = 0.01 + 0.02 * test["X"][:, 3]  # the design's outcome mean without the A f term
    noise = 0.5 * stream(seed, Stream.CVAR_RULE, 1).standard_normal(int(test_size))

    def outcomes(a):
        return baseline + 3.0 * a * test["f"] + noise

    def loss(a):
        return hi - np.clip(outcomes(a), lo, hi)

    a_priv, a_exact = private.predict(test["X"]), exact.predict(test["X"])
    a_best = np.where(test["f"] > 0, 1.0, -1.0)
    released = private_cvar(
        loss(a_priv),
        tau,
        eps_cvar,
        hi - lo,
        rng=stream(seed, Stream.CVAR_RULE, 2, key(tau), key(eps_cvar)),
    )
    ledger = PrivacyLedger()
    if math.isfinite(eps_rule):
        ledger.record("DP-OWL treatment rule (trial patients)", eps_rule)
    if math.isfinite(eps_cvar):
        ledger.record("private CVaR of outcomes (new patients)", eps_cvar)
    return RuleTailRisk(
        tau=tau,
        gamma=float(gamma),
        outcome_bounds=(lo, hi),
        private_rule=hi - float(empirical_cvar(loss(a_priv), tau)),
        nonprivate_rule=hi - float(empirical_cvar(loss(a_exact), tau)),
        best_rule=hi - float(empirical_cvar(loss(a_best), tau)),
        released=hi - float(released),
        # a release and the exact value both lie in the range, so no error exceeds hi - lo
        halfwidth=min(
            hi - lo, laplace_interval_halfwidth(eps_cvar, cvar_sensitivity(test_size, tau, hi - lo))
        ),
        mean_private=float(outcomes(a_priv).mean()),
        mean_nonprivate=float(outcomes(a_exact).mean()),
        agreement=float(np.mean(a_priv == a_exact)),
        ledger=ledger,
    )
