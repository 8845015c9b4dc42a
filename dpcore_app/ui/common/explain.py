"""Sentences every page can use."""

from __future__ import annotations

import math

from dpcore import attacker_posterior_bound


def eps_text(eps: float) -> str:
    return "no privacy (non-private)" if math.isinf(eps) else f"ε = {eps:g}"


def _sure_after(post):
    """How sure the attacker can be after the release, for a posterior bound ``post`` in [0, 1]
    ("is at most 73.1% sure"; "can be almost certain" once the bound prints as 100%)."""
    return f"is at most {100 * post:.1f}% sure" if post < 0.9995 else "can be almost certain"


def attacker_sentence(eps: float, what: str = "the rule", prior: float = 0.5) -> str:
    """What one ε-DP release (``what``) can do to an attacker's belief about one person."""
    if math.isinf(eps):
        return f"Without privacy there is no limit on what {what} can reveal about any one patient."
    sure = _sure_after(float(attacker_posterior_bound(prior, eps)))
    return (
        f"An attacker who was {100 * prior:.0f}% sure of a fact about one patient (say, that "
        f"they were in the trial with a given outcome) {sure} after seeing "
        f"{what} released at ε = {eps:g}, whatever else they know."
    )


#: Outside this range of ε the verdict warns, as OpenDP's DP Wizard does (above 5: the
#: promise to one patient is weak; below 0.2: the noise is likely to swamp the result).
EPS_RANGE = (0.2, 5.0)


#: A verdict's colour says what the reader should do, and its first words say the same:
#: green ("success") only when the claim holds and the ε means something (at most EPS_RANGE's
#: upper end), amber ("warning") for caution, red ("error") for "do not", blue ("info") for a
#: statement that judges nothing yet (a first estimate).
SEVERITY = {"holds": "success", "caution": "warning", "do not": "error", "neutral": "info"}


def weak_promise(eps: float) -> bool:
    """Whether ``eps`` promises one patient little: above :data:`EPS_RANGE`, or no privacy."""
    return math.isinf(eps) or eps > EPS_RANGE[1]


def severity(claim: str, eps: float) -> str:
    """The alert kind (:data:`SEVERITY`) of a verdict whose ``claim`` is "holds", "caution",
    "do not" or "neutral", at ``eps``: a claim that holds where the ε promises little
    (:func:`weak_promise`) is a caution, never green."""
    if claim == "holds" and weak_promise(eps):
        claim = "caution"
    return SEVERITY[claim]


def epsilon_note(eps: float, what: str = "the rule") -> str:
    """What a named ε promises one patient after seeing ``what``, with a warning outside
    :data:`EPS_RANGE`."""
    if math.isinf(eps):
        return f"Without privacy nothing limits what {what} reveals about one patient."
    sure = _sure_after(float(attacker_posterior_bound(0.5, eps)))
    promise = f"At ε = {eps:g} an attacker 50% sure of a fact about one patient {sure} after seeing {what}."
    low, high = EPS_RANGE
    if eps > high:
        return promise + (
            f" Above ε = {high:g} the promise to one patient is weak: OpenDP's DP "
            "Wizard warns from here."
        )
    if eps < low:
        return promise + (
            f" Below ε = {low:g} the noise is likely to swamp the result: DP Wizard "
            "warns from here."
        )
    return promise


def privacy_statement(eps: float, what: str = "the rule") -> str:
    """What ε means for one patient and how it compares with budgets used in practice, in one
    sentence, as strong as the bound: at ε = 10 it says that little is promised."""
    if math.isinf(eps):
        return f"Without privacy there is no limit on what {what} can reveal about any one patient."
    post = float(attacker_posterior_bound(0.5, eps))
    if eps <= 1:
        strength = "strong privacy by the usual reading (ε ≤ 1, Dwork and Roth 2014)"
    elif post < 0.9995:
        strength = (
            "a moderate promise, in the range of deployed systems (Apple reports ε from 2 "
            "to 8 per day)"
        )
    else:
        strength = (
            "so on its own this ε promises little about any one patient, even though large "
            "deployments have used budgets this size (the US Census Bureau's 2020 "
            "persons file: ε = 17.14)"
        )
    return (
        f"An attacker 50% sure of a fact about one patient {_sure_after(post)} after "
        f"seeing {what} released at ε = {eps:g}: {strength}."
    )
