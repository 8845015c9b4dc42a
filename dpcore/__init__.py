"""dpcore: differentially private weighted ERM, outcome weighted learning and tail risk."""

from ._estimator import ConvergenceError, NotFittedError, PrivacyWarning
from .cvar import empirical_cvar, private_cvar
from .data import TrialDataError, read_trial
from .losses import huber_hinge, logistic
from .mechanisms import (
    attacker_posterior_bound,
    expected_noise_radius,
    l2_gamma_noise,
    laplace_interval_halfwidth,
    laplace_noise,
    output_perturbation,
)
from .owl import DPOWL, agreement_test, concordance, ipw_value, reference_values, treatment_accuracy
from .preprocessing import FeatureScaling
from .werm import DPWeightedERM, solve_werm

__all__ = [
    "DPOWL",
    "ConvergenceError",
    "DPWeightedERM",
    "FeatureScaling",
    "NotFittedError",
    "PrivacyWarning",
    "TrialDataError",
    "agreement_test",
    "attacker_posterior_bound",
    "concordance",
    "expected_noise_radius",
    "empirical_cvar",
    "huber_hinge",
    "ipw_value",
    "l2_gamma_noise",
    "laplace_interval_halfwidth",
    "laplace_noise",
    "logistic",
    "output_perturbation",
    "private_cvar",
    "read_trial",
    "reference_values",
    "solve_werm",
    "treatment_accuracy",
]
