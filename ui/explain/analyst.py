"""Sentences of the your-data page's analyst tools: the preview, the noise, the evaluation.

Plain text: callers escape it for markdown or HTML.
"""

from __future__ import annotations

PREVIEW_NOTE = ("Simulated, no privacy spent: a twin of your trial built from public values only "
                "(n, covariate count, public bounds, design, W, C, γ), not from your patients.")


def preview_sentence(frame, strength, eps, target, smallest, unit=""):
    """What a release at ε is likely to deliver on the twin, and the ε that reaches the target."""
    row = frame[(frame["strength"] == strength) & (frame["epsilon"] == eps)].iloc[0]
    unit = f" {unit}" if unit else ""
    reach = (f"the smallest previewed ε at which it agrees on {target}% of patients on average is "
             f"about {smallest:.2g}" if smallest is not None else
             f"no previewed ε up to 100 reaches {target}% agreement on average")
    return (f"With {strength} effects (the best arm's advantage varies across patients with a "
            f"standard deviation of {row['effect_sd']:.3g}{unit}), a private rule at ε = {eps:g} "
            f"agrees with the non-private rule on {row['agreement_mean']:.0f}% of patients on "
            f"average (95% of releases between {row['agreement_lo']:.0f}% and "
            f"{row['agreement_hi']:.0f}%) and keeps {_pct(row['retained_mean'])} of its gain over "
            f"the better fixed arm; {reach}. Simulated, no privacy spent.")


def noise_sentence(noise, names, eps):
    """The typical noise per coefficient in the rule's own units, against the public bounds."""
    j = int(abs(noise["across_bounds"]).argmax()) if len(names) else 0
    worst = (f"; across its public bounds the noise alone can move the score by about "
             f"{noise['across_bounds'][j]:.2g} for '{names[j]}'" if len(names) else "")
    return (f"At ε = {eps:g} the noise added to the rule has length dΔ/ε = {noise['radius']:.3g} "
            f"in the scaled space where every patient's features have length at most 1; per "
            f"coefficient that is typically {noise['intercept']:.2g} on the intercept{worst}. "
            "Compare it with the released rule's bars: a covariate whose bar is not much longer "
            "than this could owe its pull to the noise.")


def evaluation_sentence(evaluation):
    """The verdict and its evidence (the evaluation's own summary), as released numbers."""
    return evaluation.summary()


def cost_sentence(eps_fit, eps_eval, n_fit, n_eval):
    """Parallel composition of the two parts, in one sentence."""
    return (f"The rule was fitted on {n_fit} patients at ε = {eps_fit:g} and evaluated on the "
            f"other {n_eval} at ε_eval = {eps_eval:g}; each patient is in one part only, so the "
            f"trial spends max(ε, ε_eval) = {max(eps_fit, eps_eval):g} (parallel composition).")


def _pct(share):
    return "an unstable share" if share != share else f"{100 * share:.0f}%"
