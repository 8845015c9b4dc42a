"""Charts of the DP-OWL page."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from dpcore_app.ui.common.charts import FONT, GREY, INK, PALETTE, marker, summary_band
from dpcore_app.ui.common.charts import layout as _layout
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.frames import eps_steps

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pandas as pd
    from numpy.typing import ArrayLike

    from dpcore_app.ui.common.figures import SharedFigure
    from dpcore_app.ui.owl.decide_compute import Hit


def layout(fig: go.Figure, title: str, xtitle: str, ytitle: str, height: int = 400) -> go.Figure:
    """The shared layout at this page's height."""
    return _layout(fig, title, xtitle, ytitle, height)


NONPRIVATE = GREY  # one colour for everything non-private, on every chart

METRIC_LABELS = {
    "accuracy": "optimal-treatment accuracy (%)",
    "value": "value of the rule (outcome units)",
    "value_paper": "value of the rule (authors' shifted scale)",
    "concordance": "agreement with the non-private rule (%)",
}
REFERENCE_STYLE = {  # label, line dash, where the label sits (treat-all and treat-none are close)
    "oracle": ("oracle rule sign(f)", "dash", "top left"),
    "treat_all": ("treat everyone", "dot", "top right"),
    "treat_none": ("treat no one", "dashdot", "bottom right"),
}


def _reference_lines(fig, references, unit=""):
    digits = 1 if unit else 2
    for key, value in references.items():
        label, dash, position = REFERENCE_STYLE[key]
        fig.add_hline(
            y=value,
            line={"color": INK, "dash": dash, "width": 1},
            annotation_text=f"{label}: {value:.{digits}f}{unit}",
            annotation_position=position,
            annotation_font=FONT,
        )


def _chance_line(fig, metric, references=None):
    """Accuracy and agreement of a coin flip: 50%. On the accuracy view the rules that need no
    data (treat everyone, treat no one) land within a point of it, so one label names all three."""
    if metric in ("accuracy", "concordance"):
        text = "coin flip: 50%"
        if metric == "accuracy" and references:
            text += (
                f"<br>treat everyone: {references['treat_all']:.1f}%, "
                f"treat no one: {references['treat_none']:.1f}%"
            )
        fig.add_hline(
            y=50,
            line={"color": INK, "dash": "dashdot", "width": 1},
            annotation_text=text,
            annotation_position="bottom left",
            annotation_align="left",
            annotation_font=FONT,
        )


def _level(fig, x, y, name, dash, show, hover):
    """A non-private reference drawn across the ε axis, in the one non-private colour."""
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines",
            name=name,
            legendgroup=name,
            showlegend=show,
            line={"color": NONPRIVATE, "dash": dash, "width": 1.5},
            hovertemplate=hover,
        )
    )


def curves_vs_epsilon(
    summary: pd.DataFrame,
    metric: str,
    ns: Sequence[int],
    current_eps: float,
    references: Mapping[str, float] | None = None,
    *,
    mode: str = "paper",
    gamma: float | None = None,
    best: Mapping[int, float] | None = None,
    reference_ns: Sequence[int] | None = None,
    target: tuple[float, Hit | None] | None = None,
) -> go.Figure:
    """Mean metric against ε (log axis), one band per n, with the non-private references.

    Grey dotted: the best non-private rule (``best`` maps n to its level; by default the
    sweep's ε = ∞ row, which is the best rule in paper mode). Grey dashed: the non-private rule
    at the γ each ε uses (the fixed γ in fixed mode), so the gap splits into noise (band to
    dashed) and regularization (dashed to dotted). References are drawn for ``reference_ns``
    (default: every n). ``target`` = (accuracy threshold, the Hit of the ε named for publishing
    or None) adds the target line and marks the answer.
    """
    fig = go.Figure()
    unit = "%" if metric in ("accuracy", "concordance") else ""
    reference_ns = ns if reference_ns is None else reference_ns
    dashed = (
        "non-private at the same γ"
        if mode == "paper"
        else f"non-private at the fixed γ = {gamma:g}"
    )
    for k, n in enumerate(ns):
        colour = PALETTE[k % len(PALETTE)]
        rows = summary[(summary["n"] == n)].sort_values("epsilon")
        private = rows[np.isfinite(rows["epsilon"])]
        x = private["epsilon"].to_numpy()
        hover = (
            f"n = {n}<br>ε = %{{x:g}}<br>mean %{{y:.2f}}{unit}"
            f"<br>95% CI %{{customdata[0]:.2f}} – %{{customdata[1]:.2f}}<extra></extra>"
        )
        summary_band(
            fig,
            x,
            private,
            metric,
            colour,
            f"private, n = {n}",
            hover,
        )
        nonpriv = rows[np.isinf(rows["epsilon"])]
        if not len(nonpriv) or metric == "concordance" or n not in reference_ns:
            continue
        first = n == reference_ns[0]
        level = best[n] if best and n in best else float(nonpriv[f"{metric}_mean"].iloc[0])
        _level(
            fig,
            x,
            np.full(x.size, level),
            "best non-private rule",
            "dot",
            first,
            f"best non-private, n = {n}: %{{y:.2f}}{unit}<extra></extra>",
        )
        same = private[f"{metric}_same_gamma_mean"].to_numpy()
        if not np.allclose(same, level):
            _level(
                fig,
                x,
                same,
                dashed,
                "dash",
                first,
                f"{dashed}, n = {n}: %{{y:.2f}}{unit}<extra></extra>",
            )
    _chance_line(fig, metric, references)
    if references and metric != "accuracy":
        _reference_lines(fig, references, unit)
    if target is not None:
        threshold, hit = target
        fig.add_hline(
            y=threshold,
            line={"color": PALETTE[2], "dash": "longdash", "width": 1.5},
            annotation_text=f"target: {threshold:.1f}%",
            annotation_position="top left",
            annotation_font=FONT,
        )
        if hit is not None:
            fig.add_trace(
                go.Scatter(
                    x=[hit.at],
                    y=[hit.mean],
                    mode="markers",
                    name=f"ε to publish at: {hit.at:g}",
                    marker={"color": PALETTE[2], "size": 14, "symbol": "star"},
                    hovertemplate="smallest ε on the grid at which enough single releases "
                    "reach the target beyond Monte-Carlo doubt: %{x:g}<extra></extra>",
                )
            )
    if math.isfinite(current_eps):
        marker(fig, current_eps, f"ε = {current_eps:g}", log_x=True, colour=INK)
    fig.update_xaxes(
        type="log", tickvals=[0.1, 1, 10, 100, 1000], ticktext=["0.1", "1", "10", "100", "1000"]
    )
    title = f"{METRIC_LABELS[metric].split(' (')[0].capitalize()} against ε"
    return layout(fig, title, "privacy budget ε (log scale)", METRIC_LABELS[metric])


def curve_vs_n(
    summary: pd.DataFrame,
    metric: str,
    eps: float,
    references: Mapping[str, float] | None = None,
    nonprivate_name: str = "non-private",
) -> go.Figure:
    """Mean metric against n at one ε, with the non-private curve (named ``nonprivate_name``)."""
    fig = go.Figure()
    unit = "%" if metric in ("accuracy", "concordance") else ""
    settings = [(eps, f"private, ε = {eps:g}", PALETTE[0])] if math.isfinite(eps) else []
    if metric != "concordance":
        settings.append((math.inf, nonprivate_name, NONPRIVATE))
    for e, name, colour in settings:
        rows = summary[summary["epsilon"] == e].sort_values("n")
        hover = (
            f"{name}<br>n = %{{x}}<br>mean %{{y:.2f}}{unit}"
            f"<br>95% CI %{{customdata[0]:.2f}} – %{{customdata[1]:.2f}}<extra></extra>"
        )
        summary_band(
            fig,
            rows["n"].to_numpy(),
            rows,
            metric,
            colour,
            name,
            hover,
        )
    _chance_line(fig, metric, references)
    if references and metric != "accuracy":
        _reference_lines(fig, references, unit)
    title = f"{METRIC_LABELS[metric].split(' (')[0].capitalize()} against n"
    return layout(fig, title, "training size n (patients)", METRIC_LABELS[metric])


def curve_vs_n_steps(
    summary: pd.DataFrame,
    metric: str,
    eps: float,
    references: Mapping[str, float] | None = None,
    nonprivate_name: str = "non-private",
) -> SharedFigure:
    """:func:`curve_vs_n` at ``eps`` carrying every ε of the sweep's grid as a step of its own
    slider, drawn in the browser (see :mod:`dpcore_app.ui.common.frames`). Each step is the chart
    :func:`curve_vs_n` draws at that ε from the same summary (from the shared figure cache):
    no simulation beyond the sweep's."""
    grid = sorted(set(summary["epsilon"].tolist()))  # finite ε ascending, then non-private
    return eps_steps(
        {e: figure(curve_vs_n, summary, metric, e, references, nonprivate_name) for e in grid},
        eps,
    )


def distribution(
    private: ArrayLike | None,
    nonprivate: ArrayLike | None,
    metric: str,
    eps: float,
    nonprivate_name: str = "non-private",
) -> go.Figure:
    """Histogram over repetitions of the metric: private at ε (if any) against non-private."""
    fig = go.Figure()
    label = METRIC_LABELS[metric]
    for values, name, colour in (
        (private, f"private, ε = {eps:g}", PALETTE[0]),
        (nonprivate, nonprivate_name, NONPRIVATE),
    ):
        if values is None:
            continue
        fig.add_trace(
            go.Histogram(
                x=values,
                name=name,
                marker_color=colour,
                opacity=0.6,
                nbinsx=40,
                bingroup=1,
                hovertemplate=f"{name}<br>%{{x}}<br>%{{y}} repetitions<extra></extra>",
            )
        )
    fig.update_layout(barmode="overlay")
    fig = layout(fig, "Spread over repeated trials", label, "repetitions")
    fig.update_layout(hovermode="closest")
    return fig


def coefficients(
    names: Sequence[str],
    nonprivate: np.ndarray,
    private: np.ndarray | None = None,
    eps: float | None = None,
    same_gamma: np.ndarray | None = None,
    gammas: tuple[float, float] | None = None,
) -> go.Figure:
    """Grouped bars: the released rule against the non-private rule.

    With ``same_gamma`` (the exact minimiser at the private rule's γ, when the non-private
    rule uses another γ) a hatched bar separates what regularization does from what noise does.
    """
    g_ref, g = gammas if gammas else (None, None)
    bars = [(nonprivate, "non-private" + (f", γ = {g_ref:g}" if g_ref else ""), NONPRIVATE, "")]
    if same_gamma is not None:
        bars.append((same_gamma, f"non-private, γ = {g:g}", NONPRIVATE, "/"))
    if private is not None:
        bars.append(
            (private, f"private, ε = {eps:g}" + (f", γ = {g:g}" if g else ""), PALETTE[0], "")
        )
    fig = go.Figure()
    ticks = [n.replace(" ", "<br>") for n in names]  # stacked words: a phone need not tilt them
    for values, name, colour, pattern in bars:
        fig.add_trace(
            go.Bar(
                x=ticks,
                y=values,
                name=name,
                marker_color=colour,
                marker_pattern_shape=pattern,
                hovertemplate=f"%{{x}}: %{{y:.3f}}<extra>{name}</extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig = layout(
        fig, "The learned rule's coefficients", "term of the rule", "coefficient (per unit of x)"
    )
    fig.update_xaxes(tickangle=0)
    return fig


def noise_vector(
    theta_hat: np.ndarray,
    noise: np.ndarray,
    radius: float,
    dims: tuple[int, int] = (3, 4),
    names: Sequence[str] = ("intercept", "x1", "x2", "x3", "x4"),
) -> go.Figure:
    """The exact minimiser and the released point on two coordinates, the noise as an arrow.

    ``radius`` is the mean length of the noise's projection on these two coordinates, so the
    circle and the arrow describe the same thing.
    """
    i, j = dims
    start, end = theta_hat[[i, j]], (theta_hat + noise)[[i, j]]
    fig = go.Figure()
    t = np.linspace(0, 2 * np.pi, 120)
    fig.add_trace(
        go.Scatter(
            x=start[0] + radius * np.cos(t),
            y=start[1] + radius * np.sin(t),
            mode="lines",
            line={"color": GREY, "dash": "dot"},
            hoverinfo="skip",
            name="mean length of the noise on these two",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[start[0]],
            y=[start[1]],
            mode="markers",
            name="exact minimiser θ̂",
            marker={"color": NONPRIVATE, "size": 12, "symbol": "circle"},
            hovertemplate="θ̂: (%{x:.3f}, %{y:.3f})<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[end[0]],
            y=[end[1]],
            mode="markers",
            name="released θ* = θ̂ + noise",
            marker={"color": PALETTE[0], "size": 12, "symbol": "diamond"},
            hovertemplate="θ*: (%{x:.3f}, %{y:.3f})<extra></extra>",
        )
    )
    fig.add_annotation(
        x=end[0],
        y=end[1],
        ax=start[0],
        ay=start[1],
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=3,
        arrowwidth=2,
        arrowcolor=PALETTE[5],
    )
    reach = max(radius, float(np.max(np.abs(end - start)))) * 1.15
    fig.update_xaxes(range=[start[0] - reach, start[0] + reach])
    fig.update_yaxes(range=[start[1] - reach, start[1] + reach], scaleanchor="x", scaleratio=1)
    fig = layout(
        fig,
        "The noise on two coefficients",
        f"{names[i]} coefficient (scaled)",
        f"{names[j]} coefficient (scaled)",
    )
    fig.update_layout(hovermode="closest")
    return fig


def gamma_curve(
    curve: pd.DataFrame,
    best: float,
    metric: str,
    top: float | None = None,
    paper_value: float | None = None,
) -> go.Figure:
    """Algorithm 2's γ curve: mean validation metric with its 95% band, the pick marked."""
    fig = go.Figure()
    unit = "%" if metric == "accuracy" else ""
    summary_band(
        fig,
        curve["gamma"].to_numpy(),
        curve,
        metric,
        PALETTE[2],
        "proxy validation " + metric,
        f"γ = %{{x:g}}<br>mean %{{y:.3f}}{unit}<br>95% CI %{{customdata[0]:.3f}} – "
        "%{customdata[1]:.3f}<extra></extra>",
    )
    marker(fig, best, f"picked γ = {best:g}", colour=PALETTE[5])
    rows = 1
    if top is not None and top != best:
        marker(fig, top, f"best mean γ = {top:g}", colour=PALETTE[2], dash="dot", row=rows)
        rows += 1
    if paper_value is not None:
        marker(
            fig, paper_value, f"paper table γ = {paper_value:g}", colour=GREY, dash="dash", row=rows
        )
    label = METRIC_LABELS["value"] if metric == "value" else METRIC_LABELS["accuracy"]
    fig = layout(fig, "Algorithm 2: validation score against γ", "regularization γ", label)
    fig.update_layout(margin={"t": 70 + 16 * rows})
    return fig


def learners_vs_epsilon(
    summary: pd.DataFrame, current_eps: float, names: Mapping[str, str]
) -> go.Figure:
    """Share of patients given the better treatment against ε (log axis), one band per learner
    (``names`` maps the learner to its label, in the legend's order), each learner's
    non-private level dotted in its colour, and a coin flip's 50%."""
    fig = go.Figure()
    for k, (learner, label) in enumerate(names.items()):
        colour = PALETTE[k % len(PALETTE)]
        rows = summary[summary["learner"] == learner].sort_values("epsilon")
        private = rows[np.isfinite(rows["epsilon"])]
        x = private["epsilon"].to_numpy()
        summary_band(
            fig,
            x,
            private,
            "agreement",
            colour,
            label,
            f"{label}<br>ε = %{{x:g}}<br>mean %{{y:.1f}}%"
            "<br>95% CI %{customdata[0]:.1f} – %{customdata[1]:.1f}<extra></extra>",
        )
        nonpriv = rows[np.isinf(rows["epsilon"])]
        if len(nonpriv):
            level = float(nonpriv["agreement_mean"].iloc[0])
            fig.add_trace(
                go.Scatter(
                    x=x[[0, -1]],
                    y=[level, level],
                    mode="lines",
                    name=f"{label}, no noise",
                    legendgroup=label,
                    showlegend=False,
                    line={"color": colour, "dash": "dot", "width": 1.5},
                    hovertemplate=f"{label} without noise: %{{y:.1f}}%<extra></extra>",
                )
            )
    _chance_line(fig, "accuracy")
    if math.isfinite(current_eps):
        marker(fig, current_eps, f"ε = {current_eps:g}", log_x=True, colour=INK)
    fig.update_xaxes(
        type="log", tickvals=[0.1, 1, 10, 100, 1000], ticktext=["0.1", "1", "10", "100", "1000"]
    )
    return layout(
        fig,
        "Patients given the better treatment, three private learners",
        "privacy budget ε (log scale)",
        "patients given the better treatment (%)",
    )
