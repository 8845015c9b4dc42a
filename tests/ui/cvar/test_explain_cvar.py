"""Sentence truth for the Private CVaR page: every sentence is built from numbers, read back,
and its claim recomputed from those numbers at the extremes (smallest and largest ε,
non-private, smallest n, τ = 1, the hard law)."""

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.cvar.learning_study import class_study
from dpcore.cvar.rates import dp_gd_privacy_constant
from dpcore.cvar.tail_risk import rule_tail_risk
from dpcore.theory import bounds
from dpcore_app.ui.common.grids import EPS_OPTIONS
from dpcore_app.ui.cvar import compute, explain

EPS_EXTREMES = (min(EPS_OPTIONS), 1.0, max(e for e in EPS_OPTIONS if math.isfinite(e)), math.inf)


def first_number(text):
    return float(re.search(r"-?\d[\d,]*\.?\d*(?:e[+-]?\d+)?", text).group().replace(",", ""))


def after(text, words):
    return first_number(text.split(words, 1)[1])


@pytest.mark.parametrize(
    "n, tau", [(100, 0.01), (100, 1.0), (2000, 0.05), (150, 0.01), (50, 0.01), (5000, 0.5)]
)
@pytest.mark.parametrize("eps", EPS_EXTREMES)
def test_verdict_counts_the_tail_truly(n, tau, eps):
    text = explain.cvar_verdict(n, tau, eps, 0.123, 0.045, 1.0)
    m = n * tau
    assert "only 0 patients" not in text
    if tau >= 1:
        assert f"all {n} patients count" in text
    elif m < 1:
        assert "less than one patient" in text and after(text, "nτ =") == pytest.approx(m, rel=0.05)
    elif abs(m - round(m)) < 1e-9:
        assert f"only {round(m)} patient" in text
    else:
        assert after(text, "nτ =") == pytest.approx(m, rel=1e-3)
    assert after(text, "off by about") == 0.12
    assert ("sampling error alone is 0.045" in text) == math.isfinite(eps)
    assert ("all of it sampling error" in text) == math.isinf(eps)


CELLS = [(n, tau, eps) for n in compute.N_GRID for tau in compute.TAU_GRID for eps in EPS_OPTIONS]


@pytest.mark.parametrize("privacy, statistical", [(0.3, 0.01), (0.001, 0.02), (0.0201, 0.0199)])
def test_regime_sentence_matches_the_one_rule_on_every_cell(privacy, statistical):
    for n, tau, eps in CELLS:
        regime = compute.regime(n, tau, eps)
        assert regime == bounds.cvar_regime_name(n, tau, eps, 1)  # one rule, both pages
        text = explain.cvar_regime_sentence(regime, n, tau, eps, privacy, statistical)
        assert "up to constants" in text.lower()
        m = n * tau
        stat, priv = 1 / math.sqrt(m), (0.0 if math.isinf(eps) else 1 / (eps * m))
        if regime == "trivial":
            shown = after(text, "=")
            assert shown == pytest.approx(stat + priv, rel=0.05) and stat + priv >= 1
            assert "indicative" in text
        elif math.isfinite(eps):
            shown_em, shown_root = after(text, "εnτ ="), after(text, "√(nτ) =")
            assert shown_em == pytest.approx(eps * m, rel=1e-2)
            assert shown_root == pytest.approx(math.sqrt(m), rel=1e-2)
            assert (regime == "privacy-dominated") == (eps * m < math.sqrt(m))
            assert "indicative" in text
        assert ("proven for ε ≤ 1" in text) == (math.isfinite(eps) and eps > 1)
        if math.isfinite(eps):
            said = re.search(r"the (privacy|sampling) part is the larger|about equal", text).group()
            if "about equal" not in said:
                assert (said.split()[1] == "privacy") == (privacy > statistical)
        else:
            assert "Measured" not in text


def test_regime_labels_differ_where_the_pages_used_to_disagree():
    assert compute.regime(400, 0.01, 0.5) == "trivial"


@pytest.mark.parametrize(
    "laplace, adaptive, word",
    [
        (0.05, 0.01, "helps"),
        (0.01, 0.05, "hurts"),
        (0.05, 0.049, "is on par"),
        (0.50, 0.25, "helps"),
    ],
)
@pytest.mark.parametrize("n, tau, eps", [(100, 0.01, 0.05), (2000, 0.05, 1.0), (5000, 1.0, 1000.0)])
def test_adaptive_sentence_is_conditional_and_names_the_right_worst_case(
    laplace, adaptive, word, n, tau, eps
):
    text = explain.adaptive_sentence(laplace, adaptive, 0.001, 0.001, n, tau, eps)
    assert f"it {word} here" in text
    assert "cannot beat" not in text and "try the hard two-point law" not in text
    p = 0.1 * min(tau, 1 / (eps * n))
    assert after(text, "(=") == pytest.approx(p, rel=0.05)
    assert "Theorem 3.2" in text and "a different law" in text
    assert ("proven for ε ≤ 1" in text) == (eps > 1)


@pytest.mark.parametrize("tau", [0.05, 1.0])
def test_class_caption_contrasts_only_where_the_slopes_differ(tau):
    study = class_study(500, tau, 31, (1.0,))
    lowest_cvar = float(study.thetas[np.argmin(study.rho_emp)])
    text = explain.class_caption(tau)
    if tau >= 1:
        assert lowest_cvar == study.mean_erm_theta and "coincide" in text
    else:
        assert lowest_cvar != study.mean_erm_theta and "protects the minority" in text
    assert "proven for ε ≤ 1" in text


def transition(half, max_eps):
    half = pd.Series(half, dtype=float).rename_axis("d")
    consts = [
        dp_gd_privacy_constant(2000, d, 0.1, r * math.sqrt(d) / 200, 1e-5)
        for d, r in half.dropna().items()
    ]
    return {
        "half": half,
        "c": [k["c"] for k in consts],
        "calibration": [k["calibration"] for k in consts],
        "benchmark": 28.1,
        "max_epsilon": max_eps,
    }


@pytest.mark.parametrize(
    "half, max_eps",
    [
        ({2: 22.9, 10: 29.8}, 35.0),
        ({1: 26.4}, 0.5),
        ({2: math.nan, 10: 40.0}, 3.0),
        ({2: math.nan}, 3.0),
    ],
)
def test_convex_caption_says_where_this_run_puts_the_transition(half, max_eps):
    tr = transition(half, max_eps)
    text = explain.convex_caption(tr, tuple(half))
    measured = tr["half"].dropna()
    if measured.empty:
        assert "never falls to half its peak" in text and "c ≈" not in text
    else:
        nums = [float(x) for x in re.findall(r"about (\d+) and (\d+)|≈ (\d+) \(d", text)[0] if x]
        assert min(nums) == round(measured.min()) and max(nums) == round(measured.max())
        c = re.search(r"c ≈ (\d+)–(\d+)", text).groups()
        assert (int(c[0]), int(c[1])) == (round(min(tr["c"])), round(max(tr["c"])))
    assert "≈ 28" in text  # the benchmark's marker
    assert ("proven for ε ≤ 1" in text) == (max_eps > 1)
    assert "phase transition at εnτ ≈ √d" not in text
    assert "passes c" not in text  # c does not predict where the drop falls
    if not measured.empty:
        assert "does not say where the drop falls" in text and "only the scale" in text


def test_dp_gd_constant_is_the_worst_case_noise_part():
    from dpcore.cvar.rates import dp_gd_excess_bound

    n, d, tau, eps = 2000, 10, 0.1, 0.5
    k = dp_gd_privacy_constant(n, d, tau, eps, 1e-5)
    noisy = dp_gd_excess_bound(n, d, tau, eps, 1e-5, steps=100)
    exact = dp_gd_excess_bound(n, d, tau, math.inf, 1e-5, steps=100)
    noise_part = math.sqrt(noisy**2 - exact**2)  # D sqrt(L^2 + (d+1) s^2)/sqrt(T) splits in squares
    assert noise_part == pytest.approx(k["c"] * math.sqrt(d) / (eps * n * tau), rel=1e-9)


@pytest.mark.parametrize("eps_rule, eps_cvar", [(2.0, 1.0), (0.05, 0.05), (1000.0, math.inf)])
@pytest.mark.parametrize("tau", [0.1, 1.0])
def test_rule_tail_sentence_composes_and_names_the_tail(eps_rule, eps_cvar, tau):
    res = rule_tail_risk(300, tau, eps_rule, eps_cvar)
    spent = math.inf if math.isinf(eps_cvar) else eps_rule + eps_cvar
    text = explain.rule_tail_sentence(res, eps_rule, eps_cvar, spent)
    if math.isinf(eps_cvar):
        assert "not private" in text and "ε₁ + ε₂" not in text
    else:
        a, b, c = map(
            float, re.search(r"ε₁ \+ ε₂ = ([\d.]+) \+ ([\d.]+) = ([\d.]+)", text).groups()
        )
        assert c == pytest.approx(a + b, rel=1e-3)
        assert after(text, "within ±") == pytest.approx(res.halfwidth, abs=0.005)
    assert ("all new patients" in text) == (tau >= 1)
    assert after(text, "have a mean outcome of") == pytest.approx(res.private_rule, abs=0.005)
    same = dataclasses.replace(res, private_rule=res.nonprivate_rule + 0.001)
    assert "the same to two decimals" in explain.rule_tail_sentence(same, eps_rule, eps_cvar, spent)


def test_chart_captions_hedge_every_rate():
    for key in ("epsilon", "n", "tau"):
        assert "constants" in explain.CVAR_CAPTIONS[key]
    assert "proven for ε ≤ 1" in explain.CVAR_CAPTIONS["epsilon"]


@pytest.mark.parametrize(
    "regime,eps,total,statistical,kind,lead",
    [
        ("statistical", 1.0, 0.11, 0.10, "success", "Privacy is cheap here."),
        ("statistical", 1.0, 0.16, 0.10, "warning", "Caution: privacy costs accuracy here."),
        ("statistical", 50.0, 0.10, 0.10, "warning", "Caution: privacy is cheap, but this ε"),
        ("statistical", math.inf, 0.10, 0.10, "warning", "Caution: nothing protects one patient."),
        ("privacy-dominated", 1.0, 0.3, 0.1, "warning", "Caution: privacy costs accuracy here."),
        ("trivial", 0.1, 0.4, 0.2, "error", "Do not rely on one private estimate here."),
    ],
)
def test_the_verdicts_colour_is_its_severity_and_its_words_say_the_same(
    regime, eps, total, statistical, kind, lead
):
    got_kind, got_lead = explain.cvar_judgement(regime, eps, total, statistical)
    assert got_kind == kind and got_lead.startswith(lead)


def test_privacy_is_called_cheap_only_beyond_monte_carlo_doubt():
    """Means within 1.5× of the sampling error, but the total's interval reaches past it: the
    verdict says the simulation cannot tell, in amber, instead of calling privacy cheap."""
    sure = explain.cvar_judgement(
        "statistical", 1.0, 0.11, 0.10, total_hi=0.12, statistical_lo=0.09
    )
    assert sure == ("success", "Privacy is cheap here.")
    kind, lead = explain.cvar_judgement(
        "statistical", 1.0, 0.14, 0.10, total_hi=0.16, statistical_lo=0.095
    )
    assert kind == "warning" and "cannot tell" in lead and "1.5 times" in lead
    assert "promises one patient little" not in lead
    weak = explain.cvar_judgement(
        "statistical", 50.0, 0.14, 0.10, total_hi=0.16, statistical_lo=0.095
    )
    assert weak[0] == "warning" and weak[1].endswith("This ε promises one patient little.")
    kind, lead = explain.cvar_judgement(
        "statistical", 1.0, 0.16, 0.10, total_hi=0.17, statistical_lo=0.095
    )
    assert (kind, lead) == ("warning", "Caution: privacy costs accuracy here.")


def test_without_privacy_the_verdict_neither_doubts_privacy_nor_names_a_private_estimate():
    """At ε = inf the error is the sampling error draw for draw, so a wide Monte-Carlo
    interval says nothing about privacy's cost: the claim holds, and nothing protects one
    patient. Where the tail is one patient (n = 100, τ = 1%) there is no private estimate
    to distrust, only one estimate."""
    for hi, lo in ((0.10, 0.10), (0.16, 0.095), (0.30, 0.05)):
        got = explain.cvar_judgement("statistical", math.inf, 0.10, 0.10, hi, lo)
        assert got == ("warning", "Caution: nothing protects one patient.")
    assert compute.regime(100, 0.01, math.inf) == "trivial"
    kind, lead = explain.cvar_judgement("trivial", math.inf, 0.5, 0.5, 0.6, 0.4)
    assert kind == "error" and "private" not in lead
    assert lead == "Do not rely on one estimate here: the tail holds at most one patient."


@pytest.mark.parametrize("x_axis", ["epsilon", "n", "tau", "eps_n_tau"])
def test_the_error_charts_reading_quotes_its_ends(x_axis):
    summary = compute.scalar_summary("uniform", 1.0, 20, 0)
    rows = compute.curve(summary, x_axis, 2000, 0.05, 1.0)
    said = explain.error_reading(rows, x_axis)
    if x_axis == "eps_n_tau":
        lo = rows.loc[rows.eps_n_tau.idxmin()]
        assert f"from {lo.privacy_mean:.2g} at εnτ = {lo.eps_n_tau:.3g}" in said
    else:
        first, last = rows.iloc[0], rows.iloc[-1]
        assert said.startswith(f"The total error is {first.total_mean:.2g} at ")
        assert f"{last.total_mean:.2g} at " in said and f"{last.statistical_mean:.2g}." in said
