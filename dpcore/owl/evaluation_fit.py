"""Fit a rule on one part of a trial and evaluate it privately on the other: the public split.

The trial's rows are split by a public seeded permutation (:func:`public_split`, default
80/20): the rule is fitted on the first part at ε_fit, and evaluated on the second at ε_eval
(:func:`dpcore.owl.evaluation.evaluate_rule`, IPW; :func:`dpcore.owl.evaluation_aipw.
evaluate_rule_aipw`, doubly robust; :func:`dpcore.owl.evaluation_arms.evaluate_arms_rule` over K
arms). Each patient is in one part only, so by parallel composition the release costs the
dataset max(ε_fit, ε_eval) (:func:`dpcore.privacy.composition.parallel_cost`): a row of the
evaluation part is not seen by the fit, and a row of the fit part reaches the evaluation only
through the released rule, which is post-processing.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import WEIGHT_CLIPPING_MESSAGE, ClippingWarning
from .._validation import check_epsilon, check_real
from ..privacy.composition import record_release, void_reasons
from .dpowl import DPOWL
from .evaluation import evaluate_rule
from .evaluation_aipw import evaluate_rule_aipw
from .evaluation_arms import evaluate_arms_rule
from .evaluation_result import ArmsEvaluation, PrivateEvaluation
from .karm import KArmOWL, arm_indices
from .outcome_model import fit_outcome_model
from .rule_learner import outcome_direction

if TYPE_CHECKING:
    from ..privacy.accounting import PrivacyLedger

__all__ = [
    "EVALUATIONS",
    "fit_and_evaluate",
    "fit_and_evaluate_arms",
    "ledger_parts",
    "public_split",
]

#: How a private evaluation estimates the rule's value: inverse-probability weighting (the
#: default) or doubly robust, with a private outcome model.
EVALUATIONS = ("ipw", "aipw")


def ledger_parts(epsilon_fit: float, epsilon_eval: float, evaluation: str = "ipw") -> dict:
    """A fit-and-evaluate release's two disjoint parts and their ε, named as the ledger
    records them (an AIPW fit also releases the outcome model)."""
    fit = "fit (rule + outcome model)" if evaluation == "aipw" else "fit"
    return {fit: epsilon_fit, "evaluation": epsilon_eval}


def public_split(n, fit_share=0.8, seed=0):
    """Row positions of the fit part and of the evaluation part: a public seeded permutation.

    It depends on the public n, the share and the seed only, never on the data.

    Returns
    -------
    (fit_rows, eval_rows) : two sorted int arrays that partition ``range(n)``
    """
    n = int(check_real(n, "n", low=1.0))
    fit_share = check_real(fit_share, "fit_share", low=0.0, high=1.0)
    n_fit = int(round(fit_share * n))
    if not 0 < n_fit < n:
        raise ValueError(f"a split of {n} rows with fit_share={fit_share:g} leaves a part empty")
    perm = np.random.default_rng([int(seed), n]).permutation(n)
    return np.sort(perm[:n_fit]), np.sort(perm[n_fit:])


def fit_and_evaluate(
    X: ArrayLike,
    A: ArrayLike,
    B: ArrayLike,
    propensity: float | ArrayLike,
    *,
    epsilon_fit: float,
    epsilon_eval: float,
    fit_share: float = 0.8,
    split_seed: int = 0,
    min_propensity: float | None = None,
    include: ArrayLike | None = None,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    sampler: str = "numpy",
    arms: tuple[Any, Any] = (None, None),
    ledger: PrivacyLedger | None = None,
    evaluation: str = "ipw",
    model_share: float = 0.25,
    model_columns: ArrayLike | None = None,
    **dpowl: Any,
) -> tuple[DPOWL, PrivateEvaluation, tuple[np.ndarray, np.ndarray]]:
    """Fit DP-OWL on the public split's first part and evaluate it privately on the second.

    ``dpowl`` are :class:`dpcore.DPOWL`'s keyword arguments (gamma, weight_bound, C,
    feature_bounds, outcome_bounds, larger_is_better, huber_h); the fit draws its noise from
    ``rng``. The dataset's cost is :func:`dpcore.privacy.composition.parallel_cost` of the two parts.

    ``evaluation`` is "ipw" (the default: :func:`evaluate_rule`) or "aipw" (doubly robust:
    :func:`dpcore.owl.evaluation_aipw.evaluate_rule_aipw`). With "aipw" a private outcome
    model (:func:`dpcore.owl.outcome_model.fit_outcome_model`, on the covariates
    ``model_columns``, default all, needing public ``feature_bounds``) is fitted on the fit
    part at ``model_share`` ε_fit and the rule at (1 - ``model_share``) ε_fit: the two compose
    sequentially on the fit part's rows, which still cost ε_fit, so the dataset's cost is the
    same max(ε_fit, ε_eval) as IPW's.

    ``ledger`` (a :class:`dpcore.PrivacyLedger`, optional) records the release as two parallel
    parts (:func:`ledger_parts`: ``"fit"``, or ``"fit (rule + outcome model)"`` with AIPW, and
    ``"evaluation"``) that cost the larger of their ε, once both are computed and before
    anything is returned; past the cap it raises
    :class:`dpcore.BudgetExceededError` and returns nothing. A release without a guarantee
    (feature bounds from the data, an infinite ε, an int seed as ``rng``) is recorded as such
    (total ∞).

    Only the weight-clipping warning (:class:`dpcore.ClippingWarning`, "some OWL weights ...
    exceed the weight bound") is silenced, because clipping to the public W is part of the
    method and its share is an analyst-only diagnostic; every other warning, a
    :class:`dpcore.PrivacyWarning` above all, reaches the caller.

    Returns
    -------
    (model, evaluation, (fit_rows, eval_rows))
    """
    if isinstance(propensity, str):
        raise ValueError(
            "the private evaluation needs a known randomization or a per-row "
            "propensity column, not an estimated propensity"
        )
    if evaluation not in EVALUATIONS:
        raise ValueError(f"evaluation must be one of {EVALUATIONS}, got {evaluation!r}")
    aipw = evaluation == "aipw"
    epsilon_fit = check_epsilon(epsilon_fit, "epsilon_fit")
    parts = ledger_parts(epsilon_fit, epsilon_eval, evaluation)
    if aipw:
        model_share = check_real(model_share, "model_share", low=0.0, high=1.0)
        if model_share == 1.0 or dpowl.get("feature_bounds") is None:
            raise ValueError(
                "the AIPW evaluation needs model_share below 1 and public "
                "feature_bounds (its outcome model scales the covariates by them)"
            )
    X, A, B = (np.asarray(v, dtype=float) for v in (X, A, B))
    fit_rows, eval_rows = public_split(len(A), fit_share, split_seed)
    part = lambda v, rows: v if np.ndim(v) == 0 else np.asarray(v)[rows]  # noqa: E731
    seed = rng  # what the noise is drawn from, before it becomes a Generator
    rng = np.random.default_rng(rng)
    eps_rule = epsilon_fit * (1.0 - model_share) if aipw else epsilon_fit
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        model = DPOWL(epsilon=eps_rule, rng=rng, **dpowl).fit(
            X[fit_rows], A[fit_rows], B[fit_rows], part(propensity, fit_rows)
        )
    kw = dict(
        outcome_bounds=dpowl["outcome_bounds"],
        larger_is_better=model.larger_is_better_,
        min_propensity=min_propensity,
        epsilon=epsilon_eval,
        include=None if include is None else np.asarray(include)[eval_rows],
        level=level,
        rng=rng,
        sampler=sampler,
        arms=arms,
    )
    recommend = model.predict(X[eval_rows])
    if aipw:
        outcome = fit_outcome_model(
            X[fit_rows],
            A[fit_rows],
            B[fit_rows],
            feature_bounds=dpowl["feature_bounds"],
            outcome_bounds=dpowl["outcome_bounds"],
            epsilon=epsilon_fit * model_share,
            columns=model_columns,
            include=None if include is None else np.asarray(include)[fit_rows],
            rng=rng,
            sampler=sampler,
        )
        centre = float(np.mean(outcome.predict(np.mean(dpowl["feature_bounds"], axis=0)[None])))
        evaluation = evaluate_rule_aipw(
            recommend,
            A[eval_rows],
            B[eval_rows],
            part(propensity, eval_rows),
            outcome.predict(X[eval_rows]),
            centre=centre,
            model=outcome.to_dict(),
            **kw,
        )
    else:
        evaluation = evaluate_rule(
            recommend, A[eval_rows], B[eval_rows], part(propensity, eval_rows), **kw
        )
    if ledger is not None:
        _record(
            ledger,
            "DP-OWL rule + private " + ("AIPW " if aipw else "") + "evaluation",
            parts,
            model,
            seed,
        )
    return model, evaluation, (fit_rows, eval_rows)


def fit_and_evaluate_arms(
    trial: Any,
    *,
    epsilon_fit,
    epsilon_eval,
    fit_share=0.8,
    split_seed=0,
    level=0.95,
    rng=None,
    sampler="numpy",
    ledger=None,
    **karm,
) -> tuple[KArmOWL, ArmsEvaluation, tuple[np.ndarray, np.ndarray]]:
    """Fit :class:`dpcore.owl.karm.KArmOWL` on the public split's first part of a trial from
    :func:`dpcore.read_arms_trial` and evaluate it privately on the second.

    ``karm`` are KArmOWL's keyword arguments (outcome_bounds required). ``ledger`` records
    ``{"fit": epsilon_fit, "evaluation": epsilon_eval}`` as parallel parts, once both are
    computed. Only the weight-clipping warning is silenced (clipping to the public W is the
    method).

    Returns
    -------
    (model, evaluation, (fit_rows, eval_rows))
    """
    if trial.arm_probabilities is None:
        raise ValueError("the trial has no arm probabilities (read it with read_arms_trial)")
    fit_rows, eval_rows = public_split(trial.n, fit_share, split_seed)
    seed = rng  # what the noise is drawn from, before it becomes a Generator
    rng = np.random.default_rng(rng)
    direction = outcome_direction(
        karm.get("larger_is_better"), trial.larger_is_better, karm.get("outcome_bounds")
    )
    model = KArmOWL(epsilon=epsilon_fit, rng=rng, **{**karm, "larger_is_better": direction})
    B = (
        trial.B
        if trial.complete is None
        else trial.outcomes_for_fit(model.outcome_range(), direction)
    )
    labels = np.asarray(trial.arms, dtype=object)[np.asarray(trial.A, dtype=int)]
    X = np.asarray(trial.X)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        model.fit(
            X[fit_rows], labels[fit_rows], B[fit_rows], trial.arm_probabilities, arms=trial.arms
        )
    codes = arm_indices(model.recommend(X[eval_rows]), trial.arms)
    evaluation = evaluate_arms_rule(
        codes,
        np.asarray(trial.A, dtype=int)[eval_rows],
        np.asarray(trial.B)[eval_rows],
        trial.arm_probabilities,
        outcome_bounds=model.outcome_range(),
        epsilon=epsilon_eval,
        arms=trial.arms,
        larger_is_better=direction,
        include=None if trial.complete is None else np.asarray(trial.complete)[eval_rows],
        level=level,
        rng=rng,
        sampler=sampler,
    )
    if ledger is not None:
        _record(
            ledger,
            "K-arm DP-OWL rule + private evaluation",
            ledger_parts(epsilon_fit, epsilon_eval),
            model,
            seed,
        )
    return model, evaluation, (fit_rows, eval_rows)


def _record(ledger, mechanism, parts, model, seed):
    """Record a split release in ``ledger`` as its parallel parts, once both are computed:
    without a guarantee for a reason of :func:`dpcore.privacy.composition.void_reasons` (the
    fit read its feature bounds from the data, a part's ε is infinite, or ``seed``, what the
    noise was drawn from, is an int seed)."""
    reasons = void_reasons(model.bounds_from_data_, parts.values(), seed)
    record_release(ledger, mechanism, parts, reasons)
