"""The DP-OWL page's decision parts: the publication target, whole-state presets, and the best
non-private rule every mode is compared with."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from .compute import owl as compute
from .compute import owl_decide as decide
from .controls import Choice

TARGET = Choice("target", ("patients", "points"), "patients", "Publish when the rule is",
                {"patients": "k of 100", "points": "within p points"}.get, kind="segmented",
                help="k of 100: at least k of 100 new patients get the better treatment. Within p "
                     "points: the accuracy is at most p percentage points below the best "
                     "non-private rule's.")
K = Choice("k", (55, 60, 65, 70, 75, 80, 85, 90, 95), 80, "k: of 100 new patients, at least")
P = Choice("p", (1, 2, 3, 5, 10, 15, 20), 5, "p: percentage points behind, at most")
CONTROLS = (TARGET, K, P)


def target_widgets():
    """The target's widgets; returns a :class:`decide.Target`."""
    a, b = st.columns([2, 3])
    with a:
        kind = TARGET.widget()
    with b:
        level = K.widget() if kind == "patients" else P.widget()
    return decide.Target(kind, level)


def best_reference(s, summary, reps, n=None):
    """The best non-private rule at n (default: the page's n): the sweep's own ε = ∞ row in
    paper mode, the authors' tuned γ on the same trials in fixed mode."""
    n = s["n"] if n is None else n
    if s["mode"] == "paper":
        rows = summary[summary["n"] == n]
        return compute.cell(rows, math.inf)
    return pd.Series(decide.best_nonprivate(n, s["h"], s["W"], reps, s["seed"], s["prep"]))


def best_gamma(n):
    return compute.gamma_used("paper", 0, math.inf, n)
