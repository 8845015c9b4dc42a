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


def _summary():
    """A two-size summary with made-up accuracies: 50 + ε-dependent gains, 90 without noise."""
    import pandas as pd

    rows = []
    for n, top in ((200, 80.0), (2000, 92.0)):
        for e, acc in ((0.1, 50.5), (1.0, 60.0), (1000.0, top - 1), (math.inf, top)):
            rows.append({"n": n, "epsilon": e, "accuracy_mean": acc + (n == 2000)})
    return pd.DataFrame(rows)


def test_each_charts_reading_quotes_the_numbers_it_draws_at_the_extremes():
    import numpy as np

    from dpcore_app.ui.owl.explain import eps_reading, n_reading, spread_reading

    s = _summary()
    assert eps_reading(s, 200, "accuracy", 1.0) == (
        "With 200 patients, the private rule's accuracy runs from 50.5% at ε = 0.1, 60.0% at "
        "the chosen ε = 1 to 79.0% at ε = 1000; without privacy 80.0%."
    )
    # at an end of the grid, or without privacy, the chosen ε is not named twice
    for eps in (0.1, 1000.0, math.inf):
        assert "chosen" not in eps_reading(s, 200, "accuracy", eps)
    assert n_reading(s, 1.0, "accuracy") == (
        "At ε = 1, accuracy runs from 60.0% with 200 patients to 61.0% with 2000; without "
        "privacy from 80.0% to 93.0%."
    )
    assert n_reading(s, math.inf, "accuracy").startswith(
        "Without privacy, accuracy runs from 80.0%"
    )
    here, best = np.linspace(40, 80, 101), np.linspace(85, 95, 101)
    assert spread_reading(here, best, "accuracy", 1.0) == (
        "One release at ε = 1 lands anywhere from 42.0% to 78.0% in 9 of 10 simulated trials; "
        "without privacy 85.5% to 94.5%."
    )
    assert "Without privacy, 9 in 10" in spread_reading(None, best, "accuracy", math.inf)


def test_the_n_charts_reading_with_one_simulated_size_states_its_single_value():
    """One simulated n (no sizes to compare in a link, or the work cap kept one): the reading
    states the value there, never a range "from 60.0% with 200 patients to 60.0% with 200"."""
    from dpcore_app.ui.owl.explain import n_reading

    one = _summary().query("n == 200")
    assert n_reading(one, 1.0, "accuracy") == (
        "At ε = 1, accuracy is 60.0% with 200 patients; without privacy 80.0%."
    )
    assert n_reading(one, math.inf, "accuracy") == (
        "Without privacy, accuracy is 80.0% with 200 patients."
    )
    assert n_reading(one, 1.0, "accuracy", True).startswith("**First estimate:** At ε = 1,")
    for eps in (1.0, math.inf):
        assert "runs from" not in n_reading(one, eps, "accuracy")


def test_each_charts_reading_of_a_first_estimate_is_labelled_as_such():
    """Drawn from the 40-repetition first estimate, each reading says so, as the stability
    sentence does; on the final numbers, no label."""
    import numpy as np

    from dpcore_app.ui.owl.explain import eps_reading, n_reading, spread_reading

    s, label = _summary(), "**First estimate:** "
    here, best = np.linspace(40, 80, 101), np.linspace(85, 95, 101)
    for first in (200, True):
        assert eps_reading(s, 200, "accuracy", 1.0, first) == label + eps_reading(
            s, 200, "accuracy", 1.0
        )
        for eps in (1.0, math.inf):
            assert n_reading(s, eps, "accuracy", first) == label + n_reading(s, eps, "accuracy")
        assert spread_reading(here, best, "accuracy", 1.0, first) == label + spread_reading(
            here, best, "accuracy", 1.0
        )
        assert spread_reading(None, best, "accuracy", math.inf, first).startswith(label)
    assert not eps_reading(s, 200, "accuracy", 1.0).startswith("**")
