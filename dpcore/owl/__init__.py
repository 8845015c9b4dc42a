"""Weighted ERM and outcome weighted learning (the DP-wERM paper), one concept per module.

- :mod:`dpcore.owl.werm`: the weighted objective and its batched Newton solver;
  :mod:`dpcore.owl.werm_release`: releasing its minimiser (sensitivity, noise sizes, objective
  perturbation); :mod:`dpcore.owl.dpwerm`: :class:`DPWeightedERM`.
- :mod:`dpcore.owl.dpowl`: :class:`DPOWL`; :mod:`dpcore.owl.owl`: the OWL weights and the rule
  metrics.
- :mod:`dpcore.owl.plugin`: :class:`PrivatePlugInRule`, a second private learner (per-arm linear
  outcome models from Laplace-noised sufficient statistics, :mod:`dpcore.owl.outcome_model`);
  :mod:`dpcore.owl.plugin_arms`: the same over K arms.
- :mod:`dpcore.owl.karm`: a rule over K > 2 arms (K - 1 DP-OWL rules against a reference,
  ``docs/k_arm.md``).
- :mod:`dpcore.owl.losses`, :mod:`dpcore.owl.preprocessing`: margin losses, public scaling.
- :mod:`dpcore.owl.paper`: the authors' constants and tuned-γ table.
- :mod:`dpcore.owl.simulate`: synthetic trials (the paper's, its variants, K arms, a twin).
- :mod:`dpcore.owl.experiments`: Monte-Carlo sweeps and their rules' evaluator on fresh test
  sets; :mod:`dpcore.owl.learners`: the private learners side by side;
  :mod:`dpcore.owl.tuning`: Algorithm 2.
- The rule file: :mod:`dpcore.owl.rule` (a released rule applied to patients),
  :mod:`dpcore.owl.rule_file` (its format and writer), :mod:`dpcore.owl.rule_read` (the reader),
  :mod:`dpcore.owl.rule_recipe` (applying it without dpcore), :mod:`dpcore.owl.release` (what
  a fitted learner's release records).
- Private evaluation by a public split: :mod:`dpcore.owl.evaluation` (IPW),
  :mod:`dpcore.owl.evaluation_aipw` (doubly robust), :mod:`dpcore.owl.evaluation_arms` (K
  arms), what they share (:mod:`dpcore.owl.evaluation_common`), their intervals
  (:mod:`dpcore.owl.evaluation_interval`), the average effect
  (:mod:`dpcore.owl.evaluation_effect`), the released result (:mod:`dpcore.owl.evaluation_result`)
  and the split and fit (:mod:`dpcore.owl.evaluation_fit`).
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
