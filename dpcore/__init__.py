"""dpcore: differentially private weighted ERM, outcome weighted learning and tail risk."""

from .cvar import empirical_cvar, private_cvar
from .losses import huber_hinge, logistic
from .mechanisms import attacker_posterior_bound, l2_gamma_noise, laplace_noise
from .owl import DPOWL, agreement_test, concordance, ipw_value, reference_values, treatment_accuracy
from .werm import ConvergenceError, DPWeightedERM, FeatureScaling, PrivacyWarning, solve_werm

__all__ = [
    "DPOWL",
    "ConvergenceError",
    "DPWeightedERM",
    "FeatureScaling",
    "PrivacyWarning",
    "agreement_test",
    "attacker_posterior_bound",
    "concordance",
    "empirical_cvar",
    "huber_hinge",
    "ipw_value",
    "l2_gamma_noise",
    "laplace_noise",
    "logistic",
    "private_cvar",
    "reference_values",
    "solve_werm",
    "treatment_accuracy",
]
