"""Sentences of the private CVaR page."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dpcore_app.ui.common.explain import severity

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pandas as pd

    from dpcore.cvar.tail_risk import RuleTailRisk


def _share(tau):
    return f"{100 * tau:g}%"


def _records(count):
    count = round(count)
    return f"{count} patient" + ("" if count == 1 else "s")


def _tail(n, tau):
    """How many records the tail holds, without pretending nτ is a whole count."""
    m = n * tau
    if tau >= 1:
        return f"all {n} patients count (the plain mean)"
    if m < 1:
        return (
            f"the tail holds less than one patient (nτ = {m:.2g}): it is a fraction of the "
            "worst record"
        )
    if abs(m - round(m)) < 1e-9:
        k = round(m)
        return f"only {_records(k)} {'forms' if k == 1 else 'form'} the tail"
    return f"the tail holds nτ = {m:.3g} patients' worth (the boundary record counts in part)"


def cvar_verdict(
    n: int, tau: float, eps: float, total: float, statistical: float, bound: float
) -> str:
    """How far the private tail mean is off at this setting, against the sampling error."""
    scale = f"on a loss scale from 0 to {bound:g}"
    lead = f"With {n} patients and τ = {_share(tau)}, {_tail(n, tau)};"
    if math.isinf(eps):
        return (
            f"{lead} without privacy the estimate of their mean loss is off by about "
            f"{total:.2g} {scale}, all of it sampling error."
        )
    return (
        f"{lead} at ε = {eps:g} the private estimate of their mean loss is off by about "
        f"{total:.2g} {scale}; the sampling error alone is {statistical:.2g}."
    )


#: Where the private error stays within this factor of the sampling error alone, privacy is
#: called cheap: the verdict's green (at an ε that means something).
CHEAP = 1.5


def cvar_judgement(
    regime: str,
    eps: float,
    total: float,
    statistical: float,
    total_hi: float | None = None,
    statistical_lo: float | None = None,
) -> tuple[str, str]:
    """(kind, first words) of the verdict, by severity (:func:`~dpcore_app.ui.common.explain.severity`):
    "do not" where the worst-case rate reaches its cap (``regime`` "trivial"), "holds" where the
    regime is statistical and the measured error is within :data:`CHEAP` times the sampling
    error beyond Monte-Carlo doubt (the total's 95% upper end, ``total_hi``, within CHEAP times
    the sampling error's lower end, ``statistical_lo``; the means when no interval is given),
    "caution" otherwise; a claim that holds at a weak ε is a caution. Without privacy
    (ε = inf) the error is the sampling error, draw for draw: no Monte-Carlo doubt, the claim
    holds (a caution: nothing protects one patient), and there is no private estimate."""
    total_hi = total if total_hi is None else total_hi
    statistical_lo = statistical if statistical_lo is None else statistical_lo
    cheap_on_average = regime == "statistical" and total <= CHEAP * statistical
    if regime == "trivial":
        claim = "do not"
    elif math.isinf(eps) or (cheap_on_average and total_hi <= CHEAP * statistical_lo):
        claim = "holds"
    else:
        claim = "caution"
    kind = severity(claim, eps)
    if kind == "success":
        return kind, "Privacy is cheap here."
    if kind == "error":
        return kind, (
            # without privacy the rate reaches its cap only where 1/√(nτ) ≥ 1: nτ ≤ 1
            "Do not rely on one estimate here: the tail holds at most one patient."
            if math.isinf(eps)
            else "Do not rely on one private estimate here."
        )
    if claim == "holds":
        return kind, (
            "Caution: nothing protects one patient."
            if math.isinf(eps)
            else "Caution: privacy is cheap, but this ε promises one patient little."
        )
    if cheap_on_average:
        lead = (
            f"Caution: privacy may be cheap here, but the simulation cannot tell: the error's "
            f"95% interval reaches {CHEAP:g} times the sampling error (more repetitions narrow it)."
        )
        if severity("holds", eps) != "success":  # and cheap or not, a weak ε
            lead += " This ε promises one patient little."
        return kind, lead
    return kind, "Caution: privacy costs accuracy here."


INDICATIVE = "an indicative label: the theorem's constants are unknown, and set to 1 here"


def cvar_regime_sentence(
    regime: str, n: int, tau: float, eps: float, privacy: float, statistical: float
) -> str:
    """Which term of the worst-case rate B·min{1, 1/√(nτ) + 1/(εnτ)} governs, up to
    constants, with its numbers, then the measured split on the current loss law (which can
    differ). ``regime`` comes from the one regime rule (dpcore.cvar.rates.cvar_regime)."""
    m = n * tau
    stat = 1.0 / math.sqrt(m)
    worst = "Up to constants, in the worst case over all loss laws in [0, B]"
    if regime == "trivial":
        if math.isinf(eps):
            text = (
                f"{worst}: 1/√(nτ) = {stat:.2g} reaches the cap 1, so the rate is of the "
                "order of B itself"
            )
        else:
            text = (
                f"{worst}: 1/√(nτ) + 1/(εnτ) = {stat + 1.0 / (eps * m):.2g} reaches the cap "
                "1, so the rate is of the order of B itself"
            )
        text += (
            ": no estimator is guaranteed to beat a fixed guess by more than a constant "
            f"factor ({INDICATIVE})."
        )
    elif regime == "privacy-dominated":
        text = (
            f"{worst}: εnτ = {eps * m:.3g} is below √(nτ) = {math.sqrt(m):.3g}, so the "
            f"privacy term 1/(εnτ) outweighs the sampling term 1/√(nτ) ({INDICATIVE})."
        )
    elif math.isinf(eps):
        text = (
            f"Without privacy only the sampling term 1/√(nτ) = {stat:.2g} of the rate "
            "remains (up to constants)."
        )
    else:
        text = (
            f"{worst}: εnτ = {eps * m:.3g} is at least √(nτ) = {math.sqrt(m):.3g}, so the "
            f"sampling term 1/√(nτ) outweighs the privacy term 1/(εnτ) ({INDICATIVE})."
        )
    if math.isinf(eps):
        return text
    if eps > 1:
        text += f" The rate is proven for ε ≤ 1; here ε = {eps:g}."
    if f"{privacy:.2g}" == f"{statistical:.2g}":
        larger = "the two are about equal"
    else:
        larger = f"the {'privacy' if privacy > statistical else 'sampling'} part is the larger"
    return (
        text + f" Measured on this loss law: privacy part {privacy:.2g}, sampling part "
        f"{statistical:.2g}; {larger}."
    )


def rule_tail_sentence(res: RuleTailRisk, eps_rule: float, eps_cvar: float, spent: float) -> str:
    """The DP-OWL bridge in words: the worst-off patients under each rule and the budget."""
    who = (
        "all new patients (τ = 100%: the plain mean)"
        if res.tau >= 1
        else f"the worst-off {_share(res.tau)} of new patients"
    )
    release = (
        "released without privacy"
        if math.isinf(eps_cvar)
        else f"released at ε₂ = {eps_cvar:g} as {res.released:.2f}; at least 95% of such "
        f"releases land within ±{res.halfwidth:.2f} of the exact value"
    )
    change = res.private_rule - res.nonprivate_rule
    compared = (
        "the same to two decimals"
        if abs(change) < 0.005
        else f"{abs(change):.2f} points {'worse' if change < 0 else 'better'}"
    )
    budget = (
        "Privacy spent: not private (a release with ε = non-private has no guarantee)."
        if math.isinf(spent)
        else f"Privacy spent: ε₁ + ε₂ = {eps_rule:g} + {eps_cvar:g} = {spent:g} by basic "
        "composition for a patient in both data sets; a patient in only one is covered "
        "by that release's ε."
    )
    return (
        f"Under the private rule (ε₁ = {eps_rule:g}) {who} have a mean outcome of "
        f"{res.private_rule:.2f} points ({release}); under the non-private rule, "
        f"{res.nonprivate_rule:.2f}: {compared}. {budget}"
    )


CVAR_CAPTIONS = {
    "epsilon": "The privacy part falls like 1/ε (flatter where the clip to [0, B] caps it); once it is "
    "below the statistical part, the total settles on the statistical part, which no budget "
    "removes. The rate is drawn with its constants set to 1 and is proven for ε ≤ 1 "
    "(shaded beyond). Bands: 95% Monte-Carlo intervals.",
    "n": "In the rate (up to constants) the sampling term falls like 1/√n and the privacy term like "
    "1/n: with more patients, the privacy cost becomes negligible first.",
    "tau": "A smaller τ leaves fewer records nτ in the tail: both terms of the rate (up to constants) "
    "grow as τ shrinks.",
    "eps_n_tau": "Privacy acts on εnτ, the private tail sample size, not on εn: every τ follows B/(εnτ) "
    "once the noise is small against the tail mean's distance to 0 and B. Before that the "
    "clip to [0, B] pulls the curves down (at once for the hard two-point law, whose tail "
    "mean is B/2).",
}


#: The Laplace plug-in, for the statistician: what is released, its error, its rate, its scope.
MECHANISM_INTRO = (
    "CVaR at level τ of n losses (the mean of the worst τ share; a fractional "
    "weight on the boundary record), released by the Laplace plug-in:"
)
MECHANISM_TEX = (
    r"\tilde\rho=\operatorname{clip}\Big(\hat\rho_\tau+\mathrm{Lap}\big(\tfrac{\Delta}{\varepsilon}\big),0,B\Big),"
    r"\quad \Delta=B\min\{1,\tfrac{1}{n\tau}\}",
    r"\mathbb E|\tilde\rho-\hat\rho|=b-\tfrac b2\big(e^{-\hat\rho/b}+e^{-(B-\hat\rho)/b}\big),\ b=\Delta/\varepsilon;"
    r"\qquad \text{rate } B\min\Big\{1,\tfrac{1}{\sqrt{n\tau}}+\tfrac{1}{\varepsilon n\tau}\Big\}"
    r"\text{ up to constants}",
)
MECHANISM_SCOPE = (
    "Losses outside [0, B] are clipped record by record before the release (a "
    "data-dependent error message would itself leak). Unit of privacy: one "
    "record; neighbours differ by replacing one. Pure ε-DP, δ = 0."
)


def adaptive_sentence(
    laplace: float,
    adaptive: float,
    se_laplace: float,
    se_adaptive: float,
    n: int,
    tau: float,
    eps: float,
    c1: float = 0.1,
) -> str:
    """The instance-adaptive variant against the Laplace plug-in on the same data: what was
    measured here, and the worst case no ε-DP estimator escapes (Theorem 3.2's instance)."""
    half = 2.0 * math.hypot(se_laplace, se_adaptive)
    verdict = (
        "helps here"
        if adaptive < laplace - half
        else "hurts here"
        if adaptive > laplace + half
        else "is on par here (within twice the Monte-Carlo standard error)"
    )
    p = c1 * min(tau, 1.0 / (eps * n))
    proven = "" if eps <= 1 else f" (the bound is proven for ε ≤ 1; here ε = {eps:g})"
    return (
        f"The instance-adaptive variant spends half of ε on two private quantiles, clips the "
        f"data to them and spends the rest on the Laplace release. On the same simulated data "
        f"it errs by {adaptive:.2g} on average against {laplace:.2g} for the plug-in: it "
        f"{verdict}, on this one law. What no ε-DP estimator, adaptive or not, escapes is the "
        f"privacy lower bound's instance (Theorem 3.2): B with probability p = c₁·min{{τ, "
        f"1/(εn)}} (= {p:.2g} with c₁ = {c1:g}) against all mass at 0: on one of the two its "
        f"expected error is at least a constant times B·min{{1, 1/(εnτ)}}{proven}. The page's two-point "
        "law (B with probability τ/2) is a different law."
    )


def class_caption(tau: float) -> str:
    """The exponential-mechanism caption; at τ = 1 CVaR is the mean and the two slopes agree."""
    contrast = (
        "At τ = 1 CVaR is the mean loss, so the slope with the lowest mean loss and the "
        "one with the lowest CVaR coincide."
        if tau >= 1
        else "The slope with the lowest mean loss serves the majority; the lowest CVaR "
        "protects the minority."
    )
    return (
        "90% of records follow y = x, a 10% minority y = −x. " + contrast + " The exponential "
        "mechanism releases a slope with probability ∝ exp(−εnτ·CVaR/(2B)); expectations "
        "are exact, on one simulated data set. The rate (Theorem 4.5, up to constants) is "
        "proven for ε ≤ 1 (shaded beyond); the McSherry–Talwar bound holds at every ε."
    )


def convex_caption(transition: Mapping[str, Any], ds: Sequence[int]) -> str:
    """What DP-GD's run shows, with the transition where this run measured it; Corollary 6.6
    gives the scale εnτ ≫ √d only, and this run's own tuning sets where the drop falls."""
    half = transition["half"].dropna()
    parts = []
    if half.empty:
        parts.append("In this run the excess never falls to half its peak on the grid of εnτ/√d.")
    else:
        lo, hi = half.min(), half.max()
        where = f"≈ {lo:.0f}" if round(lo) == round(hi) else f"between about {lo:.0f} and {hi:.0f}"
        parts.append(
            f"Measured in this run: the excess falls to half its peak at εnτ/√d {where} "
            f"(d = {', '.join(str(d) for d in half.index)}); before that it stays high, "
            "so εnτ ≈ √d is far from enough."
        )
    missing = [d for d in ds if d not in half.index]
    if missing and not half.empty:
        parts.append(
            f"For d = {', '.join(map(str, missing))} it never falls that far on this grid."
        )
    parts.append(
        f"The dotted marker is the benchmark's median half point, "
        f"εnτ/√d ≈ {transition['benchmark']:.0f} (benchmarks/convex_transition.py)."
    )
    if transition["c"]:
        c_lo, c_hi = min(transition["c"]), max(transition["c"])
        k_lo, k_hi = min(transition["calibration"]), max(transition["calibration"])
        parts.append(
            f"Corollary 6.6 gives only the scale, εnτ ≫ √d up to logarithms and constants. "
            f"The bound's worst-case noise part is c·√d/(εnτ) with c ≈ {c_lo:.0f}–{c_hi:.0f} "
            f"here (the lifted problem's diameter and sensitivity times the Gaussian-DP "
            f"calibration ε/μ ≈ {k_lo:.1f}–{k_hi:.1f} at δ = 10⁻⁵), but c does not say where "
            "the drop falls: it leaves out DP-GD's step size and number of steps, which move "
            "the drop too. This run's own tuning sets where it falls here."
        )
    eps_max = transition.get("max_epsilon", math.nan)
    if math.isfinite(eps_max) and eps_max > 1:
        parts.append(
            f"Corollaries 6.5–6.6 are proven for ε ≤ 1; this grid reaches ε = {eps_max:.2g}."
        )
    parts.append("Bands: 95% Monte-Carlo intervals.")
    return " ".join(parts)


#: The page's opening: what it answers, the unit of privacy and δ.
CVAR_INTRO = (
    "How far off is a differentially private estimate of the mean of the worst τ share of outcomes, "
    "and why? Privacy acts on the **private tail sample size εnτ**, not on εn: with a small tail, "
    "privacy gets expensive fast. :small[Unit of privacy: one patient (one record); neighbouring "
    "data sets differ by replacing one. Pure ε-DP (δ = 0) except DP-GD, which is (ε, 10⁻⁵)-DP.]"
)


_AXES = {"epsilon": "ε", "n": "n", "tau": "τ"}


def _x(x_axis, value):
    return _share(value) if x_axis == "tau" else f"{value:g}"


def error_reading(rows: pd.DataFrame, x_axis: str) -> str:
    """The error chart in one line: its total error (and the sampling part alone) at the two
    ends of its x-axis; against εnτ, the privacy part at the two ends."""
    if x_axis == "eps_n_tau":
        lo, hi = rows.iloc[rows.eps_n_tau.argmin()], rows.iloc[rows.eps_n_tau.argmax()]
        return (
            f"The privacy part falls from {lo.privacy_mean:.2g} at εnτ = {lo.eps_n_tau:.3g} to "
            f"{hi.privacy_mean:.2g} at εnτ = {hi.eps_n_tau:.3g}, over every τ drawn."
        )
    first, last, name = rows.iloc[0], rows.iloc[-1], _AXES[x_axis]
    return (
        f"The total error is {first.total_mean:.2g} at {name} = {_x(x_axis, first[x_axis])} and "
        f"{last.total_mean:.2g} at {name} = {_x(x_axis, last[x_axis])}; the sampling part alone "
        f"{first.statistical_mean:.2g} and {last.statistical_mean:.2g}."
    )


#: The error chart's heading; lessons link to it (``/cvar#errors``).
ERRORS_ANCHOR = "errors"
