"""dpcore: differentially private weighted ERM, outcome weighted learning and tail risk.

Subpackages, by concept:

- :mod:`dpcore.privacy`: noise mechanisms, accounting (the privacy ledger), the DP audit.
- :mod:`dpcore.owl`: weighted ERM, DP-OWL, the paper's constants, simulations, sweeps, Algorithm 2.
- :mod:`dpcore.cvar`: empirical and private CVaR, private CVaR learning, their studies.
- :mod:`dpcore.theory`: both papers' bounds and their measurement.
- :mod:`dpcore.data`: reading a trial CSV and its public data dictionary.
- :mod:`dpcore.montecarlo`: random streams, summaries and evaluators shared by every sweep.

The public names below are importable from ``dpcore`` itself; each subpackage is imported
only when one of its names is first used, so ``import dpcore`` stays cheap.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpcore")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

_EXPORTS = {
    "ConvergenceError": "dpcore._estimator",
    "NotFittedError": "dpcore._estimator",
    "PrivacyWarning": "dpcore._estimator",
    "ClippingWarning": "dpcore._estimator",
    "NoiseWarning": "dpcore._estimator",
    "BudgetExceededError": "dpcore.privacy.accounting",
    "LedgerEntry": "dpcore.privacy.accounting",
    "PrivacyLedger": "dpcore.privacy.accounting",
    "dataset_key": "dpcore.privacy.accounting",
    "default_ledger_path": "dpcore.privacy.accounting",
    "attacker_posterior_bound": "dpcore.privacy.mechanisms",
    "expected_noise_radius": "dpcore.privacy.mechanisms",
    "l2_gamma_noise": "dpcore.privacy.mechanisms",
    "laplace_interval_halfwidth": "dpcore.privacy.mechanisms",
    "laplace_noise": "dpcore.privacy.mechanisms",
    "output_perturbation": "dpcore.privacy.mechanisms",
    "DPOWL": "dpcore.owl.dpowl",
    "KArmOWL": "dpcore.owl.karm",
    "agreement_test": "dpcore.owl.owl",
    "concordance": "dpcore.owl.owl",
    "ipw_value": "dpcore.owl.owl",
    "reference_values": "dpcore.owl.owl",
    "treatment_accuracy": "dpcore.owl.owl",
    "DPWeightedERM": "dpcore.owl.dpwerm",
    "solve_werm": "dpcore.owl.werm",
    "FeatureScaling": "dpcore.owl.preprocessing",
    "huber_hinge": "dpcore.owl.losses",
    "logistic": "dpcore.owl.losses",
    "tune_gamma": "dpcore.owl.tuning",
    "evaluate_rule": "dpcore.owl.evaluation",
    "evaluate_arms_rule": "dpcore.owl.evaluation_arms",
    "fit_and_evaluate": "dpcore.owl.evaluation",
    "public_split": "dpcore.owl.evaluation",
    "TwinDesign": "dpcore.owl.preview",
    "preview": "dpcore.owl.preview",
    "Rule": "dpcore.owl.release",
    "load_rule": "dpcore.owl.release",
    "write_rule": "dpcore.owl.release",
    "empirical_cvar": "dpcore.cvar.estimation",
    "private_cvar": "dpcore.cvar.estimation",
    "Dictionary": "dpcore.data.dictionary",
    "read_dictionary": "dpcore.data.dictionary_read",
    "Trial": "dpcore.data.trial",
    "TrialDataError": "dpcore.data.csv_io",
    "read_trial": "dpcore.data.trial",
    "read_arms_trial": "dpcore.data.trial",
    "ResultStore": "dpcore.store",
    "stored": "dpcore.store",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
