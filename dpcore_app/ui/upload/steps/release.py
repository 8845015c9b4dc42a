"""Step 4, Release: the verdict on what a release would spend, and the button. The release is
made by :func:`dpcore.release.release` from the Chosen dictionary and plan (as ``dpcore fit``, the
library and the rerun script make it), then recorded on the file's ledger before anything of
it is shown; past the file's cap it is dropped unseen. Hands on the last release made with the
current settings (a ``Released``), or None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from dpcore.privacy.composition import within_cap
from dpcore_app.ui.common import ledger
from dpcore_app.ui.common.explain import EPS_RANGE, epsilon_note
from dpcore_app.ui.upload import compute, explain, karm_compute

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from dpcore_app.ui.upload.flow import Flow
    from dpcore_app.ui.upload.steps import Chosen, Ready

RELEASE = "your_data_release"


def release(
    ready: Ready, chosen: Chosen, verdict: DeltaGenerator, flow: Flow
) -> compute.Released | None:
    """Step 4: the verdict on what the release would spend (in ``verdict``) and its button;
    the last release made with the current settings, or None."""
    flow.at(4)
    plan, trial = chosen.plan, ready.trial
    spent, cap = ledger.standing(ready.key)
    refused = not within_cap(spent, plan.cost, cap)
    (verdict.warning if refused else verdict.info)(
        explain.upload_verdict("ready", trial.n, plan.epsilon, spent, cap, plan.cost),
        icon=":material/block:" if refused else ":material/check_circle:",
    )
    if plan.cost > EPS_RANGE[1]:  # a weak promise to one patient: said before the release
        st.warning(epsilon_note(plan.cost, _seen(plan)), icon=":material/warning:")
    if st.button(_label(ready, chosen), type="primary", key="release", disabled=not chosen.ready):
        _release(ready, chosen)
    last = st.session_state.get(RELEASE)
    if last is None:
        return None
    if last.key != chosen.rkey:
        st.caption(explain.stale_release(last.release))
        return None
    _verdict(last, verdict)
    flow.has(4, f"{last.release.title()}, recorded as no. {last.receipt.index} in the ledger")
    return last


def _seen(plan):
    return "the rule and its evaluation" if plan.epsilon_eval is not None else "the rule"


def _label(ready, chosen):
    plan = chosen.plan
    if ready.kind == "all":
        head = f"Release the private rule over {len(ready.trial.arms)} arms"
    else:
        head = (
            "Release private rule" if chosen.settings["private"] else "Release rule (NOT PRIVATE)"
        )
    return f"{head} at ε = {plan.epsilon:g}" + (
        f", evaluated at ε_eval = {plan.epsilon_eval:g}" if plan.epsilon_eval else ""
    )


def _release(ready, chosen):
    where = "Your data" + (
        "; bounds confirmed by the analyst: values outside them clipped" if chosen.confirmed else ""
    )
    with st.spinner("Fitting the rule and adding its noise…"):
        if ready.kind == "all":
            made, rec = (
                karm_compute.make_arms_release(ready.source.data, chosen.dictionary, chosen.plan),
                None,
            )
        else:
            made, rec = compute.make_release(ready.source.data, chosen.dictionary, chosen.plan)
    # Recorded before anything of it is shown; past the cap it is dropped unseen.
    recorded = ledger.record(ready.key, made, where)
    if isinstance(recorded, str):
        st.error(recorded, icon=":material/block:")
        return
    made, receipt = recorded
    st.session_state[RELEASE] = compute.Released(
        compute.Release(
            made,
            label=str(chosen.settings.get("label", "")),
            overrides=tuple(ready.mapping.get("overrides", ())),
            time=np.datetime_as_string(np.datetime64("now"), unit="s") + "Z",
        ),
        rec,
        made.diagnostics,
        chosen.settings,
        made.trial,
        chosen.rkey,
        mapping=ready.mapping,
        receipt=receipt,
        evaluation=made.evaluation,
        preview=chosen.preview,
    )
    st.rerun()  # the sidebar's ledger shows the new total


def _verdict(last, verdict):
    release = last.release
    if last.over_all_arms:
        verdict.info(
            f"{release.title()}. {ledger.release_number(last.receipt)} "
            f"{epsilon_note(release.made.plan.cost)}",
            icon=":material/verified_user:",
        )
        return
    kind, said = explain.deploy_verdict(release, last.receipt.epsilon_total, last.evaluation)
    plan = release.made.plan
    if kind == "success" and plan.cost > EPS_RANGE[1]:
        kind = "warning"  # never green beside "an attacker can be almost certain"
    # The promise is the release's: the larger ε of the rule and its evaluation.
    getattr(verdict, kind)(
        f"{said} {ledger.release_number(last.receipt)} {epsilon_note(plan.cost, _seen(plan))}",
        icon=":material/verified_user:" if kind == "success" else ":material/balance:",
    )
