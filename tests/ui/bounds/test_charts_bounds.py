"""Pure chart functions of the Theory bounds page: data in, the right traces out."""

import math

import numpy as np
import pandas as pd

from dpcore_app.ui.bounds import charts, compute, explain
from tests.ui.slider_steps import check_steps


def measured(over, xs):
    k = len(xs)
    return pd.DataFrame(
        {
            over: xs,
            "excess_mean": np.ones(k),
            "excess_lo": np.full(k, 0.5),
            "excess_hi": np.full(k, 2.0),
            "excess_q": np.full(k, 3.0),
        }
    )


def test_bound_terms_stacks_the_chosen_form_and_skips_empty_terms():
    curve = compute.terms_curve(500, 1.0, 115.0, 0.5, 30, 0.0, 0.05, 3.0, 0.0, "gamma")
    fig = charts.bound_terms(
        curve,
        measured("gamma", [1.0, 10.0]),
        "gamma",
        "printed",
        115.0,
        900.0,
        0.05,
        paper_gamma=115.0,
    )
    stacked = [t for t in fig.data if t.stackgroup == "terms"]
    assert [t.name for t in stacked] == [
        "T1 regularization",
        "T2 privacy noise",
        "T3 Huber-to-hinge",
    ]
    assert np.allclose(stacked[1].y, curve["T2_printed"])
    assert any(
        t.name == "re-derived, λ = γ/n bound (total)" for t in fig.data
    )  # the other form, dashed
    texts = [a.text for a in fig.layout.annotations]
    assert any("bound-minimising γ = 900" in t for t in texts) and any(
        "paper table" in t for t in texts
    )
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.title.text.startswith("Theorem 10, transcribed, λ = 2γ/n")


def test_bound_terms_with_G_and_without_privacy():
    curve = compute.terms_curve(500, math.inf, 115.0, 0.5, 30, 0.0, 0.05, 3.0, 1.0, "h")
    fig = charts.bound_terms(curve, measured("h", [0.5]), "h", "re-derived", 0.5, 0.0, 0.05)
    names = [t.name for t in fig.data if t.stackgroup == "terms"]
    assert names == ["T1 regularization", "T3 Huber-to-hinge", "2G generalization"]
    assert fig.layout.title.text.startswith("Theorem 11 (probability 1 − δ₀ − ρ)")
    assert not any("bound-minimising" in a.text for a in fig.layout.annotations)


def test_terms_curve_reaches_the_minimiser():
    curve = compute.terms_curve(
        500, 1.0, 115.0, 0.5, 30, 0.0, 0.05, 3.0, 0.0, "gamma", reach=4000.0
    )
    assert curve.gamma.max() >= 4000


def test_sample_size_shades_each_ruling_term_once():
    df = compute.sample_sizes(5.0, 1, 0.0, 0.05, 3.0)  # W = 1 < alpha: the privacy term can rule
    fig = charts.sample_size(df, 1.0, 5.0)
    runs = 1 + int(np.sum(df.regime.to_numpy()[1:] != df.regime.to_numpy()[:-1]))
    assert len([s for s in fig.layout.shapes if s.type == "rect"]) == runs
    labels = {a.text for a in fig.layout.annotations}
    assert set(df.regime) <= labels
    caption = explain.sample_size_caption(df.epsilon.to_numpy(), df.regime.to_numpy())
    assert caption.count("term for ε") == runs
    assert np.allclose(fig.data[-1].y, df.n)


def test_phase_diagram_and_rates():
    ns, taus, regime = compute.phase_grid(1.0, 5)
    fig = charts.phase_diagram(ns, taus, regime, 500, 0.05, 1.0, 5)
    assert np.array_equal(np.asarray(fig.data[0].z), regime)
    threshold = next(t for t in fig.data if t.name == "ε n τ = √d")
    assert np.allclose(np.asarray(threshold.y) * ns, math.sqrt(5))
    rates = compute.cvar_rates(0.05, math.inf, 5)
    m = pd.DataFrame(
        {"n": [100, 1000]}
        | {f"{k}_{s}": [0.1, 0.01] for k in ("total", "privacy") for s in ("mean", "lo", "hi")}
    )
    m[["privacy_mean", "privacy_lo", "privacy_hi"]] = 0.0
    fig = charts.cvar_rates(rates, m, 0.05, math.inf)
    assert "its privacy part" not in [t.name for t in fig.data]  # no privacy, no privacy band
    assert "non-private" in fig.layout.title.text
    assert not any("proven for ε ≤ 1" in (t.name or "") for t in fig.data)
    beyond = charts.cvar_rates(compute.cvar_rates(0.05, 5.0, 5), m, 0.05, 5.0)
    assert all("proven for ε ≤ 1 only" in t.name for t in beyond.data[:3])


def test_the_rate_chart_carries_every_eps_as_a_step_of_its_own():
    """Each step draws the rates and the measured error at its ε; ε = 1 is active."""
    grid = (0.1, 1.0, 5.0, math.inf)
    curves = {}
    for k, e in enumerate(grid):
        m = pd.DataFrame(
            {"n": [100, 1000]}
            | {
                f"{part}_{s}": [0.1 / (k + 1), 0.01 / (k + 1)]
                for part in ("total", "privacy")
                for s in ("mean", "lo", "hi")
            }
        )
        if math.isinf(e):
            m[["privacy_mean", "privacy_lo", "privacy_hi"]] = 0.0
        curves[e] = (compute.cvar_rates(0.05, e, 5), m)
    static = {e: charts.cvar_rates(r, m, 0.05, e) for e, (r, m) in curves.items()}
    fig = charts.cvar_rates_steps(curves, 0.05, 1.0)
    assert check_steps(fig, static, 1.0) == ["0.1", "1", "5", "non-private"]
