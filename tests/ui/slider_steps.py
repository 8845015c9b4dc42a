"""What every chart with its own ε slider must hold (``dpcore_app.ui.common.frames``), checked
against the room's own chart drawn at each ε: one step per ε of the grid in order, labelled as
the page writes ε, the page's ε active, and each step redrawing exactly that ε's chart."""

from __future__ import annotations

import json

import plotly.io as pio

from dpcore_app.ui.common.frames import FIXED, SLIDER_PX, _leaves
from dpcore_app.ui.common.grids import fmt_eps


def plain(value):
    """A figure's part as the browser receives it (numpy arrays as lists), comparable with ==."""
    return json.loads(pio.to_json(value, validate=False))


def drawn(fig, k):
    """The traces and the layout the browser shows after step ``k`` of ``fig``'s slider: the
    step's attributes replace each trace's (None: unset), its layout paths the layout's."""
    spec = plain(fig.to_dict())
    restyle, relayout = spec["layout"]["sliders"][0]["steps"][k]["args"]
    count = len(spec["data"])
    assert all(len(values) == count for values in restyle.values())  # every trace, every time
    traces = [
        {**trace, **{key: values[j] for key, values in restyle.items()}}
        for j, trace in enumerate(spec["data"])
    ]
    traces = [{key: value for key, value in t.items() if value is not None} for t in traces]
    layout = _leaves({k: v for k, v in spec["layout"].items() if k not in FIXED})
    layout.update(relayout)
    return traces, {p: v for p, v in layout.items() if v is not None}


def check_steps(fig, static, current, fmt=fmt_eps):
    """``fig`` carries ``static`` ({ε: the room's chart at ε}, the grid in order) as slider steps,
    at ``current``; returns the steps' labels."""
    spec = plain(fig.to_dict())
    grid = list(static)
    (slider,) = spec["layout"]["sliders"]
    labels = [step["label"] for step in slider["steps"]]
    assert labels == [fmt(e) for e in grid]  # one step per ε, in order, as the page writes ε
    assert [step["value"] for step in slider["steps"]] == labels  # what the page is sent back
    assert slider["active"] == grid.index(current)
    here = plain(static[current].to_dict())
    # At load: the chart at the page's ε as it is, the slider under it (and hidden traces for
    # what another ε draws and this one does not).
    assert spec["data"][: len(here["data"])] == here["data"]
    assert all(t.get("visible") is False for t in spec["data"][len(here["data"]) :])
    assert {k: v for k, v in spec["layout"].items() if k not in ("sliders", "height")} == {
        k: v for k, v in here["layout"].items() if k != "height"
    }
    assert spec["layout"]["height"] >= here["layout"]["height"] + SLIDER_PX
    for k, e in enumerate(grid):
        want = plain(static[e].to_dict())
        traces, layout = drawn(fig, k)
        assert traces[: len(want["data"])] == want["data"], f"the traces at ε = {fmt(e)}"
        assert all(t.get("visible") is False for t in traces[len(want["data"]) :])
        expected = _leaves({k: v for k, v in want["layout"].items() if k not in FIXED})
        for path, value in expected.items():
            shown = layout.get(path)
            if path == "title.text" and shown != value:  # drawn bold, as Streamlit's theme does
                shown = shown.removeprefix("<b>").removesuffix("</b>")
            assert shown == value, f"{path} at ε = {fmt(e)}"
    return labels
