"""Privacy primitives: noise mechanisms with their closed forms, privacy accounting (the
ledger and Gaussian differential privacy) and the empirical DP audit.

- :mod:`dpcore.privacy.mechanisms`: output perturbation, Laplace, Gaussian and Gumbel noise.
- :mod:`dpcore.privacy.accounting`: :class:`PrivacyLedger` (in memory or durable, per dataset);
  :mod:`dpcore.privacy.ledger` keeps its rows, :mod:`dpcore.privacy.identity` keys its datasets.
- :mod:`dpcore.privacy.gdp`: Gaussian differential privacy, its (ε, δ) conversions and composition.
- :mod:`dpcore.privacy.audit`: a Clopper-Pearson lower bound on ε from designed neighbours.
"""

import importlib

# Loaded on first use, so that a path needing only the noise samplers (every sweep) does not
# import the ledger, its stores and the audit's scipy.
_EXPORTS = {
    "BudgetExceededError": "accounting",
    "LedgerEntry": "accounting",
    "PrivacyLedger": "accounting",
    "dataset_key": "accounting",
    "default_ledger_path": "accounting",
    "audit_epsilon": "audit",
    "attacker_posterior_bound": "mechanisms",
    "expected_noise_radius": "mechanisms",
    "l2_gamma_noise": "mechanisms",
    "laplace_interval_halfwidth": "mechanisms",
    "laplace_noise": "mechanisms",
    "output_perturbation": "mechanisms",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpcore.privacy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
