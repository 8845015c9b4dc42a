"""Charts of the overview page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from dpcore_app.ui.common.charts import PALETTE, layout, marker
from dpcore_app.ui.common.figures import figure
from dpcore_app.ui.common.frames import eps_steps

if TYPE_CHECKING:
    from dpcore_app.ui.common.figures import SharedFigure


def release_bins(releases: ArrayLike, bins: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres, counts, widths) of the releases' histogram: one bin per whole count where the
    releases span fewer than ``bins`` counts, else ``bins`` equal bins over their range.

    The chart sends these few bars, not the 2,000 draws: the Overview's figure, with every ε of
    its slider, is about a twentieth of the size it would be with the draws themselves.
    """
    values = np.asarray(releases, dtype=float)
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < bins:
        edges = np.arange(np.floor(lo) - 0.5, np.ceil(hi) + 1.0)
    else:
        edges = np.histogram_bin_edges(values, bins=bins)
    counts, edges = np.histogram(values, bins=edges)
    return (edges[:-1] + edges[1:]) / 2, counts, np.diff(edges)


def noisy_count(true_count: float, releases: ArrayLike, eps: float) -> go.Figure:
    """Overview: many possible releases of one count at ε, with the true count marked."""
    centres, counts, widths = release_bins(releases)
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=centres,
            y=counts,
            width=widths,
            marker_color=PALETTE[0],
            opacity=0.75,
            name="possible releases",
            hovertemplate=f"released about %{{x:.0f}}<br>%{{y}} of {int(counts.sum())} draws"
            "<extra></extra>",
        )
    )
    marker(fig, true_count, f"true count {true_count}", colour=PALETTE[5])
    fig = layout(
        fig,
        f"What an ε = {eps:g} release of the count could show",
        "released count (patients)",
        f"how often (of {int(counts.sum())} draws)",
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
