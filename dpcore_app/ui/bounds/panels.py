"""The theory-bounds page's panels: the settings, the verdict, DP-wERM's terms, the sample
complexity and private CVaR's rates, each with its downloads and formulas."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from dpcore_app.ui.bounds import compute, explain
from dpcore_app.ui.bounds.controls import (
    ALPHA,
    DIM,
    EPS,
    FORM,
    GAMMA,
    MODE,
    PRESETS,
    RHO,
    SEED,
    STATE,
    TAU,
    C,
    G,
    H,
    N,
    W,
)
from dpcore_app.ui.common import downloads, frames
from dpcore_app.ui.common.controls import details, row
from dpcore_app.ui.common.figures import show
from dpcore_app.ui.common.presets import presets_above

#: The page's setting by name: ``n``, ``eps``, ``gamma`` (the γ in use), ``h``, ``W``, ``C``, ``rho``.
Setting = Mapping[str, Any]
#: Each form's terms at the setting: {form: {T1, T2, T3, G, total}} (:func:`compute.terms`).
Terms = Mapping[str, Mapping[str, float]]


def settings_panel() -> tuple[Setting, float, int]:
    """Presets and the controls; returns the setting, the generalization term G and the seed."""
    with presets_above(PRESETS, STATE, key=lambda i, name: f"preset_{name}"):
        eps, n = row(EPS, N)
        left, right = st.columns([1, 3])
        with left:
            mode = MODE.widget()
        with right:
            gamma = (
                GAMMA.widget() if mode == "free" else GAMMA.default
            )  # shown only when it is used
        with st.expander("More settings: h, W, C, ρ, G, seed"):
            h, w, c, rho = row(H, W, C, RHO)
            g, seed = row(G, SEED)
    s = dict(n=n, eps=eps, gamma=compute.gamma_used(mode, gamma, eps, n), h=h, W=w, C=c, rho=rho)
    st.caption(
        f"γ in use: **{s['gamma']:g}** (λ = γ/n = {s['gamma'] / n:.3g} for the re-derived form, "
        f"2γ/n = {2 * s['gamma'] / n:.3g} for the transcribed one)"
        + (
            " — the authors' tuned value for the nearest (ε, n) of their table"
            if mode == "paper"
            else ""
        )
    )
    return s, g, seed


#: The heading of the verdict in full, below the charts (``/bounds#verdict``).
VERDICT_ANCHOR = "verdict"
STATUS_SHOWN = {"holds": st.success, "unclear": st.info, "violated": st.error}


#: Each form's coverage at the setting and its judgement: {form: (coverage, status, sentence)}.
Coverage = Mapping[str, tuple[Mapping[str, float], str, str]]


def coverage(s: Setting, m: compute.Measured) -> Coverage:
    """How often each form of the bound held (:func:`compute.coverages`) and what that says
    (:func:`explain.coverage_sentence`), once per run for the verdict and its full form."""
    return {
        form: (cov, *explain.coverage_sentence(form, cov, s["rho"], s["eps"]))
        for form, cov in compute.coverages(m.here, s["eps"]).items()
    }


def verdict_panel(s: Setting, terms: Terms, m: compute.Measured, cover: Coverage) -> None:
    """The verdict in one line, coloured by whether the re-derived bound held (``cover``:
    :func:`coverage`)."""
    excess = m.excess("re-derived")
    cov, status, _ = cover["re-derived"]
    q = float(excess.max() if math.isinf(s["eps"]) else excess.quantile(1 - s["rho"]))
    STATUS_SHOWN[status](
        explain.headline(s["eps"], terms["re-derived"], q, s["rho"], status, cov)
        + f" [The verdict in full](#{VERDICT_ANCHOR})",
        icon=":material/balance:",
    )


def verdict_detail(s: Setting, terms: Terms, m: compute.Measured, cover: Coverage) -> None:
    """The verdict in full, under its heading: the re-derived bound's terms against the
    measurement, then how often each form held, coloured by that (``cover``:
    :func:`coverage`)."""
    st.subheader("The verdict in full", anchor=VERDICT_ANCHOR)
    excess = m.excess("re-derived")
    st.info(
        explain.bound_verdict(
            s["eps"],
            terms["re-derived"],
            float(excess.quantile(1 - s["rho"])),
            s["rho"],
            float(excess.max()),
            compute.TRIALS,
        ),
        icon=":material/balance:",
    )
    for _, status, sentence in cover.values():
        STATUS_SHOWN[status](sentence)


def werm_panel(s: Setting, G: float, m: compute.Measured, terms: Terms) -> None:
    """The terms against γ and h, stacked, with the measured excess risk overlaid."""
    st.subheader("DP-wERM: Theorem 10, term by term", anchor=explain.TERMS_ANCHOR)
    form = FORM.widget()
    t = terms[form]
    best = compute.minimisers(
        s["n"], s["eps"], s["gamma"], s["h"], s["W"], s["C"], s["rho"], m.norms
    )
    a, b = st.columns(2)
    for col, over, current, pick, key in (
        (a, "gamma", s["gamma"], best[form]["gamma"], "vs_gamma"),
        (b, "h", s["h"], best[form]["h"], "vs_h"),
    ):
        curve = compute.terms_curve(
            s["n"],
            s["eps"],
            s["gamma"],
            s["h"],
            s["W"],
            s["C"],
            s["rho"],
            m.norms,
            G,
            over,
            reach=pick,
        )
        measured = m.curve(over, form)
        with col:
            show(
                compute.figure(
                    "bound_terms",
                    curve,
                    measured,
                    over,
                    form,
                    current,
                    pick,
                    s["rho"],
                    best["paper"] if over == "gamma" else None,
                ),
                key=key,
                numbers="page",
            )
            st.markdown(explain.terms_reading(curve, measured, over, form, pick, s["rho"]))
            both = curve.merge(measured, on=over, how="outer").sort_values(over)
            st.download_button(
                f"Download the numbers (CSV, against {over})",
                functools.partial(downloads.csv, both),
                f"bounds_vs_{over}.csv",
                "text/csv",
                key=f"dl_{key}",
            )
    cols = st.columns(5)  # under the charts: the numbers at the current γ and h
    for col, (label, value) in zip(
        cols,
        (
            ("T1 regularization", t["T1"]),
            ("T2 privacy noise", t["T2"]),
            ("T3 Huber-to-hinge", t["T3"]),
            (f"Bound ({explain.FORM_NAMES[form]})", t["total"]),
            compute.measured_card(s["eps"], s["rho"], m.excess(form)),
        ),
    ):
        col.metric(label, f"{value:.3g}")
    st.caption(explain.terms_caption(form))
    joint = pd.DataFrame(
        [
            {
                "form": f,
                "best γ at this h": v["gamma"],
                "best h at this γ": v["h"],
                "best γ jointly": v["joint"][0],
                "best h jointly": v["joint"][1],
            }
            for f, v in best.items()
            if f != "paper"
        ]
    ).set_index("form")
    box = details("Bound-minimising γ and h, sensitivities and conventions", "bounds_details")
    if not box.open:
        return
    with box:
        st.dataframe(joint, width="stretch")
        st.caption(
            f"Against the authors' Algorithm 2 picks at n = {s['n']} (h = {s['h']:g}, same θ₀):"
        )
        st.dataframe(
            compute.gamma_table(s["n"], s["h"], s["W"], s["C"], s["rho"], m.norms), width="stretch"
        )
        sens = compute.sensitivities(s["W"], s["gamma"], s["C"])
        st.markdown(
            f"The paper's table picks γ = {best['paper']:g} for the nearest (ε, n) cell "
            f"(Algorithm 2 on public data; run it on the DP-OWL page). Sensitivity "
            f"(C + 2W)/γ = {sens['weighted']:.3g} against {sens['unweighted']:.3g} for "
            f"unweighted ERM. θ₀ here has ‖θ₀‖ = {m.norms['code']:.3g} at λ = γ/n and "
            f"{m.norms['stated']:.3g} at λ = 2γ/n (mean over "
            f"{compute.TRIALS} simulated trials; d = {compute.D}: four features and the "
            f"intercept). The release itself uses {sens['released']:.6g}, which adds the "
            "engine's solver slack 2·10⁻⁶/γ (a relative change of "
            f"{sens['released'] / sens['weighted'] - 1:.1g} that the bounds leave out)."
        )
        for tex, sentence in explain.WERM_FORMULAS:
            st.latex(tex)
            st.caption(sentence)


def sample_size_panel(s: Setting, theta0_norm: float) -> None:
    """Corollary 12's patients needed against ε for a chosen α, its formula and download."""
    st.subheader("Sample complexity: patients needed for a target excess risk", anchor=False)
    alpha = ALPHA.widget()
    df = compute.sample_sizes(alpha, s["W"], s["C"], s["rho"], theta0_norm)
    show(compute.figure("sample_size", df, s["eps"], alpha), key="sample_size", numbers="page")
    tex, sentence = explain.SAMPLE_SIZE_FORMULA
    st.caption(
        sentence
        + " "
        + explain.sample_size_caption(df.epsilon.to_numpy(), df.regime.to_numpy())
        + " Both privacy terms fall like 1/ε; the statistical term does not depend on ε."
    )
    box = details("The formula: Corollary 12", "sample_size_formula")
    if box.open:
        with box:
            st.latex(tex)
    st.download_button(
        "Download the numbers (CSV)",
        lambda: downloads.csv(df),
        "sample_size.csv",
        "text/csv",
        key="dl_sample_size",
    )


def cvar_panel(s: Setting, seed: int) -> None:
    """Private CVaR's regime map and its rates against the Laplace plug-in's measured error."""
    st.subheader(
        "Private CVaR: where privacy is cheap, and the rates against measurement", anchor=False
    )
    tau, d = row(TAU, DIM)
    ns, taus, regime = compute.phase_grid(s["eps"], d)
    a, b = st.columns(2)
    with a:
        show(
            compute.figure("phase_diagram", ns, taus, regime, s["n"], tau, s["eps"], d),
            key="phase",
            numbers="page",
        )
        st.caption(explain.phase_caption(s["eps"], d))
        grid = pd.DataFrame(regime, index=pd.Index(taus, name="tau"), columns=ns)
        st.download_button(
            "Download the regime grid (CSV)",
            downloads.csv(grid, index=True),
            "cvar_regimes.csv",
            "text/csv",
            key="dl_phase",
        )
    rates = compute.cvar_rates(tau, s["eps"], d)
    measured = compute.cvar_measured(tau, s["eps"], seed)
    with b:
        show(  # every ε of the grid as a step of the chart's own slider
            compute.rate_steps_figure(tau, d, seed, s["eps"]),
            key="rates",
            numbers="page",
        )
        frames.follow("rates", EPS)  # a drag on the chart's slider sets the page's ε
        lo, hi = compute.rate_ratio(measured, tau, s["eps"])
        st.caption(
            "Lines: the papers' rates with constants set to 1 (so only their shape is "
            f"meaningful); red band: the Laplace plug-in's mean error over {compute.CVAR_REPS} "
            "samples of the page's two-point law (B with probability τ/2) per n. "
            + explain.rate_ratio_sentence(lo, hi, s["eps"])
        )
        both = pd.concat([rates.assign(source="rate"), measured.assign(source="measured")])
        st.download_button(
            "Download the numbers (CSV)",
            lambda: downloads.csv(both),
            "cvar_rates.csv",
            "text/csv",
            key="dl_rates",
        )
    box = details("The formulas behind these rates", "cvar_formulas")
    if box.open:
        with box:
            for tex, sentence in explain.CVAR_FORMULAS:
                st.latex(tex)
                st.caption(sentence)
