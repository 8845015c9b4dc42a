"""Outcome weighted learning (OWL) as DP-wERM, and the metrics of the authors' code (spec §5-6).

OWL turns a randomized trial (X, treatment A in {-1, +1}, outcome B) into weighted
classification: label y_i = A_i, weight w_i = benefit_i / pi(A_i | X_i). The learned rule
recommends sign(x' theta).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit

from .. import _validation
from .._estimator import PrivacyWarning, PrivateEstimator
from .._validation import (
    check_bounds,
    check_epsilon,
    check_labels,
    check_matrix,
    check_real,
    check_vector,
)
from .paper import paper_outcome_shift
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


def owl_weights(B, A, propensity, weight_bound, outcome=None, larger_is_better=True):
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
            raise ValueError(f"outcome must be None, public bounds (lo, hi) or 'paper', got {outcome!r}")
        gain = B + paper_outcome_shift(B)[..., None]
    else:
        gain = benefit(B, outcome, larger_is_better)
    w = gain / arm_propensity(A, propensity)
    return np.minimum(w, weight_bound), np.mean(w > weight_bound, axis=-1)


def default_weight_bound(outcome_bounds, propensity):
    """W = (hi - lo) / min pi for a constant propensity and public outcome bounds."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    p = float(propensity)
    return (hi - lo) / min(p, 1.0 - p)


# --------------------------------------------------------------------------------------------
# The estimator


class DPOWL(PrivateEstimator):
    """Differentially private outcome weighted learning (DP-OWL).

    OWL as DP-wERM: labels y_i = A_i, weights w_i = benefit_i / pi(A_i | X_i), released by
    output perturbation (pure epsilon-DP, replace-one neighbours).

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
    larger_is_better : bool, default True
        False for outcomes such as length of stay: the benefit is then hi - B.

    Attributes
    ----------
    coef_, intercept_, theta_, sensitivity_, scaling_ : the release, as in DPWeightedERM
    weight_bound_ : float, the W used
    estimator_ : the fitted DPWeightedERM
    diagnostics_ : dict, analyst-only (solver iterations, gradient norm, ``clipped_share``);
        computed from the sensitive data, never to be published with the release

    References
    ----------
    .. [1] Giddings, Zhou et al., arXiv:2307.13127, Section 3 (DP-OWL).
    .. [2] Zhao, Zeng, Rush and Kosorok, "Estimating individualized treatment rules using
       outcome weighted learning", JASA 107 (2012).

    Examples
    --------
    >>> from dpcore import DPOWL
    >>> from dpcore.owl.simulate import PAPER_TRIAL
    >>> trial = PAPER_TRIAL.sample(1000, rng=0)
    >>> rule = DPOWL(epsilon=1.0, gamma=75, outcome_bounds=(-12, 12),
    ...              feature_bounds=PAPER_TRIAL.feature_bounds, rng=1)
    >>> rule.fit(trial["X"], trial["A"], trial["B"], propensity=0.5).predict(trial["X"][:4]).shape
    (4,)
    """

    _released = ("coef_", "intercept_", "theta_", "sensitivity_")

    def __init__(self, *, epsilon=1.0, gamma=1.0, weight_bound=None, huber_h=0.5, C=0.0,
                 feature_bounds=None, outcome_bounds=None, larger_is_better=True,
                 fit_intercept=True, rng=None):
        self._store_params(locals())

    def _check_params(self):
        """The OWL-specific hyper-parameters (the rest are checked by DPWeightedERM)."""
        check_epsilon(self.epsilon)
        if self.outcome_bounds is not None:
            check_bounds(self.outcome_bounds, 1, "outcome_bounds")
        elif not self.larger_is_better:
            raise ValueError("larger_is_better=False needs outcome_bounds to turn outcomes into benefits")
        if self.weight_bound is not None:
            check_real(self.weight_bound, "weight_bound", low=0.0)
        if not isinstance(self.larger_is_better, (bool, np.bool_)):
            raise TypeError(f"larger_is_better must be True or False, got {self.larger_is_better!r}")

    def fit(self, X, A, B, propensity=0.5):
        """Fit and release the private rule.

        Parameters
        ----------
        X : array (n, p)
        A : array (n,), treatments in {-1, +1}
        B : array (n,), outcomes
        propensity : float, array (n,) or "logistic"
            P(A = +1 | X): a known constant (0.5 for 1:1, 2/3 for 2:1 randomization), one value
            per row, or "logistic" to estimate it on the same data. An estimated propensity is
            covered by pure epsilon-DP only with ``C="worst-case"``; any other C > 0 relies on
            the paper's large-n constant H and raises a :class:`PrivacyWarning`.

        Returns
        -------
        self
        """
        self._check_params()
        X = check_matrix(X)
        n = X.shape[0]
        A = check_labels(A, n, "A")
        B = check_vector(B, "B", n)
        if isinstance(propensity, str):
            propensity = self._estimated_propensity(X, A, propensity)
        propensity = check_propensity(propensity, n)
        W = self.weight_bound
        if W is None:
            if self.outcome_bounds is None or np.ndim(propensity) != 0:
                raise ValueError(
                    "weight_bound is required unless outcome_bounds are given and the propensity is a constant"
                )
            W = default_weight_bound(self.outcome_bounds, propensity)
        w, clipped = owl_weights(B, A, propensity, W, self.outcome_bounds, self.larger_is_better)
        if clipped > 0:
            warnings.warn(
                f"some OWL weights (benefit / propensity) exceed the weight bound W={W:g}; they "
                "were clipped to W (the share clipped is an analyst-only diagnostic)",
                UserWarning, stacklevel=2,
            )
        self.estimator_ = DPWeightedERM(
            epsilon=self.epsilon, gamma=self.gamma, weight_bound=W, loss="huber",
            huber_h=self.huber_h, C=self.C, feature_bounds=self.feature_bounds,
            fit_intercept=self.fit_intercept, rng=self.rng,
        ).fit(X, A, w)
        self.weight_bound_ = W
        for attr in ("coef_", "intercept_", "theta_", "sensitivity_", "scaling_", "n_features_in_"):
            setattr(self, attr, getattr(self.estimator_, attr))
        self.diagnostics_ = {**self.estimator_.diagnostics_, "clipped_share": float(clipped)}
        return self

    def _estimated_propensity(self, X, A, propensity):
        if propensity != "logistic":
            raise ValueError(f"propensity must be a number, an array or 'logistic', got {propensity!r}")
        if isinstance(self.C, str):  # "worst-case" (n W) covers any propensity model
            _validation.check_choice(self.C, "C", {"worst-case"})
        elif self.C == 0:
            raise ValueError(
                "propensity='logistic' is estimated on the same data, which the privacy "
                "guarantee covers only with C > 0 ('worst-case', or H/n for large n)"
            )
        else:
            warnings.warn(
                "propensity='logistic' with a numeric C is epsilon-DP only if C bounds the "
                "propensity model's influence, which the paper's C = H/n does for large n and "
                "known constants; use C='worst-case' for a guarantee that always holds",
                PrivacyWarning, stacklevel=3,
            )
        return fit_logistic_propensity(X, A)

    def decision_function(self, X):
        """x~' theta for new rows (features clipped to the public bounds)."""
        self._check_fitted()
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """Recommended treatment, +1 or -1 (ties go to -1)."""
        self._check_fitted()
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
