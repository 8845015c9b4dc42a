"""What every learner of a treatment rule shares: how it reads the treatments and the
outcome's direction, and, for two arms, its predictions, recommendations and IPW score.

Which arm is treated is the caller's (or the dictionary's), never a sort order
(:func:`treatment_coding`); whether a larger outcome is better is the learner's setting or the
trial's dictionary's, never assumed (:func:`outcome_direction`). A two-arm rule
(:class:`TwoArmRule`: :class:`dpcore.DPOWL`, :class:`dpcore.PrivatePlugInRule`) treats where its
decision function is positive, ties going to control.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._estimator import PrivateEstimator
from .._validation import check_binary_labels, check_vector
from .owl import benefit, check_propensity, ipw_value

if TYPE_CHECKING:
    from ..data.trial import Trial

__all__ = ["TwoArmRule", "outcome_direction", "treatment_coding"]


def _plus_minus_one(classes: np.ndarray) -> bool:
    """Whether the two labels are -1 and +1 (numbers, not booleans or text)."""
    if classes.dtype.kind not in "iuf":
        return False
    return classes.tolist() == [-1, 1]


def treatment_coding(A: ArrayLike, n: int, treated: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The two labels of ``A`` (control first, treated second) and ``A`` coded +1 for treated.

    Which arm is treated is the caller's (or the dictionary's): never a sort order. Only -1/+1
    labels default to +1 as treated; other labels need ``treated``.

    Raises
    ------
    ValueError
        Labels other than -1/+1 without ``treated``, or a ``treated`` that is not a label of A.
    """
    classes, coded = check_binary_labels(A, n, "A")
    if treated is None and not _plus_minus_one(classes):
        raise ValueError(
            f"A has the labels {classes[0]!r} and {classes[1]!r}: say which is the treated "
            f"arm, the one propensity is about, e.g. fit(..., treated={classes[1]!r}) (or "
            "use fit_trial, which takes it from the trial); only -1/+1 labels default to +1"
        )
    if treated is not None:
        if treated not in classes.tolist():
            raise ValueError(f"treated={treated!r} is not a label of A ({classes.tolist()})")
        if treated == classes[0]:
            classes, coded = classes[::-1], -coded
    return classes, coded


def outcome_direction(
    larger_is_better: bool | None,
    from_trial: bool | None = None,
    outcome_bounds: tuple[float, float] | None = None,
) -> bool:
    """Whether a larger outcome is better: the learner's setting, else the trial's dictionary's
    (``Trial.larger_is_better``); never assumed, for every learner of a treatment rule.

    Raises
    ------
    ValueError
        Neither says (or False without the outcome bounds that turn outcomes into benefits).
    """
    value = larger_is_better if larger_is_better is not None else from_trial
    if value is None:
        raise ValueError(
            "larger_is_better is not set: say whether a larger outcome is better (True) "
            "or worse (False, e.g. days in hospital), as DPOWL(..., larger_is_better=False); "
            "fit_trial takes it from a trial read with a data dictionary that names it"
        )
    if not value and outcome_bounds is None:
        raise ValueError(
            "larger_is_better=False needs outcome_bounds to turn outcomes into benefits"
        )
    return bool(value)


class TwoArmRule(PrivateEstimator):
    """A private estimator of a two-arm rule: its predictions, recommendations and IPW score.

    A subclass defines ``decision_function`` (> 0: treat) and :meth:`_benefit_bounds` (the
    outcome bounds that turn outcomes into benefits), and its ``fit`` sets ``classes_``
    (control first, treated second), ``arms_`` ((treated, control) as a trial names them),
    ``propensity_`` (the constant P(treated) of the fit, or None) and ``larger_is_better_``.
    """

    classes_: np.ndarray
    arms_: tuple
    propensity_: float | None
    larger_is_better_: bool
    #: ``fit(X, A, B, propensity, *, treated, ...)``, the subclass's.
    fit: Callable[..., Any]
    #: The learner that fits a rule over all the arms of a K-arm trial, named for the advice.
    _k_arm_learner: str

    def _check_two_arms(self, trial: Trial) -> None:
        """Refuse a trial read by ``read_arms_trial``: this rule compares two arms."""
        if len(trial.arms) != 2 or trial.arm_probabilities is not None:
            raise ValueError(
                f"this trial has {len(trial.arms)} arms read by read_arms_trial: "
                f"{type(self).__name__} compares two arms. Fit a rule over all of them with "
                f"{self._k_arm_learner}, or read two of them with read_trial(..., arms=(a, b))"
            )

    def _fit_on_trial(self, trial: Trial, B: ArrayLike, propensity: Any, **fit: Any) -> Self:
        """``fit`` on a two-arm trial's rows and column names, with the outcomes ``B`` and the
        ``propensity`` given (and the ``fit`` keywords): the trial's dictionary's direction
        counts where the estimator has none, and ``arms_`` become the trial's."""
        X = pd.DataFrame(np.asarray(trial.X), columns=list(trial.covariates))
        self._trial_direction = trial.larger_is_better
        try:  # Trial.A is +1 for trial.arms[0]
            self.fit(X, trial.A, B, propensity, treated=1.0, **fit)
        finally:
            del self._trial_direction
        self.arms_ = tuple(trial.arms)
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The rule's score for each row: > 0 favours treating."""
        raise NotImplementedError

    def _benefit_bounds(self) -> tuple[float, float] | None:
        """The outcome bounds the benefit is clipped to (None: outcomes are benefits)."""
        raise NotImplementedError

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The treatment label of ``A`` to give: ``classes_[1]`` (treated) or ``classes_[0]``.

        Ties go to ``classes_[0]``; for treatments coded -1 / +1 the result is -1 or +1.
        """
        positive = self.decision_function(X) > 0  # checks the fit first
        return self.classes_[positive.astype(int)]

    def recommend(self, X: ArrayLike) -> np.ndarray:
        """The arm to give each row, by its label in ``arms_`` (a trial's own arm names)."""
        treated, control = self.arms_
        return np.where(self.decision_function(X) > 0, treated, control).astype(object)

    def score(
        self,
        X: ArrayLike,
        A: ArrayLike,
        B: ArrayLike,
        propensity: float | ArrayLike | None = None,
        sample_weight: None = None,
    ) -> float:
        """Normalised IPW value of the rule's benefit on (X, A, B): larger is better.

        The benefit is the one the fit learns from (outcomes clipped to the outcome bounds and,
        when a smaller outcome is better, turned into hi - B). ``propensity`` defaults to the
        constant used in ``fit``. A score read on the sensitive data is outside the guarantee.
        ``sample_weight`` exists for scikit-learn's Pipeline, which always passes it; the
        weights of an IPW value are the propensities, so other weights are refused.
        """
        if sample_weight is not None:
            raise ValueError(
                f"{type(self).__name__}.score weighs rows by 1 / propensity; sample_weight is "
                "not supported"
            )
        self._check_fitted()
        treat = np.where(self.decision_function(X) > 0, 1.0, -1.0)
        n = treat.shape[0]
        p = self.propensity_ if propensity is None else propensity
        if p is None or isinstance(p, str):
            raise TypeError(
                "score needs the propensity of these rows (a number or one per row): the fit "
                "kept no constant one"
            )
        p = check_propensity(p, n)
        A = np.asarray(A).reshape(-1)
        if A.shape[0] != n:
            raise ValueError(f"A has {A.shape[0]} entries but X has {n} rows")
        A_pm = np.where(A == self.classes_[1], 1.0, -1.0)
        gain = benefit(check_vector(B, "B", n), self._benefit_bounds(), self.larger_is_better_)
        return float(ipw_value(treat, A_pm, gain, p))
