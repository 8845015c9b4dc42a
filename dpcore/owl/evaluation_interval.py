"""Interval helpers of the private evaluation: quantiles of a normal plus Laplace noise, and
Fieller's interval for a ratio whose numerator and denominator are both noisy.

Notes
-----
The half-width of an evaluation interval is the ``level`` quantile of
|sigma Z + s (L_1 + L_2) + b L_3|, Z standard normal and L iid standard Laplace: the sampling
error, the two cells' noise and the count's noise (scaled by |theta|). The Laplace sum's
characteristic function 1 / ((1 + s^2 t^2)^2 (1 + b^2 t^2)) splits, with r = s^2 / b^2, into

    wA / (1 + s^2 t^2) + wB / (1 + s^2 t^2)^2 + wC / (1 + b^2 t^2),
    wC = 1 / (1 - r)^2,  wA = -r / (1 - r)^2,  wB = -r / (1 - r),

a signed mixture of a Laplace(s), a two-Laplace sum at s and a Laplace(b), each integrated
against the normal by the quadrature that suits it (Gauss-Hermite over the normal when the
part's scale is at least sigma, Gauss-Laguerre over the part otherwise). Near r = 1 the
weights grow; there b is raised to s / sqrt(0.9), which can only widen the interval
(Anderson's theorem: P(|X + b L| <= q) does not increase with b for X symmetric unimodal).
The quantile is found by a vectorised Illinois (regula falsi) iteration.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special
from scipy.optimize import brentq
from scipy.special import ndtri

__all__ = ["abs_quantile", "bernstein_sigma", "fieller_interval", "two_laplace_quantile"]


def bernstein_sigma(second, m, b, level):
    """The sampling error's standard deviation taken by the intervals: sqrt(second / m) raised
    by Bernstein's range term (the module docstring of :mod:`dpcore.owl.evaluation`).

    t = rho + sqrt(rho^2 + z^2 second / m), rho = z^2 b / (6 m), from Bernstein's inequality
    m t^2 <= 2L (sigma^2 + b t / 3) with 2L = z^2 and b the public bound of one row's term;
    returns t / z (the normal interval's sigma as m grows).
    """
    z = float(ndtri(0.5 + level / 2.0))
    rho = z * z * np.asarray(b, dtype=float) / (6.0 * int(m))
    return (rho + np.sqrt(rho * rho + z * z * np.asarray(second, dtype=float) / int(m))) / z


def fieller_interval(num, share, sigma, s, count_scale, bound, level, steps=4):
    """Fieller's interval for theta = E[numerator] / E[share], within [-bound, bound].

    Parameters
    ----------
    num, share : arrays
        The noisy numerator (a signed sum of two cells) and the noisy complete share N~ / m.
    sigma : array
        Standard deviation taken for the numerator's sampling error.
    s : float
        Laplace scale of each of the numerator's two cells.
    count_scale : float
        Laplace scale of the share's noise (1 / (m ε_count); 0 without a count).
    bound : float or array
        Public bound on |theta|.
    level : float
    steps : int
        Narrowing steps (one when ``count_scale`` is 0: the set is then exact at once).

    Returns
    -------
    (lower, upper) : arrays

    Notes
    -----
    The pivot num - theta * share is the sampling error plus s (L_1 + L_2) plus
    theta * count_scale * L_3, with level quantile h(|theta|) non-decreasing in |theta|.
    Fieller's set {theta : |pivot| <= h(|theta|)} is approached from [-bound, bound] by a few
    monotone steps, each using h at the largest |theta| of the previous set, so each step's set
    still contains Fieller's and covers theta whenever the pivot does. A share at or below 0
    gives the whole range.
    """
    num, share, sigma, bound = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (num, share, sigma, bound))
    )
    reach = bound.copy()
    ok = share > 0
    safe = np.where(ok, share, 1.0)
    lower, upper = -reach, reach.copy()
    for _ in range(steps if count_scale > 0 else 1):
        h = abs_quantile(level, sigma, s, reach * count_scale)
        lower = np.where(ok, np.clip((num - h) / safe, -bound, bound), -bound)
        upper = np.where(ok, np.clip((num + h) / safe, -bound, bound), bound)
        reach = np.maximum(np.abs(lower), np.abs(upper))
    return lower, upper


# Each Laplace part is integrated against the normal by the quadrature that suits it: over the
# normal (Gauss-Hermite) when the part's scale is at least sigma, over the part (Gauss-Laguerre)
# otherwise, so that the integrand stays smooth on the nodes' scale.
_Z, _ZW = np.polynomial.hermite_e.hermegauss(81)
_ZW = _ZW / _ZW.sum()
_X, _XW = np.polynomial.laguerre.laggauss(80)


def _laplace_cdf(x, two):
    """CDF of L1 (``two`` False) or of L1 + L2 (density (1 + |x|) e^{-|x|} / 4)."""
    ax = np.abs(x)
    tail = (2.0 + ax) * np.exp(-ax) / 4.0 if two else np.exp(-ax) / 2.0
    return np.where(x < 0, tail, 1.0 - tail)


def _part_coverage(q, sigma, k, two):
    """P(|sigma Z + k Y| <= q), Y = L1 or L1 + L2; 1-d arrays of one length, k > 0 or sigma > 0."""
    out = np.empty(q.shape)
    by_normal = sigma <= k
    if by_normal.any():
        qn, sn, kn = q[by_normal, None], sigma[by_normal, None], k[by_normal, None]
        out[by_normal] = (
            _ZW * (_laplace_cdf((qn - sn * _Z) / kn, two) - _laplace_cdf((-qn - sn * _Z) / kn, two))
        ).sum(-1)
    by_part = ~by_normal
    if by_part.any():
        qn, sn, kn = q[by_part, None], sigma[by_part, None], k[by_part, None]
        w = _XW * (1.0 + _X) / 4.0 if two else _XW / 2.0  # density per half-line, over e^{-x}
        y, ndtr = kn * _X, special.ndtr
        out[by_part] = (
            w
            * (
                ndtr((qn - y) / sn)
                - ndtr((-qn - y) / sn)
                + ndtr((qn + y) / sn)
                - ndtr((-qn + y) / sn)
            )
        ).sum(-1)
    return out


def _coverage(q, sigma, s, b):
    """P(|sigma Z + s (L1 + L2) + b L3| <= q) for s > 0 (arrays of one shape).

    The Laplace sum's characteristic function 1 / ((1 + s^2 t^2)^2 (1 + b^2 t^2)) splits, with
    r = s^2 / b^2, into wA / (1 + s^2 t^2) + wB / (1 + s^2 t^2)^2 + wC / (1 + b^2 t^2), where
    wC = 1 / (1 - r)^2, wA = -r / (1 - r)^2, wB = -r / (1 - r): a signed mixture of a Laplace(s),
    a two-Laplace sum at s and a Laplace(b). Near r = 1 the weights grow; there b is raised to
    s / sqrt(0.9), which can only widen the interval (Anderson's theorem).
    """
    with_b = b > 0
    b = np.where(with_b & (b < s / np.sqrt(0.9)) & (b > s / np.sqrt(1.1)), s / np.sqrt(0.9), b)
    r = np.where(with_b, (s / np.where(with_b, b, 1.0)) ** 2, 0.0)
    wA = np.where(with_b, -r / (1.0 - r) ** 2, 0.0)
    wB = np.where(with_b, -r / (1.0 - r), 1.0)
    wC = np.where(with_b, 1.0 / (1.0 - r) ** 2, 0.0)
    sv = np.full(q.shape, float(s))
    total = wB * _part_coverage(q, sigma, sv, True)
    if np.any(with_b):
        total = (
            total
            + wA * _part_coverage(q, sigma, sv, False)
            + wC * _part_coverage(q, sigma, b, False)
        )
    return total


@lru_cache(maxsize=256)
def two_laplace_quantile(level):
    """The ``level`` quantile of |L1 + L2|: P(|L1 + L2| > x) = (2 + x) e^{-x} / 2."""
    return float(
        brentq(lambda x: (2.0 + x) * np.exp(-x) / 2.0 - (1.0 - level), 0.0, 200.0, xtol=1e-14)
    )


def abs_quantile(level, sigma, s, b, iterations=60, rtol=1e-9):
    """The ``level`` quantile of |sigma Z + s (L1 + L2) + b L3| (arrays sigma and b, scalar s).

    Parameters
    ----------
    level : float in (0, 1)
    sigma, b : arrays of one shape (b broadcast to sigma's)
    s : float (0: no noise, the normal quantile)
    iterations, rtol : the root finder's limits

    Returns
    -------
    array of sigma's shape

    Notes
    -----
    The Illinois (modified regula falsi) method, vectorised, on a bracket [0, top]: top splits
    1 - level over the three terms (a union bound), so the quantile lies below it. The upper end
    of the final bracket is returned: its coverage is at least ``level``.
    """
    sigma = np.asarray(sigma, dtype=float)
    shape = sigma.shape
    sigma = sigma.ravel()
    b = np.broadcast_to(np.asarray(b, dtype=float), shape).ravel()
    s = float(s)
    if s == 0.0:  # no noise (ε_eval = inf): the count is exact, b is 0 too
        return (float(ndtri(0.5 + level / 2.0)) * sigma).reshape(shape)
    tail = (1.0 - level) / 3.0
    top = (
        float(ndtri(1.0 - tail / 2.0)) * sigma
        + s * two_laplace_quantile(1.0 - tail)
        - b * np.log(tail)
    )
    lo, f_lo = np.zeros_like(top), np.full(top.shape, -level)
    hi = top.copy()
    f_hi = _coverage(hi, sigma, s, b) - level
    todo = np.arange(top.size)
    for _ in range(iterations):
        a, fa, c, fc = lo[todo], f_lo[todo], hi[todo], f_hi[todo]
        new = c - fc * (c - a) / (fc - fa)
        new = np.where((new > np.minimum(a, c)) & (new < np.maximum(a, c)), new, (a + c) / 2.0)
        f_new = _coverage(new, sigma[todo], s, b[todo]) - level
        crossed = (f_new > 0) != (fc > 0)
        # Illinois: when the same end stays, halve its partner's value so that it moves next.
        lo[todo] = np.where(crossed, c, a)
        f_lo[todo] = np.where(crossed, fc, fa / 2.0)
        hi[todo], f_hi[todo] = new, f_new
        done = (np.abs(hi[todo] - lo[todo]) <= rtol * top[todo]) | (f_new == 0)
        todo = todo[~done]
        if todo.size == 0:
            break
    return np.where(f_hi >= 0, hi, lo).reshape(shape)
