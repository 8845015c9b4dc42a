"""The DP-wERM paper's utility bound, drawn as an overlay next to measured excess risks.

Theorem 10 (empirical), its population version Theorem 11, Corollary 12's sample size, and the
gamma and h that minimise the bound (docs/spec/dp_owl.md §9). Present them as bounds, and measured
curves as measurements (:mod:`dpcore.theory.measurement`). The private-CVaR paper's rates,
which the Theory page draws beside them, live in :mod:`dpcore.cvar.rates` and are importable
from here too.

Conventions for DP-wERM: the code's objective is sum_i w_i l + (gamma/2)||theta||^2, i.e.
(1/n) sum_i w_i l + (lambda/2)||theta||^2 with lambda = gamma/n ("code"); the theorem as
transcribed states lambda = 2 gamma/n ("stated"). Under that convention the minimiser's
sensitivity is (C + 2W)/(2 gamma) (W/gamma when C = 0), so the stated (C + 2W)/gamma is still
valid there, only twice as loose as it needs to be; under the code's convention it is exact.
Each form of Theorem 10 is evaluated at its own convention by default (:data:`FORM_CONVENTION`):
the transcribed ("printed") formula at the theorem's stated lambda = 2 gamma/n, the re-derived
one (this project's derivation, not a theorem of the paper) at the code's lambda = gamma/n, for
which it was derived. ``d`` is the dimension of theta (the
paper's p): the number of features plus one for the intercept.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from .._typing import FloatOrArray

# The private-CVaR paper's rates, which the Theory page draws beside Theorem 10; their home is
# dpcore.cvar.rates, and every one of them is importable from here too.
from ..cvar import rates as _cvar_rates
from ..cvar.rates import *  # noqa: F403

__all__ = [
    "CONVENTIONS",
    "FORMS",
    "FORM_CONVENTION",
    "a_p",
    "best_gamma",
    "best_gamma_h",
    "best_h",
    "convention_of",
    "huber_term",
    "lam_from_gamma",
    "noise_term",
    "radius_quantile",
    "regularization_term",
    "sample_size",
    "unweighted_sensitivity",
    "weighted_sensitivity",
    "werm_bound",
    *_cvar_rates.__all__,
]

# --------------------------------------------------------------------------------------------
# DP-wERM: Theorem 10 (empirical), Theorem 11 (population), Corollary 12 (sample size)

FORMS = ("printed", "re-derived")
CONVENTIONS = {"code": 1.0, "stated": 2.0}  # lambda = factor * gamma / n
FORM_CONVENTION = {"printed": "stated", "re-derived": "code"}


def convention_of(form: str, convention: str | None = None) -> str:
    """The convention a form is evaluated at: ``convention`` if given, else the form's own."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    convention = FORM_CONVENTION[form] if convention is None else convention
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {tuple(CONVENTIONS)}, got {convention!r}")
    return convention


def lam_from_gamma(gamma: FloatOrArray, n: FloatOrArray, convention: str = "code") -> FloatOrArray:
    """lambda = gamma/n ("code") or 2 gamma/n ("stated"): the mean-form ridge constant that a
    convention reads off the code's sum-form gamma."""
    return CONVENTIONS[convention] * np.asarray(gamma, dtype=float) / np.asarray(n, dtype=float)


def weighted_sensitivity(
    weight_bound: FloatOrArray, gamma: FloatOrArray, C: FloatOrArray = 0.0
) -> FloatOrArray:
    """Theorem 7: (C + 2W)/gamma, the L2 sensitivity of the weighted-ERM minimiser."""
    return (C + 2.0 * np.asarray(weight_bound, dtype=float)) / np.asarray(gamma, dtype=float)


def unweighted_sensitivity(gamma: FloatOrArray) -> FloatOrArray:
    """Chaudhuri et al. (2011): 2/gamma for unweighted ERM (every weight 1, C = 0)."""
    return 2.0 / np.asarray(gamma, dtype=float)


def a_p(d: int, rho: FloatOrArray) -> FloatOrArray:
    """The paper's a_p(rho) = sqrt(p + 2 sqrt(p log(1/rho)) + log(1/rho)), with p = d.

    a_p(rho)^2 = p + 2 sqrt(p L) + L (L = log 1/rho) resembles, but is not, Laurent and
    Massart's bound on the (1 - rho) quantile of a chi-square with p degrees of freedom, which
    is p + 2 sqrt(p L) + 2 L. It is a valid bound on the (1 - rho) quantile of the Gamma(p, 1)
    radius that Algorithm 1 draws: Gamma(p, 1) is sub-gamma with variance p and scale 1, so its
    quantile is at most p + sqrt(2 p L) + L. a_p itself
    is below that quantile (for p >= 3 at every rho, and for every p at rho <= 0.05): the
    transcribed T2, which has a_p where the radius belongs, most
    plausibly misses a square. The paper's own Corollary 12 is linear in (lambda + W/(2h)),
    like the re-derived form.
    """
    L = np.log(1.0 / np.asarray(rho, dtype=float))
    return np.sqrt(d + 2.0 * np.sqrt(d * L) + L)


def radius_quantile(d: int, rho: FloatOrArray) -> FloatOrArray:
    """r_rho: the (1 - rho) quantile of Gamma(d, 1); the noise radius is r Delta/epsilon."""
    return stats.gamma.isf(np.asarray(rho, dtype=float), d)


def regularization_term(lam: FloatOrArray, theta0_norm: float) -> FloatOrArray:
    """T1 = (lambda/2) ||theta0||^2."""
    return 0.5 * np.asarray(lam, dtype=float) * np.asarray(theta0_norm, dtype=float) ** 2


def huber_term(weight_bound: FloatOrArray, h: FloatOrArray) -> FloatOrArray:
    """T3 = W h / 4: the Huber hinge exceeds the hinge by at most h/4, so a weighted mean by
    at most W h/4."""
    return np.asarray(weight_bound, dtype=float) * np.asarray(h, dtype=float) / 4.0


def noise_term(
    n: FloatOrArray,
    lam: FloatOrArray,
    h: FloatOrArray,
    epsilon: FloatOrArray,
    rho: float,
    weight_bound: FloatOrArray,
    C: FloatOrArray,
    d: int,
    form: str = "re-derived",
) -> FloatOrArray:
    """T2 = E(n, lambda, h, epsilon, rho), the privacy-noise term, in either form, at a given
    lambda (the convention is the caller's: see :func:`werm_bound`).

    "printed" (as transcribed from the paper):
    [(lambda + W/(2h)) (C + 2W) a_p(rho)]^2 / (2 n lambda epsilon)^2.
    "re-derived" (this project's derivation for lambda = gamma/n):
    (lambda + W/(2h)) [(C + 2W) r_rho]^2 / (2 (n lambda epsilon)^2), from
    J(theta_hat + b) - J(theta_hat) <= (beta/2)||b||^2 with the smoothness
    beta = lambda + W/(2h) of the mean-form objective J and ||b|| <= (C + 2W) r_rho/(n lambda
    epsilon) with probability 1 - rho. Zero when epsilon is infinite. Vectorised.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    n, lam, h, eps = (np.asarray(v, dtype=float) for v in (n, lam, h, epsilon))
    beta = lam + weight_bound / (2.0 * h)
    span = C + 2.0 * weight_bound
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "printed":
            out = (beta * span * a_p(d, rho)) ** 2 / (2.0 * n * lam * eps) ** 2
        else:
            out = beta * (span * radius_quantile(d, rho)) ** 2 / (2.0 * (n * lam * eps) ** 2)
    return np.where(np.isinf(eps), 0.0, out)


def werm_bound(
    n: FloatOrArray,
    gamma: FloatOrArray,
    h: FloatOrArray,
    epsilon: FloatOrArray,
    rho: float,
    weight_bound: FloatOrArray,
    C: FloatOrArray,
    d: int,
    theta0_norm: float,
    form: str = "re-derived",
    G: float = 0.0,
    convention: str | None = None,
) -> dict[str, FloatOrArray]:
    """Theorem 10's bound on L0_hat(theta*) - L0_hat(theta0) with probability >= 1 - rho, and
    with ``G`` > 0 Theorem 11's bound on the population excess L0(theta*) - L0(theta0), which
    adds 2 G_{n,h}(delta0) (a uniform-deviation term the user supplies) and holds with
    probability >= 1 - delta0 - rho.

    Returns a dict of arrays: T1, T2, T3, G (the 2G term) and total. ``gamma`` is the code's
    sum-form constant; lambda = gamma/n or 2 gamma/n by ``convention`` (default: the form's
    own, :data:`FORM_CONVENTION`).
    """
    lam = lam_from_gamma(gamma, n, convention_of(form, convention))
    t1 = regularization_term(lam, theta0_norm)
    t2 = noise_term(n, lam, h, epsilon, rho, weight_bound, C, d, form)
    t3 = huber_term(weight_bound, h)
    g2 = 2.0 * np.asarray(G, dtype=float)
    return {"T1": t1, "T2": t2, "T3": t3, "G": g2, "total": t1 + t2 + t3 + g2}


def sample_size(
    alpha: FloatOrArray,
    epsilon: FloatOrArray,
    weight_bound: float,
    C: float,
    d: int,
    delta: float,
    theta0_norm: float,
    h: FloatOrArray | None = None,
    c: float = 1.0,
) -> dict[str, np.ndarray]:
    """Corollary 12: the n that makes L0(theta*) <= L0(theta0) + alpha with high probability,
    up to constants: the largest of

    statistical  W^2 ||theta0||^2 / alpha^2,
    privacy      (C + 2W) p log(p/delta) ||theta0|| / (epsilon alpha),
    smoothing    sqrt(W/h) ||theta0||^2 (C + 2W) p log(p/delta) / (epsilon alpha^{3/2}),

    with p = d and h = c alpha / W by default (the corollary needs h <= c alpha / W).
    Returns a dict of arrays with the three terms and ``n`` (their maximum). Vectorised.

    Notes
    -----
    The corollary's display bounds the excess by (lambda/2)||theta0||^2 + (lambda + W/(2h))
    (C + 2W)^2 P^2 / (lambda^2 n^2 epsilon^2) + W h/4 + W^2/(lambda n), P = p log(p/delta),
    and picks lambda ~ alpha/||theta0||^2. Asking each part to be at most alpha:
    W^2/(lambda n) <= alpha gives n >= W^2 ||theta0||^2/alpha^2; the lambda part of the noise,
    (C + 2W)^2 P^2/(lambda n^2 epsilon^2) <= alpha, gives n >= (C + 2W) P ||theta0||/(epsilon
    alpha); the W/(2h) part, (W/(2h)) (C + 2W)^2 P^2 ||theta0||^4/(alpha^2 n^2 epsilon^2)
    <= alpha, gives n >= sqrt(W/(2h)) (C + 2W) P ||theta0||^2/(epsilon alpha^{3/2}). So the
    smoothing term carries ||theta0||^2 (the constant 1/sqrt 2 dropped); the printed
    corollary has ||theta0||.
    """
    alpha, eps = np.asarray(alpha, dtype=float), np.asarray(epsilon, dtype=float)
    W, t0 = float(weight_bound), float(theta0_norm)
    h = c * alpha / W if h is None else np.asarray(h, dtype=float)
    common = (C + 2.0 * W) * d * np.log(d / delta) * t0
    stat = np.broadcast_to(W**2 * t0**2 / alpha**2, np.broadcast(alpha, eps).shape)
    with np.errstate(divide="ignore"):
        priv = np.where(np.isinf(eps), 0.0, common / (eps * alpha))
        smooth = np.where(np.isinf(eps), 0.0, np.sqrt(W / h) * common * t0 / (eps * alpha**1.5))
    return {
        "statistical": stat,
        "privacy": priv,
        "smoothing": smooth,
        "n": np.maximum(stat, np.maximum(priv, smooth)),
    }


def _positive_root(cubic, linear, constant):
    """The one positive root of cubic x^3 + linear x + constant (cubic > 0 >= linear, constant)."""
    roots = np.roots([cubic, 0.0, linear, constant])
    real = roots[np.abs(roots.imag) <= 1e-9 * np.abs(roots).max()].real
    return float(real.max())


def _noise_constant(n, epsilon, rho, weight_bound, C, d, form):
    """T2 = q (lambda + b)^2 / lambda^2 (printed) or c (lambda + b) / lambda^2 (re-derived)."""
    span = C + 2.0 * weight_bound
    if form == "printed":
        return (span * a_p(d, rho)) ** 2 / (4.0 * n**2 * epsilon**2)
    return (span * radius_quantile(d, rho)) ** 2 / (2.0 * n**2 * epsilon**2)


def best_gamma(
    n: float,
    h: float,
    epsilon: float,
    rho: float,
    weight_bound: float,
    C: float,
    d: int,
    theta0_norm: float,
    form: str = "re-derived",
    convention: str | None = None,
) -> float:
    """The gamma minimising Theorem 10's bound at fixed h (closed form: a cubic's root).

    With a = ||theta0||^2/2 and b = W/(2h), the re-derived bound a lambda + c (lambda + b)/
    lambda^2 + Wh/4 is minimal where a lambda^3 - c lambda - 2 b c = 0; the printed one,
    a lambda + q (1 + b/lambda)^2 + Wh/4, where a lambda^3 - 2 q b lambda - 2 q b^2 = 0.
    Returns gamma = n lambda / factor of the convention (default: the form's own); 0 without
    privacy, inf when ||theta0|| = 0.
    """
    if np.isinf(epsilon):
        return 0.0
    a = 0.5 * theta0_norm**2
    if a == 0:
        return np.inf
    k = _noise_constant(n, epsilon, rho, weight_bound, C, d, form)
    b = weight_bound / (2.0 * h)
    if form == "printed":
        lam = _positive_root(a, -2.0 * k * b, -2.0 * k * b * b)
    else:
        lam = _positive_root(a, -k, -2.0 * b * k)
    return n * lam / CONVENTIONS[convention_of(form, convention)]


def best_h(
    n: float,
    gamma: float,
    epsilon: float,
    rho: float,
    weight_bound: float,
    C: float,
    d: int,
    form: str = "re-derived",
    convention: str | None = None,
) -> float:
    """The h minimising Theorem 10's bound at fixed gamma (closed form).

    Re-derived: h = sqrt(2c)/lambda. Printed: the positive root of
    lambda h^3 - 4 q h - 2 q W/lambda = 0. 0 without privacy (T3 alone is then minimal at h -> 0).
    """
    if np.isinf(epsilon):
        return 0.0
    lam = float(lam_from_gamma(gamma, n, convention_of(form, convention)))
    k = _noise_constant(n, epsilon, rho, weight_bound, C, d, form)
    if form == "printed":
        return _positive_root(lam, -4.0 * k, -2.0 * k * weight_bound / lam)
    return float(np.sqrt(2.0 * k) / lam)


def best_gamma_h(
    n: float,
    epsilon: float,
    rho: float,
    weight_bound: float,
    C: float,
    d: int,
    theta0_norm: float,
    form: str = "re-derived",
    convention: str | None = None,
) -> tuple[float, float]:
    """The (gamma, h) minimising Theorem 10's bound jointly.

    Re-derived, closed form: with h = sqrt(2c)/lambda the h-dependent part is W sqrt(c/2)/
    lambda, so lambda = sqrt((c + W sqrt(c/2))/a). Printed: a 1-D search over log lambda with
    h at its best for each lambda.
    """
    if np.isinf(epsilon):
        return 0.0, 0.0
    a = 0.5 * theta0_norm**2
    if a == 0:
        return np.inf, 0.0
    conv = convention_of(form, convention)
    to_gamma = n / CONVENTIONS[conv]
    k = _noise_constant(n, epsilon, rho, weight_bound, C, d, form)
    if form == "re-derived":
        lam = np.sqrt((k + weight_bound * np.sqrt(k / 2.0)) / a)
        return float(to_gamma * lam), float(np.sqrt(2.0 * k) / lam)

    def total(log_lam):
        g = to_gamma * np.exp(log_lam)
        h = best_h(n, g, epsilon, rho, weight_bound, C, d, form, conv)
        return float(
            werm_bound(
                n, g, h, epsilon, rho, weight_bound, C, d, theta0_norm, form, convention=conv
            )["total"]
        )

    start = np.log(
        best_gamma(n, 1.0, epsilon, rho, weight_bound, C, d, theta0_norm, form, conv) / to_gamma
    )
    # A bounded search, e^±10 around the fixed-h optimum: a bracket needs f(start) below both
    # ends, which fails where the bound is flat in lambda (epsilon = 1000 at large n, W = 1).
    res = optimize.minimize_scalar(
        total, bounds=(start - 10.0, start + 10.0), method="bounded", options={"xatol": 1e-9}
    )
    g = float(to_gamma * np.exp(res.x))
    return g, best_h(n, g, epsilon, rho, weight_bound, C, d, form, conv)
