"""The DP-OWL page's decision parts: the publication target, whole-state presets, and the best
non-private rule every mode is compared with."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from dpcore_app.ui.common.controls import Choice
from dpcore_app.ui.common.link import value_of
from dpcore_app.ui.owl import compute
from dpcore_app.ui.owl import decide_compute as decide

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import numpy as np

    from dpcore_app.ui.common.controls import IntRange
    from dpcore_app.ui.owl.view_model import State

TARGET = Choice(
    "target",
    ("patients", "points"),
    "patients",
    "Publish when the rule is",
    {"patients": "k of 100", "points": "within p points"}.get,
    kind="segmented",
    help="k of 100: at least k of 100 new patients get the better treatment. Within p "
    "points: the accuracy is at most p percentage points below that of the best "
    "non-private rule learned from the same patients.",
)
K = Choice("k", (55, 60, 65, 70, 75, 80, 85, 90, 95), 80, "k: of 100 new patients, at least")
P = Choice("p", (1, 2, 3, 5, 10, 15, 20), 5, "p: percentage points behind, at most")
ASSURANCE = Choice(
    "assurance",
    (0.5, 0.8, 0.9, 0.95),
    0.9,
    "Of single releases, reaching it",
    {0.5: "5 of 10", 0.8: "8 of 10", 0.9: "9 of 10", 0.95: "19 of 20"}.get,
    help="A publisher releases one rule, not an average: how many of 10 "
    "releases (each on its own simulated trial) must reach the target.",
)
CONTROLS = (TARGET, K, P, ASSURANCE)


def target_widgets() -> tuple[decide.Target, float]:
    """The target's widgets in a popover whose label states the target; returns
    (:class:`decide.Target`, assurance as a fraction)."""
    kind = value_of(TARGET)
    words = (
        f"{value_of(K)} of 100 patients" if kind == "patients" else f"within {value_of(P)} points"
    ) + f", {ASSURANCE.fmt(value_of(ASSURANCE))} releases"
    with st.popover(f"Target: {words}", icon=":material/flag:"):
        kind = TARGET.widget()
        level = K.widget() if kind == "patients" else P.widget()
        assurance = ASSURANCE.widget()
    return decide.Target(kind, level), float(assurance)


def best_reference(s: State, summary: pd.DataFrame, reps: int, n: int | None = None) -> pd.Series:
    """The best non-private rule at n (default: the page's n): the sweep's own ε = ∞ row in
    paper mode, the authors' tuned γ on the same trials in fixed mode."""
    n = s["n"] if n is None else n
    if s["mode"] == "paper":
        rows = summary[summary["n"] == n]
        return compute.cell(rows, math.inf)
    return pd.Series(decide.best_nonprivate(n, s["h"], s["W"], reps, s["seed"], s["prep"])[0])


def best_per_trial(s: State, runs: pd.DataFrame, reps: int, n: int | None = None) -> np.ndarray:
    """The best non-private rule's accuracy on each simulated trial at n (default: the page's
    n), indexed by repetition: from the sweep's own ``runs`` at ε = ∞ in paper mode, from the
    authors' tuned γ on the same trials in fixed mode (already computed for
    :func:`best_reference`)."""
    n = s["n"] if n is None else n
    if s["mode"] == "paper":
        return decide.per_trial(runs)
    return decide.best_nonprivate(n, s["h"], s["W"], reps, s["seed"], s["prep"])[1]


def best_gamma(n: int) -> float:
    """The γ of the best non-private rule at n: the authors' tuned γ at ε = ∞."""
    return compute.gamma_used("paper", 0, math.inf, n)


def offer_reps(
    needed: int, control: IntRange, on_use: Callable[[Mapping[str, Any], str], None]
) -> None:
    """A button that sets the repetitions ``control`` to its first setting at or above
    ``needed`` (through ``on_use(values, message)``); none when the control is already there
    (the view was capped below it: its notice says why)."""
    setting = decide.control_setting(needed, control.low, control.step, control.high)
    if setting <= value_of(control):
        return
    st.button(
        f"Simulate {setting} repetitions",
        icon=":material/repeat:",
        key="reps_needed",
        on_click=on_use,
        args=({control.key: setting}, f"Now simulating {setting} repetitions per setting"),
    )
