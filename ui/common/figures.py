"""Figures built once per distinct input and shared by every session of the server.

A plotly figure takes 10-40 ms to build here (most of it in ``update_layout``'s validation;
more in a process that has built none yet) and a page shows four to six, while ``st.plotly_chart`` only reads the figure it is given; so a rerun rebuilds
just the charts whose inputs changed. ``st.plotly_chart`` then asks the figure for its dict on
every rerun (a deep copy, a few ms per chart); a shared figure is never changed, so it hands
out the dict it had when built. Only for charts of simulated or demo data: a figure of
uploaded data must never be shared across sessions (privacy rule 4).
"""

from __future__ import annotations

import importlib
import pickle
import threading
import time
from contextlib import contextmanager

import pandas as pd
import plotly.graph_objects as go
import streamlit as st


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


def _frame_key(frame):
    """A frame's pickle: it holds every value, dtype and label, and takes a tenth of the time
    of Streamlit's own frame hashing (a different layout of equal data only costs a rebuild)."""
    return pickle.dumps(frame, protocol=5)


# A class of 30 moving ε and n reaches every (ε, n, metric) of a page: keep them all.
@st.cache_resource(max_entries=2048, show_spinner=False,
                   hash_funcs={pd.DataFrame: _frame_key, pd.Series: _frame_key})
def _build(module, name, args, kwargs):
    return SharedFigure.freeze(getattr(importlib.import_module(module), name)(*args, **kwargs))


#: The chart modules of simulated or demo data, whose figures may be shared between sessions
#: (not ui.upload.charts: those draw an uploaded trial).
TEACHING_CHARTS = frozenset({"ui.owl.charts", "ui.cvar.charts", "ui.bounds.charts",
                             "ui.overview.charts", "ui.upload.preview_charts"})
_asked = [0.0]  # when a session last asked for a figure (time.monotonic)
_background = threading.local()  # .quiet: this thread builds only while sessions are quiet


@contextmanager
def in_background(quiet=0.3, poll=0.05):
    """Figures asked for inside this block (in this thread) wait, before each one, until no
    session has asked for a figure for ``quiet`` seconds: a warm-up yields the interpreter to
    the sessions (their script threads share one GIL with it) and builds in the gaps."""
    _background.quiet, _background.poll = quiet, poll
    try:
        yield
    finally:
        del _background.quiet, _background.poll


def figure(builder, *args, **kwargs):
    """``builder(*args, **kwargs)`` from the shared cache; ``builder`` is a chart function of
    one of :data:`TEACHING_CHARTS`."""
    if builder.__module__ not in TEACHING_CHARTS:
        raise ValueError(f"only teaching charts are shared, not {builder.__module__}")
    quiet = getattr(_background, "quiet", None)
    if quiet is None:
        _asked[0] = time.monotonic()
    else:
        while time.monotonic() - _asked[0] < quiet:
            time.sleep(_background.poll)
    return _build(builder.__module__, builder.__name__, args, kwargs)
