"""Step 3, Preview: ε, the private evaluation (chosen with ε: γ follows the size of the part the
rule is fitted on), γ, and, spending nothing, the preview on a simulated twin and the public
dictionary to download. Hands on the Chosen release (its dictionary and plan), or None while a
public proxy D0 for γ is missing.

Over all K arms of a trial, ε and the evaluation are the only choices: the rest is the
dictionary's (γ from the paper's table for each comparison).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from dpcore.data import read_dictionary
from dpcore.data.errors import TrialDataError
from dpcore.release import ReleasePlan
from dpcore_app.ui.common.controls import row
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import analyst_panels, compute, dictionary_panels, explain, form
from dpcore_app.ui.upload.controls import EPS, GAMMA_FROM, LEARNER, PROXY
from dpcore_app.ui.upload.steps import Chosen

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from dpcore_app.ui.upload.flow import Flow
    from dpcore_app.ui.upload.steps import Ready


def privacy(ready: Ready, verdict: DeltaGenerator, flow: Flow) -> Chosen | None:
    """Step 3: the release's public settings, with the preview; ``verdict`` is the page's
    opening notice, filled in while a setting is missing."""
    flow.at(3)
    st.subheader("Privacy", anchor=False)
    chosen = _all_arms(ready) if ready.kind == "all" else _two_arms(ready, verdict)
    if chosen is not None:
        evaluation = chosen.settings["evaluation"]
        flow.has(
            3,
            f"ε = {chosen.settings['eps']:g}"
            + (f", γ = {chosen.settings['gamma']:.4g}" if chosen.settings.get("gamma") else "")
            + (", the private plug-in rule" if chosen.settings.get("learner") == "plug-in" else "")
            + (f", evaluated at ε_eval = {evaluation[0]:g}" if evaluation else ""),
        )
    return chosen


def _two_arms(ready, verdict):
    source, trial, meta = ready.source, ready.trial, ready.table
    W = compute.weight_bound(meta.outcome_bounds, ready.propensity, ready.p_min)
    settings = dict(
        bounds=meta.bounds,
        outcome_bounds=meta.outcome_bounds,
        larger_is_better=ready.larger,
        W=W,
        propensity=ready.propensity,
        private=not ready.from_data,
    )
    learner = LEARNER.widget()
    if learner == "plug-in":
        if ready.propensity == "logistic":
            st.error(explain.PLUG_IN_DESIGN, icon=":material/rule:")
            return None
        eps = EPS.widget()
        evaluation = analyst_panels.evaluation_choice(eps, ready.propensity)
        gamma = where = None
        paper = False
    else:
        try:
            chosen = _gamma(ready, W, settings)
        except TrialDataError as exc:
            st.error(plain(exc), icon=":material/error:")
            return None
        if chosen is None:
            verdict.info(explain.upload_verdict("bounds", trial.n), icon=":material/rule:")
            return None
        eps, gamma, where, evaluation, paper = chosen
        noise = compute.noise_warning(trial.n, W, gamma, ready.propensity)
        if noise:
            st.warning(noise, icon=":material/blur_on:")
    label = st.text_input(
        "Title for the report (optional; printed in the downloads)",
        key="report_title",
        max_chars=120,
    )
    settings = dict(
        settings,
        learner=learner,
        eps=eps,
        gamma=gamma,
        gamma_source=where,
        gamma_paper=paper,
        label=label,
        evaluation=evaluation,
    )
    before = analyst_panels.before_release(
        source, trial, settings, ready.p_min, form.units(source), binary=tuple(meta.binary)
    )
    # The report's title is not an input of the fit: the release keeps the one it was made with.
    rkey = compute.settings_key(
        source.digest,
        dict(ready.mapping, levels=tuple(meta.categorical.items())),
        {k: v for k, v in settings.items() if k != "label"},
    )
    units_ok, confirmed = dictionary_panels.units_check(trial, settings)
    return Chosen(
        settings,
        compute.plan_from_settings(settings, ready.p_min),
        before["dictionary"],
        rkey,
        before["preview"],
        units_ok,
        confirmed,
    )


def _gamma(ready, W, settings):
    """ε, the evaluation, then γ for the patients the rule is fitted on; returns (ε, γ, where
    γ came from, evaluation, γ from the paper's table), or None while D0 is missing."""
    source, trial, meta = ready.source, ready.trial, ready.table
    eps, gamma_from = row(EPS, GAMMA_FROM)
    evaluation = analyst_panels.evaluation_choice(eps, settings["propensity"])
    n_fit = compute.fit_size(trial.n, evaluation)
    if gamma_from == "d0":
        d0 = form.d0_source(source, ready.mapping, meta)
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


def _all_arms(ready):
    learner = LEARNER.widget()
    eps = EPS.widget()
    evaluation = analyst_panels.evaluation_choice(eps, None)
    k = len(ready.trial.arms)
    if learner == "plug-in":
        st.caption(
            f"The rule is one outcome model per arm, all {k} released together at ε = "
            f"{eps:g}: a patient is in one arm's sums, so no share of ε is split between arms."
        )
    else:
        st.caption(
            f"The rule is {k - 1} comparisons of each arm with the reference arm, each "
            f"released at ε/{k - 1} = {eps / (k - 1):.3g}; together they spend ε = {eps:g} "
            "(basic composition: every comparison reads the same patients). The private "
            "plug-in rule releases every arm at the full ε."
        )
    settings = {"eps": float(eps), "evaluation": evaluation, "learner": learner}
    plan = ReleasePlan(
        epsilon=float(eps),
        learner=learner,
        epsilon_eval=evaluation[0] if evaluation else None,
        fit_share=evaluation[1] if evaluation else 0.8,
    )
    dictionary = read_dictionary(ready.source.dictionary, strict=False)
    rkey = (ready.source.digest, "all", tuple(sorted(settings.items())))
    return Chosen(settings, plan, dictionary, rkey)
