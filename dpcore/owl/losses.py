"""Margin losses l(z) with z = y * f(x), as assumption A4 of the DP-wERM paper requires.

Each loss returns its value, first and second derivative in z, elementwise on arrays of any
shape. Both satisfy |l'| <= 1 and convexity, so one record moves the weighted-ERM gradient by
at most its weight; the second derivative is what the Newton solver needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from .._validation import check_choice, check_real

LOSSES = ("huber", "logistic")


def huber_hinge(
    z: ArrayLike, h: float = 0.5, derivatives: bool = True
) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Huber-smoothed hinge loss of the paper (docs/spec/dp_owl.md §2) and its derivatives.

    l(z) = 0 for z > 1 + h; (1 + h - z)^2 / (4h) for |1 - z| <= h; 1 - z for z < 1 - h.

    Returns
    -------
    value, d1, d2 : ndarray
        l(z), l'(z) in [-1, 0] and l''(z) in {0, 1/(2h)}; only the value if
        ``derivatives`` is False.
    """
    u = 1.0 + h - np.asarray(z, dtype=float)  # distance below the flat part
    uc = np.clip(u, 0.0, 2.0 * h)
    # In the linear piece uc = 2h, and (2h)^2/(4h) + (u - 2h) = u - h = 1 - z.
    value = uc * uc / (4.0 * h) + np.maximum(u - 2.0 * h, 0.0)
    if not derivatives:
        return value
    d1 = uc / (-2.0 * h)
    d2 = ((u > 0) & (u < 2.0 * h)) / (2.0 * h)
    return value, d1, d2


def logistic(
    z: ArrayLike, derivatives: bool = True
) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logistic loss log(1 + e^{-z}) and its derivatives, computed without overflow."""
    z = np.asarray(z, dtype=float)
    value = np.logaddexp(0.0, -z)
    if not derivatives:
        return value
    s = expit(-z)  # = -l'(z)
    return value, -s, s * (1.0 - s)


def margin_loss(name: str, h: float = 0.5) -> Callable[..., Any]:
    """The loss ``(z, derivatives=True) -> (value, d1, d2)`` named "huber" or "logistic"."""
    check_choice(name, "loss", LOSSES)
    if name == "huber":
        h = check_real(h, "huber_h", low=0.0)
        return lambda z, derivatives=True: huber_hinge(z, h, derivatives)
    return logistic


def curvature_bound(name: str, h: float = 0.5) -> float:
    """sup l''(z): 1/(2h) for the Huber hinge, 1/4 for the logistic loss."""
    return 1.0 / (2.0 * h) if name == "huber" else 0.25
