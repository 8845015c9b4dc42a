"""The private plug-in rule: per-arm linear outcome models from noisy sufficient statistics.

A second private learner of an individualized treatment rule, beside DP-OWL
(:mod:`dpcore.owl.dpowl`). It predicts each patient's outcome under either arm with a linear
model per arm and recommends the arm whose prediction is better in the outcome's direction.
Each arm's model is ridge regression solved from the arm's sufficient statistics (X'X and
X'y), released with Laplace noise: the outcome model of the doubly robust evaluation
(:mod:`dpcore.owl.outcome_model`, whose Notes give the scaling, the sensitivity and the ridge).

The difference of two linear predictions is linear in the covariates, so the released rule is
a linear score in the covariates' original units, ``intercept + coef · clip(x)``, exactly the
form of a DP-OWL rule: its rule file (:func:`dpcore.owl.release.rule_from_plugin`) is read
and applied by :func:`dpcore.load_rule` as DP-OWL's is.

The functions below are vectorized over leading axes (independent trials), so the estimator,
the audits and the benchmarks run one code path.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import (
    CLIPPED_SHARE_WARNING,
    ClippingWarning,
    PrivacyWarning,
    fitted_upstream,
)
from .._validation import (
    check_bounds,
    check_choice,
    check_epsilon,
    check_matrix,
    check_new_rows,
    check_outcome_range,
    check_real,
    check_vector,
)
from ..privacy.composition import record_release, void_reasons
from ..privacy.mechanisms import PLUG_IN_STATISTICS, SAMPLERS, sample_laplace
from .outcome_model import (
    OutcomeModel,
    design_rows,
    scaled_outcome,
    solve_statistics,
    statistics_sensitivity,
    sufficient_statistics,
)
from .owl import check_propensity
from .rule_learner import TwoArmRule, outcome_direction, treatment_coding
from .werm_release import data_bounds_with_warning

if TYPE_CHECKING:
    from ..data.trial import Trial

__all__ = ["PrivatePlugInRule", "plugin_statistics", "score_from_statistics"]


def plugin_statistics(
    X: ArrayLike,
    A: ArrayLike,
    B: ArrayLike,
    feature_bounds: tuple[ArrayLike, ArrayLike],
    outcome_bounds: tuple[float, float],
    columns: Sequence[int] | np.ndarray | None = None,
    include: ArrayLike | None = None,
    arms: Sequence[float] = (1.0, -1.0),
) -> np.ndarray:
    """The exact sufficient statistics of the arms' outcome models (before any noise).

    Parameters
    ----------
    X : array (..., n, p)
    A : array (..., n) of +1 (treated) and -1 (control)
    B : array (..., n) of outcomes, clipped to ``outcome_bounds``
    feature_bounds : (lower, upper), public
    outcome_bounds : (lo, hi), public
    columns : sequence of int, optional
        Positions of the covariates the models use (default all).
    include : bool array (..., n), optional
        False for a row that contributes nothing (an incomplete row kept so n stays public).
    arms : sequence of codes of A
        One block per arm, in this order: the treated (+1) and control (-1) arms by default;
        0..K-1 for K arms (``A`` then holds each row's arm index).

    Returns
    -------
    array (..., len(arms) k), k = d (d + 1) / 2 + d, d = 1 + the number of used covariates:
    each arm's vech(X'X) and X'y in turn (:func:`dpcore.owl.outcome_model.
    sufficient_statistics`). Replacing one row moves it by at most
    :func:`dpcore.owl.outcome_model.statistics_sensitivity` (d) in L1, whatever the number of
    arms.
    """
    Z = design_rows(X, feature_bounds, columns)
    return sufficient_statistics(Z, A, scaled_outcome(B, outcome_bounds), include, arms)


def score_from_statistics(
    statistics: ArrayLike,
    *,
    n: int,
    epsilon: float,
    feature_bounds: tuple[ArrayLike, ArrayLike],
    outcome_bounds: tuple[float, float],
    larger_is_better: bool,
    columns: Sequence[int] | np.ndarray | None = None,
    ridge: float = 0.01,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule's linear score from (noisy) statistics: post-processing with public values only.

    Each arm's coefficients theta_a on the scaled design row (1, z) come from
    :func:`dpcore.owl.outcome_model.solve_statistics` (ridge lambda = ``ridge`` n plus a
    conditioning term from the noise scale). The predicted difference, in the outcome's units,
    is u (1, z)'(theta_+ - theta_-) with u half the outcome range and
    z_j = 2 (clip(x_j) - lower_j) / (upper_j - lower_j) - 1 (z_j = -1 for a column whose
    bounds are equal), which is linear in clip(x): it is rewritten as
    ``intercept + coef · clip(x)`` in the covariates' original units, times -1 when a smaller
    outcome is better.

    Parameters
    ----------
    statistics : array (..., 2 k)
        From :func:`plugin_statistics`, plus the noise.
    n : int
        The public number of rows (the ridge scales with it).
    epsilon : float
        The statistics' budget (the public conditioning term of the ridge; ``np.inf``: none).
    feature_bounds, outcome_bounds, columns
        As in :func:`plugin_statistics`; ``feature_bounds`` has one entry per covariate of X.
    larger_is_better : bool
    ridge : float

    Returns
    -------
    intercept : array (...,)
    coef : array (..., p), 0 for a covariate the models do not use
    arm_coef : array (..., 2, d), the treated then the control arm's coefficients on (1, z)
    """
    lower, upper = (np.asarray(b, dtype=float) for b in feature_bounds)
    p = lower.size
    cols = np.arange(p) if columns is None else np.asarray(columns, dtype=int)
    d = 1 + cols.size
    arm_coef = solve_statistics(statistics, d, n, epsilon, ridge)
    lo, hi = (float(v) for v in outcome_bounds)
    sign = 1.0 if larger_is_better else -1.0
    diff = sign * (hi - lo) / 2.0 * (arm_coef[..., 0, :] - arm_coef[..., 1, :])
    intercept, coef = in_units(diff, lower, upper, cols)
    return intercept, coef, arm_coef


def in_units(diff: np.ndarray, lower: np.ndarray, upper: np.ndarray, cols: np.ndarray):
    """A linear score on the scaled design row (1, z), ``diff`` (..., d), as
    ``(intercept, coef)`` on the covariates' original units (coef 0 for an unused one):
    z_j = 2 (clip(x_j) - lower_j) / (upper_j - lower_j) - 1, and -1 for equal bounds."""
    span = upper[cols] - lower[cols]
    # z = slope * clip(x) + offset, as design_rows computes it
    slope = np.where(span > 0, 2.0 / np.where(span > 0, span, 1.0), 0.0)
    offset = np.where(span > 0, -slope * lower[cols] - 1.0, -1.0)
    intercept = diff[..., 0] + diff[..., 1:] @ offset
    coef = np.zeros(diff.shape[:-1] + (lower.size,))
    coef[..., cols] = diff[..., 1:] * slope
    return intercept, coef


class PrivatePlugInRule(TwoArmRule):
    """A private plug-in treatment rule: per-arm linear outcome models, released with ε-DP.

    For each arm, a ridge regression of the outcome on the (clipped, scaled) covariates is
    solved from that arm's sufficient statistics, which are released by the Laplace mechanism;
    the rule treats a patient when the predicted outcome under treatment is better (larger, or
    smaller when ``larger_is_better=False``) than under control. The rule is linear in the
    covariates, ``score = intercept_ + coef_ · clip(x)``, in their original units.

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy budget (pure ε-DP, replace-one neighbours); ``np.inf`` fits without noise.
    feature_bounds : (lower, upper), optional
        Public per-covariate bounds; covariates are clipped to them. If omitted they are read
        from the data with a :class:`dpcore.PrivacyWarning`: the guarantee is void.
    outcome_bounds : (lo, hi), optional
        Public bounds of the outcome (lo < hi); outcomes are clipped to them. If omitted they
        are read from the data with a :class:`dpcore.PrivacyWarning`: the guarantee is void.
    larger_is_better : bool
        Required: True when a larger outcome is better, False for outcomes such as length of
        stay. Never assumed: :meth:`fit` refuses a rule without it, and :meth:`fit_trial` takes
        it from the trial's dictionary when it is not given here.
    ridge : float, default 0.01
        Public ridge penalty per row (see :mod:`dpcore.owl.outcome_model`).
    columns : sequence of int or str, optional
        The covariates the outcome models use (a public choice; names need a DataFrame or
        :meth:`fit_trial`). Default all. The noise grows like d² / ε with d = 1 + the number
        used: with many covariates, choose a few that predict the outcome or its effect.
    sampler : {"numpy", "opendp"}, default "numpy"
        numpy's seeded Laplace sampler (simulations, tests) or OpenDP's floating-point-safe
        one (a release on real data; it takes no seed and ignores ``rng``).
    rng : None, int or Generator

    Attributes
    ----------
    coef_ : ndarray (p,), intercept_ : float
        The released rule's score in the covariates' original units (0 for an unused covariate).
    classes_ : ndarray (2,), the treatment labels of ``A``, control first and treated second
    arms_ : tuple, (treated, control) as :meth:`recommend` names them
    larger_is_better_ : bool, the direction used
    statistics_ : ndarray, the released (noisy) sufficient statistics
    sensitivity_ : float, their L1 sensitivity d (d + 3), public
    arm_coef_ : ndarray (2, d), each arm's model on the scaled design row (treated first)
    outcome_model_ : :class:`dpcore.owl.outcome_model.OutcomeModel`, the two arms' models
    feature_bounds_ : (lower, upper) arrays, outcome_bounds_ : (lo, hi), the bounds used
    columns_ : tuple of int, the positions of the covariates the models use
    propensity_ : float or None, the constant given to ``fit`` (not used by the fit)
    bounds_from_data_ : bool, True when a bound was read from the data (no guarantee)
    not_private_because_ : tuple of str, why the release has no guarantee (empty: it has one),
        in the ledger's and the rule file's words (:func:`dpcore.privacy.composition.void_reasons`)
    n_features_in_ : int
    diagnostics_ : dict, analyst-only (shares of outcomes and rows outside the bounds);
        computed from the sensitive data, never to be published with the release

    Notes
    -----
    **Privacy.** Let d = 1 + the number of used covariates. After clipping to the public
    bounds, each design row x~ = (1, z) lies in [-1, 1]^d and each scaled outcome y in
    [-1, 1]; a row adds x~ x~' and x~ y to its own arm's statistics only, at most
    d (d + 1) / 2 + d in L1 (upper triangle of x~ x~' and x~ y). Replacing one row removes
    its block and adds the new row's, possibly to the other arm, so the two arms' statistics
    move by at most d (d + 3) in L1 (:func:`dpcore.owl.outcome_model.statistics_sensitivity`,
    attained when a row at a corner switches arm). Laplace noise of scale d (d + 3) / ε on
    every entry is therefore ε-DP for replace-one neighbours (the Laplace mechanism). Every
    other step (symmetrising, flooring the eigenvalues, the ridge solve with the public
    lambda, the difference of the arms, the change to original units, the recommendation)
    reads only the noisy statistics and public values (bounds, n, ε, ridge, columns), so it is
    post-processing and the release stays ε-DP. n is public (rows kept by ``include`` or by
    :meth:`fit_trial` count in it), as are the treatment labels.

    **Propensity.** A randomized trial needs no propensity for this fit: each arm's outcome
    model is a regression on the covariates within that arm, which randomization (known or
    covariate-dependent) leaves unbiased. A known constant or per-row propensity is accepted
    and ignored (kept as ``propensity_`` for :meth:`score`); an estimated one ("logistic") is
    refused, since it would read the data for nothing.

    **When it loses.** The rule is only as good as a linear model of each arm's outcome: when
    the benefit region is not a half-space (a benefit only in the middle of a covariate's
    range) no linear rule finds it; and with d covariates the noise grows like d² / ε.
    docs/findings.md ("Private plug-in rule against DP-OWL") measures it against DP-OWL.

    Examples
    --------
    >>> from dpcore import PrivatePlugInRule
    >>> from dpcore.owl.simulate import PAPER_TRIAL
    >>> trial = PAPER_TRIAL.sample(1000, rng=0)
    >>> rule = PrivatePlugInRule(
    ...     epsilon=1.0,
    ...     outcome_bounds=(-12, 12),
    ...     feature_bounds=PAPER_TRIAL.feature_bounds,
    ...     larger_is_better=True,
    ...     rng=1,
    ... )
    >>> rule.fit(trial["X"], trial["A"], trial["B"]).predict(trial["X"][:4]).shape
    (4,)
    >>> rule.sensitivity_  # d (d + 3) with d = 5: the intercept and four covariates
    40.0
    """

    _released = ("coef_", "intercept_", "statistics_", "sensitivity_")
    _k_arm_learner = "dpcore.owl.plugin_arms.PrivatePlugInArms"
    epsilon: float
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    outcome_bounds: tuple[float, float] | None
    larger_is_better: bool | None
    ridge: float
    columns: Sequence[int | str] | None
    sampler: str
    rng: Any
    coef_: np.ndarray
    intercept_: float
    statistics_: np.ndarray
    sensitivity_: float
    arm_coef_: np.ndarray
    outcome_model_: OutcomeModel
    feature_bounds_: tuple[np.ndarray, np.ndarray]
    outcome_bounds_: tuple[float, float]
    columns_: tuple[int, ...]
    n_features_in_: int
    bounds_from_data_: bool
    not_private_because_: tuple[str, ...]

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        outcome_bounds: tuple[float, float] | None = None,
        larger_is_better: bool | None = None,
        ridge: float = 0.01,
        columns: Sequence[int | str] | None = None,
        sampler: str = "numpy",
        rng: Any = None,
    ) -> None:
        self._store_params(locals())

    def _check_params(self) -> float:
        """Every hyper-parameter checked in one place; returns the validated ε."""
        eps = check_epsilon(self.epsilon)
        if self.larger_is_better is not None and not isinstance(
            self.larger_is_better, (bool, np.bool_)
        ):
            raise TypeError(
                "larger_is_better must be True or False (in a data dictionary, the "
                f"field larger_is_better), got {self.larger_is_better!r}"
            )
        if self.outcome_bounds is not None:
            check_outcome_range(self.outcome_bounds)
        check_real(self.ridge, "ridge", low=0.0, low_open=False)
        check_choice(self.sampler, "sampler", set(SAMPLERS))
        if self.columns is not None:
            if isinstance(self.columns, (str, bytes)) or not isinstance(
                self.columns, (Sequence, np.ndarray)
            ):
                raise TypeError(
                    f"columns must be a list of covariate positions or names, got {self.columns!r}"
                )
            if len(set(self.columns)) != len(self.columns):
                raise ValueError(f"columns lists a covariate twice: {list(self.columns)!r}")
        return eps

    @staticmethod
    def _sensitivity(d: int) -> float:
        """The L1 sensitivity of the two arms' statistics (the one place the noise reads it)."""
        return statistics_sensitivity(d)

    def fit(
        self,
        X: ArrayLike,
        A: ArrayLike,
        B: ArrayLike,
        propensity: float | ArrayLike | None = None,
        *,
        treated: Any = None,
        include: ArrayLike | None = None,
        ledger: Any = None,
    ) -> PrivatePlugInRule:
        """Fit the two arms' outcome models from noisy sufficient statistics and release the rule.

        Parameters
        ----------
        X : array-like (n, p)
            A DataFrame's string column names become ``feature_names_in_``.
        A : array-like (n,)
            Treatments: two labels of any kind.
        B : array-like (n,)
            Outcomes (clipped to ``outcome_bounds``).
        propensity : float or array (n,), optional
            Not used: a randomized trial's outcome models need no propensity (see the class
            Notes). A known value is checked and kept as ``propensity_``; "logistic" (a
            propensity estimated on the data) is refused.
        treated : label, optional
            Which label of ``A`` is the treated arm. Required unless the labels are -1 and +1
            (+1 is treated): it is never taken from the labels' sort order.
        include : bool array (n,), optional
            False for a row that contributes nothing (an incomplete row kept so that n, which
            the ridge reads, stays the public row count). Default: every row.
        ledger : PrivacyLedger, optional
            The dataset's ledger: the release is recorded before any released attribute is
            set (refused past the cap: nothing is released), without a guarantee when a bound
            was read from the data, ε is infinite or the noise is seeded by an int.

        Returns
        -------
        self

        Warns
        -----
        PrivacyWarning
            ``feature_bounds`` or ``outcome_bounds`` not given (read from the data), or a step
            fitted on the data before this one in a scikit-learn Pipeline.
        ClippingWarning
            More than :data:`dpcore._estimator.CLIPPED_SHARE_WARNING` of the outcomes outside
            ``outcome_bounds``, or of the rows with a covariate outside ``feature_bounds``:
            analyst-only, a sign of bounds in the wrong units.
        """
        eps = self._check_params()
        direction = self._direction()
        self._set_feature_names(X)
        X = check_matrix(X, allow_1d=False)
        n, p = X.shape
        classes, A = treatment_coding(A, n, treated)
        B = check_vector(B, "B", n)
        if isinstance(propensity, str):
            raise ValueError(
                f"propensity={propensity!r}: the plug-in rule needs no propensity (each arm's "
                "outcome model is a regression within the arm), and one estimated on the "
                "data would read it for nothing; pass the known randomization probability "
                "or nothing"
            )
        if propensity is not None:
            propensity = check_propensity(propensity, n)
        keep = np.ones(n, bool) if include is None else _include(include, n)
        cols = self._column_positions(p)

        from_data = []
        upstream = fitted_upstream(self)
        private = np.isfinite(eps)
        if upstream and private:
            warnings.warn(
                f"{', '.join(upstream)} before {type(self).__name__} in the pipeline learned "
                "its parameters from the data: the features the public bounds apply to are "
                "data-derived, which voids the differential-privacy guarantee. Transform with "
                "public constants only (a FunctionTransformer), or drop the step and give "
                "feature_bounds in the original units.",
                PrivacyWarning,
                stacklevel=2,
            )
            from_data.append("feature bounds")
        if self.feature_bounds is None:
            rows = X[keep] if keep.any() else X
            if private:
                bounds = data_bounds_with_warning(rows, "feature_bounds")
            else:
                bounds = (rows.min(axis=0), rows.max(axis=0))
            from_data.append("feature bounds")
        else:
            bounds = check_bounds(self.feature_bounds, p, "feature_bounds")
        lower, upper = (np.asarray(b, dtype=float) for b in bounds)
        if self.outcome_bounds is None:
            values = B[keep] if keep.any() else B
            if private:
                found = data_bounds_with_warning(values[:, None], "outcome_bounds")
            else:
                found = (values.min(keepdims=True), values.max(keepdims=True))
            outcome_bounds = check_outcome_range((float(found[0][0]), float(found[1][0])))
            from_data.append("outcome bounds")
        else:
            outcome_bounds = check_outcome_range(self.outcome_bounds)
        lo, hi = outcome_bounds
        from_data = list(dict.fromkeys(from_data))

        outside_y = float(np.mean((B[keep] < lo) | (B[keep] > hi))) if keep.any() else 0.0
        outside_x = (
            float(np.mean(((X[keep] < lower) | (X[keep] > upper)).any(axis=1)))
            if keep.any()
            else 0.0
        )
        for share, what in (
            (outside_y, f"outcomes lie outside the public outcome_bounds ({lo:g}, {hi:g})"),
            (outside_x, "rows have a covariate outside its public feature_bounds"),
        ):
            if share > CLIPPED_SHARE_WARNING:
                warnings.warn(
                    f"more than {CLIPPED_SHARE_WARNING:.0%} of the {what} and were clipped to "
                    "them: check the units (analyst-only; never publish this)",
                    ClippingWarning,
                    stacklevel=2,
                )

        stats = plugin_statistics(X, A, B, (lower, upper), outcome_bounds, cols, keep)
        d = 1 + len(cols)
        sens = float(self._sensitivity(d))
        rng = None if self.sampler == "opendp" else self.rng
        noisy = stats + sample_laplace(eps, sens, stats.shape, rng=rng, sampler=self.sampler)
        reasons = tuple(void_reasons(from_data, eps, rng))
        if ledger is not None:
            record_release(ledger, PLUG_IN_STATISTICS.name, {"release": eps}, reasons)
        intercept, coef, arm_coef = score_from_statistics(
            noisy,
            n=n,
            epsilon=eps,
            feature_bounds=(lower, upper),
            outcome_bounds=outcome_bounds,
            larger_is_better=direction,
            columns=cols,
            ridge=float(self.ridge),
        )
        self.classes_ = classes
        self.arms_ = (classes[1], classes[0])
        self.larger_is_better_ = direction
        self.propensity_ = (
            float(np.asarray(propensity))
            if propensity is not None and np.ndim(propensity) == 0
            else None
        )
        self.feature_bounds_ = (lower, upper)
        self.outcome_bounds_ = outcome_bounds
        self.columns_ = tuple(int(c) for c in cols)
        self.bounds_from_data_ = bool(from_data)
        self.not_private_because_ = reasons
        self.n_features_in_ = p
        self.diagnostics_ = {"outcomes_outside_share": outside_y, "outside_bounds_share": outside_x}
        self.sensitivity_ = sens
        self.statistics_ = noisy
        self.arm_coef_ = arm_coef
        self.outcome_model_ = OutcomeModel(
            coef=arm_coef,
            feature_bounds=(lower, upper),
            outcome_bounds=outcome_bounds,
            columns=self.columns_,
            epsilon=eps,
            sensitivity=sens,
        )
        self.coef_ = coef
        self.intercept_ = float(intercept)
        return self

    def fit_trial(
        self, trial: Trial, propensity: float | ArrayLike | None = None, *, ledger: Any = None
    ) -> PrivatePlugInRule:
        """Fit on a :class:`dpcore.Trial`: its arrays, column names, arms and direction.

        Parameters
        ----------
        trial : Trial
            From :func:`dpcore.read_trial`; ``A`` is +1 for ``trial.arms[0]`` (treated). Rows
            kept with a missing value (``incomplete="keep"``, n the file's public row count)
            contribute nothing to the statistics.
        propensity : float or array (n,), optional
            Not used (see :meth:`fit`); the trial's propensity column is not read.
        ledger : PrivacyLedger, optional
            Where the release is recorded, as in :meth:`fit`.

        Returns
        -------
        self, with ``arms_ == trial.arms`` so that :meth:`recommend` returns arm labels.
        """
        self._check_two_arms(trial)
        return self._fit_on_trial(trial, trial.B, propensity, include=trial.complete, ledger=ledger)

    def _direction(self) -> bool:
        """The outcome direction: the estimator's, else the trial's dictionary's."""
        # The plug-in compares predictions, not benefits: no bounds are needed for a False.
        return outcome_direction(
            self.larger_is_better, getattr(self, "_trial_direction", None), (0.0, 1.0)
        )

    def _column_positions(self, p: int) -> np.ndarray:
        """The used covariates' positions in X, from ``columns`` (positions or names)."""
        if self.columns is None:
            return np.arange(p)
        names = getattr(self, "feature_names_in_", None)
        out = []
        for c in self.columns:
            if isinstance(c, str):
                if names is None or c not in names.tolist():
                    known = "X has no column names" if names is None else f"X has {names.tolist()}"
                    raise ValueError(f"columns: no covariate named {c!r} ({known})")
                out.append(names.tolist().index(c))
            elif isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < p:
                out.append(int(c))
            else:
                raise ValueError(f"columns: {c!r} is not a covariate position 0..{p - 1}")
        return np.asarray(out, dtype=int)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Predicted treated minus control outcome, in the better direction (> 0: treat).

        ``intercept_ + coef_ · clip(x)`` with each covariate clipped to the public bounds: in
        the outcome's units, positive when treating is predicted better.
        """
        self._check_fitted()
        self._check_feature_names(X)
        X = check_new_rows(X, self.n_features_in_, type(self).__name__)
        lower, upper = self.feature_bounds_
        return self.intercept_ + np.clip(X, lower, upper) @ self.coef_

    def _benefit_bounds(self) -> tuple[float, float]:
        """The outcome bounds the benefit is clipped to: those the fit used."""
        return self.outcome_bounds_


def _include(include: ArrayLike, n: int) -> np.ndarray:
    keep = np.asarray(include).reshape(-1)
    if keep.shape[0] != n or keep.dtype.kind != "b":
        raise ValueError(f"include must be {n} True/False values, one per row of X")
    return keep
