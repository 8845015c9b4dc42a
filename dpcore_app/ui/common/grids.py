"""The option grids every page shares, and how their values are written."""

from __future__ import annotations

import math

EPS_OPTIONS = (
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    20.0,
    50.0,
    100.0,
    200.0,
    500.0,
    1000.0,
    math.inf,
)
N_OPTIONS = (100, 200, 300, 500, 800, 1000, 1500, 2000, 2500, 3000, 4000, 5000)
H_OPTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0)


def fmt_eps(eps: float) -> str:
    """ε as a short label: 0.05, 1, 1000, or "non-private"."""
    return "non-private" if math.isinf(eps) else f"{eps:g}"


def fmt_number(x: object) -> str:
    """A grid value as the URL and the widgets write it: 0.5, 1000."""
    return f"{x:g}" if isinstance(x, float) else str(x)
