"""Control specs: every widget of every page, bound to the URL so that a link reproduces the view.

A spec knows its options, its default, how its values are written in a link and how to read
them back. Before a page creates its widgets, :func:`check_link` reads the link: a value that
is not exactly one the widget could have written is replaced (in the address bar and in what
the widget is seeded with) by the value actually used, and a notice names both. Widgets never
hand ``None`` to the computation.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from decimal import Decimal

import streamlit as st
from streamlit.errors import StreamlitAPIException

from .grids import fmt_number
from .safety import plain

_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")  # ASCII only: no ５００, 1_000
_SHOWN = 40  # characters of a link's value echoed in a notice


class Control:
    """What every spec has: ``key`` (the URL parameter), ``label``, ``default``, ``help``."""

    key: str
    label: str
    default: object
    help: str | None

    def to_url(self, value):
        """The URL value(s) the widget writes for ``value``."""
        return self.fmt(value)

    def from_url(self, raw):
        """(value, problem) from the link's values for this key; problem is None when valid."""
        raise NotImplementedError

    def widget(self, **kwargs):
        """Create the widget and return its value, never None."""
        value = self._create(**kwargs)
        last = st.session_state.setdefault("_last_good", {})
        if value is None:  # a transient empty value from the browser: keep the last good one
            return last.get(self.key, self.default)
        last[self.key] = value
        return value

    def _create(self, **kwargs):
        raise NotImplementedError

    def _single(self, raw):
        """The one value of a single-valued parameter, or a problem."""
        if len(raw) > 1:
            given = ", ".join(raw)
            return None, f"{self.label} was given {len(raw)} times ({given})"
        return raw[0], None


@dataclass(frozen=True)
class Choice(Control):
    """One of a finite list of options: select slider, segmented control, radio or selectbox.

    ``fmt`` is the widget's format_func; Streamlit writes the formatted label to the URL, so
    labels are what a link carries.
    """

    key: str
    options: tuple
    default: object
    label: str
    fmt: callable = fmt_number
    kind: str = "select_slider"
    help: str | None = None

    def from_url(self, raw):
        value, problem = self._single(raw)
        if problem:
            return self.default, problem
        labels = {self.fmt(o): o for o in self.options}
        if value in labels:
            return labels[value], None
        aliases = {ascii_form(label): o for label, o in labels.items() if not label.isascii()}
        if ascii_form(value) in aliases:  # x=eps_n_tau for x=εnτ
            return aliases[ascii_form(value)], None
        near = _nearest(self.options, value)
        if near is not None:
            if near == _number(value):  # the same number written another way (0.50, 1e0)
                return near, None
            return near, (f"{self.label} has no option {value.strip()}; the nearest on its grid is "
                          f"{self.fmt(near)}")
        shown = list(labels)
        allowed = ", ".join(shown) if len(shown) <= 8 else f"{shown[0]} … {shown[-1]}"
        return self.default, f"{self.label} must be one of {allowed}"

    def _create(self, **kwargs):
        common = dict(format_func=self.fmt, key=self.key, bind="query-params", help=self.help,
                      **kwargs)
        if self.kind == "select_slider":
            return st.select_slider(self.label, options=self.options, value=self.default, **common)
        if self.kind == "segmented":
            return st.segmented_control(self.label, self.options, default=self.default,
                                        required=True, **common)
        index = self.options.index(self.default)
        if self.kind == "radio":
            return st.radio(self.label, self.options, index=index, horizontal=True, **common)
        return st.selectbox(self.label, self.options, index=index, **common)


@dataclass(frozen=True)
class MultiChoice(Choice):
    """A multiselect: the URL repeats the parameter once per chosen label (n=200&n=500).

    An empty value (``compare=``) is the empty selection, which the widget itself writes.
    """

    kind: str = "multiselect"

    def to_url(self, value):
        return [self.fmt(v) for v in value] or [""]

    def from_url(self, raw):
        labels = {self.fmt(o): o for o in self.options}
        if raw in ([], [""]):
            return (), None
        good = [labels[v] for v in dict.fromkeys(raw) if v in labels]
        bad = [v for v in raw if v not in labels]
        if not bad:
            return tuple(good), None
        problem = f"{self.label} accepts only {', '.join(labels)}; {', '.join(bad)} is not one"
        return (tuple(good) if good else self.default), problem

    def _create(self, **kwargs):
        return tuple(st.multiselect(self.label, self.options, default=list(self.default),
                                    format_func=self.fmt, key=self.key, bind="query-params",
                                    help=self.help, **kwargs))


@dataclass(frozen=True)
class IntRange(Control):
    """A whole number in [low, high]: a number input, or a slider with ``kind="slider"``.

    A link may write it as 500, 500.0 or 5e2 (normalised to 500); fractions, non-ASCII digits,
    digit separators, infinities and values outside the range are refused.
    """

    key: str
    low: int
    high: int
    default: int
    label: str
    step: int = 1
    kind: str = "number"
    help: str | None = None

    def fmt(self, value):
        return str(int(value))

    def from_url(self, raw):
        value, problem = self._single(raw)
        if problem:
            return self.default, problem
        value = value.strip()
        if not _NUMBER.fullmatch(value):
            return self.default, f"{self.label} must be a whole number written with digits 0-9"
        number = Decimal(value)  # exact: 1e309 and a 400-digit number stay what they are
        if not self.low <= number <= self.high:
            return self.default, f"{self.label} must be between {self.low} and {self.high}"
        if number != number.to_integral_value():
            return self.default, f"{self.label} must be a whole number"
        return int(number), None

    def _create(self, **kwargs):
        common = dict(key=self.key, bind="query-params", help=self.help, step=self.step, **kwargs)
        if self.kind == "slider":
            return st.slider(self.label, self.low, self.high, self.default, **common)
        return st.number_input(self.label, self.low, self.high, self.default, **common)


_GREEK = {"ε": "eps", "τ": "tau", "γ": "gamma", "ρ": "rho", "λ": "lambda", "κ": "kappa",
          "δ": "delta", "Δ": "Delta", "θ": "theta", "α": "alpha", "√": "sqrt"}


def ascii_form(text):
    """A label as plain ASCII for a link: εnτ → eps_n_tau, √d → sqrt_d (case-insensitive)."""
    spelled = "".join(f"_{_GREEK[c]}_" if c in _GREEK else c for c in str(text))
    return re.sub(r"[^0-9a-z]+", "_", spelled.lower()).strip("_")


def _number(raw):
    """A finite number written with ASCII digits, or None."""
    raw = str(raw).strip()
    if not _NUMBER.fullmatch(raw):
        return None
    x = float(Decimal(raw))
    return x if math.isfinite(x) else None


def _nearest(options, raw):
    """The option nearest to a number inside the numeric options' range (log scale when all
    are positive), or None: off-grid values snap, values outside the grid do not."""
    x = _number(raw)
    numbers = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)
               and math.isfinite(o)]
    if x is None or not numbers or not min(numbers) <= x <= max(numbers):
        return None
    if min(numbers) > 0:
        return min(numbers, key=lambda o: abs(math.log(o / x)))
    return min(numbers, key=lambda o: abs(o - x))


def row(*controls, widths=None):
    """Controls side by side, one column each; returns their values in order."""
    values = []
    for column, control in zip(st.columns(widths or len(controls)), controls):
        with column:
            values.append(control.widget())
    return values


# --------------------------------------------------------------------------------------------
# Reading a link


def check_link(controls):
    """Read the link's parameters before the page's widgets exist; returns the notices shown.

    Every value is checked against its spec. A value the widget could not have written is
    replaced by the value used (the default, or the valid part of a multiselect), both in the
    address bar and in what the bound widget is seeded with, so the notice, the widgets and a
    reloaded link all agree. A value written another way (5e2 for 500) is rewritten in its
    widget's form. Parameters no control on this page reads are removed, with a notice.
    """
    specs = {c.key: c for c in controls}
    notices, edited = [], _restore_on_back(specs)
    for key in list(st.query_params):
        raw = st.query_params.get_all(key)
        spec = specs.get(key)
        if spec is None:
            guess = difflib.get_close_matches(key, list(specs), n=1)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            notices.append(f"Ignored the link's unknown parameter {_quote(key)}{hint}.")
            edited |= _set_link(key, None)
            continue
        value, problem = spec.from_url(raw)
        if problem:
            notices.append(f"Ignored the link's {_quote(key + '=' + '&'.join(raw))}: {problem}. "
                           f"Using {_shown(spec, value)}.")
        canonical = None if _same(value, spec.default) else spec.to_url(value)
        if problem or _listed(canonical) != raw:
            edited |= _set_link(key, canonical)
    if st.session_state.pop("_keep_notices", False):  # a rerun the page asked for itself
        notices = st.session_state.get("_link_notices", []) + notices
    st.session_state["_link_notices"] = notices
    if edited:  # the corrected address seeds the widgets only from the next run on
        tries = st.session_state.get("_link_reruns", 0)
        if tries < 2:  # never a loop: a correction that did not take goes the private way
            st.session_state["_link_reruns"] = tries + 1
            rerun()
        for key in list(st.query_params):
            if key not in specs or specs[key].from_url(st.query_params.get_all(key))[1]:
                _set_bound_link(key, None)
    st.session_state["_link_reruns"] = 0
    for text in notices:
        st.warning(plain(text), icon=":material/link_off:")
    _remember(specs)
    return notices


def rerun():
    """st.rerun() for a page that reruns itself: the link's notices stay on screen."""
    st.session_state["_keep_notices"] = True
    st.rerun()


def _remember(specs):
    """Keep this page's link (after corrections) for :func:`_restore_on_back`."""
    if specs:
        links = st.session_state.setdefault("_page_links", {})
        links[tuple(sorted(specs))] = {k: st.query_params.get_all(k) for k in specs
                                       if k in st.query_params}


def _restore_on_back(specs):
    """Back or Forward to an entry of this page without its parameters: restore the link the
    page last had in this session.

    Leaving a page makes the browser record the page's address stripped of its parameters, so
    Back would otherwise land on the defaults instead of the view the user left. Returns
    True when the page must rerun for the widgets to take the restored values.
    """
    if not specs or not _is_history_navigation():
        return False
    if any(k in st.query_params for k in specs):
        return False
    edited = False
    for key, values in st.session_state.get("_page_links", {}).get(tuple(sorted(specs)), {}).items():
        edited |= _set_link(key, values if len(values) > 1 or isinstance(specs[key], MultiChoice)
                            else values[0])
    return edited


def _is_history_navigation():
    """Whether this run is the browser's Back or Forward: Streamlit has no public API for it,
    so this reads ScriptRunContext.is_history_navigation (tests/ui/test_controls.py fails
    loudly if it moves; here a missing attribute only disables the restore)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx is not None and bool(getattr(ctx, "is_history_navigation", False))


def _same(value, default):
    return tuple(value) == tuple(default) if isinstance(default, tuple) else value == default


def _listed(url_value):
    if url_value is None:
        return None
    return list(url_value) if isinstance(url_value, list) else [url_value]


def _shown(spec, value):
    if isinstance(spec, MultiChoice):
        words = ", ".join(spec.fmt(v) for v in value) if value else "none"
    else:
        words = spec.fmt(value)
    return f"the default, {words}" if _same(value, spec.default) else words


def _quote(text):
    """A link's text as it will be echoed: shortened, one line, in plain quotes."""
    text = " ".join(str(text).split())  # newlines and tabs become spaces
    return "“" + (text if len(text) <= _SHOWN else text[:_SHOWN] + "…") + "”"


def _set_link(key, url_value):
    """Make ``key`` read ``url_value`` (None: absent) in the address bar and for the widget.

    Returns True when the caller must rerun. A parameter no widget is bound to yet (a link
    opened in a new session) is corrected with the public API: the edit rewrites the address
    the next run starts from, and Streamlit seeds bound widgets from that address, so a rerun
    before any widget exists finishes the job. Streamlit refuses that edit once a widget of
    this session is bound to the parameter (Back and Forward, a link followed inside the
    app); only then does :func:`_set_bound_link` touch private state.
    """
    try:
        if url_value is None:
            if key in st.query_params:
                del st.query_params[key]
        else:
            st.query_params[key] = url_value
    except StreamlitAPIException:
        _set_bound_link(key, url_value)
        return False
    return True


def _set_bound_link(key, url_value):
    """The one case public APIs cannot do: correct a parameter already bound to a widget.

    Streamlit seeds a bound widget from its snapshot of the URL (``_initial_query_params``)
    and corrects a bound parameter with remove_param / set_corrected_value (what it uses
    itself after clamping a value). tests/ui/test_controls.py fails if those move.
    """
    from streamlit.runtime.state import get_session_state

    with get_session_state().query_params() as qp:
        if url_value is None:
            qp.remove_param(key)
            qp._initial_query_params.pop(key, None)
        else:
            kind = "string_array_value" if isinstance(url_value, list) else "string_value"
            qp.set_corrected_value(key, url_value, kind)
            qp._initial_query_params[key] = _listed(url_value)


def details(label, key):
    """An expander whose content the page writes only while it is open (``if box.open:``):
    collapsed, it costs a rerun nothing. Opening or closing it reruns the page (or fragment)."""
    return st.expander(label, key=key, on_change="rerun")
