"""Input checks shared by the public API.

Each helper raises ``TypeError`` for a value of the wrong kind and ``ValueError`` for a value
out of range, naming the parameter and the offending value, so that a user who passes a bad
argument learns which one and why.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = True,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a float after checking it is a real number in range.

    ``low`` is an open bound by default (``value > low``); ``high`` is closed.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    if np.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        relation = ">" if low_open else ">="
        raise ValueError(f"{name} must be {relation} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """A privacy budget: a positive number, or ``np.inf`` for no privacy."""
    return check_real(epsilon, name, low=0.0, allow_inf=True)


def check_matrix(X: Any, name: str = "X", *, allow_1d: bool = True) -> np.ndarray:
    """A finite 2-D float array with at least one row and one column.

    A 1-D array is read as one column unless ``allow_1d`` is False (scikit-learn's
    convention for estimators: a 1-D ``X`` is ambiguous, so it is an error).
    """
    if hasattr(X, "tocsr"):  # a scipy.sparse matrix or array
        raise TypeError(
            f"{name} is sparse; sparse input is not supported: pass a dense array (X.toarray())"
        )
    if np.asarray(X).dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} must be real")
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 2-D array: {exc}") from None
    if X.ndim == 1:
        if not allow_1d:
            raise ValueError(
                f"{name} must be 2-D (rows x features), got a 1-D array of shape "
                f"{X.shape}. Reshape your data with X.reshape(-1, 1) for one feature "
                "or X.reshape(1, -1) for one row"
            )
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x features), got shape {X.shape}")
    if X.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if X.shape[0] == 0:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s), "
            f"first at row {row}, column {col}"
        )
    return X


def check_new_rows(X: Any, n_features: int, estimator: str) -> np.ndarray:
    """Rows to predict for: :func:`check_matrix` (2-D only) with the fit's ``n_features``
    columns, else scikit-learn's error naming the ``estimator`` class."""
    X = check_matrix(X, allow_1d=False)
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but {estimator} is "
            f"expecting {n_features} features as input"
        )
    return X


def check_vector(v: Any, name: str, n: int, *, finite: bool = True) -> np.ndarray:
    """A 1-D float array of length ``n``."""
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 1-D array: {exc}") from None
    v = v.reshape(-1) if v.ndim == 2 and 1 in v.shape else v
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} entries but X has {n} rows")
    if finite and not np.isfinite(v).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(v)).sum())} NaN or infinite value(s)")
    return v


def check_binary_labels(y: Any, n: int, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Any two labels: their sorted ``classes`` and ``y`` coded -1 / +1 (``classes[1]`` is +1)."""
    if y is None:
        raise ValueError(f"this estimator requires y to be passed, but the target {name} is None")
    y = np.asarray(y)
    y = y.reshape(-1) if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} entries but X has {n} rows")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError(
                f"{name} contains {int((~np.isfinite(y)).sum())} NaN or infinite value(s)"
            )
        if (y != np.round(y)).any():
            raise ValueError(
                f"Unknown label type: {name} holds continuous values; a classifier "
                "needs two class labels"
            )
    elif y.dtype.kind == "O" and any(
        v is None or (isinstance(v, float) and np.isnan(v)) for v in y
    ):
        raise ValueError(f"{name} contains missing labels")
    try:
        classes, coded = np.unique(y, return_inverse=True)
    except TypeError:
        raise TypeError(f"{name} mixes label types that cannot be sorted") from None
    if classes.size == 1:
        raise ValueError(f"{name} contains only one class ({classes[0]!r}); need two classes")
    if classes.size > 2:
        raise ValueError(
            f"Only binary classification is supported. {name} has {classes.size} "
            f"classes: {classes[:5].tolist()}"
        )
    return classes, np.where(coded.reshape(-1) == 1, 1.0, -1.0)


def check_weights(
    w: Any, n: int, bound: float, name: str = "sample_weight"
) -> tuple[np.ndarray, float]:
    """Non-negative weights clipped to the public bound ``bound``, and the share clipped.

    The warning says only that clipping happened: how many weights, or how large, is a fact
    about the sensitive data. The share is returned for analyst-only diagnostics.
    """
    w = check_vector(w, name, n)
    if (w < 0).any():
        raise ValueError(f"{name} must be non-negative; found a negative value")
    over = w > bound
    if over.any():
        from ._estimator import ClippingWarning

        warnings.warn(
            f"some {name} values exceed the weight bound W={bound:g}; they were clipped to W "
            "(the share clipped is an analyst-only diagnostic)",
            ClippingWarning,
            stacklevel=3,
        )
        w = np.minimum(w, bound)
    return w, float(over.mean())


def check_bounds(bounds: Any, p: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Public (lower, upper) bounds: two arrays of length ``p`` (or scalars), lower <= upper."""
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lower, upper), got {bounds!r}") from None
    try:
        lower = np.broadcast_to(np.asarray(lower, dtype=float), (p,)).copy()
        upper = np.broadcast_to(np.asarray(upper, dtype=float), (p,)).copy()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold {p} lower and {p} upper values: {exc}") from None
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise ValueError(f"{name} must be finite")
    if (lower > upper).any():
        j = int(np.argmax(lower > upper))
        raise ValueError(
            f"{name}: lower bound {lower[j]:g} > upper bound {upper[j]:g} for column {j}"
        )
    return lower, upper


def check_outcome_range(bounds: Any) -> tuple[float, float]:
    """Public outcome bounds (lo, hi) with lo < hi: an outcome that cannot vary says nothing
    about which arm is better (and its scaled statistics would divide by hi - lo = 0)."""
    lower, upper = check_bounds(bounds, 1, "outcome_bounds")
    lo, hi = float(lower[0]), float(upper[0])
    if not lo < hi:
        raise ValueError(
            f"outcome_bounds must have lo < hi, got ({lo:g}, {hi:g}): an outcome that cannot "
            "vary says nothing about which arm is better"
        )
    return lo, hi


def check_choice(value: Any, name: str, choices: Any) -> Any:
    """``value`` if it is one of ``choices``, else a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value
