"""Outcome weighted learning (OWL) as DP-wERM, and the metrics of the authors' code (spec §5-6).

OWL turns a randomized trial (X, treatment A in {-1, +1}, outcome B) into weighted
classification: label y_i = A_i, weight w_i = benefit_i / pi(A_i | X_i). The learned rule
recommends sign(x' theta).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ._validation import (
    check_bounds,
    check_epsilon,
    check_labels,
    check_matrix,
    check_real,
    check_vector,
    check_weights,
)
from .werm import DPWeightedERM, solve_werm

# --------------------------------------------------------------------------------------------
# Propensities and weights


def arm_propensity(A, propensity):
    """pi(A_i | X_i) from P(A = +1 | X), given as a constant or one value per row."""
    p_plus = np.asarray(propensity, dtype=float)
    return np.where(np.asarray(A) > 0, p_plus, 1.0 - p_plus)


def check_propensity(propensity, n):
    """A constant in (0, 1) or a per-row array in (0, 1): P(A = +1 | X_i)."""
    if np.ndim(propensity) == 0:
        return check_real(propensity, "propensity", low=0.0, high=1.0 - 1e-12)
    p = check_vector(propensity, "propensity", n)
    if ((p <= 0) | (p >= 1)).any():
        raise ValueError(f"propensity must lie strictly between 0 and 1, found range [{p.min():g}, {p.max():g}]")
    return p


def fit_logistic_propensity(X, A):
    """P(A = +1 | X) from an (unpenalised, intercept) logistic regression of A on X.

    Used when the trial's randomization probabilities are unknown. It is fitted on the same
    data, so the released rule needs C > 0 (Theorem 7); the fit reuses the Newton solver with a
    negligible ridge for numerical stability.
    """
    Xa = np.column_stack((np.ones(len(X)), X))
    scale = np.maximum(np.abs(Xa).max(axis=0), 1e-12)
    beta, _ = solve_werm(Xa / scale, A, np.ones(len(A)), 1e-8, loss="logistic", tol=1e-8)
    return expit((Xa / scale) @ beta)


def logistic_propensity_H(outcome_bound, feature_norm_bound, M, b_x):
    """The paper's H for a logistic propensity model (Theorem 7): 2 C_B C_x^2 (1 + e^M)^2 / b_x.

    ``outcome_bound`` is C_B (benefits in [0, C_B]), ``feature_norm_bound`` is C_x (||x|| <= C_x),
    ``M`` bounds |x' beta0| and ``b_x`` is the smallest eigenvalue of E[x x']. Use C = H / n.
    """
    return 2.0 * outcome_bound * feature_norm_bound**2 * (1.0 + np.exp(M)) ** 2 / b_x


def benefit(B, outcome_bounds=None, larger_is_better=True):
    """Non-negative benefit from outcomes, using public bounds when given (spec §5).

    With bounds [lo, hi], outcomes are clipped and shifted: B - lo, or hi - B when smaller
    outcomes are better. Without bounds, B must already be non-negative (and larger better).
    """
    B = np.asarray(B, dtype=float)
    if outcome_bounds is None:
        if not larger_is_better:
            raise ValueError("larger_is_better=False needs outcome_bounds to turn outcomes into benefits")
        if (B < 0).any():
            raise ValueError(
                f"outcome B has negative values (min {B.min():.4g}); OWL needs B >= 0: "
                "give public outcome_bounds so outcomes can be shifted"
            )
        return B
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    B = np.clip(B, lo, hi)
    return B - lo if larger_is_better else hi - B


def default_weight_bound(outcome_bounds, propensity):
    """W = (hi - lo) / min pi for a constant propensity and public outcome bounds."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    p = float(propensity)
    return (hi - lo) / min(p, 1.0 - p)


# --------------------------------------------------------------------------------------------
# The estimator


class DPOWL:
    """Differentially private outcome weighted learning (DP-OWL).

    Parameters
    ----------
    epsilon, gamma, huber_h, C, feature_bounds, fit_intercept, rng
        As in :class:`dpcore.DPWeightedERM` (Huber-hinge loss).
    weight_bound : float, optional
        Public bound W on benefit / propensity; weights above it are clipped with a warning.
        Default (hi - lo) / min(p, 1 - p), which needs outcome_bounds and a constant propensity.
    outcome_bounds : (lo, hi), optional
        Public bounds of the outcome. Without them the outcome must already be a
        non-negative benefit.
    larger_is_better : bool
        False for outcomes such as length of stay: the benefit is then hi - B.

    Attributes
    ----------
    coef_, intercept_, sensitivity_, weight_bound_, estimator_ (the fitted DPWeightedERM),
    clipped_share_ (share of weights clipped at W)
    """

    def __init__(self, epsilon=1.0, gamma=1.0, weight_bound=None, huber_h=0.5, C=0.0,
                 feature_bounds=None, outcome_bounds=None, larger_is_better=True,
                 fit_intercept=True, rng=None):
        self.epsilon = epsilon
        self.gamma = gamma
        self.weight_bound = weight_bound
        self.huber_h = huber_h
        self.C = C
        self.feature_bounds = feature_bounds
        self.outcome_bounds = outcome_bounds
        self.larger_is_better = larger_is_better
        self.fit_intercept = fit_intercept
        self.rng = rng

    def fit(self, X, A, B, propensity=0.5):
        """Fit the private rule.

        Parameters
        ----------
        X : array (n, p)
        A : array (n,), treatments in {-1, +1}
        B : array (n,), outcomes
        propensity : float, array (n,) or "logistic"
            P(A = +1 | X): a known constant (0.5 for 1:1, 2/3 for 2:1 randomization), one value
            per row, or "logistic" to estimate it on the same data (then C must be > 0).
        """
        check_epsilon(self.epsilon)
        X = check_matrix(X)
        n = X.shape[0]
        A = check_labels(A, n, "A")
        B = check_vector(B, "B", n)
        if isinstance(propensity, str):
            if propensity != "logistic":
                raise ValueError(f"propensity must be a number, an array or 'logistic', got {propensity!r}")
            if self.C == 0:
                raise ValueError(
                    "propensity='logistic' is estimated on the same data, which the privacy "
                    "guarantee covers only with C > 0 (H/n, or 'worst-case')"
                )
            propensity = fit_logistic_propensity(X, A)
        propensity = check_propensity(propensity, n)
        W = self.weight_bound
        if W is None:
            if self.outcome_bounds is None or np.ndim(propensity) != 0:
                raise ValueError(
                    "weight_bound is required unless outcome_bounds are given and the propensity is a constant"
                )
            W = default_weight_bound(self.outcome_bounds, propensity)
        W = check_real(W, "weight_bound", low=0.0)
        w = benefit(B, self.outcome_bounds, self.larger_is_better) / arm_propensity(A, propensity)
        self.clipped_share_ = float(np.mean(w > W))
        w = check_weights(w, n, W, name="OWL weights (benefit / propensity)")
        self.estimator_ = DPWeightedERM(
            epsilon=self.epsilon, gamma=self.gamma, weight_bound=W, loss="huber",
            huber_h=self.huber_h, C=self.C, feature_bounds=self.feature_bounds,
            fit_intercept=self.fit_intercept, rng=self.rng,
        ).fit(X, A, w)
        self.weight_bound_ = W
        for attr in ("coef_", "intercept_", "theta_", "sensitivity_", "n_iter_", "scaling_"):
            setattr(self, attr, getattr(self.estimator_, attr))
        return self

    def decision_function(self, X):
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """Recommended treatment, +1 or -1 (ties go to -1)."""
        return self.estimator_.predict(X)


# --------------------------------------------------------------------------------------------
# Metrics (vectorized over leading axes: rules of shape (..., n) against one test set)


def treatment_accuracy(A_hat, A_opt):
    """Share of rows where the rule recommends the optimal treatment (simulation only)."""
    return np.mean(np.asarray(A_hat) == np.asarray(A_opt), axis=-1)


def ipw_value(A_hat, A, B, propensity=0.5):
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


def concordance(a, b):
    """Share of rows where two rules recommend the same treatment."""
    return np.mean(np.asarray(a) == np.asarray(b), axis=-1)


def agreement_test(a, b):
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


def reference_values(A_opt, A, B, propensity=0.5):
    """Value of the oracle rule sign(f), of treating everybody (+1) and of treating nobody (-1)."""
    A = np.asarray(A)
    return {
        "oracle": float(ipw_value(A_opt, A, B, propensity)),
        "treat_all": float(ipw_value(np.ones_like(A), A, B, propensity)),
        "treat_none": float(ipw_value(-np.ones_like(A), A, B, propensity)),
    }
