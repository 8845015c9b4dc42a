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
ASSURANCE = Choice("assurance", (0.5, 0.8, 0.9, 0.95), 0.9, "Of single releases, reaching it",
                   {0.5: "5 of 10", 0.8: "8 of 10", 0.9: "9 of 10", 0.95: "19 of 20"}.get,
                   help="A publisher releases one rule, not an average: how many of 10 "
                        "releases (each on its own simulated trial) must reach the target.")
CONTROLS = (TARGET, K, P, ASSURANCE)


def target_widgets():
    """The target's widgets; returns (:class:`decide.Target`, assurance as a fraction)."""
    a, b, c = st.columns([2, 3, 2])
    with a:
        kind = TARGET.widget()
    with b:
        level = K.widget() if kind == "patients" else P.widget()
    with c:
        assurance = ASSURANCE.widget()
    return decide.Target(kind, level), float(assurance)


def presets(specs, overrides):
    """Whole states: every control in ``specs`` at its default, then the preset's values, so a
    preset never lands on top of whatever came before."""
    base = {c.key: c.default for c in specs}
    return {label: {**base, **values} for label, values in overrides.items()}


def active(presets_, specs):
    """The label of the preset the controls are at now, or None."""
    now = {c.key: st.session_state.get(c.key, c.default) for c in specs}
    for label, values in presets_.items():
        if all(_same(now[k], v) for k, v in values.items()):
            return label
    return None


def _same(a, b):
    if isinstance(b, tuple):
        return tuple(a) == b
    return a == b


def apply(values, label):
    """on_click of a preset: set the whole state, and ask for the verdict as a toast once the
    numbers are in (on a phone the verdict may be off-screen)."""
    st.session_state.update(values)
    st.session_state["_preset_toast"] = label


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
