"""The DP-OWL estimator: outcome weighted learning released by DP-wERM (docs/spec/dp_owl.md §2).

The weights, propensities and rule metrics it uses live in :mod:`dpcore.owl.owl`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import CLIPPED_SHARE_WARNING, ClippingWarning, PrivacyWarning
from .._validation import (
    check_bounds,
    check_choice,
    check_epsilon,
    check_matrix,
    check_real,
    check_vector,
)
from .dpwerm import PERTURBATIONS, DPWeightedERM
from .owl import (
    check_propensity,
    default_weight_bound,
    fit_logistic_propensity,
    owl_weights,
)
from .paper import default_gamma
from .rule_learner import TwoArmRule, outcome_direction, treatment_coding

if TYPE_CHECKING:
    from ..data.trial import Trial
    from .preprocessing import FeatureScaling

__all__ = ["DPOWL", "Propensity"]

#: A propensity as ``fit`` takes it: a constant, one value per row, or "logistic".
Propensity = float | ArrayLike | str | None


class DPOWL(TwoArmRule):
    """Differentially private outcome weighted learning (DP-OWL).

    OWL as DP-wERM: labels y_i = A_i, weights w_i = benefit_i / pi(A_i | X_i) clipped to the
    public W, released by output perturbation (the paper's Algorithm 1) or objective
    perturbation (pure epsilon-DP, replace-one neighbours either way).

    Parameters
    ----------
    gamma : float or "paper", default "paper"
        Regularization constant in the sum-form objective. "paper" (the default, as on the
        dashboard and in ``dpcore fit``) is the authors' tuned gamma at the table cell nearest
        (epsilon, n), scaled by W / 30 (:func:`dpcore.owl.paper.default_gamma`): scaling the
        weights, W and gamma together leaves the release's distribution unchanged. A number
        is used as given; ``gamma_`` holds the value used. A gamma too small for the noise
        raises a :class:`dpcore.NoiseWarning`.
    epsilon, huber_h, C, feature_bounds, fit_intercept, rng
        As in :class:`dpcore.DPWeightedERM` (Huber-hinge loss).
    perturbation : {"output", "objective"}, default "output"
        "output": the exact minimiser plus noise of sensitivity (C + 2W)/gamma (Algorithm 1
        of the paper). "objective": the minimiser of the objective plus a random linear term
        (Chaudhuri, Monteleoni and Sarwate's Algorithm 2 with the weight bound W; see
        :class:`dpcore.DPWeightedERM`); it needs a known propensity (C = 0). The same
        ``gamma`` serves both; ``gamma="paper"`` is the table tuned for output perturbation.
    weight_bound : float, optional
        Public bound W on benefit / propensity; weights above it are clipped with a warning.
        Default (hi - lo) / min(p, 1 - p), which needs outcome_bounds and a constant propensity.
    outcome_bounds : (lo, hi), optional
        Public bounds of the outcome. Without them the outcome must already be a
        non-negative benefit.
    larger_is_better : bool
        Required: True when a larger outcome is better, False for outcomes such as length of
        stay (the benefit is then hi - B). Never assumed: :meth:`fit` refuses a rule without
        it, and :meth:`fit_trial` takes it from the trial's dictionary when it is not given
        here (``Trial.larger_is_better``). ``larger_is_better_`` holds the direction used.

    Attributes
    ----------
    classes_ : ndarray (2,), the treatment labels of ``A``, control first and treated second
    arms_ : tuple, (treated, control) as :meth:`recommend` names them (a trial's arm labels
        after :meth:`fit_trial`)
    propensity_ : float or None, the constant P(treated) used in ``fit`` (None if per row)
    coef_, intercept_, theta_, sensitivity_, scaling_ : the release, as in DPWeightedERM
    epsilon_noise_, extra_ridge_ : objective perturbation's public plan, as in DPWeightedERM
    weight_bound_ : float, the W used
    gamma_ : float, the gamma used (the table's, scaled, for ``gamma="paper"``)
    estimator_ : the fitted DPWeightedERM
    not_private_because_ : tuple of str, as in DPWeightedERM
    diagnostics_ : dict, analyst-only (solver iterations, gradient norm, ``clipped_share``);
        computed from the sensitive data, never to be published with the release

    Notes
    -----
    The randomization is never assumed: ``fit`` needs the propensity (a 2:1 trial weighted as
    1:1 gets wrong weights and a wrong W). :meth:`fit_trial` takes it from a
    :class:`dpcore.Trial` with a propensity column, or from the argument.

    With scikit-learn (optional extra ``dpcore[sklearn]``), ``clone``, ``Pipeline`` and
    ``GridSearchCV`` work; ``B`` and ``propensity`` reach ``fit`` and :meth:`score` through
    metadata routing (``sklearn.set_config(enable_metadata_routing=True)`` and
    ``cross_val_score(rule, X, A, params={"B": B, "propensity": 0.5})``). Every fit on the
    sensitive data spends epsilon again and every score read on it is outside the guarantee:
    cross-validation or a grid search on the trial spends many times epsilon. Tune gamma on
    public data with Algorithm 2 (:func:`dpcore.tune_gamma`).

    scikit-learn's ``check_estimator(DPOWL())`` fails 37 of its 54 checks by design: they call
    ``fit(X, y)``, and ``fit`` needs the outcomes ``B`` and the propensity too. Given those (a
    wrapper passing ``B = 1`` and a 1:1 design), 6 still fail, for the reasons listed in
    docs/api.md ("DPOWL and scikit-learn's checks").

    References
    ----------
    .. [1] Giddings, Zhou et al., arXiv:2307.13127, Section 3 (DP-OWL).
    .. [2] Zhao, Zeng, Rush and Kosorok, "Estimating individualized treatment rules using
       outcome weighted learning", JASA 107 (2012).

    Examples
    --------
    >>> from dpcore import DPOWL
    >>> from dpcore.owl.simulate import PAPER_TRIAL
    >>> trial = PAPER_TRIAL.sample(1000, rng=0)
    >>> rule = DPOWL(
    ...     epsilon=1.0,
    ...     gamma=75,
    ...     outcome_bounds=(-12, 12),
    ...     feature_bounds=PAPER_TRIAL.feature_bounds,
    ...     larger_is_better=True,
    ...     rng=1,
    ... )
    >>> rule.fit(trial["X"], trial["A"], trial["B"], propensity=0.5).predict(trial["X"][:4]).shape
    (4,)
    >>> rule.classes_.tolist(), rule.weight_bound_
    ([-1.0, 1.0], 48.0)
    """

    _released = ("coef_", "intercept_", "theta_", "sensitivity_")
    _k_arm_learner = "dpcore.owl.karm.KArmOWL"
    epsilon: float
    gamma: float | str
    weight_bound: float | None
    huber_h: float
    C: float | str
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    outcome_bounds: tuple[float, float] | None
    larger_is_better: bool | None
    perturbation: str
    fit_intercept: bool
    rng: Any
    # The release, copied from the fitted DPWeightedERM by ``fit`` (declared for type checkers).
    coef_: np.ndarray
    intercept_: float
    theta_: np.ndarray
    sensitivity_: float
    epsilon_noise_: float
    extra_ridge_: float
    scaling_: FeatureScaling
    n_features_in_: int
    bounds_from_data_: bool
    not_private_because_: tuple[str, ...]

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        gamma: float | str = "paper",
        weight_bound: float | None = None,
        huber_h: float = 0.5,
        C: float | str = 0.0,
        feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        outcome_bounds: tuple[float, float] | None = None,
        larger_is_better: bool | None = None,
        perturbation: str = "output",
        fit_intercept: bool = True,
        rng: Any = None,
    ) -> None:
        self._store_params(locals())

    def _check_params(self) -> None:
        """The OWL-specific hyper-parameters (the rest are checked by DPWeightedERM)."""
        check_epsilon(self.epsilon)
        check_choice(self.perturbation, "perturbation", PERTURBATIONS)
        if self.larger_is_better is not None and not isinstance(
            self.larger_is_better, (bool, np.bool_)
        ):
            raise TypeError(
                "larger_is_better must be True or False (in a data dictionary, the "
                f"field larger_is_better), got {self.larger_is_better!r}"
            )
        if isinstance(self.gamma, str):
            if self.gamma != "paper":
                raise ValueError(f"gamma must be a positive number or 'paper', got {self.gamma!r}")
        else:
            check_real(self.gamma, "gamma", low=0.0)
        if self.outcome_bounds is not None:
            check_bounds(self.outcome_bounds, 1, "outcome_bounds")
        if self.weight_bound is not None:
            check_real(self.weight_bound, "weight_bound", low=0.0)

    def fit(
        self,
        X: ArrayLike,
        A: ArrayLike,
        B: ArrayLike,
        propensity: Propensity,
        *,
        treated: Any = None,
        ledger: Any = None,
    ) -> DPOWL:
        """Fit and release the private rule.

        Parameters
        ----------
        X : array-like (n, p)
            A DataFrame's string column names become ``feature_names_in_``.
        A : array-like (n,)
            Treatments: two labels of any kind.
        B : array-like (n,)
            Outcomes.
        propensity : float, array (n,) or "logistic"
            Required. P(A = treated | X): a known constant (0.5 for 1:1, 2/3 for 2:1
            randomization), one value per row, or "logistic" to estimate it on the same data.
            An estimated propensity is covered by pure epsilon-DP only with
            ``C="worst-case"``; any other C > 0 relies on the paper's large-n constant H and
            raises a :class:`PrivacyWarning`.
        treated : label, optional
            Which label of ``A`` is the treated arm (the one ``propensity`` is about, and the
            rule's "treat"). Required unless the labels are -1 and +1 (+1 is treated): it is
            never taken from the labels' sort order.
        ledger : PrivacyLedger, optional
            The dataset's ledger (:meth:`dpcore.PrivacyLedger.for_trial`): the release is
            recorded before any released attribute is set, as in
            :meth:`dpcore.DPWeightedERM.fit` (refused past the cap: nothing is released).

        Returns
        -------
        self

        Warns
        -----
        ClippingWarning
            Weights above W; more than :data:`dpcore._estimator.CLIPPED_SHARE_WARNING` of the
            outcomes outside ``outcome_bounds`` (or of the rows with a covariate outside
            ``feature_bounds``): analyst-only, a sign of bounds in the wrong units.
        PrivacyWarning, NoiseWarning
            As in :meth:`dpcore.DPWeightedERM.fit`.
        """
        self._check_params()
        self.larger_is_better_ = self._direction()
        self._set_feature_names(X)
        X = check_matrix(X, allow_1d=False)
        n = X.shape[0]
        classes, A = treatment_coding(A, n, treated)
        self.classes_ = classes
        self.arms_ = (classes[1], classes[0])
        B = check_vector(B, "B", n)
        if isinstance(propensity, str):
            propensity = self._estimated_propensity(X, A, propensity)
        elif propensity is None:
            raise TypeError(
                "propensity is required: the randomization probability P(treated) "
                "(0.5 for 1:1, 2/3 for 2:1), one value per row, or 'logistic'"
            )
        propensity = check_propensity(propensity, n)
        self.propensity_ = float(np.asarray(propensity)) if np.ndim(propensity) == 0 else None
        W = self.weight_bound
        if W is None:
            if self.outcome_bounds is None or np.ndim(propensity) != 0:
                raise ValueError(
                    "weight_bound is required unless outcome_bounds are given and the propensity is a constant"
                )
            W = default_weight_bound(self.outcome_bounds, float(np.asarray(propensity)))
        if self.outcome_bounds is not None and n:
            lo, hi = (float(v) for v in self.outcome_bounds)
            outside = float(np.mean((B < lo) | (B > hi)))
            if outside > CLIPPED_SHARE_WARNING:
                warnings.warn(
                    f"more than {CLIPPED_SHARE_WARNING:.0%} of the outcomes lie outside the public "
                    f"outcome_bounds ({lo:g}, {hi:g}) and were clipped to them: check the outcome's "
                    "units (analyst-only; never publish this)",
                    ClippingWarning,
                    stacklevel=2,
                )
        w, clipped = owl_weights(B, A, propensity, W, self.outcome_bounds, self.larger_is_better_)
        if clipped > 0:
            warnings.warn(
                f"some OWL weights (benefit / propensity) exceed the weight bound W={W:g}; they "
                "were clipped to W (the share clipped is an analyst-only diagnostic)",
                ClippingWarning,
                stacklevel=2,
            )
        gamma = (
            default_gamma(self.epsilon, n, W) if isinstance(self.gamma, str) else float(self.gamma)
        )
        estimator = DPWeightedERM(
            epsilon=self.epsilon,
            gamma=gamma,
            weight_bound=W,
            loss="huber",
            huber_h=self.huber_h,
            C=self.C,
            perturbation=self.perturbation,
            feature_bounds=self.feature_bounds,
            fit_intercept=self.fit_intercept,
            rng=self.rng,
        )
        estimator._ledger_name = "DP-OWL rule"
        estimator._pipeline_step = self  # the step a scikit-learn Pipeline fits
        self.estimator_ = estimator.fit(X, A, w, ledger=ledger)
        self.weight_bound_ = W
        self.gamma_ = float(gamma)
        for attr in (
            "coef_",
            "intercept_",
            "theta_",
            "sensitivity_",
            "epsilon_noise_",
            "extra_ridge_",
            "scaling_",
            "n_features_in_",
            "bounds_from_data_",
            "not_private_because_",
        ):
            setattr(self, attr, getattr(self.estimator_, attr))
        self.diagnostics_ = {**self.estimator_.diagnostics_, "clipped_share": float(clipped)}
        return self

    def fit_trial(
        self, trial: Trial, propensity: Propensity = None, *, ledger: Any = None
    ) -> DPOWL:
        """Fit on a :class:`dpcore.Trial`: its arrays, column names, arms and propensity.

        Parameters
        ----------
        trial : Trial
            From :func:`dpcore.read_trial`; ``A`` is +1 for ``trial.arms[0]`` (treated). Rows
            kept with a missing value (``incomplete="keep"``, n the file's public row count)
            get weight 0 (:meth:`dpcore.Trial.outcomes_for_fit`).
        propensity : float, array (n,) or "logistic", optional
            Needed when the trial has no propensity column and no design probability from
            its dictionary (``Trial.design_propensity``); overrides them otherwise.
        ledger : PrivacyLedger, optional
            Where the release is recorded, as in :meth:`fit`; typically
            ``PrivacyLedger.for_trial(trial)``.

        Returns
        -------
        self, with ``arms_ == trial.arms`` so that :meth:`recommend` returns arm labels.
        """
        self._check_two_arms(trial)
        p = trial.propensity if propensity is None else propensity
        if p is None:  # the dictionary's randomization probability (two of K: p_a/(p_a+p_b))
            p = trial.design_propensity
        if p is None:
            raise TypeError(
                "this trial has no propensity column: pass its randomization "
                "probability, e.g. fit_trial(trial, propensity=2/3) for 2:1"
            )
        B = trial.B
        if getattr(trial, "n_incomplete", 0):
            if self.outcome_bounds is None:
                raise ValueError(
                    "this trial keeps rows with a missing value; their OWL weight is "
                    "0 only with public outcome_bounds"
                )
            B = trial.outcomes_for_fit(self.outcome_bounds, self._direction(trial.larger_is_better))
        return self._fit_on_trial(trial, B, p, ledger=ledger)

    def _direction(self, from_trial: bool | None = None) -> bool:
        """The outcome direction: the estimator's, else the trial's dictionary's."""
        if from_trial is None:
            from_trial = getattr(self, "_trial_direction", None)
        return outcome_direction(self.larger_is_better, from_trial, self.outcome_bounds)

    def _estimated_propensity(self, X: np.ndarray, A: np.ndarray, propensity: str) -> np.ndarray:
        if propensity != "logistic":
            raise ValueError(
                f"propensity must be a number, an array or 'logistic', got {propensity!r}"
            )
        if isinstance(self.C, str):  # "worst-case" (n W) covers any propensity model
            check_choice(self.C, "C", {"worst-case"})
        elif self.C == 0:
            raise ValueError(
                "propensity='logistic' is estimated on the same data, which the privacy "
                "guarantee covers only with C > 0 ('worst-case', or H/n for large n)"
            )
        else:
            warnings.warn(
                "propensity='logistic' with a numeric C is epsilon-DP only if C bounds the "
                "propensity model's influence, which the paper's C = H/n does for large n and "
                "known constants; use C='worst-case' for a guarantee that always holds",
                PrivacyWarning,
                stacklevel=3,
            )
        return fit_logistic_propensity(X, A)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """x~' theta for new rows (features clipped to the public bounds); > 0 favours treating."""
        self._check_fitted()
        self._check_feature_names(X)
        return self.estimator_.decision_function(np.asarray(X, dtype=float))

    def _benefit_bounds(self) -> tuple[float, float] | None:
        """The outcome bounds the benefit is clipped to: the estimator's (None: B is already a
        non-negative benefit)."""
        return self.outcome_bounds

    def get_metadata_routing(self) -> Any:
        """scikit-learn's metadata request: ``fit`` and ``score`` take ``B`` and ``propensity``."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        for method in (request.fit, request.score):
            for param in ("B", "propensity"):
                method.add_request(param=param, alias=True)
        request.score.add_request(param="sample_weight", alias=True)
        return request
