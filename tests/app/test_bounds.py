"""AppTest: the Theory bounds page from the entrypoint; its sentences against its numbers."""

import json
import math
import re

import numpy as np
import pytest

from dpcore.theory import bounds
from dpcore.theory.measurement import coverage
from dpcore_app.ui.bounds import compute

PAGE = "dpcore_app/app_pages/bounds.py"
FAILS = {"eps": "1", "n": "200", "gamma_mode": "fixed", "gamma": "1", "h": "2", "W": "1"}


def words(elements):
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def metric(at, label):
    return float(next(m.value for m in at.metric if m.label.startswith(label)))


def figure(at, key):
    for chart in at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return json.loads(chart.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def check_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error or all(
        "fails by measurement" in e.value
        or "It fails on the data" in e.value
        or "The re-derived bound fails here" in e.value
        for e in at.error
    )
    assert not at.warning, words(at.warning)


def test_default_view_numbers_agree(open_page):
    at = open_page(PAGE)
    check_clean(at)
    assert "Theory bounds" in at.title[0].value
    verdict = words(at.info)
    m = compute.measure(500, 1.0, 115.0, 0.5, 30, 0.0, 0.05, 0)
    t = compute.terms(500, 1.0, 115.0, 0.5, 30, 0.0, 0.05, m.norms)["re-derived"]
    share = round(100 * t["T2"] / t["total"])
    assert f"privacy-noise term is {share}% of the re-derived bound" in verdict
    assert f"at most {t['total']:.3g} with probability at least 95%" in verdict
    assert "this project's derivation, not a theorem of the paper" in verdict
    q = m.here.excess.quantile(0.95)
    assert f"stayed below {q:.3g}" in verdict
    assert metric(at, "Bound (re-derived)") == pytest.approx(t["total"], rel=1e-2)
    assert metric(at, "T2 privacy noise") == pytest.approx(t["T2"], rel=1e-2)
    # Both coverage sentences, with the share computed independently from the draws.
    ok = words(at.success)
    for form, name in (("printed", "transcribed"), ("re-derived", "re-derived")):
        excess = m.here[f"excess_{bounds.FORM_CONVENTION[form]}"]
        share = 100 * np.mean(excess <= m.here[f"bound_{form}"])
        assert f"The {name} bound held in {share:.1f}%" in ok
    assert f"over {compute.TRIALS} trials" in ok
    lo, hi = compute.rate_ratio(compute.cvar_measured(0.05, 1.0, 0), 0.05, 1.0)
    assert f"between {lo:.2g} and {hi:.2g} across n" in words(at.caption)
    fig = figure(at, "vs_gamma")
    names = [tr.get("name") for tr in fig["data"]]
    assert "T2 privacy noise" in names and "transcribed, λ = 2γ/n bound (total)" in names


def test_the_verdict_is_one_line_on_top_and_in_full_below_the_charts(open_page):
    at = open_page(PAGE)
    check_clean(at)
    line = at.success[0].value  # the first alert: the one-line verdict
    m = compute.measure(500, 1.0, 115.0, 0.5, 30, 0.0, 0.05, 0)
    cov = coverage(m.here["within_re-derived"], m.here.trial)
    assert line.startswith("The re-derived bound holds here")
    assert f"({100 * cov['share']:.1f}% of simulated releases within it" in line
    assert line.endswith("[The verdict in full](#verdict)")
    heads = [h.value for h in at.subheader]
    assert (
        heads.index("The verdict in full") == heads.index("DP-wERM: Theorem 10, term by term") + 1
    )


def test_printed_bound_failure_is_said_plainly(open_page):
    at = open_page(PAGE, **FAILS)
    check_clean(at)
    errors = words(at.error)
    assert "At these settings the transcribed formula fails by measurement." in errors
    assert "re-derived bound held" in words(at.success)
    m = compute.measure(200, 1.0, 1.0, 2.0, 1, 0.0, 0.05, 0)
    cov = coverage(m.here["within_printed"], m.here.trial)
    assert cov["hi"] < 0.95
    assert f"held in {100 * cov['share']:.1f}%" in errors


def test_non_private_smallest_n(open_page):
    at = open_page(PAGE, eps="non-private", n="100")
    check_clean(at)
    verdict = words(at.info)
    assert "Without privacy there is no noise term" in verdict
    assert "probability" not in verdict.replace("no probability", "")
    assert metric(at, "T2 privacy noise") == 0
    coverage_text = words(at.success) + words(at.error)
    assert (
        f"of {compute.TRIALS} simulated trials" in coverage_text and "releases" not in coverage_text
    )
    assert "CI" not in coverage_text
    assert any(mm.label == "Measured, largest over trials" for mm in at.metric)
    # The chart's band counts trials, not their identical draws.
    m = compute.measure(
        100, float("inf"), compute.gamma_used("paper", 75, float("inf"), 100), 0.5, 30, 0.0, 0.05, 0
    )
    assert (m.curve("gamma", "re-derived").reps == compute.TRIALS).all()


def test_smallest_eps_largest_n(open_page):
    at = open_page(PAGE, eps="0.05", n="5000", rho="0.01", C="60", G="5")
    check_clean(at)
    assert "patient-repetitions per view" in words(at.info)  # the work cap's notice
    # Theorem 11: the stacked chart carries the 2G term; the verdict and cards stay Theorem 10.
    assert "2G generalization" in [tr.get("name") for tr in figure(at, "vs_gamma")["data"]]
    g = compute.gamma_used("paper", 75, 0.05, 5000)
    m = compute.measure(5000, 0.05, g, 0.5, 30, 60.0, 0.01, 0)
    t = compute.terms(5000, 0.05, g, 0.5, 30, 60.0, 0.01, m.norms)["re-derived"]
    assert metric(at, "Bound (re-derived)") == pytest.approx(t["total"], rel=1e-2)


def test_the_largest_eps_with_a_unit_weight_bound_draws_every_chart(open_page):
    """ε = 1000 at n = 1000 with W = 1: Theorem 10's bound is flat in γ there, where a
    bracketed search failed and every chart gave way to SciPy's error."""
    at = open_page(PAGE, eps="1000", n="1000", W="1")
    check_clean(at)
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("form", ["printed", "re-derived"])
def test_the_joint_best_gamma_and_h_exist_at_every_extreme(form):
    for eps in (0.05, 1.0, 1000.0):
        for n in (50, 1000, 100_000):
            for W in (1.0, 30.0, 1000.0):
                g, h = bounds.best_gamma_h(n, eps, 0.01, W, 0.0, 5, 1.0, form)
                assert math.isfinite(g) and g > 0 and math.isfinite(h) and h > 0, (eps, n, W)


def test_preset_button_and_form_switch(open_page):
    at = open_page(PAGE)
    next(b for b in at.button if b.label == "Where the transcribed formula fails").click().run()
    check_clean(at)
    assert at.query_params["W"] == "1" and at.query_params["h"] == "2"
    assert "transcribed formula fails by measurement" in words(at.error)
    at.segmented_control(key="bounds.form").set_value("printed").run()
    check_clean(at)
    assert "Theorem 10, transcribed, λ = 2γ/n" in figure(at, "vs_gamma")["layout"]["title"]["text"]


def test_bad_link_warns_and_falls_back(open_page):
    at = open_page(PAGE, eps="-3", tau="abc", zzz="1")
    assert not at.exception
    notices = words(at.warning)
    assert "eps" in notices and "tau" in notices and "zzz" in notices
    assert at.select_slider(key="bounds.eps").value == 1.0
    assert not math.isnan(metric(at, "Bound (re-derived)"))
