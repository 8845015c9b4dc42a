"""Charts of the overview page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import plotly.graph_objects as go
from numpy.typing import ArrayLike

from dpcore_app.ui.common.charts import PALETTE, layout, marker
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.frames import eps_steps

if TYPE_CHECKING:
    from dpcore_app.ui.common.figures import SharedFigure


def noisy_count(true_count: float, releases: ArrayLike, eps: float) -> go.Figure:
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


def noisy_count_steps(
    true_count: float, releases: Mapping[float, ArrayLike], eps: float
) -> SharedFigure:
    """:func:`noisy_count` at ``eps`` carrying every ε of the grid as a step of its own slider,
    drawn in the browser (see :mod:`dpcore_app.ui.common.frames`). ``releases`` maps each ε of
    the grid, in order, to the possible releases the page draws at that ε."""
    return eps_steps(
        {e: figure(noisy_count, true_count, draws, e) for e, draws in releases.items()}, eps
    )
