"""The CVaR page's one-page offline handout, as one self-contained call at the end of the page:
it reads the controls' current values, the page's cached sweep, and offers the download."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from dpcore_app.ui.common import address, handout
from dpcore_app.ui.common.explain import privacy_statement
from dpcore_app.ui.common.link import value_of
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.cvar import charts, compute

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dpcore_app.ui.common.controls import Control


@guarded("The handout")
def download(controls: Iterable[Control]) -> None:
    """A download button for the current (ε, n, τ, loss, B) view; nothing computed until clicked
    beyond reading the cached sweep."""
    v = {c.key: value_of(c) for c in controls}
    work = compute.workload(v["reps"])
    summary = compute.scalar_summary(v["loss"], v["B"], work.reps, v["seed"])
    view_link = address.link("cvar")  # now: the download's callback has no address to read
    st.download_button(
        "Handout of this view (HTML, offline)",
        lambda: handout.page(_report(v, work.reps, summary, view_link)),
        "cvar_handout.html",
        "text/html",
        on_click="ignore",
        key="cvar_handout",
        icon=":material/print:",
    )


def _report(v, reps, summary, view_link):
    eps, n, tau = v["eps"], v["n"], v["tau"]
    here = compute.cell(summary, n, tau, eps)
    curve = compute.curve(summary, "epsilon", n, tau, eps)
    verdict = (
        f"With {n} patients and τ = {tau:g} (the worst {tau:.0%}), the "
        + ("non-private" if math.isinf(eps) else f"ε = {eps:g} private")
        + f" estimate of the tail's mean loss is off by {here.total_mean:.3g} on average (95% "
        f"interval {here.total_lo:.3g}–{here.total_hi:.3g}, loss scale 0 to {v['B']:g}); "
        f"sampling error alone: {here.statistical_mean:.3g}."
    )
    ok = curve[curve.privacy_mean <= curve.statistical_mean]
    answer = (
        f"The smallest ε on the grid at which privacy adds no more error than sampling (for "
        f"n = {n}, τ = {tau:g}) is ε = {ok.epsilon.min():g}."
        if len(ok)
        else f"At no ε on the grid up to 1000 does privacy add less error than sampling for n = {n}, τ = {tau:g}."
    )
    cards = [
        (
            "Error of the private tail mean",
            f"{here.total_mean:.3g}",
            f"95% interval {here.total_lo:.3g}–{here.total_hi:.3g}",
        ),
        (
            "of which privacy",
            f"{here.privacy_mean:.3g}",
            f"εnτ = {n * tau * eps:g}" if np.isfinite(eps) else "no noise",
        ),
        (
            "Sampling error",
            f"{here.statistical_mean:.3g}",
            f"nτ = {n * tau:g} patients in the tail",
        ),
    ]
    settings = {
        "page": "Private CVaR",
        "epsilon": f"{eps:g}",
        "n": n,
        "tau": tau,
        "loss": v["loss"],
        "B": v["B"],
        "repetitions": reps,
        "seed": v["seed"],
        "link": view_link,
    }
    table = pd.DataFrame(
        {"ε": [f"{x:g}" for x in curve.epsilon]}
        | {
            name: [f"{x:.2g}" for x in curve[column]]
            for column, name in (
                ("total_mean", "error"),
                ("total_lo", "95% from"),
                ("total_hi", "95% to"),
                ("privacy_mean", "privacy part"),
                ("statistical_mean", "sampling part"),
            )
        }
    )
    eps_words = (
        "without privacy" if math.isinf(eps) else f"with ε-differential privacy at ε = {eps:g}"
    )
    scenario = (
        f"Simulated losses of n = {n} patients, drawn from the {compute.KIND_LABELS[v['loss']]} law with "
        f"B = {v['B']:g} (every loss is clipped to [0, B], a bound fixed in advance), {reps} times (seed "
        f"{v['seed']}). The mean of the worst τ = {tau:g} share of losses (the tail's CVaR) is released "
        f"{eps_words} by the Laplace plug-in, and compared with its exact value."
    )
    figure = charts.error_curves(curve, "epsilon", eps, v["B"], eps)
    return handout.Report(
        "Private CVaR: the privacy price of tail risk",
        verdict,
        cards,
        answer,
        privacy_statement(eps, "the estimate") + " Pure ε-DP (δ = 0); unit of privacy: "
        "one patient.",
        settings["link"],
        settings,
        figure,
        table,
        scenario=scenario,
    )
