"""AppTest of the private CVaR page: it runs, its words match its numbers, links are safe.

(Named test_cvar_page.py: tests/dpcore/cvar/test_cvar.py already takes the module name test_cvar.)
"""

import json
import re

import numpy as np
import pytest

from dpcore.cvar.sweep import cvar_sweep, sweep_summary
from dpcore_app.ui.common.grids import EPS_OPTIONS
from dpcore_app.ui.cvar.compute import N_GRID, TAU_GRID
from tests.app.conftest import VERDICT_ICONS, failures, warnings

PAGE = "dpcore_app/app_pages/cvar.py"
FAST = {"reps": "20"}


def text(elements):
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def figure(at, key):
    for chart in at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return json.loads(chart.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def trace(fig, prefix):
    return next(t for t in fig["data"] if (t.get("name") or "").startswith(prefix))


def arr(x):
    import base64

    if isinstance(x, dict):
        return np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
    return np.asarray(x, dtype=float)


def verdict(at):
    """The verdict's text, in whichever colour its severity gives it."""
    kinds = ("success", "warning", "info", "error")
    return next(e.value for k in kinds for e in getattr(at, k) if e.icon in VERDICT_ICONS)


def alerts(at):
    return [e for k in ("success", "warning", "info", "error") for e in getattr(at, k)]


def badges(at):
    return [m.value for m in at.markdown if "-badge[" in m.value]


def clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not failures(at), [e.value for e in failures(at)]


@pytest.fixture(scope="module")
def engine():
    runs = cvar_sweep("uniform", N_GRID, TAU_GRID, EPS_OPTIONS, 1.0, 20, 0)
    return sweep_summary(runs, 1.0)


def test_default_view_runs_clean_and_says_what_it_shows(open_page):
    at = open_page(PAGE)
    clean(at)
    assert not warnings(at)
    assert "tail risk" in at.title[0].value
    assert "With 2000 patients and τ = 5%, only 100 patients form the tail; at ε = 1" in verdict(at)
    for key in ("errors", "em_probs", "em_excess", "rule_tail"):
        figure(at, key)


def test_verdict_and_chart_match_the_engine(open_page, engine):
    at = open_page(PAGE, **FAST)
    here = engine[(engine.n == 2000) & (engine.tau == 0.05) & (engine.epsilon == 1.0)].iloc[0]
    assert f"off by about {here.total_mean:.2g}" in verdict(at)
    assert f"sampling error alone is {here.statistical_mean:.2g}" in verdict(at)
    fig = figure(at, "errors")
    rows = engine[(engine.n == 2000) & (engine.tau == 0.05) & np.isfinite(engine.epsilon)]
    np.testing.assert_allclose(arr(trace(fig, "total")["y"]), rows.total_mean)
    np.testing.assert_allclose(arr(trace(fig, "rate")["y"]), rows.rate)


def test_epsilon_slider_moves_the_verdict_and_the_regime(open_page, engine):
    at = open_page(PAGE, **FAST)
    at.select_slider(key="cvar.eps").set_value(0.05).run()
    clean(at)
    here = engine[(engine.n == 2000) & (engine.tau == 0.05) & (engine.epsilon == 0.05)].iloc[0]
    assert "at ε = 0.05" in verdict(at) and f"{here.total_mean:.2g}" in verdict(at)
    assert ":orange-badge[Indicative regime, up to constants: privacy-dominated]" in badges(at)
    assert "εnτ = 5 is below √(nτ) = 10" in text(at.caption)
    assert "the privacy part is the larger" in text(at.caption)


@pytest.mark.parametrize(
    "params,words",
    [
        ({"eps": "non-private"}, ["without privacy", "all of it sampling error"]),
        (
            {"n": "100", "tau": "0.01", "eps": "0.05"},
            ["only 1 patient forms the tail", "Up to constants, in the worst case over all"],
        ),
        ({"tau": "1"}, ["all 2000 patients count"]),
        ({"loss": "hard two-point", "B": "10"}, ["loss scale from 0 to 10"]),
        ({"loss": "heavy-tailed", "x": "εnτ"}, ["private tail sample size"]),
        ({"x": "n"}, []),
        ({"x": "τ"}, []),
    ],
)
def test_extremes_and_views_run_and_read_true(open_page, params, words):
    at = open_page(PAGE, **{**FAST, **params})
    clean(at)
    assert not warnings(at)
    shown = text(alerts(at)) + " " + text(at.caption)
    for w in words:
        assert w in shown, shown
    figure(at, "errors")


def test_trivial_regime_at_one_tail_record(open_page):
    at = open_page(PAGE, n="100", tau="0.01", **FAST)
    assert ":red-badge[Indicative regime, up to constants: trivial]" in badges(at)
    assert "the rate is of the order of B itself" in text(at.caption)
    assert "indicative label" in text(at.caption)


@pytest.mark.parametrize("loss,start", [("hard two-point", 10), ("uniform", 500)])
def test_collapse_view_puts_every_tau_on_one_curve(open_page, loss, start):
    # The clip to [0, B] bends the curves only while the noise is not small against the
    # distance of the tail mean to 0 and B: at once for B Bern(tau/2) (tail mean B/2), late for
    # the uniform law (tail mean B(1 - tau/2)).
    at = open_page(PAGE, x="εnτ", loss=loss, **FAST)
    fig = figure(at, "errors")
    taus = [t["name"] for t in fig["data"] if t["name"].startswith("τ")]
    assert len(taus) == len(TAU_GRID)
    # at the same eps n tau (far from the clip), different tau give nearly the same privacy part
    pts = {}
    for t in fig["data"][:-1]:
        for x, y in zip(arr(t["x"]), arr(t["y"])):
            pts.setdefault(round(x, 6), []).append(y)
    same = [v for x, v in pts.items() if len(v) > 2 and x >= start]
    assert same and all(max(v) / min(v) < 1.15 for v in same), same


def test_presets_set_the_controls(open_page):
    at = open_page(PAGE, **FAST)
    at.button(key="preset_1").click().run()
    clean(at)
    assert (
        at.select_slider(key="cvar.eps").value == 0.5
        and at.session_state["cvar.loss"] == "two-point"
    )
    assert "With 1000 patients and τ = 5%, only 50 patients form the tail; at ε = 0.5" in verdict(
        at
    )


def test_convex_panel_runs_on_request(open_page):
    at = open_page(PAGE, d=["2", "10"], **FAST)
    assert not [c for c in at.get("plotly_chart") if "convex" in (c.proto.id or "")]
    at.button(key="run_convex").click().run()
    clean(at)
    fig = figure(at, "convex")
    assert [t["name"] for t in fig["data"] if t.get("name")] == ["d = 2", "d = 10"]
    labels = [a["text"] for a in fig["layout"]["annotations"]]
    assert any(t.startswith("measured: halves at ≈ 28") for t in labels)
    caption = text(at.caption)
    assert "Measured in this run: the excess falls to half its peak" in caption
    assert "εnτ ≈ √d is far from enough" in caption


@pytest.mark.parametrize(
    "params,words",
    [
        ({"eps_rule": "5", "eps": "0.5"}, "ε₁ + ε₂ = 5 + 0.5 = 5.5 by basic composition"),
        ({"eps": "non-private"}, "Privacy spent: not private"),
    ],
)
def test_rule_bridge_states_the_total_budget(open_page, params, words):
    at = open_page(PAGE, **params, **FAST)
    assert words in text(at.info)


def test_reps_above_the_cap_give_a_notice(open_page):
    at = open_page(PAGE, reps="1000")
    clean(at)
    assert "repetitions instead of 1000" in text(at.info)


@pytest.mark.parametrize(
    "params,keys",
    [
        ({"eps": "-3", "tau": "7"}, ["eps=-3", "tau=7"]),
        ({"loss": "normal", "B": "0", "n": "10"}, ["loss=normal", "B=0", "n=10"]),
        ({"M": "4", "d": ["2", "7"], "x": "foo"}, ["M=4", "d=2&7", "x=foo"]),
        (
            {"eps_rule": "non-private", "reps": "1", "seed": "-1", "zzz": "1"},
            ["eps_rule=non-private", "reps=1", "seed=-1", "zzz"],
        ),
    ],
)
def test_bad_links_fall_back_with_a_notice(open_page, params, keys):
    at = open_page(PAGE, **params)
    clean(at)
    notices = text(at.warning)
    for key in keys:
        assert key in notices
    assert (
        at.select_slider(key="cvar.eps").value == 1.0
        and at.select_slider(key="cvar.tau").value == 0.05
    )


def test_a_failing_computation_shows_a_message(open_page, monkeypatch):
    import dpcore_app.ui.cvar.compute

    def broken(*args, **kwargs):
        raise RuntimeError("sweep exploded")

    monkeypatch.setattr(dpcore_app.ui.cvar.compute, "scalar_summary", broken)
    at = open_page(PAGE, **FAST)
    assert "sweep exploded" in failures(at)[0].value
    assert "your other settings are kept" in failures(at)[0].value


def test_instance_adaptive_comparison_reads_true(open_page):
    at = open_page(PAGE, loss="hard two-point", **FAST)
    assert "instance-adaptive variant spends" not in text(at.markdown)  # lazy: only when open
    at.session_state["detail"] = True
    at.run()
    clean(at)
    words = text(at.markdown)
    assert "try the hard two-point law" not in words and "on this one law" in words
    assert "Theorem 3.2" in words and "a different law" in words
