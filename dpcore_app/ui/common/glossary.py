"""One glossary for every symbol and term the pages show, and the expander that shows a page's
share of it (each entry links to the full Glossary page)."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from dpcore_app import page
from dpcore_app.ui.common.controls import details

TERMS = {
    "accuracy": (
        "Accuracy",
        "Out of 100 new patients, for how many the rule recommends the treatment "
        "that is truly better for them (known because the trial is simulated).",
    ),
    "value": (
        "Value",
        "The average outcome if every new patient were treated as the rule says "
        "(higher is better), in the outcome's own units, estimated from a test set by "
        "inverse-probability weighting.",
    ),
    "points": (
        "Points",
        "Percentage points of accuracy (90% to 85% is 5 points). Outcome values are "
        "given in outcome units instead.",
    ),
    "agreement": (
        "Agreement",
        "Out of 100 new patients, for how many the private rule recommends the "
        "same treatment as the rule learned without privacy at the same γ.",
    ),
    "coin flip": (
        "Coin flip",
        "A rule that picks each treatment at random is right for 50 of 100 "
        "patients; an interval containing 50% cannot rule that out.",
    ),
    "treat everyone": (
        "Treat everyone / treat no one",
        "The two rules that need no data; here each is right for about half of the patients.",
    ),
    "oracle": (
        "Oracle rule",
        "The rule sign(f) that knows the true best treatment; no data can beat it.",
    ),
    "epsilon": (
        "ε (privacy budget)",
        "How much one patient's data may change what is released: no "
        "outcome becomes more than e^ε times as likely because of one patient. Smaller ε: more "
        "noise, stronger protection; ε ≤ 1 is usually called strong.",
    ),
    "delta": (
        "δ",
        "The additive slack in an (ε, δ) guarantee: every set of outcomes is at most e^ε "
        "times as likely, plus δ, because of one patient. It is not simply the probability "
        "that the guarantee fails; pure ε-DP has δ = 0.",
    ),
    "neighbouring": (
        "Neighbouring datasets",
        "Two datasets that differ by replacing one patient's "
        "row: the unit of privacy here. A guarantee says the release looks almost the "
        "same on any two neighbours.",
    ),
    "sensitivity": (
        "Sensitivity",
        "The most a released quantity can change between two "
        "neighbouring datasets (in L1 for Laplace noise, in L2 for Gaussian or the "
        "rule's noise); the noise is scaled to it.",
    ),
    "GDP": (
        "Gaussian DP (μ)",
        "A guarantee stated as how hard it is to tell two neighbours apart: "
        "as hard as telling N(0, 1) from N(μ, 1). DP-GD's steps compose in μ, converted to "
        "(ε, δ) at the end.",
    ),
    "composition": (
        "Composition",
        "Sequential: releases on the same patients add their ε. "
        "Parallel: releases on disjoint parts of the patients (each patient in one "
        "part) cost the largest part's ε, as the rule fitted on one part and its "
        "evaluation on the other do.",
    ),
    "OWL": (
        "OWL (outcome weighted learning)",
        "Learning a treatment rule as a weighted "
        "classification: each patient's arm is the label, weighted by outcome / propensity.",
    ),
    "IPW": (
        "IPW (inverse probability weighting)",
        "Estimating what a rule would achieve from a "
        "randomized trial by weighting each patient whose arm agrees with the rule by 1 / "
        "the probability of that arm.",
    ),
    "epsilon_eval": (
        "ε_eval",
        "The budget of the private evaluation on held-out patients; with the "
        "rule fitted on the other part, the trial spends max(ε, ε_eval).",
    ),
    "n": ("n", "Patients (rows) in the trial; public."),
    "gamma": (
        "γ (regularization)",
        "How strongly the rule is pulled towards zero. A larger γ makes the "
        "rule less sensitive to one patient (less noise needed) but blurs it. λ = γ/n is the "
        "same penalty per patient. “The larger γ”: the γ privacy calls for, above the best "
        "non-private rule's.",
    ),
    "h": (
        "h (Huber width)",
        "Width of the smoothing of the hinge loss; the loss must be smooth for "
        "the sensitivity bound.",
    ),
    "W": (
        "W (weight bound)",
        "A public bound on each patient's weight, benefit / propensity; larger "
        "weights are clipped to W.",
    ),
    "C": (
        "C",
        "The part of the sensitivity due to propensities estimated from the data; 0 when the "
        "trial's randomization probabilities are known.",
    ),
    "Delta": (
        "Δ (sensitivity)",
        "How far replacing one patient can move the exact rule: (C + 2W)/γ.",
    ),
    "d": ("d", "Number of coefficients released (features plus the intercept), or a dimension."),
    "tau": ("τ", "The tail share: CVaR at τ is the mean of the worst τ share of losses."),
    "CVaR": ("CVaR", "Conditional value at risk: the mean of the worst τ share of losses."),
    "eps_n_tau": (
        "εnτ",
        "The effective private tail sample size: privacy error in CVaR scales like 1/(εnτ).",
    ),
    "B": ("B (loss bound)", "A public upper bound on each loss; losses are clipped to [0, B]."),
    "rho": (
        "ρ",
        "The failure probability of a high-probability bound: it holds with probability 1 − ρ.",
    ),
    "G": (
        "G",
        "The generalization term of Theorem 11 (the paper's constant for the gap between "
        "training and population risk).",
    ),
    "kappa": (
        "κ (Cohen's kappa)",
        "Agreement beyond chance: 0 is chance agreement, 1 is identical.",
    ),
    "regime": (
        "Regime",
        "Which error dominates the CVaR bound: the statistical error, the privacy "
        "error, or neither (trivial: the bound says nothing).",
    ),
    "exponential mechanism": (
        "Exponential mechanism",
        "A private choice among finitely many options, "
        "each picked with probability ∝ exp(−ε · score / (2 · sensitivity)).",
    ),
    "DP-GD": (
        "DP-GD",
        "Gradient descent with Gaussian noise on each step, (ε, δ)-DP by composition.",
    ),
    "Laplace": (
        "Laplace mechanism",
        "Adds Laplace noise of scale sensitivity/ε to a number: ε-DP.",
    ),
    "output perturbation": (
        "Output perturbation",
        "Solve exactly, then add noise sized to the solution's sensitivity.",
    ),
    "public bounds": (
        "Public bounds",
        "Ranges fixed before seeing the data (outcomes, features, W); required for the guarantee.",
    ),
    "authors' shift": (
        "Authors' shift",
        "The paper's code shifts each data set's outcomes by its own "
        "minimum; that reads the data, so the guarantee does not cover it.",
    ),
    "interval": (
        "95% interval",
        "Two kinds here. On simulated pages: the Monte-Carlo interval of a "
        "mean over simulated trials, mean ± t·sd/√R, about the average, not about one "
        "release (the share of single releases reaching a target says that). On a "
        "release's private evaluation: an interval for the rule's value on that trial, "
        "including the Laplace noise and the sampling error.",
    ),
    "Algorithm 2": (
        "Algorithm 2",
        "Tuning γ on public proxy data D0: the largest γ whose validation "
        "score is within one standard error of the best.",
    ),
    "M": ("M", "The number of candidate predictors the exponential mechanism chooses among."),
    "alpha": ("α", "A target excess risk: the sample-size chart asks how many patients reach it."),
    "T terms": (
        "T1, T2, T3",
        "Theorem 10's three terms: regularization (T1), privacy noise (T2) and the "
        "Huber-to-hinge gap (T3).",
    ),
    "theta": (
        "θ, θ̂, θ*, θ0",
        "Coefficients of the rule: θ̂ the exact minimiser, θ* = θ̂ + noise the "
        "release, θ0 the comparator a bound is measured against.",
    ),
    "D0": (
        "D0 (public proxy)",
        "Data that share no patients with the trial, used to tune γ without "
        "spending privacy; a “public” D0 is never the trial itself.",
    ),
    "propensity": (
        "Propensity",
        "The probability of the arm a patient received; known in a randomized trial (1/2 for 1:1).",
    ),
    "n_tau": ("nτ", "Patients in the tail: the sampling error of CVaR scales like 1/√(nτ)."),
    "ledger": (
        "Privacy ledger",
        "The running record of every private release on a dataset; the ε of "
        "releases add up (composition).",
    ),
}


def entry(key: str) -> str:
    name, meaning = TERMS[key]
    return f"- **{name}**: {meaning}"


def markdown(keys: Iterable[str] | None = None) -> str:
    """The glossary (or the listed terms) as a markdown list."""
    return "\n".join(entry(k) for k in (keys or TERMS))


def panel(
    keys: Iterable[str], label: str = "What the words mean", key: str = "glossary_panel"
) -> None:
    """An expander with these terms and a link to the whole glossary, written only when open."""
    box = details(label, key)
    if not box.open:
        return
    with box:
        st.markdown(markdown(keys))
        st.page_link(
            page("glossary"),
            label="Every term and symbol: the glossary",
            icon=":material/menu_book:",
        )
