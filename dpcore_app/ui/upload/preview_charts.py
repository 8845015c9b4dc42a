"""Charts of the preview before spending: agreement and value kept against ε, on simulated twins."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from dpcore_app.ui.common.charts import GREY, INK, PALETTE, layout, marker, summary_band
from dpcore_app.ui.upload.analyst_explain import LEARNER_NAMES, effects_name

if TYPE_CHECKING:
    import pandas as pd

COLOURS = {"weak": PALETTE[1], "moderate": PALETTE[0], "strong": PALETTE[2]}
#: The ε axis's ticks: 1-2-5 steps, labelled, with no minor labels in between.
EPS_TICKS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)


def _eps_axis(fig: go.Figure) -> None:
    fig.update_xaxes(
        type="log",
        tickvals=list(EPS_TICKS),
        ticktext=[f"{t:g}" for t in EPS_TICKS],
        minor={"showgrid": False, "ticks": ""},
    )


def agreement_curve(
    frame: pd.DataFrame,
    eps: float,
    target: float | None = None,
    title: str = "Preview: agreement with the non-private rule",
) -> go.Figure:
    """Mean agreement (percent) of single releases with the non-private rule, and 95% bands
    of single releases, against ε, one curve per effect strength; the chosen ε marked."""
    fig = go.Figure()
    for group, part in frame.groupby("strength", sort=False):
        strength = str(group)  # a strength's name: "weak", "moderate", "strong" or "yours"
        part = part.sort_values("epsilon")
        x = part["epsilon"].to_numpy()
        summary_band(
            fig,
            x,
            part,
            "agreement",
            COLOURS.get(strength, GREY),
            effects_name(strength),
            f"{strength}: %{{y:.0f}}% (95% of releases %{{customdata[0]:.0f}}–%{{customdata[1]:.0f}}%)<extra></extra>",
        )
    fig.add_hline(y=50, line={"color": GREY, "dash": "dot", "width": 1})
    if target is not None:
        fig.add_hline(y=target, line={"color": INK, "dash": "dash", "width": 1})
    marker(fig, eps, f"ε = {eps:g}", log_x=True)
    layout(fig, title, "privacy budget ε (log scale)", "agreement (% of patients)")
    _eps_axis(fig)
    fig.update_yaxes(range=[0, 100])
    return fig


def gain_curve(
    frame: pd.DataFrame,
    eps: float,
    unit: str = "",
    title: str = "Preview: gain over giving everyone the better arm",
) -> go.Figure:
    """The private rule's gain over giving everyone the better arm, in the outcome's units
    (positive is better for patients), with 95% bands of single releases, against ε; each
    strength's non-private gain as a dotted line. A gain, not a share of the non-private
    one: a ratio over a small non-private gain runs past 100% and zig-zags."""
    u = f" {unit}" if unit else ""
    fig = go.Figure()
    for group, part in frame.groupby("strength", sort=False):
        strength = str(group)
        part = part.sort_values("epsilon")
        colour = COLOURS.get(strength, GREY)
        summary_band(
            fig,
            part["epsilon"].to_numpy(),
            part,
            "gain",
            colour,
            effects_name(strength),
            f"{strength}: %{{y:.3g}}{u} (95% of releases %{{customdata[0]:.3g}} to "
            f"%{{customdata[1]:.3g}}{u})<extra></extra>",
        )
        fig.add_hline(
            y=float(part["nonprivate_gain"].iloc[0]),
            line={"color": colour, "dash": "dot", "width": 1},
        )
    fig.add_hline(y=0, line={"color": GREY, "dash": "dash", "width": 1})
    marker(fig, eps, f"ε = {eps:g}", log_x=True)
    layout(
        fig,
        title,
        "privacy budget ε (log scale)",
        f"gain over the better arm{f' ({unit})' if unit else ''}",
    )
    _eps_axis(fig)
    return fig


#: Each learner's columns in the preview's table, and its colour.
LEARNER_COLUMNS = {"dp-owl": ("best", PALETTE[0]), "plug-in": ("plugin_best", PALETTE[5])}


def learners_curve(
    frame: pd.DataFrame,
    strength: str,
    eps: float,
    title: str = "Preview: patients given the better arm, by learner",
) -> go.Figure:
    """Both learners' percent of the twin's patients given the better arm (the twin's own
    optimal rule), mean and 95% bands of single releases, against ε, at one strength."""
    fig = go.Figure()
    part = frame[frame["strength"] == strength].sort_values("epsilon")
    x = part["epsilon"].to_numpy()
    for learner, (col, colour) in LEARNER_COLUMNS.items():
        name = LEARNER_NAMES[learner]
        summary_band(
            fig,
            x,
            part,
            col,
            colour,
            name[0].upper() + name[1:],
            f"{name}: %{{y:.0f}}% (95% of releases %{{customdata[0]:.0f}}–%{{customdata[1]:.0f}}%)<extra></extra>",
        )
    fig.add_hline(y=50, line={"color": GREY, "dash": "dot", "width": 1})
    marker(fig, eps, f"ε = {eps:g}", log_x=True)
    layout(fig, title, "privacy budget ε (log scale)", "given the better arm (% of patients)")
    _eps_axis(fig)
    fig.update_yaxes(range=[0, 100])
    return fig
