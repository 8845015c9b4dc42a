"""The DP-OWL page's sections that draw the study: the settings, the curves against ε and n,
and the spread of the rule over repetitions with one example rule. The panels that state results
(verdict, cards, downloads) are in :mod:`dpcore_app.ui.owl.panels`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore_app.ui.common import figures, frames
from dpcore_app.ui.common.controls import details, row
from dpcore_app.ui.common.link import set_state
from dpcore_app.ui.owl import compute, decide_explain, explain, panels
from dpcore_app.ui.owl.controls import (
    COMPARE,
    EPS,
    GAMMA,
    METRIC,
    MODE,
    PREP,
    REPS,
    SCALE,
    SEED,
    W_BOUND,
    H,
    N,
)

if TYPE_CHECKING:
    import pandas as pd

    from dpcore_app.ui.owl.view_model import State, View


def set_values(values: Mapping[str, Any], message: str | None = None) -> None:
    """Set these controls (a preset, a button's choice), with a toast saying ``message``."""
    set_state(values)
    if message:
        st.toast(message, icon=":material/check:")


def settings_panel() -> dict[str, Any]:
    """The controls of the study; returns their values."""
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            eps, n, compare = EPS.widget(), N.widget(), COMPARE.widget()
        with right:
            mode = MODE.widget()
            gamma = GAMMA.widget() if mode == "free" else GAMMA.default
            prep = PREP.widget()
        with st.expander("Simulation settings: h, W, repetitions, seed"):
            h, W, reps, seed = row(H, W_BOUND, REPS, SEED)
    g = compute.gamma_used(mode, gamma, eps, n)
    right.caption(
        f"γ in use: **{g:g}**"
        + (
            " (the authors' tuned value for the nearest (ε, n) of their table)"
            if mode == "paper"
            else ""
        )
    )
    return dict(
        eps=eps,
        n=n,
        compare=compare,
        mode=mode,
        gamma=gamma,
        prep=prep,
        h=h,
        W=W,
        reps=reps,
        seed=seed,
    )


def curves_panel(s: State, sizes: Sequence[int], v: View, reps: int, d: Mapping[str, Any]) -> str:
    """The curves against ε and n; ``d`` is what the verdict decided (its target mark)."""
    st.subheader("Against ε and against n", anchor=panels.CURVES_ANCHOR)
    with st.container(
        horizontal=True, vertical_alignment="bottom"
    ):  # the view's two switches, one row
        shown = METRIC.widget()
        all_n = st.checkbox("Non-private references for every n")  # a view detail, not in the link
    scale = SCALE.widget() if shown == "value" else "own"
    metric = ("value" if scale == "own" else "value_paper") if shown == "value" else shown
    vs_eps, vs_n = panels.curve_figures(
        s, sizes, v, reps, metric, scale, tuple(sizes) if all_n else (s["n"],), d["mark"]
    )
    a, b = st.columns(2)
    with a:
        figures.show(vs_eps, key="vs_eps")
        st.markdown(explain.eps_reading(v.all_summary, s["n"], metric, s["eps"], d["first"]))
        st.caption(
            explain.eps_curve_caption(metric, s["mode"], s["gamma"], all_n)
            + (
                decide_explain.target_caption(
                    d["target"].kind, d["assurance"], d["mark"][1], d["first"], d["needed"], reps
                )
                if metric == "accuracy"
                else ""
            )
        )
    with b:
        figures.show(vs_n, key="vs_n")
        frames.follow("vs_n", EPS)  # a drag on the chart's own ε slider sets the page's ε
        st.markdown(explain.n_reading(v.all_summary, s["eps"], metric, d["first"]))
        st.caption(
            explain.n_curve_caption(
                s["eps"],
                s["mode"],
                compute.noise_lengths(sizes, s["eps"], s["mode"], s["gamma"], s["W"], s["prep"])
                if math.isfinite(s["eps"])
                else None,
            )
        )
    return metric


def rule_panel(s: State, runs: pd.DataFrame, metric: str, first: bool | int = False) -> None:
    """The spread over repetitions, one example rule, and the statistician's details
    (``first``: a first estimate, its reading labelled)."""
    ex = panels.example(s)
    dist, coef = panels.rule_figures(s, runs, metric, ex)
    here, best = panels.spread(s, runs, metric)
    c, d = st.columns(2)
    with c:
        figures.show(dist, key="dist")
        st.markdown(explain.spread_reading(here, best, metric, s["eps"], first))
        st.caption(explain.spread_caption(here.std() if here is not None else None, best.std()))
    with d:
        figures.show(coef, key="coef")
        st.caption(
            "One simulated trial; the rule treats when intercept + Σ coef·x > 0. The feature names "
            "are illustrative labels of the simulation's x1…x4, each scaled to [0, 1]."
        )
    box = details(
        "For statisticians: agreement test, noise geometry, formulas, the paper's γ table",
        "owl_details",
    )
    if box.open:
        with box:
            panels.for_statisticians(ex, s["eps"], explain.feature_names(ex.names))
