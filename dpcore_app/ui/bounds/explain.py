"""Sentences of the theory bounds page."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def _times(ratio):
    if ratio >= 1e6:
        return f"{ratio:.1e}"
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"


FORM_NAMES = {"printed": "transcribed", "re-derived": "re-derived"}
CLAIMS = {
    "printed": "Theorem 10 as transcribed (at its stated λ = 2γ/n) claims",
    "re-derived": "the re-derived bound (this project's derivation, not the paper's) claims",
}


def bound_verdict(
    eps: float,
    terms: Mapping[str, float],
    q_measured: float,
    rho: float,
    worst: float | None = None,
    trials: int | None = None,
) -> str:
    """Which term of the re-derived bound rules at this setting, and what the measurement says.

    ``terms`` holds T1, T2, T3, G and total of the re-derived form; ``q_measured`` is the
    measured (1 - rho) quantile of the excess risk over the releases, ``worst`` its largest
    value and ``trials`` the number of simulated trials (without noise: one release each).
    """
    total = terms["total"]
    share = {k: terms[k] / total for k in ("T1", "T2", "T3", "G")} if total > 0 else {}
    names = {
        "T1": "the regularization term",
        "T2": "the privacy-noise term",
        "T3": "the Huber-to-hinge term",
        "G": "the generalization term",
    }
    top = max(share, key=share.__getitem__) if share else "T1"
    if math.isinf(eps):
        head = (
            f"Without privacy there is no noise term: the re-derived bound is {total:.3g}, of "
            f"which {names[top]} is {100 * share.get(top, 0):.0f}%."
        )
        worst = q_measured if worst is None else worst
        count = (
            "each simulated trial" if trials is None else f"each of the {trials} simulated trials"
        )
        return head + (
            f" Without noise there is no probability to state: on {count} (one "
            f"non-private fit each) the rule's weighted error exceeded the comparison "
            f"rule's by at most {worst:.3g}."
        )
    rules = "" if top == "T2" else f", and {names[top]} is the largest"
    head = (
        f"At these settings the privacy-noise term is {100 * share['T2']:.0f}% of the "
        f"re-derived bound{rules}; doubling n, with γ doubled so that λ = γ/n stays, would cut "
        "the noise term to a quarter."
    )
    if q_measured <= 0:
        tail = (
            f"In {100 * (1 - rho):.0f}% of simulated releases the private rule's weighted "
            "error was no worse than the comparison rule's."
        )
    else:
        tail = (
            f"The re-derived bound (this project's derivation, not a theorem of the paper) "
            f"says that the private rule's weighted error exceeds the comparison rule's by at "
            f"most {total:.3g} with probability at least {1 - rho:.0%} over the noise; in "
            f"simulation that excess stayed below {q_measured:.3g} in {1 - rho:.0%} of "
            f"releases, so the bound is {_times(total / q_measured)} times the measured value."
        )
    return head + " " + tail


def headline(
    eps: float,
    terms: Mapping[str, float],
    q_measured: float,
    rho: float,
    status: str,
    cov: Mapping[str, float],
) -> str:
    """The page's verdict in one line: whether the re-derived bound held in the simulation
    (``status`` and ``cov`` from :func:`coverage_sentence`'s judgement of the re-derived
    form), how loose it is against the measured excess, and how much of it is privacy noise.
    :func:`bound_verdict` and :func:`coverage_sentence` say it in full below the charts."""
    total = terms["total"]
    if math.isinf(eps):
        trials = int(cov["trials"])
        k = round(cov["share"] * trials)
        held = (
            f"held on all {trials} simulated trials"
            if k == trials
            else f"failed on {trials - k} of {trials} simulated trials"
        )
        return (
            f"Without noise the re-derived bound ({total:.3g}) {held}; the largest measured "
            f"excess was {q_measured:.3g}."
        )
    share, target = 100 * cov["share"], 100 * (1 - rho)
    within = f"{share:.1f}% of simulated releases within it, against a claimed {target:.0f}%"
    noise = f"{100 * terms['T2'] / total:.0f}%" if total > 0 else "none"
    if status == "violated":
        return f"The re-derived bound fails here: {within} (95% CI up to {100 * cov['hi']:.1f}%)."
    if status == "unclear":
        return (
            f"The re-derived bound may not hold here: {within}, below the claim but within "
            "Monte-Carlo error."
        )
    loose = (
        f", {_times(total / q_measured)} times the measured excess (its {1 - rho:.0%} quantile)"
        if q_measured > 0
        else f"; the private rule was no worse than the comparison in {1 - rho:.0%} of releases"
    )
    return f"The re-derived bound holds here ({within}){loose}; privacy noise is {noise} of it."


def coverage_sentence(
    form: str, cov: Mapping[str, float], rho: float, eps: float = 1.0
) -> tuple[str, str]:
    """("holds" | "unclear" | "violated", sentence): how often the measured excess stayed within
    one form of the bound, against its claimed 1 - rho, judged by the 95% interval that treats
    the trials as clusters (without noise: by the count of trials, with no probability)."""
    name, trials = FORM_NAMES[form], cov.get("trials")
    if math.isinf(eps):
        trials = cov["trials"]  # without noise the count is of trials: always given
        k = round(cov["share"] * trials)
        text = (
            f"Without noise there is no probability: the {name} bound held on {k} of "
            f"{trials} simulated trials (one non-private fit each)."
        )
        return (
            ("holds", text)
            if k == trials
            else ("violated", text + f" It fails on the data of {trials - k} of them.")
        )
    share, lo, hi, m = 100 * cov["share"], 100 * cov["lo"], 100 * cov["hi"], cov["draws"]
    target = 100 * (1 - rho)
    over = "" if trials is None else f" over {trials} trials"
    text = (
        f"The {name} bound held in {share:.1f}% of {m} simulated releases{over} (95% CI "
        f"{lo:.1f}–{hi:.1f}%, counting the releases of one trial as a cluster); {CLAIMS[form]} "
        f"at least {target:.0f}%."
    )
    if hi < target:
        return "violated", text + f" At these settings the {name} formula fails by measurement."
    if share < target:
        return "unclear", text + " Below the claim, but within Monte-Carlo error."
    return "holds", text


def terms_caption(form: str) -> str:
    """What the stacked-terms charts show; the comparator is the hardest only at the current γ."""
    lam = "2γ/n" if form == "printed" else "γ/n"
    return (
        "Shaded: the terms of the chosen form, stacked; dashed: the other form's total; red: "
        "the excess hinge risk of the engine's actual releases against θ₀, the regularized "
        f"hinge fit at the current γ with λ = {lam} (the {FORM_NAMES[form]} form's convention), "
        "kept fixed along both curves: at the current γ it is the comparison that makes the "
        "bound hardest to meet; at other γ it is a fixed comparison rule, not the hardest. "
        "Smaller γ lowers T1 but raises T2; smaller h lowers T3 but raises T2."
    )


def rate_ratio_sentence(lo: float, hi: float, eps: float = 1.0) -> str:
    """The measured CVaR error over the scalar rate (constants set to 1) on one law."""
    text = (
        f"Measured error / scalar rate (constants set to 1) stays between {lo:.2g} and "
        f"{hi:.2g} across n on this one law"
    )
    if 0.2 <= lo and hi <= 2.0:
        text += (
            ": the same order as the rate; Theorem 3.4's rate is a worst case over all "
            "laws, so one law only illustrates it"
        )
    else:
        text += ": the rate's unknown constants matter at these settings"
    beyond = math.isfinite(eps) and eps > 1
    return text + (f" (the theorem is proven for ε ≤ 1; here ε = {eps:g})." if beyond else ".")


def phase_caption(eps: float, d: int) -> str:
    """What the regime map shows: one rule, up to constants, indicative."""
    parts = [
        "Up to constants, and so only indicative: grey where the worst-case rate "
        "1/√(nτ) + √d/(εnτ) reaches its cap 1 (no learner is guaranteed to beat a constant "
        "by more than a constant factor), blue where its privacy term is the larger, green "
        "where its sampling term is."
    ]
    if math.isfinite(eps):
        parts.append(
            "The dashed line is εnτ = √d, the scale of Corollary 6.6 (up to "
            "logarithms; where DP-GD's excess actually falls is measured on the "
            "Private CVaR page)."
        )
        parts.append(
            f"Corollary 6.5 is for (ε, δ)-DP and proven for ε ≤ 1; here ε = {eps:g}."
            if eps > 1
            else "Corollary 6.5 is for (ε, δ)-DP learners."
        )
    parts.append(
        f"The cross is the page's n and τ (d = {d}); the same rule labels the Private "
        "CVaR page, with d = 1."
    )
    return " ".join(parts)


WERM_FORMULAS = (
    (
        r"\begin{aligned}\lambda &= \gamma / n\ \text{(re-derived)},\quad \lambda = 2\gamma/n\ \text{(transcribed)}\\ \hat L_0(\theta) &= \tfrac1n \textstyle\sum_i w_i \max(0,\, 1 - y_i x_i^\top\theta)\end{aligned}",
        "Conventions, stated once: the code minimises Σ wᵢ l + (γ/2)‖θ‖², so λ = γ/n, the λ the "
        "re-derived form is derived for; the transcribed formula is evaluated at the theorem's "
        "stated λ = 2γ/n, each against its own comparison rule θ₀ (the regularized hinge fit at "
        "its λ). The bound is on the weighted hinge error L̂₀, in the scaled space ‖x‖ ≤ 1.",
    ),
    (
        r"\begin{aligned}&\hat L_0(\theta^*) - \hat L_0(\theta_0) \le T_1 + T_2 + T_3\\ &\text{with probability at least } 1-\rho\end{aligned}",
        "Theorem 10: for any comparison rule θ₀, the released rule's error exceeds θ₀'s by at most "
        "three terms, except with probability ρ over the noise.",
    ),
    (
        r"T_1 = \frac{\lambda}{2}\lVert\theta_0\rVert^2",
        "Regularization: the price of shrinking the rule; it grows with γ.",
    ),
    (
        r"\begin{aligned}T_2^{\text{transcribed}} &= \frac{\big[(\lambda + \frac{W}{2h})(C+2W)\,a_p(\rho)\big]^2}{(2n\lambda\varepsilon)^2}\\"
        r"a_p(\rho) &= \sqrt{p + 2\sqrt{p\log(1/\rho)} + \log(1/\rho)}\end{aligned}",
        "Privacy noise as the seed text transcribes the paper. a_p(ρ)² (not a_p) is a valid bound on "
        "the (1 − ρ) quantile of the Gamma(p, 1) radius the mechanism draws, so the transcribed "
        "formula most plausibly misses a square; it also squares the smoothness λ + W/(2h), while "
        "the paper's own Corollary 12 is linear in it, like the re-derived form.",
    ),
    (
        r"\begin{aligned}T_2^{\text{re-derived}} &= \frac{(\lambda + \frac{W}{2h})\,\big[(C+2W)\,r_\rho\big]^2}{2(n\lambda\varepsilon)^2}\\"
        r"r_\rho &= (1-\rho)\text{ quantile of Gamma}(d, 1)\end{aligned}",
        "Privacy noise re-derived by this project (not a result of the paper) from the smoothness of "
        "the objective and the noise radius (C+2W) r_ρ/(nλε) that Algorithm 1 exceeds only with "
        "probability ρ.",
    ),
    (
        r"T_3 = \frac{W h}{4}",
        "Huber-to-hinge: the smoothed loss exceeds the hinge by at most h/4 per unit of weight.",
    ),
    (
        r"\begin{aligned}&L_0(\theta^*) - L_0(\theta_0) \le T_1 + T_2 + T_3 + 2\,G_{n,h}(\delta_0)\\ &\text{with probability at least } 1-\delta_0-\rho\end{aligned}",
        "Theorem 11: on new patients, add twice a uniform deviation G that holds with probability "
        "1 − δ₀ and that the theorem leaves to you (set it under More settings); the bound then holds "
        "with probability at least 1 − δ₀ − ρ.",
    ),
    (
        r"\Delta = \frac{C + 2W}{\gamma}\ \text{ against }\ \frac{2}{\gamma}",
        "Sensitivity: weights up to W make one patient move the rule up to W + C/2 times as far as "
        "in unweighted ERM (W times when C = 0, a known propensity); the release adds a solver slack "
        "2·10⁻⁶/γ.",
    ),
)

SAMPLE_SIZE_FORMULA = (
    r"\begin{aligned}n &\gtrsim \max\{n_{\text{stat}},\ n_{\text{priv}},\ n_{\text{smooth}}\}\\"
    r"n_{\text{stat}} &= \frac{W^2\lVert\theta_0\rVert^2}{\alpha^2}\\"
    r"n_{\text{priv}} &= \frac{(C+2W)\,p\log(p/\delta)\,\lVert\theta_0\rVert}{\varepsilon\alpha}\\"
    r"n_{\text{smooth}} &= \frac{\sqrt{W/h}\,\lVert\theta_0\rVert^2\,(C+2W)\,p\log(p/\delta)}{\varepsilon\alpha^{3/2}}\end{aligned}",
    "Corollary 12: the patients needed for excess risk α, up to constants; h = α/W and δ = ρ here. "
    "The smoothing term carries ‖θ₀‖²: that is what the corollary's own display gives with "
    "λ ≍ α/‖θ₀‖²; the printed corollary has ‖θ₀‖.",
)

CVAR_FORMULAS = (
    (
        r"\text{scalar: } B\min\Big\{1,\ \frac{1}{\sqrt{n\tau}} + \frac{1}{\varepsilon n\tau}\Big\}",
        "Private CVaR of a bounded loss, up to constants (Theorem 3.4, pure ε-DP, proven for ε ≤ 1): "
        "the tail holds nτ records, and privacy acts through εnτ, the private tail sample size (a "
        "scale, not a count of records).",
    ),
    (
        r"\text{finite class: } B\min\Big\{1,\ \sqrt{\frac{\log 2M}{n\tau}} + \frac{\log 2M}{\varepsilon n\tau}\Big\}",
        "Choosing the best of M models, up to constants (proven for ε ≤ 1): both parts grow with "
        "log 2M (drawn for M = 10).",
    ),
    (
        r"\begin{aligned}&\text{convex lower: } R_0\min\Big\{1,\ \frac{1}{\sqrt{n\tau}} + \frac{\sqrt d}{\varepsilon n\tau}\Big\}\\"
        r"&\text{nontrivial only when } \varepsilon n\tau \gg \sqrt d\end{aligned}",
        "Learning a d-dimensional model under (ε, δ)-DP, up to constants and logarithms (Corollary "
        "6.5, proven for ε ≤ 1): while εnτ is not well above √d, no private learner is guaranteed "
        "to beat a constant by more than a constant factor.",
    ),
)


def _num(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.2g}"


def sample_size_caption(epsilon: np.ndarray, regime: np.ndarray) -> str:
    """Which of Corollary 12's terms rules over which range of ε, read off the curve."""
    parts, start = [], 0
    for i in range(1, len(regime) + 1):
        if i == len(regime) or regime[i] != regime[start]:
            lo, hi = epsilon[start], epsilon[i - 1]
            parts.append(f"the {regime[start]} term for ε from {_num(lo)} to {_num(hi)}")
            start = i
    return "Shaded: the term that rules (up to constants), " + "; ".join(parts) + "."


#: The page's opening: what it answers, the unit of privacy and δ.
BOUNDS_INTRO = (
    "This page answers one question: how large can the cost of privacy be according to the two papers' "
    "theorems (as transcribed, and as this project re-derives one of them), and do the actual mechanisms "
    "stay within those bounds? Each bound is split into its terms, so you can see which one dominates "
    "where. :small[Unit of privacy: one patient (one row); neighbouring trials differ by replacing one "
    "patient. DP-wERM and the Laplace CVaR release are pure ε-DP (δ = 0); the convex CVaR rates are for "
    "(ε, δ)-DP learners. Measurements are on simulated trials (the DP-wERM paper's design) and demo "
    "losses, never on real patients.]"
)


#: The heading of Theorem 10's terms; lessons link to it (``/bounds#terms``).
TERMS_ANCHOR = "terms"


def terms_reading(
    curve: pd.DataFrame, measured: pd.DataFrame, over: str, form: str, pick: float, rho: float
) -> str:
    """The terms chart in one line: where the bound of ``form`` is smallest against ``over``
    ("gamma" or "h"), and how many times the measured excess's (1 − ρ) quantile it is over the
    simulated values (the bound read off its curve at each)."""
    x, total = curve[over].to_numpy(float), curve[f"total_{form}"].to_numpy(float)
    name = {"gamma": "γ", "h": "h"}[over]
    if pick > x.min():
        lowest = float(np.interp(np.log(pick), np.log(x), total))
        where = f"{name} = {pick:.3g}"
    else:  # no privacy term to balance: smallest at the smallest value drawn
        lowest, where = float(total[np.argmin(x)]), f"the smallest {name} drawn ({x.min():.3g})"
    text = f"The bound ({FORM_NAMES[form]}) is smallest at {where}, where it is {lowest:.3g}"
    q = measured["excess_q"].to_numpy(float)
    ok = q > 0
    if not ok.any():
        return text + "."
    ratio = np.interp(np.log(measured[over].to_numpy(float)[ok]), np.log(x), total) / q[ok]
    return (
        f"{text}; at the {ok.sum()} simulated values of {name} it is {ratio.min():.2g} to "
        f"{ratio.max():.2g} times the measured excess's {1 - rho:.0%} quantile"
        + (" (below 1: the measurement exceeds the bound there)." if ratio.min() < 1 else ".")
    )
