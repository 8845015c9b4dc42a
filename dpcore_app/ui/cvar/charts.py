"""Charts of the private CVaR page: pure functions from tables to plotly figures."""

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
    band,
    decade_ticks,
    layout,
    marker,
    summary_band,
)
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.frames import eps_steps

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from dpcore.cvar.learning_study import ClassStudy
    from dpcore.cvar.tail_risk import RuleTailRisk
    from dpcore_app.ui.common.figures import SharedFigure

X_AXES = {
    "epsilon": ("privacy budget ε (log scale)", "ε"),
    "n": ("records n (log scale)", "n"),
    "tau": ("tail level τ (log scale)", "τ"),
    "eps_n_tau": ("effective private tail size εnτ (log scale)", "εnτ"),
}
PARTS = (  # column, legend name, colour
    ("total", "total error |ρ̃ − ρ|", PALETTE[0]),
    ("privacy_exact", "privacy part E|ρ̃ − ρ̂| (exact)", PALETTE[5]),
    ("statistical", "statistical part |ρ̂ − ρ|", PALETTE[2]),
)


def _finish(fig: go.Figure, log_x: bool = True, log_y: bool = True) -> go.Figure:
    """Decade ticks written as powers of ten on log axes."""
    if log_x:
        decade_ticks(fig, "x")
    if log_y:
        decade_ticks(fig, "y")
    return fig


def _positive(values):
    """Log axes cannot show 0: zeros and negatives become gaps."""
    values = np.asarray(values, dtype=float)
    return np.where(values > 0, values, np.nan)


def _hover(name, symbol, digits=".3g"):
    return (
        f"{name}<br>{symbol} = %{{x:g}}<br>mean %{{y:{digits}}}<br>95% CI "
        f"%{{customdata[0]:{digits}}} – %{{customdata[1]:{digits}}}<extra></extra>"
    )


def _unproven(fig, x_max):
    """Shade ε > 1: the papers' rates and lower bounds are proven for ε ≤ 1 only."""
    if x_max > 1:
        fig.add_vrect(x0=1.0, x1=x_max, fillcolor="rgba(128, 128, 128, 0.10)", line_width=0)
        fig.add_annotation(
            x=0.0,
            xanchor="left",
            xshift=4,
            y=0.0,
            yref="paper",
            yanchor="bottom",
            text="ε > 1: rate not proven here",
            showarrow=False,
            font=FONT,
        )


def error_curves(
    rows: pd.DataFrame, x_axis: str, current: float | None, bound: float, eps: float | None = None
) -> go.Figure:
    """Mean error of the private CVaR with 95% bands, its two parts and the rate.

    ``rows`` come from ``dpcore_app.ui.cvar.compute.curve``; ``current`` is the value of the x-axis
    variable at the current setting (marked), or None.
    """
    if x_axis == "eps_n_tau":
        return collapse(rows, bound)
    title_x, symbol = X_AXES[x_axis]
    x = rows[x_axis].to_numpy(float)
    fig = go.Figure()
    for column, name, colour in PARTS:
        if column == "privacy_exact" and not np.any(rows["privacy_exact_mean"] > 0):
            continue  # non-private: no privacy part to draw
        band(
            fig,
            x,
            _positive(rows[f"{column}_mean"]),
            _positive(rows[f"{column}_lo"]),
            _positive(rows[f"{column}_hi"]),
            colour,
            name,
            _hover(name, symbol),
        )
    beyond = x_axis != "epsilon" and eps is not None and math.isfinite(eps) and eps > 1
    rate_name = "rate B·min{1, 1/√(nτ) + 1/(εnτ)}, up to constants" + (
        ", proven for ε ≤ 1 only" if beyond else ""
    )
    if x_axis == "epsilon":
        _unproven(fig, float(np.nanmax(x)))
    fig.add_trace(
        go.Scatter(
            x=x,
            y=rows["rate"],
            mode="lines",
            name=rate_name,
            line={"color": GREY, "dash": "dash", "width": 2},
            hovertemplate=f"rate<br>{symbol} = %{{x:g}}<br>%{{y:.3g}}<extra></extra>",
        )
    )
    if current is not None and math.isfinite(current):
        marker(fig, current, f"{symbol} = {current:g}", log_x=True)
    return _finish(
        layout(
            fig,
            f"Error of the private CVaR against {symbol}",
            title_x,
            f"mean absolute error (B = {bound:g})",
            height=460,
        )
    )


def error_curves_steps(
    curves: Mapping[float, pd.DataFrame], x_axis: str, n: int, tau: float, bound: float, eps: float
) -> SharedFigure:
    """:func:`error_curves` at ``eps`` carrying every ε of the grid as a step of its own slider,
    drawn in the browser (see :mod:`dpcore_app.ui.common.frames`).

    ``curves`` maps each ε of the grid, in order, to the rows :func:`error_curves` draws at that
    ε (``dpcore_app.ui.cvar.compute.curves``, read from the one sweep); each step is that chart
    with the x-axis' current value marked as at that ε (ε itself against ε, else n or τ). Not for
    "eps_n_tau": that chart is the same at every ε.
    """
    return eps_steps(
        {
            e: figure(
                error_curves, rows, x_axis, {"epsilon": e, "n": n, "tau": tau}[x_axis], bound, e
            )
            for e, rows in curves.items()
        },
        eps,
    )


def collapse(rows: pd.DataFrame, bound: float) -> go.Figure:
    """Privacy part against εnτ, one curve per τ: they fall on one line, B/(εnτ)."""
    fig = go.Figure()
    for k, (tau, part) in enumerate(rows.groupby("tau", sort=True)):
        colour = PALETTE[k % len(PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=part["eps_n_tau"],
                y=_positive(part["privacy_exact_mean"]),
                mode="lines+markers",
                name=f"τ = {tau:g}",
                line={"color": colour, "width": 2},
                marker={"size": 6},
                hovertemplate=f"τ = {tau:g}<br>εnτ = %{{x:g}}<br>privacy part %{{y:.3g}}<extra></extra>",
            )
        )
    x = np.geomspace(rows["eps_n_tau"].min(), rows["eps_n_tau"].max(), 60)
    fig.add_trace(
        go.Scatter(
            x=x,
            y=bound * np.minimum(1.0, 1.0 / x),
            mode="lines",
            name="B·min{1, 1/(εnτ)}",
            line={"color": GREY, "dash": "dash", "width": 2},
            hovertemplate="B·min{1, 1/(εnτ)}<br>%{y:.3g}<extra></extra>",
        )
    )
    fig = layout(
        fig,
        "Privacy part against εnτ: one curve for every τ",
        X_AXES["eps_n_tau"][0],
        f"privacy part E|ρ̃ − ρ̂| (B = {bound:g})",
        height=460,
    )
    fig.update_layout(hovermode="closest")
    return _finish(fig)


def selection_probabilities(study: ClassStudy, eps_index: int) -> go.Figure:
    """The exponential mechanism's exact probability of releasing each slope θ at one ε."""
    eps = study.epsilons[eps_index]
    fig = go.Figure(
        go.Bar(
            x=study.thetas,
            y=study.probs[eps_index],
            marker_color=PALETTE[0],
            name="selection probability",
            hovertemplate="θ = %{x:.2f}<br>P = %{y:.3f}<extra></extra>",
        )
    )
    best = float(study.thetas[np.argmin(study.rho_emp)])
    marker(fig, best, f"lowest CVaR θ = {best:.2f}", colour=PALETTE[2])
    marker(
        fig,
        study.mean_erm_theta,
        f"lowest mean loss θ = {study.mean_erm_theta:.2f}",
        colour=GREY,
        dash="dash",
        row=1,
    )
    label = "non-private" if math.isinf(eps) else f"ε = {eps:g}"
    fig = layout(
        fig,
        f"Which slope is released ({label})",
        "slope θ of the predictor θx",
        "probability of release",
    )
    fig.update_layout(hovermode="closest", margin={"t": 100})
    return fig


def class_excess(study: ClassStudy, current_eps: float) -> go.Figure:
    """Exact expected excess CVaR of the released slope against ε, with the bounds; excesses
    below 1e-4 B (the empirical one vanishes exponentially fast in ε) are left out."""
    finite = np.isfinite(study.epsilons)
    x = study.epsilons[finite]
    fig = go.Figure()
    for values, name, colour, dash in (
        (study.excess_pop, "excess population CVaR", PALETTE[0], "solid"),
        (study.excess_emp, "excess empirical CVaR", PALETTE[5], "solid"),
        (study.gap_bound, "bound 2Δ(ln M + 1)/ε", GREY, "dash"),
        (study.rate, "rate B·min{1, √(log 2M/(nτ)) + log 2M/(εnτ)}, up to constants", GREY, "dot"),
    ):
        shown = np.where(values[finite] >= 1e-4 * study.bound, values[finite], np.nan)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=shown,
                mode="lines+markers" if dash == "solid" else "lines",
                name=name,
                line={"color": colour, "dash": dash, "width": 2},
                hovertemplate=f"{name}<br>ε = %{{x:g}}<br>%{{y:.3g}}<extra></extra>",
            )
        )
    _unproven(fig, float(np.nanmax(x)))
    if math.isfinite(current_eps):
        marker(fig, current_eps, f"ε = {current_eps:g}", log_x=True)
    fig = layout(
        fig,
        "Excess CVaR of the released slope",
        "privacy budget ε (log scale)",
        "expected excess CVaR",
        height=460,
    )
    return _finish(fig)


def phase_transition(summary: pd.DataFrame, measured: float | None = None) -> go.Figure:
    """DP-GD's excess CVaR against εnτ/√d, one band per d, with the measured transition
    ``measured`` (where the excess halves, from the benchmark) and Corollary 6.6's scale 1."""
    fig = go.Figure()
    for k, (d, part) in enumerate(summary.groupby("d", sort=True)):
        name = f"d = {d}"
        summary_band(
            fig,
            part["ratio"].to_numpy(),
            part,
            "excess",
            PALETTE[k % len(PALETTE)],
            name,
            _hover(name, "εnτ/√d"),
        )
    fig.add_hline(y=0.0, line={"color": GREY, "width": 1})
    marker(fig, 1.0, "εnτ = √d (Cor. 6.6's scale)", colour=GREY, dash="dash", log_x=True)
    if measured is not None:
        marker(
            fig,
            measured,
            f"measured: halves at ≈ {measured:.0f}",
            colour=PALETTE[5],
            dash="dot",
            log_x=True,
            row=1,
        )
    fig = layout(
        fig,
        "DP-GD: excess CVaR against εnτ/√d",
        "εnτ/√d (log scale)",
        "excess test CVaR over non-private",
    )
    return _finish(fig, log_y=False)


def rule_tail(result: RuleTailRisk, eps_rule: float, eps_cvar: float) -> go.Figure:
    """Mean outcome of the worst-off τ share under each rule, and the private release."""
    tau = result.tau
    names = [
        "best possible rule",
        "non-private rule",
        f"private rule (ε₁ = {eps_rule:g})",
        "private rule, released" + ("" if math.isinf(eps_cvar) else f" (ε₂ = {eps_cvar:g})"),
    ]
    values = [result.best_rule, result.nonprivate_rule, result.private_rule, result.released]
    colours = [GREY, PALETTE[2], PALETTE[0], PALETTE[5]]
    errors = [0.0, 0.0, 0.0, result.halfwidth]
    fig = go.Figure(
        go.Scatter(
            x=values,
            y=names,
            mode="markers",
            marker={"color": colours, "size": 14},
            error_x={"type": "data", "array": errors, "visible": True, "color": INK, "width": 6},
            hovertemplate="%{y}: %{x:.2f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig = layout(
        fig, f"Worst-off {100 * tau:g}% of new patients", "mean outcome (points)", "", height=330
    )
    fig.update_layout(hovermode="closest", margin={"l": 10}, showlegend=False)
    fig.update_yaxes(automargin=True)
    return fig
