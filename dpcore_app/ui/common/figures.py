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

import functools
import hashlib
import importlib
import pickle
import threading
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import plotly
import plotly.graph_objects as go
import streamlit as st

from dpcore.store import default_store


class SharedFigure(go.Figure):
    """A built figure, shared read-only: ``to_dict`` returns the dict computed once."""

    def to_dict(self):
        return self._shared_dict

    @classmethod
    def freeze(cls, fig):
        spec = fig.to_dict()
        fig.__class__ = cls  # the same object, its dict kept (plotly allows "_" attributes)
        fig._shared_dict = spec
        return fig

    @classmethod
    def from_spec(cls, spec):
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
#: (not dpcore_app.ui.upload.charts: those draw an uploaded trial).
TEACHING_CHARTS = frozenset(
    {
        "dpcore_app.ui.owl.charts",
        "dpcore_app.ui.cvar.charts",
        "dpcore_app.ui.bounds.charts",
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
def storing():
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


def stored_count(store):
    """How many figures ``store`` (a :class:`dpcore.store.ResultStore`) holds."""
    return store.count(_SPEC)


def figure(builder, *args, **kwargs):
    """``builder(*args, **kwargs)`` from the shared cache (or the results store); ``builder`` is
    a chart function of one of :data:`TEACHING_CHARTS`."""
    if builder.__module__ not in TEACHING_CHARTS:
        raise ValueError(f"only teaching charts are shared, not {builder.__module__}")
    return _build(builder.__module__, builder.__name__, args, kwargs)
