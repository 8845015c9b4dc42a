"""A page's link: what its controls hold in this session, and the address that reproduces it.

A page owns its widgets' session state (``dp-owl.eps``); links use the short names
(``?eps=1``). Before a page creates its widgets, :func:`check_link` reads a newly arrived link
and sets the page's whole state from it (named controls to the link's values, a default
included, the others to their defaults); a value that is not exactly one the widget could have
written is replaced by the value actually used, in the address bar too, and a notice names
both. The address then follows the widgets (:func:`write_link`); :func:`history_guard` keeps
one browser history entry per page visit. The controls themselves are the specs of
:mod:`dpcore_app.ui.common.controls`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlencode

import streamlit as st

from dpcore_app.ui.common.safety import plain

if TYPE_CHECKING:
    from dpcore_app.ui.common.controls import Control

_SHOWN = 40  # characters of a link's value echoed in a notice


_SCOPE = "_link_scope"  # the page whose controls this session's widgets belong to
#: Session key of each widget's last value that was not None, by its state key: what a control
#: holds while the browser hands its widget a transient empty value.
LAST_GOOD = "_last_good"
_PAGES: dict = {}  # page -> its controls (the same specs in every session)


def state_key(name: str, page: str | None = None) -> str:
    """The session-state key of the control written ``name`` in a link: the page's own
    (``dp-owl.eps``), so a value set on one page never reaches another page's widget."""
    page = st.session_state.get(_SCOPE) if page is None else page
    return f"{page}.{name}" if page else name


def value_of(spec: Control) -> Any:
    """The control's current value on this page (its default before the widget exists)."""
    value = st.session_state.get(spec.state_key)
    if value is None:
        return st.session_state.get(LAST_GOOD, {}).get(spec.state_key, spec.default)
    return spec.held(value)


def whole_state(specs: Iterable[Control], values: Mapping[str, Any]) -> dict[str, Any]:
    """Every control in ``specs`` at its default, then ``values``: a state that owes nothing to
    what came before (what a preset and a link both set)."""
    return {**{c.key: c.default for c in specs}, **values}


def set_state(values: Mapping[str, Any]) -> None:
    """From a callback (a preset, a tuned γ): set controls of the current page by their link
    names, and write the address to match."""
    _assign(values)
    write_link()


def _assign(values):
    """Controls' values by link name into this page's keys (before the widgets exist, or from a
    callback); a transient value kept for a widget that came back empty is forgotten."""
    good = st.session_state.setdefault(LAST_GOOD, {})
    for name, value in values.items():
        st.session_state[state_key(name)] = list(value) if isinstance(value, tuple) else value
        good.pop(state_key(name), None)


def link_params(specs: Iterable[Control] | None = None, complete: bool = False) -> dict[str, Any]:
    """The current page's state as URL parameters: the values that differ from their defaults
    (the address bar), or every control (``complete``: a link on paper that must not depend on
    what the defaults are one day)."""
    specs = _PAGES.get(st.session_state.get("_link_page"), ()) if specs is None else specs
    params = {}
    for spec in specs:
        value = value_of(spec)
        if complete or not same_value(value, spec.default):
            params[spec.key] = spec.to_url(value)
    return params


def write_link() -> None:
    """Make the address bar read the current page's state (after a widget moved, a preset).

    A public st.query_params edit; :func:`history_guard` makes the browser replace the history
    entry instead of adding one, so Back leaves the page rather than undoing a slider."""
    page = st.session_state.get("_link_page")
    if page not in _PAGES:
        return
    params = link_params()
    st.session_state.pop(
        "_link_pending", None
    )  # the widgets' state supersedes a pending correction
    if _as_lists(params) != _current():
        st.query_params.from_dict(params)
    st.session_state.setdefault("_link_seen", {})[page] = _as_lists(params)


_GUARD = """<script>(() => {
  const h = window.history;  // st.html is not in an iframe: this is the app's own history
  if (h.__dpcoreReplace) return;
  const push = h.pushState.bind(h);
  h.pushState = (state, title, url) => {
    const next = new URL(url, window.location.href);
    // Same page, new parameters: a link's correction or a widget's value. Replace the entry,
    // so one Back press leaves the view. A new page still adds an entry.
    return next.pathname === window.location.pathname ? h.replaceState(state, title, url)
                                                       : push(state, title, url);
  };
  h.__dpcoreReplace = true;
})();</script>"""


def history_guard() -> bool:
    """Once per run, from app.py: the browser keeps one history entry per page visit.

    Streamlit's browser side adds a history entry whenever the server changes the query string
    (it replaces the entry only for a bound widget the user moved, or during Back/Forward).
    This constant script (no user input in it) turns a same-page entry into a replacement.
    Returns whether it was sent in an earlier run, i.e. whether the browser can have it now."""
    earlier = st.session_state.get("_history_guard_sent", False)
    with st.sidebar:
        st.html(_GUARD, unsafe_allow_javascript=True, width="content")
    st.session_state["_history_guard_sent"] = True
    st.session_state["_history_guard_ready"] = earlier
    return earlier


def check_link(controls: Sequence[Control], page: str | None = None) -> list[str]:
    """Read the link before the page's widgets exist; returns the notices shown.

    ``page`` scopes the controls' session-state keys (``dp-owl.eps``); the URL keeps the short
    names (``?eps=1``). When the address is new to this page (the page was just opened, by a
    link, the sidebar, Back or Forward, or a link in the app changed it), the link sets the
    whole state: every control it names takes that value (a default included) and every control
    it does not name its default. A value the widget could not have written is replaced by the
    value used, with a notice naming both, and the address is corrected in place (no new
    history entry). Otherwise (a rerun of the same view) the widgets keep their values.
    """
    st.session_state[_SCOPE] = page
    specs = {c.key: c for c in controls}
    here = page or ",".join(sorted(specs))
    _PAGES[here] = tuple(controls)
    raw, seen = _current(), st.session_state.setdefault("_link_seen", {})
    if not raw and seen.get(here) and st.session_state.get("_link_page") != here:
        # Back to this page from another by the sidebar (an address with no settings): the
        # page's last view in this session, not its defaults; the address then says it.
        raw = seen[here]
        if st.session_state.get("_history_guard_ready", False):
            st.query_params.from_dict(raw)
        else:
            _replace_address(raw)
            st.session_state["_link_pending"] = (here, raw)
    arrival = st.session_state.get("_link_page") != here or seen.get(here) != raw
    st.session_state["_link_page"] = here
    keep = st.session_state.pop("_keep_notices", False)  # a rerun the page asked for itself
    if not arrival:
        _rewrite_pending(here)
        notices = st.session_state.get("_link_notices", []) if keep else []
    else:
        notices, values, canonical = _read(specs, raw)
        _assign(whole_state(controls, values))  # what a preset does
        seen[here] = raw
        if canonical != raw:
            if st.session_state.get("_history_guard_ready", False):
                st.query_params.from_dict(canonical)
                seen[here] = canonical
            else:  # a tab's first run: the guard is not in the browser yet
                _replace_address(canonical)
                st.session_state["_link_pending"] = (here, canonical)
    st.session_state["_link_notices"] = notices
    for text in notices:
        st.warning(plain(text), icon=":material/link_off:")
    return notices


def _read(specs, raw):
    """(notices, values the link sets, the corrected address) from the link's parameters."""
    notices, values, canonical = [], {}, {}
    for key, given in raw.items():
        spec = specs.get(key)
        if spec is None:
            guess = difflib.get_close_matches(key, list(specs), n=1)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            notices.append(f"Ignored the link's unknown parameter {_quote(key)}{hint}.")
            continue
        value, problem = spec.from_url(given)
        values[key] = value
        if problem:
            notices.append(
                f"Ignored the link's {_quote(key + '=' + '&'.join(given))}: {problem}. "
                f"Using {_shown(spec, value)}."
            )
        if not (problem and same_value(value, spec.default)):  # a named value stays, a default too
            canonical[key] = _listed(spec.to_url(value))
    return notices, values, canonical


def _replace_address(params):
    """Correct the address bar in place from the browser (a tab's first run, before the guard
    is in place); the server's copy follows on the next run, without a new entry since the
    address then already reads the same. ``params`` are labels of the page's own options."""
    query = json.dumps(urlencode(params, doseq=True)).replace("<", "\\u003c")
    st.html(
        f"<script>window.history.replaceState(window.history.state, '', "
        f"window.location.pathname + ({query} ? '?' + {query} : ''));</script>",
        unsafe_allow_javascript=True,
        width="content",
    )


def _rewrite_pending(here):
    pending = st.session_state.get("_link_pending")
    if pending and pending[0] == here:
        del st.session_state["_link_pending"]
        if pending[1] != _current():
            st.query_params.from_dict(pending[1])
        st.session_state["_link_seen"][here] = pending[1]


def _current():
    return {k: st.query_params.get_all(k) for k in st.query_params}


def _as_lists(params):
    return {k: _listed(v) for k, v in params.items()}


def rerun() -> NoReturn:
    """st.rerun() for a page that reruns itself: the link's notices stay on screen."""
    st.session_state["_keep_notices"] = True
    st.rerun()


def same_value(value: Any, default: Any) -> bool:
    """Whether a control's value equals ``default`` (a multiple choice compared as a tuple)."""
    return tuple(value) == tuple(default) if isinstance(default, tuple) else value == default


def _listed(url_value):
    if url_value is None:
        return None
    return list(url_value) if isinstance(url_value, list) else [url_value]


def _shown(spec, value):
    words = spec.words(value)
    return f"the default, {words}" if same_value(value, spec.default) else words


def _quote(text):
    """A link's text as it will be echoed: shortened, one line, in plain quotes."""
    text = " ".join(str(text).split())  # newlines and tabs become spaces
    return "“" + (text if len(text) <= _SHOWN else text[:_SHOWN] + "…") + "”"
