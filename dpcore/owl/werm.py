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

from .._estimator import ConvergenceError, PrivacyWarning
from .._typing import FloatOrArray
from .._validation import (
    check_choice,
    check_real,
)
from .losses import margin_loss

# The solver aims at this gradient norm; a release accepts at most RELEASE_TOL (fixed in
# advance, never read from the data) and widens the sensitivity by the slack that allows.
SOLVER_TOL = 1e-9
RELEASE_TOL = 1e-6
# Largest n d^2 for which a batch sharing one design keeps all products x_i x_i' (64 MB).
_SHARED_PAIRS_LIMIT = 2**23


# --------------------------------------------------------------------------------------------
# Batched Newton solver


class _Batch:
    """A batch of weighted-ERM problems with the transposed design kept for fast products."""

    def __init__(self, X, y, w, gamma, loss, h):
        self.X = X
        # A design shared by the whole batch (one data set, many weights or gammas): every
        # Hessian is then one row of (w * l'') @ [x_i x_i'], a single large matrix product.
        self.shared = X.ndim == 2
        if self.shared:
            self.pairs = (X[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1)
        else:
            self.XT = np.ascontiguousarray(np.swapaxes(X, -1, -2))
        self.y, self.w = y, w
        self.gamma = np.asarray(gamma, dtype=float).reshape(-1)
        self.lossf = margin_loss(loss, h)
        self.eye = np.eye(X.shape[-1])

    def __call__(self, theta, derivatives=True):
        if self.shared:
            z = self.y * (theta @ self.X.T)
        else:
            z = self.y * np.matmul(self.X, theta[..., None])[..., 0]
        ridge = 0.5 * self.gamma * np.sum(theta * theta, axis=-1)
        if not derivatives:
            return np.sum(self.w * self.lossf(z, False), axis=-1) + ridge
        value, d1, d2 = self.lossf(z)
        f = np.sum(self.w * value, axis=-1) + ridge
        if self.shared:
            d = self.X.shape[1]
            grad = (self.w * self.y * d1) @ self.X
            hess = ((self.w * d2) @ self.pairs).reshape(-1, d, d)
        else:
            grad = np.matmul(self.XT, (self.w * self.y * d1)[..., None])[..., 0]
            hess = np.matmul(self.XT * (self.w * d2)[:, None, :], self.X)
        grad += self.gamma[:, None] * theta
        hess += self.gamma[:, None, None] * self.eye
        return f, grad, hess


def werm_objective(
    theta: ArrayLike,
    X: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    gamma: ArrayLike,
    loss: str = "huber",
    h: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Objective F, gradient and Hessian for a batch; shapes (B, d), (B, n, d), (B, n), (B,)."""
    return _Batch(np.asarray(X, float), y, w, gamma, loss, h)(np.asarray(theta, float))


def solve_werm(
    X: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    gamma: ArrayLike,
    loss: str = "huber",
    h: float = 0.5,
    *,
    tol: float = SOLVER_TOL,
    max_iter: int = 500,
    theta0: ArrayLike | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
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
    if not (X.ndim == 2 and B > 1 and n * d * d <= _SHARED_PAIRS_LIMIT):
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


def sensitivity(
    weight_bound: FloatOrArray, gamma: FloatOrArray, C: FloatOrArray = 0.0
) -> FloatOrArray:
    """L2 sensitivity of a released weighted-ERM solution: (C + 2W + 2 RELEASE_TOL)/gamma.

    (C + 2W)/gamma bounds how far replacing one record moves the exact minimiser (Theorem 7);
    the solver's stopping rule leaves each released point within RELEASE_TOL/gamma of its
    exact minimiser, hence the slack.
    """
    return (C + 2.0 * weight_bound + 2.0 * RELEASE_TOL) / gamma


def max_coefficient_norm(n: int, weight_bound: float, gamma: float, loss_at_zero: float) -> float:
    """The largest ||theta*|| the public bounds allow the exact minimiser.

    With weights in [0, W], a 1-Lipschitz loss and features in the unit ball, the optimality
    condition gamma theta* = -sum w_i l'(.) y_i x_i gives ||theta*|| <= n W / gamma, and
    comparing the objective at theta* with its value at 0 gives
    ||theta*|| <= sqrt(2 n W l(0) / gamma). Public values only.
    """
    return float(
        min(n * weight_bound / gamma, np.sqrt(2.0 * n * weight_bound * loss_at_zero / gamma))
    )


def expected_noise_norm(dim: int, epsilon: float, delta: float) -> float:
    """E||b|| of output perturbation's noise, density prop. to exp(-epsilon ||b|| / delta)
    in ``dim`` dimensions: ||b|| ~ Gamma(dim, delta / epsilon)."""
    return 0.0 if np.isinf(epsilon) else float(dim * delta / epsilon)


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


def solve_for_release(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float, loss: str, h: float
) -> tuple[np.ndarray, dict[str, Any]]:
    """The exact minimiser and the solver's diagnostics, refused past RELEASE_TOL."""
    theta_hat, info = solve_werm(X, y, w, gamma, loss, h)
    if info["grad_norm"] > RELEASE_TOL:
        raise ConvergenceError(
            f"the solver's gradient norm {info['grad_norm']:.3g} exceeds the release tolerance "
            f"{RELEASE_TOL:g} that the sensitivity allows for; nothing was released"
        )
    return theta_hat, {"n_iter": int(info["n_iter"]), "grad_norm": float(info["grad_norm"])}
