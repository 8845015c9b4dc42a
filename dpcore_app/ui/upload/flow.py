"""The "Your data" page as the analyst's steps: data → dictionary and table → preview →
release → files.

Each step is a bordered box drawn in order from the start, so the whole path shows at once;
its heading says what it needs until it is done and then what it has. The page writes into
one step at a time (:meth:`Flow.at`); :meth:`Flow.close` must run when the page's run ends
(``try``/``finally``), so that nothing after it lands in a step's box.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from dpcore_app.ui.common.safety import plain

#: (title, what the step needs) in the analyst's order.
STEPS = (
    ("Data", "a trial CSV (or a demo file)"),
    (
        "Dictionary and table",
        "the columns' roles, the outcome's direction and the public bounds "
        "and levels (a data dictionary fills them)",
    ),
    (
        "Preview",
        "ε and γ; the private evaluation and the preview on a simulated twin are "
        "optional and spend nothing",
    ),
    ("Release", "the steps above; the release spends ε on this file, recorded in the ledger"),
    ("Files", "a release"),
)


class Flow:
    """The five steps' boxes; write into one with :meth:`at`, mark one done with :meth:`has`."""

    def __init__(self, steps: Iterable[tuple[str, str]] = STEPS) -> None:
        self._steps: list[tuple[Any, Any, str]] = []
        for number, (title, needs) in enumerate(steps, 1):
            box = st.container(border=True)
            head = box.empty()
            head.markdown(f"**{number} · {title}** · needs {needs}")
            self._steps.append((box, head, title))
        self._open: Any = None

    def at(self, number: int) -> None:
        """Write into step ``number`` (1-based) from now on."""
        self.close()
        box = self._steps[number - 1][0]
        box.__enter__()
        self._open = box

    def has(self, number: int, text: str) -> None:
        """Step ``number`` is done: its heading says what it has (plain text, escaped)."""
        _, head, title = self._steps[number - 1]
        head.markdown(f"**{number} · {title}** · :green[done]: {plain(text)}")

    def close(self) -> None:
        """Leave the step being written into (at the end of the page's run)."""
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None


def spend_text(spent: float, cap: float | None) -> str:
    """The spend on this file, as the first step shows it from the moment the file is keyed."""
    total = "∞ (no guarantee)" if spent == float("inf") else f"{spent:g}"
    return f"spent on this file so far: ε = {total} over every session" + (
        "" if cap is None else f" (cap ε = {cap:g})"
    )
