"""The DP-wERM paper's own constants and choices (docs/spec/dp_owl.md §7-8).

The authors' simulation grid, their tuned-gamma table, their weight bound and Huber width, the
gamma grid of their Algorithm 2, and their data-dependent outcome shift. Everything that asks
"which gamma?" goes through :func:`resolve_gamma`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_epsilon, check_real

PAPER_N = (200, 500, 800, 1000, 1500, 2000, 2500)
PAPER_EPSILONS = (0.1, 0.5, 1, 2, 5, 20, 50, 150, 300, 500, 800, 1000, np.inf)
PAPER_W = 30.0
PAPER_H = 0.5
PAPER_GAMMA_GRID = tuple(range(1, 602, 20))  # Algorithm 2's candidates: 1, 21, ..., 601

# gamma tuned by the authors with Algorithm 2, rows epsilon, columns PAPER_N (docs/spec/dp_owl.md §7).
_GAMMA_ROWS = {
    0.1: (50, 75, 75, 110, 110, 175, 225),
    0.5: (90, 150, 145, 125, 125, 225, 250),
    1: (150, 115, 75, 75, 125, 225, 250),
    2: (105, 55, 100, 150, 125, 225, 300),
    5: (30, 60, 50, 75, 75, 125, 225),
    20: (20, 30, 50, 60, 60, 100, 100),
    50: (10, 30, 30, 30, 30, 35, 40),
    150: (10, 15, 15, 15, 30, 20, 25),
    np.inf: (2, 1, 1, 1, 2, 2, 1),
}
PAPER_GAMMA = {(e, n): float(g) for e, row in _GAMMA_ROWS.items() for n, g in zip(PAPER_N, row)}


def paper_gamma(epsilon: float, n: int) -> float:
    """The authors' tuned gamma at the table cell nearest (log scale) to (epsilon, n).

    Finite epsilon above 150 use the epsilon = 150 row; only epsilon = inf uses the
    non-private row, whose tiny gamma would give enormous noise at any finite epsilon.
    """
    epsilon = check_epsilon(epsilon)
    n = check_real(n, "n", low=0.0)
    finite = [e for e in _GAMMA_ROWS if np.isfinite(e)]
    e = np.inf if np.isinf(epsilon) else min(finite, key=lambda r: abs(np.log(r / epsilon)))
    nn = min(PAPER_N, key=lambda m: abs(np.log(m / n)))
    return PAPER_GAMMA[(e, nn)]


def default_gamma(epsilon: float, n: int, weight_bound: float) -> float:
    """The default gamma of a release: the paper's table scaled by W / PAPER_W.

    The one rule the library (``DPOWL(gamma="paper")``, its default), ``dpcore fit`` and the
    dashboard share. The authors tuned gamma at W = 30; scaling every weight, W and gamma by
    one factor leaves the minimiser and the sensitivity 2W/gamma unchanged, so the release
    has the same distribution, and gamma moves with W.

    Parameters
    ----------
    epsilon : float
        Privacy budget of the release.
    n : int
        Training size (public).
    weight_bound : float
        The release's public weight bound W.

    Returns
    -------
    float

    Examples
    --------
    >>> default_gamma(1.0, 500, 60.0)  # the table's 115 at W = 30, doubled
    230.0
    """
    W = check_real(weight_bound, "weight_bound", low=0.0)
    return paper_gamma(epsilon, n) * W / PAPER_W


def resolve_gamma(gamma: float | str, epsilon: float, n: int) -> float:
    """The gamma a release at (epsilon, n) uses: a fixed number, or "paper" for the table.

    Parameters
    ----------
    gamma : float or "paper"
        A positive regularization constant, or "paper" for :func:`paper_gamma`.
    epsilon : float
        Privacy budget of the release (``np.inf`` for the non-private fit).
    n : int
        Training size.

    Returns
    -------
    float
    """
    if isinstance(gamma, str):
        if gamma != "paper":
            raise ValueError(f"gamma must be a positive number or 'paper', got {gamma!r}")
        return paper_gamma(epsilon, n)
    return check_real(gamma, "gamma", low=0.0)


def paper_outcome_shift(B: ArrayLike) -> np.ndarray:
    """The authors' data-dependent shift: |min B| + 0.001 if min B < 0, else 0, per dataset.

    This makes every benefit positive but depends on the data, so the privacy guarantee does
    not cover it (docs/spec/dp_owl.md §5). It is reproduced only as the labelled "paper's preprocessing".
    """
    m = np.min(B, axis=-1)
    return np.where(m < 0, -m + 0.001, 0.0)
