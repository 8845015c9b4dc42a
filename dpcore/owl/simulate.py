"""Synthetic trials: the DP-wERM paper's (docs/spec/dp_owl.md §7), its "imperfect proxy" variants, a K-arm
family, and the twin of a trial described by its public values (:class:`TwinDesign`).

x_j ~ U[0, 1] (p = 4), A = +/-1 with probability 1/2, optimal rule sign(f) with
f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4, outcome B ~ N(0.01 + 0.02 x4 + 3 A f(x), 0.5^2).
Everything is vectorized over a leading batch of independent datasets. The authors' constants
and preprocessing live in :mod:`dpcore.owl.paper`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._typing import ArrayLike, Seed, Shape
from .._validation import check_bounds, check_choice, check_outcome_range, check_real


@dataclass(frozen=True)
class TrialDesign:
    """A synthetic randomized trial in the family of the paper's simulation.

    Parameters
    ----------
    coef : tuple of float
        Coefficients of x1..x4 in f(x) = intercept + coef' x[:4].
    intercept : float
    p : int
        Number of features (>= 4); features beyond the fourth carry no signal.
    propensity : float
        P(A = +1), the randomization probability.
    features : {"uniform", "beta", "triangular"}
        Distribution of each feature on [0, 1]: U[0, 1] (the paper), Beta(2, 5) (skewed towards
        0) or symmetric triangular (peaked at 1/2). All stay in the public bounds [0, 1].
    noise_sd : float
        Outcome noise standard deviation.
    """

    coef: tuple = (1.0, 1.0, -1.8, -2.2)
    intercept: float = 1.0
    p: int = 4
    propensity: float = 0.5
    features: str = "uniform"
    noise_sd: float = 0.5

    def __post_init__(self):
        if len(self.coef) != 4:
            raise ValueError(f"coef must have 4 entries (x1..x4), got {len(self.coef)}")
        if int(self.p) != self.p or self.p < 4:
            raise ValueError(f"p must be an integer >= 4, got {self.p}")
        check_real(self.propensity, "propensity", low=0.0, high=1 - 1e-9)
        check_choice(self.features, "features", {"uniform", "beta", "triangular"})
        check_real(self.noise_sd, "noise_sd", low=0.0, low_open=False)

    @property
    def feature_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.p), np.ones(self.p)

    def f(self, X: np.ndarray) -> np.ndarray:
        """The contrast f(x); the optimal treatment is sign(f)."""
        return self.intercept + X[..., :4] @ np.asarray(self.coef, dtype=float)

    def sample(self, n: int, size: Shape = (), rng: Seed = None) -> dict[str, np.ndarray]:
        """Draw ``size`` independent trials of ``n`` rows.

        Returns
        -------
        dict with X (size + (n, p)), A, B (raw outcomes), f (the contrast), all float arrays.
        """
        rng = np.random.default_rng(rng)
        size = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
        shape = size + (int(n), self.p)
        if self.features == "uniform":
            X = rng.random(shape)
        elif self.features == "beta":
            X = rng.beta(2.0, 5.0, shape)
        else:
            X = rng.triangular(0.0, 0.5, 1.0, shape)
        A = np.where(rng.random(size + (int(n),)) < self.propensity, 1.0, -1.0)
        f = self.f(X)
        mu = 0.01 + 0.02 * X[..., 3] + 3.0 * A * f
        B = mu + self.noise_sd * rng.standard_normal(mu.shape)
        return {"X": X, "A": A, "B": B, "f": f}


PAPER_TRIAL = TrialDesign()

# The "imperfect proxy" variants of the paper's sensitivity analysis of Algorithm 2.
PROXY_VARIANTS = {
    "same as the trial": PAPER_TRIAL,
    "other coefficients": replace(PAPER_TRIAL, coef=(1.5, 0.5, -1.5, -2.5), intercept=0.8),
    "skewed features (Beta(2,5))": replace(PAPER_TRIAL, features="beta"),
    "peaked features (triangular)": replace(PAPER_TRIAL, features="triangular"),
    "2:1 randomization": replace(PAPER_TRIAL, propensity=2 / 3),
    "6 extra noise features": replace(PAPER_TRIAL, p=10),
}


def optimal_treatment(f: ArrayLike) -> np.ndarray:
    """sign(f) as +/-1 (f = 0 has probability zero; it goes to -1 like the rule's ties)."""
    return np.where(np.asarray(f) > 0, 1.0, -1.0)


@dataclass(frozen=True)
class KArmDesign:
    """A synthetic randomized trial with K >= 2 arms, in the family of the paper's simulation.

    x_j ~ U[0, 1] (p = 4); arm k is given with probability ``arm_probabilities[k]``; the mean
    outcome under arm k is 0.01 + 0.02 x4 + 3 g_k(x) with g_0 = 0 (the reference arm) and
    g_k(x) = c_k0 + c_k' x for the rows of ``contrasts``; the outcome is that mean plus
    N(0, noise_sd^2). The best arm for x is argmax_k g_k(x).

    Parameters
    ----------
    contrasts : tuple of 5-tuples
        (intercept, coef of x1..x4) of g_k for arms 1..K-1 (arm 0's is 0).
    arm_probabilities : tuple of float, summing to 1
    arms : tuple of labels, K of them
    noise_sd : float
    """

    contrasts: tuple = ((1.0, 1.0, 1.0, -1.8, -2.2), (-1.2, 0.0, 2.5, 0.0, 0.0))
    arm_probabilities: tuple = (1 / 3, 1 / 3, 1 / 3)
    arms: tuple = ("standard", "drug 1", "drug 2")
    noise_sd: float = 0.5
    p: int = 4
    outcome_bounds: tuple = (-12.0, 12.0)

    def __post_init__(self):
        k = len(self.contrasts) + 1
        if len(self.arm_probabilities) != k or len(self.arms) != k:
            raise ValueError(f"{k} arms need {k} arm_probabilities and {k} arms labels")
        if abs(sum(self.arm_probabilities) - 1.0) > 1e-9:
            raise ValueError("arm_probabilities must sum to 1")

    @property
    def feature_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.p), np.ones(self.p)

    def g(self, X: np.ndarray) -> np.ndarray:
        """(..., n, K) contrasts g_k(x) of each arm against arm 0 (column 0 is 0)."""
        c = np.asarray(self.contrasts, dtype=float)
        g = c[:, 0] + X[..., :4] @ c[:, 1:].T
        return np.concatenate([np.zeros(g.shape[:-1] + (1,)), g], axis=-1)

    def sample(self, n: int, size: Shape = (), rng: Seed = None) -> dict[str, np.ndarray]:
        """Draw ``size`` independent trials of ``n`` rows.

        Returns
        -------
        dict with X (size + (n, p)), A (arm labels, an object array), code (arm index), B,
        mean (size + (n, K): each arm's mean outcome) and best (the best arm's index).
        """
        rng = np.random.default_rng(rng)
        size = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
        X = rng.random(size + (int(n), self.p))
        cum = np.cumsum(self.arm_probabilities)
        code = np.minimum(
            np.searchsorted(cum, rng.random(size + (int(n),)), side="right"), len(self.arms) - 1
        )
        mean = 0.01 + 0.02 * X[..., 3:4] + 3.0 * self.g(X)
        mu = np.take_along_axis(mean, code[..., None], axis=-1)[..., 0]
        B = mu + self.noise_sd * rng.standard_normal(mu.shape)
        A = np.asarray(self.arms, dtype=object)[code]
        return {
            "X": X,
            "A": A,
            "code": code,
            "B": B,
            "mean": mean,
            "best": np.argmax(mean, axis=-1),
        }


#: A three-arm trial (1:1:1): the paper's contrast for drug 1, drug 2 best at large x2.
K_ARM_TRIAL = KArmDesign()
#: A four-arm trial (1:1:1:1): K_ARM_TRIAL with a drug 3 best at large x1 and small x4.
FOUR_ARM_TRIAL = KArmDesign(
    contrasts=(
        (1.0, 1.0, 1.0, -1.8, -2.2),
        (-1.2, 0.0, 2.5, 0.0, 0.0),
        (-0.6, 2.0, 0.0, 0.0, -1.5),
    ),
    arm_probabilities=(0.25, 0.25, 0.25, 0.25),
    arms=("standard", "drug 1", "drug 2", "drug 3"),
)


#: Standard deviation of the twin's treatment effect, as a share of the outcome's range.
STRENGTHS = {"weak": 0.05, "moderate": 0.15, "strong": 0.30}
NOISE_SHARE = 1.0 / 6.0


@dataclass(frozen=True)
class TwinDesign:
    """A simulated twin of a trial, from its public description only.

    Its patients have covariates uniform on their public bounds (0/1 columns fair coins) and
    outcomes from a linear contrast: with u_j the covariate rescaled to [-1, 1] and
    standardised,

        effect(x) = strength * R * g(x),   g(x) = sum_j c_j u_j / ||c||,   c_j = +1, -1, +1, ...

    on the first half of the covariates (the rest carry no signal), so the treatment effect has
    mean 0 and standard deviation ``strength * R`` in the outcome's own units (R = hi - lo):
    weak 5%, moderate 15%, strong 30% of the outcome's range (:data:`STRENGTHS`). The outcome
    is mid + A effect(x) / 2 + N(0, (R/6)^2) (sign reversed when smaller is better). Mean
    effect 0 means neither arm is better for everyone: the rule is all that matters.
    ``average_effect`` (a share of R) adds a dominant arm: the treated arm is better by that
    much on average, so treating everyone is already good and the rule can only add the rest.

    Parameters
    ----------
    n : int
        The trial's public number of rows.
    lower, upper : sequences of float
        Public bounds of each covariate column (one-hot columns [0, 1]).
    outcome_bounds : (lo, hi)
    larger_is_better : bool
    propensity : float
        The known randomization probability P(treated).
    binary : sequence of bool, optional
        Which covariate columns are 0/1 (default none): a 0/1 column is a fair coin in the
        twin, any other column uniform on its bounds.
    average_effect : float
        The treated arm's average advantage, as a share of the outcome's range (default 0:
        neither arm is better on average; negative: control is).
    """

    n: int
    lower: tuple
    upper: tuple
    outcome_bounds: tuple
    larger_is_better: bool = True
    propensity: float = 0.5
    binary: tuple = ()
    average_effect: float = 0.0

    def __post_init__(self):
        p = len(self.lower)
        check_bounds((self.lower, self.upper), p, "feature_bounds")
        check_outcome_range(self.outcome_bounds)
        check_real(self.propensity, "propensity", low=0.0, high=1.0)
        check_real(self.n, "n", low=1.0)
        check_real(self.average_effect, "average_effect", low=-1.0, high=1.0)
        if self.binary and len(self.binary) != p:
            raise ValueError(f"binary must flag each of the {p} covariates, got {len(self.binary)}")

    @property
    def p(self):
        return len(self.lower)

    @property
    def weights(self):
        """The contrast's weights c over the standardised covariates, norm 1."""
        c = np.zeros(self.p)
        k = max(1, (self.p + 1) // 2)
        c[:k] = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
        return c / np.linalg.norm(c)

    def sample(self, strengths, size=(), rng=None):
        """Twins of n rows sharing covariates, arms and noise across the effect strengths.

        Returns
        -------
        dict with X (size + (n, p)), A (size + (n,)), and for each strength s (a share of R)
        B[s] and effect[s], the outcomes and the true treatment effects, shape size + (n,).
        """
        rng = np.random.default_rng(rng)
        size = (int(size),) if np.ndim(size) == 0 else tuple(size)
        lo, hi = np.asarray(self.lower, float), np.asarray(self.upper, float)
        u = rng.random(size + (int(self.n), self.p))
        binary = np.asarray(self.binary or [False] * self.p, dtype=bool)
        u = np.where(binary, (u < 0.5).astype(float), u)
        X = lo + (hi - lo) * u
        z = np.where(binary, 2.0 * u - 1.0, (2.0 * u - 1.0) * np.sqrt(3.0))  # mean 0, sd 1
        g = z @ self.weights
        A = np.where(rng.random(size + (int(self.n),)) < self.propensity, 1.0, -1.0)
        b_lo, b_hi = check_outcome_range(self.outcome_bounds)
        R, mid = b_hi - b_lo, (b_lo + b_hi) / 2.0
        noise = NOISE_SHARE * R * rng.standard_normal(A.shape)
        sign = 1.0 if self.larger_is_better else -1.0
        effects = {s: (s * g + self.average_effect) * R for s in strengths}
        B = {s: mid + sign * A * e / 2.0 + noise for s, e in effects.items()}
        return {"X": X, "A": A, "B": B, "effect": effects}
