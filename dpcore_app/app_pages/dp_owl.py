"""DP-OWL: move ε, n, γ and h and watch what privacy costs a learned treatment rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import streamlit as st

from dpcore_app.ui.common import address, figures
from dpcore_app.ui.common.link import check_link, rerun, value_of
from dpcore_app.ui.common.presets import presets_menu
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.owl import compute, decide, explain, panels, tuning, view_model
from dpcore_app.ui.owl.controls import CONTROLS, PRESETS, REPS, SCALE, STATE
from dpcore_app.ui.owl.handout import view_report
from dpcore_app.ui.owl.sections import curves_panel, rule_panel, set_values, settings_panel

if TYPE_CHECKING:
    import pandas as pd
    from streamlit.delta_generator import DeltaGenerator

    from dpcore_app.ui.owl.decide_compute import Target
    from dpcore_app.ui.owl.view_model import State


@st.fragment
@guarded("The DP-OWL study")
def study() -> None:
    """The study: its settings, then the verdict, the curves, the rule and the downloads."""
    verdict_slot = st.container()  # filled once the numbers are in: the first thing under the title
    with st.container(horizontal=True):  # the presets and the target: two popovers, one row
        presets_box = st.container(
            width="content"
        )  # filled after the controls: it names the active one
        target = decide.target_widgets()
    s = settings_panel()
    with presets_box:
        presets_menu(PRESETS, STATE, announce=True)
    with st.expander(
        "What is simulated"
    ):  # one line, after the controls: the charts start on the first screen and the presets are the first stop
        st.markdown(explain.OWL_INTRO)
    work, args = view_model.workload(s)
    if work.notice:
        st.info(work.notice, icon=":material/speed:")
    bar = st.progress(0.0, text="Simulating…")
    refine = not compute.is_computed(work.sizes, *args) and work.reps > compute.QUICK_REPS
    # A first estimate from fewer repetitions while the full sweep runs: labelled, and without
    # the judgements about one release that fewer repetitions would change (decide_explain.FIRST).
    if refine:
        quick = (*args[:4], compute.QUICK_REPS, *args[5:])
        with figures.numbers(False):  # a first estimate's charts: no file of numbers to keep
            show(
                s,
                work.sizes,
                compute.sweeps(work.sizes, *quick, progress=bar.progress),
                target,
                verdict_slot,
                compute.QUICK_REPS,
                first=work.reps,
            )
    refining = (
        f"First estimate below, from {compute.QUICK_REPS} repetitions; refining to {work.reps}:"
    )
    results = compute.sweeps(
        work.sizes, *args, progress=bar.progress, what=refining if refine else "Simulating"
    )
    if refine:
        rerun()
    bar.empty()
    show(s, work.sizes, results, target, verdict_slot, work.reps)
    tuning.panel(s["n"], s["eps"], s["h"], s["W"], s["prep"], on_use=set_values)


def show(
    s: State,
    sizes: Sequence[int],
    results: Mapping[int, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    target: tuple[Target, float],
    verdict_slot: DeltaGenerator,
    reps: int,
    first: bool | int = False,
) -> None:
    """The view of ``results`` at the state ``s``: the verdict (in ``verdict_slot``), the
    curves, the cards and the rule; with the final numbers also the learners and downloads
    (``first``: a first estimate, from the repetitions of the final numbers or True)."""
    v = view_model.view(s, results, reps)
    with verdict_slot:  # above the controls, one line: a phone sees it first
        d = panels.verdict(s, v, target, reps, first)
    metric = curves_panel(s, sizes, v, reps, d)
    panels.verdict_detail(  # in full, below the charts it reads
        s, v.here, d, lambda needed: decide.offer_reps(needed, REPS, set_values)
    )
    panels.cards(
        s,
        v.here,
        v.best,
        v.runs.loc[v.runs.epsilon == s["eps"], "clipped_share"],
        "value" if value_of(SCALE) == "own" else "value_paper",
    )
    rule_panel(s, v.runs, metric, first)
    if not first:
        panels.learners(s)
        view_link = address.link("dp-owl")  # now: a download's callback has no address to read
        panels.downloads(
            results,
            v.all_summary,
            s,
            lambda: view_report(s, v, d, sizes, reps, view_link=view_link),  # on download
        )
        address.share("dp-owl")


st.title("DP-OWL: what privacy costs a treatment rule", anchor=False)  # presets: first stop
check_link(CONTROLS, page="dp-owl")
study()
