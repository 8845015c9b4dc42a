"""Sentences of the DP-OWL page."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

    from dpcore.owl.tuning import TuningResult


def out_of_100(percent: float) -> str:
    """A percentage as patients out of 100 ("37 of 100")."""
    return f"{round(percent):.0f} of 100"


def gap_text(
    total: float,
    noise: float,
    regularization: float,
    unit: str = "pts",
    digits: int = 1,
    gammas: tuple[float, float] | None = None,
) -> str:
    """The gap to the best non-private rule, split into its two causes.

    ``gammas`` = (γ in use, best non-private γ) names the regularization part.
    """
    f = f"{{:+.{digits}f}}"
    head = f"{f.format(total)} {unit}".rstrip()
    if abs(regularization) < 0.5 * 10**-digits:
        return f"{head}, all from noise"
    why = (
        f"γ = {gammas[0]:g} instead of the best non-private γ = {gammas[1]:g}"
        if gammas
        else "a larger γ than the best non-private rule's"
    )
    return f"{head}: {f.format(noise)} from noise, {f.format(regularization)} from regularization ({why})"


def intervals(here: pd.Series, value_key: str, private: bool) -> str:
    """The cards' 95% Monte-Carlo intervals, in one line."""
    parts = [
        f"accuracy {here.accuracy_lo:.1f}–{here.accuracy_hi:.1f}%",
        f"value {here[value_key + '_lo']:.2f}–{here[value_key + '_hi']:.2f}",
    ]
    if private:
        parts.append(f"agreement {here.concordance_lo:.1f}–{here.concordance_hi:.1f}%")
    return f"95% intervals over {int(here.reps)} simulated trials: " + ", ".join(parts) + "."


def coverage(prep: str, W: float, bounds: str | tuple[float, float], clipped_share: float) -> str:
    """What the privacy guarantee covers in this preprocessing mode (a caption); ``bounds`` is
    the engine's outcome argument (:func:`dpcore_app.ui.owl.compute.preprocessing`)."""
    unit = (
        "Unit of privacy: one patient (one row); neighbouring trials differ by replacing "
        "one patient."
    )
    if prep == "paper":
        return (
            f"{unit} **Paper's preprocessing: not covered by the guarantee.** As in the "
            "authors' code, each training set's outcomes are shifted by their own minimum "
            f"and weights are capped at W = {W:g}; that shift reads the data, so these curves "
            "reproduce the paper rather than a private release."
        )
    assert not isinstance(bounds, str)  # "paper" comes only with the paper's preprocessing
    lo, hi = bounds
    clipped = (
        "no weight is clipped"
        if clipped_share == 0
        else f"{100 * clipped_share:.1f}% of the weights are clipped at W (the guarantee still "
        "holds; clipped patients count for less)"
    )
    return (
        f"{unit} **Pure ε-DP (δ = 0) for the released coefficients.** Outcomes are clipped to "
        f"the public range [{lo:g}, {hi:g}] fixed before the data, weights are benefit / "
        f"propensity with W = {W:g}, and {clipped}."
    )


def eps_curve_caption(
    metric: str, mode: str = "paper", gamma: float | None = None, all_n: bool = False
) -> str:
    """What the ε chart draws, in the mode it is drawn in."""
    if metric == "concordance":
        return (
            "Agreement with the non-private rule at the same n and γ (100% means the same "
            "recommendations); the dash-dot line is a coin flip."
        )
    which = "every trial size" if all_n else "the current n only (tick the box for every n)"
    if mode == "paper":
        lines = (
            "Grey dotted: the best non-private rule. Grey dashed: the non-private rule at the "
            "γ each ε uses. The band's distance to the dashed line is the cost of the noise; "
            "dashed to dotted, the cost of the larger γ that privacy calls for"
        )
    else:
        lines = (
            f"Grey dashed: the non-private rule at the fixed γ = {gamma:g}. Grey dotted: the "
            "best non-private rule (the authors' tuned γ). The band's distance to the dashed "
            "line is the cost of the noise; dashed to dotted, the cost of fixing γ"
        )
    refs = (
        " The dash-dot line at 50% is a coin flip; treating everyone or no one lands within a "
        "point of it (labelled)."
        if metric == "accuracy"
        else " Thin labelled lines: the rules "
        "that need no data (treat everyone, treat no one) and the oracle that knows the truth."
    )
    return f"Each band is one trial size. {lines}, drawn for {which}.{refs}"


def n_curve_caption(
    eps: float, mode: str = "paper", lengths: Mapping[int, float] | None = None
) -> str:
    """What the n chart shows; ``lengths`` maps n to the noise's typical length dΔ/ε there."""
    if math.isinf(eps):
        return "Without noise, more patients give a rule closer to the best one."
    if mode != "paper":
        return (
            "At a fixed ε and a fixed γ the noise, of typical length dΔ/ε with Δ = 2W/γ, is "
            "the same at every n, while the coefficients grow with n: the same noise flips "
            "fewer recommendations."
        )
    lengths = lengths or {}
    sizes = sorted(lengths)
    change = (
        ""
        if len(sizes) < 2
        else f" (at ε = {eps:g}: " + ", ".join(f"{lengths[n]:.1f} at n = {n}" for n in sizes) + ")"
    )
    return (
        "With the paper-tuned γ, the authors' table changes γ with n, so the noise's typical "
        f"length dΔ/ε, Δ = 2W/γ, changes with n too{change}; what more patients buy at this "
        "ε is what the curve measures. Choose a fixed γ to see the noise held still."
    )


def spread_caption(sd_private: float | None, sd_nonprivate: float) -> str:
    """What the histogram shows, judged from the two spreads actually drawn."""
    text = "Each bar counts simulated trials whose rule scored in that range"
    if sd_private is None:
        return text + "."
    if sd_private > 1.2 * sd_nonprivate:
        return (
            text + f": privacy widens the spread (standard deviation {sd_private:.2f} against "
            f"{sd_nonprivate:.2f}), and the mean hides how often a private rule is poor."
        )
    return (
        text + f": at this ε the private rules spread about as much as the non-private ones "
        f"(standard deviation {sd_private:.2f} against {sd_nonprivate:.2f})."
    )


def agreement_text(agree: Mapping[str, float]) -> str:
    """The example rule's agreement with the non-private one on new patients, with its test."""
    p = f"p = {agree['p_value']:.1e}" if agree["p_value"] >= 1e-300 else "p below 10⁻³⁰⁰"
    return (
        f"On 5000 new patients this example's private rule agrees with the non-private one "
        f"for {100 * agree['concordance']:.1f}% (Cohen's κ = {agree['kappa']:.2f}; Fisher's "
        f"exact one-sided test of agreement beyond chance: {p})."
    )


def noise_caption(d: int, sensitivity: float, radius: float) -> str:
    """What the noise-vector picture shows: the noise's law and the circle's radius."""
    return (
        f"The exact minimiser θ̂ moves by noise of length Gamma(d = {d}, rate ε/Δ), Δ = "
        f"{sensitivity:.3g}, in a uniform direction; the picture shows its part on two of the "
        f"{d} coordinates, and the circle that part's mean length, {radius:.3g}."
    )


def tuning_caption(res: TuningResult, reps: int, n: int, variant: str, n0: int) -> str:
    """What Algorithm 2's curve says, with its uncertainty."""
    flat = (
        f" The curve is flat here: {100 * res.near_best:.0f}% of the γ grid is within one "
        "standard error of the best, so many γ are about as good."
        if res.near_best >= 0.25
        else ""
    )
    return (
        f"Mean validation value of {reps} private fits per γ, each on n = {n} rows drawn from D0 "
        f"({variant}, n0 = {n0}), with 95% bands. The pick is the largest γ within one standard "
        f"error of the best mean (γ = {res.top_gamma:g}): larger γ means less noise, and the data "
        f"cannot tell these apart.{flat}"
    )


OWL_INTRO = (
    "**How much worse does a treatment rule get when it is learned with differential privacy?** "
    "A randomized trial of two treatments is simulated as in the DP-wERM paper: four patient "
    "features (shown as age, a biomarker, blood pressure and kidney risk, each scaled to [0, 1]; "
    "the names are illustrative) and a true best treatment that depends on them. The rule *treat when intercept + "
    "Σ coef·x > 0* is learned by outcome weighted learning and released with ε-differential "
    "privacy by adding noise to its coefficients. Every number is a Monte-Carlo mean over "
    "repeated trials."
)

OWL_FORMULAS = (
    (
        r"\hat\theta = \arg\min_\theta \sum_{i=1}^n \frac{B_i - b_{lo}}{\pi(A_i)}\,"
        r"\ell_h\big(A_i\,\theta^\top \tilde x_i\big) + \frac{\gamma}{2}\lVert\theta\rVert^2",
        "The rule: a weighted classification of the treatment received, each patient weighted by "
        "their benefit over the chance of the arm they got (W bounds these weights).",
    ),
    (
        r"\Delta = \frac{C + 2W}{\gamma}",
        "How far replacing one patient can move the exact rule (C = 0 here: the randomization "
        "probabilities are known); the code adds a 2·10⁻⁶/γ solver slack.",
    ),
    (
        r"\theta^* = \hat\theta + b,\quad p(b) \propto e^{-\varepsilon \lVert b\rVert / \Delta}",
        "The release: noise whose length is Gamma(d, ε/Δ) in a uniform direction, so its mean "
        "length is dΔ/ε.",
    ),
)


def clinical_summary(
    eps: float,
    n: int,
    concordance: float,
    value_private: float,
    value_best: float,
    scale: str,
) -> str:
    """The private rule against the best non-private rule, out of 100 patients, in outcome units."""
    if math.isinf(eps):
        return (
            f"Without privacy, a rule learned from {n} patients reaches an average outcome of "
            f"{value_private:.2f} outcome units ({scale}; the best non-private rule: "
            f"{value_best:.2f})."
        )
    same = int(round(concordance))
    change = value_private - value_best
    direction = "drops" if change < 0 else "rises" if change > 0 else "stays"
    return (
        f"At ε = {eps:g}, with {n} patients to learn from, out of 100 new patients the private "
        f"rule recommends the same treatment as the non-private rule at its γ for about {same}; "
        f"the average outcome of patients treated by the rule (its value) {direction} from "
        f"{value_best:.2f} for the best non-private rule to {value_private:.2f} outcome units "
        f"({scale})."
    )


# Display names for the simulated trial's features x1..x4 (each uniform on [0, 1]); invented
# so that a rule reads like one, the simulation itself is the paper's.
FEATURE_NAMES = {
    "x1": "age (x1)",
    "x2": "biomarker (x2)",
    "x3": "blood pressure (x3)",
    "x4": "kidney risk (x4)",
}


def feature_names(names: Iterable[str]) -> tuple[str, ...]:
    """The rule's terms as the charts show them."""
    return tuple(FEATURE_NAMES.get(x, x) for x in names)


LEARNER_NAMES = {  # how the sentences and the chart name each learner of dpcore.owl.learners
    "plug-in": "the plug-in rule",
    "DP-OWL objective": "objective perturbation",
    "DP-OWL": "the paper's output perturbation",
}
LINEAR_CAVEAT = (
    "the plug-in rule assumes the effect is linear in the covariates: docs/findings.md shows "
    "where it loses"
)


def _joined(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def learners_sentence(
    eps: float,
    n: int,
    cells: Mapping[str, tuple[float, float, float]],
    pairs: Mapping[tuple[str, str], tuple[float, float, float]],
    reps: int,
) -> str:
    """What the three learners buy at (ε, n), as strong as the simulation shows and no more.

    ``cells``: {learner: (mean, lo, hi)} of the share of patients given the better treatment
    (percent); ``pairs``: {(first, second): (mean, lo, hi)} of their paired differences
    (first minus second). The ranking is stated only where the paired 95% interval excludes
    0; a learner whose interval holds 50% is called a coin flip.
    """
    order = sorted(cells, key=lambda k: -cells[k][0])

    def ahead(a, b):  # a beats b beyond Monte-Carlo doubt
        if (a, b) in pairs:
            return pairs[(a, b)][1] > 0
        return pairs[(b, a)][2] < 0

    def same(a, b):  # one rule: the two DP-OWL releases without noise
        m, lo, hi = pairs[(a, b)] if (a, b) in pairs else pairs[(b, a)]
        return m == lo == hi == 0.0

    def share(percent, of_100=False):  # never 100 for a rule that misses some patients
        whole = round(percent)
        text = f"{whole:.0f}" if whole < 100 or percent >= 100 else "more than 99"
        return f"{text} of 100" if of_100 else text

    where = (
        f"At ε = {eps:g} and {n} patients"
        if math.isfinite(eps)
        else f"Without privacy (ε = ∞) and {n} patients"
    )
    first, *rest = order
    text = (
        f"{where}, {LEARNER_NAMES[first]} gives the better treatment to "
        f"{share(cells[first][0], True)} patients on average, "
        + ", ".join(f"{LEARNER_NAMES[k]} {share(cells[k][0])}" for k in rest)
    )
    clauses = [] if math.isfinite(eps) else ["without noise, these are each learner's ceiling"]
    clauses += [
        f"{LEARNER_NAMES[a]} and {LEARNER_NAMES[b]} give the same rule"
        for a, b in zip(order, order[1:])
        if same(a, b)
    ]
    tied = [(a, b) for a, b in zip(order, order[1:]) if not ahead(a, b) and not same(a, b)]
    separated = len(order) - 1 - len(tied) - sum(same(a, b) for a, b in zip(order, order[1:]))
    if not tied and separated:
        clauses.append(
            ("each lead" if separated > 1 else "the lead")
            + f" is beyond Monte-Carlo doubt ({reps} simulated trials)"
        )
    elif len(tied) == len(order) - 1 and not ahead(order[0], order[-1]):
        clauses.append(f"with {reps} simulated trials the three cannot be told apart")
    elif tied:
        clauses.append(
            f"with {reps} simulated trials "
            + "; ".join(
                f"{LEARNER_NAMES[a]} and {LEARNER_NAMES[b]} cannot be told apart" for a, b in tied
            )
        )
    coins = [k for k in order if cells[k][1] <= 50.0]
    if coins:
        clauses.append(
            "all three are no better than a coin flip"
            if len(coins) == len(order)
            else f"{_joined([LEARNER_NAMES[k] for k in coins])} "
            + ("is" if len(coins) == 1 else "are")
            + " no better than a coin flip"
        )
    if clauses:
        text += "; " + "; ".join(clauses)
    return f"{text}; {LINEAR_CAVEAT}."


def learners_caption(n: int, reps: int) -> str:
    """What to notice on the learners' chart."""
    return (
        f"The paper's simulated trial, {n} patients, {reps} simulated trials per ε; bands are "
        "95% Monte-Carlo intervals; each dotted line is that learner without noise. All three "
        "are fitted on the same trials and scored on the same test patients. The trial's "
        "effect is linear in the covariates, the plug-in rule's assumption."
    )


# Each chart's reading: one line beside the figure, with the numbers it draws at the page's
# setting, so a projector's audience reads the chart's point without the caption below it.

_METRIC_NAMES = {
    "accuracy": "accuracy",
    "value": "value",
    "value_paper": "value (paper scale)",
    "concordance": "agreement with the non-private rule",
}


def _level(metric, x):
    return f"{x:.1f}%" if metric in ("accuracy", "concordance") else f"{x:.2f}"


def _at(rows, eps, metric):
    at = rows["epsilon"]
    hit = rows[np.isinf(at) if math.isinf(eps) else np.isclose(at, eps)]
    return float(hit[f"{metric}_mean"].iloc[0])


def first_label(first: bool | int) -> str:
    """The label of a sentence drawn from a first estimate (``first``: the repetitions of the
    final numbers, or True), as the verdict's stability line has it; "" on the final numbers."""
    return "**First estimate:** " if first else ""


def eps_reading(
    summary: pd.DataFrame, n: int, metric: str, eps: float, first: bool | int = False
) -> str:
    """The ε chart in one line: at the page's n, the metric at the grid's smallest and largest
    private ε, at the chosen ε, and without privacy (labelled on a ``first`` estimate)."""
    rows = summary[summary["n"] == n]
    private = np.sort(rows["epsilon"][np.isfinite(rows["epsilon"])].to_numpy())
    low, last = float(private[0]), float(private[-1])
    shown = [f"{_level(metric, _at(rows, low, metric))} at ε = {low:g}"]
    if math.isfinite(eps) and eps not in (low, last):
        shown.append(f"{_level(metric, _at(rows, eps, metric))} at the chosen ε = {eps:g}")
    shown.append(f"{_level(metric, _at(rows, last, metric))} at ε = {last:g}")
    return first_label(first) + (
        f"With {n} patients, the private rule's {_METRIC_NAMES[metric]} runs from "
        f"{', '.join(shown[:-1])} to {shown[-1]}; without privacy "
        f"{_level(metric, _at(rows, math.inf, metric))}."
    )


def n_reading(summary: pd.DataFrame, eps: float, metric: str, first: bool | int = False) -> str:
    """The n chart in one line: the metric at the smallest and largest simulated n, at the
    chosen ε and without privacy (labelled on a ``first`` estimate)."""
    return first_label(first) + _n_reading(summary, eps, metric)


def _n_reading(summary, eps, metric):
    sizes = sorted(summary["n"].unique())
    small, large = summary[summary["n"] == sizes[0]], summary[summary["n"] == sizes[-1]]
    name = _METRIC_NAMES[metric]
    if len(sizes) == 1:  # one simulated n (no sizes to compare, or the work cap kept one)
        nonprivate = _level(metric, _at(small, math.inf, metric))
        if math.isinf(eps):
            return f"Without privacy, {name} is {nonprivate} with {sizes[0]} patients."
        return (
            f"At ε = {eps:g}, {name} is {_level(metric, _at(small, eps, metric))} with "
            f"{sizes[0]} patients; without privacy {nonprivate}."
        )
    nonprivate = (
        f"{_level(metric, _at(small, math.inf, metric))} to "
        f"{_level(metric, _at(large, math.inf, metric))}"
    )
    if math.isinf(eps):
        return f"Without privacy, {name} runs from {nonprivate} between {sizes[0]} and {sizes[-1]} patients."
    return (
        f"At ε = {eps:g}, {name} runs from {_level(metric, _at(small, eps, metric))} with "
        f"{sizes[0]} patients to {_level(metric, _at(large, eps, metric))} with {sizes[-1]}; "
        f"without privacy from {nonprivate}."
    )


def spread_reading(
    here: ArrayLike | None, best: ArrayLike, metric: str, eps: float, first: bool | int = False
) -> str:
    """The histogram in one line: where the middle 90% of single releases land at ``eps``
    (``here``: the metric over simulated trials, None without privacy), beside the
    non-private rule's (``best``); labelled on a ``first`` estimate."""
    return first_label(first) + _spread_reading(here, best, metric, eps)


def _spread_reading(here, best, metric, eps):

    def middle(x):
        lo, hi = np.quantile(np.asarray(x, float), [0.05, 0.95])
        return f"{_level(metric, lo)} to {_level(metric, hi)}"

    if here is None:
        return f"Without privacy, 9 in 10 simulated trials give a rule whose {_METRIC_NAMES[metric]} is {middle(best)}."
    return (
        f"One release at ε = {eps:g} lands anywhere from {middle(here)} in 9 of 10 simulated "
        f"trials; without privacy {middle(best)}."
    )
