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
from .._typing import FloatOrArray, Seed
from .._validation import (
    check_choice,
    check_real,
)
from ..privacy.mechanisms import (
    l2_gamma_noise,
    objective_perturbation_budget,
    objective_perturbation_noise,
)
from .losses import curvature_bound, margin_loss

# The solver aims at this gradient norm; a release accepts at most RELEASE_TOL (fixed in
# advance, never read from the data) and widens the sensitivity by the slack that allows.
SOLVER_TOL = 1e-9
RELEASE_TOL = 1e-6
# Objective perturbation spends this share of epsilon on the output noise that covers the
# solver's distance from the exact minimiser (objective_release); the rest on b.
OBJECTIVE_SLACK_SHARE = 0.01
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


def objective_plan(
    epsilon: float, gamma: float, weight_bound: float, loss: str = "huber", h: float = 0.5
) -> tuple[float, float]:
    """Objective perturbation's public plan: (epsilon', extra ridge) of :func:`objective_release`.

    CMS's budget (:func:`dpcore.privacy.mechanisms.objective_perturbation_budget`) at
    (1 - OBJECTIVE_SLACK_SHARE) epsilon, with the per-record gradient bound W and curvature
    bound W c. Public: it depends on the hyper-parameters only.
    """
    W = float(weight_bound)
    return objective_perturbation_budget(
        _objective_epsilon(epsilon), gamma, W, W * curvature_bound(loss, h)
    )


def _objective_epsilon(epsilon):
    return epsilon if np.isinf(epsilon) else (1.0 - OBJECTIVE_SLACK_SHARE) * epsilon


def objective_release(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    gamma: float,
    loss: str,
    h: float,
    epsilon: float,
    weight_bound: float,
    size: tuple[int, ...] = (),
    rng: Seed = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Weighted ERM released by objective perturbation (docs/objective.md): pure epsilon-DP.

    Minimises sum_i w_i l(y_i theta' x_i) + ((gamma + extra)/2) ||theta||^2 + b'theta with
    b of density proportional to exp(-epsilon' ||b|| / (2W)), where epsilon' and ``extra``
    are Chaudhuri, Monteleoni and Sarwate's (Algorithm 2) for a per-record gradient bound W
    and curvature bound W c (c = sup l'', :func:`dpcore.owl.losses.curvature_bound`), at the
    budget (1 - OBJECTIVE_SLACK_SHARE) epsilon. The solver stops within
    RELEASE_TOL / (gamma + extra) of the exact minimiser, a distance that depends on the data;
    output noise of sensitivity 2 RELEASE_TOL / (gamma + extra) at OBJECTIVE_SLACK_SHARE
    epsilon covers it, so the release is epsilon-DP, not only the exact minimiser.

    Parameters
    ----------
    X, y, w : scaled design (rows in the unit ball), labels in {-1, +1}, weights in [0, W]
        (n, d), (n,), (n,), shared by every release of the batch; or (B, n, d), (B, n),
        (B, n) with ``size=(B,)``, one data set per release (a simulation's trials).
    gamma : float
        The sum-form ridge (lambda = gamma / n).
    loss, h : the margin loss and the Huber width.
    epsilon : float
        ``np.inf``: no noise and no extra ridge (the plain minimiser).
    weight_bound : float
        The public W.
    size : tuple of int
        Batch shape of independent releases (a simulation's repetitions); () for one.
    rng : None, int or Generator

    Returns
    -------
    theta : ndarray of shape ``size + (d,)``
    info : dict, public ``epsilon_noise`` (epsilon' of b), ``extra_ridge`` and
        ``noise_scale`` (2W / epsilon'), and the analyst-only ``n_iter``, ``grad_norm``

    Raises
    ------
    ConvergenceError
        A gradient norm above RELEASE_TOL: nothing is released.
    """
    rng = np.random.default_rng(rng)
    d = X.shape[-1]
    size = tuple(size)
    W = float(weight_bound)
    infinite = np.isinf(epsilon)
    K = W * curvature_bound(loss, h)
    b, eps_noise, extra = objective_perturbation_noise(
        d, _objective_epsilon(epsilon), gamma, W, K, size, rng
    )
    ridge = gamma + extra
    linear = b if len(size) <= 1 else b.reshape(-1, d)
    theta, info = solve_werm(X, y, w, ridge, loss, h, linear=linear)
    grad_norm = np.atleast_1d(info["grad_norm"])
    if (grad_norm > RELEASE_TOL).any():
        raise ConvergenceError(
            f"the solver's gradient norm {grad_norm.max():.3g} exceeds the release tolerance "
            f"{RELEASE_TOL:g} that the privacy guarantee allows for; nothing was released"
        )
    theta = theta.reshape(size + (d,))
    if not infinite:
        slack = 2.0 * RELEASE_TOL / ridge
        theta = theta + l2_gamma_noise(d, OBJECTIVE_SLACK_SHARE * epsilon, slack, size, rng)
    return theta, {
        "epsilon_noise": float(eps_noise),
        "extra_ridge": float(extra),
        "noise_scale": 0.0 if infinite else 2.0 * W / eps_noise,
        "n_iter": info["n_iter"],
        "grad_norm": info["grad_norm"],
    }
