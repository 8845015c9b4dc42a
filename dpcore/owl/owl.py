"""Outcome weighted learning (OWL) as DP-wERM, and the metrics of the authors' code (docs/spec/dp_owl.md §5-6).

OWL turns a randomized trial (X, treatment A in {-1, +1}, outcome B) into weighted
classification: label y_i = A_i, weight w_i = benefit_i / pi(A_i | X_i). The learned rule
recommends sign(x' theta).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from .._typing import FloatOrArray
from .._validation import (
    check_outcome_range,
    check_real,
    check_vector,
)
from .paper import paper_outcome_shift
from .werm import solve_werm

# --------------------------------------------------------------------------------------------
# Propensities and weights


def arm_propensity(A: ArrayLike, propensity: ArrayLike) -> np.ndarray:
    """pi(A_i | X_i) from P(A = +1 | X), given as a constant or one value per row."""
    p_plus = np.asarray(propensity, dtype=float)
    return np.where(np.asarray(A) > 0, p_plus, 1.0 - p_plus)


def check_propensity(propensity: ArrayLike, n: int) -> float | np.ndarray:
    """A constant in (0, 1) or a per-row array in (0, 1): P(A = +1 | X_i)."""
    if np.ndim(propensity) == 0:
        return check_real(propensity, "propensity", low=0.0, high=1.0 - 1e-12)
    p = check_vector(propensity, "propensity", n)
    if ((p <= 0) | (p >= 1)).any():
        raise ValueError(
            f"propensity must lie strictly between 0 and 1, found range [{p.min():g}, {p.max():g}]"
        )
    return p


def fit_logistic_propensity(X: np.ndarray, A: np.ndarray) -> np.ndarray:
    """P(A = +1 | X) from an (unpenalised, intercept) logistic regression of A on X.

    Used when the trial's randomization probabilities are unknown. It is fitted on the same
    data, so the released rule needs C > 0 (Theorem 7); the fit reuses the Newton solver with a
    negligible ridge for numerical stability.
    """
    Xa = np.column_stack((np.ones(len(X)), X))
    scale = np.maximum(np.abs(Xa).max(axis=0), 1e-12)
    beta, _ = solve_werm(Xa / scale, A, np.ones(len(A)), 1e-8, loss="logistic", tol=1e-8)
    return expit((Xa / scale) @ beta)


def logistic_propensity_H(
    outcome_bound: float, feature_norm_bound: float, M: float, b_x: float
) -> float:
    """The paper's H for a logistic propensity model (Theorem 7): 2 C_B C_x^2 (1 + e^M)^2 / b_x.

    ``outcome_bound`` is C_B (benefits in [0, C_B]), ``feature_norm_bound`` is C_x (||x|| <= C_x),
    ``M`` bounds |x' beta0| and ``b_x`` is the smallest eigenvalue of E[x x']. Use C = H / n.
    """
    return 2.0 * outcome_bound * feature_norm_bound**2 * (1.0 + np.exp(M)) ** 2 / b_x


def benefit(
    B: ArrayLike, outcome_bounds: tuple[float, float] | None = None, larger_is_better: bool = True
) -> np.ndarray:
    """Non-negative benefit from outcomes, using public bounds when given (docs/spec/dp_owl.md §5).

    With bounds [lo, hi], outcomes are clipped and shifted: B - lo, or hi - B when smaller
    outcomes are better. Without bounds, B must already be non-negative (and larger better).
    """
    B = np.asarray(B, dtype=float)
    if outcome_bounds is None:
        if not larger_is_better:
            raise ValueError(
                "larger_is_better=False needs outcome_bounds to turn outcomes into benefits"
            )
        if (B < 0).any():
            raise ValueError(
                f"outcome B has negative values (min {B.min():.4g}); OWL needs B >= 0: "
                "give public outcome_bounds so outcomes can be shifted"
            )
        return B
    lo, hi = check_outcome_range(outcome_bounds)
    B = np.clip(B, lo, hi)
    return B - lo if larger_is_better else hi - B


def owl_weights(
    B: ArrayLike,
    A: ArrayLike,
    propensity: ArrayLike,
    weight_bound: float,
    outcome: str | tuple[float, float] | None = None,
    larger_is_better: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """OWL weights benefit / pi(A | X) clipped at W, and the share clipped, for trials in a batch.

    Parameters
    ----------
    B, A : arrays of shape (..., n)
        Outcomes and treatments in {-1, +1}; leading axes index independent trials.
    propensity : float or array broadcasting against A
        P(A = +1 | X).
    weight_bound : float
        Public bound W.
    outcome : None, (lo, hi) or "paper"
        How outcomes become benefits: see :func:`benefit` for None and public bounds; "paper"
        shifts B by each trial's own minimum (the authors' code; not covered by the guarantee).
    larger_is_better : bool

    Returns
    -------
    weights : array of the shape of B, clipped at W
    clipped_share : array of shape (...,), the share of weights above W (analyst-only)
    """
    if isinstance(outcome, str):
        if outcome != "paper":
            raise ValueError(
                f"outcome must be None, public bounds (lo, hi) or 'paper', got {outcome!r}"
            )
        gain = B + paper_outcome_shift(B)[..., None]
    else:
        gain = benefit(B, outcome, larger_is_better)
    w = gain / arm_propensity(A, propensity)
    return np.minimum(w, weight_bound), np.mean(w > weight_bound, axis=-1)


def default_weight_bound(outcome_bounds: tuple[float, float], propensity: float) -> float:
    """W = (hi - lo) / min pi for a constant propensity and public outcome bounds."""
    lo, hi = check_outcome_range(outcome_bounds)
    p = float(propensity)
    return (hi - lo) / min(p, 1.0 - p)


# --------------------------------------------------------------------------------------------
# Metrics (vectorized over leading axes: rules of shape (..., n) against one test set)


def treatment_accuracy(A_hat: ArrayLike, A_opt: ArrayLike) -> FloatOrArray:
    """Share of rows where the rule recommends the optimal treatment (simulation only)."""
    return np.mean(np.asarray(A_hat) == np.asarray(A_opt), axis=-1)


def ipw_value(
    A_hat: ArrayLike, A: ArrayLike, B: ArrayLike, propensity: ArrayLike = 0.5
) -> FloatOrArray:
    """Normalised (Hajek) IPW value: sum 1(A_hat = A) B / pi over sum 1(A_hat = A) / pi.

    ``A_hat`` may carry leading axes (several rules on one test set). Returns NaN where the
    rule matches no observed treatment.
    """
    A = np.asarray(A, dtype=float)
    inv = 1.0 / arm_propensity(A, propensity)
    # For +/-1 arrays 1(A_hat = A) = (1 + A_hat A) / 2: two sums replace a masked product.
    A_hat = np.asarray(A_hat, dtype=float)
    c_num = inv * np.asarray(B, dtype=float)
    num = 0.5 * (c_num.sum(-1) + _rowdot(A_hat, A * c_num))
    den = 0.5 * (inv.sum(-1) + _rowdot(A_hat, A * inv))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 1e-12 * inv.sum(-1), num / den, np.nan)


def _rowdot(a, b):
    """sum over the last axis of a * b, with b broadcast over a's extra leading axes."""
    return np.matmul(a[..., None, :], np.broadcast_to(b, a.shape)[..., :, None])[..., 0, 0]


def concordance(a: ArrayLike, b: ArrayLike) -> FloatOrArray:
    """Share of rows where two rules recommend the same treatment."""
    return np.mean(np.asarray(a) == np.asarray(b), axis=-1)


def agreement_test(a: ArrayLike, b: ArrayLike) -> dict[str, float]:
    """Agreement beyond chance between two rules: Cohen's kappa and a one-sided exact p-value.

    The p-value is Fisher's exact test of positive association in the 2x2 table of
    recommendations (alternative "greater"): conditional on how often each rule recommends
    treatment, it is the chance of at least this much agreement if the rules were independent.
    It is exact at any n, unlike the normal approximation to kappa; McNemar's test would test
    the other question (whether the rules treat equally often), not agreement.

    Returns
    -------
    dict with ``concordance``, ``kappa`` (NaN when a rule is constant) and ``p_value``.
    """
    a = np.asarray(a) > 0
    b = np.asarray(b) > 0
    table = np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]])
    n = table.sum()
    po = (table[0, 0] + table[1, 1]) / n
    pa, pb = a.mean(), b.mean()
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = (po - pe) / (1 - pe) if pe < 1 else np.nan
    # Imported here: scipy.stats adds about 0.3 s to every start-up and only this needs it.
    from scipy.stats import fisher_exact

    p_value = fisher_exact(table, alternative="greater").pvalue
    return {"concordance": float(po), "kappa": float(kappa), "p_value": float(p_value)}


def reference_values(
    A_opt: ArrayLike, A: ArrayLike, B: ArrayLike, propensity: ArrayLike = 0.5
) -> dict[str, float]:
    """Value of the oracle rule sign(f), of treating everybody (+1) and of treating nobody (-1)."""
    A = np.asarray(A)
    return {
        "oracle": float(ipw_value(A_opt, A, B, propensity)),
        "treat_all": float(ipw_value(np.ones_like(A), A, B, propensity)),
        "treat_none": float(ipw_value(-np.ones_like(A), A, B, propensity)),
    }
