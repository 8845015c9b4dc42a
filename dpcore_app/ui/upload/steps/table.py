"""Step 2, Dictionary and table: the columns' roles, the outcome's direction, the design and the
public bounds and levels, then the trial read with them. Hands on a Ready trial, or None (the
verdict says what is still needed).

A trial whose dictionary lists more than two arms first chooses two of them (the two-arm path,
on the dictionary of those two) or a rule over all of them, whose settings all come from the
dictionary.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import streamlit as st

from dpcore.data.errors import TrialDataError
from dpcore_app.ui.common import ledger
from dpcore_app.ui.common.controls import row
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import compute, explain, form, karm, karm_compute
from dpcore_app.ui.upload.controls import BETTER, DESIGN, P_MIN, RATIOS
from dpcore_app.ui.upload.explain import DIRECTION_NEEDED
from dpcore_app.ui.upload.flow import spend_text
from dpcore_app.ui.upload.steps import Ready

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.flow import Flow


def table(source: Source, verdict: DeltaGenerator, flow: Flow) -> Ready | None:
    """Step 2: the roles, the design and the public metadata, then the trial read with them;
    ``verdict`` says what is still needed (or why the file could not be read)."""
    try:
        preview = compute.preview(source.digest, source.data)
        st.dataframe(compute.preview_frame(preview), hide_index=True, width="stretch")
        flow.at(2)
        source, mode = karm.arms_choice(source)
        if source is None:
            return None
        if mode == "all":
            return _all_arms(source, verdict, flow)
        return _two_arms(source, preview, verdict, flow)
    except (TrialDataError, compute.UploadTooLarge) as exc:
        verdict.warning(explain.upload_verdict("error"), icon=":material/error:")
        st.error(plain(exc), icon=":material/error:")
        return None


def _keyed(source, flow):
    """The file's ledger key (nothing stored until a release): the sidebar and the first step
    show the spend on this trial at once, before the table is filled."""
    key = ledger.dataset_key(source, name=source.name)
    flow.has(1, f"{source.name}; " + spend_text(*ledger.standing(key)))
    return key


def _two_arms(source, preview, verdict, flow):
    st.subheader("Columns", anchor=False)
    m = form.mapping(source, preview)
    if m is None:
        verdict.info(explain.upload_verdict("roles"), icon=":material/view_column:")
        return None
    form.fill_once_from_dictionary(source, m)
    larger, propensity, p_min, column = _design(source, preview.columns, m)
    key = _keyed(source, flow)
    st.subheader("Public metadata: bounds, levels, units", anchor=False)
    meta, from_data = form.metadata(source, m)
    if not meta.levels_ready:
        verdict.info(explain.upload_verdict("levels"), icon=":material/rule:")
        return None
    trial = compute.load_trial(*form.trial_args(source, m, column, meta))
    with st.expander(
        f"Analyst only: how the file was read (n = {trial.n}, the public row count; "
        "other counts are not covered by ε and never in a download)"
    ):
        st.caption(plain(compute.read_summary(trial)))
    needed = ([DIRECTION_NEEDED.rstrip(".")] if larger is None else []) + list(meta.problems)
    if needed:
        st.info(
            plain(
                "Still needed: "
                + "; ".join(needed[:5])
                + (f"; and {len(needed) - 5} more" if len(needed) > 5 else "")
            ),
            icon=":material/rule:",
        )
        stage = "bounds" if meta.problems else "direction"
        verdict.info(explain.upload_verdict(stage, trial.n), icon=":material/rule:")
        return None
    flow.has(2, f"n = {trial.n}, {len(trial.covariates)} covariates, every bound and level public")
    return Ready(
        source,
        "two",
        key,
        trial,
        dict(m, propensity_column=column, p_min=p_min),
        meta,
        from_data,
        larger,
        propensity,
        p_min,
    )


def _design(source, trial_columns, m):
    """Outcome direction and how treatment was assigned; returns (larger_is_better, π, p_min, column)."""
    better, design = row(BETTER, DESIGN)
    if better is None:
        st.warning(DIRECTION_NEEDED, icon=":material/swap_vert:")
    p_min, column = P_MIN.default, None
    if RATIOS[design] in ("column", "logistic"):
        p_min = P_MIN.widget()
    if design == "column":
        column = form.propensity_column(
            source, trial_columns, (m["treatment"], m["outcome"]) + m["covariates"]
        )
        if column is None:
            raise TrialDataError(explain.NO_PROPENSITY_COLUMN)
    if design == "estimated":
        st.caption(explain.ESTIMATED_PROPENSITY)
    return None if better is None else better == "larger", RATIOS[design], p_min, column


def _all_arms(source, verdict, flow):
    """A rule over all K arms: every setting is the dictionary's."""
    d = source.dictionary
    needed = karm_compute.missing(d)
    if needed:
        st.info(
            plain("Still needed in the data dictionary: " + "; ".join(needed[:5])),
            icon=":material/rule:",
        )
        verdict.info(
            "A rule over all arms takes every bound, the outcome's direction and "
            "the arms' design probabilities from the data dictionary.",
            icon=":material/rule:",
        )
        return None
    trial = karm_compute.load_arms_trial(source.digest, source.data, json.dumps(d, sort_keys=True))
    key = _keyed(source, flow)
    flow.has(
        2,
        f"n = {trial.n}, {len(trial.arms)} arms, {len(trial.covariates)} covariates, "
        "every bound from the dictionary",
    )
    return Ready(source, "all", key, trial)
