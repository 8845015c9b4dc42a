"""The DP-wERM estimator (Algorithm 1): weighted ERM released by output perturbation.

The objective, its Newton solver and the sensitivity live in :mod:`dpcore.owl.werm`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import (
    CLIPPED_SHARE_WARNING,
    ClippingWarning,
    NoiseWarning,
    PrivacyWarning,
    PrivateEstimator,
    conversion_warning,
    fitted_upstream,
)
from .._validation import (
    check_binary_labels,
    check_choice,
    check_epsilon,
    check_matrix,
    check_new_rows,
    check_real,
    check_weights,
)
from ..privacy.composition import record_release, void_reasons
from ..privacy.mechanisms import output_perturbation
from .losses import LOSSES, margin_loss
from .preprocessing import FeatureScaling
from .werm_release import (
    data_bounds_with_warning,
    expected_noise_norm,
    max_coefficient_norm,
    objective_plan,
    objective_release,
    resolve_C,
    sensitivity,
    solve_for_release,
)

#: The two releases of a weighted-ERM minimiser: Algorithm 1 of the DP-wERM paper ("output")
#: and Chaudhuri, Monteleoni and Sarwate's objective perturbation ("objective").
PERTURBATIONS = ("output", "objective")


__all__ = ["PERTURBATIONS", "DPWeightedERM"]


class DPWeightedERM(PrivateEstimator):
    """Differentially private weighted ERM by output or objective perturbation.

    Output perturbation (the default, Algorithm 1 of the DP-wERM paper) minimises
    sum_i w_i l(y_i theta' x~_i) + (gamma/2) ||theta||^2 on features scaled into the unit ball
    with public bounds, then adds noise with density proportional to
    exp(-epsilon ||b|| / Delta), Delta = (C + 2W + 2 RELEASE_TOL)/gamma.

    Objective perturbation (``perturbation="objective"``; Chaudhuri, Monteleoni and Sarwate
    2011, Algorithm 2, with each record's loss weighted by w_i in [0, W]) releases the exact
    minimiser of the perturbed objective, in the mean form

        J(theta) = (1/n) sum_i w_i l(y_i theta' x~_i) + ((Lambda + Delta)/2) ||theta||^2
                   + b' theta / n,        Lambda = gamma / n,

    with b of density proportional to exp(-epsilon' ||b|| / (2W)). The weighted record's
    gradient is bounded by W and its curvature by W c (c = sup l'': 1/(2h) for the Huber
    hinge, 1/4 for the logistic loss), so CMS's conditions hold with 1 -> W, c -> W c:

        epsilon' = epsilon - log(1 + 2 W c/gamma + (W c/gamma)^2),  Delta = 0,  if >= epsilon/2;
        epsilon' = epsilon / 2,  n Delta = W c / (e^{epsilon/4} - 1) - gamma,  otherwise
        (CMS switch only at epsilon' <= 0; see
        :func:`dpcore.privacy.mechanisms.objective_perturbation_budget`).

    CMS's neighbours are replace-one, as here: the constants already count the two terms of
    the sum a replacement changes (2W in the gradient, a rank-two change of the Hessian). The
    guarantee needs known weights (C = 0) and, like output perturbation, the exact minimiser:
    the solver stops within RELEASE_TOL / (gamma + n Delta) of it, and 1% of epsilon buys
    output noise that covers that distance (:func:`dpcore.owl.werm_release.objective_release`), so
    epsilon' above is computed at 0.99 epsilon. docs/objective.md has the derivation.

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy budget (pure epsilon-DP, replace-one neighbours); ``np.inf`` fits without noise.
    gamma : float, default 1.0
        Regularization constant in the sum-form objective (the paper's gamma; lambda = gamma/n).
    weight_bound : float, default 1.0
        Public upper bound W on the weights; larger weights are clipped, with a warning.
    loss : {"huber", "logistic"}, default "huber"
    huber_h : float, default 0.5
        Smoothing width h of the Huber hinge.
    C : float or "worst-case", default 0.0
        The paper's constant for data-dependent weights: 0 if the weights are known or come
        from a model trained elsewhere, H/n for a propensity model fitted on the same data
        (see :func:`dpcore.owl.logistic_propensity_H`), "worst-case" for n W. Output
        perturbation only: objective perturbation needs C = 0.
    perturbation : {"output", "objective"}, default "output"
        How the minimiser is made private (see above). "output" is the paper's Algorithm 1.
    feature_bounds : (lower, upper), optional
        Public per-feature bounds. If omitted they are read from the data and a
        :class:`PrivacyWarning` says the guarantee is void.
    fit_intercept : bool, default True
    rng : None, int or Generator

    Attributes
    ----------
    classes_ : ndarray of shape (2,), the two labels, sorted; ``classes_[1]`` is the +1 class
    feature_names_in_ : ndarray of str, set when ``X`` is a DataFrame with string column names
    n_features_in_ : int
    coef_, intercept_ : the released rule's coefficients in original units
    theta_ : the released coefficients in the scaled space (intercept first)
    sensitivity_ : float, the L2 sensitivity used for the noise (public: it depends only
        on the hyper-parameters and n): Delta of the minimiser for output perturbation, 2W
        (of the objective's gradient, sum form) for objective perturbation
    epsilon_noise_, extra_ridge_ : float, objective perturbation's epsilon' and n Delta
        (sum form; public); epsilon and 0 for output perturbation
    scaling_ : FeatureScaling, the public preprocessing
    not_private_because_ : tuple of str, why the release has no guarantee (empty: it has one),
        in the ledger's and the rule file's words (:func:`dpcore.privacy.composition.void_reasons`)
    diagnostics_ : dict, analyst-only: ``n_iter`` and ``grad_norm`` of the solver and, when
        weights were clipped, ``clipped_share``. They are computed from the sensitive data and
        are not covered by the guarantee; never publish them with the release.

    Notes
    -----
    The privacy proof assumes the exact minimiser. The solver stops at a gradient norm of
    ``SOLVER_TOL`` and a release is refused (:class:`ConvergenceError`) above ``RELEASE_TOL``;
    a point with gradient norm g is within g/gamma of the minimiser (strong convexity), so
    the sensitivity carries 2 RELEASE_TOL/gamma of slack and the guarantee holds exactly.

    The estimator follows scikit-learn's protocol (``clone``, ``Pipeline``, ``cross_val_score``,
    ``GridSearchCV``, ``is_classifier``) without depending on scikit-learn. Each ``fit`` on the
    sensitive data is a release of epsilon: k-fold cross-validation spends k epsilon on the
    training rows, a grid search over g settings spends g k epsilon, and the scores it
    compares are read off the sensitive data outside any guarantee. Choose hyper-parameters
    on public or simulated data instead, as Algorithm 2 does (:func:`dpcore.tune_gamma`).

    References
    ----------
    .. [1] Giddings, Zhou et al., "A differentially private weighted empirical risk
       minimization procedure and its application to outcome weighted learning",
       arXiv:2307.13127 (Algorithm 1, Theorem 7).
    .. [2] Chaudhuri, Monteleoni and Sarwate, "Differentially private empirical risk
       minimization", JMLR 12 (2011).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore import DPWeightedERM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (500, 2))
    >>> y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    >>> model = DPWeightedERM(epsilon=1.0, gamma=20.0, feature_bounds=([-1, -1], [1, 1]), rng=1)
    >>> model.fit(X, y).classes_.tolist()
    ['no', 'yes']
    >>> round(model.sensitivity_, 6)  # public: it depends on W, gamma and C only
    0.1
    >>> bool(model.score(X, y) > 0.9)  # accuracy on the training rows: analyst-only
    True
    """

    _released = ("coef_", "intercept_", "theta_", "sensitivity_")
    epsilon: float
    gamma: float
    weight_bound: float
    loss: str
    huber_h: float
    C: float | str
    perturbation: str
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    fit_intercept: bool
    rng: Any

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        gamma: float = 1.0,
        weight_bound: float = 1.0,
        loss: str = "huber",
        huber_h: float = 0.5,
        C: float | str = 0.0,
        perturbation: str = "output",
        feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        fit_intercept: bool = True,
        rng: Any = None,
    ) -> None:
        self._store_params(locals())

    def _check_params(self) -> dict[str, float]:
        """Every hyper-parameter checked in one place; returns the validated numbers."""
        check_choice(self.loss, "loss", LOSSES)
        check_choice(self.perturbation, "perturbation", PERTURBATIONS)
        if self.perturbation == "objective" and (isinstance(self.C, str) or self.C != 0):
            raise ValueError(
                f"perturbation='objective' needs weights known in advance (C = 0), got "
                f"C={self.C!r}: its guarantee bounds one row's influence on its own term, "
                "and weights estimated on the same data move every term. Use "
                "perturbation='output' (the paper's Algorithm 1) with C > 0"
            )
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        if isinstance(self.C, str):
            check_choice(self.C, "C", {"worst-case"})
        else:
            check_real(self.C, "C", low=0.0, low_open=False)
        return {
            "epsilon": check_epsilon(self.epsilon),
            "gamma": check_real(self.gamma, "gamma", low=0.0),
            "W": check_real(self.weight_bound, "weight_bound", low=0.0),
            "h": check_real(self.huber_h, "huber_h", low=0.0),
        }

    #: What a ledger entry calls this release, by perturbation (DPOWL names its own).
    _ledger_name = "DP-wERM"
    #: The estimator a scikit-learn Pipeline fits (DPOWL sets itself: the pipeline's step).
    _pipeline_step: Any

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        ledger: Any = None,
    ) -> DPWeightedERM:
        """Fit and release the private rule.

        Parameters
        ----------
        X : array-like of shape (n, p)
            A DataFrame's string column names become ``feature_names_in_``.
        y : array-like of shape (n,)
            Two class labels of any kind; ``classes_`` holds them sorted and ``classes_[1]`` is
            the positive class (+1 in the objective).
        sample_weight : array of shape (n,), optional
            Non-negative weights; values above ``weight_bound`` are clipped with a warning.
            Without weights every row has weight 1, which must respect W as well.
        ledger : PrivacyLedger, optional
            The dataset's ledger (:meth:`dpcore.PrivacyLedger.for_trial`, ``for_file``). The
            release is recorded in it before any released attribute is set; a release the cap
            refuses raises :class:`dpcore.BudgetExceededError` and leaves the estimator
            unfitted. A release without a guarantee (feature bounds read from the data, an
            int seed as ``rng``, ``epsilon=inf``) is recorded as such: the total becomes ∞.

        Returns
        -------
        self

        Warns
        -----
        PrivacyWarning
            No ``feature_bounds``: they are read from the data (the guarantee is void).
        ClippingWarning
            Weights above W, or more than :data:`CLIPPED_SHARE_WARNING` of the rows with a
            feature outside its public bounds (analyst-only: a sign of bounds in the wrong
            units).
        NoiseWarning
            The noise's expected length exceeds the largest coefficient vector the public
            bounds allow (:func:`dpcore.owl.werm_release.max_coefficient_norm`): the released
            rule is then mostly noise. Raise gamma (the paper's table scaled by W), n or epsilon.
        """
        params = self._check_params()
        eps, W = params["epsilon"], params["W"]
        self._set_feature_names(X)
        X = check_matrix(X, allow_1d=False)
        n, p = X.shape
        if np.asarray(y).ndim == 2:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it is "
                "read as shape (n,): pass y.ravel()",
                conversion_warning(),
                stacklevel=2,
            )
        self.classes_, y = check_binary_labels(y, n)
        w = np.ones(n) if sample_weight is None else sample_weight
        w, clipped = check_weights(w, n, W)
        if not w.any():
            raise ValueError("sample_weight is zero for every row; there is nothing to fit")
        C = resolve_C(self.C, n, W)
        bounds = self.feature_bounds
        from_data = bounds is None
        upstream = fitted_upstream(getattr(self, "_pipeline_step", self))
        if upstream and np.isfinite(eps):
            warnings.warn(
                f"{', '.join(upstream)} before {type(getattr(self, '_pipeline_step', self)).__name__}"
                " in the pipeline learned its parameters from the data: the features the "
                "public bounds apply to are data-derived, which voids the differential-privacy "
                "guarantee. Transform with public constants only (a FunctionTransformer), or "
                "drop the step and give feature_bounds in the original units.",
                PrivacyWarning,
                stacklevel=3,
            )
            from_data = True
        if bounds is None:
            if np.isfinite(eps):
                bounds = data_bounds_with_warning(X, "feature_bounds")
            else:
                bounds = (X.min(axis=0), X.max(axis=0))
        scaling = FeatureScaling.from_bounds(bounds, p, self.fit_intercept)
        outside = (
            float(np.mean(((X < scaling.lower) | (X > scaling.upper)).any(axis=1))) if n else 0.0
        )
        if outside > CLIPPED_SHARE_WARNING:
            warnings.warn(
                f"more than {CLIPPED_SHARE_WARNING:.0%} of the rows have a feature "
                "outside its public bounds (feature_bounds) and were clipped to them: "
                "check the bounds' units (analyst-only; never publish this)",
                ClippingWarning,
                stacklevel=2,
            )
        gamma = params["gamma"]
        objective = self.perturbation == "objective"
        dim = p + int(bool(self.fit_intercept))
        if objective:
            # The noise's public plan, without data: b moves the minimiser by at most
            # ||b|| / (gamma + extra).
            eps_noise, extra = objective_plan(eps, gamma, W, self.loss, params["h"])
            delta = 2.0 * W
            noise = expected_noise_norm(dim, eps_noise, delta) / (gamma + extra)
        else:
            delta = float(sensitivity(W, gamma, C))
            eps_noise, extra = eps, 0.0
            noise = expected_noise_norm(dim, eps, delta)
        loss_at_zero = float(
            np.asarray(margin_loss(self.loss, params["h"])(np.zeros(1), derivatives=False))[0]
        )
        room = max_coefficient_norm(n, W, gamma, loss_at_zero)
        if noise > room:
            warnings.warn(
                f"the noise's expected length {noise:.3g} exceeds {room:.3g}, the largest "
                f"coefficient vector the public bounds allow (n = {n}, W = {W:g}, "
                f"gamma = {gamma:g}, epsilon = {eps:g}): the rule will be mostly noise. "
                "Use a larger gamma (gamma='paper' in DPOWL: the paper's table scaled "
                "by W), more rows or a larger epsilon",
                NoiseWarning,
                stacklevel=2,
            )
        if objective:
            theta, info = objective_release(
                scaling.transform(X), y, w, gamma, self.loss, params["h"], eps, W, rng=self.rng
            )
            diagnostics = {"n_iter": int(info["n_iter"]), "grad_norm": float(info["grad_norm"])}
        else:
            theta_hat, diagnostics = solve_for_release(
                scaling.transform(X), y, w, gamma, self.loss, params["h"]
            )
            theta = output_perturbation(theta_hat, eps, delta, rng=self.rng)
        reasons = tuple(void_reasons(bool(from_data), eps, self.rng))
        if ledger is not None:
            mechanism = f"{self._ledger_name} ({self.perturbation} perturbation)"
            record_release(ledger, mechanism, {"release": eps}, reasons)
        self.bounds_from_data_ = bool(from_data)
        self.not_private_because_ = reasons
        self.scaling_ = scaling
        self.diagnostics_ = {
            **diagnostics,
            "clipped_share": clipped,
            "outside_bounds_share": outside,
        }
        self.sensitivity_ = delta
        self.epsilon_noise_ = float(eps_noise)
        self.extra_ridge_ = float(extra)
        self.theta_ = theta
        intercept, self.coef_ = self.scaling_.to_original(self.theta_)
        self.intercept_ = float(intercept)
        self.n_features_in_ = p
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """x~' theta for new rows (features clipped to the same public bounds).

        Positive values favour ``classes_[1]``.
        """
        self._check_fitted()
        self._check_feature_names(X)
        X = check_new_rows(X, self.n_features_in_, type(self).__name__)
        return self.scaling_.transform(X) @ self.theta_

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``classes_[1]`` where the decision function is positive, else ``classes_[0]``.

        Ties go to ``classes_[0]`` (-1 for labels -1 / +1).
        """
        positive = self.decision_function(X) > 0  # checks the fit first
        return self.classes_[positive.astype(int)]

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Share of rows predicted correctly (weighted by ``sample_weight`` when given).

        Scoring on the sensitive data is not covered by the guarantee: see the class Notes.
        """
        hits = (self.predict(X) == np.asarray(y).reshape(-1)).astype(float)
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return float(np.average(hits, weights=weights))
