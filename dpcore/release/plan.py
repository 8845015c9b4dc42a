"""A release's public settings: everything it depends on but the data and the noise."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_epsilon
from ..owl.dpwerm import PERTURBATIONS
from ..owl.evaluation_fit import EVALUATIONS, ledger_parts
from ..privacy.composition import parallel_cost

__all__ = ["EVALUATIONS", "LEARNERS", "ReleasePlan"]

#: Which private learner fits a two-arm rule: the paper's DP-OWL (output perturbation of a
#: weighted Huber-hinge ERM) or the private plug-in rule (per-arm linear outcome models from
#: noisy sufficient statistics, :class:`dpcore.PrivatePlugInRule`).
LEARNERS = ("dp-owl", "plug-in")


@dataclass(frozen=True)
class ReleasePlan:
    """The public settings of one release of a two-arm rule.

    Parameters
    ----------
    epsilon : float
        The rule's budget (with an AIPW evaluation, the rule and its outcome model's).
    learner : {"dp-owl", "plug-in"}
        The private learner of a two-arm rule (:data:`LEARNERS`). The plug-in rule has no γ,
        W, C or h; its ``model_covariates`` are its outcome models' covariates.
    perturbation : {"output", "objective"}
        How DP-OWL's release is noised: the paper's output perturbation, or objective
        perturbation (docs/objective.md; known randomization or propensity column only).
    epsilon_eval : float, optional
        A private evaluation on the held-out part of the patients at this budget; None for
        none. The parts are disjoint, so the release costs the larger (:attr:`cost`).
    fit_share : float
        The share of the patients the rule is fitted on, by a public seeded split.
    evaluation : {"ipw", "aipw"}
        How the evaluation estimates values.
    gamma : float, optional
        The regularization; None takes the paper's table scaled by W.
    gamma_source : str, optional
        Where a given γ came from, in words, for the rule file ("tuned on a public proxy
        D0"); None says "given".
    weight_bound : float, optional
        W; None takes (hi - lo) / min propensity.
    C : float or "worst-case"
        The propensity model's constant (0 for a known randomization, "worst-case" with an
        estimated propensity).
    huber_h : float
        The Huber hinge's width.
    propensity : float, "column", "logistic" or None
        The design: a known P(treated), the file's per-row propensity column, a propensity
        estimated by logistic regression on the same patients (C must be "worst-case"; no
        evaluation), or None for the dictionary's randomization (else its propensity column).
    min_propensity : float, optional
        The public smallest propensity of a per-row design; None takes the dictionary's.
    split_seed : int
        The public seed of the split between the fit and the evaluation.
    model_covariates : tuple of str
        The outcome model's covariates, the AIPW evaluation's or the plug-in rule's (a
        categorical name brings its indicators); empty for every covariate of the rule.
    arms : (treated, control), optional
        Two arms of a trial with more (the other arms' rows at weight 0). Without them, a
        dictionary listing more than two arms gives a rule over all of them.
    reference : str, optional
        A rule over K arms: the arm every other is compared with (default: the
        dictionary's ``reference``, else its first arm).
    seed : int, optional
        Reproducible noise: the release then has no guarantee, so it needs ``not_private``.
    not_private : tuple of str
        Why the release has no guarantee (it is titled NOT PRIVATE and the dataset's total
        becomes infinite); empty for a private release.
    """

    epsilon: float
    learner: str = "dp-owl"
    perturbation: str = "output"
    epsilon_eval: float | None = None
    fit_share: float = 0.8
    evaluation: str = "ipw"
    gamma: float | None = None
    gamma_source: str | None = None
    weight_bound: float | None = None
    C: float | str = 0.0
    huber_h: float = 0.5
    propensity: float | str | None = None
    min_propensity: float | None = None
    split_seed: int = 0
    model_covariates: tuple[str, ...] = ()
    arms: tuple[str, str] | None = None
    reference: str | None = None
    seed: int | None = None
    not_private: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.epsilon_eval is not None:
            check_epsilon(self.epsilon_eval, "epsilon_eval")
            if not 0.0 < self.fit_share < 1.0:
                raise ValueError(
                    "fit_share must be between 0 and 1 (the share of patients the rule is "
                    f"fitted on), got {self.fit_share:g}"
                )
        if self.evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation must be one of {EVALUATIONS}, got {self.evaluation!r}")
        if self.evaluation != "ipw" and self.epsilon_eval is None:
            raise ValueError(f"evaluation={self.evaluation!r} needs epsilon_eval")
        if self.perturbation not in PERTURBATIONS:
            raise ValueError(
                f"perturbation must be one of {PERTURBATIONS}, got {self.perturbation!r}"
            )
        if self.perturbation == "objective" and (
            self.learner != "dp-owl" or self.propensity == "logistic" or self.C != 0.0
        ):
            raise ValueError(
                "objective perturbation is DP-OWL's, with known weights: learner='dp-owl', "
                "a known randomization or a propensity column, C = 0"
            )
        if self.learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS}, got {self.learner!r}")
        if self.learner == "plug-in":
            dp_owl_only = {
                "gamma": self.gamma is not None,
                "weight_bound": self.weight_bound is not None,
                "C": self.C != 0.0,
                "huber_h": self.huber_h != 0.5,
                "evaluation='aipw'": self.evaluation != "ipw",
                "propensity='logistic'": self.propensity == "logistic",
            }
            given = [k for k, hit in dp_owl_only.items() if hit]
            if given:
                raise ValueError(
                    f"{', '.join(given)}: DP-OWL's settings; the plug-in rule has none (its "
                    "outcome models need no γ, W or C, and a randomized trial's propensity "
                    "only for the evaluation)"
                )
        elif self.model_covariates and self.evaluation != "aipw":
            raise ValueError(
                "model_covariates are an outcome model's: evaluation='aipw', or learner='plug-in'"
            )
        if self.propensity == "logistic" and (self.C != "worst-case" or self.epsilon_eval):
            raise ValueError(
                "an estimated propensity needs C='worst-case' (pure ε-DP) and no evaluation"
            )
        if isinstance(self.propensity, str) and self.propensity not in ("column", "logistic"):
            raise ValueError(
                "propensity must be a probability, 'column', 'logistic' or None, got "
                f"{self.propensity!r}"
            )
        if (
            self.propensity is not None
            and not isinstance(self.propensity, str)
            and not 0.0 < float(self.propensity) < 1.0
        ):
            raise ValueError(
                f"propensity must be in (0, 1) (P(treated) of a known randomization), got "
                f"{self.propensity!r}"
            )
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))
        ):
            raise TypeError(
                f"seed must be an int (it is written in the rule file and the rerun script), "
                f"got {self.seed!r}"
            )
        if self.seed is not None and not self.not_private:
            raise ValueError(
                "a seed makes the noise reproducible, so the release has no privacy "
                "guarantee: say why in not_private (it is then titled NOT PRIVATE and the "
                "dataset's total becomes inf), or leave the seed out"
            )

    @property
    def parts(self) -> dict[str, float]:
        """The release's disjoint parts and their ε, as the ledger records them."""
        if self.epsilon_eval is None:
            return {"release": self.epsilon}
        return ledger_parts(self.epsilon, self.epsilon_eval, self.evaluation)

    @property
    def cost(self) -> float:
        """What the release costs its dataset (parallel composition of its parts)."""
        return parallel_cost(self.parts)
