"""Errors become a clear message on the page, never a traceback.

Streamlit's control flow (st.rerun, st.stop) raises BaseException subclasses, which pass
through untouched.
"""

from __future__ import annotations

import functools
import logging
from contextlib import contextmanager

import streamlit as st

_LOG = logging.getLogger(__name__)


@contextmanager
def friendly_errors(what="This view"):
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the user gets the message, the log gets the type
        _LOG.error("%s failed: %s", what, type(exc).__name__)
        st.error(f"{what} could not be computed: {exc}. Change a setting and try again; "
                 "your other settings are kept.", icon=":material/error:")


def guarded(what):
    """Decorator form of :func:`friendly_errors`, for fragments."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with friendly_errors(what):
                return fn(*args, **kwargs)
        return inner
    return wrap
