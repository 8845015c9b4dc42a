"""Weighted empirical risk minimisation with output perturbation (DP-wERM, Algorithm 1).

The objective, in the reference code's scaling (spec §1), is

    F(theta) = sum_i w_i l(y_i theta' x~_i) + (gamma / 2) ||theta||^2,

which is gamma-strongly convex; replacing one record (||x~|| <= 1, |l'| <= 1, w <= W) moves
the minimiser by at most 2W/gamma, so Delta = (C + 2W)/gamma with the paper's constant C. A
point whose gradient norm is at most g lies within g/gamma of the exact minimiser, so releasing
solver output with g <= RELEASE_TOL adds 2 RELEASE_TOL/gamma to Delta (one slack per dataset).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import ConvergenceError, PrivacyWarning, PrivateEstimator, conversion_warning
from .._typing import FloatOrArray
from .._validation import (
    check_binary_labels,
    check_choice,
    check_epsilon,
    check_matrix,
    check_real,
    check_weights,
)
from ..privacy.mechanisms import output_perturbation
from .losses import LOSSES, margin_loss
from .preprocessing import FeatureScaling

# The solver aims at this gradient norm; a release accepts at most RELEASE_TOL (fixed in
# advance, never read from the data) and widens the sensitivity by the slack that allows.
SOLVER_TOL = 1e-9
RELEASE_TOL = 1e-6


# --------------------------------------------------------------------------------------------
# Batched Newton solver


class _Batch:
    """A batch of weighted-ERM problems with the transposed design kept for fast products."""

    def __init__(self, X, y, w, gamma, loss, h):
        self.X = X
        self.XT = np.ascontiguousarray(np.swapaxes(X, -1, -2))
        self.y, self.w = y, w
        self.gamma = np.asarray(gamma, dtype=float).reshape(-1)
        self.lossf = margin_loss(loss, h)
        self.eye = np.eye(X.shape[-1])

    def __call__(self, theta, derivatives=True):
        z = self.y * np.matmul(self.X, theta[..., None])[..., 0]
        ridge = 0.5 * self.gamma * np.sum(theta * theta, axis=-1)
        if not derivatives:
            return np.sum(self.w * self.lossf(z, False), axis=-1) + ridge
        value, d1, d2 = self.lossf(z)
        f = np.sum(self.w * value, axis=-1) + ridge
        grad = np.matmul(self.XT, (self.w * self.y * d1)[..., None])[..., 0]
        grad += self.gamma[:, None] * theta
        hess = np.matmul(self.XT * (self.w * d2)[:, None, :], self.X)
        hess += self.gamma[:, None, None] * self.eye
        return f, grad, hess


def werm_objective(theta: ArrayLike, X: ArrayLike, y: ArrayLike, w: ArrayLike, gamma: ArrayLike,
                   loss: str = "huber",
                   h: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Objective F, gradient and Hessian for a batch; shapes (B, d), (B, n, d), (B, n), (B,)."""
    return _Batch(np.asarray(X, float), y, w, gamma, loss, h)(np.asarray(theta, float))


def solve_werm(X: ArrayLike, y: ArrayLike, w: ArrayLike, gamma: ArrayLike, loss: str = "huber",
               h: float = 0.5, *, tol: float = SOLVER_TOL, max_iter: int = 500,
               theta0: ArrayLike | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Minimise sum_i w_i l(y_i theta'x_i) + gamma/2 ||theta||^2 for a batch of problems.

    A damped Newton method with an Armijo backtracking line search, vectorized over the batch.
    The Huber hinge is piecewise quadratic, so once the set of rows in each piece settles a
    full Newton step lands on the exact minimiser; the logistic loss converges quadratically.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Scaled design (rows in the unit ball for the privacy guarantee).
    y : ndarray, shape (n,) or (B, n)
        Labels in {-1, +1}.
    w : ndarray, shape (n,) or (B, n)
        Non-negative weights.
    gamma : float or ndarray of shape (B,)
        Regularization constant(s), > 0.
    loss : {"huber", "logistic"}
    h : float
        Huber smoothing width.
    tol : float
        Stop when every problem's gradient norm is at most ``tol`` (absolute, sum scale).
    max_iter : int
    theta0 : ndarray of shape (d,) or (B, d), optional
        Start; zero by default.

    Returns
    -------
    theta : ndarray, shape (d,) or (B, d)
    info : dict with ``n_iter`` and ``grad_norm`` (per problem)

    Raises
    ------
    ConvergenceError
        If some problem's gradient norm is above ``tol`` after ``max_iter`` iterations and
        rounding does not explain it.
    """
    single = np.ndim(X) == 2 and np.ndim(y) == 1 and np.ndim(w) == 1 and np.ndim(gamma) == 0
    X, y, w = (np.asarray(a, dtype=float) for a in (X, y, w))
    B = max(a.shape[0] if a.ndim == k else 1 for a, k in ((X, 3), (y, 2), (w, 2)))
    B = max(B, np.size(gamma))
    n, d = X.shape[-2:]
    X = np.broadcast_to(X, (B, n, d))
    y = np.broadcast_to(y, (B, n))
    w = np.broadcast_to(w, (B, n))
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (B,))
    theta = np.zeros((B, d)) if theta0 is None else np.array(np.broadcast_to(theta0, (B, d)))

    problem = _Batch(X, y, w, gamma, loss, h)
    f, grad, hess = problem(theta)
    gnorm = np.linalg.norm(grad, axis=1)
    n_iter = np.zeros(B, dtype=int)
    for _ in range(max_iter):
        floor = _rounding_floor(w, gamma, theta)
        active = gnorm > np.maximum(tol, floor)
        if not active.any():
            break
        step = -np.linalg.solve(hess, grad[..., None])[..., 0]
        step[~active] = 0.0
        slope = np.sum(grad * step, axis=1)
        # Try the full Newton step with derivatives (it is almost always accepted); backtrack
        # (Armijo, values only) just for the problems where it is not.
        f_new, grad_new, hess_new = problem(theta + step)
        t = np.ones(B)
        bad = active & ~_armijo(f_new, f, t, slope)
        for _ in range(60):
            if not bad.any():
                break
            t[bad] *= 0.5
            f_new = problem(theta + t[:, None] * step, derivatives=False)
            bad &= ~_armijo(f_new, f, t, slope)
        n_iter += active
        if (t < 1).any():
            theta = theta + t[:, None] * step
            f, grad, hess = problem(theta)
        else:
            theta = theta + step
            f, grad, hess = f_new, grad_new, hess_new
        gnorm = np.linalg.norm(grad, axis=1)
    floor = _rounding_floor(w, gamma, theta)
    if (gnorm > np.maximum(tol, floor)).any():
        worst = float(gnorm.max())
        raise ConvergenceError(
            f"Newton solver for weighted ERM stopped after {max_iter} iterations with gradient "
            f"norm {worst:.3g} > tol={tol:g}; the privacy guarantee needs the exact minimiser"
        )
    info = {"n_iter": n_iter, "grad_norm": gnorm}
    if single:
        return theta[0], {k: v[0] for k, v in info.items()}
    return theta, info


def _rounding_floor(w, gamma, theta):
    """Gradient norm that float64 rounding alone can leave: the gradient sums n terms <= w_i."""
    return 64 * np.finfo(float).eps * (w.sum(axis=1) + gamma * (1 + np.abs(theta).sum(axis=1)))


def _armijo(f_new, f, t, slope):
    return f_new <= f + 1e-4 * t * slope + 1e-14 * np.abs(f)


# --------------------------------------------------------------------------------------------
# Sensitivity and the estimator


def sensitivity(weight_bound: FloatOrArray, gamma: FloatOrArray, C: FloatOrArray = 0.0) -> FloatOrArray:
    """L2 sensitivity of a released weighted-ERM solution: (C + 2W + 2 RELEASE_TOL)/gamma.

    (C + 2W)/gamma bounds how far replacing one record moves the exact minimiser (Theorem 7);
    the solver's stopping rule leaves each released point within RELEASE_TOL/gamma of its
    exact minimiser, hence the slack.
    """
    return (C + 2.0 * weight_bound + 2.0 * RELEASE_TOL) / gamma


def resolve_C(C: float | str, n: int, weight_bound: float) -> float:
    """The paper's constant C from a number or "worst-case" (= n W, Theorem 7 case iii)."""
    if isinstance(C, str):
        check_choice(C, "C", {"worst-case"})
        return n * weight_bound
    return check_real(C, "C", low=0.0, low_open=False)


def data_bounds_with_warning(X: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Bounds read off the data: allowed only with a warning that the guarantee is void."""
    warnings.warn(
        f"{name} were not given, so they were taken from the data; a bound derived from the "
        "data voids the differential-privacy guarantee. Pass public bounds.",
        PrivacyWarning,
        stacklevel=3,
    )
    return X.min(axis=0), X.max(axis=0)


def solve_for_release(X: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float, loss: str,
                      h: float) -> tuple[np.ndarray, dict[str, Any]]:
    """The exact minimiser and the solver's diagnostics, refused past RELEASE_TOL."""
    theta_hat, info = solve_werm(X, y, w, gamma, loss, h)
    if info["grad_norm"] > RELEASE_TOL:
        raise ConvergenceError(
            f"the solver's gradient norm {info['grad_norm']:.3g} exceeds the release tolerance "
            f"{RELEASE_TOL:g} that the sensitivity allows for; nothing was released"
        )
    return theta_hat, {"n_iter": int(info["n_iter"]), "grad_norm": float(info["grad_norm"])}


class DPWeightedERM(PrivateEstimator):
    """Differentially private weighted ERM by output perturbation (Algorithm 1).

    Minimises sum_i w_i l(y_i theta' x~_i) + (gamma/2) ||theta||^2 on features scaled into the
    unit ball with public bounds, then adds noise with density proportional to
    exp(-epsilon ||b|| / Delta), Delta = (C + 2W + 2 RELEASE_TOL)/gamma.

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
        (see :func:`dpcore.owl.logistic_propensity_H`), "worst-case" for n W.
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
    sensitivity_ : float, the L2 sensitivity Delta used for the noise (public: it depends only
        on the hyper-parameters and n)
    scaling_ : FeatureScaling, the public preprocessing
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
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    fit_intercept: bool
    rng: Any

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, weight_bound: float = 1.0,
                 loss: str = "huber", huber_h: float = 0.5, C: float | str = 0.0,
                 feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
                 fit_intercept: bool = True, rng: Any = None) -> None:
        self._store_params(locals())

    def _check_params(self) -> dict[str, float]:
        """Every hyper-parameter checked in one place; returns the validated numbers."""
        check_choice(self.loss, "loss", LOSSES)
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

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> DPWeightedERM:
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

        Returns
        -------
        self
        """
        params = self._check_params()
        eps, W = params["epsilon"], params["W"]
        self._set_feature_names(X)
        X = check_matrix(X, allow_1d=False)
        n, p = X.shape
        if np.asarray(y).ndim == 2:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                          "read as shape (n,): pass y.ravel()",
                          conversion_warning(), stacklevel=2)
        self.classes_, y = check_binary_labels(y, n)
        w = np.ones(n) if sample_weight is None else sample_weight
        w, clipped = check_weights(w, n, W)
        if not w.any():
            raise ValueError("sample_weight is zero for every row; there is nothing to fit")
        C = resolve_C(self.C, n, W)
        bounds = self.feature_bounds
        if bounds is None:
            if np.isfinite(eps):
                bounds = data_bounds_with_warning(X, "feature_bounds")
            else:
                bounds = (X.min(axis=0), X.max(axis=0))
        self.scaling_ = FeatureScaling.from_bounds(bounds, p, self.fit_intercept)
        theta_hat, self.diagnostics_ = solve_for_release(
            self.scaling_.transform(X), y, w, params["gamma"], self.loss, params["h"])
        self.diagnostics_["clipped_share"] = clipped
        self.sensitivity_ = sensitivity(W, params["gamma"], C)
        self.theta_ = output_perturbation(theta_hat, eps, self.sensitivity_, rng=self.rng)
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
        X = check_matrix(X, allow_1d=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        return self.scaling_.transform(X) @ self.theta_

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``classes_[1]`` where the decision function is positive, else ``classes_[0]``.

        Ties go to ``classes_[0]`` (-1 for labels -1 / +1).
        """
        positive = self.decision_function(X) > 0  # checks the fit first
        return self.classes_[positive.astype(int)]

    def score(self, X: ArrayLike, y: ArrayLike,
              sample_weight: ArrayLike | None = None) -> float:
        """Share of rows predicted correctly (weighted by ``sample_weight`` when given).

        Scoring on the sensitive data is not covered by the guarantee: see the class Notes.
        """
        hits = (self.predict(X) == np.asarray(y).reshape(-1)).astype(float)
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return float(np.average(hits, weights=weights))
