"""Figures built once per distinct input and shared by every session of the server.

A plotly figure takes 10-40 ms to build here (most of it in ``update_layout``'s validation;
more in a process that has built none yet) and a page shows four to six, while ``st.plotly_chart`` only reads the figure it is given; so a rerun rebuilds
just the charts whose inputs changed. ``st.plotly_chart`` then asks the figure for its dict on
every rerun (a deep copy, a few ms per chart); a shared figure is never changed, so it hands
out the dict it had when built. Only for charts of simulated or demo data: a figure of
uploaded data must never be shared across sessions (privacy rule 4).

A figure can also come from the results store (``dpcore.store``), where ``dpcore warm`` puts
the figures a class reaches first (:func:`storing`): a server then reads a figure's dict
(about 1 ms) instead of building it, and builds nothing on its interpreter before the first
session asks. The entry is keyed by the builder, a digest of its inputs, the dashboard's
source and plotly's version, so an edited chart or another plotly is never served an old
figure. Only charts of the simulated studies are stored on disk (:data:`STORED_CHARTS`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib
import pickle
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import plotly
import plotly.graph_objects as go
import streamlit as st

from dpcore.data.csv_safe import write_csv
from dpcore.store import ResultStore, default_store
from dpcore_app.ui.common.charts import CONFIG

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator


class SharedFigure(go.Figure):
    """A built figure, shared read-only: ``to_dict`` returns the dict computed once."""

    def to_dict(self) -> dict[str, Any]:
        return self._shared_dict

    @classmethod
    def freeze(cls, fig: go.Figure) -> SharedFigure:
        spec = fig.to_dict()
        fig.__class__ = cls  # the same object, its dict kept (plotly allows "_" attributes)
        fig._shared_dict = spec
        return fig

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> SharedFigure:
        """A figure read back as its dict: the plotly objects are not built again (that is
        the cost saved), so only ``to_dict`` (what ``st.plotly_chart`` reads) describes it."""
        fig = cls()
        fig._shared_dict = spec
        return fig


def _frame_key(frame):
    """A frame's pickle: it holds every value, dtype and label, and takes a tenth of the time
    of Streamlit's own frame hashing (a different layout of equal data only costs a rebuild)."""
    return pickle.dumps(frame, protocol=5)


# A class of 30 moving ε and n reaches every (ε, n, metric) of a page: keep them all.
@st.cache_resource(
    max_entries=2048,
    show_spinner=False,
    hash_funcs={pd.DataFrame: _frame_key, pd.Series: _frame_key},
)
def _build(module, name, args, kwargs):
    key = _spec_key(module, name, args, kwargs) if module in STORED_CHARTS else None
    store = default_store() if key is not None else None
    spec = None if store is None else store.get(_SPEC, {"figure": key})
    if spec is not None:
        return SharedFigure.from_spec(spec)
    fig = SharedFigure.freeze(getattr(importlib.import_module(module), name)(*args, **kwargs))
    if store is not None and getattr(_storing, "on", False):
        try:
            store.put(_SPEC, {"figure": key}, fig.to_dict())
        except (TypeError, PermissionError):  # a dict the store cannot hold, or a foreign store
            pass
    return fig


#: The chart modules of simulated or demo data, whose figures may be shared between sessions
#: (not dpcore_app.ui.upload.charts: those draw an uploaded trial), and the compute modules of
#: simulated studies whose figure builders read their own data from plain inputs (so that the
#: data is read only when the figure is not built yet).
TEACHING_CHARTS = frozenset(
    {
        "dpcore_app.ui.owl.charts",
        "dpcore_app.ui.cvar.charts",
        "dpcore_app.ui.cvar.compute",
        "dpcore_app.ui.bounds.charts",
        "dpcore_app.ui.bounds.compute",
        "dpcore_app.ui.overview.charts",
        "dpcore_app.ui.upload.preview_charts",
    }
)
#: Of those, the charts of the pages' simulated studies, which the results store may keep on
#: disk (not the Your-data preview's, drawn from an analyst's public settings).
STORED_CHARTS = TEACHING_CHARTS - {"dpcore_app.ui.upload.preview_charts"}
_SPEC = f"{__name__}.figure_spec"  # the store's name for a figure's dict
_storing = threading.local()  # .on: this thread writes the figures it builds to the store


@contextmanager
def storing() -> Iterator[None]:
    """Figures built inside this block (in this thread) are also written to the results store,
    for every later server process (``dpcore warm``)."""
    _storing.on = True
    try:
        yield
    finally:
        _storing.on = False


@functools.lru_cache(maxsize=1)
def _source_digest():
    """A digest of the dashboard's source (every chart's helpers and sentences live in ui/)."""
    h = hashlib.sha256(plotly.__version__.encode())
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _spec_key(module, name, args, kwargs):
    """The store key of a figure: its builder, its inputs (pickled, values and types), the
    dashboard's source and plotly's version; None for inputs that cannot be pickled."""
    try:
        inputs = pickle.dumps((module, name, args, sorted(kwargs.items())), protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return hashlib.sha256(_source_digest().encode() + inputs).hexdigest()


def stored_count(store: ResultStore) -> int:
    """How many figures ``store`` (a :class:`dpcore.store.ResultStore`) holds."""
    return store.count(_SPEC)


def figure(builder: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> SharedFigure:
    """``builder(*args, **kwargs)`` from the shared cache (or the results store); ``builder`` is
    a figure builder of one of :data:`TEACHING_CHARTS` (a chart, or a compute module's builder
    that reads its own data)."""
    if builder.__module__ not in TEACHING_CHARTS:
        raise ValueError(f"only teaching charts are shared, not {builder.__module__}")
    return _build(builder.__module__, builder.__name__, args, kwargs)


# --------------------------------------------------------------------------------------------
# Showing a chart: the one place every page's charts pass through


def show(
    fig: go.Figure,
    *,
    key: str,
    alt: str | None = None,
    numbers: bool | Literal["page"] = True,
    where: DeltaGenerator | None = None,
) -> None:
    """Draw ``fig`` the way every chart of the app is drawn, with its text alternative.

    The chart is a figure named by a sentence (``alt``, or :func:`describe`'s: what it shows)
    instead of an image named by its tick labels, and its numbers can be downloaded: with
    ``numbers=True`` a small download under it (:func:`table`, built on click); with
    ``numbers="page"`` the page's own download just below it (the sentence says so);
    ``numbers=False`` for a chart whose numbers must not leave the page (an uploaded trial's:
    privacy rules 5 and 7). No toolbar (:data:`~dpcore_app.ui.common.charts.CONFIG`).
    ``where``: a column or container to draw in (default: the current one).
    """
    where = st if where is None else where
    own = numbers is True and _numbers.__dict__.get("on", True)
    # a plain figure's dict is a deep copy that st.plotly_chart makes again: only when needed
    sentence = alt or describe(fig.to_dict())
    if own or numbers == "page":
        sentence += " Its numbers: the CSV download below the chart."
    where.plotly_chart(fig, width="stretch", key=key, config=CONFIG, alt=sentence)
    if own:
        where.download_button(
            "Numbers (CSV)",
            # through the formula guard: with no path, the CSV text
            lambda: write_csv(table(fig.to_dict()), index=False),
            f"{key}.csv",
            "text/csv",
            key=f"{key}_numbers",
            on_click="ignore",
            type="tertiary",
            icon=":material/download:",
        )


_numbers = threading.local()  # .on: False while a page shows numbers it will replace


@contextmanager
def numbers(on: bool = True) -> Iterator[None]:
    """Inside this block (in this thread), :func:`show` offers no download when ``on`` is False:
    a first estimate, drawn while the final numbers compute, is not a file to keep."""
    before = _numbers.__dict__.get("on", True)
    _numbers.on = on
    try:
        yield
    finally:
        _numbers.on = before


_TAG = re.compile(r"<[^>]+>")


def _text(value):
    """A title or label as plain words (plotly's <br>, <sub>, <b> tags removed)."""
    if isinstance(value, dict):
        value = value.get("text")
    return " ".join(_TAG.sub(" ", str(value or "")).split())


def describe(spec: Mapping[str, Any]) -> str:
    """One sentence of what a chart shows, from its figure dict: its title, what is drawn
    against what, and the names of its series."""
    layout = spec.get("layout", {})
    title = _text(layout.get("title"))
    x = _text(layout.get("xaxis", {}).get("title"))
    y = _text(layout.get("yaxis", {}).get("title"))
    names = list(dict.fromkeys(_text(t.get("name")) for t in spec.get("data", []) if t.get("name")))
    parts = [f"Chart: {title}." if title else "Chart."]
    if x and y:
        parts.append(f"{y[0].upper() + y[1:]} against {x}.")
    elif x or y:
        parts.append(f"Along the axis: {x or y}.")
    if names:
        parts.append("Series: " + "; ".join(names) + ".")
    return " ".join(parts)


def _values(data):
    """A plotly array as a 1-d numpy array: a list, a numpy array, or its base64 encoding."""
    if data is None:
        return None
    if isinstance(data, dict) and "bdata" in data:
        values = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = data.get("shape")
        if shape:
            values = values.reshape([int(n) for n in str(shape).split(",")])
        return values
    return np.asarray(data, dtype=object)


def table(spec: Mapping[str, Any]) -> pd.DataFrame:
    """The numbers a chart draws, one row per point: series, x, y (z for a heat map), and the
    95% band's low and high where the chart has one (:func:`charts.band`'s filled outline, or
    an error bar). Read off the figure itself, so the file and the picture cannot disagree."""
    layout = spec.get("layout", {})
    xname = _text(layout.get("xaxis", {}).get("title")) or "x"
    yname = _text(layout.get("yaxis", {}).get("title")) or "y"
    traces = spec.get("data", [])
    bands = {}  # legend group -> (x, low, high) of its filled band
    for t in traces:
        if t.get("fill") == "toself" and not t.get("name") and t.get("legendgroup"):
            x, y = _values(t.get("x")), _values(t.get("y"))
            if x is not None and y is not None and len(x) == len(y) and len(x) % 2 == 0:
                half = len(x) // 2
                bands[t["legendgroup"]] = (x[:half], y[half:][::-1], y[:half])
    frames = []
    for t in traces:
        name = _text(t.get("name")) or _text(t.get("legendgroup"))
        x, y = _values(t.get("x")), _values(t.get("y"))
        if t.get("type") == "heatmap":
            z = _values(t.get("z"))
            if z is None:
                continue
            z = np.asarray(z, dtype=float)
            xs = x if x is not None else np.arange(z.shape[1])
            ys = y if y is not None else np.arange(z.shape[0])
            grid_x, grid_y = np.meshgrid(np.asarray(xs), np.asarray(ys))
            frames.append(
                pd.DataFrame(
                    {"series": name, xname: grid_x.ravel(), yname: grid_y.ravel(), "z": z.ravel()}
                )
            )
            continue
        if t.get("fill") == "toself" and not t.get("name"):
            continue  # a band: its numbers go beside its line (below)
        if x is None and y is None:
            continue
        if x is None or y is None:  # a histogram: its values
            values = x if x is not None else y
            frames.append(pd.DataFrame({"series": name, "value": [_plain(v) for v in values]}))
            continue
        n = min(len(x), len(y))
        frame = pd.DataFrame(
            {"series": name, xname: [_plain(v) for v in x[:n]], yname: [_plain(v) for v in y[:n]]}
        )
        band = bands.get(t.get("legendgroup"))
        error = t.get("error_y") or {}
        if band is not None and len(band[0]) == n:
            frame["low (95%)"], frame["high (95%)"] = band[1], band[2]
        elif error.get("array") is not None:
            up = np.asarray(_values(error.get("array")), dtype=float)
            down = error.get("arrayminus")
            down = up if down is None else np.asarray(_values(down), dtype=float)
            if len(up) == n:
                mean = np.asarray(frame[yname], dtype=float)
                frame["low (95%)"], frame["high (95%)"] = mean - down[:n], mean + up[:n]
        frames.append(frame)
    if not frames:
        return pd.DataFrame({"series": []})
    return pd.concat(frames, ignore_index=True)


def _plain(value):
    """A category label as words (plotly's <br> tags gone), a number as it is."""
    return _text(value) if isinstance(value, str) else value
