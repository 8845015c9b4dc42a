"""The DP-OWL page's view model, shown nowhere: the work a state asks for (:func:`workload`), one
state's numbers (:class:`View`), what the verdict about one release decides
(:func:`decision`) and what it says (:func:`words`). The page's panels, the handout and the
warm-up read them; :mod:`dpcore_app.ui.owl.panels` displays them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcore_app.ui.common.limits import cap_work
from dpcore_app.ui.owl import compute, decide, decide_explain
from dpcore_app.ui.owl import decide_compute as targets

if TYPE_CHECKING:
    import pandas as pd

    from dpcore_app.ui.common.limits import Workload
    from dpcore_app.ui.owl.compute import SweepArgs
    from dpcore_app.ui.owl.decide_compute import Target

#: A state of the page: its controls' values by name (``eps``, ``n``, ``mode``, ``gamma``, ...).
State = Mapping[str, Any]


@dataclass(frozen=True)
class View:
    """One state's numbers: the current n's per-repetition ``runs``, ``summary`` and
    ``refs``, the summary of every simulated n, the current cell (``here``), the best
    non-private rule (``best``) and each n's runs."""

    runs: pd.DataFrame
    summary: pd.DataFrame
    refs: pd.DataFrame
    all_summary: pd.DataFrame
    here: pd.Series
    best: pd.Series
    runs_by_n: dict[int, pd.DataFrame]


def workload(s: State) -> tuple[Workload, SweepArgs]:
    """(:class:`Workload`, the sweeps' arguments after n) of a state ``s`` of the page."""
    work = cap_work(s["reps"], set(s["compare"]) | {s["n"]}, keep=s["n"])
    return work, (s["mode"], s["gamma"], s["h"], s["W"], work.reps, s["seed"], s["prep"])


def view(
    s: State,
    results: Mapping[int, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    reps: int,
) -> View:
    """The :class:`View` of ``results`` (n -> (runs, summary, refs)) at the state ``s``."""
    runs, summary, refs = results[s["n"]]
    all_summary = compute.stack_summaries(results)
    return View(
        runs,
        summary,
        refs,
        all_summary,
        compute.cell(summary, s["eps"]),
        decide.best_reference(s, all_summary, reps),
        {m: r for m, (r, _, _) in results.items()},
    )


def decision(s: State, v: View, target: tuple[Target, float], reps: int) -> dict[str, Any]:
    """What the verdict decides at the state ``s`` for the :class:`View` ``v``, without showing
    it; ``target`` is (:class:`Target`, assurance). The target's mark on the ε chart is
    ``mark``."""
    (target, assurance), eps, n = target, s["eps"], s["n"]
    threshold = target.threshold(v.best.accuracy_mean)  # the mean's: the chart's line
    # Each simulated release is held to its own bar: for "within p points", p below the best
    # non-private rule learned from the same simulated trial (paired, not against the average).
    bars = {
        m: target.threshold(decide.best_per_trial(s, runs, reps, m))
        if target.kind == "points"
        else threshold
        for m, runs in sorted(v.runs_by_n.items())
    }
    assured = targets.smallest_assured_eps(v.runs_by_n[n], bars[n], assurance)
    return dict(
        threshold=threshold,
        answer=targets.smallest_eps(v.all_summary, n, threshold),
        assured=assured,
        share=targets.share_at(v.runs_by_n[n], eps, bars[n]),
        n_hit=targets.smallest_assured_n(v.runs_by_n, eps, bars, assurance),
        mark=(threshold, targets.hit_at(v.all_summary, n, assured.at if assured else None)),
        assurance=assurance,
        target=target,
        needed=targets.reps_needed(reps, assurance),  # None: these repetitions can show it
    )


def words(
    s: State, v: View, d: Mapping[str, Any], reps: int, first: bool | int = False
) -> dict[str, Any]:
    """What the verdict says about the view ``v`` with the decision ``d`` (:func:`decision`),
    shown nowhere: ``kind`` (its colour), ``headline`` (the verdict in one line), ``verdict``
    (the sentence about one release), ``text`` (the page's answer to "at what ε can we
    publish?"), ``board`` (that answer for a printed handout) and ``needed`` (the repetitions
    that can show the assurance, or None). ``first``: a first estimate (the repetitions of the
    final numbers, or True)."""
    eps, n = s["eps"], s["n"]
    # A first estimate withholds every judgement about one release (decide_explain.FIRST says why)
    needed = None if first else d["needed"]  # a first estimate's repetitions are not the page's
    g_best = decide.best_gamma(n)
    fixed = compute.cell(v.all_summary[v.all_summary.n == n], math.inf).accuracy_mean
    note = (
        ""
        if s["mode"] == "paper"
        else (
            f" (γ = {g_best:g}; at the fixed γ = {s['gamma']:g} even the "
            f"non-private rule reaches only {fixed:.1f}%)"
        )
    )
    kind, sentence = decide_explain.verdict(
        eps,
        n,
        v.here,
        v.best,
        d["threshold"],
        d["target"].words(d["threshold"]),
        d["share"],
        d["assurance"],
        note,
        first,
        needed=needed,
    )
    _, line = decide_explain.headline(
        eps,
        v.here,
        v.best,
        d["threshold"],
        d["share"],
        d["assurance"],
        first,
        needed=needed,
        assured=d["assured"],
    )
    answer = (
        d["assured"],
        d["answer"],
        n,
        eps,
        d["n_hit"],
        sorted(v.runs_by_n),
        v.best.accuracy_mean,
        d["threshold"],
        d["assurance"],
    )
    said = dict(reach=d["target"].reach(d["threshold"]), needed=needed, reps=reps)
    text = (
        decide_explain.eps_answer_withheld(reps, first)
        if first
        else decide_explain.eps_answer_sentence(*answer, **said)
    )
    return dict(
        kind=kind,
        headline=line,
        verdict=sentence,
        text=text,
        board=decide_explain.eps_answer_sentence(*answer, board=True, **said),
        needed=needed,
    )
