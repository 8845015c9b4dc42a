"""What makes the dashboard readable in both themes and operable by keyboard where Streamlit's
options do not reach: one constant stylesheet and script (no user input in either), sent by
app.py on every run and installed once per browser tab.

- Chart text takes the theme's text colour. Streamlit's Plotly theme draws ticks and axis titles
  in a fixed grey (#808495: 3.7:1 on the light theme's white, under WCAG's 4.5:1), and no single
  colour reaches 4.5:1 on both the light and the dark background, so a figure cannot carry one;
  ``currentColor`` is the text colour of whichever theme is showing, switched live with it.
- A slider's value and a segmented control's chosen option take the text colour too, not the
  theme's primary red: in the dark theme no red reaches 4.5:1 both as text on the background
  (Streamlit's #cf4250: 3.9:1) and under the white text of a primary button (4.6:1), and the
  theme has one primary colour for both. The chosen option keeps its red border and tint.
- A chart named by a sentence (figures.show) hides its drawing from assistive technology, whose
  name would otherwise be its tick labels read one after another.
- A popover behaves as the dialog it says it is (role="dialog"): opening it moves the focus to
  its first control (Streamlit draws its body at the end of the page, about 60 Tab presses
  away), Tab past its last control (or Shift+Tab before its first) closes it, and when it closes
  with the focus inside (a preset chosen) the focus returns to its button.
"""

from __future__ import annotations

import streamlit as st

STYLE = """<style>
[data-testid="stPlotlyChart"] .main-svg text:not(.hoverlayer text) { fill: currentColor !important; }
[data-testid="stSliderThumbValue"],
[data-testid="stButtonGroup"] [aria-checked="true"] { color: inherit !important; }
</style>"""

SCRIPT = """<script>(() => {
  if (window.__dpcoreAccess) return;  // st.html is not in an iframe: once per tab
  window.__dpcoreAccess = true;
  const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select, textarea, '
    + '[tabindex]:not([tabindex="-1"])';
  const BUTTONS = '[data-testid="stPopoverButton"]';
  const controls = (body) => [...body.querySelectorAll(FOCUSABLE)]
    .filter((e) => e.getClientRects().length > 0);
  let opener = -1;  // the open popover's button, as its index among the page's popover buttons
  const button = () => document.querySelectorAll(BUTTONS)[opener];
  const sync = () => {
    for (const plot of document.querySelectorAll(
      '[data-testid="stPlotlyChart"][aria-label] > .js-plotly-plot:not([aria-hidden])'))
      plot.setAttribute("aria-hidden", "true");
    const body = document.querySelector('[data-testid="stPopoverBody"]');
    if (body && !body.__dpcoreSeen) {
      body.__dpcoreSeen = true;
      const open = document.querySelector(BUTTONS + '[aria-expanded="true"]');
      opener = [...document.querySelectorAll(BUTTONS)].indexOf(open);
      const first = controls(body)[0];
      if (first) first.focus();
    } else if (!body && opener >= 0) {
      const lost = !document.activeElement || document.activeElement === document.body;
      if (lost && button()) button().focus();
      opener = -1;
    }
  };
  new MutationObserver(sync).observe(document.body, {childList: true, subtree: true});
  document.addEventListener("keydown", (event) => {
    const body = document.querySelector('[data-testid="stPopoverBody"]');
    if (event.key !== "Tab" || !body || !body.contains(document.activeElement)) return;
    const items = controls(body);
    if (document.activeElement !== items[event.shiftKey ? 0 : items.length - 1]) return;
    event.preventDefault();
    const back = button();
    if (back) { back.click(); back.focus(); }
  }, true);
})();</script>"""


def install() -> None:
    """Once per run, from app.py (in the sidebar, where it takes no room in a page)."""
    with st.sidebar:
        st.html(STYLE + SCRIPT, unsafe_allow_javascript=True, width="content")
