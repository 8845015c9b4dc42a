"""Theoretical rates and bounds drawn as overlays next to measured errors.

Rates are orders of magnitude (constants set to 1 unless the theorem gives them); present
them as bounds, and measured curves as measurements.
"""

from __future__ import annotations

import numpy as np

from .cvar import cvar_sensitivity, hard_two_point

# --------------------------------------------------------------------------------------------
# CVaR rates (private CVaR paper, spec cvar.md §4.6, §5)


def effective_sizes(n, tau, epsilon):
    """The paper's effective tail sample sizes: n tau (statistical) and epsilon n tau (privacy)."""
    m = np.asarray(n, dtype=float) * tau
    return m, epsilon * m


def scalar_cvar_rate(n, tau, epsilon, bound=1.0):
    """Minimax error of private scalar CVaR (Theorem 3.4):
    B min{1, 1/sqrt(n tau) + 1/(epsilon n tau)}, up to constants. Vectorised."""
    m, em = effective_sizes(n, tau, epsilon)
    return bound * np.minimum(1.0, 1.0 / np.sqrt(m) + 1.0 / em)


def scalar_statistical_constant(tau):
    """sqrt(n tau) E|rho_hat - rho| on the hard instance B Bernoulli(tau/2), as n grows:
    sqrt(1/2) sqrt(2/pi) sqrt(1 - tau/2) (normal approximation of the binomial count)."""
    return np.sqrt(0.5) * np.sqrt(2.0 / np.pi) * np.sqrt(1.0 - np.asarray(tau) / 2.0)


def two_point_lower_bound(n, tau, epsilon, bound=1.0, c1=0.1):
    """Theorem 3.2: every epsilon-DP estimator has max_j E_j|err| >= gap/16 on the two-point
    pair, gap = c1 B min{1, 1/(epsilon n tau)}."""
    return hard_two_point(n, tau, epsilon, bound, c1).gap / 16.0


def finite_class_rate(M, n, tau, epsilon, bound=1.0):
    """Minimax excess CVaR over M predictors (Theorem 4.5), up to constants:
    B min{1, sqrt(log 2M / (n tau)) + log 2M / (epsilon n tau)}."""
    m, em = effective_sizes(n, tau, epsilon)
    log2m = np.log(2.0 * np.asarray(M, dtype=float))
    return bound * np.minimum(1.0, np.sqrt(log2m / m) + log2m / em)


def em_gap_bound(M, n, tau, epsilon, bound=1.0):
    """McSherry-Talwar: E[rho(f_hat)] - min rho <= 2 Delta (ln M + 1) / epsilon for the
    exponential mechanism with Delta = B min{1, 1/(n tau)}."""
    return 2.0 * cvar_sensitivity(n, tau, bound) * (np.log(M) + 1.0) / epsilon


def convex_upper_rate(n, tau, epsilon, delta, d, G=1.0, D=2.0, B=2.0):
    """Theorem 5.4, up to polylog factors:
    (GD + B)/tau (1/sqrt(n) + sqrt((d+1) log(1/delta)) / (epsilon n)).

    Its non-private term is 1/(tau sqrt(n)), not 1/sqrt(n tau): the paper's convex result is
    not tight there.
    """
    n = np.asarray(n, dtype=float)
    return (G * D + B) / tau * (1.0 / np.sqrt(n) + np.sqrt((d + 1) * np.log(1.0 / delta)) / (epsilon * n))


def convex_lower_rate(n, tau, epsilon, d, G=1.0, D=2.0, B=2.0):
    """Corollary 6.5 without its constants: R0 min{1, 1/sqrt(n tau) + sqrt(d)/(epsilon n tau)},
    R0 = min(B, GD). The paper's correction -B exp(-c' n tau) has an unspecified c' and is
    dropped; it matters only for n tau of order 1."""
    m, em = effective_sizes(n, tau, epsilon)
    return min(B, G * D) * np.minimum(1.0, 1.0 / np.sqrt(m) + np.sqrt(d) / em)


def phase_transition_ratio(n, tau, epsilon, d):
    """epsilon n tau / sqrt(d). Privacy is cheap once this is >> 1 (Corollary 6.6); in the
    spec's measurements excess saturates below about 20-40 and is negligible above 200."""
    return effective_sizes(n, tau, epsilon)[1] / np.sqrt(d)


def phase_transition_epsilon(n, tau, d):
    """The epsilon at which epsilon n tau = sqrt(d), the threshold of Corollary 6.6."""
    return np.sqrt(d) / (np.asarray(n, dtype=float) * tau)
