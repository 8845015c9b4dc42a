"""Private CVaR learning: the exponential mechanism over a finite class and noisy projected
subgradient descent on the Rockafellar-Uryasev lift (docs/spec/cvar.md §3, §4.1-4.2).

Replace-one neighbours throughout. Losses of the finite class are clipped per record to
[0, B]; the convex learner never clips (min(l, B) is not convex) and bounds the loss through
the public feature bound and radius instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .._typing import ArrayLike, Seed
from .._validation import check_choice, check_epsilon, check_matrix, check_real
from ..privacy.gdp import gdp_mu
from ..privacy.mechanisms import (
    exponential_mechanism_logits,
    gaussian_gdp_scale,
    gaussian_noise,
    gumbel_noise,
)
from .estimation import (
    check_bound,
    check_samples,
    check_tau,
    cvar_sensitivity,
    empirical_cvar,
)

__all__ = [
    "DPGDResult",
    "dp_gd_cvar",
    "dp_gd_scales",
    "em_expected_gap",
    "em_probabilities",
    "lifted_constants",
    "lifted_objective",
    "lifted_sensitivity",
    "lifted_subgradient",
    "minority_regression",
    "packing_losses",
    "packing_sample",
    "private_select",
    "slope_class_losses",
]


# --------------------------------------------------------------------------------------------
# Finite classes: the exponential mechanism (Theorem 4.3)


def _class_cvars(losses, tau, bound):
    losses, tau, bound = check_samples(losses, "losses"), check_tau(tau), check_bound(bound)
    if losses.ndim != 2:
        raise ValueError(f"losses must be 2-D (candidates, records), got shape {losses.shape}")
    rho = np.asarray(empirical_cvar(np.clip(losses, 0.0, bound), tau))
    return rho, cvar_sensitivity(losses.shape[1], tau, bound)


def _em_logits(losses, tau, epsilon, bound):
    """(rho, logits) of the exponential mechanism; logits is None when epsilon = inf."""
    rho, sens = _class_cvars(losses, tau, bound)
    epsilon = check_epsilon(epsilon)
    if np.isinf(epsilon):
        return rho, None
    return rho, exponential_mechanism_logits(-rho, epsilon, sens)


def em_probabilities(losses: ArrayLike, tau: float, epsilon: float, bound: float) -> np.ndarray:
    """Exact selection probabilities of the exponential mechanism with score -CVaR.

    Parameters
    ----------
    losses : array_like, shape (M, n)
        Loss of each of M candidates on each of n records; clipped to [0, bound] per record.
    tau, epsilon, bound : float
        Tail level, privacy budget (``np.inf``: uniform over the empirical minimisers) and
        public loss bound B.

    Returns
    -------
    ndarray of shape (M,)

    Notes
    -----
    P(f) is proportional to exp(-epsilon rho_f / (2 Delta)) with Delta = B min{1, 1/(n tau)},
    the exact sensitivity of each empirical CVaR (Lemma 3.1). The paper's B/(n tau) is the
    same when n tau >= 1 and needlessly larger when n tau < 1. Normalised with log-sum-exp:
    the logits reach 1e4 in magnitude.

    References
    ----------
    F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
    E. M. Mansouri (2026), Theorem 4.3.
    """
    rho, logits = _em_logits(losses, tau, epsilon, bound)
    if logits is None:
        best = rho == rho.min()
        return best / best.sum()
    return np.exp(logits - logsumexp(logits))


def private_select(
    losses: ArrayLike,
    tau: float,
    epsilon: float,
    bound: float,
    size: int | None = None,
    rng: Seed = None,
) -> int | np.ndarray:
    """Draw candidate indices from the exponential mechanism (:func:`em_probabilities`).

    ``size=None`` returns one index by Gumbel-max (never exponentiates); an integer ``size``
    returns that many independent draws by inverse CDF, O(M + size log M), for audits.
    """
    rng = np.random.default_rng(rng)
    if size is None:
        rho, logits = _em_logits(losses, tau, epsilon, bound)
        if logits is None:
            return int(np.argmin(rho))
        return int(np.argmax(logits + gumbel_noise(logits.shape, rng)))
    cdf = np.cumsum(em_probabilities(losses, tau, epsilon, bound))
    draws = np.searchsorted(cdf, rng.random(int(size)) * cdf[-1], side="right")
    return np.minimum(draws, cdf.size - 1)


def em_expected_gap(losses: ArrayLike, tau: float, epsilon: float, bound: float) -> float:
    """Exact E[rho(f_hat) - min_f rho(f)] of the exponential mechanism, from its probabilities.

    At most 2 Delta (ln M + 1) / epsilon (:func:`dpcore.cvar.rates.em_gap_bound`).
    """
    rho, _ = _class_cvars(losses, tau, bound)
    return float(em_probabilities(losses, tau, epsilon, bound) @ (rho - rho.min()))


def minority_regression(
    n: int, minority: float = 0.1, noise: float = 0.1, rng: Seed = None
) -> tuple[np.ndarray, np.ndarray]:
    """Demo data for CVaR versus mean learning: x ~ U[0, 1]; y = x + noise N(0, 1) for the
    majority and y = -x + noise N(0, 1) for a ``minority`` share."""
    rng = np.random.default_rng(rng)
    x = rng.random(n)
    sign = np.where(rng.random(n) < minority, -1.0, 1.0)
    return x, sign * x + noise * rng.standard_normal(n)


def slope_class_losses(
    x: ArrayLike, y: ArrayLike, thetas: ArrayLike, bound: float = 1.0
) -> np.ndarray:
    """Loss matrix (M, n) of the slope class f_theta(x) = theta x: min(B, |y - theta x| / 2)."""
    thetas = np.asarray(thetas, dtype=float)[:, None]
    return np.minimum(bound, 0.5 * np.abs(np.asarray(y) - thetas * np.asarray(x)))


def packing_sample(n: int, j: int, p: float, rng: Seed = None) -> np.ndarray:
    """Theorem 4.4's P_j: z = j with probability p, else z = 0."""
    rng = np.random.default_rng(rng)
    return np.where(rng.random(n) < p, j, 0)


def packing_losses(z: ArrayLike, M: int, bound: float = 1.0) -> np.ndarray:
    """Loss matrix (M, n) of the packing class: l(f_r; z) = B 1{z in 1..M, z != r}, r = 1..M.

    Under P_j, rho(f_j) = 0 and rho(f_r) = B min{1, p / tau} for r != j.
    """
    z = np.asarray(z)
    r = np.arange(1, M + 1)[:, None]
    return bound * ((z >= 1) & (z <= M) & (z != r))


# --------------------------------------------------------------------------------------------
# Convex learning on the lifted objective g(w, u; z) = lam u + (l(w; z) - lam u)_+ / tau


def lifted_constants(G: float, B: float, D: float, tau: float) -> tuple[float, float, float]:
    """(lam, L, D_theta) with lam = sqrt(G B / D), L = sqrt(G^2 + lam^2) / tau and
    D_theta = sqrt(D^2 + (B / lam)^2); then L D_theta = (G D + B) / tau exactly."""
    lam = np.sqrt(G * B / D)
    return lam, np.sqrt(G * G + lam * lam) / tau, np.sqrt(D * D + (B / lam) ** 2)


def lifted_sensitivity(n: int, tau: float, G: float, lam: float) -> float:
    """Replace-one L2 sensitivity max(2G, sqrt(G^2 + lam^2)) / (n tau) of the averaged lifted
    subgradient (docs/spec/cvar.md §4.1): both records active gives 2G / tau, one active sqrt(G^2 +
    lam^2) / tau, and the lam in the u-coordinate cancels."""
    return max(2.0 * G, np.sqrt(G * G + lam * lam)) / (n * tau)


def _loss_and_slope(kind, pred, y):
    """Per-record loss and its derivative in the prediction <w, x>."""
    if kind == "absolute":
        r = y - pred
        return np.abs(r), -np.sign(r)
    margin = 1.0 - y * pred
    return np.maximum(margin, 0.0), np.where(margin > 0, -y, 0.0)


def lifted_subgradient(
    w: np.ndarray,
    u: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    tau: float,
    lam: float,
    loss: str = "absolute",
) -> tuple[np.ndarray, np.ndarray]:
    """Averaged subgradient of the lifted objective at (w, u) of shape (reps, d), (reps,).

    Returns (g_w, g_u): g_w = (1/(n tau)) sum_i s_i dl_i x_i and g_u = lam (1 - sum s / (n tau))
    with s_i = 1[l_i - lam u > 0].
    """
    n = X.shape[0]
    value, slope = _loss_and_slope(loss, w @ X.T, y)
    active = value - lam * u[..., None] > 0
    g_w = (active * slope) @ X / (n * tau)
    return g_w, lam * (1.0 - active.sum(axis=-1) / (n * tau))


def lifted_objective(
    w: np.ndarray,
    u: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    tau: float,
    lam: float,
    loss: str = "absolute",
) -> np.ndarray:
    """Empirical lifted objective lam u + mean((l(w) - lam u)_+) / tau; its minimum over u is
    the empirical CVaR of l(w; .), attained at u = VaR / lam."""
    value, _ = _loss_and_slope(loss, np.asarray(w) @ X.T, y)
    u = np.asarray(u, dtype=float)
    return lam * u + np.maximum(value - lam * u[..., None], 0.0).mean(axis=-1) / tau


def dp_gd_scales(n, tau, epsilon, delta, G, B, D, steps):
    """(lam, L, D_theta, Delta_2, mu, sigma): the public constants of a DP-GD run."""
    lam, L, D_theta = lifted_constants(G, B, D, tau)
    sens = lifted_sensitivity(n, tau, G, lam)
    mu = np.inf if np.isinf(epsilon) else gdp_mu(epsilon, delta)
    return lam, L, D_theta, sens, mu, gaussian_gdp_scale(sens, mu, steps)


@dataclass(frozen=True)
class DPGDResult:
    """Output of :func:`dp_gd_cvar`; ``coef`` (reps, d) or (d,), ``var`` = lam u the VaR
    estimate. The remaining fields are public constants of the run."""

    coef: np.ndarray
    var: np.ndarray
    mu: float
    sigma: float
    step_size: float
    sensitivity: float
    lam: float
    loss_bound: float


def dp_gd_cvar(
    X: ArrayLike,
    y: ArrayLike,
    tau: float,
    epsilon: float,
    delta: float,
    *,
    loss: str = "absolute",
    radius: float = 1.0,
    x_bound: float = 1.0,
    y_bound: float = 1.0,
    steps: int = 100,
    c_eta: float = 4.0,
    reps: int | None = None,
    output: str = "suffix",
    rng: Seed = None,
) -> DPGDResult:
    """(epsilon, delta)-DP minimisation of empirical CVaR over a ball of linear predictors.

    Full-batch noisy projected subgradient descent on the lifted objective (algorithm C1 of
    docs/spec/cvar.md §4.2), accounted exactly in Gaussian DP.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features; each row is scaled to norm <= ``x_bound`` (a per-record map), which makes
        the loss ``x_bound``-Lipschitz.
    y : array_like, shape (n,)
        Targets, clipped to [-y_bound, y_bound] ("absolute"), or labels in {-1, +1} ("hinge").
    tau : float in (0, 1]
    epsilon, delta : float
        Target (epsilon, delta)-DP under replace-one; ``epsilon=np.inf`` adds no noise.
    loss : {"absolute", "hinge"}
    radius : float
        W = {||w|| <= radius}, so D = 2 radius and the loss is at most B = y_bound +
        radius x_bound (absolute) or 1 + radius x_bound (hinge) without clipping.
    steps : int
        Number T of noisy full-batch steps.
    c_eta : float
        Step size c_eta D_theta / sqrt(T (L^2 + (d+1) sigma^2)); public, any value is private.
    reps : int or None
        Independent runs on the same data, vectorised (leading axis of the output).
    output : {"suffix", "average", "last"}
        Average of the last ceil(T/2) iterates, of all T iterates (the iterate the worst-case
        bound :func:`dpcore.cvar.rates.dp_gd_excess_bound` is for), or the last iterate.
    rng : None, int or Generator

    Returns
    -------
    DPGDResult

    Notes
    -----
    Each step releases the averaged subgradient plus N(0, sigma^2 I_{d+1}); with replace-one
    sensitivity Delta_2 (:func:`lifted_sensitivity`) the T steps compose to
    mu = sqrt(T) Delta_2 / sigma GDP, and sigma is set so that mu = mu*(epsilon, delta)
    (:func:`dpcore.privacy.gdp.gdp_mu`). Projection, averaging and the output are
    post-processing; the start (w, u) = 0 does not depend on the data.

    References
    ----------
    E. M. Mansouri (2026), Theorem 5.4. J. Dong, A. Roth and W. Su, "Gaussian differential
    privacy", JRSS B (2022).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 2))
    >>> y = X @ [0.5, -0.2]
    >>> fit = dp_gd_cvar(X, y, 0.1, epsilon=1.0, delta=1e-5, rng=1)
    >>> fit.coef.shape
    (2,)
    """
    X = check_matrix(X)
    n, d = X.shape
    y = check_samples(y, "y")
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape} but X has {n} rows")
    tau, epsilon = check_tau(tau), check_epsilon(epsilon)
    delta = check_real(delta, "delta", low=0.0, low_open=False, high=1.0 - 1e-12)
    check_choice(loss, "loss", {"absolute", "hinge"})
    check_choice(output, "output", {"suffix", "average", "last"})
    R, G = check_real(radius, "radius", low=0.0), check_real(x_bound, "x_bound", low=0.0)
    steps = int(check_real(steps, "steps", low=0.0))
    rng = np.random.default_rng(rng)

    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X * np.minimum(1.0, G / np.maximum(norms, 1e-300))
    if loss == "hinge":
        if not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError("y must contain only -1 and +1 for the hinge loss")
        B = 1.0 + R * G
    else:
        Y = check_real(y_bound, "y_bound", low=0.0)
        y, B = np.clip(y, -Y, Y), Y + R * G

    lam, L, D_theta, sens, mu, sigma = dp_gd_scales(n, tau, epsilon, delta, G, B, 2 * R, steps)
    eta = c_eta * D_theta / np.sqrt(steps * (L * L + (d + 1) * sigma * sigma))

    shape = () if reps is None else (int(reps),)
    w, u = np.zeros(shape + (d,)), np.zeros(shape)
    keep = {"suffix": -(-steps // 2), "average": steps, "last": 1}[output]
    w_sum, u_sum = np.zeros_like(w), np.zeros_like(u)
    for t in range(steps):  # steps are sequential; runs are vectorised inside
        g_w, g_u = lifted_subgradient(w, u, X, y, tau, lam, loss)
        noise = gaussian_noise(sigma, shape + (d + 1,), rng)
        w = w - eta * (g_w + noise[..., :d])
        u = np.clip(u - eta * (g_u + noise[..., d]), 0.0, B / lam)
        w = w * np.minimum(1.0, R / np.maximum(np.linalg.norm(w, axis=-1, keepdims=True), 1e-300))
        if t >= steps - keep:
            w_sum, u_sum = w_sum + w, u_sum + u
    return DPGDResult(
        coef=w_sum / keep,
        var=lam * u_sum / keep,
        mu=float(mu),
        sigma=float(sigma),
        step_size=float(eta),
        sensitivity=float(sens),
        lam=float(lam),
        loss_bound=float(B),
    )
