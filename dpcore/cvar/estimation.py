"""Empirical and differentially private CVaR of bounded losses (docs/spec/cvar.md §0-§2, §5.3).

CVaR at level tau is the mean of the worst tau-fraction of the losses. Everything here is
vectorised over leading axes: ``x`` of shape (reps, n) gives one value per row.
Neighbouring datasets differ by replacing one record; n is public.
"""

from __future__ import annotations

import math

import numpy as np

from .._typing import ArrayLike, FloatOrArray, Seed
from .._validation import check_choice, check_epsilon, check_real
from ..privacy.mechanisms import gumbel_noise, laplace_noise, laplace_scale

__all__ = [
    "check_bound",
    "check_samples",
    "check_tau",
    "check_whole",
    "cvar_sensitivity",
    "empirical_cvar",
    "empirical_var",
    "laplace_privacy_error",
    "laplace_release",
    "private_cvar",
    "private_quantile",
    "ru_objective",
    "weighted_cvar",
]


# --------------------------------------------------------------------------------------------
# Input checks


def check_tau(tau: float, name: str = "tau") -> float:
    """A tail level in (0, 1]."""
    return check_real(tau, name, low=0.0, high=1.0)


def check_bound(bound: float, name: str = "bound") -> float:
    """A public loss bound B > 0."""
    return check_real(bound, name, low=0.0)


def check_whole(value: float, name: str, low: int = 1) -> int:
    """A whole number at least ``low`` (a sample size, a count of repetitions)."""
    value = check_real(value, name, low=low - 1e-9, low_open=False)
    if not float(value).is_integer():
        raise ValueError(f"{name} must be a whole number, got {value}")
    return int(value)


def check_samples(x: ArrayLike, name: str = "x") -> np.ndarray:
    """Finite losses as a float array of shape (n,) or (reps, n), n >= 1."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if x.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (reps, n), got shape {x.shape}")
    if x.shape[-1] == 0 or x.size == 0:
        raise ValueError(f"{name} is empty (shape {x.shape}); CVaR needs at least one value")
    if not np.isfinite(x).all():
        # No count and no position: on uploaded data either would describe the data.
        raise ValueError(f"{name}: non-finite values present (NaN or infinite)")
    return x


def _scalar(a):
    return float(a) if np.ndim(a) == 0 else a


# --------------------------------------------------------------------------------------------
# Exact empirical CVaR and VaR (docs/spec/cvar.md §1)


def _cvar_var(x, tau):
    """(CVaR, VaR) along the last axis by selection: weight 1/(n tau) on the top k = floor(n tau)
    values and the fractional weight f/(n tau) on the (k+1)-th largest."""
    n = x.shape[-1]
    m = n * tau
    k = math.floor(m)
    if k >= n:
        return x.mean(axis=-1), x.min(axis=-1)
    part = np.partition(x, n - k - 1, axis=-1)
    boundary = part[..., n - k - 1]
    top = part[..., n - k :].sum(axis=-1)
    return (top + (m - k) * boundary) / m, boundary


def empirical_cvar(x: ArrayLike, tau: float) -> FloatOrArray:
    """Exact empirical conditional value-at-risk (upper tail) at level ``tau``.

    Parameters
    ----------
    x : array_like, shape (n,) or (reps, n)
        Losses (larger is worse).
    tau : float in (0, 1]
        Tail fraction; ``tau = 1`` gives the mean.

    Returns
    -------
    float, or ndarray of shape (reps,) for 2-D ``x``

    Notes
    -----
    With m = n tau, k = floor(m), f = m - k and x_(1) >= ... >= x_(n),

        rho = ( x_(1) + ... + x_(k) + f x_(k+1) ) / m,

    the minimum over eta of the Rockafellar-Uryasev objective (:func:`ru_objective`).
    If m < 1 this is max(x). It is *not* the mean of the top ceil(m) values. Selection with
    ``np.partition`` makes it O(n).

    References
    ----------
    R. T. Rockafellar and S. Uryasev, "Optimization of conditional value-at-risk",
    J. Risk 2 (2000). E. M. Mansouri, "The Privacy Price of Tail-Risk Learning", arXiv
    2605.16219 (2026), §2.

    Examples
    --------
    >>> empirical_cvar([5, 1, 4, 2, 3], 0.3)  # (5 + 0.5 * 4) / 1.5
    4.666666666666667
    """
    return _scalar(_cvar_var(check_samples(x), check_tau(tau))[0])


def empirical_var(x: ArrayLike, tau: float) -> FloatOrArray:
    """Empirical upper tau-quantile x_(k+1) (min(x) when tau = 1): a minimiser of
    :func:`ru_objective`, the unique one when n tau is not an integer.

    Examples
    --------
    >>> empirical_var([5, 1, 4, 2, 3], 0.5)
    3.0
    """
    return _scalar(_cvar_var(check_samples(x), check_tau(tau))[1])


def ru_objective(eta: ArrayLike, x: ArrayLike, tau: float) -> FloatOrArray:
    """Rockafellar-Uryasev objective eta + mean((x - eta)_+) / tau, for an array of ``eta``.

    Returns an array of ``np.shape(eta)`` (1-D ``x``), or (reps,) + shape for 2-D ``x``.
    """
    x, tau = check_samples(x), check_tau(tau)
    eta = np.asarray(eta, dtype=float)
    excess = np.maximum(x[..., None, :] - eta.reshape(-1, 1), 0.0).mean(axis=-1) / tau
    return _scalar((eta.reshape(-1) + excess).reshape(x.shape[:-1] + eta.shape))


def weighted_cvar(x: ArrayLike, weights: ArrayLike, tau: float) -> FloatOrArray:
    """CVaR of the discrete distribution putting mass weights_i / sum(weights) on x_i.

    Integer weights give the same value as :func:`empirical_cvar` on rows repeated that many
    times. Uses a sort (O(n log n)).
    """
    x, tau = check_samples(x), check_tau(tau)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D for weighted_cvar, got shape {x.shape}")
    w = check_samples(weights, "weights")
    if w.shape != x.shape:
        raise ValueError(f"weights has shape {w.shape} but x has shape {x.shape}")
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"weights must be >= 0 with a positive sum, got minimum {w.min():g} and sum {w.sum():g}"
        )
    order = np.argsort(-x, kind="stable")
    p = w[order] / w.sum()
    before = np.cumsum(p) - p
    # Fill the tail mass tau from the largest loss down; the boundary atom is taken in part.
    take = np.clip(tau - before, 0.0, p)
    return float(take @ x[order] / tau)


def cvar_sensitivity(n: float, tau: float, bound: float) -> float:
    """Replace-one sensitivity B min{1, 1/(n tau)} of empirical CVaR (Lemma 3.1; tight)."""
    return bound * min(1.0, 1.0 / (n * tau))


# --------------------------------------------------------------------------------------------
# Private scalar CVaR (docs/spec/cvar.md §2)


def private_cvar(
    x: ArrayLike,
    tau: float,
    epsilon: float,
    bound: float,
    rng: Seed = None,
    *,
    method: str = "laplace",
    quantile_share: float = 0.5,
) -> FloatOrArray:
    """epsilon-DP estimate of CVaR_tau of losses known to lie in [0, bound].

    Parameters
    ----------
    x : array_like, shape (n,) or (reps, n)
        Losses. Each value is clipped to [0, bound] first (a per-record map, so it costs no
        privacy); values outside the public bound are therefore counted as 0 or ``bound``.
    tau : float in (0, 1]
    epsilon : float > 0
        Privacy budget; ``np.inf`` releases the non-private value.
    bound : float > 0
        Public loss bound B. It must not be derived from the data.
    rng : None, int or Generator
    method : {"laplace", "instance-adaptive"}
        "laplace" (default): the plug-in of Theorem 3.3. "instance-adaptive": spend
        ``quantile_share * epsilon`` on two private quantiles and clip the data to them
        (docs/spec/cvar.md §2.2); better on concentrated data, much worse on the worst case.
    quantile_share : float in (0, 1)
        Share of epsilon spent on the quantiles by "instance-adaptive".

    Returns
    -------
    float in [0, bound], or ndarray of shape (reps,) with independent noise per row

    Notes
    -----
    The Laplace plug-in releases clip(rho(clip(x, 0, B)) + Lap(Delta / epsilon), 0, B) with
    Delta = B min{1, 1/(n tau)}, which is epsilon-DP under replace-one. Its expected privacy
    error is given exactly by :func:`laplace_privacy_error`; the minimax rate is
    B min{1, 1/sqrt(n tau) + 1/(epsilon n tau)} (:func:`dpcore.cvar.rates.scalar_cvar_rate`).
    The instance-adaptive variant is epsilon-DP by sequential composition: the quantiles lo,
    hi are released first, then CVaR of the data clipped to [lo, hi] (sensitivity
    (hi - lo) min{1, 1/(n tau)}, since CVaR is translation-equivariant) with Laplace noise.

    References
    ----------
    E. M. Mansouri (2026), Theorems 3.3 and 3.4. A. Smith, "Privacy-preserving statistical
    estimation with optimal convergence rates", STOC 2011 (private quantiles).

    Examples
    --------
    >>> r = private_cvar(np.linspace(0, 1, 1000), 0.1, epsilon=1.0, bound=1.0, rng=0)
    >>> 0.0 <= r <= 1.0
    True
    """
    x, tau, bound = check_samples(x), check_tau(tau), check_bound(bound)
    epsilon = check_epsilon(epsilon)
    check_choice(method, "method", {"laplace", "instance-adaptive"})
    rng = np.random.default_rng(rng)
    x = np.clip(x, 0.0, bound)
    n = x.shape[-1]
    if method == "laplace":
        return laplace_release(_cvar_var(x, tau)[0], n, tau, epsilon, bound, rng)
    share = check_real(quantile_share, "quantile_share", low=0.0, high=1.0 - 1e-12)
    eps_q, eps_cvar = share * epsilon / 2.0, (1.0 - share) * epsilon
    q1 = private_quantile(x, max(0.0, 1.0 - 2.0 * tau), eps_q, bound, rng)
    q2 = private_quantile(x, 1.0 - tau / 10.0, eps_q, bound, rng)
    lo, hi = np.minimum(q1, q2), np.maximum(q1, q2)
    rho = _cvar_var(np.clip(x, np.expand_dims(lo, -1), np.expand_dims(hi, -1)), tau)[0]
    noise = laplace_noise(eps_cvar, cvar_sensitivity(n, tau, 1.0), rho.shape, rng)
    return _scalar(np.clip(rho + (hi - lo) * noise, lo, hi))


def laplace_release(
    rho_hat: FloatOrArray, n: int, tau: float, epsilon: float, bound: float, rng: Seed = None
) -> FloatOrArray:
    """The release step of the Laplace plug-in: clip(rho_hat + Lap(Delta/epsilon), 0, B).

    ``rho_hat`` (any shape) must be the empirical CVaR of n values in [0, B]; a Monte-Carlo
    study that knows rho_hat in closed form (Bernoulli data) can call this directly.
    """
    rho_hat = np.asarray(rho_hat, dtype=float)
    noise = laplace_noise(epsilon, cvar_sensitivity(n, tau, bound), rho_hat.shape, rng)
    return _scalar(np.clip(rho_hat + noise, 0.0, bound))


def private_quantile(
    x: ArrayLike, q: float, epsilon: float, bound: float, rng: Seed = None
) -> FloatOrArray:
    """epsilon-DP q-quantile of values in [0, bound] by the exponential mechanism (Smith 2011).

    The gap between consecutive order statistics with i values below it has score
    -|i - q n| (sensitivity 1 under replace-one) and is chosen with probability proportional
    to its length times exp(epsilon score / 2); the output is uniform in the chosen gap.
    Vectorised over a leading axis like :func:`private_cvar`.
    """
    bound = check_bound(bound)
    x = np.clip(check_samples(x), 0.0, bound)
    q, epsilon = check_real(q, "q", low=0.0, low_open=False, high=1.0), check_epsilon(epsilon)
    rng = np.random.default_rng(rng)
    n = x.shape[-1]
    lead = x.shape[:-1]
    edges = np.concatenate(
        (np.zeros(lead + (1,)), np.sort(x, axis=-1), np.full(lead + (1,), bound)), axis=-1
    )
    length = np.diff(edges, axis=-1)
    score = -np.abs(np.arange(n + 1) - q * n)
    with np.errstate(divide="ignore"):
        log_length = np.log(length)
    if np.isinf(epsilon):  # no privacy: the best-scoring gap of positive length
        gap = np.argmax(np.where(length > 0, score, -np.inf), axis=-1)[..., None]
    else:
        logits = log_length + epsilon * score / 2.0
        gap = np.argmax(logits + gumbel_noise(logits.shape, rng), axis=-1)[..., None]
    left = np.take_along_axis(edges, gap, -1)[..., 0]
    right = np.take_along_axis(edges, gap + 1, -1)[..., 0]
    return _scalar(left + (right - left) * rng.random(lead))


def laplace_privacy_error(
    rho_hat: FloatOrArray, n: float, tau: float, epsilon: float, bound: float
) -> FloatOrArray:
    """Exact E|clip(rho_hat + Lap(b), 0, B) - rho_hat| with b = Delta/epsilon (docs/spec/cvar.md §2.1).

    Equals b - (b/2)(exp(-r/b) + exp(-(B - r)/b)) for r = rho_hat in [0, B]: at most b, the
    unclipped Laplace error, and smaller when the clip to [0, B] is near.
    """
    r = np.asarray(rho_hat, dtype=float)
    epsilon = check_epsilon(epsilon)
    b = laplace_scale(cvar_sensitivity(n, check_tau(tau), check_bound(bound)), epsilon)
    if b == 0.0:
        return _scalar(np.zeros_like(r))
    return _scalar(b - 0.5 * b * (np.exp(-r / b) + np.exp(-(bound - r) / b)))
