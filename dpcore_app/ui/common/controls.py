"""Control specs: every widget of every page, tied to the URL so that a link reproduces the view.

A spec knows its options, its default, how its values are written in a link and how to read
them back (:meth:`Control.from_url`, :meth:`Control.to_url`); its widget writes the address when
it moves (:func:`dpcore_app.ui.common.link.write_link`). Widgets never hand ``None`` to the
computation. What a page's controls hold in this session and what its link says live in
:mod:`dpcore_app.ui.common.link`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore_app.ui.common.grids import fmt_number
from dpcore_app.ui.common.link import LAST_GOOD, state_key, write_link

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_expander_container import ExpanderContainer

_NUMBER = re.compile(
    r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
)  # ASCII only: no ５００, 1_000


class Control:
    """What every spec has: ``key`` (the URL parameter), ``label``, ``default``, ``help``."""

    key: str
    label: str
    default: object
    help: str | None
    fmt: Callable[[Any], Any]

    def to_url(self, value: Any) -> Any:
        """The URL value(s) the widget writes for ``value``."""
        return self.fmt(value)

    def from_url(self, raw: list[str]) -> tuple[Any, str | None]:
        """(value, problem) from the link's values for this key; problem is None when valid."""
        raise NotImplementedError

    @property
    def state_key(self) -> str:
        """The widget's session-state key on the current page (see :func:`state_key`)."""
        return state_key(self.key)

    def widget(self, **kwargs: Any) -> Any:
        """Create the widget and return its value, never None."""
        value = self._create(
            key=self.state_key, on_change=write_link, **kwargs
        )  # the address follows
        last = st.session_state.setdefault(LAST_GOOD, {})
        if value is None:  # a transient empty value from the browser: keep the last good one
            return last.get(self.state_key, self.default)
        last[self.state_key] = value
        return value

    def held(self, value: Any) -> Any:
        """``value`` as the page holds it (a multiple choice as a tuple)."""
        return value

    def words(self, value: Any) -> str:
        """``value`` in words, as a notice names it."""
        return str(self.fmt(value))

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
    fmt: Callable[[Any], Any] = fmt_number
    kind: str = "select_slider"
    help: str | None = None

    def from_url(self, raw: list[str]) -> tuple[Any, str | None]:
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
            return near, (
                f"{self.label} has no option {value.strip()}; the nearest on its grid is "
                f"{self.fmt(near)}"
            )
        shown = list(labels)
        allowed = ", ".join(shown) if len(shown) <= 8 else f"{shown[0]} … {shown[-1]}"
        return self.default, f"{self.label} must be one of {allowed}"

    def _create(self, **kwargs):
        common = dict(format_func=self.fmt, help=self.help, **kwargs)
        if self.kind == "select_slider":
            return st.select_slider(self.label, options=self.options, value=self.default, **common)
        if self.kind == "segmented":
            return st.segmented_control(
                self.label, self.options, default=self.default, required=True, **common
            )
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

    def to_url(self, value: Any) -> list[str]:
        return [self.fmt(v) for v in value] or [""]

    def held(self, value: Any) -> tuple:
        return tuple(value)

    def words(self, value: Any) -> str:
        return ", ".join(self.fmt(v) for v in value) if value else "none"

    def from_url(self, raw: list[str]) -> tuple[Any, str | None]:
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
        return tuple(
            st.multiselect(
                self.label,
                self.options,
                default=list(self.default),
                format_func=self.fmt,
                help=self.help,
                **kwargs,
            )
        )


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

    def fmt(self, value: Any) -> str:
        return str(int(value))

    def from_url(self, raw: list[str]) -> tuple[Any, str | None]:
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
        common = dict(help=self.help, step=self.step, **kwargs)
        if self.kind == "slider":
            return st.slider(self.label, self.low, self.high, self.default, **common)
        return st.number_input(self.label, self.low, self.high, self.default, **common)


_GREEK = {
    "ε": "eps",
    "τ": "tau",
    "γ": "gamma",
    "ρ": "rho",
    "λ": "lambda",
    "κ": "kappa",
    "δ": "delta",
    "Δ": "Delta",
    "θ": "theta",
    "α": "alpha",
    "√": "sqrt",
}


def ascii_form(text: object) -> str:
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
    numbers = [
        o
        for o in options
        if isinstance(o, (int, float)) and not isinstance(o, bool) and math.isfinite(o)
    ]
    if x is None or not numbers or not min(numbers) <= x <= max(numbers):
        return None
    if min(numbers) > 0:
        return min(numbers, key=lambda o: abs(math.log(o / x)))
    return min(numbers, key=lambda o: abs(o - x))


def row(*controls: Control, widths: Sequence[float] | None = None) -> list[Any]:
    """Controls side by side, one column each; returns their values in order."""
    values = []
    for column, control in zip(st.columns(widths or len(controls)), controls):
        with column:
            values.append(control.widget())
    return values


def details(label: str, key: str, **expander: Any) -> ExpanderContainer:
    """An expander whose content the page writes only while it is open (``if box.open:``):
    collapsed, it costs a rerun nothing, and the browser loads nothing its elements need.
    Opening or closing it reruns the page (or fragment)."""
    return st.expander(label, key=key, on_change="rerun", **expander)
