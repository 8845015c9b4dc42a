"""Pure functions from data to plotly figures, one module per page, sharing one style here:
titles, labelled axes with units, hover values, Monte-Carlo bands, the Okabe-Ito
colour-blind-safe palette, and the text sizes and line colours that read in both themes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

if TYPE_CHECKING:
    import pandas as pd

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
GREY = "#7f7f7f"
#: Text sizes (px): every text of every chart at least 14, for a projector across a room and a
#: phone at arm's length. Streamlit's plotly theme sets 12 px ticks, legends and hover labels,
#: so each text carries its size here rather than inheriting one.
TEXT_PX = 14
TITLE_PX = 16
FONT = {"size": TEXT_PX}
#: Neutral lines (reference levels, markers, bounds, error bars): at least 3:1 (WCAG's contrast
#: for marks) on Streamlit's light (#FFFFFF) and dark (#0E1117) backgrounds; black or #444
#: vanish on the dark one. No chart sets a text colour: no colour reaches 4.5:1 against both
#: backgrounds, so every text takes the theme's own text colour and a label's colour stays on
#: its line.
INK = "#888888"
#: Plotly's options for every chart (figures.show): no toolbar. Streamlit draws Plotly's toolbar
#: as a row of buttons, each a stop for the Tab key (seven a chart: 28 on the DP-OWL page before
#: its last chart), and it cannot be kept out of the tab order; zooming by dragging stays, a
#: double click resets it, and each chart's numbers are a download under it instead of a PNG.
CONFIG = {"displayModeBar": False, "displaylogo": False}


def layout(
    fig: go.Figure, title: str, xtitle: str, ytitle: str | None, height: int = 380
) -> go.Figure:
    """The shared layout: title, axis titles, sizes of every text; call it after the traces
    (an axis holding a single value gets its range from them). ``ytitle`` None: no y-axis
    title (a bar chart whose bars are labelled)."""
    fig.update_layout(
        title={
            "text": title,
            "x": 0,
            "xanchor": "left",
            "y": 0.98,
            "yanchor": "top",
            "font": {"size": TITLE_PX},
        },
        xaxis={"title": {"text": xtitle, "font": FONT}, "tickfont": FONT},
        yaxis={"title": {"text": ytitle, "font": FONT}, "tickfont": FONT},
        height=height,
        font=FONT,
        hoverlabel={"font": FONT},  # theme: Streamlit's, light or dark
        margin={"l": 60, "r": 40, "t": 70, "b": 20},
        hovermode="x unified",
        # At the figure's foot, under the x-axis title however many rows it takes on a phone: a
        # legend placed relative to the plot would also push the plot up by a share of its height.
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "x": 0,
            "font": FONT,
        },
    )
    fig.update_xaxes(automargin=True)
    fig.update_annotations(font_size=TEXT_PX)
    _single_values(fig)
    fig.update_layout(height=max(height, _phone_height(fig)))
    return fig


#: On a phone (a plot 220-260 px wide at 390 px) a legend of long names takes a row per entry
#: or two; the figure grows by those rows, so the plot area keeps PLOT_PX whatever the width.
PHONE_PX, PLOT_PX, CHROME_PX, LEGEND_ROW_PX = 220, 300, 170, 31


def _phone_height(fig):
    """The height at which the plot area is still PLOT_PX tall on a phone: the legend's rows
    there, packed in trace order at about 0.55 em a character beside a 40 px symbol."""
    names = []
    for trace in fig.data:
        if (
            trace.name
            and trace.showlegend is not False
            and (trace.legendgroup or trace.name) not in names
        ):
            names.append(trace.legendgroup or trace.name)
    if not names or fig.layout.showlegend is False:
        return PLOT_PX + CHROME_PX
    rows, used = 1, 0.0
    for name in names:
        width = 40 + 0.55 * TEXT_PX * len(name)
        if used and used + width > PHONE_PX:
            rows, used = rows + 1, 0.0
        used += width
    return PLOT_PX + CHROME_PX + rows * LEGEND_ROW_PX


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def decade_ticks(fig: go.Figure, axis: str) -> go.Figure:
    """Ticks at the powers of ten the ``axis`` ("x" or "y") spans, written out (0.01 … 1000) or
    as 10⁻⁴ in full-size characters: plotly's own exponents are drawn at 70% of the tick size,
    and its minor 2 and 5 labels at 75%, both below 14 px."""
    values = []
    stacks: dict[Any, np.ndarray] = {}
    for trace in fig.data:
        data = getattr(trace, axis, None)
        if data is None or trace.type not in ("scatter", "bar", "heatmap"):
            continue
        column = np.asarray(data, dtype=float).ravel()
        if axis == "y" and getattr(trace, "stackgroup", None):
            stacks[trace.stackgroup] = stacks.get(trace.stackgroup, 0) + np.nan_to_num(column)
        values.append(column)
    values += list(stacks.values())
    finite = np.concatenate(values) if values else np.array([])
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if not finite.size:
        return fig
    powers = range(
        math.floor(math.log10(finite.min()) + 1e-9), math.ceil(math.log10(finite.max()) - 1e-9) + 1
    )
    text = [
        f"{10.0**k:g}" if -2 <= k <= 3 else "10" + str(k).translate(_SUPERSCRIPT) for k in powers
    ]
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    update(
        type="log",
        tickvals=[10.0**k for k in powers],
        ticktext=text,
        minor={"showgrid": False, "ticks": ""},
    )
    return fig


def _single_values(fig):
    """An axis whose lines hold one value (a chart at one n) gets a range around it, from half
    to twice the value, on a linear or a log axis alike: plotly would draw a sliver of width
    near zero around the point."""
    for axis, update in (("x", fig.update_xaxes), ("y", fig.update_yaxes)):
        values = set()
        for trace in fig.data:
            if trace.type != "scatter" or getattr(trace, axis) is None:
                continue
            column = np.asarray(getattr(trace, axis), dtype=object)
            values |= {
                float(v)
                for v in column
                if isinstance(v, (int, float, np.number)) and np.isfinite(v)
            }
        if len(values) == 1:
            v = values.pop()
            update(autorangeoptions={"include": [v / 2, 2 * v] if v > 0 else [v - 1, v + 1]})


def rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def band(
    fig: go.Figure,
    x: np.ndarray,
    mean: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    colour: str,
    name: str,
    hover: str,
) -> None:
    """A mean line with its 95% Monte-Carlo band."""
    fig.add_trace(
        go.Scatter(
            x=np.r_[x, x[::-1]],
            y=np.r_[hi, lo[::-1]],
            fill="toself",
            mode="lines",
            fillcolor=rgba(colour, 0.18),
            line={"width": 0},
            hoverinfo="skip",
            showlegend=False,
            legendgroup=name,
        )
    )
    one = len(x) == 1  # a band of one x has no width: its interval as an error bar instead
    bar = (
        {
            "type": "data",
            "symmetric": False,
            "array": np.asarray(hi) - np.asarray(mean),
            "arrayminus": np.asarray(mean) - np.asarray(lo),
            "color": colour,
            "width": 8,
        }
        if one
        else None
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=mean,
            mode="lines+markers",
            name=name,
            legendgroup=name,
            line={"color": colour, "width": 2},
            marker={"size": 8 if one else 6},
            error_y=bar,
            customdata=np.c_[lo, hi],
            hovertemplate=hover,
        )
    )


def summary_band(
    fig: go.Figure,
    x: np.ndarray,
    summary: pd.DataFrame,
    column: str,
    colour: str,
    name: str,
    hover: str,
) -> None:
    """:func:`band` of one measure of a Monte-Carlo summary: its mean and 95% interval are the
    columns ``<column>_mean``, ``<column>_lo`` and ``<column>_hi`` of ``summary``, row for row
    with ``x``."""
    band(
        fig,
        x,
        summary[f"{column}_mean"].to_numpy(),
        summary[f"{column}_lo"].to_numpy(),
        summary[f"{column}_hi"].to_numpy(),
        colour,
        name,
        hover,
    )


def marker(
    fig: go.Figure,
    x: float,
    text: str,
    colour: str = INK,
    dash: str = "solid",
    log_x: bool = False,
    row: int = 0,
) -> None:
    """A vertical line at x with its label above the plot area, clear of the data.

    On a log axis plotly places annotations at log10(x), so the label is added by hand.
    ``row`` stacks labels of nearby markers.
    """
    fig.add_vline(x=x, line={"color": colour, "dash": dash, "width": 1.5})
    fig.add_annotation(
        x=math.log10(x) if log_x else x,
        y=1.0,
        yref="paper",
        yanchor="bottom",
        yshift=2 + (TEXT_PX + 4) * row,
        text=text,
        showarrow=False,
        font=FONT,
    )
