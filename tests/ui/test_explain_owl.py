"""The DP-OWL page's sentence on how stable one release is, at every extreme of its evidence."""

import math

from dpcore_app.ui.owl.decide_explain import stability_card, stability_sentence


def cell(mean, lo, hi, reps=200):
    return {"disagreement_mean": mean, "disagreement_lo": lo, "disagreement_hi": hi, "reps": reps}


def test_without_privacy_the_rule_is_the_same_every_time():
    text = stability_sentence(math.inf, cell(0.0, 0.0, 0.0))
    assert "0% of patients" in text and "the non-private rule is the same every time" in text
    assert "ε" not in text and "coin" not in text
    assert stability_card(math.inf, None)[1:] == (
        "0%",
        "of patients: the non-private rule is the same every time",
    )


def test_the_smallest_eps_is_called_a_coin_flip_only_when_its_interval_reaches_50():
    text = stability_sentence(0.05, cell(45.7, 40.8, 50.6))
    assert text.startswith(
        "Two releases at ε = 0.05 on the same trial (the same patients, fresh noise"
    )
    assert (
        "disagree on about 45.7% of new patients (average over 200 simulated trials, 95% "
        "Monte-Carlo interval 40.8–50.6%): about as often as two coin flips would (50%)." in text
    )
    assert "coin" not in stability_sentence(1.0, cell(46.8, 42.7, 49.94))  # printed 42.7–49.9%
    assert "coin" in stability_sentence(1.0, cell(46.8, 42.7, 49.96))  # printed 42.7–50.0%
    assert "over 40 simulated trials" in stability_sentence(0.05, cell(47.0, 38.0, 56.0, reps=40))


def test_a_large_eps_never_prints_a_false_zero():
    text = stability_sentence(1000.0, cell(0.032, -0.004, 0.068))
    assert "about 0.032% of new patients" in text and "interval 0.0–0.068%)" in text
    assert "same every time" not in text
    assert stability_card(1000.0, cell(0.032, -0.004, 0.068))[1] == "0.032%"
    never = stability_sentence(1000.0, cell(0.0, 0.0, 0.0, reps=40))
    assert never == (
        "Two releases at ε = 1000 on the same trial (the same patients, fresh noise "
        "each) agreed on every test patient in all 40 simulated trials."
    )
    label, value, detail = stability_card(1.0, cell(18.04, 16.51, 19.57))
    assert (label, value) == ("Two releases on the same trial disagree on", "18.0%")
    assert "95% interval 16.5–19.6% over 200 simulated trials" in detail
