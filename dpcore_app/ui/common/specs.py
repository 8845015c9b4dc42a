"""The URL-bound controls several pages share, each defined once: the privacy budget ε, the
trial's size n, γ (paper-tuned or fixed, and its value), the Huber width h and the seed. A page
gives its own help text and default where they differ."""

from __future__ import annotations

import math

from dpcore_app.ui.common.controls import Choice, IntRange
from dpcore_app.ui.common.grids import EPS_OPTIONS, H_OPTIONS, N_OPTIONS, fmt_eps


def epsilon(
    help: str | None = None,
    *,
    key: str = "eps",
    label: str = "Privacy budget ε",
    finite: bool = False,
) -> Choice:
    """ε on the shared grid, 1 by default; ``finite`` leaves out the non-private ε = ∞."""
    options = tuple(e for e in EPS_OPTIONS if math.isfinite(e)) if finite else EPS_OPTIONS
    return Choice(key, options, 1.0, label, fmt_eps, help=help)


def trial_size(default: int) -> Choice:
    """The number of patients n of a simulated trial, on the shared grid."""
    return Choice("n", N_OPTIONS, default, "Patients in the trial (n)")


def gamma_mode(help: str) -> Choice:
    """γ paper-tuned (the authors' table) or fixed (:func:`gamma`)."""
    return Choice(
        "gamma_mode",
        ("paper", "free"),
        "paper",
        "γ",
        {"paper": "paper-tuned", "free": "fixed"}.get,
        kind="segmented",
        help=help,
    )


def gamma(help: str | None = None) -> IntRange:
    """The regularization γ when it is fixed, 75 by default."""
    return IntRange("gamma", 1, 1000, 75, "Regularization γ", kind="slider", help=help)


def huber_width(help: str | None = None) -> Choice:
    """The Huber width h of the smoothed hinge loss, 0.5 by default."""
    return Choice("h", H_OPTIONS, 0.5, "Huber width h", help=help)


def seed(help: str | None = None) -> IntRange:
    """The seed of the simulations, 0 by default."""
    return IntRange("seed", 0, 10**6, 0, "Seed", help=help)
