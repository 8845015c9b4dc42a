"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

import math

import streamlit as st

from dpcore_app.ui.common import controls, frames, handout
from dpcore_app.ui.common import explain as common_explain
from dpcore_app.ui.common.controls import (
    Choice,
    IntRange,
    MultiChoice,
    check_link,
    details,
    rerun,
    row,
)
from dpcore_app.ui.common.grids import EPS_OPTIONS, H_OPTIONS, N_OPTIONS, fmt_eps, fmt_number
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.owl import charts, compute, decide, decide_explain, explain, panels, tuning
from dpcore_app.ui.owl.handout import owl_report

EPS = Choice(
    "eps",
    EPS_OPTIONS,
    1.0,
    "Privacy budget ε",
    fmt_eps,
    help="How much one patient may change what is released. Smaller ε: more noise, stronger privacy.",
)
N = Choice("n", N_OPTIONS, 1000, "Patients in the trial (n)")
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = Choice(
    "gamma_mode",
    ("paper", "free"),
    "paper",
    "γ",
    {"paper": "paper-tuned", "free": "fixed"}.get,
    kind="segmented",
    help="Paper-tuned: the authors' choice for each (ε, n). Fixed: one γ for "
    "every ε, the clean experiment where only the noise changes.",
)
GAMMA = IntRange(
    "gamma",
    1,
    1000,
    75,
    "Regularization γ",
    kind="slider",
    help="How strongly the rule is pulled towards zero. Larger γ: less noise needed, blurrier rule.",
)
PREP = Choice(
    "prep",
    ("public", "paper"),
    "public",
    "Outcome preprocessing",
    {"public": "public bounds", "paper": "authors' shift"}.get,
    kind="radio",
    help="Public bounds: outcomes clipped to a range fixed in advance, covered by the guarantee. "
    "Authors' shift: each data set shifted by its own minimum, as in the paper's code; it "
    "reads the data, so the guarantee does not cover it.",
)
H = Choice(
    "h", H_OPTIONS, 0.5, "Huber width h", help="Width of the Huber smoothing of the hinge loss."
)
W_BOUND = Choice(
    "W",
    ("auto", 10, 20, 30, 48, 60, 100),
    "auto",
    "Weight bound W",
    fmt_number,
    kind="selectbox",
    help="Public bound on benefit / propensity; larger weights are clipped. Auto: 48 with public "
    "bounds (no clipping), the authors' 30 with their preprocessing.",
)
REPS = IntRange("reps", 20, 500, 200, "Repetitions", step=20, help="Simulated trials per setting.")
SEED = IntRange(
    "seed",
    0,
    10**6,
    0,
    "Seed",
    help="Same seed, same simulated trials: a link reproduces the view.",
)
METRIC = Choice(
    "metric",
    ("accuracy", "value", "concordance"),
    "accuracy",
    "Show",
    {"accuracy": "accuracy", "value": "value", "concordance": "agreement"}.get,
    kind="segmented",
)
SCALE = Choice(
    "scale",
    ("own", "paper"),
    "own",
    "Outcome scale",
    {"own": "own scale", "paper": "paper scale"}.get,
    kind="radio",
    help="Own scale: the outcome as measured. Paper scale: the authors shift each "
    "test set's outcomes by its own minimum, which adds a constant.",
)
CONTROLS = (
    EPS,
    N,
    COMPARE,
    MODE,
    GAMMA,
    PREP,
    H,
    W_BOUND,
    REPS,
    SEED,
    METRIC,
    SCALE,
    *tuning.CONTROLS,
    *decide.CONTROLS,
)
STATE = (
    EPS,
    N,
    COMPARE,
    MODE,
    GAMMA,
    PREP,
    H,
    W_BOUND,
    REPS,
    SEED,
)  # what a preset sets, all of it
PRESETS = controls.presets(
    STATE,
    {
        "Strong privacy (ε = 0.1)": {"eps": 0.1},
        "Moderate (ε = 1)": {"eps": 1.0},
        "Weak (ε = 10)": {"eps": 10.0},
        "Clean: fixed γ = 75": {"gamma_mode": "free", "gamma": 75},
    },
)


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
        st.plotly_chart(vs_eps, width="stretch", key="vs_eps", config=charts.CONFIG)
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
        st.plotly_chart(vs_n, width="stretch", key="vs_n", config=charts.CONFIG)
        frames.follow("vs_n", EPS)  # a drag on the chart's own ε slider sets the page's ε
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
        st.plotly_chart(dist, width="stretch", key="dist", config=charts.CONFIG)
        st.caption(explain.spread_caption(here.std() if here is not None else None, best.std()))
    with d:
        st.plotly_chart(coef, width="stretch", key="coef", config=charts.CONFIG)
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
    st.markdown(explain.OWL_INTRO)
    with st.container(horizontal=True):  # the presets and the target: two popovers, one row
        presets_box = st.container(
            width="content"
        )  # filled after the controls: it names the active one
        target = decide.target_widgets()
    s = settings_panel()
    with presets_box:
        controls.presets_menu(PRESETS, STATE, announce=True)
    work, args = panels.workload(s)
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    bar = st.progress(0.0, text="Simulating…")
    refine = not compute.is_computed(work.sizes, *args) and work.reps > compute.QUICK_REPS
    # A first estimate from fewer repetitions while the full sweep runs: labelled, and without
    # the judgements about one release that fewer repetitions would change (decide_explain.FIRST).
    if refine:
        quick = (*args[:4], compute.QUICK_REPS, *args[5:])
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
    with verdict_slot:  # above the controls: a phone sees it first
        d = panels.verdict(
            s, v, target, reps, first, lambda needed: decide.offer_reps(needed, REPS, set_values)
        )
    metric = curves_panel(s, sizes, v, reps, d)
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
            lambda: owl_report(  # built on download
                s,
                v.here,
                v.best,
                d["board"],
                v.all_summary,
                sizes,
                reps,
                d["verdict"],
                common_explain.privacy_statement(s["eps"]),
                d["mark"],
                (d["share"], d["assurance"]),
                view_link=view_link,
            ),
        )
        handout.share("dp-owl")


st.title("DP-OWL: what privacy costs a treatment rule")
check_link(CONTROLS, page="dp-owl")
study()
