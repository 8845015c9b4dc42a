"""Presets: whole states of a page's controls, offered in one popover whose label names the
active one; a choice sets every control (and the link with them) and closes the popover."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import streamlit as st

from dpcore_app.ui.common.controls import Control
from dpcore_app.ui.common.link import same_value, set_state, value_of, whole_state


def presets(
    specs: Iterable[Control], overrides: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Whole states: every control in ``specs`` at its default, then the preset's values, so a
    preset never lands on top of whatever came before (a link is read the same way)."""
    return {label: whole_state(specs, values) for label, values in overrides.items()}


def active(presets_: Mapping[str, Mapping[str, Any]], specs: Iterable[Control]) -> str | None:
    """The label of the preset the controls are at now, or None."""
    now = {c.key: value_of(c) for c in specs}
    for label, values in presets_.items():
        if all(same_value(now[k], v) for k, v in values.items()):
            return label
    return None


def presets_menu(
    presets_: Mapping[str, Mapping[str, Any]],
    specs: Iterable[Control],
    announce: bool = False,
    key: Callable[[int, str], str] = lambda i, label: f"preset_{i}",
) -> str | None:
    """The presets as buttons in one popover whose label names the active preset (or says the
    settings are custom): one element above the charts instead of a row of buttons and a
    caption; a choice closes it. ``announce``: a preset's label is announced with the verdict (see :func:`apply`).
    Returns the active preset's label or None."""
    now = active(presets_, specs)
    with st.popover(
        f"Preset: {now}" if now else "Presets (now: custom settings)",
        icon=":material/tune:",
        key=f"presets_{st.session_state.get(_CHOSEN, 0)}",  # a new key after a choice: closed
    ):
        for i, (label, values) in enumerate(presets_.items()):
            st.button(
                label,
                on_click=apply,
                args=(values, label if announce else None),
                width="stretch",
                key=key(i, label),
                type="primary" if label == now else "secondary",
            )
        st.caption(
            (f"Active preset: **{now}**. " if now else "Custom settings (no preset). ")
            + "A preset sets every control of the study, the simulation settings to their defaults."
        )
    return now


@contextmanager
def presets_above(
    presets_: Mapping[str, Mapping[str, Any]], specs: Iterable[Control], **menu: Any
) -> Iterator[None]:
    """A bordered box for the controls drawn inside the ``with`` block, and the presets' menu
    (:func:`presets_menu`, with ``menu``'s keywords) above it. The menu is filled after the
    controls, so that its label names the preset the controls are at now."""
    box = st.container()
    with st.container(border=True):
        yield
    with box:
        presets_menu(presets_, specs, **menu)


_CHOSEN = "_presets_chosen"  # how many presets this session chose: the popover's key


def apply(values: Mapping[str, Any], label: str | None = None) -> None:
    """on_click of a preset: set the whole state and close the menu (it would stay open over
    the answer the preset changed); the page may announce ``label`` once the numbers are in
    (on a phone the verdict may be off-screen)."""
    set_state(values)
    st.session_state[_CHOSEN] = st.session_state.get(_CHOSEN, 0) + 1
    if label:
        st.session_state["_preset_toast"] = label
