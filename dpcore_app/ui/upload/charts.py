"""Charts of the "Your data" page: the released rule (public numbers only)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from dpcore_app.ui.common.charts import GREY, PALETTE, layout

#: Most bars drawn: a wide rule shows its largest effects (the rule file holds them all).
TOP = 30


def rule_effects(
    names: Sequence[str],
    effects: ArrayLike,
    treated: object,
    control: object,
    title: str = "What the released rule weighs",
) -> go.Figure:
    """Each covariate's pull on the score across its public bounds: coef × (upper − lower).

    Bars to the right favour the treated arm, to the left the control arm; the axis is in
    score units (the rule treats when the score is above 0), so bars compare across covariates
    measured in different units. With more than ``TOP`` covariates, the ``TOP`` largest.
    """
    effects = np.asarray(effects, dtype=float)
    order = np.argsort(np.abs(effects), kind="stable")[-TOP:]
    if len(effects) > TOP:
        title = f"{title} (the {TOP} largest of {len(effects)})"
    # plotly reads tags in labels; it shows &quot; literally, so quotes stay as they are
    names = [html.escape(str(names[i]), quote=False) for i in order]
    values = effects[order]
    colours = [PALETTE[0] if v > 0 else PALETTE[1] for v in values]
    fig = go.Figure(
        go.Bar(
            x=values,
            y=names,
            orientation="h",
            marker={"color": colours},
            customdata=np.abs(values),
            hovertemplate="%{y}: %{x:.3g} score units<extra></extra>",
        )
    )
    fig.add_vline(x=0, line={"color": GREY, "width": 1})
    treated, control = (html.escape(str(v), quote=False) for v in (treated, control))
    layout(
        fig,
        title,
        f"score change across the bounds (→ {treated}, ← {control})",
        None,
        height=max(260, 90 + 34 * len(names)),
    )
    fig.update_layout(hovermode="closest", showlegend=False, yaxis={"automargin": True})
    return fig
