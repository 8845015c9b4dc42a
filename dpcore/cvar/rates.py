"""The private-CVaR paper's rates and bounds, drawn as overlays next to measured errors.

Minimax rates of scalar private CVaR (Theorem 3.4, the two-point lower bound of Theorem 3.2),
of learning over a finite class (Theorem 4.5, and the exponential mechanism's gap), of convex
learning (Theorem 5.4's upper and Corollary 6.5's lower rate) with its phase transition at
epsilon n tau / sqrt(d) (Corollary 6.6), the regime a setting is in (:func:`cvar_regime`, one
rule for every page), and the worst-case excess of this package's DP-GD
(:func:`dpcore.cvar.learning.dp_gd_cvar`) with its privacy constant (docs/spec/cvar.md §4.2, §4.6,
§5). Rates are orders of magnitude
(constants set to 1 unless the theorem gives them); present them as bounds, and measured
curves as measurements. The Theory page draws them beside the DP-wERM paper's bound
(:mod:`dpcore.theory.bounds`).
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatOrArray
from .constructions import hard_two_point
from .estimation import cvar_sensitivity
from .learning import dp_gd_scales

__all__ = [
    "REGIMES",
    "convex_lower_rate",
    "convex_upper_rate",
    "cvar_regime",
    "cvar_regime_name",
    "dp_gd_excess_bound",
    "dp_gd_privacy_constant",
    "effective_sizes",
    "em_gap_bound",
    "finite_class_rate",
    "phase_transition_epsilon",
    "phase_transition_ratio",
    "scalar_cvar_rate",
    "scalar_statistical_constant",
    "two_point_lower_bound",
]


def effective_sizes(
    n: FloatOrArray, tau: FloatOrArray, epsilon: FloatOrArray
) -> tuple[FloatOrArray, FloatOrArray]:
    """The paper's effective tail sample sizes: n tau (statistical) and epsilon n tau (privacy)."""
    m = np.asarray(n, dtype=float) * tau
    return m, epsilon * m


def scalar_cvar_rate(
    n: FloatOrArray, tau: FloatOrArray, epsilon: FloatOrArray, bound: float = 1.0
) -> FloatOrArray:
    """Minimax error of private scalar CVaR (Theorem 3.4):
    B min{1, 1/sqrt(n tau) + 1/(epsilon n tau)}, up to constants. Vectorised."""
    m, em = effective_sizes(n, tau, epsilon)
    return bound * np.minimum(1.0, 1.0 / np.sqrt(m) + 1.0 / em)


def scalar_statistical_constant(tau: FloatOrArray) -> FloatOrArray:
    """sqrt(n tau) E|rho_hat - rho| on the hard instance B Bernoulli(tau/2), as n grows:
    sqrt(1/2) sqrt(2/pi) sqrt(1 - tau/2) (normal approximation of the binomial count)."""
    return np.sqrt(0.5) * np.sqrt(2.0 / np.pi) * np.sqrt(1.0 - np.asarray(tau) / 2.0)


def two_point_lower_bound(
    n: int, tau: float, epsilon: float, bound: float = 1.0, c1: float = 0.1
) -> float:
    """Theorem 3.2: every epsilon-DP estimator has max_j E_j|err| >= gap/16 on the two-point
    pair, gap = c1 B min{1, 1/(epsilon n tau)}."""
    return hard_two_point(n, tau, epsilon, bound, c1).gap / 16.0


def finite_class_rate(
    M: int, n: FloatOrArray, tau: FloatOrArray, epsilon: FloatOrArray, bound: float = 1.0
) -> FloatOrArray:
    """Minimax excess CVaR over M predictors (Theorem 4.5), up to constants:
    B min{1, sqrt(log 2M / (n tau)) + log 2M / (epsilon n tau)}."""
    m, em = effective_sizes(n, tau, epsilon)
    log2m = np.log(2.0 * np.asarray(M, dtype=float))
    return bound * np.minimum(1.0, np.sqrt(log2m / m) + log2m / em)


def em_gap_bound(
    M: int, n: float, tau: float, epsilon: FloatOrArray, bound: float = 1.0
) -> FloatOrArray:
    """McSherry-Talwar: E[rho(f_hat)] - min rho <= 2 Delta (ln M + 1) / epsilon for the
    exponential mechanism with Delta = B min{1, 1/(n tau)}."""
    return 2.0 * cvar_sensitivity(n, tau, bound) * (np.log(M) + 1.0) / epsilon


def convex_upper_rate(
    n: FloatOrArray,
    tau: FloatOrArray,
    epsilon: FloatOrArray,
    delta: float,
    d: FloatOrArray,
    G: float = 1.0,
    D: float = 2.0,
    B: float = 2.0,
) -> FloatOrArray:
    """Theorem 5.4, up to polylog factors:
    (GD + B)/tau (1/sqrt(n) + sqrt((d+1) log(1/delta)) / (epsilon n)).

    Its non-private term is 1/(tau sqrt(n)), not 1/sqrt(n tau): the paper's convex result is
    not tight there.
    """
    n = np.asarray(n, dtype=float)
    return (
        (G * D + B)
        / tau
        * (1.0 / np.sqrt(n) + np.sqrt((d + 1) * np.log(1.0 / delta)) / (epsilon * n))
    )


def convex_lower_rate(
    n: FloatOrArray,
    tau: FloatOrArray,
    epsilon: FloatOrArray,
    d: FloatOrArray,
    G: float = 1.0,
    D: float = 2.0,
    B: float = 2.0,
) -> FloatOrArray:
    """Corollary 6.5 without its constants: R0 min{1, 1/sqrt(n tau) + sqrt(d)/(epsilon n tau)},
    R0 = min(B, GD). The paper's correction -B exp(-c' n tau) has an unspecified c' and is
    dropped; it matters only for n tau of order 1."""
    m, em = effective_sizes(n, tau, epsilon)
    return min(B, G * D) * np.minimum(1.0, 1.0 / np.sqrt(m) + np.sqrt(d) / em)


def phase_transition_ratio(
    n: FloatOrArray, tau: FloatOrArray, epsilon: FloatOrArray, d: FloatOrArray
) -> FloatOrArray:
    """epsilon n tau / sqrt(d). Corollary 6.6: nontrivial private learning needs this >> 1, up
    to logarithmic factors; the constant is not given (the page measures where DP-GD's excess
    actually falls, :func:`dpcore.theory.measurement.transition_ratio`)."""
    return effective_sizes(n, tau, epsilon)[1] / np.sqrt(d)


def phase_transition_epsilon(
    n: FloatOrArray, tau: FloatOrArray, d: FloatOrArray, ratio: float = 1.0
) -> FloatOrArray:
    """The epsilon at which epsilon n tau / sqrt(d) = ``ratio``."""
    return ratio * np.sqrt(d) / (np.asarray(n, dtype=float) * tau)


REGIMES = ("statistical", "privacy-dominated", "trivial")


def cvar_regime(
    n: FloatOrArray, tau: FloatOrArray, epsilon: FloatOrArray, d: FloatOrArray = 1
) -> np.ndarray:
    """The indicative regime of the worst-case CVaR rate at (n, tau, epsilon), up to constants.

    One rule for every page: the rate min{1, 1/sqrt(n tau) + sqrt(d)/(epsilon n tau)} with
    its constants set to 1 (d = 1: the scalar rate of Theorem 3.4; d > 1: the convex lower
    rate of Corollary 6.5). 2 "trivial" where the sum reaches the cap 1, else 1
    "privacy-dominated" where sqrt(d)/(epsilon n tau) > 1/sqrt(n tau), else 0 "statistical"
    (always so without privacy once n tau > 1). The theorems' unknown constants move every
    boundary, so the labels are indicative. Vectorised; an index into :data:`REGIMES`.
    """
    m, em = effective_sizes(n, tau, epsilon)
    stat, priv = 1.0 / np.sqrt(m), np.sqrt(d) / em
    return np.where(stat + priv >= 1.0, 2, np.where(priv > stat, 1, 0))


def cvar_regime_name(n: float, tau: float, epsilon: float, d: float = 1) -> str:
    """:func:`cvar_regime` at one setting, as its name."""
    return REGIMES[int(cvar_regime(n, tau, epsilon, d))]


def dp_gd_excess_bound(
    n: FloatOrArray,
    d: int,
    tau: FloatOrArray,
    epsilon: FloatOrArray,
    delta: float,
    *,
    G: float = 1.0,
    B: float = 2.0,
    D: float = 2.0,
    steps: int = 100,
) -> FloatOrArray:
    """Worst-case E[F(theta_bar)] - F* <= D_theta sqrt(L^2 + (d+1) sigma^2) / sqrt(T) of
    :func:`dp_gd_cvar` with c_eta = 1 and full averaging (docs/spec/cvar.md §4.2)."""
    _, L, D_theta, _, _, sigma = dp_gd_scales(n, tau, epsilon, delta, G, B, D, steps)
    return float(D_theta * np.sqrt(L * L + (d + 1) * sigma * sigma) / np.sqrt(steps))


def dp_gd_privacy_constant(
    n: int,
    d: int,
    tau: float,
    epsilon: float,
    delta: float,
    *,
    G: float = 1.0,
    B: float = 2.0,
    D: float = 2.0,
) -> dict[str, float]:
    """The c with which the noise part of :func:`dp_gd_excess_bound`,
    D_theta sqrt(d+1) sigma / sqrt(T), equals c sqrt(d) / (epsilon n tau).

    c = D_theta (n tau Delta_2) (epsilon / mu) sqrt((d+1)/d): the lifted diameter
    D_theta = sqrt(D^2 + (B/lam)^2) and the sensitivity n tau Delta_2 = max(2G, sqrt(G^2 +
    lam^2)) carry (GD + B), and epsilon/mu(epsilon, delta) is the Gaussian-DP calibration
    (about 3.7 at epsilon = 1, delta = 1e-5). It does not depend on T. Returns a dict with
    c, mu and the calibration epsilon/mu.
    """
    _, _, D_theta, sens, mu, _ = dp_gd_scales(n, tau, epsilon, delta, G, B, D, 1)
    calibration = epsilon / mu
    c = D_theta * n * tau * sens * calibration * np.sqrt((d + 1) / d)
    return {"c": float(c), "mu": float(mu), "calibration": float(calibration)}
