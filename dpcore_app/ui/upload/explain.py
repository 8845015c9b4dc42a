"""Sentences of the your-data page: a released rule in words (plain text: callers escape it for markdown or HTML)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dpcore.privacy.composition import within_cap

if TYPE_CHECKING:
    from dpcore.owl.evaluation_result import PrivateEvaluation
    from dpcore_app.ui.upload.release import Release


def rule_sentence(release: Release) -> str:
    """The released rule as a sentence in the covariates' original units."""
    terms = " ".join(
        f"{'−' if c < 0 else '+'} {abs(c):.4g}·{name}"
        for name, c in zip(release.names, release.coef)
    )
    return (
        f"Treat with '{release.treated}' when {release.intercept:.4g} {terms} > 0; otherwise "
        f"give '{release.control}'. Each covariate is first clipped to its public bounds; a "
        "one-hot column 'col=level' is 1 for patients with that level and 0 otherwise."
    )


def release_statement(release: Release) -> str:
    """What was released, under which ε, and what the guarantee covers: with a private
    evaluation, the promise is the larger ε of the two parts (each patient is in one)."""
    if not release.private:
        return (
            f"The rule's coefficients were released with ε = {release.epsilon:g} noise, but "
            f"{release.void}, so there is NO differential-privacy guarantee: treat this "
            "rule as if it were computed without privacy."
        )
    k = len(release.coef) + 1
    plan = release.made.plan
    if plan.epsilon_eval is None:
        what = f"Only the rule's {k} coefficients were released"
        among = f"among the {release.n}"
    else:
        what = (
            f"The rule's {k} coefficients (fitted on {release.n} patients at ε = "
            f"{plan.epsilon:g}) and its private evaluation (on the other patients at ε_eval = "
            f"{plan.epsilon_eval:g}) were released"
        )
        among = "in the trial (each patient is in one part, so the larger ε holds)"
    eps = plan.cost
    return (
        f"{what}, with pure ε-differential privacy at ε = {eps:g} (δ = {release.delta:g}): "
        f"replacing any one patient's row {among} changes the chance of anything released "
        f"by at most a factor e^{eps:g} = {math.exp(min(eps, 700)):.3g}. "
        f"The bounds{settings_words(release)} are public settings chosen without looking at "
        "the data. The "
        "guarantee does not cover floating-point effects of the noise sampler, settings tuned "
        "on the same data, or side channels."
    )


def settings_words(release: Release) -> str:
    """The learner's public settings, named after the bounds."""
    return " and the ridge" if release.made.plan.learner == "plug-in" else ", γ, W and C"


#: Shown beside the outcome direction control until it is chosen, and in "Still needed".
DIRECTION_NEEDED = (
    "Choose which outcome is better, larger or smaller: nothing is assumed. A "
    "dictionary that names larger_is_better fills it in."
)
PLUG_IN_DESIGN = (
    "With an estimated propensity this page releases DP-OWL only (it pays for the estimate "
    "with more noise): to use the private plug-in rule, choose the trial's randomization "
    "ratio or its propensity column."
)
NO_PROPENSITY_COLUMN = (
    "every column already has a role, so none is left to hold the "
    "propensities: take one out of the covariates, or choose a "
    "randomization ratio or 'unknown: estimate'"
)
ESTIMATED_PROPENSITY = (
    "An estimated propensity is fitted on the same patients, so the noise is "
    "sized for the worst case (C = n W): pure ε-DP holds, at the cost of much "
    "more noise."
)


def upload_verdict(
    stage: str,
    n: int | None = None,
    eps: float | None = None,
    spent: float = 0.0,
    cap: float | None = None,
    cost: float | None = None,
) -> str:
    """The page's opening verdict for where the user is.

    From the "direction" stage on, ``n`` is the trial's row count; at the "ready" stage, ``eps``
    is the rule's ε, ``spent`` and ``cap`` are the file's durable total and cap, and ``cost``
    what the release would add (max(ε, ε_eval) with the private evaluation).
    """
    if stage == "none":
        return "No trial yet: pick a demo file or upload a CSV to begin."
    if stage == "error":
        return "The file could not be read as a trial yet: the message below says what to change."
    if stage == "roles":
        return "Choose the treatment and the outcome column below (a data dictionary names them)."
    if stage == "levels":
        return "Type the public levels of each categorical covariate in the table below."
    assert n is not None  # the trial is read from the "direction" stage on
    if stage == "direction":
        return f"{patients(n)} read. Choose which outcome is better before a rule can be released."
    if stage == "bounds":
        return f"{patients(n)} read. Enter the public bounds below before a rule can be released."
    assert eps is not None  # the "ready" stage: the release's ε is chosen
    cost = eps if cost is None else cost
    before = (
        f"ε = {spent:g} is already spent on this file, over every session"
        if spent
        else "nothing is spent on this file yet"
    )
    if not within_cap(spent, cost, cap):
        return (
            f"{patients(n)} read, but a release at this setting would be refused: it would "
            f"spend ε = {cost:g}, {before}, and the file's cap is ε = {cap:g}. Choose a "
            "smaller ε, or ask whoever keeps the ledger."
        )
    room = "" if cap is None else f" (cap ε = {cap:g})"
    return (
        f"{patients(n)} read. A rule can be released at ε = {eps:g}: it will spend "
        f"ε = {cost:g} of this file's privacy budget; {before}, so the total would be "
        f"ε = {spent + cost:g}{room}, recorded in the ledger for every session."
    )


def released_verdict(release: Release, spent: float) -> str:
    """The page's verdict once a rule is out: what was released and what the dataset spent."""
    if not release.private:
        return (
            f"Released a rule at ε = {release.epsilon:g} WITHOUT a privacy guarantee "
            f"({release.void}). This dataset has recorded ε = {spent:g} in total, over every "
            "session."
        )
    eps, plan = release.made.plan.cost, release.made.plan
    evaluated = plan.epsilon_eval is not None
    return (
        f"Released a private treatment rule at ε = {plan.epsilon:g}"
        + (f" with its evaluation at ε_eval = {plan.epsilon_eval:g}" if evaluated else "")
        + ": a patient's data moves the chance of "
        + ("anything released" if evaluated else "this rule")
        + f" by at most a factor {math.exp(min(eps, 700)):.3g}. This dataset has spent "
        f"ε = {spent:g} in total, over every session."
    )


def deploy_verdict(
    release: Release, spent: float, evaluation: PrivateEvaluation | None
) -> tuple[str, str]:
    """(kind, sentence): the headline once a rule is out, green only when the private
    evaluation shows the rule beats treating everyone with the better arm.

    ``evaluation`` is the release's :class:`dpcore.owl.evaluation.PrivateEvaluation`, or None
    when the rule was not evaluated; kind is "success", "warning" or "info".
    """
    head = released_verdict(release, spent)
    if not release.private:
        return "warning", head
    if evaluation is None:
        return "info", (
            head + " It was not evaluated on held-out patients, so nothing here "
            "shows that it beats treating everyone with the better arm: release it "
            "with the private evaluation before deploying it."
        )
    if evaluation.verdict == "better":
        return "success", (
            head + f" The private evaluation shows it beats treating everyone "
            f"with either arm ({evaluation.level:.0%} intervals): it can be "
            "deployed on this evidence."
        )
    better = getattr(evaluation, "better_on_average", None)
    fallback = (
        f" On average '{better}' is better ({evaluation.level:.0%} interval): giving everyone "
        f"'{better}' is what this evidence supports."
        if better is not None
        else " Nor can it tell which arm is better on average: this evidence supports no "
        "choice between the arms either."
    )
    if evaluation.verdict == "worse":
        return "warning", (
            head + " The private evaluation finds it worse than treating "
            "everyone with one of the arms: do not deploy it." + fallback
        )
    return "warning", (
        head + " The private evaluation cannot tell it from treating everyone "
        "with the better arm: do not deploy it on this evidence. More patients "
        "or a larger ε_eval narrow the intervals." + fallback
    )


def patients(k: int, n: int | None = None) -> str:
    """'1 patient', '3 patients', or '1 of 5 patients'."""
    total = k if n is None else n
    word = "patient" if total == 1 else "patients"
    return f"{k} {word}" if n is None else f"{k} of {n} {word}"


def stale_release(release: Release) -> str:
    """What the page says when the last release was computed from other settings."""
    return (
        f"Your last release (ε = {release.epsilon:g}, {release.time}) was computed from "
        "earlier settings (file, columns, design, bounds, levels, ε or γ), so it is not "
        "shown next to these: return to those settings to see it and its downloads again, "
        "or release a new rule. It stays recorded in the privacy ledger."
    )


#: Under the downloads: what they hold and how long a clicked download stays on the server
#: (Streamlit's MediaFileManager: a download built on click belongs to no session; the end of
#: each script run, in any session, marks it and the next one deletes it).
DOWNLOAD_WINDOW = (
    "Share the rule file and the report. The per-row file holds your patients' rows: keep it as "
    "you keep the data. A download is built when you click it and stays in the server's memory "
    "at its address until the server has finished two more page runs in any session (your next "
    "two clicks here, or anyone's); closing the tab does not remove it, and on a server nobody "
    "else uses it stays until the next run or a restart."
)


def upload_caption(ttl_seconds: float) -> str:
    """Where an uploaded file lives, and for how long (true for the server's settings).

    Streamlit keeps a closed tab's session ``server.disconnectedSessionTTL`` seconds for a
    reconnect and removes it at its next clean-up after that; download links are files in
    the server's memory that answer any request holding their address until they are cleared.
    """
    return (
        "The file stays in this server's memory for your session only: it is never written "
        "to disk, logged or shared with other users. After you close the tab the server "
        f"keeps your session {ttl_seconds:g} s (so that a reconnect finds it) and drops it, "
        "with the file, at its next clean-up after that; a restart drops everything. A "
        "download link is an unguessable address on this server that answers whoever holds "
        "it until the server clears it (two page runs after the click, in any session): "
        "share the downloaded files, not the links."
    )
