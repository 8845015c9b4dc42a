"""Sentences of the your-data page's analyst tools: the preview, the noise, the evaluation.

Plain text: callers escape it for markdown or HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dpcore.privacy.composition import parallel_cost

if TYPE_CHECKING:
    import pandas as pd

    from dpcore.owl.evaluation_result import PrivateEvaluation

PREVIEW_NOTE = (
    "Simulated, no privacy spent: a twin of your trial built from public values only "
    "(n, covariate count, public bounds, design, W, C, γ), not from your patients."
)


def twin_assumptions(n: int, dominant: bool = False) -> str:
    """What the twin assumes, in one sentence: the preview is exactly as good as these."""
    arms = (
        "one arm better on average (a dominant arm)"
        if dominant
        else "no average difference between the arms"
    )
    return (
        f"The twin assumes {n} patients (those the rule is fitted on), covariates uniform on "
        "their public bounds (0/1 columns fair coins), a treatment effect linear in the "
        f"covariates and {arms}. A real trial differs on each: read the preview as an order "
        "of magnitude, not a forecast."
    )


def effects_name(strength: str) -> str:
    """A preview strength in words: "moderate effects", "your stated effects"."""
    return "your stated effects" if strength == "yours" else f"{strength} effects"


def needed_sentence(
    need: float | None, eps: float, n: int, unit: str, outcome_bounds: Sequence[float]
) -> str:
    """How much the effect must vary between patients for a DP-OWL release at ε to beat giving
    everyone one arm on the twin (:func:`dpcore.release.preview_reading.needed_heterogeneity`)."""
    from dpcore.release.preview_reading import NEEDED_SHARES

    u = f" {unit}" if unit else ""
    if need is None:
        top = NEEDED_SHARES[-1] * (float(outcome_bounds[1]) - float(outcome_bounds[0]))
        return (
            f"On this twin, even an effect that varies between patients with an SD of "
            f"{top:.3g}{u} is not enough for a DP-OWL release at ε = {eps:g} with {n} patients "
            "to beat giving everyone one arm beyond Monte-Carlo doubt: it takes a larger ε or "
            "more patients. Simulated, no privacy spent."
        )
    return (
        f"On this twin, a DP-OWL release at ε = {eps:g} with {n} patients beats giving everyone "
        f"one arm beyond Monte-Carlo doubt once the treatment effect varies between patients "
        f"with an SD of about {need:.3g}{u} (the smallest of the sizes tried that does). Is it "
        "that large "
        "in your trial? If not, a rule is unlikely to do better than the better arm. "
        "Simulated, no privacy spent."
    )


def preview_sentence(
    frame: pd.DataFrame,
    strength: str,
    eps: float,
    target: float,
    smallest: float | None,
    unit: str = "",
    who: str = "a private rule",
) -> str:
    """What a release at ε is likely to deliver on the twin, and the ε that reaches the target.

    The value kept is a share only when it lies in [0, 100%]; otherwise the two gains are
    given. A band of single releases spanning almost all of 0–100% is called uninformative.
    ``who`` names the release ("a DP-OWL release" when the analyst chose the other learner).
    """
    row = frame[(frame["strength"] == strength) & (frame["epsilon"] == eps)].iloc[0]
    unit = f" {unit}" if unit else ""
    reach = (
        f"the smallest previewed ε at which it agrees on {target}% of patients on average is "
        f"about {smallest:.2g}"
        if smallest is not None
        else f"no previewed ε up to 100 reaches {target}% agreement on average"
    )
    lo, hi = row["agreement_lo"], row["agreement_hi"]
    spread = (
        f"single releases range from {lo:.0f}% to {hi:.0f}%, too wide to say what one "
        "release will do"
        if hi - lo >= 80
        else f"95% of single releases between {lo:.0f}% and {hi:.0f}%"
    )
    kept, base = row["retained_mean"], row["nonprivate_gain"]
    if kept == kept and 0.0 <= kept <= 1.0:
        value = f"keeps {100 * kept:.0f}% of its gain over the better fixed arm"
    elif kept == kept:
        value = (
            f"gains {kept * base:.3g}{unit} over the better fixed arm on average, against "
            f"{base:.3g}{unit} for the non-private rule"
        )
    else:
        value = "has no gain over the better fixed arm to keep (the non-private rule has none)"
    return (
        f"With {effects_name(strength)} (the best arm's advantage varies across patients with a "
        f"standard deviation of {row['effect_sd']:.3g}{unit}), {who} at ε = {eps:g} "
        f"agrees with the non-private rule on {row['agreement_mean']:.0f}% of patients on "
        f"average ({spread}) and {value}; {reach}.{stability_clause(row, eps)} "
        "Simulated, no privacy spent."
    )


#: The learners in a sentence, and on the button that chooses one.
LEARNER_NAMES = {"dp-owl": "DP-OWL", "plug-in": "the private plug-in rule"}


def learner_sentence(
    rec: Mapping[str, Any], strength: str, eps: float, chosen: str | None = None
) -> str:
    """Which learner gave more of the twin's patients the better arm at ε, by how much, with
    the Monte-Carlo interval of the difference; "cannot tell" when the interval holds 0.
    ``rec`` is :func:`dpcore.release.preview_reading.recommend_learner`'s; ``chosen`` the
    analyst's learner."""
    lo, hi = rec["ci"]
    shares = (
        f"the private plug-in rule gives the better arm to {rec['plugin']:.0f}% of the twin's "
        f"patients on average and DP-OWL to {rec['dp_owl']:.0f}%"
    )
    twin = "on a simulated twin whose effect is linear in the covariates, not on your trial"
    head = f"With {effects_name(strength)} at ε = {eps:g}, {shares}"
    if rec["learner"] is None:
        if lo != lo:  # a single twin: no interval
            return f"{head}; one twin gives no Monte-Carlo interval, so the preview cannot tell which learner is better ({twin})."
        return (
            f"{head}: the difference, {rec['difference']:+.1f} points (95% Monte-Carlo "
            f"interval {lo:+.1f} to {hi:+.1f}), is within the simulation's uncertainty, so the "
            f"preview cannot tell which learner is better here ({twin})."
        )
    better = rec["learner"]
    gap = abs(rec["difference"])
    low, high = sorted((abs(lo), abs(hi)))
    mine = " (your choice)" if chosen == better else ""
    return (
        f"{head}: {gap:.1f} more patients in 100 get the better arm with "
        f"{LEARNER_NAMES[better]}{mine} (95% Monte-Carlo interval {low:.1f} to {high:.1f}), "
        f"{twin}."
    )


def stability_clause(row: pd.Series, eps: float) -> str:
    """How often two releases of the same trial at ε would disagree on a patient (the twin's
    paired draws), so that a second release that differs is expected, not a surprise."""
    d, lo, hi = row.get("disagreement_mean"), row.get("disagreement_lo"), row.get("disagreement_hi")
    if d is None or d != d or lo is None or hi is None:  # a preview without paired draws
        return ""
    coin = ": about as often as two coin flips would" if lo <= 50.0 <= hi else ""
    shown = f"{d:.0f}%" if d >= 1 else f"{d:.2g}%"
    return (
        f" Two releases at ε = {eps:g} on the same trial (fresh noise each) would treat about "
        f"{shown} of its patients differently (95% of pairs between {lo:.0f}% and {hi:.0f}%)"
        f"{coin}; a second release that differs this much is expected."
    )


def noise_sentence(noise: Mapping[str, Any], names: Sequence[str], eps: float) -> str:
    """The typical noise per coefficient in the rule's own units, against the public bounds."""
    j = int(abs(noise["across_bounds"]).argmax()) if len(names) else 0
    worst = (
        f"; across its public bounds the noise alone can move the score by about "
        f"{noise['across_bounds'][j]:.2g} for '{names[j]}'"
        if len(names)
        else ""
    )
    return (
        f"At ε = {eps:g} the noise added to the rule has length dΔ/ε = {noise['radius']:.3g} "
        f"in the scaled space where every patient's features have length at most 1; per "
        f"coefficient that is typically {noise['intercept']:.2g} on the intercept{worst}. "
        "Compare it with the released rule's bars: a covariate whose bar is not much longer "
        "than this could owe its pull to the noise."
    )


def evaluation_sentence(evaluation: PrivateEvaluation) -> str:
    """The rule's verdict and its evidence, as released numbers (the first answer, which arm
    is better on average, is shown before it)."""
    return evaluation.rule_sentence()


def cost_sentence(eps_fit: float, eps_eval: float, n_fit: int, n_eval: int) -> str:
    """Parallel composition of the two parts, in one sentence."""
    return (
        f"The rule was fitted on {n_fit} patients at ε = {eps_fit:g} and evaluated on the "
        f"other {n_eval} at ε_eval = {eps_eval:g}; each patient is in one part only, so the "
        f"trial spends max(ε, ε_eval) = {parallel_cost({'fit': eps_fit, 'evaluation': eps_eval}):g} (parallel composition)."
    )


def outside_bounds(shares: Mapping[str, float], limit: float) -> str:
    """Analyst only: which columns' values lie outside their public bounds, in words."""
    listed = ", ".join(f"{c} ({s:.0%})" for c, s in sorted(shares.items(), key=lambda x: -x[1]))
    return (
        f"Analyst only: more than {limit:.0%} of the values of {listed} lie outside their "
        "public bounds, and the release would clip every one of them to the nearest bound. "
        "Are the bounds in the data's units (grams or kilograms, days or weeks)? Correct them "
        "in the table above, or confirm them below to release."
    )
