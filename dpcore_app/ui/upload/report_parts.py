"""Sections the release report gains: the private evaluation and the preview at the chosen ε.

Both are releasable: the evaluation's numbers spent ε_eval, and the preview is a simulation
from public values. Every text is escaped; a figure comes without plotly.js (the report
inlines it once).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from dpcore.release.preview_reading import recommend_learner
from dpcore_app.ui.upload import analyst_explain as explain

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from dpcore.owl.evaluation_result import PrivateEvaluation


def evaluation_html(
    evaluation: PrivateEvaluation, eps_fit: float, n_fit: int, unit: str = ""
) -> str:
    e = html.escape
    names = {
        "rule": "Private rule",
        "treat_all": f"Everyone '{evaluation.treated}'",
        "treat_none": f"Everyone '{evaluation.control}'",
        "over_treat_all": f"Gain over everyone '{evaluation.treated}'",
        "over_treat_none": f"Gain over everyone '{evaluation.control}'",
    }
    estimates = [*evaluation.values.items(), *evaluation.gains.items()]
    if evaluation.average_effect is not None:
        names["average_effect"] = (
            f"Average effect: '{evaluation.treated}' minus '{evaluation.control}'"
        )
        estimates.append(("average_effect", evaluation.average_effect))
    rows = "".join(
        f"<tr><td>{e(names[k])}</td><td>{v.value:.4g}</td><td>[{v.lower:.4g}, {v.upper:.4g}]</td></tr>"
        for k, v in estimates
    )
    first = evaluation.first_answer()
    return (
        "<h2>Private evaluation on held-out patients</h2>"
        + (f"<p><b>First, the arms on average.</b> {e(first)}</p>" if first else "")
        + f"<p>{e(explain.evaluation_sentence(evaluation))}</p>"
        f"<table><tr><th>estimate{e(f' ({unit})' if unit else '')}</th><th>value</th>"
        f"<th>{100 * evaluation.level:g}% interval (noise and sampling)</th></tr>{rows}</table>"
        f"<p>{e(explain.cost_sentence(eps_fit, evaluation.epsilon, n_fit, evaluation.m))}</p>"
    )


def preview_html(
    frame: pd.DataFrame,
    figure: go.Figure,
    eps: float,
    strength: str,
    target: float,
    smallest: float | None,
    unit: str = "",
    learner: str = "dp-owl",
    learners: go.Figure | None = None,
) -> str:
    """The preview the analyst saw: DP-OWL's release against its non-private rule, and which
    learner gave more of the twin's patients the better arm (``learners``: that chart)."""
    config = {"displaylogo": False}
    chart = figure.to_html(full_html=False, include_plotlyjs=False, config=config)
    who = "a DP-OWL release" if learner == "plug-in" else "a private rule"
    sentence = explain.preview_sentence(frame, strength, eps, target, smallest, unit, who)
    rec = recommend_learner(frame, strength, eps)
    second = (
        learners.to_html(full_html=False, include_plotlyjs=False, config=config)
        if learners is not None
        else ""
    )
    return (
        f"<h2>Preview before spending (simulated, no privacy spent)</h2>"
        f"<p>{html.escape(explain.PREVIEW_NOTE)}</p>"
        f"<p><b>Which learner?</b> "
        f"{html.escape(explain.learner_sentence(rec, strength, eps, learner))}</p>"
        f"{second}"
        f"<p>{html.escape(sentence)}</p>"
        f"{chart}"
    )
