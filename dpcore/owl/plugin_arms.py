"""The private plug-in rule over K arms: one release of every arm's outcome model.

:class:`dpcore.owl.karm.KArmOWL` releases K - 1 DP-OWL rules, each arm against a reference, at
ε/(K - 1) each (basic composition: every rule reads every patient). The plug-in rule needs no
such split: each arm's linear outcome model is solved from that arm's sufficient statistics
(X'X and X'y over its rows, :func:`dpcore.owl.outcome_model.sufficient_statistics`), and a
patient's row lies in one arm's block only. Replacing the row removes it from one block and
adds the new row to one block, so the K blocks together move by at most
:func:`dpcore.owl.outcome_model.statistics_sensitivity` (d (d + 3)) in L1, as for two arms:
Laplace noise of scale d (d + 3)/ε on every entry of all K blocks is ε-DP for replace-one
neighbours, whatever K. Everything after the noise (the ridge solves, the differences, the
covariates' units, the recommendation) is post-processing of the noisy statistics with public
values.

The release is one score per arm other than the reference, the predicted difference of its
outcome and the reference's in the better direction, linear in the covariates' units; the
recommendation is the reference when no score is positive, else the arm of the largest score
(:func:`dpcore.owl.rule.choose_arm`), so its rule file is a K-arm rule file
(:func:`dpcore.owl.release.rule_from_plugin_arms`) that :func:`dpcore.load_rule` applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._estimator import PrivateEstimator
from .._validation import (
    check_bounds,
    check_choice,
    check_epsilon,
    check_new_rows,
    check_outcome_range,
    check_real,
)
from ..privacy.composition import void_reasons
from ..privacy.mechanisms import SAMPLERS, sample_laplace
from .outcome_model import solve_statistics, statistics_sensitivity
from .plugin import in_units, plugin_statistics
from .rule import choose_arm

if TYPE_CHECKING:
    from ..data.trial import Trial

__all__ = ["PrivatePlugInArms"]


class PrivatePlugInArms(PrivateEstimator):
    """A private plug-in treatment rule over all K arms of a trial, in one ε-DP release.

    Parameters
    ----------
    epsilon : float
        The release's budget (all K arms' statistics together).
    feature_bounds : (lower, upper)
        Public bounds of every covariate (required: the statistics are scaled by them).
    outcome_bounds : (lo, hi)
        Public bounds of the outcome (required).
    larger_is_better : bool, optional
        The outcome's direction; None takes the trial's (its dictionary's).
    reference : label, optional
        The arm every score is against (default: the trial's first arm).
    ridge : float
        The ridge of each arm's solve, times n (plus a public conditioning term from the
        noise scale, :func:`dpcore.owl.outcome_model.solve_statistics`).
    columns : sequence of int, optional
        Positions of the covariates the models use (a public choice; default all).
    sampler : {"numpy", "opendp"}
    rng : None, int or Generator

    Attributes
    ----------
    arms_, reference_, compared_ : the arms, the reference, the other arms in order
    intercept_ : ndarray (K - 1,), coef_ : ndarray (K - 1, p)
        Each compared arm's score in the covariates' units.
    statistics_ : ndarray (K k,), the noisy statistics; sensitivity_ : float, their L1
    not_private_because_ : tuple of str, why the release has no guarantee (empty: it has one),
        in the ledger's and the rule file's words (:func:`dpcore.privacy.composition.void_reasons`)
    """

    _released = ("coef_", "intercept_")
    epsilon: float
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    outcome_bounds: tuple[float, float] | None
    larger_is_better: bool | None
    reference: Any
    ridge: float
    columns: Sequence[int] | None
    sampler: str
    rng: Any
    coef_: np.ndarray
    intercept_: np.ndarray
    statistics_: np.ndarray
    sensitivity_: float
    not_private_because_: tuple[str, ...]

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        outcome_bounds: tuple[float, float] | None = None,
        larger_is_better: bool | None = None,
        reference: Any = None,
        ridge: float = 0.01,
        columns: Sequence[int] | None = None,
        sampler: str = "numpy",
        rng: Any = None,
    ) -> None:
        self._store_params(locals())

    def fit_trial(self, trial: Trial) -> PrivatePlugInArms:
        """Fit on a trial over all its arms (:func:`dpcore.read_arms_trial`: ``A`` holds each
        row's arm index); an incomplete row contributes nothing, n stays the file's."""
        eps = check_epsilon(self.epsilon)
        check_real(self.ridge, "ridge", low=0.0, low_open=False)
        check_choice(self.sampler, "sampler", set(SAMPLERS))
        if self.feature_bounds is None or self.outcome_bounds is None:
            raise ValueError(
                "the plug-in rule over K arms needs public feature_bounds and outcome_bounds"
            )
        direction = self.larger_is_better
        if direction is None:
            direction = trial.larger_is_better
        if direction is None:
            raise ValueError("say which outcome is better: larger_is_better=True or False")
        arms = tuple(trial.arms)
        K = len(arms)
        if K < 2:
            raise ValueError("a trial with at least two arms is needed")
        reference = arms[0] if self.reference is None else self.reference
        if reference not in arms:
            raise ValueError(f"reference={reference!r} is not one of the arms {list(arms)}")
        X = np.asarray(trial.X, dtype=float)
        p = X.shape[1]
        self._set_feature_names(pd.DataFrame(columns=list(trial.covariates)))
        lower, upper = check_bounds(self.feature_bounds, p, "feature_bounds")
        lo, hi = check_outcome_range(self.outcome_bounds)
        cols = np.arange(p) if self.columns is None else np.asarray(self.columns, dtype=int)
        d = 1 + cols.size
        A = np.asarray(trial.A, dtype=float)
        exact = plugin_statistics(
            X, A, trial.B, (lower, upper), (lo, hi), cols, trial.complete, arms=tuple(range(K))
        )
        self.sensitivity_ = float(self._sensitivity(d))
        noise = (
            np.zeros(exact.shape)
            if np.isinf(eps)
            else sample_laplace(
                eps,
                self.sensitivity_,
                exact.size,
                rng=np.random.default_rng(self.rng),
                sampler=self.sampler,
            )
        )
        self.statistics_ = exact + noise
        arm_coef = solve_statistics(self.statistics_, d, trial.n, eps, self.ridge)  # (K, d)
        r = arms.index(reference)
        sign = 1.0 if direction else -1.0
        others = [j for j in range(K) if j != r]
        diff = sign * (hi - lo) / 2.0 * (arm_coef[others] - arm_coef[r])
        self.intercept_, self.coef_ = in_units(diff, lower, upper, cols)
        self.arms_, self.reference_ = arms, reference
        self.compared_ = tuple(arms[j] for j in others)
        self.feature_bounds_, self.outcome_bounds_ = (lower, upper), (lo, hi)
        self.larger_is_better_ = bool(direction)
        self.columns_ = cols
        self.n_features_in_ = p
        self.bounds_from_data_ = False
        self.not_private_because_ = tuple(
            void_reasons(False, eps, self.rng if self.sampler == "numpy" else None)
        )
        return self

    @staticmethod
    def _sensitivity(d: int) -> float:
        """The L1 sensitivity of all K arms' statistics (one place the noise reads it)."""
        return statistics_sensitivity(d)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Each compared arm's score (n, K - 1): its predicted advantage over the reference."""
        self._check_fitted()
        self._check_feature_names(X)
        X = check_new_rows(X, self.n_features_in_, type(self).__name__)
        lower, upper = self.feature_bounds_
        return self.intercept_ + np.clip(X, lower, upper) @ self.coef_.T

    def recommend(self, X: ArrayLike) -> np.ndarray:
        """The arm to give each row: the reference unless a score is positive."""
        return choose_arm(self.decision_function(X), self.compared_, self.reference_)
