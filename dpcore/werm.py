"""Weighted empirical risk minimisation with output perturbation (DP-wERM, Algorithm 1).

The objective, in the reference code's scaling (spec §1), is

    F(theta) = sum_i w_i l(y_i theta' x~_i) + (gamma / 2) ||theta||^2,

which is gamma-strongly convex; replacing one record (||x~|| <= 1, |l'| <= 1, w <= W) moves
the minimiser by at most 2W/gamma, so Delta = (C + 2W)/gamma with the paper's constant C.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ._validation import (
    check_bounds,
    check_choice,
    check_epsilon,
    check_labels,
    check_matrix,
    check_real,
    check_weights,
)
from .losses import LOSSES, margin_loss
from .mechanisms import l2_gamma_noise


class PrivacyWarning(UserWarning):
    """A choice that voids or weakens the differential-privacy guarantee."""


class ConvergenceError(RuntimeError):
    """The weighted-ERM solver did not reach the exact minimiser the privacy proof assumes."""


# --------------------------------------------------------------------------------------------
# Preprocessing with public bounds (spec §3)


@dataclass(frozen=True)
class FeatureScaling:
    """Map features into the unit ball using public bounds only.

    Columns are clipped to [lower, upper], divided by max(|lower|, |upper|), and the row by
    sqrt(d), d counting the intercept column (bounds [1, 1]) when there is one.
    """

    lower: np.ndarray
    upper: np.ndarray
    fit_intercept: bool = True

    @classmethod
    def from_bounds(cls, bounds, p, fit_intercept=True, name="feature_bounds"):
        lower, upper = check_bounds(bounds, p, name)
        span = np.maximum(np.abs(lower), np.abs(upper))
        if (span == 0).any():
            j = int(np.argmax(span == 0))
            raise ValueError(f"{name}: column {j} has bounds [0, 0]; it carries no information")
        return cls(lower, upper, bool(fit_intercept))

    @property
    def d(self):
        return self.lower.size + self.fit_intercept

    @property
    def scale(self):
        """Divisor of each column of the augmented design (intercept first)."""
        span = np.maximum(np.abs(self.lower), np.abs(self.upper))
        if self.fit_intercept:
            span = np.concatenate(([1.0], span))
        return span * np.sqrt(self.d)

    def transform(self, X):
        """Clip, add the intercept column, scale; works on (..., n, p) arrays."""
        X = np.clip(X, self.lower, self.upper)
        if self.fit_intercept:
            X = np.concatenate((np.ones(X.shape[:-1] + (1,)), X), axis=-1)
        return X / self.scale

    def to_original(self, theta):
        """Coefficients (intercept, coef) in original units from scaled ones, shape (..., d)."""
        theta = np.asarray(theta) / self.scale
        if self.fit_intercept:
            return theta[..., 0], theta[..., 1:]
        return np.zeros(theta.shape[:-1]), theta


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


def werm_objective(theta, X, y, w, gamma, loss="huber", h=0.5):
    """Objective F, gradient and Hessian for a batch; shapes (B, d), (B, n, d), (B, n), (B,)."""
    return _Batch(np.asarray(X, float), y, w, gamma, loss, h)(np.asarray(theta, float))


def solve_werm(X, y, w, gamma, loss="huber", h=0.5, *, tol=1e-9, max_iter=500, theta0=None):
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


def sensitivity(weight_bound, gamma, C=0.0):
    """L2 global sensitivity of the weighted-ERM minimiser: (C + 2W)/gamma (Theorem 7)."""
    return (C + 2.0 * weight_bound) / gamma


def resolve_C(C, n, weight_bound):
    """The paper's constant C from a number or "worst-case" (= n W, Theorem 7 case iii)."""
    if isinstance(C, str):
        check_choice(C, "C", {"worst-case"})
        return n * weight_bound
    return check_real(C, "C", low=0.0, low_open=False)


def data_bounds_with_warning(X, name):
    """Bounds read off the data: allowed only with a warning that the guarantee is void."""
    warnings.warn(
        f"{name} were not given, so they were taken from the data; a bound derived from the "
        "data voids the differential-privacy guarantee. Pass public bounds.",
        PrivacyWarning,
        stacklevel=3,
    )
    return X.min(axis=0), X.max(axis=0)


class DPWeightedERM:
    """Differentially private weighted ERM by output perturbation (Algorithm 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget (pure epsilon-DP, replace-one neighbours); ``np.inf`` fits without noise.
    gamma : float
        Regularization constant in the sum-form objective (the paper's gamma; lambda = gamma/n).
    weight_bound : float
        Public upper bound W on the weights; larger weights are clipped, with a warning.
    loss : {"huber", "logistic"}
    huber_h : float
        Smoothing width h of the Huber hinge.
    C : float or "worst-case"
        The paper's constant for data-dependent weights: 0 if the weights are known or come
        from a model trained elsewhere, H/n for a propensity model fitted on the same data
        (see :func:`dpcore.owl.logistic_propensity_H`), "worst-case" for n W.
    feature_bounds : (lower, upper), optional
        Public per-feature bounds. If omitted they are read from the data and a
        :class:`PrivacyWarning` says the guarantee is void.
    fit_intercept : bool
    rng : None, int or Generator

    Attributes
    ----------
    coef_, intercept_ : coefficients of the released rule in original units
    theta_ : released coefficients in the scaled space (intercept first)
    sensitivity_ : float, the L2 sensitivity Delta used for the noise
    scaling_ : FeatureScaling
    n_iter_ : int, Newton iterations
    """

    def __init__(self, epsilon=1.0, gamma=1.0, weight_bound=1.0, loss="huber", huber_h=0.5,
                 C=0.0, feature_bounds=None, fit_intercept=True, rng=None):
        self.epsilon = epsilon
        self.gamma = gamma
        self.weight_bound = weight_bound
        self.loss = loss
        self.huber_h = huber_h
        self.C = C
        self.feature_bounds = feature_bounds
        self.fit_intercept = fit_intercept
        self.rng = rng

    def _check_params(self):
        eps = check_epsilon(self.epsilon)
        gamma = check_real(self.gamma, "gamma", low=0.0)
        W = check_real(self.weight_bound, "weight_bound", low=0.0)
        check_choice(self.loss, "loss", LOSSES)
        h = check_real(self.huber_h, "huber_h", low=0.0)
        return eps, gamma, W, h

    def fit(self, X, y, sample_weight=None):
        """Fit the private rule; ``y`` in {-1, +1}, ``sample_weight`` in [0, W]."""
        eps, gamma, W, h = self._check_params()
        X = check_matrix(X)
        n, p = X.shape
        y = check_labels(y, n)
        # Unweighted rows have weight 1: it too must respect W, or the noise would be too small.
        w = check_weights(np.ones(n) if sample_weight is None else sample_weight, n, W)
        C = resolve_C(self.C, n, W)
        bounds = self.feature_bounds
        if bounds is None:
            if np.isfinite(eps):
                bounds = data_bounds_with_warning(X, "feature_bounds")
            else:
                bounds = (X.min(axis=0), X.max(axis=0))
        self.scaling_ = FeatureScaling.from_bounds(bounds, p, self.fit_intercept)
        theta_hat, info = solve_werm(self.scaling_.transform(X), y, w, gamma, self.loss, h)
        self.sensitivity_ = sensitivity(W, gamma, C)
        noise = l2_gamma_noise(theta_hat.size, eps, self.sensitivity_, rng=self.rng)
        self.theta_ = theta_hat + noise
        self.intercept_, self.coef_ = self.scaling_.to_original(self.theta_)
        self.intercept_ = float(self.intercept_)
        self.n_iter_ = int(info["n_iter"])
        self.n_features_in_ = p
        return self

    def decision_function(self, X):
        """x~' theta for new rows (features clipped to the same public bounds)."""
        X = check_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns; the model was fitted on {self.n_features_in_}")
        return self.scaling_.transform(X) @ self.theta_

    def predict(self, X):
        """+1 where the decision function is positive, else -1 (ties go to -1)."""
        return np.where(self.decision_function(X) > 0, 1, -1)
