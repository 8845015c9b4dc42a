"""Privacy primitives: noise mechanisms with their closed forms, privacy accounting (the
ledger and Gaussian differential privacy) and the empirical DP audit.

- :mod:`dpcore.privacy.mechanisms`: output perturbation, Laplace, Gaussian and Gumbel noise.
- :mod:`dpcore.privacy.accounting`: :class:`PrivacyLedger` (in memory or durable, per dataset)
  and Gaussian-DP composition; :mod:`dpcore.privacy.ledger_store` keeps its rows.
- :mod:`dpcore.privacy.audit`: a Clopper-Pearson lower bound on ε from designed neighbours.
"""

from .accounting import (
    BudgetExceededError,
    LedgerEntry,
    PrivacyLedger,
    dataset_key,
    default_ledger_path,
)
from .audit import audit_epsilon
from .mechanisms import (
    attacker_posterior_bound,
    expected_noise_radius,
    l2_gamma_noise,
    laplace_interval_halfwidth,
    laplace_noise,
    output_perturbation,
)

__all__ = [
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyLedger",
    "attacker_posterior_bound",
    "audit_epsilon",
    "dataset_key",
    "default_ledger_path",
    "expected_noise_radius",
    "l2_gamma_noise",
    "laplace_interval_halfwidth",
    "laplace_noise",
    "output_perturbation",
]
