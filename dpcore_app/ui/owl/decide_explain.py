"""Sentences that decide on the DP-OWL page: the verdict (with its colour) about one release,
the answer to "at what ε can we publish?" with what that ε promises one patient, and the
privacy statement with its scale from practice."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpcore.montecarlo import wilson_interval
from dpcore_app.ui.common.explain import epsilon_note, severity, weak_promise
from dpcore_app.ui.owl.explain import out_of_100

if TYPE_CHECKING:
    import pandas as pd

    from dpcore_app.ui.owl.decide_compute import EpsAnswer, Hit, Share


def _printed(x):
    """A percentage as every card and caption prints it (one decimal)."""
    return float(f"{x:.1f}")


def is_coin_flip(lo: float, hi: float) -> bool:
    """Whether the 95% interval, as printed, contains 50%: the rule may be a coin flip."""
    return _printed(lo) <= 50.0 <= _printed(hi)


#: Below this median accuracy (%), 2.5 points above chance, the median release is called
#: "about a coin flip".
CHANCE_MEDIAN = 52.5


def assurance_words(assurance: float) -> str:
    """0.9 -> '9 of 10', 0.95 -> '19 of 20' (as the target's control says it)."""
    for of in (10, 20):
        if math.isclose(of * assurance, round(of * assurance)):
            return f"{round(of * assurance):g} of {of}"
    return f"{assurance:.0%}"


def share_words(share: Share) -> str:
    """How often one release reaches the target, with its interval."""
    return (
        f"{share.share:.0%} of single releases reach it (95% interval {share.lo:.0%}–"
        f"{share.hi:.0%}, over {share.releases} simulated trials)"
    )


def _num(x):
    """A percentage's number with one decimal, or two significant digits below 0.1 (so a small
    share is never printed as a false 0.0)."""
    return f"{x:.1f}" if x >= 0.1 or x == 0 else f"{x:.2g}"


def _disagreement(here):
    """(mean, lo, hi, reps) of the cell's disagreement, its interval kept within 0–100%."""
    return (
        float(here["disagreement_mean"]),
        max(float(here["disagreement_lo"]), 0.0),
        min(float(here["disagreement_hi"]), 100.0),
        int(here["reps"]),
    )


def stability_sentence(eps: float, here: pd.Series) -> str:
    """How stable one release is: how often two releases at ``eps`` on the same trial (the same
    patients, fresh noise each) disagree on a new patient's recommendation.

    ``here`` is the current cell (disagreement_mean, _lo, _hi: the Monte-Carlo interval of the
    mean over simulated trials, and reps). Noise that swamps the rule makes two releases
    disagree as often as two coin flips (50%): said only when the interval, as printed,
    contains 50%.
    """
    if math.isinf(eps):
        return (
            "Two fits of the same trial without privacy disagree on 0% of patients: the "
            "non-private rule is the same every time."
        )
    mean, lo, hi, reps = _disagreement(here)
    what = f"Two releases at ε = {eps:g} on the same trial (the same patients, fresh noise each)"
    if hi == 0:
        return f"{what} agreed on every test patient in all {reps} simulated trials."
    text = (
        f"{what} disagree on about {_num(mean)}% of new patients (average over {reps} "
        f"simulated trials, 95% Monte-Carlo interval {_num(lo)}–{_num(hi)}%)"
    )
    if _printed(lo) <= 50.0 <= _printed(hi):
        text += ": about as often as two coin flips would (50%)"
    return text + "."


def stability_card(eps: float, here: pd.Series) -> tuple[str, str, str]:
    """(label, value, detail) of :func:`stability_sentence` for a handout's card."""
    label = "Two releases on the same trial disagree on"
    if math.isinf(eps):
        return label, "0%", "of patients: the non-private rule is the same every time"
    mean, lo, hi, reps = _disagreement(here)
    return (
        label,
        f"{_num(mean)}%",
        f"of new patients, on average (fresh noise each); 95% "
        f"interval {_num(lo)}–{_num(hi)}% over {reps} simulated trials",
    )


def cannot_show(reps: int, needed: int, assurance: float) -> str:
    """Why ``reps`` simulated trials cannot show that ``assurance`` of single releases reach a
    target, whatever the releases do, and the ``needed`` repetitions that can
    (:func:`dpcore.montecarlo.reps_to_show`)."""
    a, best = assurance_words(assurance), float(wilson_interval(reps, reps)[0])
    return (
        f"{reps} simulated trials cannot show that {a} single releases reach the target, "
        f"however good the rule: even if all {reps} did, the lower end of the share's 95% "
        f"interval would be {best:.1%}, below {assurance:.0%}. Showing it takes at least "
        f"{needed} repetitions."
    )


def judge(
    here: pd.Series,
    threshold: float,
    share: Share,
    assurance: float,
    first: bool | int = False,
    *,
    needed: int | None = None,
) -> str:
    """What the verdict says about one release, as a word: "first" (a first estimate: no
    judgement), "coin" (the rule may be a coin flip), "met" (at least ``assurance`` of single
    releases reach ``threshold`` beyond Monte-Carlo doubt), "unshown" (met on average; the
    repetitions cannot show the assurance: ``needed``), "average" (met on average, not by
    enough single releases) or "not met"."""
    lo, hi = here["accuracy_lo"], here["accuracy_hi"]
    if first:
        return "first"
    if is_coin_flip(lo, hi) or share.median < CHANCE_MEDIAN:
        return "coin"
    if share.lo >= assurance:
        return "met"
    if here["accuracy_mean"] >= threshold:
        return "unshown" if needed is not None else "average"
    return "not met"


#: The claim each judgement makes, for its colour (:func:`~dpcore_app.ui.common.explain.severity`).
CLAIM = {
    "first": "neutral",
    "coin": "do not",
    "met": "holds",
    "unshown": "caution",
    "average": "caution",
    "not met": "do not",
}


def verdict(
    eps: float,
    n: int,
    here: pd.Series,
    best: pd.Series,
    threshold: float,
    target_words: str,
    share: Share,
    assurance: float,
    gamma_note: str = "",
    first: bool | int = False,
    *,
    needed: int | None = None,
) -> tuple[str, str]:
    """(kind, sentence): the verdict about one release in full, and its colour.

    ``here`` and ``best`` are the current cell and the best non-private rule (accuracy_mean,
    _lo, _hi: the Monte-Carlo interval of the mean); ``share`` the :class:`Share` of single
    releases at or above ``threshold``. The colour is :func:`judge`'s claim at ``eps``
    (:func:`~dpcore_app.ui.common.explain.severity`): green only when the share's interval lies
    at or above ``assurance`` and the ε means something; amber when the mean meets the target
    but one release may not, or the ε promises little; red when the target is not met or the
    median release is about a coin flip. ``needed``: the repetitions it takes to show
    ``assurance`` when the study has fewer (then the amber sentence says so instead of
    doubting the release). ``first``: a first estimate (True, or the repetitions of the final
    numbers): labelled, and neutral ("info") without a judgement about one release, which waits
    for the final numbers.
    """
    mean, lo, hi = here["accuracy_mean"], here["accuracy_lo"], here["accuracy_hi"]
    ci = f"average over simulated trials, 95% Monte-Carlo interval {lo:.1f}–{hi:.1f}%"
    if math.isinf(eps):
        head = (
            f"Without privacy, a rule learned from {n} patients picks the better treatment for "
            f"{out_of_100(mean)} new patients ({ci}){gamma_note}."
        )
    else:
        head = (
            f"At ε = {eps:g} and {n} patients, the private rule picks the better treatment for "
            f"{out_of_100(mean)} new patients ({ci}), against {out_of_100(best['accuracy_mean'])} "
            f"for the best non-private rule{gamma_note}."
        )
    target = f" The target: {target_words}; {share_words(share)}."
    a = assurance_words(assurance)
    said = judge(here, threshold, share, assurance, first, needed=needed)
    tail = {
        "first": f" Whether {a} single releases reach it is judged on the final numbers.",
        "coin": (
            f" The median release picks the better treatment for "
            f"{share.median:.1f}% of patients: about a coin flip (50%)."
        ),
        "met": (
            f" Target met for one release: at least {a} releases reach it beyond Monte-Carlo "
            f"doubt (the interval's lower end, {share.lo:.0%}, is at or above {assurance:.0%})."
        ),
        "unshown": (
            f" The target is met on average; whether {a} single releases reach it cannot be "
            f"shown with {share.releases} simulated trials (it takes at least {needed})."
        ),
        "average": (
            f" The target is met on average, but not by {a} single "
            "releases beyond Monte-Carlo doubt: one release may miss it."
        ),
        "not met": " Target not met.",
    }[said]
    return severity(CLAIM[said], eps), (
        (first_estimate(share.releases, first) if first else "") + head + target + tail
    )


def headline(
    eps: float,
    here: pd.Series,
    best: pd.Series,
    threshold: float,
    share: Share,
    assurance: float,
    first: bool | int = False,
    *,
    needed: int | None = None,
    assured: Share | None = None,
) -> tuple[str, str]:
    """The verdict in one line, its first words saying what its colour says (:func:`verdict`
    gives the same colour): "Publishable", "Caution", "Do not publish" or "First estimate".
    ``assured``: the smallest ε on the grid at which ``assurance`` of single releases reach the
    target (its ``at``), or None; named after the judgement, except on a first estimate.
    ``needed``: the repetitions it takes to show ``assurance`` when the study has fewer; then
    no ε can show it, and the line says so instead of naming an ε or its absence."""
    said = judge(here, threshold, share, assurance, first, needed=needed)
    kind, a = severity(CLAIM[said], eps), assurance_words(assurance)
    at = "without privacy" if math.isinf(eps) else f"at ε = {eps:g}"
    got = f"on average {here['accuracy_mean']:.1f}% of new patients get the better treatment"
    if said == "first":
        return kind, f"First estimate {at}: {got}; the verdict waits for the final numbers."
    line = {
        "coin": f"one release is about a coin flip ({got})",
        "met": f"{a} single releases reach the target ({got})",
        "unshown": f"the target is met on average ({got}); these repetitions cannot show {a}",
        "average": f"the target is met on average ({got}), but one release may miss it",
        "not met": f"the target is not met ({got}, the target is {threshold:.1f}%)",
    }[said]
    if kind == "success":
        word = "Publishable"
    elif kind == "error":
        word = "Do not publish"
    else:
        word = "Caution"
    if said == "met" and weak_promise(eps):
        line += (
            " — but nothing protects one patient"
            if math.isinf(eps)
            else " — but this ε promises one patient little"
        )
    if said != "met" and needed is not None:  # no ε can show the assurance at these reps
        line += (
            f" at any ε (that takes at least {needed})"
            if said == "unshown"
            else f". These repetitions cannot show {a} at any ε (that takes at least {needed})"
        )
    elif said != "met":
        line += (
            f". Smallest ε where {a} releases reach it: {assured.at:g}"
            if assured is not None
            else f". No private ε on the grid gets {a} releases there"
        )
    return kind, f"{word} {at}: {line}."


# FIRST. A first estimate (fewer repetitions, shown while the final numbers compute) gives the
# average accuracy, labelled, and withholds every judgement about one release: the verdict's
# colour and its sentence on single releases, "at what ε" and the star on the chart. Those rest
# on the lower end of a Wilson interval, much wider at fewer repetitions (40 cannot show 19 of
# 20 at all): on the page's sweeps (seed 0) the ε a 40-repetition estimate names differs from
# the 200-repetition answer in 23 of 36 (n, target, assurance) settings, at the default view
# "at no ε" against ε = 50. A clinician who reads an ε to publish at should not see it change
# seconds later; the mean moves far less, and the label says it will still move.


def first_estimate(reps: int, final: int | bool) -> str:
    """The label of a first estimate from ``reps`` simulated trials (``final``: the number the
    final numbers come from, or True when unknown)."""
    of = "" if final is True else f", from {final},"
    return f"**First estimate** from {reps} simulated trials (final numbers{of} in a few seconds): "


def eps_answer_withheld(reps: int, final: int | bool) -> str:
    """What "At what ε can we publish?" says while only a first estimate is in."""
    of = "" if final is True else f" ({final} simulated trials)"
    return (
        f"Answered with the final numbers{of} in a few seconds. A first estimate from {reps} "
        "trials names an ε from a wider interval, so it would often name another ε than the "
        "final answer."
    )


def target_caption(
    kind: str,
    assurance: float,
    hit: Hit | None,
    first: bool | int = False,
    needed: int | None = None,
    reps: int | None = None,
) -> str:
    """What the ε chart's green marks draw: the target's line (``kind`` "patients" or
    "points") and the star at ``hit`` (the :class:`Hit` of the ε named for publishing, or
    None), for a first estimate (``first``: no star yet) or when ``reps`` simulated trials
    are fewer than the ``needed`` that can show ``assurance`` (a fraction) at all."""
    a = assurance_words(assurance)
    line = (
        "Green: the target (long-dashed line"
        + (": the best non-private rule's average less p" if kind == "points" else "")
        + ")"
    )
    if first:
        return f" {line}; the ε to publish at is starred once the final numbers are in."
    if needed is not None:
        return (
            f" {line}; {reps} simulated trials cannot show {a} single releases reaching it at "
            f"any ε (that takes {needed}), so no ε is starred."
        )
    if hit is None:
        return (
            f" {line}; at no ε on the grid do {a} single releases reach it beyond Monte-Carlo "
            "doubt, so none is starred."
        )
    return (
        f" {line}, and the star at ε = {hit.at:g}: the smallest ε on the grid at which {a} "
        "single releases reach it beyond Monte-Carlo doubt (the lower end of the 95% interval "
        f"of their share at or above {assurance:.0%})."
    )


def eps_answer_sentence(
    assured: Share | None,
    mean_answer: EpsAnswer,
    n: int,
    eps: float,
    n_hit: Share | None,
    sizes: Sequence[int],
    nonprivate_accuracy: float,
    threshold: float,
    assurance: float,
    board: bool = False,
    *,
    reach: str | None = None,
    needed: int | None = None,
    reps: int | None = None,
) -> str:
    """One paragraph: the smallest ε on the grid for n at which ``assurance`` of single
    releases reach the threshold (beyond Monte-Carlo doubt), with what that ε promises one
    patient; where the mean alone reaches it; and the n it would take at the current ε.
    ``board``: for a printed handout, whose reader has no controls to try. ``reach``: what a
    single release must do (:meth:`Target.reach`; default "reach" the threshold). ``needed``:
    the repetitions it takes to show ``assurance`` when the study's ``reps`` are fewer; then
    no ε and no n can show it, and the paragraph says so instead of blaming the data."""
    t, a = f"{threshold:.1f}%", assurance_words(assurance)
    reach = f"reach {t}" if reach is None else reach
    if needed is not None:
        assert reps is not None  # ``needed`` is said against the study's ``reps``
        head = f"For n = {n}, {cannot_show(reps, needed, assurance)}"
    elif assured is None:
        why = (
            f" Even without privacy the rule reaches only {nonprivate_accuracy:.1f}%."
            if nonprivate_accuracy < threshold
            else ""
        )
        head = (
            f"For n = {n}, at no ε on the grid up to 1000 do {a} single releases {reach} "
            f"beyond Monte-Carlo doubt (the lower end of the 95% interval of their share at or "
            f"above {assurance:.0%}).{why}"
        )
    else:
        head = (
            f"For n = {n}, the smallest ε on the grid at which {a} single releases {reach} "
            f"beyond Monte-Carlo doubt is ε = {assured.at:g}: {assured.share:.0%} of them do "
            f"(95% interval {assured.lo:.0%}–{assured.hi:.0%}, its lower end at or above "
            f"{assurance:.0%}). {epsilon_note(assured.at)}"
        )
    if mean_answer.first is not None and (assured is None or mean_answer.first.at < assured.at):
        head += (
            f" On average the rule reaches {t} from ε = {mean_answer.first.at:g}, where a "
            "single release may still miss it."
        )
    if math.isinf(eps) or needed is not None:  # no size can show it at these repetitions
        return head
    shown = ", ".join(str(s) for s in sizes)
    if n_hit is None:
        tail = (
            f" At ε = {eps:g}, none of the simulated sizes ({shown}) gets {a} releases there "
            "beyond Monte-Carlo doubt"
        ) + (
            "; larger trials were not simulated."
            if board
            else ": add larger trials under “Also show n” to see whether any would."
        )
    elif n_hit.at == n:
        tail = f" At ε = {eps:g}, the current {n} patients are enough."
    else:
        tail = (
            f" At ε = {eps:g} it would take n = {n_hit.at:g} patients ({n_hit.share:.0%} of "
            f"releases reach it there, 95% interval {n_hit.lo:.0%}–{n_hit.hi:.0%}), the smallest "
            f"of the simulated sizes ({shown}) that does beyond Monte-Carlo doubt."
        )
    return head + tail
