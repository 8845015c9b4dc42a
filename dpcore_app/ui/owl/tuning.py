"""Algorithm 2 as a panel: tune γ for the current (n, ε) on a public proxy, then use it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from dpcore.owl.simulate import PROXY_VARIANTS
from dpcore_app.ui.common.controls import Choice, IntRange, row
from dpcore_app.ui.common.figures import show
from dpcore_app.ui.common.grids import fmt_eps
from dpcore_app.ui.owl import charts, compute, explain

VARIANT = Choice(
    "proxy", tuple(PROXY_VARIANTS), "same as the trial", "Public proxy D0", str, kind="selectbox"
)
N0 = Choice("n0", (200, 500, 1000, 2000, 5000), 1000, "Proxy size n0")
TUNE_REPS = IntRange("tune_reps", 10, 200, 40, "Repeats r per γ", step=10)
CONTROLS = (VARIANT, N0, TUNE_REPS)


def panel(
    n: int,
    eps: float,
    h: float,
    W: float,
    prep: str,
    on_use: Callable[[Mapping[str, Any], str], None],
) -> None:
    """Algorithm 2, run on request for the current (n, ε): tuning is too slow for every slider move."""
    st.subheader("Choose γ without spending privacy: Algorithm 2")
    st.markdown(
        "γ trades two errors: small γ lets the rule fit the data but makes the noise (∝ 1/γ) large; "
        "large γ shrinks the noise but flattens the rule. Algorithm 2 tunes γ for the target (n, ε) "
        "on an independent public dataset D0, so no privacy is spent. D0 may be imperfect."
    )
    if math.isinf(eps):
        st.caption("Without privacy the best γ is simply the smallest; pick a finite ε to tune.")
        return
    variant, n0, reps = row(VARIANT, N0, TUNE_REPS, widths=[2, 1, 1])
    request = (n, eps, variant, n0, reps, h, W, prep)
    if st.button(f"Run Algorithm 2 for n = {n}, ε = {fmt_eps(eps)}", key="run_tuning"):
        st.session_state["tuning_request"] = request
    if st.session_state.get("tuning_request") != request:
        st.caption("Press the button to tune γ for the current settings (about a second).")
        return
    with st.spinner("Tuning γ…"):
        res = compute.gamma_tuning(*request)
    show(
        charts.gamma_curve(
            res.curve,
            res.best_gamma,
            "value",
            res.top_gamma,
            compute.gamma_used("paper", 0, eps, n),
        ),
        key="gamma_curve",
    )
    st.caption(explain.tuning_caption(res, reps, n, variant, n0))
    st.button(
        f"Use γ = {res.best_gamma:g} in the study above",
        type="primary",
        key="use_gamma",
        on_click=on_use,
        args=(
            {"gamma_mode": "free", "gamma": int(res.best_gamma)},
            f"Now using fixed γ = {res.best_gamma:g} from Algorithm 2",
        ),
    )
