"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

import math

import numpy as np
import streamlit as st

from dpcore import expected_noise_radius
from dpcore.paper import PAPER_W, paper_gamma
from dpcore.simulate import PROXY_VARIANTS
from ui import explain
from ui.charts import owl as charts
from ui.compute import owl as compute
from ui.compute.limits import cap_work
from ui.controls import Choice, IntRange, MultiChoice, check_link, row
from ui.grids import EPS_OPTIONS, H_OPTIONS, N_OPTIONS, fmt_eps
from ui.safety import guarded

EPS = Choice("eps", EPS_OPTIONS, 1.0, "Privacy budget ε", fmt_eps,
             help="Smaller ε means more noise and stronger privacy.")
N = Choice("n", N_OPTIONS, 1000, "Patients in the trial (n)")
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = Choice("gamma_mode", ("paper", "free"), "paper", "γ", {"paper": "paper-tuned", "free": "free"}.get,
              kind="segmented", help="Paper-tuned: the authors' Algorithm 2 choice for the nearest (ε, n) cell.")
GAMMA = IntRange("gamma", 1, 1000, 75, "Regularization γ", kind="slider",
                 help="Larger γ means a smaller, smoother rule and less noise.")
H = Choice("h", H_OPTIONS, 0.5, "Huber width h", help="Width of the Huber smoothing of the hinge loss.")
W_BOUND = IntRange("W", 5, 100, int(PAPER_W), "Weight bound W",
                   help="Public bound on benefit / propensity; larger weights are clipped. The authors use 30.")
REPS = IntRange("reps", 20, 500, 200, "Repetitions", step=20, help="Simulated trials per setting.")
SEED = IntRange("seed", 0, 10**6, 0, "Seed", help="Same seed, same simulated trials: a link reproduces the view.")
METRIC = Choice("metric", ("accuracy", "value", "concordance"), "accuracy", "Show",
                {"accuracy": "accuracy", "value": "value", "concordance": "agreement"}.get, kind="segmented")
SCALE = Choice("scale", ("own", "paper"), "own", "Outcome scale", {"own": "own scale", "paper": "paper scale"}.get,
               kind="radio", help="Own scale: the outcome as measured. Paper scale: the authors shift "
                                  "each test set's outcomes by its own minimum, which adds a constant.")
VARIANT = Choice("proxy", tuple(PROXY_VARIANTS), "same as the trial", "Public proxy D0", str, kind="selectbox")
N0 = Choice("n0", (200, 500, 1000, 2000, 5000), 1000, "Proxy size n0")
TUNE_REPS = IntRange("tune_reps", 10, 200, 40, "Repeats r per γ", step=10)
CONTROLS = (EPS, N, COMPARE, MODE, GAMMA, H, W_BOUND, REPS, SEED, METRIC, SCALE, VARIANT, N0, TUNE_REPS)


def use_gamma(value):
    st.session_state["gamma_mode"] = "free"
    st.session_state["gamma"] = int(value)


def settings_panel():
    """The controls of the study; returns their values."""
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            eps, n = EPS.widget(), N.widget()
        with right:
            mode = MODE.widget()
            gamma = GAMMA.widget(disabled=mode == "paper")
            compare = COMPARE.widget()
        with st.expander("Simulation settings: h, W, repetitions, seed"):
            h, W, reps, seed = row(H, W_BOUND, REPS, SEED)
    g = compute.gamma_used(mode, gamma, eps, n)
    st.caption(f"γ used at this setting: **{g:g}**" + (" (paper-tuned; the slider is ignored)" if mode == "paper" else ""))
    return dict(eps=eps, n=n, compare=compare, mode=mode, gamma=gamma, h=h, W=W, reps=reps, seed=seed)


def headline_panel(s, here, nonprivate, runs_here):
    """Metric cards and the plain-language summary at the current (n, ε)."""
    cols = st.columns(4)
    cols[0].metric("Accuracy (best treatment)", f"{here.accuracy_mean:.1f}%",
                   f"{here.accuracy_mean - nonprivate.accuracy_mean:+.1f} pts vs non-private")
    value_key = "value" if st.session_state.get("scale", SCALE.default) == "own" else "value_paper"
    cols[1].metric("Value of the rule", f"{here[value_key + '_mean']:.2f}",
                   f"{here[value_key + '_mean'] - nonprivate[value_key + '_mean']:+.2f} vs non-private")
    cols[2].metric("Agrees with the non-private rule", f"{here.concordance_mean:.1f}%")
    cols[3].metric("Noise radius (mean)", f"{runs_here.noise_norm.mean():.3g}",
                   help="Length of the noise vector added to the scaled coefficients.")
    scale_note = "on the outcome's own scale" if value_key == "value" else "on the authors' test-shifted scale"
    st.info(explain.clinical_summary(s["eps"], s["n"], here.concordance_mean, here[value_key + "_mean"],
                                     nonprivate[value_key + "_mean"], scale_note)
            + " " + explain.attacker_sentence(s["eps"]), icon=":material/groups:")


def curves_panel(s, ns, results, runs, refs):
    """Metric against ε and against n, the spread over repetitions."""
    shown, scale = METRIC.widget(), SCALE.widget()
    metric = ("value" if scale == "own" else "value_paper") if shown == "value" else shown
    references = None
    if shown == "value":
        suffix = "" if scale == "own" else "_paper"
        references = {k: float(refs[k + suffix].mean()) for k in ("oracle", "treat_all", "treat_none")}
    all_summary = compute.stack_summaries(results)
    a, b = st.columns(2)
    with a:
        st.plotly_chart(charts.curves_vs_epsilon(all_summary, metric, ns, s["eps"], references),
                        width="stretch", key="vs_eps")
        st.caption("Each band is one trial size. Moving right (larger ε, less privacy) the private "
                   "rule climbs to its non-private level (dotted, same colour); more patients get "
                   "there at a smaller ε.")
    with b:
        st.plotly_chart(charts.curve_vs_n(all_summary, metric, s["eps"], references), width="stretch",
                        key="vs_n")
        st.caption("At a fixed ε the noise, of size 2W/(γε), does not grow with n but the signal "
                   "does: more patients outweigh the penalty γ‖θ‖²/2, the coefficients grow, and "
                   "the same noise flips fewer recommendations.")
    return metric


def rule_panel(s, runs, metric):
    """The spread over repetitions, one example rule's coefficients and its noise vector."""
    eps = s["eps"]
    c, d = st.columns(2)
    with c:
        base = None if math.isinf(eps) else runs[np.isinf(runs.epsilon)][metric]
        st.plotly_chart(charts.distribution(runs[runs.epsilon == eps][metric], base, metric, eps),
                        width="stretch", key="dist")
        st.caption("Each bar counts the simulated trials whose rule scored in that range. Privacy "
                   "widens the spread: the mean hides how often a private rule is poor.")
    ex = compute.example_rule(s["n"], eps, s["mode"], s["gamma"], s["h"], s["W"], s["seed"])
    with d:
        same = ex.nonprivate_same_gamma if ex.gamma != ex.gamma_ref else None
        st.plotly_chart(charts.coefficients(ex.names, ex.nonprivate, ex.private, eps, same,
                                            (ex.gamma_ref, ex.gamma)), width="stretch", key="coef")
        agree = ex.agreement
        p_text = f"{agree['p_value']:.1e}" if agree["p_value"] >= 1e-300 else "< 1e-300"
        st.caption("One simulated trial; the rule treats when intercept + Σ coef·x > 0. On 5000 new "
                   f"patients this private rule agrees with the non-private one for "
                   f"{100 * agree['concordance']:.1f}% (Cohen's κ = {agree['kappa']:.2f}; Fisher's "
                   f"exact one-sided p = {p_text} for agreement beyond chance).")
    d_ = len(ex.theta_hat)
    st.plotly_chart(charts.noise_vector(ex.theta_hat, ex.noise,
                                        expected_radius=expected_noise_radius(d_, eps, ex.sensitivity)
                                        if math.isfinite(eps) else None),
                    width="stretch", key="noise")
    st.caption(f"The exact minimiser θ̂ is moved by a random vector whose length is Gamma(d = {d_}, "
               f"rate ε/Δ) with Δ = 2W/γ = {ex.sensitivity:.3g}, and whose direction is "
               "uniform. The picture shows two of its five coordinates.")


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
    variant, n0, reps = row(VARIANT, N0, TUNE_REPS, widths=[2, 1, 1])
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


@st.fragment
@guarded("The DP-OWL study")
def study():
    s = settings_panel()
    work = cap_work(s["reps"], set(s["compare"]) | {s["n"]}, keep=s["n"])
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    bar = st.progress(0.0, text="Simulating…")
    results = compute.sweeps(work.sizes, s["mode"], s["gamma"], s["h"], s["W"], work.reps, s["seed"],
                             progress=lambda f, text: bar.progress(f, text=text))
    bar.empty()
    runs, summary, refs = results[s["n"]]
    here, nonprivate = compute.cell(summary, s["eps"]), compute.cell(summary, math.inf)
    headline_panel(s, here, nonprivate, runs[runs.epsilon == s["eps"]])
    metric = curves_panel(s, work.sizes, results, runs, refs)
    rule_panel(s, runs, metric)
    tuning_panel(s["n"], s["eps"], s["h"], s["W"])


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
check_link(CONTROLS)
study()
