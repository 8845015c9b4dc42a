"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

import math

import numpy as np
import streamlit as st

from dpcore import expected_noise_radius
from ui import explain, tuning
from ui.charts import owl as charts
from ui.compute import owl as compute
from ui.compute.limits import cap_work
from ui.controls import Choice, IntRange, MultiChoice, check_link, rerun, row
from ui.grids import EPS_OPTIONS, H_OPTIONS, N_OPTIONS, fmt_eps, fmt_number
from ui.safety import guarded

EPS = Choice("eps", EPS_OPTIONS, 1.0, "Privacy budget ε", fmt_eps,
             help="How much one patient may change what is released. Smaller ε: more noise, stronger privacy.")
N = Choice("n", N_OPTIONS, 1000, "Patients in the trial (n)")
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = Choice("gamma_mode", ("paper", "free"), "paper", "γ", {"paper": "paper-tuned", "free": "fixed"}.get,
              kind="segmented", help="Paper-tuned: the authors' choice for each (ε, n). Fixed: one γ for "
                                     "every ε, the clean experiment where only the noise changes.")
GAMMA = IntRange("gamma", 1, 1000, 75, "Regularization γ", kind="slider",
                 help="How strongly the rule is pulled towards zero. Larger γ: less noise needed, blurrier rule.")
PREP = Choice("prep", ("public", "paper"), "public", "Outcome preprocessing",
              {"public": "public bounds", "paper": "authors' shift"}.get, kind="radio",
              help="Public bounds: outcomes clipped to a range fixed in advance, covered by the guarantee. "
                   "Authors' shift: each data set shifted by its own minimum, as in the paper's code; it "
                   "reads the data, so the guarantee does not cover it.")
H = Choice("h", H_OPTIONS, 0.5, "Huber width h", help="Width of the Huber smoothing of the hinge loss.")
W_BOUND = Choice("W", ("auto", 10, 20, 30, 48, 60, 100), "auto", "Weight bound W", fmt_number, kind="selectbox",
                 help="Public bound on benefit / propensity; larger weights are clipped. Auto: 48 with public "
                      "bounds (no clipping), the authors' 30 with their preprocessing.")
REPS = IntRange("reps", 20, 500, 200, "Repetitions", step=20, help="Simulated trials per setting.")
SEED = IntRange("seed", 0, 10**6, 0, "Seed", help="Same seed, same simulated trials: a link reproduces the view.")
METRIC = Choice("metric", ("accuracy", "value", "concordance"), "accuracy", "Show",
                {"accuracy": "accuracy", "value": "value", "concordance": "agreement"}.get, kind="segmented")
SCALE = Choice("scale", ("own", "paper"), "own", "Outcome scale", {"own": "own scale", "paper": "paper scale"}.get,
               kind="radio", help="Own scale: the outcome as measured. Paper scale: the authors shift each "
                                  "test set's outcomes by its own minimum, which adds a constant.")
CONTROLS = (EPS, N, COMPARE, MODE, GAMMA, PREP, H, W_BOUND, REPS, SEED, METRIC, SCALE, *tuning.CONTROLS)
PRESETS = {"Strong privacy (ε = 0.1)": {"eps": 0.1}, "Moderate (ε = 1)": {"eps": 1.0},
           "Weak (ε = 10)": {"eps": 10.0}, "Clean experiment: fixed γ = 75": {"gamma_mode": "free", "gamma": 75}}


def set_values(values, message=None):
    st.session_state.update(values)
    if message:
        st.toast(message, icon=":material/check:")


def presets_panel():
    for column, (label, values) in zip(st.columns(len(PRESETS)), PRESETS.items()):
        column.button(label, on_click=set_values, args=(values,), width="stretch")
    st.caption(explain.PRACTICE)


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
    right.caption(f"γ in use: **{g:g}**" + (" (the authors' tuned value for the nearest (ε, n) of their table)"
                                            if mode == "paper" else ""))
    return dict(eps=eps, n=n, compare=compare, mode=mode, gamma=gamma, prep=prep, h=h, W=W, reps=reps, seed=seed)


def headline_panel(s, here, best, runs_here):
    """The verdict, the metric cards with the gap split into its causes, the coverage caption."""
    eps, private = s["eps"], math.isfinite(s["eps"])
    st.success(explain.owl_verdict(eps, s["n"], here.accuracy_mean, best.accuracy_mean, here.accuracy_lo,
                                   here.accuracy_hi), icon=":material/medical_services:")
    vk = "value" if st.session_state.get("scale", SCALE.default) == "own" else "value_paper"
    cols = st.columns(3)
    for col, (label, m, unit, digits) in zip(cols, (("Accuracy (better treatment)", "accuracy", "pts", 1),
                                                   ("Value of the rule", vk, "", 2))):
        total, noise = here[f"{m}_mean"] - best[f"{m}_mean"], here[f"{m}_mean"] - here[f"{m}_same_gamma_mean"]
        col.metric(label, f"{here[f'{m}_mean']:.{digits}f}{'%' if m == 'accuracy' else ''}",
                   explain.gap_text(total, noise, total - noise, unit, digits) if private else None,
                   help=f"95% interval over {int(here.reps)} simulated trials: {here[f'{m}_lo']:.{digits}f} – "
                        f"{here[f'{m}_hi']:.{digits}f}. The change is against the best non-private rule.")
    if private:
        cols[2].metric("Agrees with the non-private rule", f"{here.concordance_mean:.1f}%",
                       help=f"95% interval: {here.concordance_lo:.1f} – {here.concordance_hi:.1f}%.")
    st.caption(explain.intervals(here, vk, private))
    outcome, W = compute.preprocessing(s["prep"], s["W"])
    st.caption(explain.coverage(s["prep"], W, outcome, float(runs_here.clipped_share.mean())))
    scale = "on the outcome's own scale" if vk == "value" else "on the authors' test-shifted scale"
    st.info(explain.clinical_summary(eps, s["n"], here.concordance_mean, here[vk + "_mean"],
                                     best[vk + "_mean"], scale) + " " + explain.attacker_sentence(eps),
            icon=":material/groups:")
    with st.expander("What the words mean"):
        st.markdown(explain.GLOSSARY)


def curves_panel(s, sizes, results, refs):
    shown = METRIC.widget()
    scale = SCALE.widget() if shown == "value" else "own"
    metric = ("value" if scale == "own" else "value_paper") if shown == "value" else shown
    suffix = "" if scale == "own" else "_paper"
    references = ({k: float(refs[k + suffix].mean()) for k in ("oracle", "treat_all", "treat_none")}
                  if shown == "value" else None)
    summary = compute.stack_summaries(results)
    a, b = st.columns(2)
    with a:
        st.plotly_chart(charts.curves_vs_epsilon(summary, metric, sizes, s["eps"], references),
                        width="stretch", key="vs_eps")
        st.caption(explain.eps_curve_caption(metric))
    with b:
        st.plotly_chart(charts.curve_vs_n(summary, metric, s["eps"], references), width="stretch", key="vs_n")
        st.caption(explain.n_curve_caption(s["eps"]))
    return metric, summary


def rule_panel(s, runs, metric):
    """The spread over repetitions, one example rule, and the statistician's details."""
    eps, private = s["eps"], math.isfinite(s["eps"])
    c, d = st.columns(2)
    with c:
        best = runs[np.isinf(runs.epsilon)][metric]
        st.plotly_chart(charts.distribution(runs[runs.epsilon == eps][metric] if private else None, best,
                                            metric, eps), width="stretch", key="dist")
        st.caption(explain.spread_caption(runs[runs.epsilon == eps][metric].std() if private else None,
                                          best.std()))
    ex = compute.example_rule(s["n"], eps, s["mode"], s["gamma"], s["h"], s["W"], s["seed"], s["prep"])
    with d:
        same = ex.nonprivate_same_gamma if ex.gamma != ex.gamma_ref and private else None
        st.plotly_chart(charts.coefficients(ex.names, ex.nonprivate, ex.private if private else None, eps,
                                            same, (ex.gamma_ref, ex.gamma)), width="stretch", key="coef")
        st.caption("One simulated trial; the rule treats when intercept + Σ coef·x > 0.")
    with st.expander("For statisticians: agreement test, noise geometry, formulas, the paper's γ table"):
        if private:
            st.markdown(explain.agreement_text(ex.agreement))
            radius = expected_noise_radius(len(ex.theta_hat), eps, ex.sensitivity, k=2)
            st.plotly_chart(charts.noise_vector(ex.theta_hat, ex.noise, radius), width="stretch", key="noise")
            st.caption(explain.noise_caption(len(ex.theta_hat), ex.sensitivity, radius))
        for formula, meaning in explain.OWL_FORMULAS:
            st.latex(formula)
            st.caption(meaning)
        st.dataframe(compute.paper_gamma_table(), width="stretch")
        st.caption("The authors' tuned γ for each trial size n (rows) and ε (columns).")


def downloads_panel(results, summary, s):
    runs = {n: r for n, (r, _, _) in results.items()}
    a, b, c = st.columns(3)
    a.download_button("Runs (CSV)", lambda: compute.stack_runs(runs).to_csv(index=False), "dp_owl_runs.csv",
                      "text/csv", on_click="ignore", width="stretch")
    b.download_button("Summary (CSV)", lambda: summary.to_csv(index=False), "dp_owl_summary.csv", "text/csv",
                      on_click="ignore", width="stretch")
    c.download_button("This view (CSV)", lambda: compute.view_numbers(summary, s["n"], s["eps"]).to_csv(index=False),
                      "dp_owl_view.csv", "text/csv", on_click="ignore", width="stretch")


@st.fragment
@guarded("The DP-OWL study")
def study():
    s = settings_panel()
    work = cap_work(s["reps"], set(s["compare"]) | {s["n"]}, keep=s["n"])
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    args = (s["mode"], s["gamma"], s["h"], s["W"], work.reps, s["seed"], s["prep"])
    bar = st.progress(0.0, text="Simulating…")
    refine = not compute.is_computed(work.sizes, *args) and work.reps > compute.QUICK_REPS
    if refine:  # a first estimate from fewer repetitions, shown while the full sweep runs
        quick = (*args[:4], compute.QUICK_REPS, *args[5:])
        show(s, work.sizes, compute.sweeps(work.sizes, *quick, progress=bar.progress))
        bar.progress(0.0, f"First estimate from {compute.QUICK_REPS} repetitions; refining to {work.reps}…")
    results = compute.sweeps(work.sizes, *args, progress=bar.progress, what="Refining" if refine else "Simulating")
    if refine:
        rerun()
    bar.empty()
    show(s, work.sizes, results)
    tuning.panel(s["n"], s["eps"], s["h"], s["W"], s["prep"], on_use=set_values)


def show(s, sizes, results):
    runs, summary, refs = results[s["n"]]
    here, best = compute.cell(summary, s["eps"]), compute.cell(summary, math.inf)
    headline_panel(s, here, best, runs[runs.epsilon == s["eps"]])
    metric, all_summary = curves_panel(s, sizes, results, refs)
    rule_panel(s, runs, metric)
    downloads_panel(results, all_summary, s)


st.title("DP-OWL: what privacy costs a treatment rule")
st.markdown(explain.OWL_INTRO)
check_link(CONTROLS)
presets_panel()
study()
