"""Shared widgets, each bound to the URL so that a link reproduces the view.

Streamlit drops a URL value it cannot use and silently falls back to the default; the
helpers here check the URL first so the user is told which parameter was ignored and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

EPS_OPTIONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0,
               1000.0, math.inf)
N_OPTIONS = (100, 200, 300, 500, 800, 1000, 1500, 2000, 2500, 3000, 4000, 5000)
H_OPTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0)


def fmt_eps(eps):
    """ε as a short label: 0.05, 1, 1000, or "non-private"."""
    return "non-private" if math.isinf(eps) else f"{eps:g}"


def fmt_number(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Choice:
    """A widget with a finite list of options (select_slider, selectbox, radio, segmented).

    ``fmt`` is the widget's format_func: Streamlit writes the formatted label to the URL, so
    labels are what a link carries and what the check accepts.
    """

    key: str
    options: tuple
    default: object
    label: str
    fmt: callable = fmt_number

    def problem(self, raw):
        allowed = [self.fmt(o) for o in self.options]
        if raw in allowed:
            return None
        shown = ", ".join(allowed) if len(allowed) <= 8 else f"{allowed[0]} … {allowed[-1]}"
        return f"{self.label} must be one of {shown}"


@dataclass(frozen=True)
class IntRange:
    """An integer slider or number input.

    Like Streamlit, a number with a fraction is truncated (gamma=10.5 gives 10); a value
    outside [low, high] or not a number is ignored.
    """

    key: str
    low: int
    high: int
    default: int
    label: str

    def problem(self, raw):
        try:
            value = float(raw)
        except ValueError:
            return f"{self.label} must be a number"
        if not self.low <= value <= self.high:
            return f"{self.label} must be between {self.low} and {self.high}"
        return None


@dataclass(frozen=True)
class MultiChoice(Choice):
    """A multiselect: the URL repeats the parameter once per chosen label (n=200&n=500)."""

    def problem(self, raw):
        allowed = [self.fmt(o) for o in self.options]
        bad = [v for v in raw if v not in allowed]
        return f"{self.label} accepts only {', '.join(allowed)}, one parameter each" if bad else None


def check_url_params(params):
    """Drop URL parameters the page's widgets cannot use, with a notice naming each one.

    Must run before the widgets are created. Returns the list of notices shown.
    """
    notices = []
    for spec in params:
        if spec.key not in st.query_params:
            continue
        multi = isinstance(spec, MultiChoice)
        values = st.query_params.get_all(spec.key)
        if multi:
            raw, reason = "&".join(values), spec.problem(values)
        elif len(values) > 1:
            raw, reason = "&".join(values), f"{spec.key} was given {len(values)} times"
        else:
            raw, reason = values[0], spec.problem(values[0])
        if reason:
            del st.query_params[spec.key]
            default = (", ".join(spec.fmt(v) for v in spec.default) if isinstance(spec, MultiChoice)
                       else getattr(spec, "fmt", fmt_number)(spec.default))
            notices.append(f"Ignored the link's `{spec.key}={raw[:40]}`: {reason}. Using the default, {default}.")
    for text in notices:
        st.warning(text, icon=":material/link_off:")
    return notices


def segmented(spec, help=None):
    return st.segmented_control(spec.label, spec.options, format_func=spec.fmt, key=spec.key,
                                bind="query-params", required=True, help=help)


def radio(spec, help=None):
    return st.radio(spec.label, spec.options, format_func=spec.fmt, key=spec.key,
                    bind="query-params", horizontal=True, help=help)


def select_slider(spec, help=None, **kwargs):
    return st.select_slider(spec.label, options=spec.options, value=spec.default,
                            format_func=spec.fmt, key=spec.key, bind="query-params", help=help,
                            **kwargs)


def int_input(spec, step=1, help=None):
    return st.number_input(spec.label, spec.low, spec.high, spec.default, step=step, key=spec.key,
                           bind="query-params", help=help)
