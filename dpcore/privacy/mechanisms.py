"""Noise-adding mechanisms, vectorized over any leading batch shape.

All samplers draw from a ``numpy.random.Generator``. They use floating-point sampling, which
has known side channels (Mironov 2012); the app's limitations page says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaln, expit

from .._typing import ArrayLike, FloatOrArray, Seed, Shape
from .._validation import check_epsilon, check_real


def l2_gamma_noise(
    d: int, epsilon: ArrayLike, sensitivity: ArrayLike, size: Shape = (), rng: Seed = None
) -> np.ndarray:
    """Noise for pure epsilon-DP release of a d-vector with L2 sensitivity ``sensitivity``.

    The radius is Gamma(shape=d, rate=epsilon/sensitivity) and the direction uniform on the
    sphere (Chaudhuri, Monteleoni and Sarwate 2011; Algorithm 1 of the DP-wERM paper). Its
    density is proportional to exp(-epsilon ||b|| / sensitivity).

    Parameters
    ----------
    d : int
        Dimension of the released vector.
    epsilon : float or array_like
        Privacy budget(s); ``np.inf`` gives zero noise. An array indexes the leading axes of
        ``size``: shape (E,) with size (E, reps) gives row e the budget epsilon[e].
    sensitivity : float or array_like
        L2 global sensitivity; aligned with ``size`` like ``epsilon``.
    size : tuple of int
        Batch shape; the result has shape ``size + (d,)``.
    rng : None, int or Generator

    Returns
    -------
    ndarray of shape ``size + (d,)``
    """
    rng = np.random.default_rng(rng)
    size = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
    epsilon = _real_array(epsilon, "epsilon")
    for e in np.unique(epsilon):
        check_epsilon(e)
    sensitivity = _real_array(sensitivity, "sensitivity")
    if (sensitivity < 0).any() or np.isnan(sensitivity).any():
        raise ValueError(f"sensitivity must be >= 0, got {sensitivity.min()}")
    z = rng.standard_normal(size + (d,))
    direction = z / np.linalg.norm(z, axis=-1, keepdims=True)
    epsilon = _leading(epsilon, size)
    with np.errstate(divide="ignore"):
        scale = np.where(np.isinf(epsilon), 0.0, _leading(sensitivity, size) / epsilon)
    radius = rng.standard_gamma(d, size) * scale
    return radius[..., None] * direction


def output_perturbation(
    theta_hat: ArrayLike, epsilon: ArrayLike, sensitivity: ArrayLike, rng: Seed = None
) -> np.ndarray:
    """Release minimisers with pure epsilon-DP: theta_hat + l2_gamma_noise (Algorithm 1).

    Parameters
    ----------
    theta_hat : ndarray of shape ``batch + (d,)``
        Exact minimisers (one per leading index).
    epsilon, sensitivity : float or array_like
        Budget and L2 sensitivity, scalars or aligned with the leading axes of ``theta_hat``
        (see :func:`l2_gamma_noise`); ``np.inf`` releases theta_hat unchanged.
    rng : None, int or Generator

    Returns
    -------
    ndarray of the shape of ``theta_hat``
    """
    theta_hat = np.asarray(theta_hat, dtype=float)
    return theta_hat + l2_gamma_noise(
        theta_hat.shape[-1], epsilon, sensitivity, size=theta_hat.shape[:-1], rng=rng
    )


def objective_perturbation_budget(
    epsilon: float, ridge: float, gradient_bound: float, curvature_bound: float
) -> tuple[float, float]:
    """The noise's budget and the extra ridge of objective perturbation (CMS Algorithm 2).

    For the sum-form objective sum_i f_i(theta) + (ridge/2) ||theta||^2 + b'theta, where each
    record's term f_i is convex, twice differentiable almost everywhere, with
    ||grad f_i|| <= G = ``gradient_bound`` and 0 <= Hess f_i <= K I (K = ``curvature_bound``),
    the exact minimiser is epsilon-DP for replace-one neighbours when b has density
    proportional to exp(-epsilon' ||b|| / (2 G)) (:func:`l2_gamma_noise` with sensitivity 2G)
    and the ridge is raised by ``extra``:

        epsilon' = epsilon - log(1 + 2K/ridge + (K/ridge)^2),  extra = 0,   if that is >= epsilon/2;
        epsilon' = epsilon / 2,  extra = K / (e^{epsilon/4} - 1) - ridge,  otherwise.

    CMS's Algorithm 2 switches to the extra ridge only when epsilon' <= 0; just above that
    the noise is unbounded (epsilon' -> 0). Their proof holds for any extra >= 0, with
    epsilon' = epsilon - 2 log(1 + K/(ridge + extra)), so switching where epsilon' would fall
    below epsilon/2 is as private and keeps epsilon' >= epsilon/2 (the two rules agree
    whenever the correction is at most epsilon/2).

    This is Chaudhuri, Monteleoni and Sarwate (2011), Theorem 9 and Algorithm 2, written in
    the sum form (their Lambda n = ``ridge``, c = K, per-record gradient bound 1 -> G). Replacing
    a record changes two terms of the sum: the gradient of the objective moves by at most
    2G (the noise's density ratio, at most e^{epsilon'}), and its Hessian by a rank-two
    matrix, whose determinant ratio is at most (1 + K/(ridge + extra))^2 (the Jacobian of
    theta -> b). docs/objective.md has the derivation for weighted ERM (G = W, K = W c).

    Parameters
    ----------
    epsilon : float
        The budget; ``np.inf`` gives (inf, 0): no noise, no extra ridge.
    ridge, gradient_bound, curvature_bound : float
        gamma, G and K as above (public: never read from the data), all > 0 (K >= 0).

    Returns
    -------
    (epsilon_noise, extra) : tuple of float
    """
    epsilon = check_epsilon(epsilon)
    ridge = check_real(ridge, "ridge", low=0.0)
    check_real(gradient_bound, "gradient_bound", low=0.0)
    K = check_real(curvature_bound, "curvature_bound", low=0.0, low_open=False)
    if np.isinf(epsilon):
        return float("inf"), 0.0
    eps_noise = epsilon - 2.0 * np.log1p(K / ridge)
    if eps_noise >= epsilon / 2.0:
        return float(eps_noise), 0.0
    return epsilon / 2.0, float(max(K / np.expm1(epsilon / 4.0) - ridge, 0.0))


def objective_perturbation_noise(
    d: int,
    epsilon: float,
    ridge: float,
    gradient_bound: float,
    curvature_bound: float,
    size: Shape = (),
    rng: Seed = None,
) -> tuple[np.ndarray, float, float]:
    """The linear term b of objective perturbation, its budget and the extra ridge to add.

    b has density proportional to exp(-epsilon' ||b|| / (2 G)), with epsilon' and the extra
    ridge from :func:`objective_perturbation_budget`; zero for ``epsilon = np.inf``.

    Returns
    -------
    b : ndarray of shape ``size + (d,)``
    epsilon_noise : float, epsilon' (b's scale is 2G / epsilon')
    extra : float
    """
    eps_noise, extra = objective_perturbation_budget(
        epsilon, ridge, gradient_bound, curvature_bound
    )
    b = l2_gamma_noise(d, eps_noise, 2.0 * float(gradient_bound), size=size, rng=rng)
    return b, eps_noise, extra


def expected_noise_radius(
    d: int, epsilon: float, sensitivity: float, k: int | None = None
) -> float:
    """E||noise|| of :func:`l2_gamma_noise`: the mean of Gamma(d, epsilon/Delta), d Delta/epsilon.

    With ``k`` < d, the mean length of the noise's projection on k coordinates: the radius is
    independent of the uniform direction u, and ||u_{1..k}||^2 ~ Beta(k/2, (d-k)/2), so
    E||u_{1..k}|| = B((k+1)/2, (d-k)/2) / B(k/2, (d-k)/2).
    """
    epsilon = check_epsilon(epsilon)
    if np.isinf(epsilon):
        return 0.0
    radius = d * float(sensitivity) / epsilon
    if k is None or k >= d:
        return radius
    return radius * float(np.exp(betaln((k + 1) / 2, (d - k) / 2) - betaln(k / 2, (d - k) / 2)))


def _leading(a, size):
    """Align an array with the leading axes of ``size`` (not numpy's trailing-axis rule)."""
    if a.ndim > len(size) or any(s not in (1, t) for s, t in zip(a.shape, size)):
        raise ValueError(
            f"an array of shape {a.shape} does not index the leading axes of size {size}"
        )
    return np.broadcast_to(a.reshape(a.shape + (1,) * (len(size) - a.ndim)), size)


def _real_array(value, name):
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real number or an array of them, got {value!r}")
    return arr.astype(float)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """The Laplace mechanism's scale b = sensitivity / epsilon; 0 without privacy (epsilon = inf).

    The one place that rule is written: every Laplace release and interval of the package
    computes its scale here.
    """
    return 0.0 if np.isinf(epsilon) else float(sensitivity) / float(epsilon)


def laplace_noise(
    epsilon: float, sensitivity: float, size: Shape = (), rng: Seed = None
) -> np.ndarray:
    """Laplace(sensitivity/epsilon) noise: pure epsilon-DP for a scalar with that L1 sensitivity."""
    rng = np.random.default_rng(rng)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=False)
    if np.isinf(epsilon):
        return np.zeros(size)
    return rng.laplace(0.0, laplace_scale(sensitivity, epsilon), size)


def laplace_interval_halfwidth(epsilon: float, sensitivity: float, level: float = 0.95) -> float:
    """t with P(|Laplace(sensitivity/epsilon)| <= t) = level: (sensitivity/epsilon) ln(1/(1-level))."""
    epsilon = check_epsilon(epsilon)
    level = check_real(level, "level", low=0.0)
    if level >= 1:
        raise ValueError(f"level must be < 1, got {level}")
    return laplace_scale(sensitivity, epsilon) * float(np.log(1.0 / (1.0 - level)))


def attacker_posterior_bound(prior: FloatOrArray, epsilon: FloatOrArray) -> FloatOrArray:
    """Largest belief an attacker can reach about one person after an epsilon-DP release.

    With prior probability ``prior`` that a fact about a person holds, the posterior odds are at
    most e^epsilon times the prior odds. Computed in log-odds, so a prior of 0 or 1 stays put
    and a large epsilon saturates at 1 without overflow.
    """
    prior = np.asarray(prior, dtype=float)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False, allow_inf=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # prior 0 with epsilon = inf
        log_odds = np.log(prior) - np.log1p(-prior) + epsilon
    return np.where(prior <= 0.0, 0.0, expit(log_odds))


# --------------------------------------------------------------------------------------------
# Gaussian and Gumbel samplers (private CVaR: DP-GD and the exponential mechanism)


def gaussian_gdp_scale(sensitivity: float, mu: float, steps: int = 1) -> float:
    """Standard deviation sigma = sensitivity * sqrt(steps) / mu of the Gaussian noise.

    Adding N(0, sigma^2 I) to a vector with L2 sensitivity ``sensitivity`` is
    (sensitivity / sigma)-GDP, and ``steps`` adaptive releases compose to
    sqrt(steps) * sensitivity / sigma (Dong, Roth and Su 2022), which this makes equal to mu.
    ``mu = np.inf`` means no privacy and gives sigma = 0.
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=False)
    mu = check_real(mu, "mu", low=0.0, allow_inf=True)
    if np.isinf(mu):
        return 0.0
    return sensitivity * np.sqrt(int(steps)) / mu


def gaussian_noise(sigma: float, size: Shape = (), rng: Seed = None) -> np.ndarray:
    """N(0, sigma^2) noise of shape ``size``; the scale comes from :func:`gaussian_gdp_scale`."""
    rng = np.random.default_rng(rng)
    sigma = check_real(sigma, "sigma", low=0.0, low_open=False)
    return sigma * rng.standard_normal(size)


def exponential_mechanism_logits(
    scores: ArrayLike, epsilon: float, sensitivity: float
) -> np.ndarray:
    """Logits epsilon * score / (2 sensitivity) of the exponential mechanism (McSherry-Talwar).

    Sampling with probability proportional to exp(logit) is epsilon-DP when each score has
    sensitivity ``sensitivity`` under the neighbouring relation.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    return np.asarray(scores, dtype=float) * (epsilon / (2.0 * sensitivity))


def gumbel_noise(size: Shape = (), rng: Seed = None) -> np.ndarray:
    """Standard Gumbel(0, 1) noise: argmax(logits + noise) samples softmax(logits) exactly."""
    rng = np.random.default_rng(rng)
    return rng.gumbel(0.0, 1.0, size)


# --------------------------------------------------------------------------------------------
# OpenDP's floating-point-safe Laplace sampler (releases on uploaded data)

SAMPLERS = ("numpy", "opendp")


def opendp_laplace_noise(epsilon, sensitivity, size=()):
    """Laplace(sensitivity/epsilon) noise drawn by OpenDP's floating-point-safe sampler.

    numpy's ``rng.laplace`` turns a uniform double into a Laplace one with floating-point
    arithmetic, whose rounding leaks (Mironov 2012). OpenDP's ``make_laplace`` samples exactly
    on a fine grid from the operating system's randomness, so it takes no seed: use it where a
    release on real data is drawn, and numpy's sampler in seeded simulations. OpenDP's own
    privacy map is checked to give at most ``epsilon`` for an L1 distance of ``sensitivity``.

    Parameters
    ----------
    epsilon, sensitivity : float
    size : int or tuple of int

    Returns
    -------
    ndarray of shape ``size``

    Raises
    ------
    ImportError
        When OpenDP is not installed (``pip install opendp``, or dpcore's ``app`` extra).
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=False)
    shape = (int(size),) if np.ndim(size) == 0 else tuple(size)
    count = int(np.prod(shape, dtype=int))
    if np.isinf(epsilon) or sensitivity == 0.0 or count == 0:
        return np.zeros(shape)
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - opendp is a dependency of the app path
        raise ImportError("OpenDP's sampler needs the opendp package: pip install opendp") from exc
    dp.enable_features("contrib")
    scale = laplace_scale(sensitivity, epsilon)
    meas = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=scale
    )
    if meas.map(sensitivity) > epsilon * (1 + 1e-12):
        raise RuntimeError(f"OpenDP's privacy map gives {meas.map(sensitivity)} > ε = {epsilon}")
    return np.asarray(meas([0.0] * count), dtype=float).reshape(shape)


def sample_laplace(epsilon, sensitivity, size=(), rng=None, sampler="numpy"):
    """Laplace(sensitivity/epsilon) noise from numpy's seeded sampler or OpenDP's exact one.

    ``sampler="opendp"`` ignores ``rng`` (see :func:`opendp_laplace_noise`).
    """
    if sampler == "opendp":
        return opendp_laplace_noise(epsilon, sensitivity, size)
    if sampler != "numpy":
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return laplace_noise(epsilon, sensitivity, size, rng)


@dataclass(frozen=True)
class Mechanism:
    """How a released treatment rule was made private, as its files say it: the one place
    for a mechanism's sentence and its δ (every rule file, report and script reads them here).

    Attributes
    ----------
    name : str
        Short, for a title ("DP-OWL: Huber-hinge weighted ERM, output perturbation").
    delta : float
        The δ of its (ε, δ) guarantee: 0 for pure ε-DP.
    guarantee : str
        The guarantee's kind and its unit of privacy.
    """

    name: str
    delta: float
    guarantee: str

    def sentence(self, detail: str = "") -> str:
        """The mechanism in one sentence: its name (or ``detail``) and its guarantee."""
        return f"{detail or self.name} ({self.guarantee})"


#: DP-OWL's release (Algorithm 1 of the DP-wERM paper): the weighted Huber-hinge ERM's
#: minimiser plus noise of density ∝ exp(−ε‖b‖/Δ).
OUTPUT_PERTURBATION = Mechanism(
    name="DP-OWL: Huber-hinge weighted ERM, output perturbation",
    delta=0.0,
    guarantee="pure ε-DP, replace-one neighbours",
)

#: The private plug-in rule's release (:class:`dpcore.PrivatePlugInRule`): the two arms'
#: sufficient statistics of a linear outcome model plus Laplace noise of scale d (d + 3) / ε
#: on every entry; the rule is post-processing.
PLUG_IN_STATISTICS = Mechanism(
    name="Plug-in rule: per-arm linear outcome models from Laplace-noised sufficient statistics",
    delta=0.0,
    guarantee="pure ε-DP, replace-one neighbours",
)

#: DP-OWL's release by objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011,
#: Algorithm 2, with the weights' bound W): the minimiser of the weighted Huber-hinge ERM
#: plus a random linear term b'theta, b of density ∝ exp(−ε'‖b‖/(2W))
#: (:func:`objective_perturbation_budget`).
OBJECTIVE_PERTURBATION = Mechanism(
    name="DP-OWL: Huber-hinge weighted ERM, objective perturbation",
    delta=0.0,
    guarantee="pure ε-DP, replace-one neighbours",
)
