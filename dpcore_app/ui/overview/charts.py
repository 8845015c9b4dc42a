"""Charts of the overview page."""

from __future__ import annotations

import plotly.graph_objects as go

from dpcore_app.ui.common.charts import PALETTE, layout, marker


def noisy_count(true_count, releases, eps):
    """Overview: many possible releases of one count at ε, with the true count marked."""
    fig = go.Figure()
    fig.add_trace(
        go.Histogram(
            x=releases,
            nbinsx=40,
            marker_color=PALETTE[0],
            opacity=0.75,
            name="possible releases",
            hovertemplate="released %{x}<br>%{y} of 2000 draws<extra></extra>",
        )
    )
    marker(fig, true_count, f"true count {true_count}", colour=PALETTE[5])
    fig = layout(
        fig,
        f"What an ε = {eps:g} release of the count could show",
        "released count (patients)",
        "how often (of 2000 draws)",
        height=320,
    )
    fig.update_layout(hovermode="closest", showlegend=False)
    return fig
