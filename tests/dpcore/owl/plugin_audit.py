"""The plug-in rule's DP audit: the designed neighbours that attain the outcome model's
sensitivity, and the sampler of the noisy statistics' log-likelihood ratio."""

import numpy as np

LO, HI = -10.0, 10.0


def neighbours(n=40):
    """Row 0 at the corner x = upper bound, treated, B = hi; then control with the same x and
    B = hi: its block moves from one arm to the other, the statistics by d (d + 3) in L1."""
    rng = np.random.default_rng(3)
    X = rng.random((n, 1))
    A = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    B = rng.uniform(LO, HI, n)
    X[0], A[0], B[0] = 1.0, 1.0, HI
    Ap = A.copy()
    Ap[0] = -1.0
    return (X, A, B), (X, Ap, B)


def laplace_ratio(statistics, a, b, scale, true):
    """Sampler of ``statistics`` plus Laplace noise of ``scale``, mapped to the log-likelihood
    ratio of the neighbours' statistics ``a`` and ``b`` under Laplace noise of the true scale
    ``true`` (that of the correct mechanism)."""

    def draw(size, rng):
        noisy = statistics + rng.laplace(0.0, scale, (size, a.size))
        return (np.abs(noisy - b) - np.abs(noisy - a)).sum(-1) / true

    return draw
