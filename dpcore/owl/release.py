"""A fitted learner's released rule, as its rule file records it: the rule and the release.

:func:`rule_from_dpowl`, :func:`rule_from_plugin`, :func:`rule_from_karm` and
:func:`rule_from_plugin_arms` turn a fitted learner and the :class:`dpcore.Trial` it saw into a
:class:`dpcore.owl.rule.Rule` (or :class:`dpcore.owl.rule.ArmsRule` over K arms) whose
``settings`` are the release's public settings: the title, whether it is private and why not,
ε and δ, the learner's public settings (γ and W for DP-OWL, the ridge for the plug-in rule), n,
the outcome's bounds and direction, and the mechanism in words. A release is NOT PRIVATE, and
its file says so, when a bound was read from the data, when the noise is seeded, when ε is
infinite or for every reason the caller gives. The settings never hold a value estimate
computed from the data without noise (docs/architecture.md, privacy rule 7).

The rule file's other names are importable from here too, as they always were (rerun scripts
written by earlier versions import ``write_rule`` from this module): its format and writer
(:mod:`dpcore.owl.rule_file`), the rule applied to patients (:mod:`dpcore.owl.rule`) and the
reader (:mod:`dpcore.owl.rule_read`).

"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.labels import plain_label
from ..privacy.composition import void_reasons
from ..privacy.mechanisms import (
    OBJECTIVE_PERTURBATION,
    OUTPUT_PERTURBATION,
    PLUG_IN_STATISTICS,
    Mechanism,
)
from .rule import ArmsRule, Patients, Rule
from .rule_file import FORMAT, K_FORMAT, RuleFileError, rule_to_dict, write_rule
from .rule_read import RuleSource, load_rule

if TYPE_CHECKING:
    from ..data.trial import Trial
    from .dpowl import DPOWL
    from .plugin import PrivatePlugInRule

__all__ = [
    "FORMAT",
    "K_FORMAT",
    "ArmsRule",
    "Patients",
    "Rule",
    "RuleFileError",
    "RuleSource",
    "dpowl_mechanism",
    "load_rule",
    "rule_from_dpowl",
    "rule_from_karm",
    "rule_from_plugin_arms",
    "rule_from_plugin",
    "rule_to_dict",
    "write_rule",
]


def rule_from_dpowl(
    model: DPOWL, trial: Trial, *, not_private: Iterable[str] = (), **settings: Any
) -> Rule:
    """A :class:`Rule` from a fitted :class:`dpcore.DPOWL` and the :class:`dpcore.Trial` it saw.

    ``settings`` are the public settings to record (see :func:`rule_to_dict`); ε, γ, W, C,
    the sensitivity and n are taken from the model and the trial unless given.

    The file says whether the release is private, as the dashboard's does: ``title``
    ("Private treatment rule (ε = …)" or "NOT PRIVATE treatment rule (ε = …): … void the
    guarantee"), ``private`` and ``not_private_because``. It is NOT PRIVATE when the model's
    feature bounds were read from the data, when ``settings`` has a ``seed`` (seeded noise
    can be removed by anyone with the seed), when ε is infinite, or for every reason given
    in ``not_private``.
    """
    model._check_fitted()
    mechanism = dpowl_mechanism(model)
    learner = {
        "epsilon": model.epsilon,
        "delta": mechanism.delta,
        "gamma": getattr(model, "gamma_", model.gamma),
        "W": model.weight_bound_,
        "C": model.C,
        "sensitivity": model.sensitivity_,
        "n": int(trial.n),
        "outcome_bounds": None if model.outcome_bounds is None else list(model.outcome_bounds),
        "larger_is_better": bool(model.larger_is_better_),
        "mechanism": mechanism.sentence(),
    }
    recorded = _recorded(model, trial, not_private, settings, learner, mechanism.name)
    return _linear_rule(model, trial, model.scaling_.lower, model.scaling_.upper, recorded)


def dpowl_mechanism(model: DPOWL) -> Mechanism:
    """The mechanism a DP-OWL release used, by its ``perturbation`` ("output" if unset)."""
    perturbation = getattr(model, "perturbation", "output")
    return OBJECTIVE_PERTURBATION if perturbation == "objective" else OUTPUT_PERTURBATION


def rule_from_plugin(
    model: PrivatePlugInRule, trial: Trial, *, not_private: Iterable[str] = (), **settings: Any
) -> Rule:
    """A :class:`Rule` from a fitted :class:`dpcore.PrivatePlugInRule` and the trial it saw.

    The plug-in rule's score is linear in the covariates, so its file is a rule file like
    DP-OWL's (:func:`rule_from_dpowl`): ``load_rule`` reads it and ``Rule.recommend`` applies
    it. Its ``mechanism`` names the plug-in rule
    (:data:`dpcore.privacy.mechanisms.PLUG_IN_STATISTICS`), and its settings are the plug-in's
    public ones: ε, δ, the ridge, the statistics' L1 sensitivity, n, the outcome bounds and
    direction, and the covariates the outcome models use. It is NOT PRIVATE when a bound
    (features or outcome) was read from the data, when ``settings`` has a ``seed``, when ε is
    infinite, or for every reason given in ``not_private``.
    """
    model._check_fitted()
    learner = _plugin_settings(
        model,
        trial,
        "private plug-in rule (per-arm linear outcome models)",
        PLUG_IN_STATISTICS.sentence(),
    )
    recorded = _recorded(model, trial, not_private, settings, learner, PLUG_IN_STATISTICS.name)
    return _linear_rule(model, trial, *model.feature_bounds_, recorded)


def rule_from_karm(model, trial, *, not_private=(), **settings):
    """An :class:`ArmsRule` from a fitted :class:`dpcore.owl.karm.KArmOWL` and its trial.

    As :func:`rule_from_dpowl`: the file says whether the release is private (``title``,
    ``private``, ``not_private_because``) and holds only public settings and the released
    scores.
    """
    model._check_fitted()
    learner = {
        "epsilon": model.epsilon,
        "epsilon_per_rule": model.epsilons_[0],
        "delta": OUTPUT_PERTURBATION.delta,
        "gamma": list(model.gammas_),
        "W": list(model.weight_bounds_),
        "C": model.C,
        "sensitivity": list(model.sensitivities_),
        "n": int(trial.n),
        "arm_probabilities": list(model.arm_probabilities_),
        "outcome_bounds": list(model.outcome_bounds),
        "larger_is_better": bool(model.larger_is_better_),
        "mechanism": OUTPUT_PERTURBATION.sentence(
            f"K-arm DP-OWL: {len(model.rules_)} Huber-hinge weighted ERM rules, each "
            f"arm against '{model.reference_}' at ε/{len(model.rules_)}, output "
            "perturbation, basic composition"
        ),
    }
    what = f"treatment rule over {len(model.arms_)} arms"
    computed_as = "K-arm DP-OWL, output perturbation"
    recorded = _recorded(model, trial, not_private, settings, learner, computed_as, what)
    scaling = model.scaling_
    return _arms_rule(model, trial, scaling.lower, scaling.upper, recorded)


def rule_from_plugin_arms(model, trial, *, not_private=(), **settings):
    """An :class:`ArmsRule` from a fitted :class:`dpcore.owl.plugin_arms.PrivatePlugInArms`:
    one score per compared arm against the reference, released together at ε (one release of
    every arm's statistics, no split of ε)."""
    model._check_fitted()
    probabilities = trial.arm_probabilities
    learner = _plugin_settings(
        model,
        trial,
        "private plug-in rule over every arm (one linear outcome model per arm)",
        PLUG_IN_STATISTICS.sentence(
            f"the private plug-in rule over {len(model.arms_)} arms: every arm's statistics "
            "in one release at ε (a patient is in one arm's block)"
        ),
        arm_probabilities=None if probabilities is None else list(probabilities),
    )
    what = f"treatment rule over {len(model.arms_)} arms"
    recorded = _recorded(
        model, trial, not_private, settings, learner, PLUG_IN_STATISTICS.name, what
    )
    lower, upper = model.feature_bounds_
    return _arms_rule(model, trial, lower, upper, recorded)


def _plugin_settings(model, trial, learner, mechanism, **arms):
    """The public settings of a fitted plug-in rule and its ``mechanism`` in words (two arms or
    K; ``arms`` holds the K-arm design's probabilities), in the order its rule file lists them."""
    return {
        "learner": learner,
        "epsilon": model.epsilon,
        "delta": PLUG_IN_STATISTICS.delta,
        "ridge": model.ridge,
        "sensitivity_l1": model.sensitivity_,
        "n": int(trial.n),
        **arms,
        "outcome_bounds": list(model.outcome_bounds_),
        "larger_is_better": bool(model.larger_is_better_),
        "model_covariates": [str(trial.covariates[j]) for j in model.columns_],
        "mechanism": mechanism,
    }


def _recorded(model, trial, not_private, settings, learner, computed_as, what="treatment rule"):
    """The settings a rule file records: the title and whether the release is private, the
    trial's treatment and outcome, the ``learner``'s public settings and its mechanism in words,
    then the caller's ``settings``. A release without a guarantee says so in every one of those
    fields, whatever ``settings`` holds (its mechanism: NOT PRIVATE, computed as
    ``computed_as``)."""
    title, void = _title(model, not_private, settings, what)
    base = {
        "title": title,
        "private": not void,
        "not_private_because": void,
        "treatment": trial.treatment,
        "outcome": trial.outcome,
        **learner,
    }
    merged = {**base, **settings}
    if void:  # no setting passed in can make a release without a guarantee look private
        merged.update(
            title=title,
            private=False,
            not_private_because=void,
            mechanism="NOT PRIVATE: " + "; ".join(void) + " void the guarantee. "
            f"Computed as {computed_as}",
        )
    return {k: _jsonable(v) for k, v in merged.items()}


def _title(model, not_private, settings, what):
    """The release's title and the reasons (if any) it has no guarantee."""
    # the learner's own reasons (its bounds, ε and noise source), then the seed the release's
    # noise was drawn from where the caller made the learner's generator from one
    seeded = void_reasons(rng=settings.get("seed"))
    void = list(dict.fromkeys([*map(str, not_private), *model.not_private_because_, *seeded]))
    if void:
        return (
            f"NOT PRIVATE {what} (ε = {float(model.epsilon):g}): "
            f"{'; '.join(void)} void the guarantee"
        ), void
    return f"Private {what} (ε = {float(model.epsilon):g})", void


def _linear_rule(model, trial, lower, upper, settings):
    """The :class:`Rule` of a fitted two-arm model: its linear score, the trial's treated arm
    against its control."""
    treated, control = trial.arms[0], trial.arms[1]
    return _rule(trial, lower, upper, model.intercept_, model.coef_, treated, control, settings)


def _rule(trial, lower, upper, intercept, coef, treated, control, settings):
    """The :class:`Rule` of one released linear score in the covariates' original units, that
    recommends ``treated`` over ``control`` where it is positive."""
    return Rule(
        covariates=tuple(trial.covariates),
        intercept=float(intercept),
        coef=tuple(map(float, coef)),
        lower=tuple(map(float, lower)),
        upper=tuple(map(float, upper)),
        treated=plain_label(treated),
        control=plain_label(control),
        categories={c: [plain_label(v) for v in lv] for c, lv in trial.categories.items()},
        settings=settings,
        fill=dict(getattr(trial, "fills", {})),
    )


def _arms_rule(model, trial, lower, upper, settings):
    """The :class:`ArmsRule` of a fitted K-arm model: one linear score per compared arm
    against the reference, in the covariates' original units."""
    rules = tuple(
        _rule(trial, lower, upper, b, w, arm, model.reference_, {})
        for arm, w, b in zip(model.compared_, model.coef_, model.intercept_)
    )
    return ArmsRule(
        rules=rules,
        arms=tuple(plain_label(a) for a in model.arms_),
        reference=plain_label(model.reference_),
        settings=settings,
    )


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v
