"""Preprocessing with public bounds (docs/spec/dp_owl.md §3): features into the unit ball.

Never from the data on a release path: the bounds are public, fixed before the data are seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_bounds


@dataclass(frozen=True)
class FeatureScaling:
    """Map features into the unit ball using public bounds only.

    Columns are clipped to [lower, upper], divided by max(|lower|, |upper|), and the row by
    sqrt(d), d counting the intercept column (bounds [1, 1]) when there is one.
    """

    lower: np.ndarray
    upper: np.ndarray
    fit_intercept: bool = True

    @classmethod
    def from_bounds(
        cls,
        bounds: tuple[ArrayLike, ArrayLike],
        p: int,
        fit_intercept: bool = True,
        name: str = "feature_bounds",
    ) -> FeatureScaling:
        """From public (lower, upper) bounds of ``p`` features; a column bounded by [0, 0] is an error."""
        lower, upper = check_bounds(bounds, p, name)
        span = np.maximum(np.abs(lower), np.abs(upper))
        if (span == 0).any():
            j = int(np.argmax(span == 0))
            raise ValueError(f"{name}: column {j} has bounds [0, 0]; it carries no information")
        return cls(lower, upper, bool(fit_intercept))

    @property
    def d(self) -> int:
        """Columns of the augmented design, the intercept included."""
        return self.lower.size + self.fit_intercept

    @property
    def scale(self) -> np.ndarray:
        """Divisor of each column of the augmented design (intercept first)."""
        span = np.maximum(np.abs(self.lower), np.abs(self.upper))
        if self.fit_intercept:
            span = np.concatenate(([1.0], span))
        return span * np.sqrt(self.d)

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Clip, add the intercept column, scale; works on (..., n, p) arrays."""
        X = np.clip(X, self.lower, self.upper)
        if self.fit_intercept:
            X = np.concatenate((np.ones(X.shape[:-1] + (1,)), X), axis=-1)
        return X / self.scale

    def to_original(self, theta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients (intercept, coef) in original units from scaled ones, shape (..., d)."""
        theta = np.asarray(theta) / self.scale
        if self.fit_intercept:
            return theta[..., 0], theta[..., 1:]
        return np.zeros(theta.shape[:-1]), theta
