"""Errors become a clear message on the page, never a traceback.

Streamlit's control flow (st.rerun, st.stop) raises BaseException subclasses, which pass
through untouched.
"""

from __future__ import annotations

import functools
import logging
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import streamlit as st

_LOG = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def friendly_errors(what: str = "This view", sensitive: bool = False) -> Iterator[None]:
    """Show a caught error as a message; log it with its traceback for the maintainers.

    ``sensitive``: the view works on uploaded data, whose values an error message may quote,
    and uploaded data never reach the logs; the log then keeps the error's type and the
    traceback's frames, not its message.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the user gets the message, the log the traceback
        if sensitive:
            log_withheld(what, exc)
        else:
            _LOG.exception("%s failed", what)
        st.error(
            plain(
                f"{what} could not be computed: {exc}. Change a setting and try again; "
                "your other settings are kept."
            ),
            icon=":material/error:",
        )


def log_withheld(what: str, exc: BaseException) -> None:
    """Log an error on uploaded data: its type and traceback frames, never its message."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    _LOG.error(
        "%s failed with %s (message withheld: uploaded data)\n%s", what, type(exc).__name__, frames
    )


def guarded(what: str, sensitive: bool = False) -> Callable[[F], F]:
    """Decorator form of :func:`friendly_errors`, for fragments."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            with friendly_errors(what, sensitive):
                return fn(*args, **kwargs)

        return cast(F, inner)

    return wrap


_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&@])")
_AUTOLINK = re.compile(r"(://|(?i:www)\.|@)")  # what GFM turns into links even when escaped
_BREAK = "\u200b"  # zero-width space: invisible, but no scheme, www. or e-mail can match


#: Unicode's bidirectional controls: one in a value shown back (a link's, a file's) would
#: reverse the rest of the sentence around it.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: object) -> str:
    """Text shown as text: every character markdown (or Streamlit's :directives:) could read
    as markup is backslash-escaped, URLs and e-mail addresses are broken up invisibly so they
    are not turned into links, line breaks become spaces, and a bidirectional control is
    shown by its code point (U+202E) instead of reordering the sentence."""
    text = " ".join(str(text).split())
    text = _BIDI.sub(lambda m: f"⟨U+{ord(m.group(0)):04X}⟩", text)
    text = _AUTOLINK.sub(lambda m: m.group(0)[0] + _BREAK + m.group(0)[1:], text)
    return _MARKUP.sub(r"\\\1", text)
