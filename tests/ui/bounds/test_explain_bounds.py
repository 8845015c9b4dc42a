"""Sentence truth for the Theory bounds page: every sentence is built from numbers, then read
back, and its claim is recomputed from those numbers at the extremes (smallest and largest ε,
non-private, smallest n, C > 0)."""

import math
import re

import numpy as np
import pytest

from dpcore.theory import bounds
from dpcore.theory.measurement import coverage
from dpcore_app.ui.bounds import compute, explain
from dpcore_app.ui.common.grids import EPS_OPTIONS, N_OPTIONS

EPS_EXTREMES = (min(EPS_OPTIONS), 1.0, max(e for e in EPS_OPTIONS if math.isfinite(e)), math.inf)
SETTINGS = [
    (eps, n, C)
    for eps in EPS_EXTREMES
    for n in (min(N_OPTIONS), max(N_OPTIONS))
    for C in (0.0, 60.0)
]
NORMS = {"code": 3.0, "stated": 2.5}


def numbers(text):
    return [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*\.?\d*(?:e[+-]?\d+)?", text)]


def after(text, words):
    """The first number after ``words`` in ``text``."""
    return numbers(text.split(words, 1)[1])[0]


@pytest.mark.parametrize("eps, n, C", SETTINGS)
def test_verdict_claims_follow_from_the_terms(eps, n, C):
    gamma, h, W, rho = 75.0, 0.5, 30, 0.05
    t = compute.terms(n, eps, gamma, h, W, C, rho, NORMS)["re-derived"]
    q, worst = 0.37 * t["total"], 0.5 * t["total"]
    text = explain.bound_verdict(eps, t, q, rho, worst, compute.TRIALS)
    if math.isinf(eps):
        assert "probability" not in text.replace("no probability", "")
        assert f"each of the {compute.TRIALS} simulated trials" in text
        assert after(text, "by at most") == pytest.approx(worst, rel=1e-2)
        top = max(("T1", "T3"), key=t.get)
        assert after(text, "of which") == round(100 * t[top] / t["total"])
        return
    assert after(text, "privacy-noise term is") == round(100 * t["T2"] / t["total"])
    assert ("is the largest" in text) == (max(("T1", "T2", "T3"), key=t.get) != "T2")
    # "doubling n, with γ doubled so that λ = γ/n stays, would cut the noise term to a quarter"
    twice = compute.terms(2 * n, eps, 2 * gamma, h, W, C, rho, NORMS)["re-derived"]
    assert twice["T2"] == pytest.approx(t["T2"] / 4)
    assert after(text, "by at most") == pytest.approx(t["total"], rel=1e-2)
    assert "at least 95% over the noise" in text and "not a theorem of the paper" in text
    shown = after(text, "so the bound is")
    assert shown == pytest.approx(t["total"] / q, rel=0.05)


def test_verdict_when_the_measured_excess_is_negative():
    t = compute.terms(500, 1.0, 75.0, 0.5, 30, 0.0, 0.05, NORMS)["re-derived"]
    assert "no worse than the comparison rule" in explain.bound_verdict(1.0, t, -0.1, 0.05)


def clustered(share_per_trial, draws=100, rng=0):
    rng = np.random.default_rng(rng)
    p = np.repeat(share_per_trial, draws)
    return rng.random(p.size) < p, np.repeat(np.arange(len(share_per_trial)), draws)


@pytest.mark.parametrize("form", bounds.FORMS)
@pytest.mark.parametrize(
    "per_trial",
    [np.full(20, 0.999), np.full(20, 0.8), np.r_[np.ones(16), np.zeros(4)], np.full(20, 0.94)],
)
def test_coverage_sentence_reads_back_its_interval(form, per_trial):
    within, trial = clustered(per_trial)
    cov = coverage(within, trial)
    status, text = explain.coverage_sentence(form, cov, 0.05, 1.0)
    share, m, trials = numbers(text.split("held in", 1)[1])[:3]
    lo, hi = map(float, re.search(r"95% CI ([\d.]+)–([\d.]+)%", text).groups())
    assert share == pytest.approx(100 * cov["share"], abs=0.05)
    assert (m, trials) == (within.size, 20)
    assert (lo, hi) == (
        pytest.approx(100 * cov["lo"], abs=0.05),
        pytest.approx(100 * cov["hi"], abs=0.05),
    )
    assert status == (
        "violated" if cov["hi"] < 0.95 else "unclear" if cov["share"] < 0.95 else "holds"
    )
    assert ("fails by measurement" in text) == (status == "violated")
    claim = "Theorem 10 as transcribed" if form == "printed" else "this project's derivation"
    assert claim in text


@pytest.mark.parametrize("held", [20, 17])
def test_coverage_sentence_without_noise_counts_trials(held):
    within = np.repeat(np.arange(20) < held, 100)  # 100 identical draws per trial
    cov = coverage(within, np.repeat(np.arange(20), 100), identical=True)
    status, text = explain.coverage_sentence("printed", cov, 0.05, math.inf)
    assert f"held on {held} of 20 simulated trials" in text
    assert "releases" not in text and "CI" not in text and "%" not in text
    assert status == ("holds" if held == 20 else "violated")


@pytest.mark.parametrize("eps", EPS_EXTREMES)
@pytest.mark.parametrize(
    "per_trial", [np.full(20, 0.999), np.full(20, 0.94), np.r_[np.ones(16), np.zeros(4)]]
)
def test_the_one_line_verdict_says_what_the_full_verdict_says(eps, per_trial):
    """The headline's status, share, ratio and noise share are the full sentences' numbers, at
    every extreme of ε (without noise it counts trials and states no probability)."""
    t = compute.terms(500, eps, 75.0, 0.5, 30, 0.0, 0.05, NORMS)["re-derived"]
    within, trial = clustered(per_trial)
    cov = coverage(within, trial, identical=math.isinf(eps))
    status, full = explain.coverage_sentence("re-derived", cov, 0.05, eps)
    q = 0.37 * t["total"]
    line = explain.headline(eps, t, q, 0.05, status, cov)
    assert "\n" not in line and line.count(". ") == 0  # one sentence
    if math.isinf(eps):
        held = round(cov["share"] * cov["trials"])
        assert ("held on all 20" in line) == (held == 20) == (status == "holds")
        assert "%" not in line and "probability" not in line and "releases" not in line
        assert after(line, "largest measured excess was") == pytest.approx(q, rel=1e-2)
        return
    assert after(line, "bound") == pytest.approx(after(full, "held in"), abs=0.05)
    said = {"holds": "holds here", "unclear": "may not hold here", "violated": "fails here"}
    assert said[status] in line and "claimed 95%" in line
    if status == "holds":
        assert after(line, "95%),") == pytest.approx(t["total"] / q, rel=0.05)
        assert after(line, "privacy noise is") == round(100 * t["T2"] / t["total"])
    negative = explain.headline(eps, t, -0.1, 0.05, "holds", cov)
    assert "times" not in negative or status != "holds"


@pytest.mark.parametrize(
    "lo, hi, eps", [(0.4, 0.7, 1.0), (0.05, 0.7, 0.05), (0.3, 1.9, 1000.0), (0.3, 2.5, math.inf)]
)
def test_rate_ratio_sentence(lo, hi, eps):
    text = explain.rate_ratio_sentence(lo, hi, eps)
    assert numbers(text.split("between", 1)[1])[:2] == [lo, hi]
    assert ("the same order" in text) == (0.2 <= lo and hi <= 2.0)
    assert "as Theorem 3.4 says" not in text and "this one law" in text
    assert ("proven for ε ≤ 1" in text) == (math.isfinite(eps) and eps > 1)


@pytest.mark.parametrize("eps", EPS_EXTREMES)
def test_phase_caption(eps):
    text = explain.phase_caption(eps, 5)
    assert "Up to constants" in text and "indicative" in text
    assert ("εnτ = √d" in text) == math.isfinite(eps)  # the chart draws that line only with noise
    assert ("proven for ε ≤ 1; here" in text) == (math.isfinite(eps) and eps > 1)
    assert "(ε, δ)-DP" in text or math.isinf(eps)


@pytest.mark.parametrize("form", bounds.FORMS)
def test_terms_caption_names_the_convention_and_limits_hardest(form):
    text = explain.terms_caption(form)
    assert ("λ = 2γ/n" in text) == (form == "printed")
    assert "at the current γ it is the comparison that makes the bound hardest" in text
    assert "not the hardest" in text


@pytest.mark.parametrize("alpha, W", [(0.1, 30), (5.0, 1), (1.0, 100)])
def test_sample_size_caption_ranges(alpha, W):
    df = compute.sample_sizes(alpha, W, 0.0, 0.05, 3.0)
    text = explain.sample_size_caption(df.epsilon.to_numpy(), df.regime.to_numpy())
    assert "up to constants" in text
    for name, lo, hi in re.findall(r"the (\w+) term for ε from ([\d.,]+) to ([\d.,]+)", text):
        lo, hi = float(lo.replace(",", "")), float(hi.replace(",", ""))
        sel = df[(df.epsilon >= lo * 0.95) & (df.epsilon <= hi * 1.05)]
        assert (sel.regime == name).mean() > 0.9


def test_formula_captions_state_what_the_code_computes():
    text = " ".join(c for _, c in explain.WERM_FORMULAS)
    # "W + C/2 times as far as in unweighted ERM"
    for W, C in ((30, 0.0), (30, 60.0), (1, 5.0)):
        ratio = bounds.weighted_sensitivity(W, 10.0, C) / bounds.unweighted_sensitivity(10.0)
        assert ratio == pytest.approx(W + C / 2)
    assert "W + C/2 times" in text and "W times as far" not in text
    assert "1 − δ₀ − ρ" in text and "2γ/n" in text
    assert "Gaussian-norm" not in text and "a_p(ρ)² (not a_p)" in text
    # Corollary 12's smoothing term carries ‖θ₀‖²: doubling ‖θ₀‖ quadruples it.
    one, two = (bounds.sample_size(1.0, 1.0, 30, 0.0, 5, 0.05, t)["smoothing"] for t in (2.0, 4.0))
    assert two == pytest.approx(4 * one)
    tex, caption = explain.SAMPLE_SIZE_FORMULA
    assert r"\lVert\theta_0\rVert^2\,(C+2W)" in tex and "printed corollary has ‖θ₀‖" in caption
    cvar = " ".join(c for _, c in explain.CVAR_FORMULAS)
    assert "εnτ of them" not in cvar and "not a count" in cvar
    assert cvar.count("up to constants") == 3 and cvar.count("ε ≤ 1") == 3


def test_a_p_bounds_the_gamma_radius_quantile_and_is_not_laurent_massart():
    """The docstring's claims about a_p: a_p² bounds the (1 − ρ) quantile of Gamma(p, 1), and it
    is below Laurent–Massart's χ² quantile bound p + 2√(pL) + 2L (so it is not that bound)."""
    import numpy as np
    from scipy import stats

    from dpcore.theory.bounds import a_p

    for p in (1, 2, 5, 20):
        for rho in (0.2, 0.05, 0.01):
            L = np.log(1 / rho)
            assert a_p(p, rho) ** 2 >= stats.gamma.ppf(1 - rho, p)
            assert a_p(p, rho) ** 2 < p + 2 * np.sqrt(p * L) + 2 * L


def test_the_glossary_defines_delta_and_both_kinds_of_interval():
    from dpcore_app.ui.common.glossary import TERMS

    assert "not simply the probability" in TERMS["delta"][1]
    assert "Two kinds here" in TERMS["interval"][1]
    for key in ("neighbouring", "sensitivity", "GDP", "composition", "OWL", "IPW", "epsilon_eval"):
        assert key in TERMS


def test_the_terms_charts_reading_quotes_the_bound_against_the_measurement():
    import numpy as np
    import pandas as pd

    from dpcore_app.ui.bounds.explain import terms_reading

    curve = pd.DataFrame({"gamma": [1.0, 10.0, 100.0], "total_re-derived": [8.0, 2.0, 4.0]})
    measured = pd.DataFrame({"gamma": [1.0, 100.0], "excess_q": [4.0, 0.0]})
    said = terms_reading(curve, measured, "gamma", "re-derived", 10.0, 0.05)
    assert said == (
        "The bound (re-derived) is smallest at γ = 10, where it is 2; at the 1 simulated values "
        "of γ it is 2 to 2 times the measured excess's 95% quantile."
    )
    measured = pd.DataFrame({"gamma": [1.0, 100.0], "excess_q": [16.0, 2.0]})
    assert terms_reading(curve, measured, "gamma", "re-derived", 10.0, 0.05).endswith(
        "0.5 to 2 times the measured excess's 95% quantile (below 1: the measurement exceeds "
        "the bound there)."
    )
    nothing = pd.DataFrame({"gamma": [1.0], "excess_q": [np.nan]})
    assert terms_reading(curve, nothing, "gamma", "re-derived", 10.0, 0.05).endswith("is 2.")


def test_without_privacy_the_terms_reading_names_the_smallest_value_drawn():
    import pandas as pd

    from dpcore_app.ui.bounds.explain import terms_reading

    curve = pd.DataFrame({"gamma": [1.0, 10.0, 100.0], "total_re-derived": [1.0, 2.0, 4.0]})
    measured = pd.DataFrame({"gamma": [1.0], "excess_q": [0.5]})
    said = terms_reading(curve, measured, "gamma", "re-derived", 0.0, 0.05)
    assert said.startswith(
        "The bound (re-derived) is smallest at the smallest γ drawn (1), where it is 1;"
    )
