"""dpcore: differentially private weighted ERM, outcome weighted learning and tail risk.

Subpackages, by concept:

- :mod:`dpcore.privacy`: noise mechanisms, accounting (the privacy ledger), the DP audit.
- :mod:`dpcore.owl`: weighted ERM, DP-OWL, the private plug-in rule, the paper's constants,
  simulations, sweeps, Algorithm 2.
- :mod:`dpcore.cvar`: empirical and private CVaR, private CVaR learning, their studies.
- :mod:`dpcore.theory`: both papers' bounds and their measurement.
- :mod:`dpcore.data`: reading a trial CSV and its public data dictionary.
- :mod:`dpcore.montecarlo`: random streams, executors and summaries shared by every sweep.

The public names below are importable from ``dpcore`` itself; each subpackage is imported
only when one of its names is first used, so ``import dpcore`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

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
    "PrivatePlugInRule": "dpcore.owl.plugin",
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
    "fit_and_evaluate": "dpcore.owl.evaluation_fit",
    "public_split": "dpcore.owl.evaluation_fit",
    "TwinDesign": "dpcore.owl.simulate",
    "preview": "dpcore.release.preview",
    "Rule": "dpcore.owl.rule",
    "load_rule": "dpcore.owl.rule_read",
    "write_rule": "dpcore.owl.rule_file",
    "empirical_cvar": "dpcore.cvar.estimation",
    "private_cvar": "dpcore.cvar.estimation",
    "Dictionary": "dpcore.data.dictionary.model",
    "read_dictionary": "dpcore.data.dictionary.read",
    "Trial": "dpcore.data.trial",
    "TrialDataError": "dpcore.data.errors",
    "read_trial": "dpcore.data.trial",
    "read_arms_trial": "dpcore.data.trial",
    "ResultStore": "dpcore.store",
    "stored": "dpcore.store",
}

if TYPE_CHECKING:
    # What mypy and pyright see, so that `from dpcore import DPOWL` is typed (re-exported by
    # __all__); at run time the lazy __getattr__ below serves the same names.
    # tests/dpcore/test_typing.py checks that these imports, _EXPORTS and __all__ agree.
    from ._estimator import (
        ClippingWarning,
        ConvergenceError,
        NoiseWarning,
        NotFittedError,
        PrivacyWarning,
    )
    from .cvar.estimation import empirical_cvar, private_cvar
    from .data.dictionary.model import Dictionary
    from .data.dictionary.read import read_dictionary
    from .data.errors import TrialDataError
    from .data.trial import Trial, read_arms_trial, read_trial
    from .owl.dpowl import DPOWL
    from .owl.dpwerm import DPWeightedERM
    from .owl.evaluation import evaluate_rule
    from .owl.evaluation_arms import evaluate_arms_rule
    from .owl.evaluation_fit import fit_and_evaluate, public_split
    from .owl.karm import KArmOWL
    from .owl.losses import huber_hinge, logistic
    from .owl.owl import (
        agreement_test,
        concordance,
        ipw_value,
        reference_values,
        treatment_accuracy,
    )
    from .owl.plugin import PrivatePlugInRule
    from .owl.preprocessing import FeatureScaling
    from .owl.rule import Rule
    from .owl.rule_file import write_rule
    from .owl.rule_read import load_rule
    from .owl.simulate import TwinDesign
    from .owl.tuning import tune_gamma
    from .owl.werm import solve_werm
    from .privacy.accounting import (
        BudgetExceededError,
        LedgerEntry,
        PrivacyLedger,
        dataset_key,
        default_ledger_path,
    )
    from .privacy.mechanisms import (
        attacker_posterior_bound,
        expected_noise_radius,
        l2_gamma_noise,
        laplace_interval_halfwidth,
        laplace_noise,
        output_perturbation,
    )
    from .release.preview import preview
    from .store import ResultStore, stored

__all__ = [
    "BudgetExceededError",
    "ClippingWarning",
    "ConvergenceError",
    "DPOWL",
    "DPWeightedERM",
    "Dictionary",
    "FeatureScaling",
    "KArmOWL",
    "LedgerEntry",
    "NoiseWarning",
    "NotFittedError",
    "PrivacyLedger",
    "PrivacyWarning",
    "PrivatePlugInRule",
    "ResultStore",
    "Rule",
    "Trial",
    "TrialDataError",
    "TwinDesign",
    "agreement_test",
    "attacker_posterior_bound",
    "concordance",
    "dataset_key",
    "default_ledger_path",
    "empirical_cvar",
    "evaluate_arms_rule",
    "evaluate_rule",
    "expected_noise_radius",
    "fit_and_evaluate",
    "huber_hinge",
    "ipw_value",
    "l2_gamma_noise",
    "laplace_interval_halfwidth",
    "laplace_noise",
    "load_rule",
    "logistic",
    "output_perturbation",
    "preview",
    "private_cvar",
    "public_split",
    "read_arms_trial",
    "read_dictionary",
    "read_trial",
    "reference_values",
    "solve_werm",
    "stored",
    "treatment_accuracy",
    "tune_gamma",
    "write_rule",
    "__version__",
]


if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt name is an error there

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'dpcore' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later look-ups skip this function
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
