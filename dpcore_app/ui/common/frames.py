"""A chart's own ε slider: every ε of the page's grid as a step that the browser draws at once,
with no script run on the server.

:func:`eps_steps` turns the figures a room already draws at each ε (from data already computed:
the sweeps cover the whole grid) into one figure: the figure at the page's ε, with a slider under
the plot whose steps hold the chart at every other ε. :func:`follow` is the other half: when a
drag on that slider ends, the page's ε control and its link take the chosen ε, in one rerun.

Why steps of Plotly's ``update`` method and not Plotly frames: a frame is drawn as a transition,
during which Plotly never recomputes an axis' range, so a chart whose data move (a histogram of
releases at ε = 0.05 and at 1000, errors over five decades) would keep the axes of the ε it was
loaded at. An ``update`` step is an ordinary restyle and relayout: each trace attribute and each part of
the layout that differs between two ε is replaced whole (``None``: Plotly's default), the rest
stays as loaded (a chart against n sends its n once, not once per ε), and the axes autorange.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st
from plotly.io.json import to_json_plotly

from dpcore_app.ui.common.charts import FONT, INK
from dpcore_app.ui.common.figures import SharedFigure
from dpcore_app.ui.common.grids import fmt_eps
from dpcore_app.ui.common.link import set_state, value_of

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from dpcore_app.ui.common.controls import Choice

#: The slider sits under the plot area, ``AXIS_PX`` below it so that the x-axis' tick labels and
#: title stay above it; the figure grows by ``SLIDER_PX``, the slider's own height, so that the
#: plot area keeps its size.
AXIS_PX = 64
SLIDER_PX = 80
#: Layout keys a step never changes: the slider itself (a step that set it would put the handle
#: back), the figure's size and margins (one for every ε), the theme.
FIXED = frozenset({"sliders", "height", "width", "margin", "template"})
#: A trace that one ε draws and another does not: there, hidden.
HIDDEN = {"visible": False}


def _traces(lists):
    """The traces of every ε, padded to the same number with hidden traces (of the type the
    other ε draw at that position): a step can only change traces the figure has."""
    longest = max((len(x) for x in lists), default=0)
    padded = []
    for traces in lists:
        traces = list(traces)
        for k in range(len(traces), longest):
            kind = next((x[k]["type"] for x in lists if k < len(x) and "type" in x[k]), None)
            traces.append({**HIDDEN, "type": kind} if kind else dict(HIDDEN))
        padded.append(traces)
    return padded


def _leaves(node, path=""):
    """{"xaxis.tickvals": [...], "title.text": "...", ...}: a layout's values by dotted path;
    lists (data, annotations, shapes) are values, replaced whole."""
    if isinstance(node, dict) and node:
        out = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{path}.{key}" if path else key))
        return out
    return {path: node}


def _json(value):
    """A value as the browser receives it (numpy arrays included): equal values, equal texts."""
    return to_json_plotly(value)


def _bold(title):
    """Streamlit's theme writes a figure's title in bold when it first draws it; a step that
    changes the title writes it the same way."""
    return None if title is None else f"<b>{title}</b>"


def eps_steps(
    specs: Mapping[Any, go.Figure | dict[str, Any]],
    current: Any,
    fmt: Callable[[Any], str] = fmt_eps,
    prefix: str = "privacy budget ε: ",
) -> SharedFigure:
    """One figure from a chart drawn at every ε of a grid: the chart at ``current`` with a slider
    under the plot, one step per ε, each step redrawing the chart as it is at that ε.

    ``specs`` maps each ε of the grid, in the slider's order, to the chart at that ε (a figure or
    its dict); ``current`` (one of them) is the page's ε: the slider's active step, and the figure
    shown at load is that chart as it is (hidden traces added where another ε draws more), with
    the slider under it. Steps are labelled ``fmt(ε)``, the page's own labels (the links write
    them too); a step's ``value`` is its label.
    """
    grid = list(specs)
    if current not in specs:
        raise ValueError(f"the current ε ({current!r}) is not on the slider's grid {grid}")
    dicts = [s.to_dict() if hasattr(s, "to_dict") else s for s in specs.values()]
    here = dicts[grid.index(current)]
    traces = _traces([d.get("data", []) for d in dicts])
    attributes = [  # what differs between two ε somewhere; the rest stays as loaded
        k
        for k in dict.fromkeys(k for ts in traces for t in ts for k in t)
        if len({_json([t.get(k) for t in ts]) for ts in traces}) > 1
    ]
    layouts = [
        _leaves({k: v for k, v in d.get("layout", {}).items() if k not in FIXED}) for d in dicts
    ]
    paths = list(dict.fromkeys(p for lay in layouts for p in lay))
    varying = [p for p in paths if len({_json(lay.get(p)) for lay in layouts}) > 1]
    axes = [
        a
        for a in dict.fromkeys(p.split(".")[0] for p in paths)
        if a[1:5] == "axis"
        and not any(p in lay for lay in layouts for p in (f"{a}.range", f"{a}.autorange"))
    ]
    steps = []
    for e, ts, lay in zip(grid, traces, layouts):
        restyle = {k: [t.get(k) for t in ts] for k in attributes}
        relayout = {p: _bold(lay.get(p)) if p == "title.text" else lay.get(p) for p in varying}
        relayout.update({f"{a}.autorange": True for a in axes})  # the data moved: so do the axes
        label = fmt(e)
        steps.append(
            {"label": label, "value": label, "method": "update", "args": [restyle, relayout]}
        )
    drawn = list(here.get("data", []))
    spec = {
        "data": drawn + traces[grid.index(current)][len(drawn) :],  # and the hidden ones
        "layout": {
            **here.get("layout", {}),
            "height": max(d.get("layout", {}).get("height", 450) for d in dicts) + SLIDER_PX,
            "sliders": [_slider(steps, grid.index(current), prefix)],
        },
    }
    return SharedFigure.from_spec(spec)


def _slider(steps, active, prefix):
    """The slider: under the plot area and clear of the x-axis' labels."""
    return {
        "active": active,
        "steps": steps,
        "x": 0,
        "xanchor": "left",
        "len": 1,
        "y": 0,
        "yanchor": "top",
        "pad": {"t": AXIS_PX, "b": 4, "l": 0, "r": 0},
        "currentvalue": {"prefix": prefix, "font": FONT, "xanchor": "left", "offset": 4},
        "font": FONT,
        # Plotly's rail border (#BEC8D9) and ticks (#333) fade into a light or a dark page: the
        # neutral line colour that holds 3:1 on both.
        "bordercolor": INK,
        "tickcolor": INK,
        "transition": {"duration": 0},
    }


# --------------------------------------------------------------------------------------------
# The page follows the chart's slider


#: Runs in the browser, beside the chart (not in an iframe): listens to the Plotly slider of the
#: chart whose element carries the key ``data.chart`` (its ``st-key-…`` class), and when a drag
#: (or a click) on it ends on another step than the page's ε, sends that step's label once, as a
#: trigger: the page then runs once, with its ε control and link set to it. Nothing is sent while
#: the drag lasts. A drag that ends outside the chart ends it too (Plotly then reports no end).
#: The chart is redrawn (a new element) whenever its figure changes: the listeners follow it.
_FOLLOW_JS = """
export default function ({ data, setTriggerValue }) {
  const { chart, current } = data;
  let plot = null, dragging = false, chosen = null;
  const start = () => { dragging = true; chosen = null; };
  const change = (event) => { if (event && event.step) chosen = event.step.value; };
  const end = () => {
    if (!dragging) return;
    dragging = false;
    if (chosen !== null && chosen !== current) setTriggerValue("step", chosen);
  };
  const handlers = [["plotly_sliderstart", start], ["plotly_sliderchange", change],
                    ["plotly_sliderend", end]];
  const bind = () => {
    const found = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
    if (found === plot || !found || typeof found.on !== "function") return;
    if (plot && plot.removeListener) handlers.forEach(([n, f]) => plot.removeListener(n, f));
    plot = found;
    handlers.forEach(([n, f]) => plot.on(n, f));
  };
  const root = document.querySelector("[data-testid='stMain']") || document.body;
  const observer = new MutationObserver(bind);
  observer.observe(root, { childList: true, subtree: true });
  window.addEventListener("mouseup", end, true);
  window.addEventListener("touchend", end, true);
  bind();
  return () => {
    observer.disconnect();
    window.removeEventListener("mouseup", end, true);
    window.removeEventListener("touchend", end, true);
    if (plot && plot.removeListener) handlers.forEach(([n, f]) => plot.removeListener(n, f));
  };
}
"""
#: The component draws nothing: its element takes no room in the page's column. (Two lines:
#: Streamlit reads a one-line string with brackets as a file's name.)
_FOLLOW_CSS = """/* no room for an element that draws nothing */
[class*="st-key-eps_follow_"] { display: none; }"""


@functools.cache
def _component():
    """Registered on first use (a page's run), not when a chart module is imported."""
    return st.components.v2.component(
        "dpcore_eps_follow", js=_FOLLOW_JS, css=_FOLLOW_CSS, isolate_styles=False
    )


def follow(chart_key: str, control: Choice) -> None:
    """When a drag on the ε slider of the chart keyed ``chart_key`` ends, set ``control`` (the
    page's ε :class:`~dpcore_app.ui.common.controls.Choice`) to the chosen step and write the
    link: one rerun, the page and its address at that ε. Call it right after the chart."""
    key = f"eps_follow_{chart_key}"
    _component()(
        key=key,
        data={"chart": chart_key, "current": control.fmt(value_of(control))},
        on_step_change=functools.partial(_apply, key, control),
    )


def _apply(key, control):
    """on_step_change: the control takes the step's ε (a label of its own options)."""
    label = st.session_state[key].get("step")
    if label is None:
        return
    value, problem = control.from_url([str(label)])
    if problem is None:
        set_state({control.key: value})
