"""The DP-OWL page's handout: its current view as a :class:`dpcore_app.ui.common.handout.Report` for a
board (the scenario in words, the verdict, the cards, the key chart and its numbers)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dpcore_app.ui.common.explain import privacy_statement
from dpcore_app.ui.common.handout import Report
from dpcore_app.ui.owl import charts
from dpcore_app.ui.owl.decide_explain import stability_card

if TYPE_CHECKING:
    import pandas as pd

    from dpcore_app.ui.owl.decide_compute import Share
    from dpcore_app.ui.owl.view_model import State, View


def owl_report(
    s: State,
    here: pd.Series,
    best: pd.Series,
    answer_text: str,
    summary: pd.DataFrame,
    sizes: Sequence[int],
    reps: int,
    verdict_text: str,
    privacy_text: str,
    mark: tuple[float, Any] | None = None,
    share: tuple[Share, float] | None = None,
    *,
    view_link: str,
) -> Report:
    """The DP-OWL page's current view as a :class:`Report`; ``share`` is (the Share of single
    releases reaching the target, the assurance asked for), ``view_link`` is :func:`link`
    taken when the view was built."""
    eps = s["eps"]
    cards = [
        (
            "Accuracy (better treatment)",
            f"{here.accuracy_mean:.1f}%",
            f"95% interval {here.accuracy_lo:.1f}–{here.accuracy_hi:.1f}%; best non-private "
            f"{best.accuracy_mean:.1f}%",
        ),
        (
            "Value of the rule",
            f"{here.value_mean:.2f}",
            f"95% interval {here.value_lo:.2f}–{here.value_hi:.2f} outcome units; best non-private "
            f"{best.value_mean:.2f}",
        ),
    ]
    if math.isfinite(eps):
        cards.append(
            (
                "Agrees with the non-private rule",
                f"{here.concordance_mean:.1f}%",
                f"95% interval {here.concordance_lo:.1f}–{here.concordance_hi:.1f}%",
            )
        )
    if share is not None:
        got, assurance = share
        cards.append(
            (
                "Single releases reaching the target",
                f"{got.share:.0%}",
                f"95% interval {got.lo:.0%}–{got.hi:.0%} over {got.releases} simulated trials; "
                f"asked: {assurance:.0%}",
            )
        )
    cards.append(stability_card(eps, here))  # beside the share: how stable one release is
    settings = {
        "page": "DP-OWL",
        "epsilon": "non-private" if math.isinf(eps) else f"{eps:g}",
        "n": s["n"],
        "gamma": "paper-tuned" if s["mode"] == "paper" else f"fixed {s['gamma']:g}",
        "h": s["h"],
        "W": s["W"],
        "preprocessing": s["prep"],
        "repetitions": reps,
        "seed": s["seed"],
        "link": view_link,
    }
    fig = charts.curves_vs_epsilon(
        summary,
        "accuracy",
        sizes,
        eps,
        mode=s["mode"],
        gamma=s["gamma"],
        best={s["n"]: float(best.accuracy_mean)},
        reference_ns=(s["n"],),
        target=mark,
    )
    rows = summary[summary["n"] == s["n"]][
        ["epsilon", "accuracy_mean", "accuracy_lo", "accuracy_hi"]
    ]
    rows = rows.round({"accuracy_mean": 1, "accuracy_lo": 1, "accuracy_hi": 1}).assign(
        epsilon=[("non-private" if math.isinf(e) else f"{e:g}") for e in rows.epsilon]
    )
    rows.columns = [f"ε (n = {s['n']})", "accuracy %", "95% from", "95% to"]
    gamma = (
        "the authors' tuned γ for each (ε, n)"
        if s["mode"] == "paper"
        else f"one fixed γ = {s['gamma']:g}"
    )
    prep = (
        "outcomes clipped to public bounds fixed in advance"
        if s["prep"] == "public"
        else "outcomes shifted by each data set's own minimum, as in the authors' code (outside the guarantee)"
    )
    eps_words = "without privacy" if math.isinf(eps) else f"at privacy budget ε = {eps:g}"
    scenario = (
        f"A randomized trial of two treatments with n = {s['n']} patients, simulated {reps} times as in "
        "the DP-wERM paper: four patient covariates (labelled age, biomarker, blood pressure and kidney "
        "risk, each scaled to [0, 1]; the labels are illustrative) and a true best treatment that depends "
        "on them. A rule (treat when intercept + Σ coef·x > 0) is learned by outcome weighted learning "
        f"and released {eps_words}, with {gamma}, Huber width h = {s['h']:g}, weight bound W = {s['W']}, "
        f"{prep}; simulation seed {s['seed']}. Accuracy is measured on new simulated patients."
    )
    return Report(
        "DP-OWL: what privacy costs a treatment rule",
        verdict_text,
        cards,
        answer_text,
        privacy_text,
        settings["link"],
        settings,
        fig,
        rows,
        scenario=scenario,
    )


def view_report(
    s: State, v: View, d: Mapping[str, Any], sizes: Sequence[int], reps: int, *, view_link: str
) -> Report:
    """The handout of the page's state ``s``: its :class:`~dpcore_app.ui.owl.view_model.View`
    ``v`` and what its verdict said, ``d`` (:func:`~dpcore_app.ui.owl.panels.verdict`'s, or
    :func:`~dpcore_app.ui.owl.view_model.decision`'s with
    :func:`~dpcore_app.ui.owl.view_model.words`)."""
    return owl_report(
        s,
        v.here,
        v.best,
        d["board"],
        v.all_summary,
        sizes,
        reps,
        d["verdict"],
        privacy_statement(s["eps"]),
        d["mark"],
        (d["share"], d["assurance"]),
        view_link=view_link,
    )
