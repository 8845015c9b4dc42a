"""The DP-OWL page's panels that state results: the verdict with "at what ε can we publish?",
the metric cards, and the downloads (CSV with settings, the offline handout)."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from dpcore import expected_noise_radius
from dpcore_app.ui.common import explain as common_explain
from dpcore_app.ui.common import glossary, handout
from dpcore_app.ui.common.controls import details
from dpcore_app.ui.common.downloads import with_settings
from dpcore_app.ui.common.figures import figure, show
from dpcore_app.ui.owl import charts, compute, decide, decide_explain, explain, view_model
from dpcore_app.ui.owl import decide_compute as targets

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import pandas as pd

    from dpcore_app.ui.common.figures import SharedFigure
    from dpcore_app.ui.common.handout import Report
    from dpcore_app.ui.owl.compute import ExampleRule
    from dpcore_app.ui.owl.decide_compute import Target
    from dpcore_app.ui.owl.view_model import State, View

TERMS = (
    "accuracy",
    "points",
    "value",
    "agreement",
    "coin flip",
    "epsilon",
    "gamma",
    "h",
    "W",
    "C",
    "Delta",
    "interval",
    "treat everyone",
    "oracle",
    "public bounds",
    "authors' shift",
    "kappa",
    "Algorithm 2",
)


def verdict(
    s: State, v: View, target: tuple[Target, float], reps: int, first: bool | int
) -> dict[str, Any]:
    """The verdict about one release in one line and its colour (see
    :func:`~dpcore_app.ui.owl.view_model.decision` and
    :func:`~dpcore_app.ui.owl.view_model.words`); what it returns :func:`verdict_detail` shows in full below the charts: the
    verdict's sentence with what the ε promises one patient, how stable one release is, and the
    answer to "at what ε can we publish?".

    ``first``: a first estimate (the repetitions of the final numbers, or True).
    """
    d = view_model.decision(s, v, target, reps)
    said = view_model.words(s, v, d, reps, first)
    getattr(st, said["kind"])(said["headline"], icon=":material/medical_services:")
    if st.session_state.get("_preset_toast") and not first:
        toast = f"{st.session_state.pop('_preset_toast')}: {said['headline']}"
        st.toast(toast, icon=":material/check:")
    if first:
        d["mark"] = (d["mark"][0], None)  # no star before the final answer
    return dict(d, first=first, **said)


#: Headings lessons link to: the curves (``/dp-owl#curves``), the verdict in full, and the
#: cards with the gap split by cause.
CURVES_ANCHOR, VERDICT_ANCHOR, CARDS_ANCHOR = "curves", "verdict", "cards"


def verdict_detail(
    s: State,
    here: pd.Series,
    d: Mapping[str, Any],
    offer_reps: Callable[[int], object] | None = None,
) -> None:
    """The verdict of :func:`verdict` in full, under its heading: its sentence with what the ε
    promises one patient, how stable one release is (two releases of the same trial), and the
    answer to "at what ε can we publish?". When the repetitions are too few to show the
    assurance asked for, ``offer_reps`` (a callback taking the repetitions to set) offers a
    button that sets them."""
    eps = s["eps"]
    st.subheader("The verdict in full", anchor=VERDICT_ANCHOR)
    st.markdown(d["verdict"] + " " + common_explain.epsilon_note(eps))
    st.markdown(explain.first_label(d["first"]) + decide_explain.stability_sentence(eps, here))
    st.markdown("**At what ε can we publish?** " + d["text"])
    if d["needed"] is not None and offer_reps is not None:
        offer_reps(d["needed"])


def nonprivate_name(s: State) -> str:
    """What the charts call the non-private rule of the state's γ mode."""
    return "non-private" if s["mode"] == "paper" else f"non-private, fixed γ = {s['gamma']:g}"


def curve_references(
    s: State, v: View, reps: int, metric: str, scale: str, reference_ns: Iterable[int]
) -> tuple[dict[str, float] | None, dict[int, float] | None]:
    """(reference levels, {n: the best non-private rule's level}) of the curves of ``metric``."""
    suffix = "" if scale == "own" else "_paper"
    shown = "value" if metric.startswith("value") else metric
    references = (
        {k: float(v.refs[k + suffix].mean()) for k in ("oracle", "treat_all", "treat_none")}
        if shown == "value"
        else targets.fixed_rule_accuracy()
        if shown == "accuracy"
        else None
    )
    best = (
        None
        if metric == "concordance"
        else {
            m: float(decide.best_reference(s, v.all_summary, reps, m)[f"{metric}_mean"])
            for m in reference_ns
        }
    )
    return references, best


def curve_figures(
    s: State,
    sizes: Sequence[int],
    v: View,
    reps: int,
    metric: str,
    scale: str,
    reference_ns: Sequence[int],
    mark: tuple[float, Any] | None,
) -> tuple[SharedFigure, SharedFigure]:
    """The view's curves against ε and against n, from the shared figure cache."""
    references, best = curve_references(s, v, reps, metric, scale, reference_ns)
    return (
        figure(
            charts.curves_vs_epsilon,
            v.all_summary,
            metric,
            sizes,
            s["eps"],
            references,
            mode=s["mode"],
            gamma=s["gamma"],
            best=best,
            reference_ns=reference_ns,
            target=mark if metric == "accuracy" else None,
        ),
        figure(
            charts.curve_vs_n_steps,
            v.all_summary,
            metric,
            s["eps"],
            references,
            nonprivate_name(s),
        ),
    )


def spread(s: State, runs: pd.DataFrame, metric: str) -> tuple[pd.Series | None, pd.Series]:
    """(the metric over the repetitions at the state's ε, or None without privacy; the same of
    the non-private rule)."""
    private = math.isfinite(s["eps"])
    return (
        runs.loc[runs.epsilon == s["eps"], metric] if private else None,
        runs.loc[np.isinf(runs.epsilon), metric],
    )


def example(s: State) -> ExampleRule:
    """The example rule of the state ``s`` (one simulated trial)."""
    return compute.example_rule(
        s["n"], s["eps"], s["mode"], s["gamma"], s["h"], s["W"], s["seed"], s["prep"]
    )


def rule_figures(
    s: State, runs: pd.DataFrame, metric: str, ex: ExampleRule
) -> tuple[SharedFigure, SharedFigure]:
    """The spread over repetitions and the example rule's coefficients, from the shared cache."""
    eps, private = s["eps"], math.isfinite(s["eps"])
    here, best = spread(s, runs, metric)
    same = ex.nonprivate_same_gamma if ex.gamma != ex.gamma_ref and private else None
    return (
        figure(charts.distribution, here, best, metric, eps, nonprivate_name(s)),
        figure(
            charts.coefficients,
            explain.feature_names(ex.names),
            ex.nonprivate,
            ex.private if private else None,
            eps,
            same,
            (ex.gamma_ref, ex.gamma),
        ),
    )


def cards(
    s: State, here: pd.Series, best: pd.Series, clipped_here: pd.Series, value_key: str
) -> None:
    """The metric cards with the gap to the best non-private rule split into its causes."""
    eps, private = s["eps"], math.isfinite(s["eps"])
    st.subheader(f"At {common_explain.eps_text(eps)} with {s['n']} patients", anchor=CARDS_ANCHOR)
    split = private or s["mode"] == "free"
    vk = value_key
    gammas = (compute.gamma_used(s["mode"], s["gamma"], eps, s["n"]), decide.best_gamma(s["n"]))
    cols, splits = st.columns(3), []
    for col, (label, m, unit, digits, word) in zip(
        cols,
        (
            (
                "Accuracy (better treatment)",
                "accuracy",
                "pts",
                1,
                "percentage points (pts) of accuracy",
            ),
            (
                "Value of the rule",
                vk,
                "",
                2,
                "outcome units; value: the average outcome of patients treated as the rule says",
            ),
        ),
    ):
        total, noise = (
            here[f"{m}_mean"] - best[f"{m}_mean"],
            here[f"{m}_mean"] - here[f"{m}_same_gamma_mean"],
        )
        splits.append(
            f"{label.split(' (')[0].lower()} {explain.gap_text(total, noise, total - noise, unit, digits, gammas)}"
        )
        col.metric(
            label,
            f"{here[f'{m}_mean']:.{digits}f}{'%' if m == 'accuracy' else ''}",
            f"{total:+.{digits}f} {unit} vs best non-private".replace("  ", " ") if split else None,
            help=f"95% interval over {int(here.reps)} simulated trials: {here[f'{m}_lo']:.{digits}f} – "
            f"{here[f'{m}_hi']:.{digits}f}. The change, in {word}, is against the best non-private "
            f"rule (γ = {gammas[1]:g}); “from regularization” is what the γ in use costs even "
            "without noise.",
        )
    if private:
        cols[2].metric(
            "Agrees with the non-private rule",
            f"{here.concordance_mean:.1f}%",
            help=f"At the same γ. 95% interval: {here.concordance_lo:.1f} – {here.concordance_hi:.1f}%.",
        )
    if split:
        st.markdown(
            "**The gap to the best non-private rule, by cause:** "
            + "; ".join(splits)
            + ". (pts: percentage points of accuracy; value in outcome units; regularization: "
            "what the γ in use costs even without noise.)"
        )
    st.caption(explain.intervals(here, vk, private))
    outcome, W = compute.preprocessing(s["prep"], s["W"])
    st.caption(explain.coverage(s["prep"], W, outcome, float(clipped_here.mean())))
    scale = "on the outcome's own scale" if vk == "value" else "on the authors' test-shifted scale"
    st.info(
        explain.clinical_summary(
            eps, s["n"], here.concordance_mean, here[vk + "_mean"], best[vk + "_mean"], scale
        ),
        icon=":material/groups:",
    )
    st.info(common_explain.privacy_statement(eps), icon=":material/visibility_off:")
    glossary.panel(TERMS)


def downloads(
    results: Mapping[int, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    summary: pd.DataFrame,
    s: State,
    report: Callable[[], Report],
) -> None:
    """The four downloads; ``report()`` builds the view's handout, called only on a download."""
    runs, report = {n: r for n, (r, _, _) in results.items()}, functools.cache(report)
    a, b, c, d = st.columns(4)
    a.download_button(
        "Runs (CSV)",
        lambda: with_settings(compute.stack_runs(runs), report().settings),
        "dp_owl_runs.csv",
        "text/csv",
        on_click="ignore",
        width="stretch",
    )
    b.download_button(
        "Summary (CSV)",
        lambda: with_settings(summary, report().settings),
        "dp_owl_summary.csv",
        "text/csv",
        on_click="ignore",
        width="stretch",
    )
    c.download_button(
        "This view (CSV)",
        lambda: with_settings(compute.view_numbers(summary, s["n"], s["eps"]), report().settings),
        "dp_owl_view.csv",
        "text/csv",
        on_click="ignore",
        width="stretch",
    )
    d.download_button(
        "Handout (HTML, offline)",
        lambda: handout.page(report()),
        "dp_owl_handout.html",
        "text/html",
        on_click="ignore",
        width="stretch",
        key="handout",
    )
    st.caption(
        "Each CSV starts with its settings (seed, W, preprocessing, the reproducing link) and a "
        "data dictionary as # comment lines: read it with pandas.read_csv(..., comment='#')."
    )


def for_statisticians(ex: ExampleRule, eps: float, names: Sequence[str]) -> None:
    """The agreement test and noise geometry of the example rule, the formulas and the paper's γ table."""
    if math.isfinite(eps):
        st.markdown(explain.agreement_text(ex.agreement))
        radius = expected_noise_radius(len(ex.theta_hat), eps, ex.sensitivity, k=2)
        show(figure(charts.noise_vector, ex.theta_hat, ex.noise, radius, names=names), key="noise")
        st.caption(explain.noise_caption(len(ex.theta_hat), ex.sensitivity, radius))
    for formula, meaning in explain.OWL_FORMULAS:
        st.latex(formula)
        st.caption(meaning)
    st.dataframe(compute.paper_gamma_table(), width="stretch")
    st.caption("The authors' tuned γ for each trial size n (rows) and ε (columns).")


def learners(s: State) -> None:
    """ "Other private learners": collapsed, and computed only while open (one cached sweep per
    (n, seed) serves every ε)."""
    box = details("Other private learners: what each buys per ε", "owl_learners")
    if not box.open:
        return
    with box:
        with st.spinner("Simulating the three learners…"):
            summary, differences = compute.learner_sweep(s["n"], s["seed"])
        reps = compute.LEARNER_REPS
        cells, pairs = compute.learners_at(summary, differences, s["eps"])
        st.markdown(explain.learners_sentence(s["eps"], s["n"], cells, pairs, reps))
        show(
            figure(charts.learners_vs_epsilon, summary, s["eps"], explain.LEARNER_NAMES),
            key="learners",
        )
        st.caption(explain.learners_caption(s["n"], reps))
