"""Charts of the DP-OWL page."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from . import GREY, PALETTE, band, layout, marker

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


def _reference_lines(fig, references):
    for key, value in references.items():
        label, dash, position = REFERENCE_STYLE[key]
        fig.add_hline(y=value, line={"color": GREY, "dash": dash, "width": 1.5},
                      annotation_text=f"{label}: {value:.2f}", annotation_position=position,
                      annotation_font={"size": 11, "color": GREY})




def curves_vs_epsilon(summary, metric, ns, current_eps, references=None):
    """Mean metric against ε (log axis), one band per n, non-private levels as dotted lines."""
    fig = go.Figure()
    unit = "%" if metric in ("accuracy", "concordance") else ""
    for k, n in enumerate(ns):
        colour = PALETTE[k % len(PALETTE)]
        rows = summary[(summary["n"] == n)].sort_values("epsilon")
        private = rows[np.isfinite(rows["epsilon"])]
        hover = (f"n = {n}<br>ε = %{{x:g}}<br>mean %{{y:.2f}}{unit}"
                 f"<br>95% CI %{{customdata[0]:.2f}} – %{{customdata[1]:.2f}}<extra></extra>")
        band(fig, private["epsilon"].to_numpy(), private[f"{metric}_mean"].to_numpy(),
              private[f"{metric}_lo"].to_numpy(), private[f"{metric}_hi"].to_numpy(), colour,
              f"n = {n}", hover)
        nonprivate = rows[np.isinf(rows["epsilon"])]
        if len(nonprivate) and metric != "concordance":
            fig.add_hline(y=float(nonprivate[f"{metric}_mean"].iloc[0]),
                          line={"color": colour, "dash": "dot", "width": 1.5})
    if references:
        _reference_lines(fig, references)
    if math.isfinite(current_eps):
        marker(fig, current_eps, f"ε = {current_eps:g}", log_x=True)
    fig.update_xaxes(type="log", tickvals=[0.1, 1, 10, 100, 1000], ticktext=["0.1", "1", "10", "100", "1000"])
    title = f"{METRIC_LABELS[metric].split(' (')[0].capitalize()} against the privacy budget ε"
    return layout(fig, title, "privacy budget ε (log scale; dotted: non-private)", METRIC_LABELS[metric])


def curve_vs_n(summary, metric, eps, references=None):
    """Mean metric against n at one ε, with the non-private curve."""
    fig = go.Figure()
    unit = "%" if metric in ("accuracy", "concordance") else ""
    settings = [(eps, f"ε = {eps:g}" if math.isfinite(eps) else "non-private", PALETTE[0])]
    if math.isfinite(eps) and metric != "concordance":
        settings.append((math.inf, "non-private", GREY))
    for e, name, colour in settings:
        rows = summary[summary["epsilon"] == e].sort_values("n")
        hover = (f"{name}<br>n = %{{x}}<br>mean %{{y:.2f}}{unit}"
                 f"<br>95% CI %{{customdata[0]:.2f}} – %{{customdata[1]:.2f}}<extra></extra>")
        band(fig, rows["n"].to_numpy(), rows[f"{metric}_mean"].to_numpy(),
              rows[f"{metric}_lo"].to_numpy(), rows[f"{metric}_hi"].to_numpy(), colour, name, hover)
    if references:
        _reference_lines(fig, references)
    title = f"{METRIC_LABELS[metric].split(' (')[0].capitalize()} against the training size n"
    return layout(fig, title, "training size n (patients)", METRIC_LABELS[metric])


def distribution(private, nonprivate, metric, eps):
    """Histogram over repetitions of the metric, private at ε against non-private."""
    fig = go.Figure()
    label = METRIC_LABELS[metric]
    for values, name, colour in ((private, f"private, ε = {eps:g}", PALETTE[0]),
                                 (nonprivate, "non-private", GREY)):
        if values is None:
            continue
        fig.add_trace(go.Histogram(x=values, name=name, marker_color=colour, opacity=0.6, nbinsx=40,
                                   bingroup=1,
                                   hovertemplate=f"{name}<br>%{{x}}<br>%{{y}} repetitions<extra></extra>"))
    fig.update_layout(barmode="overlay")
    fig = layout(fig, "Spread over repetitions at the current setting", label, "repetitions")
    fig.update_layout(hovermode="closest")
    return fig


def coefficients(names, nonprivate, private, eps, same_gamma=None, gammas=None):
    """Grouped bars: the released rule against the non-private rule.

    With ``same_gamma`` (the exact minimiser at the private rule's γ, when the non-private
    rule uses another γ) a middle bar separates what regularization does from what noise does.
    """
    g_ref, g = gammas if gammas else (None, None)
    bars = [(nonprivate, "non-private" + (f", γ = {g_ref:g}" if g_ref else ""), GREY)]
    if same_gamma is not None:
        bars.append((same_gamma, f"no noise, γ = {g:g}", PALETTE[4]))
    bars.append((private, f"private, ε = {eps:g}" + (f", γ = {g:g}" if g else ""), PALETTE[0]))
    fig = go.Figure()
    for values, name, colour in bars:
        fig.add_trace(go.Bar(x=list(names), y=values, name=name, marker_color=colour,
                             hovertemplate=f"%{{x}}: %{{y:.3f}}<extra>{name}</extra>"))
    fig.update_layout(barmode="group")
    return layout(fig, "The learned rule's coefficients, private against non-private",
                   "term of the rule",
                   "coefficient (per unit of x)")


def noise_vector(theta_hat, noise, dims=(3, 4), names=("intercept", "x1", "x2", "x3", "x4"),
                 expected_radius=None):
    """The exact minimiser and the released point in two coordinates, the noise as an arrow."""
    i, j = dims
    start, end = theta_hat[[i, j]], (theta_hat + noise)[[i, j]]
    fig = go.Figure()
    if expected_radius is not None and np.isfinite(expected_radius):
        t = np.linspace(0, 2 * np.pi, 120)
        fig.add_trace(go.Scatter(x=start[0] + expected_radius * np.cos(t),
                                 y=start[1] + expected_radius * np.sin(t), mode="lines",
                                 line={"color": GREY, "dash": "dot"}, hoverinfo="skip",
                                 name="typical noise radius d·Δ/ε"))
    fig.add_trace(go.Scatter(x=[start[0]], y=[start[1]], mode="markers", name="exact minimiser θ̂",
                             marker={"color": GREY, "size": 12, "symbol": "circle"},
                             hovertemplate="θ̂: (%{x:.3f}, %{y:.3f})<extra></extra>"))
    fig.add_trace(go.Scatter(x=[end[0]], y=[end[1]], mode="markers", name="released θ* = θ̂ + noise",
                             marker={"color": PALETTE[0], "size": 12, "symbol": "diamond"},
                             hovertemplate="θ*: (%{x:.3f}, %{y:.3f})<extra></extra>"))
    fig.add_annotation(x=end[0], y=end[1], ax=start[0], ay=start[1], xref="x", yref="y",
                       axref="x", ayref="y", showarrow=True, arrowhead=3, arrowwidth=2,
                       arrowcolor=PALETTE[5])
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    fig = layout(fig, f"The noise as a vector ({names[i]}, {names[j]} coefficients, scaled space)",
                  f"{names[i]} coefficient (scaled)", f"{names[j]} coefficient (scaled)")
    fig.update_layout(hovermode="closest")
    return fig


def gamma_curve(curve, best, metric, paper_value=None):
    """Algorithm 2's γ curve: mean validation metric with its 95% band, the pick marked."""
    fig = go.Figure()
    unit = "%" if metric == "accuracy" else ""
    band(fig, curve["gamma"].to_numpy(), curve[f"{metric}_mean"].to_numpy(),
          curve[f"{metric}_lo"].to_numpy(), curve[f"{metric}_hi"].to_numpy(), PALETTE[2],
          "proxy validation " + metric,
          f"γ = %{{x:g}}<br>mean %{{y:.3f}}{unit}<br>95% CI %{{customdata[0]:.3f}} – "
          "%{customdata[1]:.3f}<extra></extra>")
    marker(fig, best, f"picked γ = {best:g}", colour=PALETTE[5])
    if paper_value is not None:
        marker(fig, paper_value, f"paper table γ = {paper_value:g}", colour=GREY, dash="dash", row=1)
    label = METRIC_LABELS["value"] if metric == "value" else METRIC_LABELS["accuracy"]
    return layout(fig, "Algorithm 2: validation score against γ on the public proxy", "regularization γ",
                   label)
