"""The DP-OWL page's panels that state results: the verdict with "at what ε can we publish?",
the metric cards, and the downloads (CSV with settings, the offline handout)."""

from __future__ import annotations

import functools
import math

import streamlit as st

from dpcore import expected_noise_radius

from . import explain, glossary, handout
from . import owl_decide as decide
from .charts import owl as charts
from .compute import owl as compute
from .compute import owl_decide as targets
from .compute.figures import figure

TERMS = ("accuracy", "points", "value", "agreement", "coin flip", "epsilon", "gamma", "h", "W", "C", "Delta",
         "interval", "treat everyone", "oracle", "public bounds", "authors' shift", "kappa", "Algorithm 2")


def verdict(s, here, best, summary, runs, target, reps, first):
    """The verdict about one release in its colour, what the ε promises one patient, and the
    answer to "at what ε can we publish?". ``runs`` maps each simulated n to its
    per-repetition rows; ``target`` is (:class:`Target`, assurance)."""
    (target, assurance), eps, n, sizes = target, s["eps"], s["n"], sorted(runs)
    g_best = decide.best_gamma(n)
    fixed = compute.cell(summary[summary.n == n], math.inf).accuracy_mean
    note = "" if s["mode"] == "paper" else (f" (γ = {g_best:g}; at the fixed γ = {s['gamma']:g} even the "
                                            f"non-private rule reaches only {fixed:.1f}%)")
    threshold = target.threshold(best.accuracy_mean)
    share = targets.share_at(runs[n], eps, threshold)
    kind, sentence = explain.verdict(eps, n, here, best, threshold, target.words(), share, assurance,
                                     note, first)
    getattr(st, kind)(sentence + " " + explain.epsilon_note(eps), icon=":material/medical_services:")
    # Beside the share: how stable one release is (two releases of the same trial).
    st.markdown(f":material/compare_arrows: {explain.stability_sentence(eps, here)}")
    if st.session_state.get("_preset_toast") and not first:
        st.toast(f"{st.session_state.pop('_preset_toast')}: {sentence}", icon=":material/check:")
    thresholds = {m: target.threshold(decide.best_reference(s, summary, reps, m).accuracy_mean)
                  if target.kind == "points" else threshold for m in sizes}
    answer = targets.smallest_eps(summary, n, threshold)
    assured = targets.smallest_assured_eps(runs[n], threshold, assurance)
    n_hit = targets.smallest_assured_n(runs, eps, thresholds, assurance)
    text = explain.eps_answer_sentence(assured, answer, n, eps, n_hit, sizes, best.accuracy_mean,
                                       threshold, assurance)
    st.markdown("**At what ε can we publish?** " + text)
    mark = (threshold, targets.hit_at(summary, n, assured.at if assured else None))
    return dict(threshold=threshold, answer=answer, assured=assured, share=share, text=text,
                verdict=sentence, mark=mark, assurance=assurance)


def cards(s, here, best, clipped_here, value_key):
    """The metric cards with the gap to the best non-private rule split into its causes."""
    eps, private = s["eps"], math.isfinite(s["eps"])
    split = private or s["mode"] == "free"
    vk = value_key
    gammas = (compute.gamma_used(s["mode"], s["gamma"], eps, s["n"]), decide.best_gamma(s["n"]))
    cols, splits = st.columns(3), []
    for col, (label, m, unit, digits, word) in zip(cols, (
            ("Accuracy (better treatment)", "accuracy", "pts", 1, "percentage points (pts) of accuracy"),
            ("Value of the rule", vk, "", 2, "outcome units; value: the average outcome of patients "
                                              "treated as the rule says"))):
        total, noise = here[f"{m}_mean"] - best[f"{m}_mean"], here[f"{m}_mean"] - here[f"{m}_same_gamma_mean"]
        splits.append(f"{label.split(' (')[0].lower()} {explain.gap_text(total, noise, total - noise, unit, digits, gammas)}")
        col.metric(label, f"{here[f'{m}_mean']:.{digits}f}{'%' if m == 'accuracy' else ''}",
                   f"{total:+.{digits}f} {unit} vs best non-private".replace("  ", " ") if split else None,
                   help=f"95% interval over {int(here.reps)} simulated trials: {here[f'{m}_lo']:.{digits}f} – "
                        f"{here[f'{m}_hi']:.{digits}f}. The change, in {word}, is against the best non-private "
                        f"rule (γ = {gammas[1]:g}); “from regularization” is what the γ in use costs even "
                        "without noise.")
    if private:
        cols[2].metric("Agrees with the non-private rule", f"{here.concordance_mean:.1f}%",
                       help=f"At the same γ. 95% interval: {here.concordance_lo:.1f} – {here.concordance_hi:.1f}%.")
    if split:
        st.markdown("**The gap to the best non-private rule, by cause:** " + "; ".join(splits)
                    + ". (pts: percentage points of accuracy; value in outcome units; regularization: "
                    "what the γ in use costs even without noise.)")
    st.caption(explain.intervals(here, vk, private))
    outcome, W = compute.preprocessing(s["prep"], s["W"])
    st.caption(explain.coverage(s["prep"], W, outcome, float(clipped_here.mean())))
    scale = "on the outcome's own scale" if vk == "value" else "on the authors' test-shifted scale"
    st.info(explain.clinical_summary(eps, s["n"], here.concordance_mean, here[vk + "_mean"],
                                     best[vk + "_mean"], scale), icon=":material/groups:")
    st.info(explain.privacy_statement(eps), icon=":material/visibility_off:")
    glossary.panel(TERMS)


def downloads(results, summary, s, report):
    """The four downloads; ``report()`` builds the view's handout, called only on a download."""
    runs, report = {n: r for n, (r, _, _) in results.items()}, functools.cache(report)
    a, b, c, d = st.columns(4)
    a.download_button("Runs (CSV)", lambda: handout.with_settings(compute.stack_runs(runs), report().settings),
                      "dp_owl_runs.csv", "text/csv", on_click="ignore", width="stretch")
    b.download_button("Summary (CSV)", lambda: handout.with_settings(summary, report().settings),
                      "dp_owl_summary.csv", "text/csv", on_click="ignore", width="stretch")
    c.download_button("This view (CSV)", lambda: handout.with_settings(
        compute.view_numbers(summary, s["n"], s["eps"]), report().settings), "dp_owl_view.csv", "text/csv",
        on_click="ignore", width="stretch")
    d.download_button("Handout (HTML, offline)", lambda: handout.page(report()), "dp_owl_handout.html",
                      "text/html", on_click="ignore", width="stretch", key="handout")
    st.caption("Each CSV starts with its settings (seed, W, preprocessing, the reproducing link) and a "
               "data dictionary as # comment lines: read it with pandas.read_csv(..., comment='#').")


def for_statisticians(ex, eps, names):
    """The agreement test and noise geometry of the example rule, the formulas and the paper's γ table."""
    if math.isfinite(eps):
        st.markdown(explain.agreement_text(ex.agreement))
        radius = expected_noise_radius(len(ex.theta_hat), eps, ex.sensitivity, k=2)
        st.plotly_chart(figure(charts.noise_vector, ex.theta_hat, ex.noise, radius, names=names), width="stretch",
                        key="noise", config=charts.CONFIG)
        st.caption(explain.noise_caption(len(ex.theta_hat), ex.sensitivity, radius))
    for formula, meaning in explain.OWL_FORMULAS:
        st.latex(formula)
        st.caption(meaning)
    st.dataframe(compute.paper_gamma_table(), width="stretch")
    st.caption("The authors' tuned γ for each trial size n (rows) and ε (columns).")
