"""Sentences of the private CVaR page."""

from __future__ import annotations

import math


def _share(tau):
    return f"{100 * tau:g}%"


def _records(count):
    count = round(count)
    return f"{count} patient" + ("" if count == 1 else "s")


def cvar_verdict(n, tau, eps, total, statistical, bound):
    """How far the private tail mean is off at this setting, against the sampling error."""
    k = round(n * tau)
    tail = (f"all {n} patients count (the plain mean)" if tau >= 1 else
            f"only {_records(k)} {'forms' if k == 1 else 'form'} the tail")
    scale = f"on a loss scale from 0 to {bound:g}"
    if math.isinf(eps):
        return (f"With {n} patients and τ = {_share(tau)}, {tail}; without privacy the estimate "
                f"of their mean loss is off by about {total:.2g} {scale}, all of it sampling error.")
    return (f"With {n} patients and τ = {_share(tau)}, {tail}; at ε = {eps:g} the private "
            f"estimate of their mean loss is off by about {total:.2g} {scale}; the sampling "
            f"error alone is {statistical:.2g}.")


def cvar_regime_sentence(regime, n, tau, eps, privacy, statistical):
    """Which term of the worst-case rate B·min{1, 1/√(nτ) + 1/(εnτ)} governs, with its
    numbers, then the measured split on the current loss law (which can differ)."""
    m = n * tau
    stat = 1.0 / math.sqrt(m)
    if regime == "trivial":
        priv = 0.0 if math.isinf(eps) else 1.0 / (eps * m)
        text = (f"Worst case over all loss laws in [0, B]: 1/√(nτ) + 1/(εnτ) = {stat + priv:.2g} ≥ 1, "
                "so the rate is B itself and no estimator is guaranteed to do better than a fixed "
                "guess by more than a constant factor.")
    elif regime == "privacy-dominated":
        text = (f"Worst case over all loss laws in [0, B]: εnτ = {eps * m:.3g} is below √(nτ) = "
                f"{math.sqrt(m):.3g}, so the privacy term 1/(εnτ) outweighs the sampling term 1/√(nτ).")
    elif math.isinf(eps):
        text = f"Without privacy only the sampling term 1/√(nτ) = {stat:.2g} of the rate remains."
    else:
        text = (f"Worst case over all loss laws in [0, B]: εnτ = {eps * m:.3g} is at least √(nτ) = "
                f"{math.sqrt(m):.3g}, so the sampling term 1/√(nτ) outweighs the privacy term 1/(εnτ).")
    if math.isinf(eps):
        return text
    larger = "privacy" if privacy > statistical else "sampling"
    return (text + f" Measured on this loss law: privacy part {privacy:.2g}, sampling part "
            f"{statistical:.2g}; the {larger} part is the larger.")


def rule_tail_sentence(res, eps_rule, eps_cvar, spent):
    """The DP-OWL bridge in words: the worst-off patients under each rule and the budget."""
    who = f"the worst-off {_share(res.tau)} of new patients"
    release = ("released without privacy" if math.isinf(eps_cvar)
               else f"released at ε₂ = {eps_cvar:g} as {res.released:.2f}; at least 95% of such "
                  f"releases land within ±{res.halfwidth:.2f} of the exact value")
    change = res.private_rule - res.nonprivate_rule
    compared = ("the same to two decimals" if abs(change) < 0.005 else
                f"{abs(change):.2f} points {'worse' if change < 0 else 'better'}")
    budget = ("Privacy spent: not private (a release with ε = non-private has no guarantee)."
              if math.isinf(spent) else
              f"Privacy spent: ε₁ + ε₂ = {eps_rule:g} + {eps_cvar:g} = {spent:g} by basic "
              "composition for a patient in both data sets; a patient in only one is covered "
              "by that release's ε.")
    return (f"Under the private rule (ε₁ = {eps_rule:g}) {who} have a mean outcome of "
            f"{res.private_rule:.2f} points ({release}); under the non-private rule, "
            f"{res.nonprivate_rule:.2f}: {compared}. {budget}")


CVAR_CAPTIONS = {
    "epsilon": "The privacy part falls like 1/ε (flatter where the clip to [0, B] caps it); once it is "
               "below the statistical part, the total settles on the statistical part, which no budget "
               "removes. Bands: 95% Monte-Carlo intervals.",
    "n": "In the rate the sampling term falls like 1/√n and the privacy term like 1/n: with more "
         "patients, privacy becomes cheap first.",
    "tau": "A smaller τ leaves fewer records nτ in the tail: both terms of the rate grow as τ shrinks.",
    "eps_n_tau": "Privacy acts on εnτ, the private tail sample size, not on εn: every τ follows B/(εnτ) "
                 "once the noise is small against the tail mean's distance to 0 and B. Before that the "
                 "clip to [0, B] pulls the curves down (at once for the hard two-point law, whose tail "
                 "mean is B/2).",
}


def adaptive_sentence(laplace, adaptive, se_laplace, se_adaptive):
    """The instance-adaptive variant against the Laplace plug-in on the same data."""
    half = 2.0 * math.hypot(se_laplace, se_adaptive)
    verdict = ("helps here" if adaptive < laplace - half else "hurts here" if adaptive > laplace + half
               else "is on par here (within twice the Monte-Carlo standard error)")
    return (f"The instance-adaptive variant spends half of ε on two private quantiles, clips the "
            f"data to them and spends the rest on the Laplace release. On the same simulated data "
            f"it errs by {adaptive:.2g} on average against {laplace:.2g} for the plug-in: it "
            f"{verdict}. It cannot beat the worst case: try the hard two-point law.")
