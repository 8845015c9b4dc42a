"""The private-CVaR page's panels: the settings, the verdict and its numbers, the error curves,
the statistician's formulas, the exponential mechanism, DP-GD's phase transition and a treatment
rule's tail risk, each with its downloads."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from dpcore_app.ui.common import downloads, frames
from dpcore_app.ui.common.controls import details, row
from dpcore_app.ui.common.figures import figure, show
from dpcore_app.ui.common.presets import presets_above
from dpcore_app.ui.cvar import charts, compute, explain
from dpcore_app.ui.cvar.controls import (
    BOUND,
    CLASS_M,
    DIMS,
    EPS,
    EPS_RULE,
    KIND,
    PRESETS,
    REPS,
    SEED,
    STATE,
    TAU,
    XAXIS,
    N,
)

if TYPE_CHECKING:
    import pandas as pd

#: The scalar study's setting by name: ``eps``, ``n``, ``tau``, ``kind``, ``bound``, ``reps``, ``seed``.
Setting = Mapping[str, Any]


def settings_panel() -> Setting:
    """Presets and the controls of the scalar study; returns their values."""
    with presets_above(PRESETS, STATE):
        eps, n, tau = row(EPS, N, TAU)
        kind, bound = row(KIND, BOUND)
        with st.expander("Simulation settings: repetitions, seed"):
            reps, seed = row(REPS, SEED)
    return dict(eps=eps, n=n, tau=tau, kind=kind, bound=bound, reps=reps, seed=seed)


def verdict_panel(s: Setting, here: pd.Series) -> None:
    """The verdict sentence and the regime label."""
    regime = compute.regime(s["n"], s["tau"], s["eps"])
    kind, lead = explain.cvar_judgement(
        regime,
        s["eps"],
        here.total_mean,
        here.statistical_mean,
        total_hi=here.total_hi,
        statistical_lo=here.statistical_lo,
    )
    getattr(st, kind)(
        lead
        + " "
        + explain.cvar_verdict(
            s["n"], s["tau"], s["eps"], here.total_mean, here.statistical_mean, s["bound"]
        ),
        icon=":material/groups:",
    )
    # the verdict's colour: a label never looks safer than the verdict beside it
    colours: dict[str, Literal["green", "orange", "red", "blue"]] = {
        "success": "green",
        "warning": "orange",
        "error": "red",
        "info": "blue",
    }
    st.badge(f"Indicative regime, up to constants: {regime}", color=colours[kind])


def numbers_panel(s: Setting, here: pd.Series) -> None:
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


def error_panel(s: Setting, summary: pd.DataFrame) -> None:
    """Error against ε, n, τ or εnτ, with the rate and the two parts; its download."""
    st.subheader("The error against ε, n, τ or εnτ", anchor=explain.ERRORS_ANCHOR)
    x_axis = XAXIS.widget()
    rows = compute.curve(summary, x_axis, s["n"], s["tau"], s["eps"])
    if x_axis == "eps_n_tau":  # the same chart at every ε: no slider of its own
        chart = figure(charts.error_curves, rows, x_axis, None, s["bound"], s["eps"])
    else:  # every ε of the grid as a step of the chart's own slider, drawn in the browser
        chart = figure(compute.error_steps, summary, x_axis, s["n"], s["tau"], s["bound"], s["eps"])
    show(chart, key="errors", numbers="page")
    if x_axis != "eps_n_tau":
        frames.follow("errors", EPS)  # a drag on the chart's slider sets the page's ε
    st.markdown(explain.error_reading(rows, x_axis))
    st.caption(explain.CVAR_CAPTIONS[x_axis])
    st.download_button(
        "Download these numbers (CSV)",
        lambda: downloads.csv(rows),
        f"cvar_error_vs_{x_axis}.csv",
        "text/csv",
        key="dl_errors",
    )


def formulas_panel(s: Setting) -> None:
    """The statistician's detail: the mechanism, its error and rate, and at a finite ε the
    instance-adaptive variant against the plug-in."""
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
            laplace, adaptive = table.total_mean  # its rows: the plug-in, then the variant
            se_laplace, se_adaptive = table.total_se
            st.markdown(
                explain.adaptive_sentence(
                    laplace, adaptive, se_laplace, se_adaptive, s["n"], s["tau"], s["eps"]
                )
            )


def class_panel(s: Setting) -> None:
    """The exponential mechanism over M slopes: probabilities and excess against ε."""
    st.subheader("Choosing among M predictors: the exponential mechanism")
    M = CLASS_M.widget()
    study = compute.finite_class(s["n"], s["tau"], M, s["bound"], s["seed"])
    i = list(study.epsilons).index(s["eps"])
    a, b = st.columns(2)
    show(figure(charts.selection_probabilities, study, i), key="em_probs", numbers="page", where=a)
    show(figure(charts.class_excess, study, s["eps"]), key="em_excess", numbers="page", where=b)
    st.caption(explain.class_caption(s["tau"]))
    per_theta, per_eps = compute.class_table(study)
    c, d = st.columns(2)
    c.download_button(
        "Probabilities per slope (CSV)",
        lambda: downloads.csv(per_theta),
        "cvar_em_probabilities.csv",
        "text/csv",
        key="dl_em_probs",
    )
    d.download_button(
        "Excess against ε (CSV)",
        lambda: downloads.csv(per_eps),
        "cvar_em_excess.csv",
        "text/csv",
        key="dl_em_excess",
    )


def convex_panel(s: Setting) -> None:
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
    show(
        figure(charts.phase_transition, summary, transition["benchmark"]),
        key="convex",
        numbers="page",
    )
    st.caption(explain.convex_caption(transition, request[0]))
    st.download_button(
        "Download these numbers (CSV)",
        downloads.csv(summary),
        "cvar_convex.csv",
        "text/csv",
        key="dl_convex",
    )


def rule_panel(s: Setting) -> None:
    """The bridge to the DP-OWL page: tail risk of a private treatment rule."""
    st.subheader("Tail risk of a treatment rule")
    st.markdown(
        "A DP-OWL rule is learned on the DP-wERM paper's simulated trial of n patients and "
        "released at ε₁; on new patients, the mean outcome of the worst-off τ share under "
        "it is released at ε₂ = the page's ε (outcomes bounded in [−12, 12], public)."
    )
    eps_rule = EPS_RULE.widget()
    res, spent, _ = compute.rule_tail(s["n"], s["tau"], eps_rule, s["eps"], s["seed"])
    show(charts.rule_tail(res, eps_rule, s["eps"]), key="rule_tail", numbers="page")
    st.caption(
        "Higher is better. Simulated patients, so the exact tail means are shown beside the "
        "release (a teaching view). The bar around the release holds at least 95% of releases at this ε₂."
    )
    st.info(
        explain.rule_tail_sentence(res, eps_rule, s["eps"], spent), icon=":material/medication:"
    )
    st.download_button(
        "Download these numbers (CSV)",
        downloads.csv(compute.rule_table(res, eps_rule, s["eps"], spent)),
        "cvar_rule_tail.csv",
        "text/csv",
        key="dl_rule",
    )
