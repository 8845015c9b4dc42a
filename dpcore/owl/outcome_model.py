"""A private per-arm linear outcome model, from noisy sufficient statistics.

The doubly robust (AIPW) evaluation (:mod:`dpcore.owl.evaluation_aipw`) needs a prediction
mu_a(x) of each arm's outcome. It is fitted here on the fit part of the public split, so that
it is fixed (public, released) when the evaluation part is scored.

Notes
-----
**Scaling.** Each used covariate is clipped to its public bounds and mapped to [-1, 1]; with an
intercept the design row is x~ = (1, z) in [-1, 1]^d, d = 1 + the number of used covariates.
The outcome is clipped to the public bounds [lo, hi] and mapped to y = (clip(B) - c) / u in
[-1, 1], c = (lo + hi) / 2, u = (hi - lo) / 2. Incomplete rows (``include`` False) contribute
nothing (a data-independent treatment).

**The release.** For each arm a the upper triangle (diagonal included) of G_a = sum x~ x~'
and h_a = sum x~ y over that arm's rows: one vector of 2 (d (d + 1) / 2 + d) numbers. One row
contributes at most d (d + 1) / 2 + d to its arm's block in L1 (every entry of x~ x~' and of
x~ y lies in [-1, 1]); replacing it removes that and adds the new row's to its (possibly other)
arm's block, so the L1 sensitivity is 2 (d (d + 1) / 2 + d) = d (d + 3)
(:func:`statistics_sensitivity`), and Laplace(d (d + 3) / ε) noise on every entry is ε-DP.
The coefficients are post-processing: G~_a is symmetrised, its eigenvalues floored at 0 and
theta_a = (G~_a + lambda I)^{-1} h~_a with the public lambda = ``ridge`` n + 2 sqrt(2 d) s,
n the public size of the part and s = d (d + 3) / ε the noise scale (the second term keeps the
noisy matrix well conditioned, about the spectral norm of the noise). Predictions are
c + u x~' theta_a clipped to [lo, hi].

The noise grows like d^2 / ε against the n of the part: with many covariates choose a few that
predict the outcome (``columns``, a public choice). A bad model never biases the AIPW
evaluation (the propensities are known); it only narrows the intervals less.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_bounds, check_epsilon, check_real
from ..privacy.mechanisms import laplace_scale, sample_laplace

__all__ = [
    "OutcomeModel",
    "design_rows",
    "scaled_outcome",
    "fit_outcome_model",
    "solve_statistics",
    "statistics_sensitivity",
    "sufficient_statistics",
]


def statistics_sensitivity(d):
    """L1 sensitivity d (d + 3) of the two arms' sufficient statistics (see the Notes)."""
    d = int(d)
    return float(d * (d + 3))


def design_rows(X, feature_bounds, columns=None):
    """Design rows (1, z) with z the used covariates clipped and mapped to [-1, 1].

    Parameters
    ----------
    X : array (..., n, p)
    feature_bounds : (lower, upper) arrays (p,), public
    columns : sequence of int, optional
        Positions of the covariates the model uses (default all).

    Returns
    -------
    array (..., n, d), d = 1 + the number of used covariates
    """
    X = np.asarray(X, dtype=float)
    lower, upper = (np.asarray(b, dtype=float) for b in feature_bounds)
    cols = np.arange(X.shape[-1]) if columns is None else np.asarray(columns, dtype=int)
    lo, hi = lower[cols], upper[cols]
    span = np.where(hi > lo, hi - lo, 1.0)
    z = 2.0 * (np.clip(np.nan_to_num(X[..., cols]), lo, hi) - lo) / span - 1.0
    return np.concatenate((np.ones(z.shape[:-1] + (1,)), z), axis=-1)


def scaled_outcome(B, outcome_bounds):
    """Outcomes clipped to the public bounds and mapped to [-1, 1] (a missing one to 0, the
    bounds' midpoint)."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    c, u = (lo + hi) / 2.0, (hi - lo) / 2.0
    return (np.clip(np.nan_to_num(np.asarray(B, dtype=float), nan=c), lo, hi) - c) / u


def sufficient_statistics(Z, A, y, include=None, arms=(1.0, -1.0)):
    """The exact statistics (vech G_+, h_+, vech G_-, h_-), vectorised over leading axes.

    Parameters
    ----------
    Z : array (..., n, d) of design rows in [-1, 1]
    A : array (..., n) of +/-1 (or of the codes in ``arms``)
    y : array (..., n) of scaled outcomes in [-1, 1]
    include : bool array (..., n), optional (False: the row contributes nothing)
    arms : sequence of codes of A
        One block per arm, in this order: (+1, -1) for two arms, 0..K-1 for K (a row is in
        one arm's block, so replacing it moves two blocks: the L1 sensitivity is
        :func:`statistics_sensitivity` whatever K).

    Returns
    -------
    array (..., len(arms) k), k = d (d + 1) / 2 + d
    """
    Z, A, y = (np.asarray(v, dtype=float) for v in (Z, A, y))
    r = np.ones(A.shape) if include is None else np.asarray(include, dtype=float)
    iu = np.triu_indices(Z.shape[-1])
    out = []
    for arm in arms:
        w = r * (A == arm)
        G = np.einsum("...n,...ni,...nj->...ij", w, Z, Z)[..., iu[0], iu[1]]
        h = np.einsum("...n,...ni->...i", w * y, Z)
        out += [G, h]
    return np.concatenate(out, axis=-1)


def solve_statistics(stats, d, n, epsilon, ridge=0.01):
    """Per-arm coefficients (..., K, d) from (noisy) statistics of K arms' blocks (K = 2 for
    :func:`sufficient_statistics`'s default): post-processing only.

    ``n`` is the public size of the part, ``epsilon`` the statistics' budget (for the public
    conditioning term of lambda, see the Notes).
    """
    stats = np.asarray(stats, dtype=float)
    k = d * (d + 1) // 2
    iu = np.triu_indices(d)
    scale = laplace_scale(statistics_sensitivity(d), epsilon)
    lam = float(ridge) * float(n) + 2.0 * np.sqrt(2.0 * d) * scale
    coefs = []
    size = k + d
    for j in range(stats.shape[-1] // size):
        block = stats[..., j * size : (j + 1) * size]
        G = np.zeros(block.shape[:-1] + (d, d))
        G[..., iu[0], iu[1]] = block[..., :k]
        G = G + np.swapaxes(G, -1, -2)
        G[..., np.arange(d), np.arange(d)] = block[..., :k][..., _diagonal(d)]  # counted twice
        vals, vecs = np.linalg.eigh(G)
        inv = 1.0 / (np.maximum(vals, 0.0) + max(lam, 1e-12))
        h = block[..., k:]
        # V diag(inv) V' h as two matrix products (a four-operand einsum is ~10x slower)
        proj = (np.swapaxes(vecs, -1, -2) @ h[..., None])[..., 0]
        coefs.append((vecs @ (inv * proj)[..., None])[..., 0])
    return np.stack(coefs, axis=-2)


def _diagonal(d):
    """Positions of the diagonal entries within numpy's row-major upper triangle."""
    iu = np.triu_indices(d)
    return np.flatnonzero(iu[0] == iu[1])


@dataclass(frozen=True)
class OutcomeModel:
    """A released per-arm linear outcome model (all fields public).

    ``coef`` is (2, d): the treated arm's then the control arm's coefficients on the scaled
    design row (1, z); ``columns`` the used covariates' positions in X.
    """

    coef: np.ndarray
    feature_bounds: tuple
    outcome_bounds: tuple
    columns: tuple | None
    epsilon: float
    sensitivity: float

    def predict(self, X):
        """Predictions (..., n, 2) of the treated and control outcome, clipped to the bounds."""
        lo, hi = (float(v) for v in self.outcome_bounds)
        Z = design_rows(X, self.feature_bounds, self.columns)
        pred = (lo + hi) / 2.0 + (hi - lo) / 2.0 * np.einsum("...nd,ad->...na", Z, self.coef)
        return np.clip(pred, lo, hi)

    def to_dict(self):
        return {
            "method": "per-arm ridge regression from Laplace-noised sufficient statistics",
            "epsilon": self.epsilon,
            "sensitivity_l1": self.sensitivity,
            "columns": None if self.columns is None else list(self.columns),
            "coef_treated": [float(v) for v in self.coef[0]],
            "coef_control": [float(v) for v in self.coef[1]],
            "scaling": "covariates clipped to their public bounds and mapped to [-1, 1]; "
            "outcome (clip(B) - midpoint) / half-range",
        }


def fit_outcome_model(
    X,
    A,
    B,
    *,
    feature_bounds,
    outcome_bounds,
    epsilon,
    columns=None,
    include=None,
    ridge=0.01,
    rng=None,
    sampler="numpy",
):
    """Fit the per-arm linear outcome model with ε-DP (noisy sufficient statistics).

    Parameters
    ----------
    X, A, B : arrays (n, p), (n,), (n,)
        The fit part's covariates, treatments in {-1, +1} and outcomes.
    feature_bounds : (lower, upper), public
    outcome_bounds : (lo, hi), public
    epsilon : float
        The model's budget (on the same rows as the rule: sequential composition).
    columns : sequence of int, optional
        The covariates the model uses (a public choice; default all).
    include : bool array (n,), optional
        False for incomplete rows, which contribute nothing.
    ridge : float
        Public ridge penalty per row.
    rng : None, int or Generator
    sampler : {"numpy", "opendp"}

    Returns
    -------
    OutcomeModel
    """
    epsilon = check_epsilon(epsilon)
    check_real(ridge, "ridge", low=0.0, low_open=False)
    if feature_bounds is None:
        raise ValueError("the outcome model needs public feature_bounds")
    Z = design_rows(X, feature_bounds, columns)
    d = Z.shape[-1]
    stats = sufficient_statistics(Z, A, scaled_outcome(B, outcome_bounds), include)
    sens = statistics_sensitivity(d)
    noisy = stats + sample_laplace(epsilon, sens, stats.shape, rng=rng, sampler=sampler)
    coef = solve_statistics(noisy, d, len(A), epsilon, ridge)
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    return OutcomeModel(
        coef=coef,
        feature_bounds=tuple(np.asarray(b, dtype=float) for b in feature_bounds),
        outcome_bounds=(lo, hi),
        columns=None if columns is None else tuple(int(c) for c in columns),
        epsilon=epsilon,
        sensitivity=sens,
    )
