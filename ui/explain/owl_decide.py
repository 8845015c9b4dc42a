"""Sentences that decide on the DP-OWL page: the verdict (with its colour), the answer to "at
what ε can we publish?", and the privacy statement with its scale from practice."""

from __future__ import annotations

import math

from dpcore import attacker_posterior_bound

from .owl import out_of_100


def _printed(x):
    """A percentage as every card and caption prints it (one decimal)."""
    return float(f"{x:.1f}")


def is_coin_flip(lo, hi):
    """Whether the 95% interval, as printed, contains 50%: the rule may be a coin flip."""
    return _printed(lo) <= 50.0 <= _printed(hi)


def verdict(eps, n, here, best, threshold, target_words, gamma_note="", first=False):
    """(kind, sentence): the page's first sentence and its colour.

    ``here`` and ``best`` are the current cell and the best non-private rule (accuracy_mean,
    _lo, _hi). kind is "success" only when the whole interval meets the target, "warning"
    for a possible coin flip, "info" otherwise.
    """
    mean, lo, hi = here["accuracy_mean"], here["accuracy_lo"], here["accuracy_hi"]
    ci = f"95% interval {lo:.1f}–{hi:.1f}%"
    if math.isinf(eps):
        head = (f"Without privacy, a rule learned from {n} patients picks the better treatment for "
                f"{out_of_100(mean)} new patients ({ci}){gamma_note}")
    else:
        head = (f"At ε = {eps:g} and {n} patients, the private rule picks the better treatment for "
                f"{out_of_100(mean)} new patients ({ci}), against {out_of_100(best['accuracy_mean'])} "
                f"for the best non-private rule{gamma_note}")
    if is_coin_flip(lo, hi):
        kind, tail = "warning", ": no better than a coin flip."
    elif lo >= threshold:
        kind, tail = "success", f". Target met: {target_words}."
    elif mean >= threshold:
        kind, tail = "info", (f". The target ({target_words}) is met on average, but the interval "
                              "reaches below it.")
    else:
        kind, tail = "info", f". Target not met: {target_words}."
    prefix = "**First estimate** (final numbers in a few seconds): " if first else ""
    return kind, prefix + head + tail


def _hit(h):
    return f"ε = {h.at:g} ({h.mean:.1f}%, interval {h.lo:.1f}–{h.hi:.1f}%)"


def eps_answer_sentence(answer, n, eps, n_hit, sizes, nonprivate_accuracy):
    """One paragraph: the smallest ε on the grid for n, its Monte-Carlo range, and the n it
    would take at the current ε among the simulated sizes."""
    t = f"{answer.threshold:.1f}%"
    if answer.first is None:
        why = (" Even without privacy the rule reaches only "
               f"{nonprivate_accuracy:.1f}%." if nonprivate_accuracy < answer.threshold else "")
        head = f"For n = {n}, no ε on the grid up to 1000 reaches an accuracy of {t}.{why}"
    else:
        head = f"For n = {n}, the smallest ε on the grid reaching an accuracy of {t} is {_hit(answer.first)}."
        sure = answer.sure.at if answer.sure else None
        possible = answer.possible.at if answer.possible else None
        if sure != answer.first.at or possible != answer.first.at:
            sure_txt = f"from ε = {sure:g}" if sure else "at no ε on the grid"
            head += (f" Monte-Carlo uncertainty: surely reached {sure_txt}, possibly already at "
                     f"ε = {possible:g}.")
    if math.isinf(eps):
        return head
    shown = ", ".join(str(s) for s in sizes)
    if n_hit is None:
        tail = (f" At ε = {eps:g}, none of the simulated sizes ({shown}) reaches it: add larger "
                "trials under “Also show n” to see whether any would.")
    elif n_hit.at == n:
        tail = f" At ε = {eps:g}, the current {n} patients are enough."
    else:
        tail = (f" At ε = {eps:g} it would take n = {n_hit.at:g} patients ({n_hit.mean:.1f}%, "
                f"interval {n_hit.lo:.1f}–{n_hit.hi:.1f}%), the smallest of the simulated sizes "
                f"({shown}) that reaches it.")
    return head + tail


def privacy_statement(eps, what="the rule"):
    """What ε means for one patient and how it compares with budgets used in practice, in one
    sentence, as strong as the bound: at ε = 10 it says that little is promised."""
    if math.isinf(eps):
        return (f"Without privacy there is no limit on what {what} can reveal about any one "
                "patient.")
    post = 100 * float(attacker_posterior_bound(0.5, eps))
    shown = f"{post:.1f}%" if post < 99.95 else "almost 100%"
    if eps <= 1:
        strength = "strong privacy by the usual reading (ε ≤ 1, Dwork and Roth 2014)"
    elif post < 99.95:
        strength = ("a moderate promise, in the range of deployed systems (Apple reports ε from 2 "
                    "to 8 per day)")
    else:
        strength = ("so on its own this ε promises little about any one patient, even though large "
                    "deployments have used budgets this size (the US Census Bureau's 2020 "
                    "persons file: ε = 17.14)")
    return (f"An attacker 50% sure of a fact about one patient is at most {shown} sure after "
            f"seeing {what} released at ε = {eps:g}: {strength}.")
