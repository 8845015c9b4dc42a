"""Weighted ERM and outcome weighted learning (the DP-wERM paper).

- :mod:`dpcore.owl.werm`: the weighted objective and its Newton solver; :mod:`dpcore.owl.dpwerm`:
  :class:`DPWeightedERM`.
- :mod:`dpcore.owl.dpowl`: :class:`DPOWL`; :mod:`dpcore.owl.owl`: the OWL weights and the rule metrics.
- :mod:`dpcore.owl.plugin`: :class:`PrivatePlugInRule`, a second private learner (per-arm linear
  outcome models from Laplace-noised sufficient statistics, :mod:`dpcore.owl.outcome_model`).
- :mod:`dpcore.owl.losses`, :mod:`dpcore.owl.preprocessing`: margin losses, public scaling.
- :mod:`dpcore.owl.paper`: the authors' constants and tuned-γ table.
- :mod:`dpcore.owl.simulate`: the paper's synthetic trial and its variants.
- :mod:`dpcore.owl.experiments`: Monte-Carlo sweeps and their rules' evaluator on fresh test
  sets; :mod:`dpcore.owl.tuning`: Algorithm 2.
- :mod:`dpcore.owl.release`: the rule file; :mod:`dpcore.owl.evaluation`: private evaluation
  by a public split; :mod:`dpcore.owl.preview`: a simulated twin before any ε is spent.
- :mod:`dpcore.owl.karm`: a rule over K > 2 arms (K - 1 DP-OWL rules against a reference);
  :mod:`dpcore.owl.evaluation_arms`: its private evaluation (``docs/k_arm.md``).
"""

from .dpowl import DPOWL
from .dpwerm import DPWeightedERM
from .losses import huber_hinge, logistic
from .owl import (
    agreement_test,
    concordance,
    ipw_value,
    owl_weights,
    reference_values,
    treatment_accuracy,
)
from .plugin import PrivatePlugInRule
from .preprocessing import FeatureScaling
from .werm import solve_werm

__all__ = [
    "DPOWL",
    "DPWeightedERM",
    "FeatureScaling",
    "PrivatePlugInRule",
    "agreement_test",
    "concordance",
    "huber_hinge",
    "ipw_value",
    "logistic",
    "owl_weights",
    "reference_values",
    "solve_werm",
    "treatment_accuracy",
]
