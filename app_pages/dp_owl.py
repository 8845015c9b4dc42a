"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

import math

import numpy as np
import streamlit as st

from dpcore.paper import PAPER_W, paper_gamma
from dpcore.simulate import PROXY_VARIANTS
from ui import charts, compute, explain
from ui.controls import (
    EPS_OPTIONS,
    H_OPTIONS,
    N_OPTIONS,
    Choice,
    IntRange,
    MultiChoice,
    check_url_params,
    fmt_eps,
    int_input,
    radio,
    segmented,
    select_slider,
)
from ui.safety import guarded

EPS = Choice("eps", EPS_OPTIONS, 1.0, "Privacy budget ε", fmt_eps)
N = Choice("n", N_OPTIONS, 1000, "Patients in the trial (n)")
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = Choice("gamma_mode", ("paper", "free"), "paper", "γ",
              {"paper": "paper-tuned", "free": "free"}.get)
GAMMA = IntRange("gamma", 1, 1000, 75, "Regularization γ")
H = Choice("h", H_OPTIONS, 0.5, "Huber width h")
W_BOUND = IntRange("W", 5, 100, int(PAPER_W), "Weight bound W")
REPS = IntRange("reps", 20, 500, 200, "Repetitions")
SEED = IntRange("seed", 0, 10**6, 0, "Seed")
METRIC = Choice("metric", ("accuracy", "value", "concordance"), "accuracy", "Show",
                {"accuracy": "accuracy", "value": "value", "concordance": "agreement"}.get)
SCALE = Choice("scale", ("own", "paper"), "own", "Outcome scale",
               {"own": "own scale", "paper": "paper scale"}.get)
VARIANT = Choice("proxy", tuple(PROXY_VARIANTS), "same as the trial", "Public proxy D0", str)
N0 = Choice("n0", (200, 500, 1000, 2000, 5000), 1000, "Proxy size n0")

st.title("DP-OWL: what privacy costs a treatment rule")
st.markdown(
    "A randomized trial of two treatments, simulated as in the DP-wERM paper: four patient "
    "features, and a true best treatment that depends on them. Outcome weighted learning turns "
    "the trial into a rule *treat when intercept + Σ coef·x > 0*; DP-OWL releases that rule with "
    "ε-differential privacy by adding noise to its coefficients. Every curve is a Monte-Carlo "
    "mean over repeated trials with its 95% band."
)
st.caption(
    "Unit of privacy: one patient (one row). Neighbouring trials differ by replacing one "
    "patient. The guarantee is pure ε-DP (δ = 0) for the released coefficients."
)
check_url_params([EPS, N, COMPARE, MODE, GAMMA, H, W_BOUND, REPS, SEED, METRIC, SCALE, VARIANT, N0])


for spec in (MODE, METRIC, SCALE):
    st.session_state.setdefault(spec.key, spec.default)
st.session_state.setdefault("gamma", GAMMA.default)


def use_gamma(value):
    st.session_state["gamma_mode"] = "free"
    st.session_state["gamma"] = int(value)


@st.fragment
@guarded("The DP-OWL study")
def study():
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            eps = select_slider(EPS, help="Smaller ε means more noise and stronger privacy.")
            n = select_slider(N)
        with right:
            mode = segmented(MODE, help="Paper-tuned: the authors' Algorithm 2 choice for the "
                                        "nearest (ε, n) cell.")
            gamma = st.slider(GAMMA.label, GAMMA.low, GAMMA.high, key="gamma", bind="query-params",
                              disabled=mode == "paper",
                              help="Larger γ means a smaller, smoother rule and less noise.")
            compare = st.multiselect(COMPARE.label, N_OPTIONS, default=list(COMPARE.default),
                                     key="compare", bind="query-params")
        with st.expander("Simulation settings: h, W, repetitions, seed"):
            c1, c2, c3, c4 = st.columns(4)
            with c1:
                h = select_slider(H, help="Width of the Huber smoothing of the hinge loss.")
            with c2:
                W = int_input(W_BOUND, help="Public bound on benefit / propensity; larger weights are clipped. The authors use 30.")
            with c3:
                reps = int_input(REPS, step=20, help="Simulated trials per setting.")
            with c4:
                seed = int_input(SEED, help="Same seed, same simulated trials: a link reproduces the view.")
    gamma_used = paper_gamma(eps, n) if mode == "paper" else gamma
    st.caption(f"γ used at this setting: **{gamma_used:g}**"
               + (" (paper-tuned; the slider is ignored)" if mode == "paper" else ""))

    ns = sorted(set(compare) | {n})
    bar = st.progress(0.0, text="Simulating…")
    results = compute.sweeps(ns, mode, gamma, h, W, reps, seed,
                             progress=lambda f, m: bar.progress(f, text=f"Simulated n = {m}"))
    bar.empty()
    runs, summary, refs = results[n]
    runs_here = runs[runs.epsilon == eps]
    all_summary = compute.stack_summaries(results)
    here, nonprivate = compute.cell(summary, eps), compute.cell(summary, math.inf)

    metric_cols = st.columns(4)
    metric_cols[0].metric("Accuracy (best treatment)", f"{here.accuracy_mean:.1f}%",
                          f"{here.accuracy_mean - nonprivate.accuracy_mean:+.1f} pts vs non-private")
    value_key = "value" if st.session_state["scale"] == "own" else "value_paper"  # radio below
    metric_cols[1].metric("Value of the rule", f"{here[value_key + '_mean']:.2f}",
                          f"{here[value_key + '_mean'] - nonprivate[value_key + '_mean']:+.2f} vs non-private")
    metric_cols[2].metric("Agrees with the non-private rule", f"{here.concordance_mean:.1f}%")
    metric_cols[3].metric("Noise radius (mean)", f"{runs_here.noise_norm.mean():.3g}",
                          help="Length of the noise vector added to the scaled coefficients.")
    scale_note = "on the outcome's own scale" if value_key == "value" else "on the authors' test-shifted scale"
    st.info(explain.clinical_summary(eps, n, here.concordance_mean, here[value_key + "_mean"],
                                     nonprivate[value_key + "_mean"], scale_note)
            + " " + explain.attacker_sentence(eps), icon=":material/groups:")

    shown = segmented(METRIC)
    scale = radio(SCALE, help="Own scale: the outcome as measured. Paper scale: the authors shift "
                              "each test set's outcomes by its own minimum, which adds a constant.")
    metric = ("value" if scale == "own" else "value_paper") if shown == "value" else shown
    references = None
    if shown == "value":
        suffix = "" if scale == "own" else "_paper"
        references = {k: float(refs[k + suffix].mean()) for k in ("oracle", "treat_all", "treat_none")}

    a, b = st.columns(2)
    with a:
        st.plotly_chart(charts.curves_vs_epsilon(all_summary, metric, ns, eps, references),
                        width="stretch", key="vs_eps")
        st.caption("Each band is one trial size. Moving right (larger ε, less privacy) the private "
                   "rule climbs to its non-private level (dotted, same colour); more patients get "
                   "there at a smaller ε.")
    with b:
        st.plotly_chart(charts.curve_vs_n(all_summary, metric, eps, references), width="stretch",
                        key="vs_n")
        st.caption("At a fixed ε the noise, of size 2W/(γε), does not grow with n but the signal "
                   "does: more patients outweigh the penalty γ‖θ‖²/2, the coefficients grow, and "
                   "the same noise flips fewer recommendations.")

    c, d = st.columns(2)
    with c:
        base = None if math.isinf(eps) else runs[np.isinf(runs.epsilon)][metric]
        st.plotly_chart(charts.distribution(runs_here[metric], base, metric, eps), width="stretch",
                        key="dist")
        st.caption("Each bar counts the simulated trials whose rule scored in that range. Privacy "
                   "widens the spread: the mean hides how often a private rule is poor.")
    example = compute.example_rule(n, eps, mode, gamma, h, W, seed)
    with d:
        same = example["nonprivate_same_gamma"] if example["gamma"] != example["gamma_ref"] else None
        st.plotly_chart(charts.coefficients(example["names"], example["nonprivate"], example["private"],
                                            eps, same, (example["gamma_ref"], example["gamma"])),
                        width="stretch", key="coef")
        agree = example["agreement"]
        p_text = f"{agree['p_value']:.1e}" if agree["p_value"] >= 1e-300 else "< 1e-300"
        st.caption(f"One simulated trial; the rule treats when intercept + Σ coef·x > 0. On 5000 new patients this private rule agrees with the "
                   f"non-private one for {100 * agree['concordance']:.1f}% (Cohen's κ = "
                   f"{agree['kappa']:.2f}; Fisher's exact one-sided p = {p_text} for agreement "
                   "beyond chance).")
    d_ = len(example["theta_hat"])
    radius = d_ * example["sensitivity"] / eps if math.isfinite(eps) else None
    st.plotly_chart(charts.noise_vector(example["theta_hat"], example["noise"], expected_radius=radius),
                    width="stretch", key="noise")
    st.caption(f"The exact minimiser θ̂ is moved by a random vector whose length is Gamma(d = {d_}, "
               f"rate ε/Δ) with Δ = 2W/γ = {example['sensitivity']:.3g}, and whose direction is "
               "uniform. The picture shows two of its five coordinates.")
    tuning_panel(n, eps, h, W)


def tuning_panel(n, eps, h, W):
    """Algorithm 2, run on request for the current (n, ε): tuning is too slow for every slider move."""
    st.subheader("Choose γ without spending privacy: Algorithm 2")
    st.markdown(
        "γ trades two errors: small γ lets the rule fit the data but makes the noise (∝ 1/γ) "
        "large; large γ shrinks the noise but flattens the rule. Algorithm 2 tunes γ for the "
        "target (n, ε) on an independent public dataset D0, so no privacy is spent. D0 may be "
        "imperfect: try a proxy that differs from the trial."
    )
    if math.isinf(eps):
        st.caption("Without privacy the best γ is simply the smallest; pick a finite ε to tune.")
        return
    c1, c2, c3 = st.columns([2, 1, 1])
    with c1:
        variant = st.selectbox(VARIANT.label, VARIANT.options, key="proxy", bind="query-params",
                               format_func=VARIANT.fmt)
    with c2:
        n0 = select_slider(N0)
    with c3:
        reps = st.number_input("Repeats r per γ", 10, 200, 40, step=10, key="tune_reps")
    request = (n, eps, variant, n0, reps, h, W)
    if st.button(f"Run Algorithm 2 for n = {n}, ε = {fmt_eps(eps)}", key="run_tuning"):
        st.session_state["tuning_request"] = request
    if st.session_state.get("tuning_request") != request:
        st.caption("Press the button to tune γ for the current settings (about a second).")
        return
    with st.spinner(f"Tuning γ for n = {n}, ε = {fmt_eps(eps)}…"):
        curve, best = compute.gamma_tuning(*request, seed=0)
    table_gamma = paper_gamma(eps, n)
    st.plotly_chart(charts.gamma_curve(curve, best, "value", table_gamma), width="stretch",
                    key="gamma_curve")
    st.caption(f"Mean validation value of {reps} private fits per γ, each on n = {n} rows drawn "
               f"from D0 ({variant}, n0 = {n0}); the authors' table says γ = {table_gamma:g} for "
               "the nearest cell. A flat top means many γ are about as good.")
    st.button(f"Use γ = {best:g} in the study above", on_click=use_gamma, args=(best,),
              type="primary", key="use_gamma")


study()
