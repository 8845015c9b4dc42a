"""The DP-OWL page's "Other private learners" sentence says no more than its numbers show, at
the extremes of ε and n."""

import math

import pytest

from dpcore.owl.learners import compare_learners, learner_differences, learner_summary
from dpcore_app.ui.owl import compute
from dpcore_app.ui.owl.explain import LINEAR_CAVEAT, learners_sentence

REPS = 20


def sentence_at(n, eps):
    runs, _ = compare_learners([n], [eps], reps=REPS, seed=0, test_size=1000)
    cells, pairs = compute.learners_at(learner_summary(runs), learner_differences(runs), eps)
    return learners_sentence(eps, n, cells, pairs, REPS), cells


def test_without_privacy_it_says_so_and_names_each_learners_ceiling():
    text, cells = sentence_at(1000, math.inf)
    assert text.startswith("Without privacy (ε = ∞) and 1000 patients")
    assert "ε = inf" not in text and "without noise, these are each learner's ceiling" in text
    # Without noise both DP-OWL releases are the one minimiser: the same rule, not a tie.
    assert "the paper's output perturbation and objective perturbation give the same rule" in text
    assert "the lead is beyond Monte-Carlo doubt" in text  # the plug-in rule, on a linear effect
    assert "coin flip" not in text and "cannot be told apart" not in text
    assert "100 of 100" not in text or min(c[0] for c in cells.values()) >= 100
    assert text.endswith(LINEAR_CAVEAT + ".")


def test_at_the_smallest_eps_and_n_it_ranks_nothing_it_cannot_show():
    text, cells = sentence_at(100, 0.05)
    assert text.startswith("At ε = 0.05 and 100 patients")
    assert "beyond Monte-Carlo doubt" not in text
    assert "cannot be told apart" in text
    assert "coin flip" in text


@pytest.mark.parametrize("percent, says", [(99.6, "more than 99 of 100"), (100.0, "100 of 100")])
def test_a_rule_that_misses_some_patients_is_never_said_to_treat_100_of_100(percent, says):
    cells = {"plug-in": (percent, percent - 0.1, min(percent + 0.1, 100.0))}
    cells |= {"DP-OWL objective": (91.0, 90.0, 92.0), "DP-OWL": (91.0, 90.0, 92.0)}
    pairs = {
        ("DP-OWL", "plug-in"): (-8.0, -9.0, -7.0),
        ("DP-OWL", "DP-OWL objective"): (0.0, 0.0, 0.0),
        ("plug-in", "DP-OWL objective"): (8.0, 7.0, 9.0),
    }
    text = learners_sentence(math.inf, 1000, cells, pairs, 50)
    assert f"gives the better treatment to {says} patients" in text


CELLS = {"plug-in": (92.4, 91.8, 93.0), "DP-OWL objective": (85.2, 84.1, 86.3)}
CELLS["DP-OWL"] = (78.8, 77.0, 80.6)


@pytest.mark.parametrize(
    "pairs, says, never",
    [
        (  # every lead clear
            {
                ("DP-OWL", "plug-in"): (-13.6, -15.0, -12.0),
                ("DP-OWL", "DP-OWL objective"): (-6.4, -8.0, -4.8),
                ("plug-in", "DP-OWL objective"): (7.2, 6.0, 8.4),
            },
            "each lead is beyond Monte-Carlo doubt (50 simulated trials)",
            "cannot be told apart",
        ),
        (  # the two DP-OWL releases overlap
            {
                ("DP-OWL", "plug-in"): (-13.6, -15.0, -12.0),
                ("DP-OWL", "DP-OWL objective"): (-6.4, -13.0, 0.2),
                ("plug-in", "DP-OWL objective"): (7.2, 6.0, 8.4),
            },
            "objective perturbation and the paper's output perturbation cannot be told apart",
            "beyond Monte-Carlo doubt",
        ),
        (  # nothing clear
            {
                ("DP-OWL", "plug-in"): (-13.6, -30.0, 2.0),
                ("DP-OWL", "DP-OWL objective"): (-6.4, -13.0, 0.2),
                ("plug-in", "DP-OWL objective"): (7.2, -1.0, 15.4),
            },
            "with 50 simulated trials the three cannot be told apart",
            "beyond Monte-Carlo doubt",
        ),
    ],
)
def test_the_ranking_is_as_strong_as_the_paired_intervals(pairs, says, never):
    text = learners_sentence(5.0, 1000, CELLS, pairs, 50)
    assert text.startswith(
        "At ε = 5 and 1000 patients, the plug-in rule gives the better treatment to 92 of 100 "
        "patients on average, objective perturbation 85, the paper's output perturbation 79"
    )
    assert says in text and never not in text
