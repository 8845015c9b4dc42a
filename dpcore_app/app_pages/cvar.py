"""Private CVaR: what privacy costs when the quantity of interest is the worst τ share."""

import math

import streamlit as st

from dpcore.cvar.constructions import KINDS
from dpcore_app.ui.common import handout
from dpcore_app.ui.common.controls import (
    Choice,
    IntRange,
    MultiChoice,
    check_link,
    details,
    presets,
    presets_menu,
    row,
)
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.grids import EPS_OPTIONS, fmt_eps
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.cvar import charts, compute, explain
from dpcore_app.ui.cvar import handout as cvar_handout

KIND_NAMES = {
    "uniform": "uniform",
    "beta": "concentrated",
    "two-point": "hard two-point",
    "heavy-tailed": "heavy-tailed",
}
AXES = {"epsilon": "ε", "n": "n", "tau": "τ", "eps_n_tau": "εnτ"}
EPS = Choice(
    "eps",
    EPS_OPTIONS,
    1.0,
    "Privacy budget ε",
    fmt_eps,
    help="Smaller ε means more noise and stronger privacy.",
)
N = Choice("n", compute.N_GRID, 2000, "Patients (records) n")
TAU = Choice(
    "tau",
    compute.TAU_GRID,
    0.05,
    "Tail level τ",
    help="The share of worst outcomes averaged: 0.05 is the worst 5%.",
)
KIND = Choice(
    "loss",
    KINDS,
    "uniform",
    "Loss distribution",
    KIND_NAMES.get,
    kind="selectbox",
    help="Concentrated: Beta(20, 20) in [B/4, 3B/4]. Hard two-point: B with probability τ/2, "
    "else 0 (the lower-bound instance). Heavy-tailed: Pareto with tail index 2, cut at B.",
)
BOUND = Choice(
    "B", compute.B_GRID, 1.0, "Loss bound B", help="Public: every loss is clipped to [0, B]."
)
REPS = IntRange(
    "reps", 20, 1000, 200, "Repetitions", step=20, help="Simulated data sets per setting."
)
SEED = IntRange(
    "seed", 0, 10**6, 0, "Seed", help="Same seed, same simulated data: a link reproduces the view."
)
XAXIS = Choice("x", tuple(AXES), "epsilon", "Error against", AXES.get, kind="segmented")
CLASS_M = Choice("M", compute.M_GRID, 31, "Candidates M", help="Slopes θ on a grid in [-1.5, 1.5].")
DIMS = MultiChoice("d", compute.D_GRID, (2, 10, 50), "Dimensions d")
EPS_RULE = Choice("eps_rule", EPS_OPTIONS[:-1], 2.0, "ε₁ for the treatment rule", fmt_eps)
CONTROLS = (EPS, N, TAU, KIND, BOUND, REPS, SEED, XAXIS, CLASS_M, DIMS, EPS_RULE)
STATE = (EPS, N, TAU, KIND, BOUND, REPS, SEED)  # what a preset sets, all of it
PRESETS = presets(
    STATE,
    {
        "Clinical tail: 2000 patients, worst 5%, ε = 1": dict(
            n=2000, tau=0.05, eps=1.0, loss="uniform"
        ),
        "Hard instance, ε = 0.5": dict(n=1000, tau=0.05, eps=0.5, loss="two-point"),
        "Rare events: worst 1% of 500": dict(n=500, tau=0.01, eps=1.0, loss="heavy-tailed"),
        "Generous budget: ε = 10": dict(n=2000, tau=0.05, eps=10.0, loss="uniform"),
    },
)


def settings_panel():
    """Presets and the controls of the scalar study; returns their values."""
    box = st.container()  # the presets, filled after the controls: their label names the active one
    with st.container(border=True):
        eps, n, tau = row(EPS, N, TAU)
        kind, bound = row(KIND, BOUND)
        with st.expander("Simulation settings: repetitions, seed"):
            reps, seed = row(REPS, SEED)
    with box:
        presets_menu(PRESETS, STATE)
    return dict(eps=eps, n=n, tau=tau, kind=kind, bound=bound, reps=reps, seed=seed)


def verdict_panel(s, here):
    """The verdict sentence and the regime label."""
    regime = compute.regime(s["n"], s["tau"], s["eps"])
    kind, lead = explain.cvar_judgement(regime, s["eps"], here.total_mean, here.statistical_mean)
    getattr(st, kind)(
        lead
        + " "
        + explain.cvar_verdict(
            s["n"], s["tau"], s["eps"], here.total_mean, here.statistical_mean, s["bound"]
        ),
        icon=":material/groups:",
    )
    # the verdict's colour: a label never looks safer than the verdict beside it
    colour = {"success": "green", "warning": "orange", "error": "red", "info": "blue"}[kind]
    st.badge(f"Indicative regime, up to constants: {regime}", color=colour)


def numbers_panel(s, here):
    """The numbers behind the verdict: the regime's reason and the tail's sizes and parts."""
    regime = compute.regime(s["n"], s["tau"], s["eps"])
    st.caption(
        explain.cvar_regime_sentence(
            regime, s["n"], s["tau"], s["eps"], here.privacy_exact_mean, here.statistical_mean
        )
    )
    cols = st.columns(4)
    cols[0].metric("Tail records nτ", f"{s['n'] * s['tau']:g}")
    cols[1].metric(
        "Private tail size εnτ",
        "∞" if math.isinf(s["eps"]) else f"{s['eps'] * s['n'] * s['tau']:.3g}",
    )
    cols[2].metric("Privacy part (exact)", f"{here.privacy_exact_mean:.2g}")
    cols[3].metric("Sampling part", f"{here.statistical_mean:.2g}")


def error_panel(s, summary):
    """Error against ε, n, τ or εnτ, with the rate and the two parts; its download."""
    st.subheader("The error against ε, n, τ or εnτ", anchor=explain.ERRORS_ANCHOR)
    x_axis = XAXIS.widget()
    rows = compute.curve(summary, x_axis, s["n"], s["tau"], s["eps"])
    current = {"epsilon": s["eps"], "n": s["n"], "tau": s["tau"], "eps_n_tau": None}[x_axis]
    st.plotly_chart(
        figure(charts.error_curves, rows, x_axis, current, s["bound"], s["eps"]),
        width="stretch",
        key="errors",
    )
    st.markdown(explain.error_reading(rows, x_axis))
    st.caption(explain.CVAR_CAPTIONS[x_axis])
    st.download_button(
        "Download these numbers (CSV)",
        lambda: handout.csv(rows),
        f"cvar_error_vs_{x_axis}.csv",
        "text/csv",
        key="dl_errors",
    )


def formulas_panel(s):
    detail = details(
        "Statistician detail: the mechanism, the rate, an instance-adaptive variant", "detail"
    )
    if not detail.open:
        return
    with detail:
        st.markdown(explain.MECHANISM_INTRO)
        for tex in explain.MECHANISM_TEX:
            st.latex(tex)
        st.markdown(explain.MECHANISM_SCOPE)
        if math.isfinite(s["eps"]):
            table = compute.methods(
                s["kind"], s["n"], s["tau"], s["eps"], s["bound"], s["reps"], s["seed"]
            )
            st.markdown(
                explain.adaptive_sentence(
                    *table.total_mean, *table.total_se, s["n"], s["tau"], s["eps"]
                )
            )


def class_panel(s):
    """The exponential mechanism over M slopes: probabilities and excess against ε."""
    st.subheader("Choosing among M predictors: the exponential mechanism")
    M = CLASS_M.widget()
    study = compute.finite_class(s["n"], s["tau"], M, s["bound"], s["seed"])
    i = list(study.epsilons).index(s["eps"])
    a, b = st.columns(2)
    a.plotly_chart(
        figure(charts.selection_probabilities, study, i), width="stretch", key="em_probs"
    )
    b.plotly_chart(figure(charts.class_excess, study, s["eps"]), width="stretch", key="em_excess")
    st.caption(explain.class_caption(s["tau"]))
    per_theta, per_eps = compute.class_table(study)
    c, d = st.columns(2)
    c.download_button(
        "Probabilities per slope (CSV)",
        lambda: handout.csv(per_theta),
        "cvar_em_probabilities.csv",
        "text/csv",
        key="dl_em_probs",
    )
    d.download_button(
        "Excess against ε (CSV)",
        lambda: handout.csv(per_eps),
        "cvar_em_excess.csv",
        "text/csv",
        key="dl_em_excess",
    )


def convex_panel(s):
    """DP-GD's phase transition, run on request, with the transition where it is measured."""
    st.subheader("Convex learning: where privacy stops costing, measured against εnτ/√d")
    ds = DIMS.widget()
    if not ds:
        st.caption("Choose at least one dimension d.")
        return
    request = (tuple(sorted(ds)), s["seed"])
    if st.button(
        f"Run DP-GD for d = {', '.join(map(str, sorted(ds)))} (a few seconds)", key="run_convex"
    ):
        st.session_state["convex_request"] = request
    if st.session_state.get("convex_request") != request:
        st.caption(
            f"Noisy subgradient descent on the CVaR objective of a linear predictor (n = "
            f"{compute.CONVEX_N}, τ = {compute.CONVEX_TAU:g}, {compute.CONVEX_REPS} runs per point, "
            "(ε, 10⁻⁵)-DP). Press the button to run it."
        )
        return
    with st.spinner("Running DP-GD" + compute.waiting() + "…"):
        summary = compute.convex(*request)
    transition = compute.convex_transition(summary)
    st.plotly_chart(
        figure(charts.phase_transition, summary, transition["benchmark"]),
        width="stretch",
        key="convex",
    )
    st.caption(explain.convex_caption(transition, request[0]))
    st.download_button(
        "Download these numbers (CSV)",
        handout.csv(summary),
        "cvar_convex.csv",
        "text/csv",
        key="dl_convex",
    )


def rule_panel(s):
    """The bridge to the DP-OWL page: tail risk of a private treatment rule."""
    st.subheader("Tail risk of a treatment rule")
    st.markdown(
        "A DP-OWL rule is learned on the DP-wERM paper's simulated trial of n patients and "
        "released at ε₁; on new patients, the mean outcome of the worst-off τ share under "
        "it is released at ε₂ = the page's ε (outcomes bounded in [−12, 12], public)."
    )
    eps_rule = EPS_RULE.widget()
    res, spent, _ = compute.rule_tail(s["n"], s["tau"], eps_rule, s["eps"], s["seed"])
    st.plotly_chart(charts.rule_tail(res, eps_rule, s["eps"]), width="stretch", key="rule_tail")
    st.caption(
        "Higher is better. Simulated patients, so the exact tail means are shown beside the "
        "release (a teaching view). The bar around the release holds at least 95% of releases at this ε₂."
    )
    st.info(
        explain.rule_tail_sentence(res, eps_rule, s["eps"], spent), icon=":material/medication:"
    )
    st.download_button(
        "Download these numbers (CSV)",
        handout.csv(compute.rule_table(res, eps_rule, s["eps"], spent)),
        "cvar_rule_tail.csv",
        "text/csv",
        key="dl_rule",
    )


@st.fragment
@guarded("The private CVaR study")
def study():
    verdict_slot = st.container()  # filled once the numbers are in: the first thing under the title
    with st.expander("What is simulated"):  # one line, so the chart starts on the first screen
        st.markdown(explain.CVAR_INTRO)
    s = settings_panel()
    work = compute.workload(s["reps"])
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    with st.spinner("Simulating" + compute.waiting() + "…"):
        summary = compute.scalar_summary(s["kind"], s["bound"], work.reps, s["seed"])
    here = compute.cell(summary, s["n"], s["tau"], s["eps"])
    with verdict_slot:
        verdict_panel(s, here)
    error_panel(s, summary)
    numbers_panel(s, here)
    formulas_panel({**s, "reps": work.reps})
    class_panel(s)
    convex_panel(s)
    rule_panel(s)
    cvar_handout.download(CONTROLS)
    handout.share("cvar")


st.title("Private CVaR: the privacy price of tail risk")
check_link(CONTROLS, page="cvar")
study()
