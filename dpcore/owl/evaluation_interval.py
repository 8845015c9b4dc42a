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
    cover = lambda q, idx: _coverage(q, sigma[idx], s, b[idx])  # noqa: E731
    return _illinois(cover, top, level, iterations, rtol).reshape(shape)


def _illinois(cover, top, level, iterations=60, rtol=1e-9):
    """The smallest q in [0, top] with cover(q) >= level, vectorised over top's entries.

    ``cover(q, idx)`` is the coverage at q of the entries idx; cover(top) must be >= level. The
    Illinois (modified regula falsi) method; the upper end of the final bracket is returned,
    so its coverage is at least ``level``.
    """
    lo, f_lo = np.zeros_like(top), np.full(top.shape, -level)
    hi = top.copy()
    f_hi = cover(hi, np.arange(top.size)) - level
    todo = np.flatnonzero(top > 0)
    for _ in range(iterations):
        if todo.size == 0:
            break
        a, fa, c, fc = lo[todo], f_lo[todo], hi[todo], f_hi[todo]
        new = c - fc * (c - a) / (fc - fa)
        new = np.where((new > np.minimum(a, c)) & (new < np.maximum(a, c)), new, (a + c) / 2.0)
        f_new = cover(new, todo) - level
        crossed = (f_new > 0) != (fc > 0)
        # Illinois: when the same end stays, halve its partner's value so that it moves next.
        lo[todo] = np.where(crossed, c, a)
        f_lo[todo] = np.where(crossed, fc, fa / 2.0)
        hi[todo], f_hi[todo] = new, f_new
        done = (np.abs(hi[todo] - lo[todo]) <= rtol * top[todo]) | (f_new == 0)
        todo = todo[~done]
    return np.where(f_hi >= 0, hi, lo)


# ---- sums of several Laplace draws at two scales: a Gamma mixture of normals ----------------
#
# A standard Laplace draw is sqrt(2 W) Z with W ~ Exp(1) and Z standard normal, so the sum of n
# independent ones is sqrt(2 G) Z with G ~ Gamma(n, 1). Hence sigma Z + s (n_s draws) +
# b (n_b draws) is normal given (G_s, G_b), with variance sigma^2 + 2 s^2 G_s + 2 b^2 G_b, and
# P(|X| <= q) = E[erf(q / sqrt(2 V))]: a two-dimensional generalised Gauss-Laguerre
# quadrature (40 nodes a side: the coverage near the 95% quantile to about 1e-6).
_MIX_NODES = 40


@lru_cache(maxsize=32)
def _gamma_nodes(n):
    """Nodes and weights of E[f(G)], G ~ Gamma(n, 1) (n = 0: G = 0)."""
    if n == 0:
        return np.zeros(1), np.ones(1)
    x, w = special.roots_genlaguerre(_MIX_NODES, n - 1.0)
    return x, w / w.sum()


def mixture_coverage(q, sigma, s, n_s, b, n_b):
    """P(|sigma Z + s (L_1 + ... + L_{n_s}) + b (L'_1 + ... + L'_{n_b})| <= q), L iid standard
    Laplace; q, sigma, s, b 1-d arrays of one length."""
    gs, ws = _gamma_nodes(int(n_s))
    gb, wb = _gamma_nodes(int(n_b))
    var = (
        (sigma * sigma)[:, None, None]
        + 2.0 * (s * s)[:, None, None] * gs[None, :, None]
        + 2.0 * (b * b)[:, None, None] * gb[None, None, :]
    )
    ratio = q[:, None, None] / np.sqrt(2.0 * np.maximum(var, 1e-300))
    return np.einsum("pij,i,j->p", special.erf(ratio), ws, wb)


@lru_cache(maxsize=64)
def laplace_sum_quantile(level, n):
    """The ``level`` quantile of |L_1 + ... + L_n|, n iid standard Laplace draws."""
    if n <= 0:
        return 0.0
    if n == 1:
        return float(-np.log1p(-level))
    if n == 2:
        return two_laplace_quantile(level)
    one = np.ones(1)
    return float(mixture_abs_quantile(level, 0.0 * one, one, n, 0.0 * one, 0)[0])


def mixture_abs_quantile(level, sigma, s, n_s, b, n_b, iterations=60, rtol=1e-9):
    """The ``level`` quantile of |sigma Z + s (n_s Laplace draws) + b (n_b Laplace draws)|.

    sigma, s, b broadcast to one shape; n_s and n_b are counts of iid standard Laplace draws.
    Two draws at s and at most one at b is :func:`abs_quantile`'s exact closed form (used
    then); otherwise the Gamma mixture of normals above. The bracket's top is a union bound
    (the normal's quantile plus, for each sum of n draws, n times a single draw's quantile).
    """
    sigma, s, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (sigma, s, b)))
    shape = sigma.shape
    sigma, s, b = (v.ravel().copy() for v in (sigma, s, b))
    n_s, n_b = int(n_s), int(n_b)
    s = s if n_s > 0 else np.zeros_like(s)
    b = b if n_b > 0 else np.zeros_like(b)
    z = float(ndtri(0.5 + level / 2.0))
    out = z * sigma  # no noise: the normal quantile
    noisy = (s > 0) | (b > 0)
    if not noisy.any():
        return out.reshape(shape)
    idx = np.flatnonzero(noisy)
    sg, ss, sb = sigma[idx], s[idx], b[idx]
    if n_s == 2 and n_b <= 1 and (ss > 0).all():
        # abs_quantile's exact form, scaled by s: |(sigma/s) Z + L1 + L2 + (b/s) L3| * s.
        out[idx] = abs_quantile(level, sg / ss, 1.0, sb / ss, iterations, rtol) * ss
        return out.reshape(shape)
    tail = (1.0 - level) / 3.0
    top = float(ndtri(1.0 - tail / 2.0)) * sg
    for scale, n in ((ss, n_s), (sb, n_b)):
        if n > 0:
            top = top + scale * n * np.log(n / tail)
    cover = lambda q, i: mixture_coverage(q, sg[i], ss[i], n_s, sb[i], n_b)  # noqa: E731
    out[idx] = _illinois(cover, top, level, iterations, rtol)
    return out.reshape(shape)


def arm_ratio_intervals(
    num,
    second,
    share,
    *,
    m,
    s,
    cells,
    count_scale,
    reach,
    bound,
    range_bound,
    moment_noise,
    cap,
    level,
    steps=4,
):
    """Points and intervals of estimates that are sums of per-arm ratios theta = sum_k mu_k / q_k.

    Each estimate j has a part in each arm k: a noisy numerator (a signed sum of ``cells[j, k]``
    released cells of that arm, each with Laplace noise at scale ``s``) over the arm's noisy
    complete share q~_k (Laplace noise at ``count_scale[k]``; shares of 1 and scale 0 when every
    row is declared complete).

    Parameters
    ----------
    num, second : arrays (..., J, K)
        The parts' noisy numerators and their noisy second moments (numerator units).
    share : array (..., K)
        The arms' noisy complete shares.
    m : int
    s : float
        Laplace scale of one cell.
    cells : int array (J, K)
        Cells in each part (0: the estimate does not use the arm).
    count_scale : array (K,)
        Laplace scale of each share's noise.
    reach : array (J, K)
        Public bound on the absolute value of each part's ratio mu_k / q_k.
    bound : array (J,)
        Public bound on |theta_j|.
    range_bound : array (J,)
        Public bound on one row's term (numerator units): Bernstein's range term.
    moment_noise : sequence of J (scale, draws)
        The noise of each estimate's second moment: ``draws`` Laplace draws at ``scale``; the
        moment is raised by the ``level`` quantile of its absolute value.
    cap : array (J,)
        Public bound on each estimate's second moment (numerator units).
    level : float

    Returns
    -------
    (point, lower, upper) : arrays (..., J)

    Notes
    -----
    An estimate over one arm is Fieller's interval (:func:`fieller_interval`): exact, whatever
    the share's noise. An estimate over several arms, theta_hat = sum_k mu~_k / q~_k, has error
    sum_k (e_k - theta_k c_k) / q~_k, with e_k the part's sampling error and cell noise and c_k
    the share's noise: each numerator is the exact Fieller pivot of its arm, weighted by the
    observed 1 / q~_k (the weights' noise cancels when the shares are equal; the one
    approximation is to take them as fixed). Its half-width is the ``level`` quantile of
    |sigma Z + s' (cell draws) + b' (one draw per counted arm)|, with sigma^2 the sum of the
    parts' second moments over m q~_k^2 (Bernstein-widened with the range bound over the
    smallest share), s' = s / min q~_k and b' = max_k |theta_hat_k| c_k / q~_k (theta_hat_k
    the part's own ratio within its public reach): raising a term's scale to the largest only
    widens the interval (Anderson's theorem). A share at or below 0 gives the whole range.
    """
    num, second = np.asarray(num, dtype=float), np.asarray(second, dtype=float)
    share = np.asarray(share, dtype=float)
    cells = np.asarray(cells, dtype=int)
    count_scale = np.asarray(count_scale, dtype=float)
    reach, bound = np.asarray(reach, dtype=float), np.asarray(bound, dtype=float)
    range_bound, cap = np.asarray(range_bound, dtype=float), np.asarray(cap, dtype=float)
    lead = num.shape[:-2]
    n_est = cells.shape[0]
    point = np.empty(lead + (n_est,))
    lower, upper = np.empty_like(point), np.empty_like(point)
    m = int(m)
    for j in range(n_est):
        used = np.flatnonzero(cells[j] > 0)
        scale2, draws = moment_noise[j]
        raise2 = float(scale2) * laplace_sum_quantile(level, int(draws))
        q = share[..., used]
        ok = np.all(q > 0, axis=-1)
        safe = np.maximum(q, 1.0 / m)
        if used.size == 1:
            k = used[0]
            sec = np.minimum(np.maximum(second[..., j, k], 0.0) + raise2, cap[j])
            sigma = bernstein_sigma(sec, m, range_bound[j], level)
            a, b = fieller_interval(
                num[..., j, k],
                share[..., k],
                sigma,
                s,
                float(count_scale[k]),
                bound[j],
                level,
                steps,
            )
            point[..., j] = np.clip(
                num[..., j, k] / np.maximum(share[..., k], 1.0 / m), -bound[j], bound[j]
            )
            lower[..., j], upper[..., j] = a, b
            continue
        q_min = np.min(safe, axis=-1)
        parts = num[..., j, used] / safe
        theta = np.sum(parts, axis=-1)
        sec = np.sum(np.maximum(second[..., j, used], 0.0) / safe**2, axis=-1)
        sec = np.minimum(sec + raise2 / q_min**2, cap[j] / q_min**2)
        sigma = bernstein_sigma(sec, m, range_bound[j] / q_min, level)
        counted = count_scale[used] > 0
        b = np.max(np.clip(np.abs(parts), 0.0, reach[j, used]) * count_scale[used] / safe, axis=-1)
        half = mixture_abs_quantile(
            level, sigma, s / q_min, int(cells[j].sum()), b, int(counted.sum())
        )
        point[..., j] = np.clip(theta, -bound[j], bound[j])
        lower[..., j] = np.where(ok, np.clip(theta - half, -bound[j], bound[j]), -bound[j])
        upper[..., j] = np.where(ok, np.clip(theta + half, -bound[j], bound[j]), bound[j])
    return point, lower, upper
