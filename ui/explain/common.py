"""Sentences every page can use."""

from __future__ import annotations

import math

from dpcore import attacker_posterior_bound


def eps_text(eps):
    return "no privacy (non-private)" if math.isinf(eps) else f"ε = {eps:g}"


def attacker_sentence(eps, what="the rule", prior=0.5):
    """What one ε-DP release (``what``) can do to an attacker's belief about one person."""
    if math.isinf(eps):
        return (f"Without privacy there is no limit on what {what} can reveal about any one "
                "patient.")
    post = float(attacker_posterior_bound(prior, eps))
    shown = f"{100 * post:.1f}%" if post < 0.9995 else "almost 100%"
    return (f"An attacker who was {100 * prior:.0f}% sure of a fact about one patient (say, that "
            f"they were in the trial with a given outcome) is at most {shown} sure after seeing "
            f"{what} released at ε = {eps:g}, whatever else they know.")
