"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

import math

import streamlit as st

from dpcore_app.ui.common import controls, figures, frames, handout
from dpcore_app.ui.common.controls import (
    check_link,
    details,
    rerun,
    row,
)
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.owl import compute, decide, decide_explain, explain, panels, tuning
from dpcore_app.ui.owl.controls import (
    COMPARE,
    CONTROLS,
    EPS,
    GAMMA,
    METRIC,
    MODE,
    PREP,
    PRESETS,
    REPS,
    SCALE,
    SEED,
    STATE,
    W_BOUND,
    H,
    N,
)
from dpcore_app.ui.owl.handout import view_report


def set_values(values, message=None):
    controls.set_state(values)
    if message:
        st.toast(message, icon=":material/check:")


def settings_panel():
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


def curves_panel(s, sizes, v, reps, d):
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
        st.markdown(explain.eps_reading(v.all_summary, s["n"], metric, s["eps"]))
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
        st.markdown(explain.n_reading(v.all_summary, s["eps"], metric))
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


def rule_panel(s, runs, metric):
    """The spread over repetitions, one example rule, and the statistician's details."""
    ex = panels.example(s)
    dist, coef = panels.rule_figures(s, runs, metric, ex)
    here, best = panels.spread(s, runs, metric)
    c, d = st.columns(2)
    with c:
        figures.show(dist, key="dist")
        st.markdown(explain.spread_reading(here, best, metric, s["eps"]))
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


@st.fragment
@guarded("The DP-OWL study")
def study():
    verdict_slot = st.container()  # filled once the numbers are in: the first thing under the title
    with st.container(horizontal=True):  # the presets and the target: two popovers, one row
        presets_box = st.container(
            width="content"
        )  # filled after the controls: it names the active one
        target = decide.target_widgets()
    s = settings_panel()
    with presets_box:
        controls.presets_menu(PRESETS, STATE, announce=True)
    with st.expander(
        "What is simulated"
    ):  # one line, after the controls: the charts start on the first screen and the presets are the first stop
        st.markdown(explain.OWL_INTRO)
    work, args = panels.workload(s)
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    bar = st.progress(0.0, text="Simulating…")
    refine = not compute.is_computed(work.sizes, *args) and work.reps > compute.QUICK_REPS
    # A first estimate from fewer repetitions while the full sweep runs: labelled, and without
    # the judgements about one release that fewer repetitions would change (decide_explain.FIRST).
    if refine:
        quick = (*args[:4], compute.QUICK_REPS, *args[5:])
        with figures.numbers(False):  # a first estimate's charts: no file of numbers to keep
            show(
                s,
                work.sizes,
                compute.sweeps(work.sizes, *quick, progress=bar.progress),
                target,
                verdict_slot,
                compute.QUICK_REPS,
                first=work.reps,
            )
    refining = (
        f"First estimate below, from {compute.QUICK_REPS} repetitions; refining to {work.reps}:"
    )
    results = compute.sweeps(
        work.sizes, *args, progress=bar.progress, what=refining if refine else "Simulating"
    )
    if refine:
        rerun()
    bar.empty()
    show(s, work.sizes, results, target, verdict_slot, work.reps)
    tuning.panel(s["n"], s["eps"], s["h"], s["W"], s["prep"], on_use=set_values)


def show(s, sizes, results, target, verdict_slot, reps, first=False):
    v = panels.view(s, results, reps)
    with verdict_slot:  # above the controls, one line: a phone sees it first
        d = panels.verdict(s, v, target, reps, first)
    metric = curves_panel(s, sizes, v, reps, d)
    panels.verdict_detail(  # in full, below the charts it reads
        s, v.here, d, lambda needed: decide.offer_reps(needed, REPS, set_values)
    )
    panels.cards(
        s,
        v.here,
        v.best,
        v.runs.loc[v.runs.epsilon == s["eps"], "clipped_share"],
        "value" if controls.value_of(SCALE) == "own" else "value_paper",
    )
    rule_panel(s, v.runs, metric)
    if not first:
        panels.learners(s)
        view_link = handout.link("dp-owl")  # now: a download's callback has no address to read
        panels.downloads(
            results,
            v.all_summary,
            s,
            lambda: view_report(s, v, d, sizes, reps, view_link=view_link),  # on download
        )
        handout.share("dp-owl")


st.title("DP-OWL: what privacy costs a treatment rule", anchor=False)  # presets: first stop
check_link(CONTROLS, page="dp-owl")
study()
