"""Weighted empirical risk minimisation: the objective and its batched Newton solver.

The objective, in the reference code's scaling (docs/spec/dp_owl.md §1), is

    F(theta) = sum_i w_i l(y_i theta' x~_i) + (gamma / 2) ||theta||^2,

which is gamma-strongly convex. :func:`solve_werm` finds its exact minimiser for a batch of
problems at once (one design shared by many weights or gammas, or one data set per problem),
optionally with objective perturbation's linear term b'theta. Releasing the minimiser with
differential privacy (its sensitivity, output and objective perturbation) is
:mod:`dpcore.owl.werm_release`; the estimator is :class:`dpcore.DPWeightedERM`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._estimator import ConvergenceError
from .losses import margin_loss

__all__ = ["SOLVER_TOL", "solve_werm", "werm_objective"]

# The solver aims at this gradient norm (a release accepts at most
# dpcore.owl.werm_release.RELEASE_TOL).
SOLVER_TOL = 1e-9
# Largest n d^2 for which a batch sharing one design keeps all products x_i x_i' (64 MB).
_SHARED_PAIRS_LIMIT = 2**23


# --------------------------------------------------------------------------------------------
# Batched Newton solver


class _Batch:
    """A batch of weighted-ERM problems with the transposed design kept for fast products."""

    def __init__(self, X, y, w, gamma, loss, h, linear=None):
        self.X = X
        # Objective perturbation's term b'theta (None: the plain objective). It leaves the
        # Hessian unchanged, so the Newton steps stay exact on the Huber hinge's pieces.
        self.linear = linear
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
        if self.linear is not None:
            ridge = ridge + np.sum(self.linear * theta, axis=-1)
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
        if self.linear is not None:
            grad += self.linear
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
    linear: ArrayLike | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Minimise sum_i w_i l(y_i theta'x_i) + gamma/2 ||theta||^2 [+ b'theta] for a batch.

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
    linear : ndarray of shape (d,) or (B, d), optional
        The vector b of a linear term b'theta added to the objective (objective perturbation,
        :func:`objective_release`); none by default.

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
    single = (
        np.ndim(X) == 2
        and np.ndim(y) == 1
        and np.ndim(w) == 1
        and np.ndim(gamma) == 0
        and (linear is None or np.ndim(linear) <= 1)
    )
    X, y, w = (np.asarray(a, dtype=float) for a in (X, y, w))
    B = max(a.shape[0] if a.ndim == k else 1 for a, k in ((X, 3), (y, 2), (w, 2)))
    B = max(B, np.size(gamma))
    if linear is not None and np.ndim(linear) == 2:
        B = max(B, np.shape(linear)[0])
    n, d = X.shape[-2:]
    if not (X.ndim == 2 and B > 1 and n * d * d <= _SHARED_PAIRS_LIMIT):
        X = np.broadcast_to(X, (B, n, d))
    y = np.broadcast_to(y, (B, n))
    w = np.broadcast_to(w, (B, n))
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (B,))
    theta = np.zeros((B, d)) if theta0 is None else np.array(np.broadcast_to(theta0, (B, d)))
    if linear is not None:
        linear = np.broadcast_to(np.asarray(linear, dtype=float), (B, d))

    problem = _Batch(X, y, w, gamma, loss, h, linear)
    f, grad, hess = problem(theta)
    gnorm = np.linalg.norm(grad, axis=1)
    n_iter = np.zeros(B, dtype=int)
    for _ in range(max_iter):
        floor = _rounding_floor(w, gamma, theta, linear)
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
    floor = _rounding_floor(w, gamma, theta, linear)
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


def _rounding_floor(w, gamma, theta, linear=None):
    """Gradient norm that float64 rounding alone can leave: the gradient sums n terms <= w_i."""
    scale = w.sum(axis=1) + gamma * (1 + np.abs(theta).sum(axis=1))
    if linear is not None:
        scale = scale + np.abs(linear).sum(axis=1)
    return 64 * np.finfo(float).eps * scale


def _armijo(f_new, f, t, slope):
    return f_new <= f + 1e-4 * t * slope + 1e-14 * np.abs(f)
