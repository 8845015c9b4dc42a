"""The release of a treatment rule: the trial read with its public dictionary, split, fitted,
evaluated, recorded. What the page, ``dpcore fit``, the library and the rerun script run; the
release it returns is :class:`dpcore.release.result.Release`."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._estimator import WEIGHT_CLIPPING_MESSAGE, ClippingWarning
from ..data.dictionary import Dictionary
from ..data.trial import read_arms_trial, read_trial
from ..owl.dpowl import DPOWL
from ..owl.evaluation import evaluate_rule
from ..owl.evaluation_arms import evaluate_arms_rule
from ..owl.evaluation_fit import fit_and_evaluate, fit_and_evaluate_arms, public_split
from ..owl.karm import KArmOWL, arm_indices
from ..owl.owl import default_weight_bound
from ..owl.paper import default_gamma
from ..owl.plugin import PrivatePlugInRule
from ..owl.plugin_arms import PrivatePlugInArms
from ..owl.release import rule_from_dpowl, rule_from_karm, rule_from_plugin, rule_from_plugin_arms
from .plan import ReleasePlan
from .result import Release

__all__ = ["Release", "ReleaseError", "noise_source", "release"]


class ReleaseError(ValueError):
    """A release the dictionary, the file or the plan cannot make, with the fix in words;
    ``setting`` names the plan's setting to change, when one is to blame."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


def noise_source(plan: ReleasePlan) -> tuple[np.random.Generator, str]:
    """Where a release's noise comes from: (generator, Laplace sampler).

    Fresh entropy from the operating system and OpenDP's floating-point-safe sampler (when
    installed) for a private release; a plan with a seed (NOT PRIVATE) draws every noise,
    the evaluation's too, from numpy's generator with that seed, so it is reproduced exactly.
    """
    import importlib.util

    if plan.seed is not None:
        return np.random.default_rng(plan.seed), "numpy"
    installed = importlib.util.find_spec("opendp") is not None
    return np.random.default_rng(), "opendp" if installed else "numpy"


def release(data: Any, dictionary: Dictionary, plan: ReleasePlan, *, ledger: Any = None) -> Release:
    """The release of a treatment rule from a trial file and its public dictionary: over two
    arms, or over all of a trial's K > 2 arms when the dictionary lists them and ``plan.arms``
    does not pick two.

    Every row is kept (n is the file's row count, an incomplete row gets weight 0) and a level
    outside the dictionary's public list reads as the baseline. With ``ledger`` the release is
    recorded before it is returned: past the dataset's cap nothing is returned.

    Parameters
    ----------
    data : path, bytes or file
        The trial CSV.
    dictionary : Dictionary
        Its public data dictionary (:func:`dpcore.read_dictionary`); for two arms of a trial
        with more, ``plan.arms`` names them.
    plan : ReleasePlan
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release

    Raises
    ------
    ReleaseError
        What the dictionary lacks (a direction, the outcome's bounds, the design), or two arms
        it does not list.
    """
    d = dictionary
    if d.larger_is_better is None:
        raise ReleaseError(
            "the dictionary does not say which outcome is better: add the field "
            '"larger_is_better": true (or false) to it'
        )
    with warnings.catch_warnings():
        # Only the weight clipping is silenced (clipping to the public W is the method); a
        # privacy, noise or clipped-share warning reaches the analyst.
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        if plan.arms is None and d.arms is not None and len(d.arms) > 2:
            made = _release_arms(data, d, plan)
        else:
            made = _release_two(data, d, plan)
    return made.record(ledger) if ledger is not None else made


def _release_two(data: Any, d: Dictionary, plan: ReleasePlan) -> Release:
    """Two arms: a DP-OWL rule, and its private evaluation on the held-out patients."""
    if plan.reference is not None:
        raise ReleaseError("a reference arm is for a rule over more than two arms", "reference")
    if plan.arms is not None:
        if not d.arms:
            raise ReleaseError("two arms need the dictionary to list the treatment's arms", "arms")
        try:
            d = d.for_arms(*plan.arms)
        except ValueError as exc:
            raise ReleaseError(str(exc), "arms") from None
    trial = read_trial(
        data, **{**d.read_trial_kwargs(), "incomplete": "keep", "unknown_levels": "baseline"}
    )
    propensity = _propensity(plan.propensity, d, trial)
    if d.outcome_bounds is None:
        raise ReleaseError(
            f"the dictionary gives no public bounds for the outcome {d.outcome!r} "
            "(its column's field bounds)"
        )
    per_row = isinstance(propensity, str) or np.ndim(propensity) != 0
    p_min = plan.min_propensity if plan.min_propensity is not None else d.min_propensity
    if not per_row:
        p_min = min(float(propensity), 1.0 - float(propensity))
    if plan.learner == "plug-in":
        return _release_plugin(trial, d, plan, propensity, p_min if per_row else None)
    W = plan.weight_bound
    if W is None:
        if p_min is None:
            raise ReleaseError(
                "give the weight bound W (or the field min_propensity in the dictionary): "
                "the propensity is per row",
                "weight_bound",
            )
        W = default_weight_bound(d.outcome_bounds, p_min)
    fit_rows, _ = _split(plan, trial.n)  # n is public: the file's row count
    gamma = plan.gamma if plan.gamma is not None else default_gamma(plan.epsilon, len(fit_rows), W)
    kw = dict(
        gamma=gamma,
        weight_bound=W,
        C=plan.C,
        huber_h=plan.huber_h,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=bool(d.larger_is_better),
        perturbation=plan.perturbation,
    )
    rng, sampler = noise_source(plan)
    evaluation = None
    if plan.epsilon_eval is not None:
        B = trial.outcomes_for_fit(d.outcome_bounds, bool(d.larger_is_better))
        rule, evaluation, _ = fit_and_evaluate(
            trial.X,
            trial.A,
            B,
            propensity,
            epsilon_fit=plan.epsilon,
            epsilon_eval=plan.epsilon_eval,
            fit_share=plan.fit_share,
            split_seed=plan.split_seed,
            min_propensity=p_min if per_row else None,
            include=trial.complete,
            rng=rng,
            sampler=sampler,
            arms=(trial.arms[0], trial.arms[1]),
            evaluation=plan.evaluation,
            model_columns=_model_columns(plan.model_covariates, trial),
            **kw,
        )
    else:
        rule = DPOWL(epsilon=plan.epsilon, rng=rng, **kw).fit_trial(trial, propensity)
    rule_file = _rule_file(
        rule_from_dpowl,
        rule,
        trial,
        plan,
        d,
        n=len(fit_rows),
        gamma_source=_gamma_source(plan),
        propensity=float(propensity) if not per_row else _design_text(propensity),
    )
    kind = "AIPW " if plan.evaluation == "aipw" else ""
    how = " (objective perturbation)" if plan.perturbation == "objective" else ""
    mechanism = (
        "DP-OWL rule" + how + (f" + private {kind}evaluation" if evaluation is not None else "")
    )
    return Release(
        rule_file, evaluation, trial, plan, mechanism, diagnostics=dict(rule.diagnostics_)
    )


def _release_plugin(
    trial: Any, d: Dictionary, plan: ReleasePlan, propensity: Any, p_min: float | None
) -> Release:
    """Two arms, the private plug-in rule (:class:`dpcore.PrivatePlugInRule`): per-arm outcome
    models from noisy sufficient statistics on the fit part, and the rule's private evaluation
    on the held-out patients as for DP-OWL."""
    fit_rows, eval_rows = _split(plan, trial.n)  # n is public: the file's row count
    evaluated = eval_rows is not None
    rng, sampler = noise_source(plan)
    columns = _model_columns(plan.model_covariates, trial)
    model = PrivatePlugInRule(
        epsilon=plan.epsilon,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=bool(d.larger_is_better),
        columns=columns,
        sampler=sampler,
        rng=rng,
    ).fit_trial(_rows(trial, fit_rows))
    evaluation = None
    if evaluated:
        if isinstance(propensity, str):
            raise ReleaseError(
                "the private evaluation needs a known randomization or a propensity column",
                "propensity",
            )
        held_out = pd.DataFrame(trial.X[eval_rows], columns=list(trial.covariates))
        recommend = np.where(model.decision_function(held_out) > 0, 1.0, -1.0)
        p = propensity if np.ndim(propensity) == 0 else np.asarray(propensity)[eval_rows]
        evaluation = evaluate_rule(
            recommend,
            trial.A[eval_rows],
            trial.B[eval_rows],
            p,
            outcome_bounds=d.outcome_bounds,
            larger_is_better=bool(d.larger_is_better),
            min_propensity=p_min,
            epsilon=plan.epsilon_eval,
            include=None if trial.complete is None else np.asarray(trial.complete)[eval_rows],
            rng=rng,
            sampler=sampler,
            arms=(trial.arms[0], trial.arms[1]),
        )
    per_row = isinstance(propensity, str) or np.ndim(propensity) != 0
    rule_file = _rule_file(
        rule_from_plugin,
        model,
        trial,
        plan,
        d,
        n=len(fit_rows),
        propensity=_design_text(propensity) if per_row else float(propensity),
    )
    mechanism = "Private plug-in rule" + (" + private evaluation" if evaluated else "")
    return Release(rule_file, evaluation, trial, plan, mechanism)


def _rows(trial: Any, rows: np.ndarray) -> Any:
    """The trial restricted to some rows (the fit's part of a public split)."""
    cut = {
        k: (None if getattr(trial, k) is None else np.asarray(getattr(trial, k))[rows])
        for k in ("X", "A", "B", "propensity", "rows", "complete", "covariates_complete")
    }
    return replace(trial, **cut)


def _release_arms(data: Any, d: Dictionary, plan: ReleasePlan) -> Release:
    """All K > 2 arms: K - 1 DP-OWL rules against a reference (:class:`dpcore.owl.karm.KArmOWL`),
    and their private evaluation on the held-out patients."""
    if d.arm_probabilities is None:
        raise ReleaseError(
            f"the dictionary lists {len(d.arms or ())} arms but not their design "
            'probabilities: add "arm_probabilities" (one per arm, in the levels\' '
            "order), or compare two of the arms",
            "arms",
        )
    if d.outcome_bounds is None:
        raise ReleaseError(f"the dictionary gives no public bounds for the outcome {d.outcome!r}")
    trial = read_arms_trial(data, dictionary=d, unknown_levels="baseline")
    if plan.learner == "plug-in":
        return _release_plugin_arms(trial, d, plan)
    kw = dict(
        gamma=plan.gamma if plan.gamma is not None else "paper",
        weight_bound=plan.weight_bound,
        C=plan.C,
        huber_h=plan.huber_h,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=bool(d.larger_is_better),
        reference=plan.reference if plan.reference is not None else d.extra.get("reference"),
    )
    rng, sampler = noise_source(plan)
    evaluation = None
    try:
        if plan.epsilon_eval is not None:
            rule, evaluation, (fit_rows, _) = fit_and_evaluate_arms(
                trial,
                epsilon_fit=plan.epsilon,
                epsilon_eval=plan.epsilon_eval,
                fit_share=plan.fit_share,
                split_seed=plan.split_seed,
                rng=rng,
                sampler=sampler,
                **kw,
            )
            n = len(fit_rows)
        else:
            rule, n = KArmOWL(epsilon=plan.epsilon, rng=rng, **kw).fit_trial(trial), trial.n
    except ValueError as exc:
        raise ReleaseError(str(exc)) from None
    rule_file = _rule_file(rule_from_karm, rule, trial, plan, n=n, gamma_source=_gamma_source(plan))
    mechanism = f"K-arm DP-OWL rule, {len(trial.arms)} arms" + (
        " + private evaluation" if evaluation is not None else ""
    )
    return Release(rule_file, evaluation, trial, plan, mechanism)


def _release_plugin_arms(trial: Any, d: Dictionary, plan: ReleasePlan) -> Release:
    """All K > 2 arms with the private plug-in rule: every arm's outcome model in one release
    at ε (:class:`dpcore.owl.plugin_arms.PrivatePlugInArms`), and the rule's private evaluation
    on the held-out patients as for K-arm DP-OWL."""
    fit_rows, eval_rows = _split(plan, trial.n)
    evaluated = eval_rows is not None
    rng, sampler = noise_source(plan)
    model = PrivatePlugInArms(
        epsilon=plan.epsilon,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=bool(d.larger_is_better),
        reference=plan.reference if plan.reference is not None else d.extra.get("reference"),
        columns=_model_columns(plan.model_covariates, trial),
        sampler=sampler,
        rng=rng,
    )
    try:
        model.fit_trial(_rows(trial, fit_rows))
    except ValueError as exc:
        raise ReleaseError(str(exc)) from None
    evaluation = None
    if evaluated:
        rows = pd.DataFrame(trial.X[eval_rows], columns=list(trial.covariates))
        codes = arm_indices(model.recommend(rows), trial.arms)
        evaluation = evaluate_arms_rule(
            codes,
            np.asarray(trial.A, dtype=int)[eval_rows],
            np.asarray(trial.B)[eval_rows],
            trial.arm_probabilities,
            outcome_bounds=d.outcome_bounds,
            epsilon=plan.epsilon_eval,
            arms=trial.arms,
            larger_is_better=bool(d.larger_is_better),
            include=None if trial.complete is None else np.asarray(trial.complete)[eval_rows],
            rng=rng,
            sampler=sampler,
        )
    rule_file = _rule_file(rule_from_plugin_arms, model, trial, plan, n=len(fit_rows))
    mechanism = f"Private plug-in rule, {len(trial.arms)} arms" + (
        " + private evaluation" if evaluated else ""
    )
    return Release(rule_file, evaluation, trial, plan, mechanism)


def _split(plan: ReleasePlan, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows the rule is fitted on and the held-out rows (None without an evaluation): the
    plan's public seeded split of the public n rows."""
    if plan.epsilon_eval is None:
        return np.arange(n), None
    return public_split(n, plan.fit_share, plan.split_seed)


def _rule_file(
    make: Any,
    model: Any,
    trial: Any,
    plan: ReleasePlan,
    d: Dictionary | None = None,
    **settings: Any,
) -> Any:
    """The rule ``make`` (:func:`dpcore.owl.release.rule_from_dpowl` or a sibling) records of a
    fitted model, with the release's public ``settings``, then the plan's seed (a seeded rule
    file says NOT PRIVATE itself, so the plan's reasons are not given twice) and the two arms
    the plan compares of the trial's (``d``: its dictionary)."""
    if plan.seed is not None:
        settings["seed"] = plan.seed
    if plan.arms is not None and d is not None:
        settings["compared_arms"] = [str(a) for a in trial.arms]
        settings["arms_in_trial"] = [str(a) for a in d.extra["all_arms"]]
    reasons = [] if plan.seed is not None else list(plan.not_private)
    return make(model, trial, not_private=reasons, **settings)


def _propensity(given: Any, d: Dictionary, trial: Any) -> Any:
    """P(treated): the plan's, else the dictionary's randomization, else the file's column."""
    if given == "column" or (given is None and d.propensity is None):
        if trial.propensity is None:
            raise ReleaseError(
                "the dictionary gives no randomization probability (field propensity) and "
                "the file has no propensity column (a column with role propensity)",
                "propensity",
            )
        return trial.propensity
    if given is None:
        return d.propensity if trial.propensity is None else trial.propensity
    return given


def _gamma_source(plan: ReleasePlan) -> str:
    if plan.gamma is None:
        return "the paper's table scaled by W"
    return plan.gamma_source or "given"


def _design_text(propensity: Any) -> str:
    return "estimated (logistic)" if isinstance(propensity, str) else "per row"


def _model_columns(names: tuple[str, ...], trial: Any) -> list[int] | None:
    """Positions in X of the AIPW outcome model's covariates (a categorical name brings its
    one-hot columns); None for all."""
    if not names:
        return None
    cols: list[int] = []
    for name in names:
        hits = [i for i, c in enumerate(trial.covariates) if c == name or c.startswith(name + "=")]
        if not hits:
            raise ReleaseError(
                f"the outcome model's covariate {name!r} is not a covariate of the rule "
                f"(covariates: {', '.join(trial.covariates)})",
                "model_covariates",
            )
        cols += hits
    return sorted(set(cols))
