"""Plain-language sentences built from the numbers on screen."""

from __future__ import annotations

import math

from dpcore import attacker_posterior_bound


def eps_text(eps):
    return "no privacy (non-private)" if math.isinf(eps) else f"ε = {eps:g}"


def attacker_sentence(eps, prior=0.5):
    """What one ε-DP release can do to an attacker's belief about one person."""
    if math.isinf(eps):
        return ("Without privacy there is no limit on what the released rule can reveal "
                "about any one patient.")
    post = float(attacker_posterior_bound(prior, eps))
    shown = f"{100 * post:.1f}%" if post < 0.9995 else "almost 100%"
    return (f"An attacker who was {100 * prior:.0f}% sure of a fact about one patient (say, that "
            f"they were in the trial with a given outcome) is at most {shown} sure after seeing "
            f"the rule released at ε = {eps:g}, whatever else they know.")


def clinical_summary(eps, n, concordance, value_private, value_nonprivate, scale):
    """The private rule against the non-private rule, out of 100 patients, in outcome units."""
    if math.isinf(eps):
        return (f"Without privacy, a rule learned from {n} patients reaches an expected outcome of "
                f"{value_nonprivate:.2f} points ({scale}).")
    same = int(round(concordance))
    change = value_private - value_nonprivate
    direction = "drops" if change < 0 else "rises" if change > 0 else "stays"
    return (f"At ε = {eps:g}, with {n} patients to learn from, out of 100 new patients the private "
            f"rule recommends the same treatment as the non-private rule for about {same}; the "
            f"expected outcome under the rule {direction} from {value_nonprivate:.2f} to "
            f"{value_private:.2f} points ({scale}).")
