"""Pure functions from data to plotly figures, one module per page, sharing one style here:
titles, labelled axes with units, hover values, Monte-Carlo bands, and the Okabe-Ito
colour-blind-safe palette."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
GREY = "#7f7f7f"


def layout(fig, title, xtitle, ytitle, height=380):
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top",
               "font": {"size": 16}},
        xaxis_title=xtitle, yaxis_title=ytitle, height=height,  # theme: Streamlit's, light or dark
        margin={"l": 60, "r": 40, "t": 70, "b": 50}, hovermode="x unified",
        modebar={"orientation": "v"},  # in the right margin: a horizontal one covers the title on a phone
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 12}},
    )
    return fig


def rgba(hex_colour, alpha):
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def band(fig, x, mean, lo, hi, colour, name, hover):
    """A mean line with its 95% Monte-Carlo band."""
    fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", mode="lines",
                             fillcolor=rgba(colour, 0.18), line={"width": 0}, hoverinfo="skip",
                             showlegend=False, legendgroup=name))
    fig.add_trace(go.Scatter(x=x, y=mean, mode="lines+markers", name=name, legendgroup=name,
                             line={"color": colour, "width": 2}, marker={"size": 6},
                             customdata=np.c_[lo, hi], hovertemplate=hover))


def marker(fig, x, text, colour="#444", dash="solid", log_x=False, row=0):
    """A vertical line at x with its label above the plot area, clear of the data.

    On a log axis plotly places annotations at log10(x), so the label is added by hand.
    ``row`` stacks labels of nearby markers.
    """
    fig.add_vline(x=x, line={"color": colour, "dash": dash, "width": 1.5})
    fig.add_annotation(x=math.log10(x) if log_x else x, y=1.0, yref="paper", yanchor="bottom",
                       yshift=2 + 16 * row, text=text, showarrow=False,
                       font={"size": 11, "color": colour})
