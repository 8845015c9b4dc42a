"""The "Your data" page's analyst tools: the preview before spending, the private evaluation and
the script that redoes the release (the public dictionary's panels:
:mod:`dpcore_app.ui.upload.dictionary_panels`).

The preview holds public values only. The evaluation shows released numbers
(they spent ε_eval); nothing here shows a number computed from the data without noise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from dpcore import read_dictionary
from dpcore.owl.paper import default_gamma
from dpcore.owl.simulate import STRENGTHS
from dpcore.privacy.composition import parallel_cost
from dpcore.release.preview_reading import recommend_learner, smallest_epsilon
from dpcore_app.ui.common.figures import show
from dpcore_app.ui.common.link import set_state
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import analyst_compute as compute
from dpcore_app.ui.upload import analyst_explain as explain
from dpcore_app.ui.upload import preview_charts as charts
from dpcore_app.ui.upload.dictionary_panels import binary_flags, dictionary_downloads

if TYPE_CHECKING:
    import pandas as pd

    from dpcore.data.trial import Trial
    from dpcore.owl.evaluation_result import PrivateEvaluation
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.release import Released

EVAL_EPS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
SHARES = (0.7, 0.8, 0.9)


def preview_panel(
    n: int,
    names: Sequence[str],
    lower: Sequence[float] | np.ndarray,
    upper: Sequence[float] | np.ndarray,
    binary: Sequence[bool],
    outcome_bounds: Sequence[float],
    larger_is_better: bool,
    propensity: float | str | None,
    p_min: float | None,
    W: float,
    C: float | str,
    eps: float,
    gamma: float,
    gamma_source: str,
    unit: str = "",
    learner: str = "dp-owl",
) -> pd.DataFrame:
    """What a release at ε is likely to deliver, on a simulated twin, and which learner gives
    more of the twin's patients the better arm; returns the table."""
    st.subheader("Preview before spending", anchor=False)
    left, middle, right = st.columns(3)
    u = f" {unit}" if unit else ""
    # How much the treatment effect varies between patients is the analyst's to say, in the
    # outcome's units (a share of the bounds' range can be far larger than any real effect):
    # the presets say theirs in units, and "yours" takes a number.
    strength = (
        left.segmented_control(
            "How much the treatment effect varies between patients (its SD)",
            (*STRENGTHS, compute.YOURS),
            default="weak",
            format_func=lambda s: (
                "your own"
                if s == compute.YOURS
                else f"{s}: {compute.strength_sd(s, outcome_bounds):.3g}{u}"
            ),
            key="preview_strength",
        )
        or "weak"
    )
    yours = None
    if strength == compute.YOURS:
        span = float(outcome_bounds[1]) - float(outcome_bounds[0])
        yours = left.number_input(
            f"SD of the treatment effect between patients{f' ({unit})' if unit else ''}",
            min_value=span / 1000,
            max_value=span,
            value=compute.strength_sd("weak", outcome_bounds),
            format="%.4g",
            key="preview_yours",
            help="Public: from the literature or clinical judgement, never from this trial.",
        )
    dominant = (
        middle.segmented_control(
            "Arms on average",
            ("equal", "one better"),
            default="equal",
            key="preview_dominant",
            help=f"One better: the treated arm is better on average by {compute.DOMINANT:.0%} of the "
            "outcome's range, so treating everyone is already good.",
        )
        == "one better"
    )
    target = (
        right.segmented_control(
            "Target agreement (%)", compute.TARGETS, default=90, key="preview_target"
        )
        or 90
    )
    st.caption(explain.PREVIEW_NOTE + " " + explain.twin_assumptions(int(n), dominant))
    grid = compute.preview_grid(eps)
    gammas = compute.preview_gammas(grid, n, W, gamma, eps, gamma_source)
    twin = compute.twin_design(
        n,
        lower,
        upper,
        binary,
        outcome_bounds,
        larger_is_better,
        compute.twin_propensity(propensity, p_min),
        dominant,
    )
    frame = compute.twin_preview(twin, grid, gammas, float(W), C, yours=yours)
    smallest = smallest_epsilon(frame, target, strength)
    if learner == "plug-in":
        learner_panel(frame, strength, eps, learner, propensity)
    # DP-OWL's release against its own non-private rule: the page's learner, or the comparison's
    owl = (
        st.expander("DP-OWL's release against its non-private rule")
        if learner == "plug-in"
        else contextlib.nullcontext()
    )
    who = "a DP-OWL release" if learner == "plug-in" else "a private rule"
    with owl:
        st.markdown(
            plain(explain.preview_sentence(frame, strength, eps, target, smallest, unit, who))
        )
        need = compute.needed_sd(
            twin, float(eps), float(gammas[list(grid).index(float(eps))]), float(W), C
        )
        st.markdown(plain(explain.needed_sentence(need, eps, int(n), unit, outcome_bounds)))
        show(charts.agreement_curve(frame, eps, target), key="preview_agreement")
        st.caption(
            "Each band holds 95% of single releases on simulated twins; the dotted line is "
            "chance (50%). Held at the release's γ where γ does not come from the paper's "
            "table. Simulated, no privacy spent."
        )
    if learner != "plug-in":
        learner_panel(frame, strength, eps, learner, propensity)
    with st.expander("Gain over the better arm, and the noise in the rule's own units"):
        show(charts.gain_curve(frame, eps, unit), key="preview_value")
        st.caption(
            "Dashed: giving everyone the better arm (gain 0). Dotted: the non-private rule's "
            "gain at each strength. Each band holds 95% of single releases on the twins. "
            "Simulated, no privacy spent."
        )
        noise = compute.noise_lengths(lower, upper, eps, W, gamma, C, n)
        st.markdown(plain(explain.noise_sentence(noise, list(names), eps)))
    return frame


def learner_panel(
    frame: pd.DataFrame,
    strength: str,
    eps: float,
    learner: str,
    propensity: float | str | None,
) -> dict[str, Any]:
    """Both learners on the twin at ε: the sentence, their curves, and a button that sets the
    Learner control to the one that gives more patients the better arm (a public choice)."""
    rec = recommend_learner(frame, strength, eps)
    st.markdown("**Which learner?** (same twins, no privacy spent)")
    st.markdown(plain(explain.learner_sentence(rec, strength, eps, learner)))
    show(charts.learners_curve(frame, strength, eps), key="preview_learners")
    st.caption(
        "The better arm is the twin's own: it knows each simulated patient's effect. Each band "
        "holds 95% of single releases; the dotted line is chance (50%)."
    )
    better = rec["learner"]
    if better is None or better == learner:
        return rec
    if better == "plug-in" and propensity == "logistic":
        st.caption("The plug-in rule needs a known randomization or a propensity column.")
        return rec
    st.button(
        f"Use {explain.LEARNER_NAMES[better]}",
        key="use_learner",
        on_click=set_state,
        args=({"learner": better},),
        help="Sets the Learner control above; nothing is released.",
    )
    return rec


def evaluation_choice(eps: float, propensity: float | str | None) -> tuple[float, float] | None:
    """The private evaluation chosen with ε (before γ, which follows the fit's size):
    (ε_eval, share fitted), or None for none."""
    if propensity == "logistic":
        st.caption(
            "The private evaluation needs a known randomization or a propensity column; "
            "with an estimated propensity the release has none."
        )
        return None
    on, eps_eval, share = evaluation_controls(eps)
    if not on or eps_eval is None or share is None:  # off: no ε_eval, no share
        return None
    return eps_eval, share


def evaluation_controls(eps: float) -> tuple[bool, float | None, float | None]:
    """The private evaluation's settings: (on, ε_eval, share fitted); on by default."""
    on = st.toggle(
        "Evaluate the rule privately on held-out patients",
        value=True,
        key="evaluate",
        help="A public seeded split: the rule is fitted on one part "
        "and its value estimated on the other with Laplace noise at ε_eval.",
    )
    if not on:
        return False, None, None
    left, right = st.columns(2)
    eps_eval = left.select_slider(
        "ε_eval (evaluation)",
        EVAL_EPS,
        value=min(EVAL_EPS, key=lambda e: abs(e - eps)),
        key="eps_eval",
    )
    share = right.select_slider(
        "Share of patients that fit the rule",
        SHARES,
        value=0.8,
        format_func=lambda s: f"{s:.0%} / {1 - s:.0%}",
        key="fit_share",
    )
    st.caption(
        f"Each patient is in one part, so the trial spends max(ε, ε_eval) = "
        f"{parallel_cost({'fit': eps, 'evaluation': eps_eval}):g}, not their sum (parallel composition)."
    )
    return True, float(eps_eval), float(share)


def evaluation_panel(
    evaluation: PrivateEvaluation, eps_fit: float, n_fit: int, unit: str = ""
) -> None:
    """The released evaluation: values with 95% intervals, the gains, and one verdict."""
    st.markdown("**Private evaluation on held-out patients** (released at ε_eval)")
    first = evaluation.first_answer()
    if first:  # the trialist's first question: which arm is better on average?
        st.markdown(f"**First, the arms on average.** {plain(first)}")
    unit = f" {unit}" if unit else ""
    cols = st.columns(3)
    names = {
        "rule": "Private rule",
        "treat_all": f"Everyone '{evaluation.treated}'",
        "treat_none": f"Everyone '{evaluation.control}'",
    }
    for col, (key, label) in zip(cols, names.items()):
        e = evaluation.values[key]
        col.metric(
            plain(label),
            f"{e.value:.3g}{unit}",
            f"95%: {e.lower:.3g} to {e.upper:.3g}",
            delta_color="off",
            delta_arrow="off",
        )
    show = {"better": st.success, "worse": st.error, "inconclusive": st.info}[evaluation.verdict]
    show(plain(explain.evaluation_sentence(evaluation)), icon=":material/balance:")
    st.caption(
        plain(explain.cost_sentence(eps_fit, evaluation.epsilon, n_fit, evaluation.m))
        + " The intervals include the Laplace noise and the sampling error."
    )


def before_release(
    source: Source,
    trial: Trial,
    settings: Mapping[str, Any],
    p_min: float | None,
    units: Mapping[str, str],
    binary: Collection[str] = (),
) -> dict[str, Any]:
    """Everything shown between the public settings and the release button: the preview (on
    request, at the size of the part that fits the rule) and "download this dictionary".
    Public values only; ``settings["evaluation"]`` is the private evaluation chosen with ε,
    ``binary`` names the 0/1 covariates whose cells are words.

    Returns
    -------
    dict with ``evaluation`` ((ε_eval, share) or None, as chosen), ``preview`` (what the report shows,
    or None when the analyst did not ask for it) and ``dictionary``: the public dictionary of
    the page's settings, which the release is made from and the analyst downloads
    """
    base = read_dictionary(source.dictionary) if source.dictionary is not None else None
    lower, upper = trial.feature_bounds(settings["bounds"])
    propensity, eps = settings["propensity"], settings["eps"]
    evaluation = settings["evaluation"]
    n_fit = compute.fit_size(trial.n, evaluation)
    unit = units.get(trial.outcome, "")
    preview = None
    learner = settings.get("learner") or "dp-owl"
    if st.toggle(
        f"Preview on a simulated twin of {n_fit} patients (no privacy spent)",
        key="preview_on",
        help=explain.PREVIEW_NOTE,
    ):
        C = "worst-case" if propensity == "logistic" else 0.0
        gamma = settings.get("gamma")
        if learner == "plug-in" or gamma is None:
            # the plug-in rule has no γ: DP-OWL is compared at the paper's table's
            gamma, source_kind = default_gamma(eps, n_fit, settings["W"]), "paper"
        else:
            source_kind = (
                "paper" if settings["gamma_source"].startswith("the paper's table") else "other"
            )
        frame = preview_panel(
            n_fit,
            trial.covariates,
            lower,
            upper,
            binary_flags(trial.covariates, trial.categories, base),
            settings["outcome_bounds"],
            settings["larger_is_better"],
            propensity,
            p_min,
            settings["W"],
            C,
            eps,
            gamma,
            source_kind,
            unit,
            learner,
        )
        strength = st.session_state.get("preview_strength") or "weak"
        target = st.session_state.get("preview_target") or 90
        preview = {
            "frame": frame,
            "eps": eps,
            "strength": strength,
            "target": target,
            "smallest": smallest_epsilon(frame, target, strength),
            "unit": unit,
            "learner": learner,
        }
    filled = compute.dictionary_from_settings(
        trial,
        settings["bounds"],
        settings["outcome_bounds"],
        settings["larger_is_better"],
        propensity,
        units,
        base,
        min_propensity=p_min,
        binary=binary,
    )
    dictionary_downloads(filled)
    return {"evaluation": evaluation, "preview": preview, "dictionary": filled}


def script_download(released: Released) -> None:
    """The "Python script" download: redoes the release from the CSV and its dictionary, for
    every design, and records it in the durable ledger under this page's dataset."""
    text = compute.script_for(released)
    st.download_button(
        "Python script (redoes the release: spends ε again)",
        text,
        "release_again.py",
        "text/x-python",
        key="dl_script",
        on_click="ignore",
        width="stretch",
    )
    st.caption(
        "The script reads trial.csv and trial_dictionary.json (the dictionary download "
        "above): rename your files or edit its first lines. Running it is a new release, "
        "recorded in the durable privacy ledger (DPCORE_LEDGER, or set LEDGER in the "
        "script) under the same dataset as this page's releases."
    )
