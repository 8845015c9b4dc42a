"""The "Your data" page's analyst tools: the public dictionary, the preview before spending, the
private evaluation and the files that work elsewhere.

The preview and the dictionary hold public values only. The evaluation shows released numbers
(they spent ε_eval); nothing here shows a number computed from the data without noise.
"""

from __future__ import annotations

import contextlib
import hashlib

import streamlit as st

from dpcore import read_dictionary
from dpcore._estimator import CLIPPED_SHARE_WARNING
from dpcore.data.dictionary import DictionaryError
from dpcore.owl.paper import default_gamma
from dpcore.owl.simulate import STRENGTHS
from dpcore.privacy.composition import parallel_cost
from dpcore.release.preview_reading import recommend_learner, smallest_epsilon
from dpcore_app.ui.common.controls import set_state
from dpcore_app.ui.common.figures import show
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import analyst_compute as compute
from dpcore_app.ui.upload import analyst_explain as explain
from dpcore_app.ui.upload import preview_charts as charts

EVAL_EPS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
SHARES = (0.7, 0.8, 0.9)


#: The uploaded dictionary, kept in this session while the analyst visits other pages.
DICTIONARY = "your_data_dictionary"


def _forget_dictionary():
    st.session_state.pop(DICTIONARY, None)


def dictionary_uploader(key="dictionary_upload"):
    """An optional public data dictionary (JSON or CSV); returns a Dictionary or None.

    It is kept in this session's state (as the trial's CSV is), so returning to the page
    from another one finds it again, said as such, with a button to forget it."""
    up = st.file_uploader(
        "Public data dictionary (optional: JSON or CSV with column, role, type, "
        "lower, upper, levels, unit)",
        type=["json", "csv"],
        key=key,
        on_change=_forget_dictionary,
    )
    st.caption(
        "A dictionary fills the roles, types, levels, bounds and design from the protocol. "
        "It holds public metadata only; nothing in it is read from your data."
    )
    kept = st.session_state.get(DICTIONARY)
    if up is not None and (kept is None or kept[0] != up.file_id):
        try:
            d = read_dictionary(up.getvalue(), strict=False)
        except DictionaryError as exc:  # nothing of it could be read (not JSON, no header row)
            st.error(plain(exc), icon=":material/error:")
            return None
        kept = (up.file_id, up.name, d)
        st.session_state[DICTIONARY] = kept
    if kept is None:
        return None
    if up is None:
        st.caption(
            plain(
                f"Using the dictionary {kept[1]}, uploaded earlier in this session; upload "
                "another to replace it."
            )
        )
        st.button("Forget this dictionary", on_click=_forget_dictionary, key="forget_dictionary")
    d = kept[2]
    if d.problems:
        # the valid entries are used; each invalid one is listed with its fix and left empty
        # in the table below, which then asks for it
        lines = "\n".join(f"- {plain(str(p))}" for p in d.problems)
        st.warning(
            f"{len(d.problems)} entries of the dictionary were left out; the rest is "
            f"used. Fix these and upload it again:\n{lines}",
            icon=":material/warning:",
        )
    return d


def dictionary_downloads(dictionary, stem="trial"):
    """'Download this dictionary' as JSON and as CSV, so the next release starts filled."""
    a, b = st.columns(2)
    a.download_button(
        "Download this dictionary (JSON)",
        dictionary.to_json(),
        f"{stem}_dictionary.json",
        "application/json",
        key="dl_dict_json",
        on_click="ignore",
        width="stretch",
    )
    b.download_button(
        "Download this dictionary (CSV)",
        dictionary.to_csv(),
        f"{stem}_dictionary.csv",
        "text/csv",
        key="dl_dict_csv",
        on_click="ignore",
        width="stretch",
    )


def binary_flags(names, categories, dictionary=None):
    """Which covariate columns are 0/1: one-hot columns, and the dictionary's binary columns."""
    dummies = {f"{c}={lev}" for c, levels in categories.items() for lev in levels[1:]}
    binary = set()
    if dictionary is not None:
        binary = {c.name for c in dictionary.columns if c.type == "binary"}
    return tuple(n in dummies or n in binary for n in names)


def preview_panel(
    n,
    names,
    lower,
    upper,
    binary,
    outcome_bounds,
    larger_is_better,
    propensity,
    p_min,
    W,
    C,
    eps,
    gamma,
    gamma_source,
    unit="",
    learner="dp-owl",
):
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


def learner_panel(frame, strength, eps, learner, propensity):
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


def evaluation_choice(eps, propensity):
    """The private evaluation chosen with ε (before γ, which follows the fit's size):
    (ε_eval, share fitted), or None for none."""
    if propensity == "logistic":
        st.caption(
            "The private evaluation needs a known randomization or a propensity column; "
            "with an estimated propensity the release has none."
        )
        return None
    on, eps_eval, share = evaluation_controls(eps)
    return (eps_eval, share) if on else None


def evaluation_controls(eps):
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


def evaluation_panel(evaluation, eps_fit, n_fit, unit=""):
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


def before_release(source, trial, settings, p_min, units, binary=()):
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


def script_download(released):
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


def units_check(trial, settings):
    """Analyst only, before the release button: the columns with more than
    ``CLIPPED_SHARE_WARNING`` of their values outside the public bounds (bounds in other units
    than the data, or too narrow), and the analyst's confirmation that they are right.

    Returns
    -------
    (ready, columns): whether the release may go ahead, and the columns confirmed (empty
    when nothing needed confirming). A fact about the sensitive data: shown here, never in a
    download.
    """
    shares = trial.outside_bounds(settings["bounds"], settings["outcome_bounds"])
    wide = {c: s for c, s in shares.items() if s > CLIPPED_SHARE_WARNING}
    if not wide:
        return True, ()
    st.warning(
        plain(explain.outside_bounds(wide, CLIPPED_SHARE_WARNING)), icon=":material/straighten:"
    )
    # confirmed for these bounds: new bounds (or other columns outside them) ask again
    seen = (sorted(settings["bounds"].items()), settings["outcome_bounds"], sorted(wide))
    digest = hashlib.sha256(repr(seen).encode()).hexdigest()[:12]
    confirmed = st.checkbox(
        "The bounds are right: release with these values clipped to them",
        key=f"units_confirmed_{digest}",
    )
    return confirmed, tuple(wide) if confirmed else ()
