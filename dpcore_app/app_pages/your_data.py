"""Your data: upload a trial CSV, leave with a private treatment rule and an honest account."""

import streamlit as st

from dpcore.data.trial import TrialDataError
from dpcore.privacy.composition import parallel_cost, within_cap
from dpcore_app.ui.common import demos, ledger
from dpcore_app.ui.common.controls import check_link, row
from dpcore_app.ui.common.explain import epsilon_note
from dpcore_app.ui.common.safety import guarded, plain
from dpcore_app.ui.upload import analyst_panels as analyst
from dpcore_app.ui.upload import compute, explain, results, steps
from dpcore_app.ui.upload import form as upload_form
from dpcore_app.ui.upload import karm as upload_karm
from dpcore_app.ui.upload.controls import (
    BETTER,
    CONTROLS,
    DESIGN,
    EPS,
    FILE,
    GAMMA_FROM,
    P_MIN,
    PROXY,
    RATIOS,
)
from dpcore_app.ui.upload.explain import DIRECTION_NEEDED

RELEASE = "your_data_release"


def source_panel():
    """Pick a demo file or upload one, with its public dictionary (before or after the file);
    returns a Source (the dictionary attached) or None."""
    kind = FILE.widget()
    if kind != "upload":
        return demos.demo_source(kind)
    source = upload_form.uploaded_source()
    dictionary = analyst.dictionary_uploader()
    if source is None or dictionary is None:
        return source
    return upload_form.with_dictionary(source, dictionary)


def design_panel(source, trial_columns, m):
    """Outcome direction and how treatment was assigned; returns (larger_is_better, π, p_min, column)."""
    better, design = row(BETTER, DESIGN)
    if better is None:
        st.warning(DIRECTION_NEEDED, icon=":material/swap_vert:")
    p_min, column = P_MIN.default, None
    if RATIOS[design] in ("column", "logistic"):
        p_min = P_MIN.widget()
    if design == "column":
        column = upload_form.propensity_column(
            source, trial_columns, (m["treatment"], m["outcome"]) + m["covariates"]
        )
        if column is None:
            raise TrialDataError(explain.NO_PROPENSITY_COLUMN)
    if design == "estimated":
        st.caption(explain.ESTIMATED_PROPENSITY)
    return None if better is None else better == "larger", RATIOS[design], p_min, column


def privacy_panel(source, m, table, trial, W, settings):
    """ε, the private evaluation, then γ for the patients the rule is fitted on; returns
    (ε, γ, where γ came from, evaluation, γ from the paper's table), or None while D0 is
    missing or unreadable."""
    eps, gamma_from = row(EPS, GAMMA_FROM)
    evaluation = analyst.evaluation_choice(eps, settings["propensity"])
    n_fit = compute.fit_size(trial.n, evaluation)
    if gamma_from == "d0":
        d0 = upload_form.d0_source(source, m, table)
        if d0 is None:
            return None
        gamma, where = compute.d0_gamma(
            d0.digest,
            d0.trial,
            n_fit,
            eps,
            W,
            settings["propensity"],
            *trial.feature_bounds(settings["bounds"]),
            settings["outcome_bounds"],
            settings["larger_is_better"],
        )
        st.markdown(
            f"γ = **{gamma:.4g}** from {where}. W = **{W:.4g}** follows from the outcome "
            "bounds and the smallest propensity."
        )
    else:
        variant = PROXY.widget() if gamma_from == "proxy" else PROXY.default
        if gamma_from == "proxy" and compute.SIMULATIONS.busy():
            st.caption("Waiting for other users' simulations…")
        gamma, g0, where = compute.tuned_gamma(gamma_from, variant, n_fit, eps, W)
        st.markdown(
            f"γ = **{gamma:.4g}** from {where}, scaled by W/30 = {W / 30:.3g} from the "
            f"paper's weight bound (γ = {g0:g} there). W = **{W:.4g}** follows from the "
            "outcome bounds and the smallest propensity."
        )
    st.latex(r"W = \frac{\text{outcome upper} - \text{outcome lower}}{\min_{a,x}\,\pi(a\mid x)}")
    st.latex(r"\text{noise scale } \Delta = \frac{C + 2W}{\gamma}")
    return eps, gamma, where, evaluation, gamma_from == "paper"


def ready(source, verdict, flow):
    """Preview, mapping, design, public metadata and the trial; None when not ready."""
    try:
        preview = compute.preview(source.digest, source.data)
        st.dataframe(compute.preview_frame(preview), hide_index=True, width="stretch")
        flow.at(2)
        source, arms_mode = upload_karm.arms_choice(source)
        if source is None or arms_mode == "all":
            return arms_mode
        st.subheader("Columns", anchor=False)
        m = upload_form.mapping(source, preview)
        if m is None:
            verdict.info(explain.upload_verdict("roles"), icon=":material/view_column:")
            return None
        upload_form.fill_once_from_dictionary(source, m)
        larger, propensity, p_min, column = design_panel(source, preview.columns, m)
        # Keyed by the file's rows (nothing stored until a release): the sidebar and the
        # first step show the spend on this trial at once, before the table is filled.
        key = ledger.dataset_key(source, name=source.name)
        flow.has(1, f"{source.name}; " + steps.spend_text(*ledger.standing(key)))
        st.subheader("Public metadata: bounds, levels, units", anchor=False)
        table, from_data = upload_form.metadata(source, m)
        if not table.levels_ready:
            verdict.info(explain.upload_verdict("levels"), icon=":material/rule:")
            return None
        trial = compute.load_trial(*upload_form.trial_args(source, m, column, table))
    except (TrialDataError, compute.UploadTooLarge) as exc:
        verdict.warning(explain.upload_verdict("error"), icon=":material/error:")
        st.error(plain(exc), icon=":material/error:")
        return None
    mapping = dict(m, propensity_column=column, p_min=p_min)
    return source, mapping, table, from_data, larger, propensity, p_min, trial


@st.fragment
@guarded("The Your data page", sensitive=True)
def study(verdict):
    flow = steps.Flow()
    try:
        steps_of_study(verdict, flow)
    finally:
        flow.close()


def steps_of_study(verdict, flow):
    flow.at(1)
    source = source_panel()
    if source is None:
        return verdict.info(explain.upload_verdict("none"), icon=":material/upload_file:")
    got = ready(source, verdict, flow)
    if got == "all":  # a rule over every arm of a trial with more than two
        try:
            return upload_karm.k_arm_steps(source, verdict, flow)
        except TrialDataError as exc:
            verdict.warning(explain.upload_verdict("error"), icon=":material/error:")
            return st.error(plain(exc), icon=":material/error:")
    if got is None:
        return None
    source, m, table, from_data, larger, propensity, p_min, trial = got
    with st.expander(
        f"Analyst only: how the file was read (n = {trial.n}, the public row count; "
        "other counts are not covered by ε and never in a download)"
    ):
        st.caption(plain(compute.read_summary(trial)))
    needed = ([DIRECTION_NEEDED.rstrip(".")] if larger is None else []) + list(table.problems)
    if needed:
        st.info(
            plain(
                "Still needed: "
                + "; ".join(needed[:5])
                + (f"; and {len(needed) - 5} more" if len(needed) > 5 else "")
            ),
            icon=":material/rule:",
        )
        stage = "bounds" if table.problems else "direction"
        return verdict.info(explain.upload_verdict(stage, trial.n), icon=":material/rule:")
    flow.has(2, f"n = {trial.n}, {len(trial.covariates)} covariates, every bound and level public")
    flow.at(3)
    st.subheader("Privacy", anchor=False)
    W = compute.weight_bound(table.outcome_bounds, propensity, p_min)
    settings = dict(
        bounds=table.bounds,
        outcome_bounds=table.outcome_bounds,
        larger_is_better=larger,
        W=W,
        propensity=propensity,
        private=not from_data,
    )
    try:
        chosen = privacy_panel(source, m, table, trial, W, settings)
    except TrialDataError as exc:
        return st.error(plain(exc), icon=":material/error:")
    if chosen is None:
        return verdict.info(explain.upload_verdict("bounds", trial.n), icon=":material/rule:")
    eps, gamma, where, evaluation, paper = chosen
    noise = compute.noise_warning(trial.n, W, gamma, propensity)
    if noise:
        st.warning(noise, icon=":material/blur_on:")
    label = st.text_input(
        "Title for the report (optional; printed in the downloads)",
        key="report_title",
        max_chars=120,
    )
    settings = dict(
        settings,
        eps=eps,
        gamma=gamma,
        gamma_source=where,
        gamma_paper=paper,
        label=label,
        evaluation=evaluation,
    )
    before = analyst.before_release(
        source, trial, settings, p_min, upload_form.units(source), binary=tuple(table.binary)
    )
    flow.has(
        3,
        f"ε = {eps:g}, γ = {gamma:.4g}"
        + (f", evaluated at ε_eval = {before['evaluation'][0]:g}" if before["evaluation"] else ""),
    )
    flow.at(4)
    # The report's title is not an input of the fit: the release keeps the one it was made with.
    rkey = compute.settings_key(
        source.digest,
        dict(m, levels=tuple(table.categorical.items())),
        {k: v for k, v in settings.items() if k != "label"},
    )
    key = st.session_state[ledger.IN_USE]
    cost = parallel_cost(
        {"fit": eps, "evaluation": before["evaluation"][0]}
        if before["evaluation"]
        else {"release": eps}
    )
    spent, cap = ledger.standing(key)
    refused = not within_cap(spent, cost, cap)
    (verdict.warning if refused else verdict.info)(
        explain.upload_verdict("ready", trial.n, eps, spent, cap, cost),
        icon=":material/block:" if refused else ":material/check_circle:",
    )
    units_ok, confirmed = analyst.units_check(trial, settings)
    results.release_panel(
        source, key, trial, settings, m, rkey, before, RELEASE, units_ok, confirmed
    )
    last = st.session_state.get(RELEASE)
    if last is not None and last.key == rkey:
        kind, said = explain.deploy_verdict(
            last.release, last.receipt.epsilon_total, last.evaluation
        )
        getattr(verdict, kind)(
            f"{said} {ledger.release_number(last.receipt)} {epsilon_note(last.release.epsilon)}",
            icon=":material/verified_user:" if kind == "success" else ":material/balance:",
        )
        results.result_panel(last, source, files=lambda: flow.at(5))
        flow.has(4, f"{last.release.title()}, recorded as no. {last.receipt.index} in the ledger")
        flow.has(5, "the rule, the per-row file, the report and the script")
    elif last is not None:
        st.caption(explain.stale_release(last.release))


st.title("Your data: a private treatment rule from your trial")
st.markdown(
    "Upload a randomized trial (covariates, treatment arm, outcome) and release a rule "
    "*treat when …* with ε-differential privacy: what it recommends, what it spent, and "
    "files to share."
)
st.caption(
    "Unit of privacy: one patient (one row); neighbouring trials differ by replacing one "
    "patient. Every release is recorded in the privacy ledger in the sidebar."
)
check_link(CONTROLS)
study(st.empty())
