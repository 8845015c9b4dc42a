"""Charts of the Theory bounds page: bound terms against γ and h with the measured excess
risk, Corollary 12's sample size, the CVaR phase diagram and rate curves."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from dpcore_app.ui.common.charts import (
    FONT,
    GREY,
    INK,
    PALETTE,
    decade_ticks,
    layout,
    marker,
    rgba,
    summary_band,
)
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.frames import eps_steps

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from dpcore_app.ui.common.figures import SharedFigure

TERM_NAMES = {
    "T1": "T1 regularization",
    "T2": "T2 privacy noise",
    "T3": "T3 Huber-to-hinge",
    "G": "2G generalization",
}
TERM_COLOURS = {"T1": PALETTE[2], "T2": PALETTE[0], "T3": PALETTE[1], "G": PALETTE[3]}
FORM_LABELS = {"printed": "transcribed, λ = 2γ/n", "re-derived": "re-derived, λ = γ/n"}
REGIME_COLOURS = {
    "statistical": PALETTE[2],
    "privacy-dominated": PALETTE[0],
    "trivial": GREY,
    "privacy": PALETTE[0],
    "smoothing": PALETTE[1],
}


def bound_terms(
    curve: pd.DataFrame,
    measured: pd.DataFrame,
    over: str,
    form: str,
    current: float,
    best: float | None,
    rho: float,
    paper_gamma: float | None = None,
) -> go.Figure:
    """The terms of one form stacked against γ or h, the other form's total, and the measured
    excess risk (mean with 95% band, and its (1 - ρ) quantile) of the actual mechanism."""
    x = curve[over].to_numpy()
    fig = go.Figure()
    unit = "γ = %{x:.3g}" if over == "gamma" else "h = %{x:.3g}"
    for k in ("T1", "T2", "T3", "G"):
        y = curve[f"{k}_{form}"].to_numpy()
        if not np.any(y > 0):
            continue
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name=TERM_NAMES[k],
                stackgroup="terms",
                mode="lines",
                line={"width": 0.5, "color": TERM_COLOURS[k]},
                fillcolor=rgba(TERM_COLOURS[k], 0.45),
                hovertemplate=f"{unit}<br>%{{y:.3g}}<extra>{TERM_NAMES[k]}</extra>",
            )
        )
    other = "printed" if form == "re-derived" else "re-derived"
    name = FORM_LABELS[other]
    fig.add_trace(
        go.Scatter(
            x=x,
            y=curve[f"total_{other}"],
            mode="lines",
            name=f"{name} bound (total)",
            line={"color": INK, "dash": "dash", "width": 2},
            hovertemplate=f"{unit}<br>%{{y:.3g}}<extra>{name} bound</extra>",
        )
    )
    m = measured
    summary_band(
        fig,
        m[over].to_numpy(),
        m,
        "excess",
        PALETTE[5],
        "measured excess risk (mean, 95% band)",
        f"{unit}<br>mean %{{y:.3g}}<br>95% CI %{{customdata[0]:.3g}} – %{{customdata[1]:.3g}}<extra></extra>",
    )
    fig.add_trace(
        go.Scatter(
            x=m[over],
            y=m.excess_q,
            mode="markers",
            name=f"measured, {1 - rho:.0%} quantile",
            marker={"color": PALETTE[5], "symbol": "triangle-up", "size": 8},
            hovertemplate=f"{unit}<br>%{{y:.3g}}<extra>{1 - rho:.0%} quantile</extra>",
        )
    )
    symbol = "γ" if over == "gamma" else "h"
    marker(fig, current, f"current {symbol}", log_x=True)
    if best is not None and math.isfinite(best) and best > 0:
        marker(
            fig,
            best,
            f"bound-minimising {symbol} = {best:.3g}",
            colour=PALETTE[0],
            dash="dot",
            log_x=True,
            row=1,
        )
    if paper_gamma is not None:
        marker(
            fig,
            paper_gamma,
            f"paper table γ = {paper_gamma:g}",
            colour=GREY,
            dash="dash",
            log_x=True,
            row=2,
        )
    theorem = (
        "Theorem 11 (probability 1 − δ₀ − ρ)"
        if np.any(curve[f"G_{form}"].to_numpy() > 0)
        else "Theorem 10"
    )
    title = f"{theorem}, {FORM_LABELS[form]}, against {'γ' if over == 'gamma' else 'h'}"
    xtitle = "regularization γ (log scale)" if over == "gamma" else "Huber width h (log scale)"
    fig = layout(fig, title, xtitle, "excess weighted hinge risk (log scale)", height=440)
    decade_ticks(fig, "x")  # powers of ten only: no crowded 2, 5 labels, upright on a phone
    decade_ticks(fig, "y")
    return _below(fig, top=110)


def _below(fig: go.Figure, top: int = 70) -> go.Figure:
    """Room for the marker labels above the plot (the figure grows by it)."""
    fig.update_layout(margin={"t": top}, height=fig.layout.height + top - 70)
    return fig


def sample_size(df: pd.DataFrame, eps: float, alpha: float) -> go.Figure:
    """Corollary 12's n against ε: each term, their maximum, and the ruling term shaded."""
    fig = go.Figure()
    x = df.epsilon.to_numpy()
    edges = np.flatnonzero(df.regime.to_numpy()[1:] != df.regime.to_numpy()[:-1]) + 1
    starts, ends = np.r_[0, edges], np.r_[edges, len(x)]
    for a, b in zip(starts, ends):
        regime = df.regime.iloc[a]
        x0, x1 = x[a], x[b - 1] if b == len(x) else x[b]
        fig.add_vrect(x0=x0, x1=x1, fillcolor=rgba(REGIME_COLOURS[regime], 0.12), line_width=0)
        # On a log axis plotly places annotations at log10(x).
        fig.add_annotation(
            x=math.log10(x0),
            xanchor="left",
            xshift=4,
            y=0.0,
            yref="paper",
            yanchor="bottom",
            text=regime,
            showarrow=False,
            font=FONT,
        )
    for k in ("statistical", "privacy", "smoothing"):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=df[k],
                mode="lines",
                name=f"{k} term",
                line={"color": REGIME_COLOURS[k], "dash": "dot"},
                hovertemplate="ε = %{x:.3g}<br>n ≳ %{y:.3g}<extra>" + k + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=df.n,
            mode="lines",
            name="n needed (largest term)",
            line={"color": INK, "width": 3},
            hovertemplate="ε = %{x:.3g}<br>n ≳ %{y:.3g}<extra>n needed</extra>",
        )
    )
    if math.isfinite(eps):
        marker(fig, eps, f"current ε = {eps:g}", log_x=True)
    fig = layout(
        fig,
        f"Corollary 12: n needed for α = {alpha:g}",
        "privacy budget ε (log scale)",
        "patients n (log scale, up to constants)",
        height=420,
    )
    fig.update_xaxes(type="log", tickvals=[0.05, 0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000])
    decade_ticks(fig, "y")
    return _below(fig, top=90)


def phase_diagram(
    ns: np.ndarray,
    taus: np.ndarray,
    regime: np.ndarray,
    n: int,
    tau: float,
    eps: float,
    d: int,
) -> go.Figure:
    """The CVaR regime over (n, τ) at ε and d, the threshold ε n τ = √d and the current point."""
    colours = [REGIME_COLOURS[r] for r in ("statistical", "privacy-dominated", "trivial")]
    scale = [
        [0, colours[0]],
        [1 / 3, colours[0]],
        [1 / 3, colours[1]],
        [2 / 3, colours[1]],
        [2 / 3, colours[2]],
        [1, colours[2]],
    ]
    fig = go.Figure(
        go.Heatmap(
            x=ns,
            y=taus,
            z=regime,
            zmin=-0.5,
            zmax=2.5,
            colorscale=scale,
            opacity=0.55,
            showscale=False,
            customdata=np.array(["statistical", "privacy-dominated", "trivial"])[regime],
            hovertemplate="n = %{x:.3g}<br>τ = %{y:.3g}<br>%{customdata}<extra></extra>",
        )
    )
    if math.isfinite(eps):
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=np.sqrt(d) / (eps * ns),
                mode="lines",
                name="ε n τ = √d",
                line={"color": INK, "dash": "dash", "width": 2},
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[n],
            y=[tau],
            mode="markers",
            name="current (n, τ)",
            marker={"color": PALETTE[5], "size": 14, "symbol": "x", "line": {"width": 2}},
            hovertemplate="current: n = %{x}, τ = %{y}<extra></extra>",
        )
    )
    for name, colour in zip(("statistical", "privacy-dominated", "trivial"), colours):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                marker={"color": colour, "size": 12, "symbol": "square"},
            )
        )
    eps_text = "non-private" if not math.isfinite(eps) else f"ε = {eps:g}"
    fig = layout(
        fig,
        f"CVaR regimes, {eps_text}, d = {d}",
        "sample size n (log scale)",
        "tail fraction τ (log scale)",
        height=420,
    )
    decade_ticks(fig, "x").update_xaxes(range=[1, 6])
    decade_ticks(fig, "y").update_yaxes(range=[-3, 0])
    fig.update_layout(hovermode="closest")
    return _below(fig)


def cvar_rates(rates: pd.DataFrame, measured: pd.DataFrame, tau: float, eps: float) -> go.Figure:
    """Rates against n (B = 1, constants 1) with the Laplace plug-in's measured error."""
    fig = go.Figure()
    lines = (
        ("scalar", "scalar rate (Thm 3.4)", PALETTE[0], "solid"),
        ("finite_class_M10", "finite class, M = 10 (Thm 4.5)", PALETTE[3], "dot"),
        ("convex_lower", "convex lower rate (Cor 6.5)", PALETTE[1], "dash"),
    )
    beyond = math.isfinite(eps) and eps > 1  # the rates are proven for ε ≤ 1 only
    for k, name, colour, dash in lines:
        name = name + (", proven for ε ≤ 1 only" if beyond else "") + ", constants 1"
        fig.add_trace(
            go.Scatter(
                x=rates.n,
                y=rates[k],
                mode="lines",
                name=name,
                line={"color": colour, "dash": dash},
                hovertemplate="n = %{x:.3g}<br>%{y:.3g}<extra>" + name + "</extra>",
            )
        )
    m = measured
    hover = "n = %{x}<br>mean %{y:.3g}<br>95% CI %{customdata[0]:.3g} – %{customdata[1]:.3g}<extra></extra>"
    summary_band(
        fig,
        m.n.to_numpy(),
        m,
        "total",
        PALETTE[5],
        "measured error, Laplace plug-in",
        hover,
    )
    if (m.privacy_mean > 0).any():
        summary_band(
            fig,
            m.n.to_numpy(),
            m,
            "privacy",
            PALETTE[4],
            "its privacy part",
            hover,
        )
    eps_text = "non-private" if not math.isfinite(eps) else f"ε = {eps:g}"
    fig = layout(
        fig,
        f"CVaR error, τ = {tau:g}, {eps_text}",
        "sample size n (log scale)",
        "error (losses in [0, 1], log scale)",
        height=420,
    )
    decade_ticks(fig, "x")
    decade_ticks(fig, "y")
    return _below(fig)


def cvar_rates_steps(
    curves: Mapping[float, tuple[pd.DataFrame, pd.DataFrame]], tau: float, eps: float
) -> SharedFigure:
    """:func:`cvar_rates` at ``eps`` carrying every ε of the grid as a step of its own slider,
    drawn in the browser (see :mod:`dpcore_app.ui.common.frames`). ``curves`` maps each ε of the
    grid, in order, to its (rates, measured) (``dpcore_app.ui.bounds.compute.rate_curves``: the
    formulas, and the one sweep that measured every ε)."""
    return eps_steps(
        {e: figure(cvar_rates, rates, measured, tau, e) for e, (rates, measured) in curves.items()},
        eps,
    )
